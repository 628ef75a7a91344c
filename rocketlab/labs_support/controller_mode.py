"""Helpers for ``labs/06_controller_mode.ipynb``: RocketMQ 5's controller mode, its start-up, a failover
with the returning master's truncation, a process crash against a host failure, the election policy, the
three designs side by side and the settings that lose acknowledged messages.

Everything here drives the real controller, broker, AutoSwitch HA and store cores in the simulator and
reads them back (trace events, epoch files, logs); the lab's cells only call these and print what they
return.
"""

from __future__ import annotations

import base64
import random
import re
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab.controller.elect_policy import compare_live_info, java_int
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo
from rocketlab.controller.invariants import ControllerModeChecker
from rocketlab.ha.epoch_file_cache import EpochEntry, EpochFileCache
from rocketlab.i18n import N_, _
from rocketlab.scenarios.controller_mode import controller_leader, master_set, put_nowait, settle
from rocketlab.scenarios.registry import ScenarioArgs, get_scenario
from rocketlab.sim import Cluster
from rocketlab.store.cli import iter_commit_log

__all__ = [
    "acked_missing", "brokers_table", "comparator_wrap", "controller_calls", "epoch_files", "expansions",
    "failover_times", "failover_with_in_flight", "host_against_crash", "loss_table", "named", "new_cluster", "start_up",
    "three_ways", "wait_for_full_set",
]

TOPIC = "TopicTest"

NAMES = frozenset((
    N_("controller mode"), N_("DLedger commit log"), N_("controller mode, allAck"), N_("classic SYNC_MASTER (4.x)"),
    N_("process crash"), N_("host failure")))
"""The designs' and faults' names as the tables hold them (:func:`failover_times`, :func:`three_ways`), each a
catalogue entry: the tables keep them in English (the lab's cells index the tables by them), the lines name them
in the kernel's language (:func:`named`)."""


def named(name: str) -> str:
    """A design's or fault's name in the kernel's language (any other name as given)."""
    return _(name) if name in NAMES else name


def new_cluster(data_dir: str | Path | None = None, seed: int = 1, brokers: int = 3, **broker: Any) -> Cluster:
    """3 controllers ``c0``-``c2`` and ``brokers`` brokers ``n0``.. of broker set ``broker-a`` (RocketMQ's
    default timers), ``allAckInSyncStateSet=true`` unless ``broker`` says otherwise; run until a master is
    elected and every broker is in the SyncStateSet."""
    c = Cluster.controller_mode(brokers=brokers, controllers=3, seed=seed, data_dir=data_dir,
                                broker={"allAckInSyncStateSet": True, **broker}, raise_on_violation=False,
                                latency="uniform:1:3")
    settle(c, members=brokers)
    return c


def brokers_table(c: Cluster) -> list[dict[str, Any]]:
    """One row per broker: its controller-assigned id (``brokerControllerId``), the ``brokerConfig.brokerId``
    it registers with (0 while master), role, master epoch, offsets and its view of the SyncStateSet (a
    master's), plus who leads the controllers' DLedger group."""
    rows = []
    leader = controller_leader(c)
    for n in sorted(c.leader_candidates or ()):
        if not c.alive(n):
            rows.append({"node": n, "role": "DOWN"})
            continue
        b = c.node(n)
        rows.append({"node": n, "brokerControllerId": b.broker_id, "brokerConfig.brokerId": b.broker_config_id,
                     "role": b.role, "fenced": b.fenced, "epoch": b.term,
                     "maxOffset": b.max_offset, "confirmOffset": b.store.get_confirm_offset(),
                     "syncStateSet": sorted(b.ha_service.get_local_sync_state_set()) if b.role == "MASTER" else None,
                     "controller leader": leader})
    return rows


