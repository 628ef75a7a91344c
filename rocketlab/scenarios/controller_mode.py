"""The ``controller-*`` scenarios: RocketMQ 5's controller mode losing its master, and the cases the
digest (``reference/controller.md`` section 4) says the Java tests do not cover.

* ``controller-failover`` - the integration test's change-master story: puts under allAckInSyncStateSet,
  the master dies, the controllers elect another, the old master comes back as a slave with its id and
  truncates; nothing acknowledged is lost. How it dies decides how long that takes: ``--profile crash``
  (the default) kills its process - its connections close, every controller drops it from the heartbeat
  table at once (``onBrokerChannelClose``) and the leader elects within milliseconds; ``--profile
  host-down`` fails its host - nothing closes, the controllers wait for the heartbeat timeout (10 s) and
  the next scan (every 5 s).
* ``controller-5663`` - the lost answer to an expansion: the controller commits {A,B} but A never hears
  it, and B stops receiving A's log; under ``--profile before-5798`` (the master's SyncStateSet as before
  PR #5798, RocketMQ 5.1.1) A keeps acknowledging alone, dies, B is elected and A's acknowledged messages
  are gone (I1, recorded; the run exits 1); under 5.3.3 (the default) the synchronizing union makes A wait
  for B: the puts time out, nothing acknowledged is lost.
* ``controller-repromotion`` - a master is cut off and replaced, comes back as a slave (its own
  SyncStateSet still the old one, its confirm offset behind its log) and is elected again when the other
  two crash: every acknowledged message must be consumable at the queue offset it was given (I6). The kit
  once rebuilt the queue-offset table before adopting the new SyncStateSet and handed out a queue offset
  twice; Java adopts the set first, dispatches everything, then rebuilds the table.
* ``controller-partition`` - #7017: the master and one controller are cut off; the majority side
  elects a new master. With ``--profile allack`` the isolated master's puts wait for its unreachable
  members and time out (nothing acknowledged is lost); with the defaults (``inSyncReplicas=1``:
  ``handleHA`` answers PUT_OK without looking at the SyncStateSet) it acknowledges for the whole partition,
  its set still whole, and those messages are lost when it rejoins (``acknowledged_message_lost`` events).
* ``controller-9689`` - an epoch bump without a master change: the master, alone in its SyncStateSet
  (its slaves are async learners), loses its heartbeats for longer than the timeout; each of the
  controller's three election attempts finds no candidate and clears the master (``ElectMasterEvent(false)``:
  epochs 2, 3, 4), then the same broker elects itself (epoch 5) and appends an epoch entry without
  resetting its connections - its slave keeps receiving under the old epoch and its epoch file lacks the
  new one (the reported bug).
* ``controller-unclean`` - ``enableElectUncleanMaster``: the only in-sync broker dies and a lagging one
  is elected; its missing acknowledged messages are recorded as lost.
* ``controller-churn`` - random crashes, restarts and partitions of brokers and controllers under puts
  with allAckInSyncStateSet: every invariant after every event and every acknowledged message on the final
  master. What it found about liveness (reported as ``converged``, not a failure): a master restarted
  while the controllers still count it alive - its host failed, or it crashed while cut off from them, so
  no channel close reached them - is told by the controller that it is master at the *same* epoch;
  ``ReplicasManager.changeToMaster`` (its ``masterEpoch`` starts at 0 after a restart) calls
  ``AutoSwitchHAService.changeToMaster``, which truncates that epoch's entry and appends it again at the
  broker's max offset - so the slaves' epoch file (epoch 1 from 0) and the master's (epoch 1 from its
  end) share no start, and ``findConsistentPoint`` answers -1 until the next election; a consistent point
  that is not a record boundary in the slave's log is refused by ``truncateFiles`` the same way. Both
  follow the Java code of 5.3.3 as read; not verified against a running RocketMQ (#9942 "Fix epoch
  truncate", after 5.3.3, may be about this).
"""

from __future__ import annotations

import random
from typing import Any

from rocketlab.broker.protocol import PullMessageRequest
from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.i18n import _
from rocketlab.scenarios.dledger import churn_step
from rocketlab.scenarios.registry import (
    Scenario,
    ScenarioArgs,
    ScenarioResult,
    node_table,
    register,
    summarize,
)
from rocketlab.sim.cluster import Cluster
from rocketlab.store import Message


