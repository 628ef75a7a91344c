"""Lab 08's graded tests: ``allocate`` (``AllocateMessageQueueAveragely``) and ``select_one_message_queue``
(``MQFaultStrategy.selectOneMessageQueue``), in decision tables over their whole input domain and in scenarios.

The tables compare every answer with the kit's own (:func:`rocketlab.client.consumer.allocate_averagely`,
:func:`rocketlab.client.route.select_one_message_queue`), which ``tests/grading/test_lab08_java.py`` shows equal
to RocketMQ 4.9.5's on the same tables. The scenarios run the simulated cluster of lab 08
(:meth:`Cluster.applications <rocketlab.sim.applications.applications>`: a name server, two DLedger broker groups,
a classic pair and the kit's client) with the learner's function plugged into every client
(:mod:`rocketlab.plugs`), and judge from the trace: who owned which queue once the group settled after a member
left and came back (:func:`rocketlab.scenarios.client_failover.ownership`), and where each send attempt went while
broker-a's master was dead (``client_send`` events). A scenario simulates under 40 s of the cluster; what it
costs is mostly the calls into the learner's code (one per send attempt or rebalance), each a round trip to the
sandbox, so the scenarios' producer sends every 250 ms. rocketlab's own addition (no Java class is modelled here).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from rocketlab.client.client_core import ClientNodeConfig
from rocketlab.client.consumer import allocate_averagely
from rocketlab.client.message import MessageQueue
from rocketlab.client.route import (
    LatencyView,
    MQFaultStrategy,
    select_one_message_queue,
    topic_route_data2_topic_publish_info,
)
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import Calls, compare_table, expect, fields_of
from rocketlab.i18n import N_, _
from rocketlab.namesrv.route import PERM_READ, PERM_WRITE, BrokerData, QueueData, TopicRouteData
from rocketlab.scenarios import client_failover as cf
from rocketlab.sim.applications import NAMESRV_ADDR
from rocketlab.sim.cluster import Cluster

TOPIC = "TopicTest"
GROUP = "GID_lab08"
STRANGER = "10.0.0.99@4242"
"""A client id in no group's list (a member the broker does not know yet, or one already gone)."""
MAX_QUEUES, MAX_CONSUMERS = 16, 10