def controller_calls(c: Cluster, until_ms: int | None = None, node: str | None = None) -> list[str]:
    """The brokers' calls to the controllers that changed something (heartbeats and reads left out), who
    leads the controllers, and what they committed, in trace order: one line each."""
    lines = []
    applied = set()
    quiet = {"BrokerHeartbeatRequestHeader", "GetReplicaInfoRequestHeader", "GetMetadataInfoRequest"}
    for e in c.events:
        if until_ms is not None and e["t"] > until_ms:
            break
        if e["kind"] == "controller_call" and e.get("request") not in quiet and (node is None or e["node"] == node):
            lines.append(f"t={e['t']:>6} " + _("{node} -> controller: {request}, answer code {code}").format(
                node=e["node"], request=e["request"], code=e["code"]))
        elif e["kind"] == "controller_request" and e.get("src") == e["node"]:
            lines.append(f"t={e['t']:>6} " + _("{node} (the controller leader's own election): {request}, code {code}")
                         .format(node=e["node"], request=e["request"], code=e["code"]))
        elif e["kind"] == "broker_inactive":
            lines.append(f"t={e['t']:>6} " + _("{node}: broker {broker_id} inactive ({reason})").format(
                node=e["node"], broker_id=e.get("broker_id"), reason=_(INACTIVE[e["reason"]]) if e.get("reason") in
                INACTIVE else e.get("reason")))
        elif e["kind"] == "controller_leader":
            lines.append(f"t={e['t']:>6} " + _("{node} leads the controllers (their DLedger group, term {term})").format(
                node=e["node"], term=e.get("term")))
        elif e["kind"] == "controller_apply" and e.get("index") not in applied:
            applied.add(e.get("index"))
            detail = {k: e[k] for k in ("event", "sync_state_set", "master", "master_epoch") if e.get(k) is not None}
            lines.append(f"t={e['t']:>6} " + _("controllers commit entry {index}: {detail}").format(
                index=e.get("index"), detail=detail))
    return lines


def start_up(c: Cluster) -> dict[str, int]:
    """The first second of a controller-mode group: when the controllers' DLedger elected a leader, when that
    controller took the controller leader's role, when the brokers first asked for the controllers' metadata
    (finding no leader), and when they asked again and found it (``schedulingSyncControllerMetadata``: up to
    3 tries, 1 s apart, before ``ReplicasManager`` retries its whole start-up 5 s later). Times in ms."""
    ev = c.events
    controllers = set(c.node_ids) - set(c.leader_candidates or ())
    leader_t = next(e["t"] for e in ev if e["kind"] == "controller_leader")
    asks = [e["t"] for e in ev if e["kind"] == "controller_call" and e.get("request") == "GetMetadataInfoRequest"]
    return {"dledger_leader": next(e["t"] for e in ev if e["kind"] == "role" and e["node"] in controllers
                                   and e.get("role") == "LEADER"),
            "controller_leader": leader_t, "first_ask": min(asks),
            "found": min(t for t in asks if t >= leader_t),
            "first_change": next(e["t"] for e in ev if e["kind"] == "controller_call"
                                 and e.get("request") == "GetNextBrokerIdRequestHeader")}


def epoch_files(c: Cluster) -> dict[str, list[tuple[int, int]]]:
    """Every live broker's epoch file: ``(epoch, startOffset)`` lines as on disk."""
    return {n: [(e.epoch, e.start_offset) for e in c.node(n).epoch_cache.get_all_entries()]
            for n in sorted(c.leader_candidates or ()) if c.alive(n)}