def running(c: Cluster) -> bool:
    """Every live broker has registered and runs, and one of them is master."""
    brokers = [c.node(n) for n in c.live_nodes() if n in (c.leader_candidates or ())]
    return bool(brokers) and all(b.replicas.state == "RUNNING" for b in brokers) and c.leader() is not None


def master_set(c: Cluster) -> set[int]:
    master = c.leader()
    return set() if master is None else c.node(master).ha_service.get_local_sync_state_set()


def controller_leader(c: Cluster) -> str | None:
    ready = [n for n in c.node_ids if n.startswith("c") and c.alive(n) and c.node(n).leader_state]
    return ready[0] if ready else None


def settle(c: Cluster, members: int = 3, timeout_ms: int = 60_000) -> str:
    if not c.run_until(running, timeout_ms=timeout_ms):
        raise RocketlabError(f"seed {c.seed}: the brokers did not register and elect within {timeout_ms} ms")
    if not c.run_until(lambda c: len(master_set(c)) >= members, timeout_ms=timeout_ms):
        raise RocketlabError(f"seed {c.seed}: the SyncStateSet did not reach {members} members")
    return c.leader()


def _put_on(c: Cluster, node: str, body: bytes) -> Any:
    """A put sent to ``node`` (whatever the controllers think), run until it is answered."""
    handle = put_nowait(c, node, body)
    if handle is not None:
        c.run_until(lambda c: handle.done, timeout_ms=10_000)
    return handle


def _result(c: Cluster, extra: dict[str, Any]) -> ScenarioResult:
    lost = [e for e in c.events if e["kind"] == "acknowledged_message_lost"]
    summary = {**summarize(c), **extra, "acknowledged_lost": len(lost)}
    return ScenarioResult(c, summary, node_table(c))


def _cluster(args: ScenarioArgs, name: str, broker: dict[str, Any], controller: dict[str, Any] | None = None
             ) -> Cluster:
    return Cluster.controller_mode(brokers=args.nodes or 3, seed=args.seed, data_dir=args.data_dir, broker=broker,
                                   controller=controller, raise_on_violation=False, scenario=name,
                                   network=args.network or "reliable", latency=args.latency or "uniform:1:3")


FAILOVER_FAULTS = {"crash": "crash", "host-down": "host_down"}
"""``controller-failover``'s profiles: how the master dies (Cluster method)."""


def _profile(args: ScenarioArgs, name: str, known: tuple[str, ...]) -> str:
    profile = args.profile or known[0]
    if profile not in known:
        raise ConfigError(_("{name}: --profile {profile!r} is not one of {choices}").format(
            name=name, profile=profile, choices=", ".join(known)))
    return profile


def scenario_failover(args: ScenarioArgs) -> ScenarioResult:
    fault = _profile(args, "controller-failover", tuple(FAILOVER_FAULTS))
    c = _cluster(args, "controller-failover", {"allAckInSyncStateSet": True})
    old = settle(c)
    acked = [c.put(b"acked-%d" % i) for i in range(10)]
    getattr(c, FAILOVER_FAULTS[fault])(old)
    crashed = c.now_ms
    c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=40_000)
    new = c.leader()
    failover_ms = c.now_ms - crashed if new not in (None, old) else None
    c.restart(old)
    c.run_until(lambda c: new is not None and c.node(old).role == "SLAVE" and c.node(old).ha_client is not None
                and c.node(old).ha_client.state.name == "TRANSFER"
                and c.node(old).max_offset == c.node(new).max_offset, timeout_ms=60_000)
    truncated = [e for e in c.events if e["kind"] == "ha_truncate" and e["node"] == old]
    return _result(c, {"fault": fault, "old_master": old, "new_master": new, "failover_ms": failover_ms,
                       "acknowledged": sum(p.status == "PUT_OK" for p in acked),
                       "new_epoch": c.node(new).term if new else None,
                       "old_master_truncated_at": truncated[-1]["offset"] if truncated else None})


