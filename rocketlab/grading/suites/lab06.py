"""Lab 06's graded tests: ``find_consistent_point`` and ``elect_master`` in RocketMQ 5's controller mode.

Unit tests compare the learner's function with the kit's on EpochFileCacheTest's and DefaultElectPolicy's
cases and on generated tables. Scenario tests plug it into every broker (the handshake of a returning
slave) or every controller (each election) of a simulated cluster of 3 controllers and 3 brokers under
``allAckInSyncStateSet``, crash and restart masters, churn the cluster, and judge with the controller-mode
invariants (:mod:`rocketlab.controller.invariants`): no acknowledged message lost, every slave a byte
prefix of its master, epochs growing.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from rocketlab.controller.elect_policy import elect_master
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.sandbox_codec import Lookup
from rocketlab.grading.suites._common import Calls, compare_table, expect
from rocketlab.ha.epoch_file_cache import LONG_MAX, EpochEntry, find_consistent_point
from rocketlab.i18n import N_, _
from rocketlab.scenarios.controller_mode import controller_leader, master_set, put_nowait, running, settle
from rocketlab.sim.cluster import Cluster

EntryList = list[EpochEntry]


# ---------------------------------------------------------------------- find_consistent_point: tables
def entries(*pairs: tuple[int, int], end: int = LONG_MAX) -> EntryList:
    """An epoch file's entries from ``(epoch, start)`` pairs, each ending where the next starts."""
    ends = [s for _, s in pairs[1:]] + [end]
    return [EpochEntry(e, s, x) for (e, s), x in zip(pairs, ends, strict=True)]


JAVA_CASES: list[tuple[EntryList, EntryList]] = [
    # EpochFileCacheTest: local (1,100) (2,300) (3,500)
    (entries((1, 100), (2, 300), (3, 500)), entries((1, 100), (2, 300), (3, 450))),
    (entries((1, 100), (2, 300), (3, 500), end=700), entries((1, 100), (2, 300), (3, 500), end=600)),
    (entries((1, 100), (2, 300), (3, 500), end=700), entries((1, 200), (2, 500))),
    (entries((1, 100), (2, 300), (3, 500), (4, 800)), entries((1, 100), (2, 300), (3, 500), end=700)),
]


def _describe_point(case: tuple[EntryList, EntryList]) -> str:
    def show(es: EntryList) -> str:
        return "[" + ", ".join(f"(epoch {e.epoch}: {e.start_offset}..{'MAX' if e.end_offset == LONG_MAX else e.end_offset})"
                               for e in es) + "]"
    return f"find_consistent_point(local={show(case[0])}, other={show(case[1])})"


def _why_point(case: tuple[EntryList, EntryList], want: int) -> str:
    if want < 0:
        return _("no epoch of the local file appears in the other with the same start offset")
    return _("the newest local epoch that the other file has with the same start; the smaller of the two end "
             "offsets")


def history_cases(seed: int = 6, count: int = 1500) -> list[tuple[EntryList, EntryList]]:
    """Two brokers' epoch files that share a history and then diverge, as failovers leave them: a common
    prefix of epochs, then each side's own epochs (a slave's may be a prefix of the master's, may have
    an epoch the master never had, may start an epoch at another offset), logs of any length."""
    rng = random.Random(seed)
    cases = []
    for _i in range(count):
        common, epoch, offset = [], 0, rng.choice((0, 0, 100))
        for _i in range(rng.randrange(0, 4)):
            epoch += rng.randrange(1, 3)
            common.append((epoch, offset))
            offset += rng.randrange(1, 400)
        sides = []
        for _i in range(2):
            own, e, o = list(common), epoch, offset
            if own and rng.random() < 0.3:
                o = own[-1][1] + rng.randrange(1, offset - own[-1][1] + 1)  # ends inside the last common epoch
            for _i in range(rng.randrange(0, 3)):
                e += rng.randrange(1, 3)
                o += rng.choice((0, rng.randrange(1, 300)))
                if own and (e <= own[-1][0] or o <= own[-1][1]):
                    continue  # an epoch file only grows (EpochFileCache.appendEntry)
                own.append((e, o))
            end = (own[-1][1] + rng.randrange(0, 300)) if own else 0
            sides.append(entries(*own, end=end) if own else [])
        cases.append((sides[0], sides[1]))
    return cases