def failover_with_in_flight(c: Cluster, acked: int = 10, in_flight: int = 3, fault: str = "crash") -> dict[str, Any]:
    """``acked`` puts answered PUT_OK; then the master's links to the other brokers are cut, ``in_flight``
    more puts reach only the master (never acknowledged), and the master dies (``fault``: ``crash``, its
    process, or ``host_down``, its host). Run until a new master is elected, put 5 more, restart the old
    master (the links healed) and run until it has caught up.

    Returns the times, both epoch files just before the handshake (with end offsets set as the handshake
    sets them), the consistent point the kit's ``findConsistentPoint`` computes, and what the old master's
    truncation removed: its bytes, the bodies of the messages it had written there (read from its files
    after the fault) and those of them any other broker's log holds at the end."""
    old = c.leader()
    handles = [c.put(b"acked-%02d" % i) for i in range(acked)]
    for n in sorted(c.leader_candidates or ()):
        if n != old:
            c.cut_link(old, n)
    pending = [put_nowait(c, old, b"in-flight-%d" % i) for i in range(in_flight)]
    c.run_for(1)
    old_end = c.node(old).max_offset
    c.node(old).store.flush()  # what it wrote is on disk: the truncation below has something to cut
    getattr(c, fault)(old)
    crashed = c.now_ms
    written = _records(c, old)
    c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=60_000)
    new = c.leader()
    elected = c.now_ms
    after = [c.put(b"after-%d" % i) for i in range(5)]
    local = EpochFileCache()
    local.init_cache_from_entries(_on_disk(c, old))
    local.set_last_epoch_entry_end_offset(old_end)
    master = EpochFileCache()
    master.init_cache_from_entries(c.node(new).epoch_cache.get_all_entries())
    master.set_last_epoch_entry_end_offset(c.node(new).max_offset)
    restarted = c.now_ms
    c.restart(old)
    c.heal()
    c.run_until(lambda c: c.node(old).role == "SLAVE" and c.node(old).ha_client is not None
                and c.node(old).ha_client.state.name == "TRANSFER"
                and c.node(old).max_offset == c.node(new).max_offset, timeout_ms=60_000)
    truncated = [e for e in c.events if e["kind"] == "ha_truncate" and e.get("slave") == old]
    cut_at = truncated[-1]["offset"] if truncated else None
    removed = [body for offset, body in written if cut_at is not None and offset >= cut_at]
    elsewhere = {body for n in c.leader_candidates or () if n != old for _, body in _records(c, n)}
    return {
        "old_master": old, "new_master": new, "crash_ms": crashed, "elected_ms": elected,
        "failover_ms": elected - crashed, "restart_ms": restarted,
        "acked": sum(h.status == "PUT_OK" for h in handles), "in_flight_answered": sum(bool(h and h.done) for h in pending),
        "old_master_end": old_end, "new_epoch": c.node(new).term,
        "old_epochs": _entries(local), "new_master_epochs": _entries(master),
        "consistent_point": local.find_consistent_point(master),
        "truncated_at": cut_at, "removed_bytes": truncated[-1]["removed"] if truncated else None,
        "removed_messages": removed, "removed_held_elsewhere": sorted(set(removed) & elsewhere),
        "after_acked": sum(h.status == "PUT_OK" for h in after),
        "old_master_now": {"role": c.node(old).role, "maxOffset": c.node(old).max_offset},
    }


def _records(c: Cluster, node: str) -> list[tuple[int, bytes]]:
    """(physical offset, body) of every message in ``node``'s commit log files, read from its directory."""
    path = c.data_dir / "nodes" / node / "store" / "commitlog"
    return [(r["physical_offset"], base64.b64decode(r["body_base64"])) for r in iter_commit_log(str(path))
            if r["type"] == "message"]


def _on_disk(c: Cluster, node: str) -> list[EpochEntry]:
    """A crashed broker's epoch file, read from its data directory (what it will find when it restarts)."""
    path = c.data_dir / "nodes" / node / "store" / "epochFileCheckpoint"
    cache = EpochFileCache(path)
    cache.init_cache_from_file()
    return cache.get_all_entries()


def _entries(cache: EpochFileCache) -> list[tuple[int, int, int | str]]:
    return [(e.epoch, e.start_offset, "MAX" if e.end_offset == 2**63 - 1 else e.end_offset)
            for e in cache.get_all_entries()]


# ---------------------------------------------------------------------- a process crash against a host failure
FAULTS = {"process crash": "crash", "host failure": "host_down"}
"""The two ways a master dies (label -> Cluster method): its process (its connections close) or its host
(nothing closes)."""


def _time_to_new_master(c: Cluster, fault: str, seed: int, phase_ms: int) -> int | None:
    """A few puts, a seed-chosen pause within one heartbeat interval (so the fault does not always fall
    right after a heartbeat), then ``fault`` on the master: ms until another broker is master (None: not
    within 60 s). Closes the cluster."""
    try:
        for i in range(3):
            c.put(b"before-%d" % i)
        c.run_for(random.Random(f"{seed}/phase").randrange(phase_ms))
        old = c.leader()
        getattr(c, fault)(old)
        start = c.now_ms
        if not c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=60_000):
            return None
        return c.now_ms - start
    finally:
        c.close()