# ---------------------------------------------------------------------- allocate: tables
def mq_all_of(n: int, brokers: tuple[str, ...] = ("broker-a", "broker-b")) -> list[MessageQueue]:
    """``n`` queues spread over ``brokers`` (the first ones one more), sorted as RebalanceImpl sorts them."""
    counts = [n // len(brokers) + (i < n % len(brokers)) for i in range(len(brokers))]
    return sorted(MessageQueue(TOPIC, b, q) for b, c in zip(brokers, counts, strict=True) for q in range(c))


def cid_all_of(m: int) -> list[str]:
    """``m`` client ids as ``ClientConfig.buildMQClientId`` makes them (ip@pid), sorted."""
    return sorted(f"10.0.0.{i + 1}@{4000 + 7 * i}" for i in range(m))


def allocate_cases() -> list[tuple[str, str, list[MessageQueue], list[str]]]:
    """Every queue count 1..16, every group of 1..10 members, every member and one stranger."""
    cases = []
    for nq, nc in itertools.product(range(1, MAX_QUEUES + 1), range(1, MAX_CONSUMERS + 1)):
        mqs, cids = mq_all_of(nq), cid_all_of(nc)
        cases.extend((GROUP, cid, mqs, cids) for cid in [*cids, STRANGER])
    return cases


def _describe_allocate(case: tuple[str, str, list[MessageQueue], list[str]]) -> str:
    _group, cid, mqs, cids = case
    where = f"member {cids.index(cid)} of {len(cids)}" if cid in cids else f"{cid!r}, in no member's place"
    return f"allocate({GROUP!r}, {where}, {len(mqs)} queues {_queues(mqs)}, cid_all={cids})"


def _queues(mqs: list[MessageQueue]) -> str:
    return "[" + ", ".join(f"{q.broker_name}:{q.queue_id}" for q in mqs) + "]"


def _allocation(got: Any) -> tuple[MessageQueue, ...]:
    return tuple(got)


@graded("lab08.allocate", points=3,
        about=N_("Every queue count 1-16 with every group of 1-10 members: each member's queues, in order, as "
                 "RocketMQ 4.9.5's AllocateMessageQueueAveragely gives them."))
def allocation_table(ctx: Ctx) -> None:
    compare_table([c for c in allocate_cases() if c[1] != STRANGER], Calls(ctx.impl, post=_allocation),
                  lambda c: tuple(allocate_averagely(*c)), _describe_allocate)


@graded("lab08.allocate", points=1,
        about=N_("A client id that is not in cid_all (the broker does not list it yet) owns no queue."))
def stranger_owns_nothing(ctx: Ctx) -> None:
    compare_table([c for c in allocate_cases() if c[1] == STRANGER], Calls(ctx.impl, post=_allocation),
                  lambda c: tuple(allocate_averagely(*c)), _describe_allocate,
                  why=lambda c, want: _("a member not in the list has no place in it"))


@graded("lab08.allocate", points=1,
        about=N_("Across each whole group (every member's answer together): every queue owned, none twice, and no "
                 "member with two more queues than another."))
def group_covers_every_queue_once(ctx: Ctx) -> None:
    cases = [c for c in allocate_cases() if c[1] != STRANGER]
    answers = iter(Calls(ctx.impl, post=_allocation).answers(cases))
    for (nq, nc) in itertools.product(range(1, MAX_QUEUES + 1), range(1, MAX_CONSUMERS + 1)):
        owned: dict[str, tuple[MessageQueue, ...]] = {}
        for cid in cid_all_of(nc):
            got, error = next(answers)
            if error is not None:
                raise AssertionError(_("allocate of member {cid} ({nq} queues, {nc} members) raised {error}").format(
                    cid=cid, nq=nq, nc=nc, error=error))
            owned[cid] = got
        _check_partition(owned, mq_all_of(nq), _("{nq} queues, {nc} members").format(nq=nq, nc=nc))


def _check_partition(owned: dict[str, tuple[MessageQueue, ...]], mqs: list[MessageQueue], where: str) -> None:
    seen: dict[MessageQueue, str] = {}
    for cid, queues in owned.items():
        for q in queues:
            expect(q in mqs, _("{where}: {cid} owns {queue}, which is not a queue of the topic").format(
                where=where, cid=cid, queue=f"{q.broker_name}:{q.queue_id}"))
            expect(q not in seen, _("{where}: {queue} is owned twice ({first} and {cid}): both consume its "
                                    "messages").format(where=where, queue=f"{q.broker_name}:{q.queue_id}",
                                                       first=seen.get(q), cid=cid))
            seen[q] = cid
    nobody = [q for q in mqs if q not in seen]
    expect(not nobody, _("{where}: nobody owns {queues}: their messages are never consumed").format(
        where=where, queues=_queues(nobody)))
    sizes = [len(v) for v in owned.values()]
    expect(max(sizes) - min(sizes) <= 1, _("{where}: members own {sizes} queues: not an even share").format(
        where=where, sizes=sizes))


@graded("lab08.allocate", points=1,
        about=N_("No queue, no member or an empty client id is refused with an exception (Java's check throws "
                 "IllegalArgumentException), never answered."))
def empty_input_refused(ctx: Ctx) -> None:
    mqs, cids = mq_all_of(4), cid_all_of(2)
    for args, what in (((GROUP, cids[0], [], cids), _("no queue")), ((GROUP, cids[0], mqs, []), _("no member")),
                       ((GROUP, "", mqs, cids), _("an empty client id"))):
        ((got, error),) = list(Calls(ctx.impl).answers([args]))
        expect(error is not None, _("allocate with {what} returned {got}; Java's check refuses it "
                                    "(IllegalArgumentException: raise ValueError)").format(what=what, got=repr(got)))


# ---------------------------------------------------------------------- allocate: a live group
GROUP_SHAPES = ((2, 3), (3, 1), (4, 3), (3, 2))
"""(consumers, queues per broker) of ``group_rebalance``'s seeds: 9, 3, 9 and 6 queues over the three brokers, so
every membership of the run (one member fewer, then back) has members that share them unevenly."""
SETTLE_MS = 3_000
"""How long the group is left after a member leaves or joins before its ownership is read (the brokers notify the
members at once: NOTIFY_CONSUMER_IDS_CHANGED; one round trip later every member has rebalanced)."""

BACK_AFTER_MS = ClientNodeConfig(NAMESRV_ADDR).broker_suspend_max_time_millis + 1_000
"""When the member that crashed comes back: once the brokers have answered the pulls they held for it (the pulls of
its new process must not meet the old ones' answers)."""


def _apps(ctx: Ctx, **kwargs: Any) -> Cluster:
    return ctx.keep(Cluster.applications(seed=ctx.seed, latency="uniform:1:3", scenario="lab08-grading", **kwargs))


def owners_at(events: list[dict[str, Any]], t_ms: int, topic: str = TOPIC) -> dict[tuple[str, int], list[str]]:
    """(broker name, queue id) -> the members that owned it at ``t_ms``, from the trace (:func:`cf.ownership`)."""
    out: dict[tuple[str, int], list[str]] = {}
    for (member, broker, qid), periods in cf.ownership(events, topic).items():
        if any(start <= t_ms < end for start, end in periods):
            out.setdefault((broker, qid), []).append(member)
    return out


def _check_stable_group(c: Cluster, queues: list[tuple[str, int]], members: list[str], what: str) -> None:
    owned = owners_at(c.events, c.now_ms)
    where = _("t={t} ms, {what} ({n} members {members}; {queues} queues)").format(
        t=c.now_ms, what=what, n=len(members), members=", ".join(members), queues=len(queues))
    twice = {q: m for q, m in owned.items() if len(m) > 1}
    expect(not twice, _("{where}: {owners}: both consume its messages").format(where=where, owners="; ".join(
        _("{queue} is owned by {members}").format(queue=f"{b}:{q}", members=" + ".join(m))
        for (b, q), m in sorted(twice.items()))))
    nobody = [f"{b}:{q}" for b, q in queues if (b, q) not in owned]
    expect(not nobody, _("{where}: nobody owns {queues}: their messages are never consumed").format(
        where=where, queues=", ".join(nobody)))
    strangers = sorted({m for ms in owned.values() for m in ms} - set(members))
    expect(not strangers, _("{where}: {strangers} own queues but are not members").format(
        where=where, strangers=", ".join(strangers)))
    sizes = [sum(m in ms for ms in owned.values()) for m in members]
    expect(max(sizes) - min(sizes) <= 1, _("{where}: members own {sizes} queues: not an even share").format(
        where=where, sizes=sizes))


@graded("lab08.allocate", points=3, seeds=range(4),
        about=N_("A consumer group of the kit's push consumers (your allocate in each) in the simulated cluster (a"
                 " name server, two DLedger broker groups, a classic pair): a member crashes, then comes back. "
                 "Each time the group has settled, read from the trace: every queue of the topic owned by exactly "
                 "one live member, in even shares."))
def group_rebalance(ctx: Ctx) -> None:
    consumers, per_broker = GROUP_SHAPES[ctx.seed % len(GROUP_SHAPES)]
    c = _apps(ctx, consumers=consumers, queues=per_broker, messages=0)
    queues = [(f"broker-{g}", q) for g in "abc" for q in range(per_broker)]
    members = list(c.meta["consumers"])
    c.run_for(12_000)
    _check_stable_group(c, queues, members, _("the group started 7 s ago"))
    gone = members[random.Random(ctx.seed).randrange(consumers)]
    c.crash(gone)
    c.run_for(SETTLE_MS)
    _check_stable_group(c, queues, [m for m in members if m != gone], _("{ms} ms after {member} crashed").format(ms=SETTLE_MS, member=gone))
    c.run_for(BACK_AFTER_MS - SETTLE_MS)
    c.restart(gone)
    c.run_for(SETTLE_MS)
    _check_stable_group(c, queues, members, _("{ms} ms after {member} came back").format(ms=SETTLE_MS, member=gone))


def _route(brokers: dict[str, int], dead: frozenset[str] = frozenset()) -> TopicRouteData:
    return TopicRouteData(
        tuple(QueueData(b, n, n, PERM_READ | PERM_WRITE) for b, n in sorted(brokers.items())),
        tuple(BrokerData("DefaultCluster", b, {} if b in dead else {0: _addr(b)}) for b in sorted(brokers)))


def _addr(broker: str) -> str:
    return f"127.0.0.1:{10911 + 100 * (ord(broker[-1]) - ord('a'))}"


# ---------------------------------------------------------------------- select_one_message_queue: tables
SHAPES: tuple[dict[str, int], ...] = (
    {"broker-a": 2, "broker-b": 2}, {"broker-a": 4, "broker-b": 4}, {"broker-a": 1, "broker-b": 3},
    {"broker-a": 3}, {"broker-a": 2, "broker-b": 2, "broker-c": 2}, {"broker-a": 2, "broker-b": 3, "broker-c": 0},
)
"""Routes: brokers and their write queue counts (broker-c with 0: in the route's queue data, no queue to send to)."""
NO_MASTER = "broker-d"
"""In the route's queue data of every shape (2 write queues) but without a master: not in the queue list."""


def publish_queues(shape: dict[str, int]) -> list[MessageQueue]:
    return topic_route_data2_topic_publish_info(TOPIC, _route({**shape, NO_MASTER: 2}, frozenset({NO_MASTER}))
                                                ).message_queue_list


SelectCase = tuple[list[MessageQueue], int, "str | None", "LatencyView | None"]


def select_off_cases(*, with_last: bool) -> list[SelectCase]:
    """sendLatencyFaultEnable off: every route shape, counter values 0..2n+1, no last broker or each one."""
    cases: list[SelectCase] = []
    for shape in SHAPES:
        queues = publish_queues(shape)
        lasts = [*shape, NO_MASTER, "broker-x"] if with_last else [None]
        cases.extend((queues, index, last, None) for index in range(2 * len(queues) + 2) for last in lasts)
    return cases


def select_on_cases(*, all_down: bool) -> list[SelectCase]:
    """sendLatencyFaultEnable on: every set of brokers in their fault window, every least-bad broker (one of
    the route, one not in it, none), counter values 0..2n+1, no last broker or the first one."""
    cases: list[SelectCase] = []
    for shape in SHAPES:
        queues = publish_queues(shape)
        names = [*shape, NO_MASTER]
        nums = {**shape, NO_MASTER: 2}
        for k in range(len(names) + 1):
            for down in itertools.combinations(names, k):
                if all(q.broker_name in down for q in queues) != all_down:
                    continue
                for least in [*names, "broker-x", None] if all_down else [names[0], None]:
                    view = LatencyView(frozenset(down), least, dict(nums))
                    cases.extend((queues, index, last, view) for index in range(2 * len(queues) + 2)
                                 for last in (None, names[0]))
    return cases


def _describe_select(case: SelectCase) -> str:
    queues, index, last, view = case
    latency = "off" if view is None else (f"on: unavailable {sorted(view.unavailable)}, least bad {view.least_bad!r}, "
                                          f"write queues {view.write_queue_nums}")
    return f"select_one_message_queue({_queues(queues)}, index={index}, last_broker_name={last!r}, latency {latency})"


CHOICE_FIELDS = ("position", "queue", "index")


def _choice(got: Any) -> tuple[Any, ...] | None:
    """The choice's fields, the counter as the 32 bits Java keeps (2**32 and 0 are the same int)."""
    fields = fields_of(got, CHOICE_FIELDS)
    return fields if fields is None or not isinstance(fields[2], int) else (*fields[:2], fields[2] & 0xFFFFFFFF)


def _select_table(ctx: Ctx, cases: list[SelectCase], why: str) -> None:
    compare_table(cases, Calls(ctx.impl, post=_choice), lambda c: _choice(select_one_message_queue(*c)),
                  _describe_select, why=lambda c, want: why)


@graded("lab08.select_one_message_queue", points=1,
        about=N_("A first attempt, no latency table: the queues in turn from the counter, position, queue and "
                 "counter."))
def round_robin(ctx: Ctx) -> None:
    _select_table(ctx, select_off_cases(with_last=False), _("round robin from the counter"))


@graded("lab08.select_one_message_queue", points=2,
        about=N_("A retry, no latency table: a queue of another broker than the one that just failed, whenever the"
                 " route has one, for every route shape and counter value."))
def retry_avoids_last_broker(ctx: Ctx) -> None:
    _select_table(ctx, select_off_cases(with_last=True), _("a retry avoids the broker that just failed"))


@graded("lab08.select_one_message_queue", points=2,
        about=N_("With sendLatencyFaultEnable: a queue whose broker is out of its fault window, for every set of "
                 "brokers in it (at least one broker of the route still available)."))
def latency_table(ctx: Ctx) -> None:
    _select_table(ctx, select_on_cases(all_down=False), _("the latency table: skip brokers in their fault window"))


@graded("lab08.select_one_message_queue", points=2,
        about=N_("With sendLatencyFaultEnable and every broker of the route in its fault window: the least bad "
                 "broker still gets the message (or, when it has no write queue in the route, the next queue in "
                 "turn)."))
def every_broker_faulty(ctx: Ctx) -> None:
    _select_table(ctx, select_on_cases(all_down=True), _("every broker in its fault window: the least bad one"))


WRAPS = (2**31 - 3, 2**31 - 2, 2**31 - 1, 2**32 - 3, 2**32 - 1)
"""Counters where Java's int wraps within one choice: past 2**31 - 1 (negative) and past 2**32 - 1 (back to 0)."""


def wrap_cases() -> list[SelectCase]:
    """The tables' inputs at the counters of :data:`WRAPS`, the latency table off and on."""
    cases: list[SelectCase] = []
    for queues, _index, last, view in [*select_off_cases(with_last=True), *select_off_cases(with_last=False),
                                  *select_on_cases(all_down=False)[::7], *select_on_cases(all_down=True)[::7]]:
        cases.extend((queues, index, last, view) for index in WRAPS)
    return list({_describe_select(c): c for c in cases}.values())  # each input once


@graded("lab08.select_one_message_queue", points=1,
        about=N_("The counter near and past Java's int limits (2**31 - 1, 2**32 - 1): positions as Java computes "
                 "them there, for every path of the choice."))
def counter_wraps(ctx: Ctx) -> None:
    _select_table(ctx, wrap_cases(), _("an input of the other tables with the counter at Java's int limits: where "
                                       "the counter wraps, positions are java_position(value, n)"))


# ---------------------------------------------------------------------- select_one_message_queue: a producer
CRASH_AT_MS = 8_000
"""When the scenarios crash broker-a's master (the producer has sent for 3 s), plus a seeded 0-999 ms."""
SEND_INTERVAL_MS = 250
"""The producer's pace in the scenarios: every choice of queue is a call into the learner's code (in the grader's
sandbox, a round trip between processes), so fewer sends than the lab's one every 100 ms keep grading short."""


def _crash_broker_a(ctx: Ctx, *, latency: bool, after_ms: int) -> tuple[Cluster, int]:
    """The cluster with a producer only (``sendLatencyFaultEnable`` as given, a send every 250 ms, queues per
    broker by seed), broker-a's master crashed at ~8 s and run ``after_ms`` more: (cluster, crash instant)."""
    per_broker = (2, 3, 4)[ctx.seed % 3]
    c = _apps(ctx, consumers=0, queues=per_broker, send_latency_fault_enable=latency,
              send_interval_ms=SEND_INTERVAL_MS, messages=(CRASH_AT_MS + after_ms - 5_000) // SEND_INTERVAL_MS)
    c.run_for(CRASH_AT_MS + random.Random(ctx.seed).randint(0, 999))
    master = cf.master_of(c, "a")
    expect(master is not None, _("broker-a elected no master within 8 s: the scenario could not start"))
    at = c.now_ms
    c.crash(master)
    c.run_for(after_ms)
    return c, at


def _sends(c: Cluster) -> list[dict[str, Any]]:
    return [e for e in c.events if e["kind"] == "client_send" and e["topic"] == TOPIC]


def _all_delivered(c: Cluster, what: str) -> None:
    failed = [e for e in c.events if e["kind"] == "client_send_failed"]
    expect(not failed, _("{what}: {n} sends failed for the application although broker-b and broker-c were up, the "
                         "first at t={t} ms").format(what=what, n=len(failed), t=failed[0]['t']) if failed else "")


@graded("lab08.select_one_message_queue", points=3, seeds=range(3),
        about=N_("The kit's producer with sendLatencyFaultEnable (your choice in it) in the simulated cluster "
                 "while broker-a's DLedger master crashes: every send succeeds, and from the trace, after "
                 "broker-a's first failed send no attempt goes to broker-a within its fault window (not even once "
                 "a new master has taken over)."))
def dead_broker_avoided(ctx: Ctx) -> None:
    c, crash_ms = _crash_broker_a(ctx, latency=True, after_ms=30_000)  # past the route refresh at 35 s
    sends = _sends(c)
    failures = [e for e in sends if e["broker_name"] == "broker-a" and e["status"] != "SEND_OK"]
    expect(bool(failures), _("broker-a's master crashed at t={t} ms but no send tried broker-a: the test saw no "
                             "failure to avoid").format(t=crash_ms))
    first = failures[0]["t"]
    window = MQFaultStrategy.NOT_AVAILABLE_DURATION[-1]  # an isolated broker: 30 000 ms taken as its latency
    again = [e["t"] for e in sends if e["broker_name"] == "broker-a" and first < e["t"] < first + window]
    expect(not again, _("broker-a's master crashed at t={t} ms, a send failed there at t={first} ms, and broker-a "
                        "was tried again at t={again} ms, inside its fault window of {window} ms").format(
        t=crash_ms, first=first, again=again[:3], window=window))
    _all_delivered(c, _("broker-a's master crashed at t={t} ms").format(t=crash_ms))
    used = {e["broker_name"] for e in sends if e["t"] > first and e["status"] == "SEND_OK"}
    expect(len(used) >= 2, _("after broker-a failed, every send went to {brokers}: the other brokers in "
                             "turn").format(brokers=sorted(used)))


@graded("lab08.select_one_message_queue", points=2, seeds=range(3),
        about=N_("The kit's producer without the latency table (your choice in it) in the simulated cluster while "
                 "broker-a's DLedger master crashes: from the trace, each send attempt that fails on broker-a is "
                 "retried at once on another broker, and every send succeeds."))
def retry_on_another_broker(ctx: Ctx) -> None:
    c, crash_ms = _crash_broker_a(ctx, latency=False, after_ms=15_000)
    attempts: dict[str, list[dict[str, Any]]] = {}
    for e in _sends(c):
        attempts.setdefault(e["uniq_key"], []).append(e)
    failed = [k for k, seen in attempts.items() if any(e["status"] != "SEND_OK" for e in seen)]
    expect(bool(failed), _("broker-a's master crashed at t={t} ms but no send failed: the test saw no retry").format(
        t=crash_ms))
    for key in failed:
        seen = sorted(attempts[key], key=lambda e: e["attempt"])
        path = " -> ".join(f"{e['broker_name']}:{e['queue_id']} ({e['status']})" for e in seen)
        for bad, retry in itertools.pairwise(seen):
            expect(retry["broker_name"] != bad["broker_name"],
                   _("message {key}: {path}: its retry went back to {broker}, the broker that just failed").format(
                       key=key, path=path, broker=bad['broker_name']))
    _all_delivered(c, _("broker-a's master crashed at t={t} ms").format(t=crash_ms))