def _point_table(ctx: Ctx, cases: list[tuple[EntryList, EntryList]]) -> None:
    compare_table(cases, Calls(ctx.impl, lambda c: (list(c[0]), list(c[1]))), lambda c: find_consistent_point(*c),
                  _describe_point, why=_why_point)


@graded("lab06.find_consistent_point", points=2,
        about=N_("EpochFileCacheTest's four cases: a shorter last epoch, two ends, no common epoch, a newer local "
                 "epoch."))
def java_samples(ctx: Ctx) -> None:
    _point_table(ctx, JAVA_CASES)


@graded("lab06.find_consistent_point", points=3,
        about=N_("1,500 pairs of epoch files that share a history and then diverge, empty files included."))
def diverged_histories(ctx: Ctx) -> None:
    _point_table(ctx, history_cases())


def any_epoch_files(seed: int = 12, count: int = 3000) -> list[tuple[EntryList, EntryList]]:
    """Seeded pairs of epoch files over the whole domain an epoch file can hold: growing epochs and start
    offsets, an epoch starting where the previous one ends (an empty epoch), the same epoch number at
    another start, ends at, before and after each other's, empty files."""
    rng = random.Random(seed)
    cases = []
    for _i in range(count):
        pair = []
        for _i in range(2):
            pairs, e, o = [], 0, rng.choice((0, 100))
            for _i in range(rng.randrange(0, 5)):
                e += rng.randrange(1, 3)
                pairs.append((e, o))
                o += rng.choice((0, 50, 100))
            pair.append(entries(*pairs, end=rng.choice((o, o + 50, LONG_MAX))) if pairs else [])
        cases.append((pair[0], pair[1]))
    return cases


@graded("lab06.find_consistent_point", points=2,
        about=N_("3,000 seeded pairs of epoch files: equal epochs at equal and other starts, empty epochs, open "
                 "and closed ends, empty files."))
def any_epoch_files_table(ctx: Ctx) -> None:
    _point_table(ctx, any_epoch_files())


# ---------------------------------------------------------------------- find_consistent_point: live
def controller_cluster(seed: int, **controller: Any) -> Cluster:
    return Cluster.controller_mode(brokers=3, controllers=3, seed=seed, broker={"allAckInSyncStateSet": True},
                                   controller=controller or None, raise_on_violation=False,
                                   latency="uniform:1:3")


def check_invariants(c: Cluster) -> None:
    if c.violations:
        v = c.violations[0]
        raise AssertionError(_("invariant {name} broken at t={t} ms: {detail}").format(
            name=v.get('invariant'), t=v.get('t', c.now_ms), detail=v.get('detail', '')))
    lost = [e for e in c.events if e["kind"] == "acknowledged_message_lost"]
    expect(not lost, _("{n} acknowledged message(s) lost, first at offset {offset} on {node}").format(
        n=len(lost), offset=lost[0].get('phy_offset') if lost else '', node=lost[0].get('node') if lost else ''))


def caught_up(c: Cluster, node: str, master: str) -> bool:
    core = c.node(node)
    return (core.role == "SLAVE" and core.ha_client is not None and core.ha_client.state.name == "TRANSFER"
            and core.max_offset == c.node(master).max_offset)


@graded("lab06.find_consistent_point", points=3, seeds=range(3), name="returning_master",
        about=N_("Your find_consistent_point in every broker: the master dies with puts in flight (bytes nobody "
                 "else has), another is elected and takes more puts, the old master returns as a slave: it must "
                 "cut its log where the epochs agree and catch up byte for byte, twice in a row."))