def failover_times(seeds: tuple[int, ...] = (1, 2, 3, 4, 5)) -> list[dict[str, Any]]:
    """Controller mode (3 brokers, allAck, RocketMQ's timers) and a broker group on DLedger (3 brokers,
    DLedger's timers): each master's process crashes, then (new clusters, same seeds) each master's host
    fails; ms from the fault to a new master, per design and fault (min, median, max over ``seeds``)."""
    designs: list[tuple[str, Any, int]] = [
        ("controller mode", lambda seed: new_cluster(seed=seed), 1_000),
        ("DLedger commit log", lambda seed: _dledger_brokers(seed), 2_000),
    ]
    rows = []
    for name, build, phase in designs:
        for label, fault in FAULTS.items():
            times = [_time_to_new_master(build(seed), fault, seed, phase) for seed in seeds]
            done = [t for t in times if t is not None]
            rows.append({"design": name, "fault": label, "seeds": len(seeds), "failed over": len(done),
                         "min (ms)": min(done, default=None),
                         "median (ms)": statistics.median(done) if done else None,
                         "max (ms)": max(done, default=None)})
    return rows


def host_against_crash(times: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per design, from :func:`failover_times`' rows: the median failover after a host failure against the
    one after a process crash, and how much longer the silent host took."""
    median = {(r["design"], r["fault"]): r["median (ms)"] for r in times}
    return [_("{design}: host failure median {host} ms against {crash} ms after a process crash: {longer} ms longer")
            .format(design=named(design), host=f"{median[(design, 'host failure')]:.0f}",
                    crash=f"{median[(design, 'process crash')]:.0f}",
                    longer=f"{median[(design, 'host failure')] - median[(design, 'process crash')]:.0f}")
            for design in dict.fromkeys(r["design"] for r in times)]


def _dledger_brokers(seed: int) -> Cluster:
    c = Cluster.dledger_brokers(nodes=3, seed=seed, latency="uniform:1:3")
    if not c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000):
        raise RuntimeError(f"DLedger brokers, seed {seed}: no master within 60 s")
    return c


INACTIVE = {"channel closed": N_("channel closed"), "heartbeat timeout": N_("heartbeat timeout")}
"""The reasons of a ``broker_inactive`` event (:mod:`rocketlab.controller.controller_core`) as the lines say them."""
_CAUGHT_UP = re.compile(r"slave (\d+) caught up at (\d+)")


def _caught_up(reason: str) -> str:
    """The AutoSwitch HA service's reason for a proposed expansion (``slave 3 caught up at 1615``, as it traces
    it) in the kernel's language; any other reason as traced."""
    m = _CAUGHT_UP.fullmatch(reason)
    return _("slave {slave_id} caught up at {offset}").format(slave_id=m[1], offset=m[2]) if m else reason


def expansions(c: Cluster, since_ms: int) -> list[str]:
    """How the SyncStateSet grew back after ``since_ms``, one line per step in trace order: each slave's
    handshake reaching the master, its first ack (``haSendHeartbeatInterval``, 5 s, after the handshake), the
    ack with which it caught up and the set the master proposed then (``maybeExpandInSyncStateSet`` runs on
    every ack), and each set the controllers committed; until the set holds every live broker."""
    lines: list[str] = []
    handshake: dict[str, int] = {}
    acked: set[str] = set()
    committed: set[int] = set()
    live = {c.node(n).broker_id for n in c.leader_candidates or () if c.alive(n)}
    for e in c.events:
        if e["t"] < since_ms:
            continue
        kind, t = e["kind"], e["t"]
        if kind == "ha_handshake":
            handshake[e["slave"]] = t
            acked.discard(e["slave"])
            lines.append(f"t={t:>6} " + _("{node}: handshake from {slave} (broker {slave_id})").format(
                node=e["node"], slave=e["slave"], slave_id=e.get("slave_id")))
        elif kind == "ha_report" and e["slave"] in handshake and e["slave"] not in acked:
            acked.add(e["slave"])
            lines.append(f"t={t:>6} " + _("{node}: first ack from {slave} at {offset} ({ms} ms after its handshake)")
                         .format(node=e["node"], slave=e["slave"], offset=e["offset"], ms=t - handshake[e["slave"]]))
        elif kind == "sync_state_set_proposed" and "caught up" in str(e.get("reason")):
            lines.append(f"t={t:>6} " + _("{node}: {reason}: proposes {members}").format(
                node=e["node"], reason=_caught_up(str(e["reason"])), members=e["members"]))
        elif kind == "controller_apply" and e.get("event") == "ALTER_SYNC_STATE_SET_EVENT" \
                and e.get("index") not in committed:
            committed.add(e.get("index"))
            lines.append(f"t={t:>6} " + _("controllers commit SyncStateSet {members}").format(members=e.get("members")))
            if set(e.get("members") or ()) >= live:
                break
    return lines