def scenario_5663(args: ScenarioArgs) -> ScenarioResult:
    version = _profile(args, "controller-5663", ("5.3.3", "before-5798"))
    c = _cluster(args, "controller-5663", {"allAckInSyncStateSet": True, "before_5798": version == "before-5798"})
    a = settle(c, members=1)
    others = sorted(n for n in (c.leader_candidates or ()) if n != a)
    for n in others:  # B and C are away: the set is {A}
        c.crash(n)
    c.run_until(lambda c: master_set(c) == {c.node(a).broker_id}, timeout_ms=40_000)
    b = others[0]
    c.restart(b)
    replicas = c.node(a).replicas

    def alter_sent(c: Cluster) -> bool:
        return any(name == "AlterSyncStateSetRequest" for name, _ in replicas.calls.values())

    if not c.run_until(alter_sent, timeout_ms=40_000):
        raise RocketlabError(f"seed {c.seed}: A never proposed a bigger SyncStateSet")
    leader = controller_leader(c)
    c.cut_link(leader, a)  # the controller's answers to A are lost; A's requests still arrive
    c.run_for(3_500)  # the request is committed at the controller; A's call times out
    c.cut_link(a, b)  # and B stops receiving A's log (held in flight, lost when A dies)
    acked = [c.put(b"after-lost-answer-%d" % i) for i in range(5)]
    c.crash(a)
    c.run_until(lambda c: c.leader() not in (None, a), timeout_ms=40_000)
    return _result(c, {"rocketmq_version": version, "master": a, "new_master": c.leader(),
                       "acked_after_lost_answer": sum(p.status == "PUT_OK" for p in acked),
                       "statuses": sorted({p.status for p in acked})})


def scenario_partition(args: ScenarioArgs) -> ScenarioResult:
    all_ack = _profile(args, "controller-partition", ("defaults", "allack")) == "allack"
    c = _cluster(args, "controller-partition", {"allAckInSyncStateSet": all_ack})
    old = settle(c)
    shared = [c.put(b"shared-%d" % i) for i in range(5)]  # epoch 1 has data everywhere
    c.run_for(6_000)
    leader = controller_leader(c)
    lonely = next(n for n in c.node_ids if n.startswith("c") and n != leader)
    rest = [n for n in c.node_ids if n not in (old, lonely)]
    c.partition([old, lonely], rest)
    puts = [_put_on(c, old, b"island-%d" % i) for i in range(5)]
    island_set = sorted(c.node(old).ha_service.get_local_sync_state_set())  # what it acknowledged under
    c.run_until(lambda c: c.leader() not in (None, old) and c.node(c.leader()).term > c.node(old).term,
                timeout_ms=40_000)
    new = max((n for n in c.live_nodes() if n in (c.leader_candidates or ()) and c.node(n).role == "MASTER"),
              key=lambda n: c.node(n).term, default=None)
    c.heal()
    c.run_for(30_000)
    return _result(c, {"all_ack_in_sync_state_set": all_ack, "isolated_master": old, "new_master": new,
                       "acked_before": sum(p.status == "PUT_OK" for p in shared),
                       "island_statuses": sorted({p.status for p in puts}), "island_sync_state_set": island_set,
                       "island_acked": sum(p.status == "PUT_OK" for p in puts)})


def scenario_9689(args: ScenarioArgs) -> ScenarioResult:
    c = _cluster(args, "controller-9689", {"asyncLearner": True})  # slaves replicate, the set stays {A}
    a = settle(c, members=1)
    slave = next(n for n in sorted(c.leader_candidates or ()) if n != a)
    for i in range(3):
        c.put(b"before-%d" % i)
    c.run_for(7_000)
    epoch_before = c.node(a).term
    controllers = [n for n in c.node_ids if n.startswith("c")]
    for controller in controllers:
        c.cut_link(a, controller)  # A's heartbeats (and its calls) stop reaching the controllers
    c.run_for(20_000)  # heartbeat timeout, a scan: no candidate but A -> ElectMasterEvent(false), epoch 2
    c.heal()
    c.run_until(lambda c: c.node(a).term >= epoch_before + 2, timeout_ms=40_000)  # A elects itself: epoch 3
    for i in range(5):
        c.put(b"after-epoch-bump-%d" % i)
    c.run_for(7_000)
    master_epochs = [(e.epoch, e.start_offset) for e in c.node(a).epoch_cache.get_all_entries()]
    slave_epochs = [(e.epoch, e.start_offset) for e in c.node(slave).epoch_cache.get_all_entries()]
    return _result(c, {"master": a, "master_epoch": c.node(a).term, "master_epochs": master_epochs,
                       "slave_epochs": slave_epochs, "slave_lacks_latest_epoch": master_epochs[-1] not in slave_epochs})