def returning_master(ctx: Ctx) -> None:
    c = ctx.keep(controller_cluster(ctx.seed))
    settle(c)
    for round_ in range(2):
        old = c.leader()
        for i in range(10):
            expect(c.put(b"r%d-acked-%d" % (round_, i)).status == "PUT_OK", _("round {round}: put {i} was not acknowledged").format(
                round=round_, i=i))
        others = [n for n in c.leader_candidates or () if n != old]
        for n in others:
            c.cut_link(old, n)  # what the master writes now reaches nobody
        for i in range(3):
            put_nowait(c, old, b"r%d-in-flight-%d" % (round_, i) * 20)
        c.run_for(1)
        c.crash(old)
        expect(c.run_until(lambda c, old=old: c.leader() not in (None, old), timeout_ms=40_000),
               _("round {round}: no new master within 40 s of crashing {old}").format(round=round_, old=old))
        new = c.leader()
        for i in range(10):
            c.put(b"r%d-after-%d" % (round_, i))
        c.restart(old)
        c.heal()
        expect(c.run_until(lambda c, old=old, new=new: caught_up(c, old, new), timeout_ms=40_000),
               _("round {round}: the old master {old} did not catch up with the new master {new} within 40 s (its "
                 "handshake: {handshake})").format(
                   round=round_, old=old, new=new,
                   handshake=[e.get('detail') or e.get('offset') for e in c.events
                              if e['kind'] in ('ha_truncate', 'ha_connection_closed')
                              and e.get('node', e.get('slave')) == old][-3:]))
        check_invariants(c)
        mine, theirs = c.node(old).store.commit_log, c.node(new).store.commit_log
        size = c.node(new).max_offset
        expect(mine.get_data(0, size) == theirs.get_data(0, size),
               _("round {round}: after catching up, {old}'s log differs from the master's").format(
                   round=round_, old=old))


@graded("lab06.find_consistent_point", points=2, seeds=range(4), name="churn",
        about=N_("Your find_consistent_point through five failovers in a row: masters die (some with puts in "
                 "flight that nobody else has, some together with the controller leader) and return as slaves; "
                 "every invariant after every event, every acknowledged message on the final master, every log "
                 "equal at the end."))
def point_churn(ctx: Ctx) -> None:
    churn(ctx)


# ---------------------------------------------------------------------- elect_master: tables
def live(broker_id: int, epoch: int, offset: int, priority: int = 2**31 - 1) -> BrokerLiveInfo:
    return BrokerLiveInfo("broker-a", f"127.0.0.1:{30911 + broker_id}", broker_id, 0, 10_000, None, epoch, offset,
                          priority)


ElectCase = tuple[frozenset[int] | None, frozenset[int] | None, int | None, int | None, frozenset[int],
                  dict[int, BrokerLiveInfo] | None]

HEARTBEATS: list[dict[int, BrokerLiveInfo]] = [
    {1: live(1, 3, 500), 2: live(2, 3, 700), 3: live(3, 2, 900), 4: live(4, 3, 700)},   # offset decides
    {1: live(1, 4, 100), 2: live(2, 3, 900), 3: live(3, 4, 100, 1), 4: live(4, 1, 9000)},  # epoch, then priority
    {1: live(1, 2, 300, 5), 2: live(2, 2, 300, 5), 3: live(3, 2, 300, 5), 4: live(4, 2, 300, 5)},  # full tie
]


def elect_cases() -> list[ElectCase]:
    ids = (1, 2, 3)
    subsets = [frozenset(s) for r in range(4) for s in itertools.combinations(ids, r)]
    cases: list[ElectCase] = []
    for sync, unclean, old, prefer, alive, beats in itertools.product(
            [None, *subsets], (None, frozenset({1, 2, 3, 4})), (None, 1, 2, 4), (None, 1, 2, 3),
            subsets + [frozenset({2, 4}), frozenset({4})], [None, *HEARTBEATS]):
        cases.append((sync, unclean, old, prefer, alive, beats))
    return cases