def comparator_wrap(gib: tuple[float, ...] = (1, 2, 2.5, 3.9, 4, 4.5, 6.5)) -> list[dict[str, Any]]:
    """DefaultElectPolicy's ``(int)(o2.maxOffset - o1.maxOffset)`` for a broker ``gib`` GiB ahead of
    another (same epoch): the int Java compares, and who sorts first."""
    rows = []
    for g in gib:
        ahead = int(g * 2**30)
        o1 = BrokerLiveInfo("broker-a", "a1", 1, 0, 10_000, None, 3, ahead, 0)
        o2 = BrokerLiveInfo("broker-a", "a2", 2, 0, 10_000, None, 3, 0, 0)
        order = compare_live_info(o1, o2)
        rows.append({"ahead (GiB)": g, "(int)(o2 - o1)": java_int(0 - ahead),
                     "sorts first": _("the broker ahead") if order < 0 else _("the broker behind") if order > 0
                     else _("a tie (the TreeSet keeps the one added first)")})
    return rows


# ---------------------------------------------------------------------- three designs side by side
def stored_bytes(core: Any) -> int:
    """The bytes a broker's commit log holds on disk: DLedger's write position on a DLedger commit log
    (``DLedgerMmapFileStore``'s data files; its ``getMaxOffset`` is the committed position, which a
    follower learns one push later), the CommitLog's max offset otherwise."""
    files = getattr(getattr(core, "commit_log", None), "data_file_list", None)
    return files.max_wrote_position if files is not None else core.max_offset


def _failover(c: Cluster, puts: int, wait_ms: int = 60_000) -> dict[str, Any]:
    """``puts`` puts, the master crashes, ``wait_ms`` for another; then who still holds the acked ones."""
    handles = [c.put(b"m-%03d" % i * 10) for i in range(puts)]
    ok = [h for h in handles if h.status == "PUT_OK"]
    latencies = sorted(h.latency_ms for h in ok)
    stored = sum(stored_bytes(c.node(n)) for n in c.leader_candidates or c.node_ids)
    old = c.leader()
    c.crash(old)
    crashed = c.now_ms
    failed_over = c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=wait_ms)
    new = c.leader() if failed_over else None
    row: dict[str, Any] = {
        "acked": len(ok),
        "put latency p50 (ms)": latencies[len(latencies) // 2] if latencies else None,
        "stored bytes per put": round(stored / max(1, len(ok))),
        "new master after (ms)": c.now_ms - crashed if failed_over else None,
    }
    if new is not None:
        got = []
        offset = 0
        while (r := c.pull(TOPIC, 0, offset, 32)).status == "FOUND":
            got += [m["body"] for m in r.messages]
            offset = r.next_begin_offset
        row["acked lost"] = sum(h.status == "PUT_OK" and b"m-%03d" % i * 10 not in got for i, h in enumerate(handles))
        row["put after failover"] = c.put(b"after").status
    else:
        row["acked lost"] = None
        row["put after failover"] = "no master"
    c.close()
    return row


def three_ways(seed: int = 1, puts: int = 20) -> list[dict[str, Any]]:
    """The same workload (``puts`` puts of 50-byte bodies, one at a time) and the same fault (the master
    crashes) on each design, with each system's default timers; what it stored, how long until a new
    master, whether an acknowledged message is missing afterwards."""
    rows = []
    designs: list[tuple[str, int, Any]] = [
        ("classic SYNC_MASTER (4.x)", 2, lambda: Cluster.master_slave(role="SYNC_MASTER", slaves=1, seed=seed,
                                                                        latency="uniform:1:3")),
        ("DLedger commit log", 3, lambda: Cluster.dledger_brokers(nodes=3, seed=seed, latency="uniform:1:3")),
        ("DLedger commit log", 2, lambda: Cluster.dledger_brokers(nodes=2, seed=seed, latency="uniform:1:3")),
        ("controller mode, allAck", 3, lambda: new_cluster(seed=seed, brokers=3)),
        ("controller mode, allAck", 2, lambda: new_cluster(seed=seed, brokers=2)),
    ]
    for name, replicas, build in designs:
        c = build()
        if not c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000):
            raise RuntimeError(f"{name}: no master within 60 s")
        if name.startswith("classic"):
            c.run_until(lambda c: c.node(c.leader()).ha_service.reported_connection_count > 0, timeout_ms=60_000)
        rows.append({"design": name, "brokers": replicas, **_failover(c, puts)})
    return rows


