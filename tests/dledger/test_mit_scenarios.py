"""MIT 6.5840's Raft tests (Lab 3A-3C, ``raft_test.go``) played on DLedger in the simulator, plus the
``rocketmq-4.9.5`` profile's known behaviours as fixed schedules.

Every cluster comes from ``Cluster.dledger``, whose installed checker runs the DLedger invariants after
every event (election safety, log matching, commit index monotone; committed entries stable and leader
completeness in the ``raft`` profile): a violation raises with the seed. Each test runs a few seeds by
default and a sweep of 100+ seeds with ``ROCKETLAB_FULL=1`` (``-m slow``); every assertion names its seed
(``rocketlab sim dledger-... --seed N`` replays the named scenarios).

Timers: MIT's tests assume election timeouts of a few hundred ms; ``SHORT_TIMERS`` shrinks DLedger's
20x (heartbeat 100 ms, a follower gives up after 3 x 100 ms). The election tests (3A) are about
DLedger's elector, so they run under the default profile (``dledger-0.3.1.2``; the ``raft`` profile
elects by Raft's rules instead), also with DLedger's own defaults (heartbeat 2 s: failover takes 3 missed
heartbeats plus a vote). The log tests (3B, 3C) run under ``raft``, whose commit rule lets the checker
demand that committed entries never change.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from rocketlab.dledger.config import DEFAULT_PROFILE
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.errors import ConfigError, InvariantViolation
from rocketlab.scenarios.dledger import run_churn, run_election
from rocketlab.scenarios.dledger_group import (
    DEFAULT_LATENCY,
    SHORT_TIMERS,
    append_nowait,
    bodies,
    caught_up,
    log_of,
    set_network,
    settled_leader,
    states,
    wait_settled,
)
from rocketlab.scenarios.dledger_schedules import (
    FIGURE_8,
    ISSUE_247,
    figure8_cluster,
    issue247_cluster,
    run_figure8,
    run_issue247,
)
from rocketlab.scenarios.schedules import parse_script, play
from rocketlab.sim import Cluster

Code = DLedgerResponseCode
SEEDS = range(1, 4)
SWEEP = range(100, 220)


def make(nodes: int, seed: int, tmp: Path | None, *, defaults: bool = False, network: str = "reliable",
         profile: str = "raft", **config: Any) -> Cluster:
    """A DLedger group: file stores under ``tmp`` (memory stores when None), SHORT_TIMERS unless
    ``defaults``, ``config`` on top."""
    timers = {} if defaults else SHORT_TIMERS
    return Cluster.dledger(nodes=nodes, seed=seed, profile=profile, memory=tmp is None, data_dir=tmp,
                           config={**timers, **config}, network=network, latency=DEFAULT_LATENCY)


def why(c: Cluster, what: str) -> str:
    return f"seed {c.seed} t={c.now_ms}: {what}; members: {states(c)}"


def one(c: Cluster, body: bytes, expected: int, retry: bool = True, timeout_ms: int = 10_000) -> int:
    """MIT's ``one()``: submit ``body`` to the leader (retrying for up to ``timeout_ms``) until at least
    ``expected`` members hold it committed; returns its index."""
    end = c.now_ms + timeout_ms
    while c.now_ms < end:
        leader = c.leader()
        if leader is not None:
            future = append_nowait(c, leader, body)
            c.run_until(lambda c, f=future: f.done, timeout_ms=2000)
            if future.code is Code.SUCCESS:
                index = future.response.index

                def committed(c: Cluster, index: int = index) -> bool:
                    return sum(1 for n in c.live_nodes() if c.node(n).committed_index >= index
                               and any(e.body == body for e in c.node(n).entries(index, index))) >= expected

                if c.run_until(committed, timeout_ms=2000):
                    return index
        assert retry, why(c, f"{body!r} was not committed by {expected} members")
        c.run_for(50)
    raise AssertionError(why(c, f"{body!r} was not committed by {expected} members within {timeout_ms} ms"))


def agree(c: Cluster, timeout_ms: int = 10_000) -> list[Any]:
    """Run until every member is up with the same ledger end and commit index; all logs must be equal."""
    assert c.run_until(caught_up, timeout_ms=timeout_ms), why(c, "members did not catch up")
    logs = {n: log_of(c, n) for n in c.node_ids}
    assert len({tuple(v) for v in logs.values()}) == 1, why(c, "logs differ")
    return logs[c.node_ids[0]]


def terms_agree(c: Cluster, among: list[str] | None = None) -> int:
    group = among or c.live_nodes()
    terms = {c.node(n).term for n in group}
    assert len(terms) == 1, why(c, f"members {group} disagree on the term: {terms}")
    return terms.pop()


def isolate(c: Cluster, *cut: str) -> None:
    """Disconnect each of ``cut`` from everyone (labrpc's ``disconnect``); the rest stay together."""
    c.partition(*([n] for n in cut))


def seeds(default: range = SEEDS) -> Any:
    return pytest.mark.parametrize("seed", default)


# ================================================================== 3A: election
def initial_election(seed: int, defaults: bool) -> None:
    c = make(3, seed, None, defaults=defaults, profile=DEFAULT_PROFILE)
    leader = wait_settled(c, timeout_ms=10_000 if defaults else 5000)
    term = terms_agree(c)
    assert term >= 1, why(c, "the first term is 0")
    quiet = 2 * 3 * c.node(leader).config.heart_beat_time_interval_ms * 2
    c.run_for(quiet)
    assert settled_leader(c) == leader and terms_agree(c) == term, why(c, "the term moved without a failure")


@seeds()
@pytest.mark.parametrize("defaults", [True, False], ids=["dledger-defaults", "short-timers"])
def test_initial_election_elects_one_leader_whose_term_every_member_agrees_on(seed, defaults):
    initial_election(seed, defaults)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_initial_election_sweep(seed):
    initial_election(seed, defaults=seed % 2 == 0)


def re_election(seed: int, defaults: bool) -> None:
    """DLedger's leader steps down once it misses a quorum of heartbeat answers (maxHeartBeatLeak), so
    after a cut-off no member at all leads; a Raft leader would go on believing it leads."""
    c = make(3, seed, None, defaults=defaults, profile=DEFAULT_PROFILE)
    timeout = 3 * c.node("n0").config.heart_beat_time_interval_ms  # a follower's patience
    leader1 = wait_settled(c)
    others = [n for n in c.node_ids if n != leader1]
    isolate(c, leader1)
    cut_ms = c.now_ms
    leader2 = wait_settled(c, others, timeout_ms=5 * timeout)
    assert leader2 != leader1 and c.now_ms - cut_ms >= timeout, why(c, "failover faster than a follower's timeout")
    c.heal()  # the old leader rejoins: it must follow, not lead
    again = wait_settled(c, timeout_ms=5 * timeout)
    assert c.node(leader1).role == "FOLLOWER", why(c, f"{leader1} did not step down (leader now {again})")
    x, y = [n for n in c.node_ids if n != again]
    isolate(c, again, x)  # no quorum: the one connected member must not lead, nor anyone after the leak
    c.run_for(3 * timeout)
    assert c.node(y).role != "LEADER", why(c, f"{y} leads without a quorum")
    assert all(c.node(n).role != "LEADER" for n in c.node_ids), why(c, "a leader without a quorum")
    isolate(c, again)  # x and y can talk again: one of them leads
    wait_settled(c, [x, y], timeout_ms=5 * timeout)
    c.heal()
    wait_settled(c, timeout_ms=5 * timeout)


@seeds()
@pytest.mark.parametrize("defaults", [True, False], ids=["dledger-defaults", "short-timers"])
def test_re_election_after_the_leader_is_cut_off_and_no_leader_without_a_quorum(seed, defaults):
    re_election(seed, defaults)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_re_election_sweep(seed):
    re_election(seed, defaults=seed % 2 == 0)


@seeds()
def test_failover_after_a_leader_crash_takes_three_missed_heartbeats_and_a_vote(seed, tmp_path):
    """DLedger's defaults: a follower gives up 3 x 2 s after the last heartbeat it got (the crash falls
    somewhere inside a 2 s heartbeat interval), then a vote round, maybe a 0.3-1 s pause and another:
    RocketMQ's docs say about 10 s."""
    c = make(3, seed, tmp_path, defaults=True, profile=DEFAULT_PROFILE)
    report = run_election(c)
    assert 4000 <= report["failover_ms"] <= 12_000, why(c, f"failover took {report['failover_ms']} ms")
    last_beat = max(e["t"] for e in c.events if e["kind"] == "heartbeat" and e["node"] == report["first_leader"]
                    and e["code"] == "SUCCESS")
    assert report["crash_ms"] + report["failover_ms"] - last_beat > 6000, why(c, "a follower gave up too early")
    assert report["new_term"] > report["first_term"] and report["write_after"] == "SUCCESS", why(c, str(report))
    assert report["acked_on_new_leader"] == report["acked_before"] == 3, why(c, "an acknowledged write is lost")


def many_elections(seed: int, rounds: int = 10) -> None:
    c = make(7, seed, None)
    rng = random.Random(f"{seed}/many")
    wait_settled(c)
    for _ in range(rounds):
        cut = sorted({rng.choice(c.node_ids) for _ in range(3)})
        isolate(c, *cut)
        wait_settled(c, [n for n in c.node_ids if n not in cut], timeout_ms=5000)
        c.heal()
    wait_settled(c, timeout_ms=5000)


@seeds()
def test_many_elections_on_seven_members_keep_one_leader_among_the_connected(seed):
    many_elections(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_many_elections_sweep(seed):
    many_elections(seed, rounds=20)


# ================================================================== 3B: agreement
def fail_agree(seed: int) -> None:
    c = make(3, seed, None)
    wait_settled(c)
    one(c, b"101", 3)
    follower = next(n for n in c.node_ids if n != c.leader())
    isolate(c, follower)
    for body in (b"102", b"103", b"104", b"105"):
        one(c, body, 2)
    c.heal()
    one(c, b"106", 3)
    log = agree(c)
    # in order, each once at least: ``one`` retries a put whose answer was lost, so a value may be in the
    # log twice (MIT's test checks each value's index, not the whole log)
    values = [b for _, _, b in log if b]
    assert list(dict.fromkeys(values)) == [b"101", b"102", b"103", b"104", b"105", b"106"], why(c, str(log))


@seeds()
def test_a_follower_that_missed_entries_catches_up_after_it_reconnects(seed):
    fail_agree(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_fail_agree_sweep(seed):
    fail_agree(seed)


def fail_no_agree(seed: int) -> None:
    c = make(5, seed, None)
    leader = wait_settled(c)
    first = one(c, b"10", 5)
    cut = [n for n in c.node_ids if n != leader][:3]
    isolate(c, *cut)
    future = append_nowait(c, leader, b"20")
    assert future.response is None or future.code is not Code.NOT_LEADER, why(c, "the leader refused")
    c.run_until(lambda c: future.done, timeout_ms=3000)
    assert future.code is not Code.SUCCESS, why(c, "an entry committed without a majority")
    assert all(c.node(n).committed_index == first for n in c.node_ids), why(c, "the commit index moved")
    assert c.node(leader).ledger_end_index >= first + 1, why(c, "the leader did not take the entry")
    c.heal()
    index = one(c, b"30", 5)
    log = agree(c)
    between = {b for i, _, b in log if first < i < index}  # MIT: index 2 or 3; retries of "30" may add more
    assert index > first and between <= {b"", b"20", b"30"}, why(c, f"the next entry landed at {index}: {log}")


@seeds()
def test_no_commit_without_a_majority_and_agreement_resumes_after_repair(seed):
    fail_no_agree(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_fail_no_agree_sweep(seed):
    fail_no_agree(seed)


def rejoin(seed: int) -> None:
    c = make(3, seed, None)
    leader1 = wait_settled(c)
    one(c, b"101", 3)
    isolate(c, leader1)  # the old leader takes three entries it can never commit
    stale = [append_nowait(c, leader1, b"stale %d" % i) for i in (102, 103, 104)]
    leader2 = wait_settled(c, [n for n in c.node_ids if n != leader1])
    one(c, b"103", 2)
    third = next(n for n in c.node_ids if n not in (leader1, leader2))
    isolate(c, leader2)  # the new leader goes; the old one returns to the third member
    wait_settled(c, [leader1, third])
    assert c.leader() == third, why(c, "the member with stale entries won")
    one(c, b"104", 2)
    c.heal()
    one(c, b"105", 3)
    log = agree(c)
    assert not any(f.code is Code.SUCCESS for f in stale), why(c, "a stale entry was acknowledged")
    assert [b for _, _, b in log if b] == [b"101", b"103", b"104", b"105"], why(c, str(log))


@seeds()
def test_a_partitioned_old_leader_has_its_uncommitted_entries_overwritten_when_it_rejoins(seed):
    rejoin(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_rejoin_sweep(seed):
    rejoin(seed)


def backup(seed: int) -> float:
    """MIT's TestBackup: two divergent minorities of 50 uncommitted entries each; returns the ms the
    whole group took to agree after the final heal."""
    c = make(5, seed, None)
    leader1 = wait_settled(c)
    one(c, b"first", 5)
    ids = c.node_ids
    keep = ids[(ids.index(leader1) + 1) % 5]
    isolate(c, *[n for n in ids if n not in (leader1, keep)])  # leader + 1 follower: nothing commits
    for i in range(50):
        append_nowait(c, leader1, b"lost-a %d" % i)
    c.run_for(50)
    c.partition([leader1, keep], [n for n in ids if n not in (leader1, keep)])
    for i in range(50):
        one(c, b"kept-b %d" % i, 3)
    leader2 = c.leader()
    other = next(n for n in ids if n not in (leader1, keep, leader2))
    c.partition([other], [leader1, keep])  # leader2 and one follower take 50 that never commit
    for i in range(50):
        append_nowait(c, leader2, b"lost-c %d" % i)
    c.run_for(50)
    c.partition([leader1, keep, other], [n for n in ids if n not in (leader1, keep, other)])
    for i in range(50):
        one(c, b"kept-d %d" % i, 3)
    c.heal()
    healed = c.now_ms
    one(c, b"last", 5)
    log = agree(c)
    took = c.now_ms - healed
    kept = [b for _, _, b in log if b]
    assert not any(b.startswith(b"lost") for b in kept), why(c, "an uncommitted entry of a minority survived")
    assert sum(b.startswith(b"kept") for b in kept) == 100 and kept[-1] == b"last", why(c, str(kept[-5:]))
    assert took < 3000, why(c, f"reconciling the logs took {took} ms")
    return took


@seeds()
def test_a_leader_backs_up_quickly_over_incorrect_follower_logs(seed):
    backup(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_backup_sweep(seed):
    backup(seed)


# ================================================================== 3C: persistence and Figure 8
def persist_whole_group(seed: int, tmp: Path) -> None:
    c = make(3, seed, tmp)
    wait_settled(c)
    for i in range(10):
        one(c, b"p%d" % i, 3)
    before = agree(c)
    c.crash(*c.node_ids)
    c.restart(*c.node_ids)
    wait_settled(c)
    committed = [e for e in log_of(c, c.leader()) if e[2]]
    assert committed[:10] == [e for e in before if e[2]], why(c, "the restarted group lost committed entries")
    leader = c.leader()
    c.crash(leader)  # TestPersist1: the leader restarts, then a follower
    c.restart(leader)
    one(c, b"after leader restart", 3)
    follower = next(n for n in c.node_ids if n != c.leader())
    c.crash(follower)
    one(c, b"while a follower is down", 2)
    c.restart(follower)
    one(c, b"after follower restart", 3)
    log = agree(c)
    assert [b for _, _, b in log if b][:10] == [b"p%d" % i for i in range(10)], why(c, "lost entries")


@seeds()
def test_a_whole_group_restarted_from_its_files_keeps_its_committed_log(seed, tmp_path):
    persist_whole_group(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_persist_whole_group_sweep(seed, tmp_path):
    persist_whole_group(seed, tmp_path)


def persist_rounds(seed: int, tmp: Path) -> None:
    """TestPersist2: five rounds where different minorities carry the log forward."""
    c = make(5, seed, tmp)
    wait_settled(c)
    acked = []
    index = 10
    for _ in range(5):
        one(c, b"%d" % index, 5)
        index += 1
        leader1 = c.leader()
        crash1 = [leader1, c.node_ids[(c.node_ids.index(leader1) + 1) % 5]]
        c.crash(*crash1)
        one(c, b"%d" % index, 3)
        acked.append(b"%d" % index)
        index += 1
        rest = [n for n in c.node_ids if n not in crash1]
        crash2 = rest[:2]
        c.crash(*crash2)
        c.restart(*crash1)
        one(c, b"%d" % index, 3)
        acked.append(b"%d" % index)
        index += 1
        c.restart(*crash2)
    one(c, b"1000", 5)
    log = agree(c)
    got = [b for _, _, b in log if b]
    assert all(a in got for a in acked), why(c, f"acknowledged entries lost: {sorted(set(acked) - set(got))}")


@seeds()
def test_members_crashed_and_restarted_in_turn_keep_every_acknowledged_write(seed, tmp_path):
    persist_rounds(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_persist_rounds_sweep(seed, tmp_path):
    persist_rounds(seed, tmp_path)


def figure8(seed: int, tmp: Path, iterations: int) -> None:
    """MIT's TestFigure8: whoever leads gets an entry and crashes soon after (90 %: within 13 ms, 10 %:
    within 500 ms); dead members restart when fewer than three are up. The checker (raft profile: committed
    entries never change) runs after every event; at the end everything restarts and agrees."""
    c = make(5, seed, tmp)
    rng = random.Random(f"{seed}/figure8")
    wait_settled(c)
    for i in range(iterations):
        leader = c.leader()
        if leader is not None:
            append_nowait(c, leader, b"f8 %d" % i)
        c.run_for(rng.randrange(13) if rng.random() < 0.9 else rng.randrange(500))
        if leader is not None and c.alive(leader):
            c.crash(leader)
        if len(c.live_nodes()) < 3:
            c.restart(rng.choice([n for n in c.node_ids if not c.alive(n)]))
    c.restart(*[n for n in c.node_ids if not c.alive(n)])
    one(c, b"figure 8 done", 5)
    agree(c)


@seeds()
def test_figure8_random_leader_crashes_never_change_a_committed_entry(seed, tmp_path):
    figure8(seed, tmp_path, iterations=150)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_figure8_sweep(seed, tmp_path):
    figure8(seed, tmp_path, iterations=1000)


def unreliable_agree(seed: int, rounds: int) -> None:
    c = make(5, seed, None, network="unreliable")
    wait_settled(c, timeout_ms=10_000)
    acked = []
    for r in range(rounds):
        wanted = [b"u%d-%d" % (r, k) for k in range(4)]
        for _attempt in range(20):  # MIT's one() retries each value until it is committed
            leader = c.leader()
            if leader is not None:
                futures = {b: append_nowait(c, leader, b) for b in wanted}
                c.run_until(lambda c, fs=futures: all(f.done for f in fs.values()), timeout_ms=2000)
                acked += [b for b, f in futures.items() if f.code is Code.SUCCESS]
                wanted = [b for b, f in futures.items() if f.code is not Code.SUCCESS]
            if not wanted:
                break
            c.run_for(100)
        assert not wanted, why(c, f"round {r}: {wanted} never committed on the lossy network")
    set_network(c, "reliable")
    one(c, b"reliable again", 5)
    got = set(bodies(c, c.leader()))
    assert all(a in got for a in acked), why(c, "an acknowledged value is missing")
    agree(c)


@seeds()
def test_unreliable_agree_commits_every_concurrent_append_on_a_lossy_network(seed):
    unreliable_agree(seed, rounds=50)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_unreliable_agree_sweep(seed):
    unreliable_agree(seed, rounds=50)


def figure8_unreliable(seed: int, iterations: int) -> None:
    """MIT's TestFigure8Unreliable: on a lossy network that starts holding replies for up to 2.2 s a fifth
    of the way in, whoever leads gets an entry and is cut off half the time; a cut-off member returns
    whenever fewer than three are connected. At the end all heal and agree."""
    c = make(5, seed, None, network="unreliable")
    rng = random.Random(f"{seed}/figure8-unreliable")
    wait_settled(c, timeout_ms=10_000)
    cut: set[str] = set()
    was: set[str] = set()
    for i in range(iterations):
        if i == iterations // 5:
            set_network(c, "reordering")
        leader = c.leader()
        if leader is not None:
            append_nowait(c, leader, b"u8 %d" % i)
        c.run_for(rng.randrange(13) if rng.random() < 0.9 else rng.randrange(500))
        if leader is not None and leader not in cut and rng.random() < 0.5:
            cut.add(leader)
        if len(c.node_ids) - len(cut) < 3:
            cut.discard(rng.choice(c.node_ids))
        if cut != was and cut:
            isolate(c, *sorted(cut))
        elif cut != was:
            c.heal()
        was = set(cut)
    c.heal()
    set_network(c, "reliable")
    one(c, b"figure 8 unreliable done", 5, timeout_ms=20_000)
    agree(c)


@seeds()
def test_figure8_unreliable_cut_off_leaders_on_a_reordering_network_change_no_committed_entry(seed):
    figure8_unreliable(seed, iterations=200)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SWEEP)
def test_figure8_unreliable_sweep(seed):
    figure8_unreliable(seed, iterations=1000)


def churn(seed: int, tmp: Path, network: str, rounds: int) -> None:
    c = make(5, seed, tmp, network=network)
    wait_settled(c, timeout_ms=10_000)
    report = run_churn(c, rounds=rounds)
    assert report.acked, why(c, "no client write was acknowledged")
    assert not report.missing, why(c, f"acknowledged writes lost: {report.missing[:5]}")
    assert report.converged, why(c, "members did not converge")


@seeds()
@pytest.mark.parametrize("network", ["reliable", "unreliable"])
def test_churn_keeps_every_acknowledged_write(seed, network, tmp_path):
    churn(seed, tmp_path, network, rounds=8)


@pytest.mark.slow
@pytest.mark.parametrize("network", ["reliable", "unreliable"])
@pytest.mark.parametrize("seed", SWEEP)
def test_churn_sweep(seed, network, tmp_path):
    churn(seed, tmp_path, network, rounds=20)


# ================================================================== rocketmq-4.9.5's known behaviours
def test_figure8_schedule_loses_a_committed_entry_under_rocketmq_4_9_5(tmp_path):
    """The FIGURE_8 schedule, seed 1: X is committed by counting replicas in (c) and overwritten in (d).
    The DLedgerChecker with committed_stable=True flags it: leader completeness when S5 takes over
    without X, then committed entries stable when Y replaces X on each member."""
    checker = DLedgerChecker(lambda c: {n: c.node(n) for n in c.live_nodes()}, committed_stable=True)
    c = Cluster.dledger(nodes=5, seed=1, profile="rocketmq-4.9.5", data_dir=tmp_path, config=SHORT_TIMERS,
                        checkers=[checker], raise_on_violation=False, latency=DEFAULT_LATENCY)
    report = run_figure8(c)
    assert report.x_committed and report.x_lost, why(c, str(report.as_dict()))
    details = " | ".join(v["detail"] for v in c.violations)
    assert "leader_completeness" in details and "committed_entries_stable" in details, details
    s1, s5 = report.names["S1"], report.names["S5"]
    commits = [e for e in c.events if e["kind"] == "commit" and e["node"] == s1 and e["index"] == report.x_index]
    assert commits, why(c, "S1 never committed X")
    assert all(b"X" not in bodies(c, n) and b"Y" in bodies(c, n) for n in c.node_ids), why(c, "Y did not replace X")
    assert c.node(s5).role == "LEADER", why(c, "S5 does not lead at the end")


def test_figure8_schedule_raises_with_the_seed_when_the_checker_may_raise(tmp_path):
    checker = DLedgerChecker(lambda c: {n: c.node(n) for n in c.live_nodes()}, committed_stable=True)
    c = Cluster.dledger(nodes=5, seed=1, profile="rocketmq-4.9.5", data_dir=tmp_path, config=SHORT_TIMERS,
                        checkers=[checker], latency=DEFAULT_LATENCY, scenario="dledger-figure8")
    with pytest.raises(InvariantViolation, match="leader_completeness") as info:
        run_figure8(c)
    assert info.value.seed == 1 and "rocketlab sim dledger-figure8 --seed 1" in str(info.value)


@pytest.mark.parametrize("seed", [1, 2, 3, 7, 11])
def test_the_same_figure8_schedule_under_raft_loses_nothing(seed, tmp_path):
    c = figure8_cluster(seed=seed, profile="raft", data_dir=tmp_path)
    report = run_figure8(c)
    assert not c.violations and not report.x_lost, why(c, str(report.as_dict()))
    final = bodies(c, c.leader())
    assert b"first" in final and b"W" in final, why(c, f"committed entries missing: {final}")
    if report.x_committed:
        assert all(b"X" in bodies(c, n) for n in c.node_ids), why(c, "committed X is gone")


@pytest.mark.parametrize("seed", [2, 3, 5])
def test_figure8_schedule_under_rocketmq_4_9_5_is_deterministic_for_other_seeds_too(seed, tmp_path):
    c = figure8_cluster(seed=seed, profile="rocketmq-4.9.5", data_dir=tmp_path)
    report = run_figure8(c)
    assert report.x_lost and {"leader_completeness", "committed_entries_stable"} <= set(report.violations), \
        why(c, str(report.as_dict()))


@pytest.mark.parametrize("nodes", [3, 5])
def test_issue_247_a_follower_with_a_bigger_term_never_rejoins_under_rocketmq_4_9_5(nodes, tmp_path):
    c = issue247_cluster(seed=1, profile="rocketmq-4.9.5", nodes=nodes, data_dir=tmp_path)
    report = run_issue247(c)
    f, lead = report.names["F"], report.names["L"]
    assert report.follower_role == "CANDIDATE" and report.follower_term > c.node(lead).term, why(c, "F rejoined")
    assert report.leader == lead and c.node(lead).role == "LEADER", why(c, "the leader stepped down")
    assert report.follower_end < report.leader_end and report.expired_term_answers >= 10, why(c, str(report))
    assert not c.violations, why(c, "a safety invariant broke")
    role, stale = None, False  # how F got its bigger term: a vote round that ended after F became a follower
    for e in (e for e in c.events if e["node"] == f and e["kind"] in ("role", "vote_round")):
        role = e["role"] if e["kind"] == "role" else role
        stale |= e["kind"] == "vote_round" and e["result"] == "WAIT_TO_VOTE_NEXT" and role == "FOLLOWER"
    assert stale, why(c, "F's term grew some other way")
    c.run_for(10_000)  # and it stays out
    assert c.node(f).role == "CANDIDATE" and c.node(f).ledger_end_index == report.follower_end, why(c, "F rejoined")


@pytest.mark.parametrize("nodes", [3, 5])
def test_issue_247_the_follower_rejoins_under_raft(nodes, tmp_path):
    c = issue247_cluster(seed=1, profile="raft", nodes=nodes, data_dir=tmp_path)
    report = run_issue247(c)
    assert report.rejoined and report.leader_term >= report.follower_term, why(c, str(report.as_dict()))
    assert not c.violations
    agree(c)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["raft", "rocketmq-4.9.5"])
@pytest.mark.parametrize("seed", SWEEP)
def test_known_behaviour_schedules_sweep(seed, profile, tmp_path):
    f8 = run_figure8(figure8_cluster(seed=seed, profile=profile, data_dir=tmp_path / "f8"))
    i247 = run_issue247(issue247_cluster(seed=seed, profile=profile, data_dir=tmp_path / "247"))
    expected_loss = profile == "rocketmq-4.9.5"
    assert f8.x_lost == expected_loss and i247.rejoined != expected_loss, \
        f"seed {seed}: figure8 {f8.as_dict()} / 247 {i247.as_dict()}"


# ================================================================== the checker itself
@seeds()
def test_a_paused_old_leader_need_not_hold_what_a_newer_term_committed(seed, tmp_path):
    """A leader frozen by a long pause (a GC pause) still says LEADER in its old term while the others
    elect a new leader and commit. Leader completeness binds leaders of the commit's term and later
    ones only, so this is no violation; once resumed, the old leader steps down and catches up."""
    c = make(3, seed, tmp_path)
    old = wait_settled(c)
    one(c, b"before the pause", 3)
    c.pause(old)
    new = wait_settled(c, [n for n in c.node_ids if n != old])
    for i in range(3):
        one(c, b"while %s sleeps %d" % (old.encode(), i), 2)
    assert c.node(old).role == "LEADER" and c.node(old).term < c.node(new).term, why(c, "the pause did not hold")
    c.resume(old)
    one(c, b"after the pause", 3)
    assert c.node(old).role == "FOLLOWER", why(c, f"{old} still leads")
    agree(c)


# ================================================================== schedules as text
def test_the_known_behaviour_schedules_parse_into_timed_steps():
    f8, i247 = parse_script(FIGURE_8), parse_script(ISSUE_247)
    assert [s.at_ms for s in f8] == sorted(s.at_ms for s in f8) and f8[0].line == "0 partition S1 S2 S5 | S3 S4"
    assert {s.action for s in i247} == {"partition", "pause", "heal", "crash", "restart", "resume", "append"}


@pytest.mark.parametrize(("line", "message"), [
    ("100 explode n0", "schedule line 1 ('100 explode n0'): unknown action 'explode'"),
    ("soon crash n0", "expected 'AT_MS ACTION ARGS'"),
    ("5 append n0", "append takes NODE BODY"),
])
def test_a_bad_schedule_line_is_refused_with_its_number(line, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_script(f"{line}\n")


def test_names_bind_to_nodes_groups_and_nobody():
    c = make(3, 1, None)
    wait_settled(c)
    run = play(c, "10 partition A | B | others\n20 pause NOBODY\n30 heal\n40 append A hello", {
        "A": "n0", "B": ["n1"], "NOBODY": []})
    c.run_for(100)
    assert [text for _, text in run.played] == ["partition n0 | n1 | n2", "heal", "append n0 hello"]
    assert run.futures["hello"] is not None


def test_figure8_unreliable_seed_118_keeps_every_committed_entry():
    """A seed of the sweep that once elected a leader lacking a committed entry under the raft profile: a
    leader's dispatcher kept a compare index from its earlier term and truncated a matching follower below
    a committed entry, which then voted for a stale candidate (``fresh_compare_on_new_term``)."""
    figure8_unreliable(118, iterations=1000)