def scenario_unclean(args: ScenarioArgs) -> ScenarioResult:
    c = _cluster(args, "controller-unclean", {"allAckInSyncStateSet": True}, {"enableElectUncleanMaster": True})
    a = settle(c, members=1)
    others = [n for n in sorted(c.leader_candidates or ()) if n != a]
    for n in others:
        c.crash(n)
    c.run_until(lambda c: master_set(c) == {c.node(a).broker_id}, timeout_ms=40_000)
    acked = [c.put(b"only-on-a-%d" % i) for i in range(5)]
    for n in others:
        c.restart(n)
    c.run_until(lambda c: all(c.node(n).replicas.state == "RUNNING" for n in others), timeout_ms=40_000)
    c.crash(a)
    c.run_until(lambda c: c.leader() not in (None, a), timeout_ms=40_000)
    return _result(c, {"in_sync_master": a, "unclean_master": c.leader(),
                       "acked_on_a_alone": sum(p.status == "PUT_OK" for p in acked)})


def run_churn(c: Cluster, rounds: int = 30, interval_ms: int = 1_000, settle_ms: int = 60_000) -> dict[str, Any]:
    """MIT-style churn on a controller-mode cluster: every ``interval_ms`` a put goes to whoever is master,
    and with some probability a random node (broker or controller) is cut off, comes back, or crashes.
    Then everything heals and restarts; the brokers must converge on one master whose log holds every
    message acknowledged PUT_OK (the checker judges every event on the way)."""
    rng = random.Random(f"{c.seed}/controller-churn")
    acked: list[Any] = []
    cut: list[str] = []
    faults = 0
    for i in range(rounds):
        master = c.leader()
        if master is not None and not c.node(master).fenced:
            handle = put_nowait(c, master, b"churn-%d" % i)
            if handle is not None:
                acked.append(handle)
        faults += churn_step(c, rng, cut)
        c.run_for(interval_ms)
    c.heal()
    down = [n for n in c.node_ids if not c.alive(n)]
    if down:
        c.restart(*down)
    converged = c.run_until(lambda c: running(c) and all(
        c.node(n).max_offset == c.node(c.leader()).max_offset for n in c.leader_candidates or ()), timeout_ms=settle_ms)
    master = c.leader()
    ok = [h for h in acked if h.done and h.status == "PUT_OK"]
    missing = []
    if master is not None:
        log = c.node(master).store.commit_log
        missing = [h.wrote_offset for h in ok if log.get_message(h.wrote_offset, h.wrote_bytes) is None]
    return {"acknowledged": len(ok), "missing": missing, "converged": converged, "faults": faults,
            "final_master": master}


def put_nowait(c: Cluster, node: str, body: bytes) -> Any:
    """Put ``body`` on broker ``node`` without waiting for its answer (the put handle, to look at later): an
    in-flight message at the moment of a fault. Shared by the scenarios, lab 06's cells and its suite."""
    handles: list[Any] = []

    def put(core: Any, now_ms: int) -> Any:
        handle, out = core.put_message(Message("TopicTest", body, 0), now_ms)
        handles.append(handle)
        return out

    try:
        c.runtime.call(node, put)
    except RocketlabError:
        return None
    return handles[0] if handles else None