# ---------------------------------------------------------------------- the settings that lose data
LOSS_RUNS: list[tuple[str, str, str | None]] = [
    ("defaults, master partitioned", "controller-partition", None),
    ("allAck, master partitioned", "controller-partition", "allack"),
    ("allAck, expansion answer lost, before PR #5798", "controller-5663", "before-5798"),
    ("allAck, expansion answer lost, RocketMQ 5.3.3", "controller-5663", None),
    ("allAck + electUnclean, in-sync master dies", "controller-unclean", None),
    ("allAck, clean election, master dies", "controller-failover", None),
]
"""One row per setting: (label, scenario, profile). Labels stay under pandas' 50-character column width
(``display.max_colwidth``), so no two rows read alike when a notebook shows the table; ``allAck`` is
``allAckInSyncStateSet=true``, ``electUnclean`` ``enableElectUncleanMaster=true``."""


def acked_missing(c: Cluster) -> tuple[int, int]:
    """(messages answered PUT_OK, how many of them the current master lacks), from the bytes the
    controller-mode checker recorded at each acknowledgement."""
    checker = next(k for k in c.checkers if isinstance(k, ControllerModeChecker))
    master = c.leader()
    log = c.node(master).store.commit_log if master is not None else None
    missing = sum(1 for a in checker.acked if log is None or log.get_message(a.offset, len(a.data)) != a.data)
    return len(checker.acked), missing


def loss_table(seed: int = 1) -> list[dict[str, Any]]:
    """Each setting of :data:`LOSS_RUNS` run as its ``rocketlab sim`` scenario: how many messages were
    acknowledged PUT_OK and how many of them the master at the end lacks; and what the invariant checker
    made of it (a violation under allAck, an ``acknowledged_message_lost`` record where the settings
    promise less)."""
    rows = []
    for label, scenario, profile in LOSS_RUNS:
        result = get_scenario(scenario).run(ScenarioArgs(seed=seed, profile=profile))
        acked, missing = acked_missing(result.cluster)
        rows.append({"setting": label, "scenario": scenario + (f" --profile {profile}" if profile else ""),
                     "acked": acked, "acked lost": missing,
                     "acked by the cut-off master": result.summary.get("island_acked"),
                     "master's SyncStateSet when it acked": result.summary.get("island_sync_state_set"),
                     "recorded as lost": result.summary["acknowledged_lost"],
                     "violations": len(result.cluster.violations)})
        result.cluster.close()
    return rows


def wait_for_full_set(c: Cluster, timeout_ms: int = 60_000) -> list[int]:
    """Run until every live broker is in the master's SyncStateSet (at most ``timeout_ms``); the set."""
    live = sum(1 for n in c.leader_candidates or () if c.alive(n))
    c.run_until(lambda c: len(master_set(c)) >= live, timeout_ms=timeout_ms)
    return sorted(master_set(c))