JAVA_POLICY_CASES: list[ElectCase] = [
    (frozenset({1}), None, 1, None, frozenset({2}), {1: live(1, 5, 100), 2: live(2, 5, 900)}),
    (frozenset({1}), frozenset({1, 2}), 1, None, frozenset({2}), {1: live(1, 5, 100), 2: live(2, 5, 900)}),
    (frozenset({1, 2}), None, 1, None, frozenset({1, 2}), {1: live(1, 1, 10), 2: live(2, 9, 99)}),
    (frozenset({1, 2}), None, 1, 2, frozenset({1, 2}), {1: live(1, 1, 10), 2: live(2, 9, 99)}),
    (frozenset({1, 2}), None, 1, 2, frozenset({1}), {1: live(1, 1, 10), 2: live(2, 9, 99)}),
    (frozenset({1, 2, 3, 4}), None, None, None, frozenset({1, 2, 3, 4}),
     {1: live(1, 2, 10, 5), 2: live(2, 3, 1, 9), 3: live(3, 3, 7, 9), 4: live(4, 3, 7, 1)}),
    (frozenset({1, 2, 3, 4}), None, None, None, frozenset({1, 2, 3, 4}),
     {1: live(1, 2, 10, 5), 2: live(2, 3, 1, 9), 3: live(3, 3, 7, 9), 4: live(4, 3, 7, 9)}),
    (frozenset({4, 2, 3}), None, None, None, frozenset({2, 3, 4}), None),
    # (int)(o2.maxOffset - o1.maxOffset): more than 2^31 bytes apart the comparison wraps
    *[(frozenset({1, 2}), None, None, None, frozenset({1, 2}), {1: live(1, 1, ahead), 2: live(2, 1, 0)})
      for ahead in (2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1, 2**32 + 1)],
]


def _elect_args(case: ElectCase) -> tuple[Any, ...]:
    sync, unclean, old, prefer, alive, beats = case
    return (None if sync is None else set(sync), None if unclean is None else set(unclean), old, prefer,
            Lookup(dict.fromkeys(alive, True), False), None if beats is None else Lookup(beats))


def _call_elect(fn: Any, case: ElectCase) -> Any:
    return fn(*_elect_args(case))


def _describe_elect(case: ElectCase) -> str:
    sync, unclean, old, prefer, alive, beats = case
    shown = "None" if beats is None else "{" + ", ".join(
        f"{b}: epoch {i.epoch} offset {i.max_offset} priority {i.election_priority}"
        for b, i in sorted(beats.items()) if b in alive) + "}"
    return (f"elect_master(sync_state_brokers={None if sync is None else sorted(sync)}, all_replica_brokers="
            f"{None if unclean is None else sorted(unclean)}, old_master={old}, prefer_broker_id={prefer}, "
            f"alive={sorted(alive)}, live_info={shown})")


def _elect_table(ctx: Ctx, cases: list[ElectCase]) -> None:
    compare_table(cases, Calls(ctx.impl, _elect_args), lambda c: _call_elect(elect_master, c), _describe_elect)


@graded("lab06.elect_master", points=2,
        about=N_("The Java policy's cases: SyncStateSet first, unclean only when given, the old master, a "
                 "preferred broker, epoch/offset/priority order, ties, no heartbeat info, and the 32-bit wrap of "
                 "the offset gap."))
def java_policy_cases(ctx: Ctx) -> None:
    _elect_table(ctx, JAVA_POLICY_CASES)


@graded("lab06.elect_master", points=3,
        about=N_("Every combination of SyncStateSet, unclean replicas, old master, preferred broker, live brokers "
                 "and heartbeat info over four brokers."))
def election_table(ctx: Ctx) -> None:
    _elect_table(ctx, elect_cases())


ANY_IDS = (0, 1, 2, 3, 7, 8, 9, 10, 16, 17, 100, 1000)