def scenario_churn(args: ScenarioArgs) -> ScenarioResult:
    c = _cluster(args, "controller-churn", {"allAckInSyncStateSet": True})
    settle(c, members=1)
    report = run_churn(c, rounds=max(1, (args.duration_ms or 30_000) // 1_000))
    if report["missing"]:
        c.recorder.emit(c.now_ms, None, "violation", {"invariant": "acknowledged_writes_kept",
                                                      "detail": f"missing from the final master: {report['missing'][:5]}"})
        c.violations.append({"invariant": "acknowledged_writes_kept"})
    return _result(c, report)


def consumed(c: Cluster, node: str, topic: str = "TopicTest", queue_id: int = 0) -> dict[int, bytes]:
    """What a consumer reads from ``node``'s queue, by queue offset (every unit from offset 0)."""
    got: dict[int, bytes] = {}
    offset = 0
    while True:
        r = c.node(node).pull_message(PullMessageRequest(topic, queue_id, offset, 32))
        if r.status != "FOUND" or not r.messages:
            return got
        for m in r.messages:
            got[m["queue_offset"]] = m["body"]
        offset = r.next_begin_offset


def scenario_repromotion(args: ScenarioArgs) -> ScenarioResult:
    """A master is cut off, replaced, comes back as a slave (its own SyncStateSet still the old {1,2,3},
    its confirm offset behind its log) and is elected again when the other two crash: every message
    acknowledged afterwards must be consumable at the queue offset it was given (I6). (The two crash 50 ms
    apart: crashed in the same millisecond, the first close could trigger an election that still counts the
    second broker alive - Java's window too - and elect a dead broker, leaving ``old`` outside the set.)"""
    c = _cluster(args, "controller-repromotion", {"allAckInSyncStateSet": True})
    old = settle(c)
    brokers = sorted(c.leader_candidates or ())
    others = [n for n in brokers if n != old]
    sent: list[tuple[Any, bytes]] = []

    def put(body: bytes) -> Any:
        handle = c.put(body)
        sent.append((handle, body))
        return handle

    for i in range(5):
        put(b"before-%d" % i)
    c.partition([old], [n for n in c.node_ids if n != old])
    island = [_put_on(c, old, b"island-%d" % i) for i in range(2)]
    c.run_until(lambda c: any(c.node(n).role == "MASTER" and c.node(n).term > c.node(old).term for n in others),
                timeout_ms=40_000)
    c.heal()
    c.run_until(lambda c: c.node(old).role == "SLAVE" and c.leader() in others
                and len(master_set(c)) == len(brokers)
                and c.node(old).max_offset == c.node(c.leader()).max_offset, timeout_ms=60_000)
    for i in range(5):
        put(b"middle-%d" % i)
    slave = c.node(old)
    behind = (slave.store.get_confirm_offset(), slave.max_offset, sorted(slave.ha_service.get_local_sync_state_set()))
    master = c.leader()
    c.crash(*(n for n in others if n != master))  # the other slave first: its close is seen before...
    c.run_for(50)
    c.crash(master)  # ...the master's, so the election finds only ``old`` alive
    c.run_until(lambda c: c.leader() == old and not c.node(old).fenced, timeout_ms=60_000)
    after = [put(b"after-%d" % i) for i in range(5)]
    c.run_for(1_000)
    acked = [(h, body) for h, body in sent if h.status == "PUT_OK"]
    queue = consumed(c, old)
    unreadable = [h.queue_offset for h, body in acked if queue.get(h.queue_offset) != body]
    return _result(c, {"master": old, "island_statuses": sorted({h.status for h in island if h}),
                       "slave_confirm_max_set_before": list(behind), "master_again": c.leader() == old,
                       "acknowledged": len(acked), "after_acked": sum(h.status == "PUT_OK" for h in after),
                       "queue_offsets_after": [h.queue_offset for h in after],
                       "consume_queue_units": len(queue), "acked_not_consumable": unreadable})


register(Scenario("controller-failover", "RocketMQ 5 controller mode: the master dies (--profile crash: its channel "
                                         "closes, elected at once; host-down: heartbeat timeout + scan), the old "
                                         "master rejoins as a slave and truncates; allAckInSyncStateSet loses "
                                         "nothing", scenario_failover))
register(Scenario("controller-5663", "issue #5663: the answer to a SyncStateSet expansion is lost; --profile "
                                     "before-5798 acks alone and loses them when the master dies (exits 1), 5.3.3 "
                                     "waits", scenario_5663))
register(Scenario("controller-partition", "#7017: the master and one controller are cut off; with the "
                                          "defaults its acknowledged writes are lost, with --profile allack its "
                                          "puts time out instead", scenario_partition))
register(Scenario("controller-9689", "issue #9689: the same broker re-elected after its heartbeats were lost "
                                     "(epoch +2): its slave keeps the old epoch", scenario_9689))
register(Scenario("controller-churn", "random crashes, restarts and partitions of brokers and controllers under "
                                     "puts with allAckInSyncStateSet; every invariant after every event, every "
                                     "acknowledged message on the final master", scenario_churn))
register(Scenario("controller-repromotion", "a master cut off, replaced, back as a slave and elected again: every "
                                            "message acknowledged is consumable at the queue offset it was given "
                                            "(I6)", scenario_repromotion))
register(Scenario("controller-unclean", "enableElectUncleanMaster: a lagging broker becomes master and the "
                                        "acknowledged messages it lacks are recorded as lost", scenario_unclean))