def any_elect_cases(seed: int = 9, count: int = 3000) -> list[ElectCase]:
    """Seeded draws with broker ids up to 1000 (ids above 7 change a small set's iteration order; ids of
    two digits change their order as strings), every mix of sets, old and preferred brokers, heartbeats
    with ties in epoch, offset and priority."""
    rng = random.Random(seed)
    cases: list[ElectCase] = []
    for _i in range(count):
        ids = rng.sample(ANY_IDS, rng.randrange(1, 6))
        pick = lambda ids=ids: frozenset(rng.sample(ids, rng.randrange(0, len(ids) + 1)))  # noqa: E731
        sync = None if rng.random() < 0.1 else pick()
        unclean = None if rng.random() < 0.5 else frozenset(ids)
        beats = None if rng.random() < 0.2 else {
            b: live(b, rng.randrange(1, 3), rng.choice((0, 100, 200)), rng.choice((1, 2, 2**31 - 1))) for b in ids}
        cases.append((sync, unclean, rng.choice((None, *ids)), rng.choice((None, None, *ids)), pick(), beats))
    return cases


@graded("lab06.elect_master", points=2,
        about=N_("3,000 seeded elections among brokers with ids up to 1000 (not only 1 to 4): the same choice as "
                 "DefaultElectPolicy whatever the ids, sets, preferences and heartbeats."))
def any_ids(ctx: Ctx) -> None:
    _elect_table(ctx, any_elect_cases())


# ---------------------------------------------------------------------- elect_master: live
@graded("lab06.elect_master", points=3, seeds=range(3), name="failover",
        about=N_("Your elect_master in every controller: a master is elected at the start; the master dies and a "
                 "new one comes within 40 s, from the SyncStateSet, holding every acknowledged message; the old "
                 "master returns as a slave; then the whole SyncStateSet but one dies and its survivor must be "
                 "elected."))
def elect_failover(ctx: Ctx) -> None:
    c = ctx.keep(controller_cluster(ctx.seed))
    expect(c.run_until(running, timeout_ms=40_000), _("no master elected within 40 s of the start"))
    expect(c.run_until(lambda c: len(master_set(c)) == 3, timeout_ms=40_000), _("the SyncStateSet never grew to 3"))
    old = c.leader()
    for i in range(10):
        expect(c.put(b"acked-%d" % i).status == "PUT_OK", _("put {i} was not acknowledged").format(i=i))
    c.crash(old)
    expect(c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=40_000),
           _("no new master within 40 s of crashing {old}: every other broker was alive and in the "
             "SyncStateSet").format(old=old))
    check_invariants(c)
    new = c.leader()
    c.restart(old)
    expect(c.run_until(lambda c: caught_up(c, old, new), timeout_ms=40_000),
           _("the old master {old} did not come back as a slave of {new}").format(old=old, new=new))
    expect(c.run_until(lambda c: len(master_set(c)) == 3, timeout_ms=40_000), _("the SyncStateSet never grew back to 3"))
    survivor = old
    for n in sorted(c.leader_candidates or ()):
        if n != survivor:
            c.crash(n)
    expect(c.run_until(lambda c: c.leader() == survivor, timeout_ms=60_000),
           _("only {survivor} was left (alive, in the SyncStateSet): it was not elected within 60 s (master now "
             "{master})").format(survivor=survivor, master=c.leader()))
    check_invariants(c)


@graded("lab06.elect_master", points=2, seeds=range(2), name="clean_and_unclean",
        about=N_("Your elect_master when the only in-sync broker dies: without enableElectUncleanMaster nobody may"
                 " be elected (the others lack acknowledged messages); with it a lagging broker is elected."))
def elect_clean_and_unclean(ctx: Ctx) -> None:
    for unclean in (False, True):
        c = ctx.keep(controller_cluster(ctx.seed, enableElectUncleanMaster=unclean))
        a = settle(c, members=1)
        others = [n for n in sorted(c.leader_candidates or ()) if n != a]
        for n in others:
            c.crash(n)
        expect(c.run_until(lambda c, a=a: master_set(c) == {c.node(a).broker_id}, timeout_ms=40_000),
               _("the SyncStateSet did not shrink to the master alone"))
        for i in range(3):
            expect(c.put(b"only-on-master-%d" % i).status == "PUT_OK", _("a put to the lone master failed"))
        c.restart(*others)
        c.run_until(lambda c, others=others: all(c.node(n).replicas.state == "RUNNING" for n in others),
                    timeout_ms=40_000)
        c.crash(a)
        c.run_for(30_000)
        master = c.leader()
        if unclean:
            expect(master in others, _("with enableElectUncleanMaster a lagging broker must be elected when the "
                                       "in-sync master dies; 30 s later the master is {master}").format(master=master))
        else:
            expect(master is None, _("{master} was elected although it is not in the SyncStateSet and unclean "
                                     "election is off: it lacks acknowledged messages").format(master=master))
            check_invariants(c)


@graded("lab06.elect_master", points=2, seeds=range(4), name="churn",
        about=N_("Your elect_master through five failovers in a row: masters die (some together with the "
                 "controller leader) and return as slaves; every invariant after every event, every acknowledged "
                 "message on the final master, every log equal at the end."))
def elect_churn(ctx: Ctx) -> None:
    churn(ctx)


def churn(ctx: Ctx, cycles: int = 5) -> None:
    """Failover after failover (the seed draws the details): acknowledged puts, sometimes puts in flight
    that only the master holds, the master crashed (sometimes with the controller leader), a new master
    within 40 s, the old one restarted as a slave that must catch up byte for byte."""
    rng = random.Random(f"{ctx.seed}/lab06-churn")
    c = ctx.keep(controller_cluster(ctx.seed))
    expect(c.run_until(running, timeout_ms=40_000), _("no master elected within 40 s of the start"))
    acked: list[Any] = []
    for cycle in range(cycles):
        expect(c.run_until(lambda c: len(master_set(c)) == 3, timeout_ms=40_000),
               _("before failover {n}: the SyncStateSet did not grow back to all 3 brokers within 40 s").format(
                   n=cycle + 1))
        master = c.leader()
        acked += [c.put(b"c%d-%d" % (cycle, i) * rng.randrange(1, 30)) for i in range(rng.randrange(1, 6))]
        brokers = sorted(c.leader_candidates or ())
        if rng.random() < 0.6:
            for n in brokers:
                if n != master:
                    c.cut_link(master, n)
            for i in range(rng.randrange(1, 4)):
                put_nowait(c, master, b"in-flight-%d-%d" % (cycle, i) * rng.randrange(1, 30))
            c.run_for(1)
        down = [master]
        leader = controller_leader(c)
        if leader is not None and rng.random() < 0.3:
            down.append(leader)
        c.crash(*down)
        expect(c.run_until(lambda c, master=master: c.leader() not in (None, master), timeout_ms=40_000),
               _("failover {n}: no new master within 40 s of crashing {down}").format(n=cycle + 1,
                                                                                     down=" + ".join(down)))
        c.run_for(rng.randrange(0, 3_000))
        c.restart(*down)
        c.heal()
        expect(c.run_until(lambda c, brokers=brokers: c.leader() is not None and all(
            caught_up(c, n, c.leader()) for n in brokers if n != c.leader()), timeout_ms=40_000),
               _("failover {n}: the slaves (the old master {old} among them) did not catch up with the new master "
                 "{new} within 40 s").format(n=cycle + 1, old=master, new=c.leader()))
        check_invariants(c)
    master = c.leader()
    log = c.node(master).store.commit_log
    missing = [h.wrote_offset for h in acked if h.status == "PUT_OK" and log.get_message(h.wrote_offset, h.wrote_bytes) is None]
    expect(not missing, _("{n} acknowledged message(s) are missing from the final master {master} (offsets "
                          "{offsets})").format(n=len(missing), master=master, offsets=missing[:5]))
    size = c.node(master).max_offset
    for n in c.leader_candidates or ():
        expect(c.node(n).store.commit_log.get_data(0, size) == log.get_data(0, size),
               _("at the end {node}'s log differs from the master {master}'s").format(node=n, master=master))
