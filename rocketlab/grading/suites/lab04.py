"""Lab 04's graded tests: ``quorum_index`` and ``decide_compare``, in tables and in live groups.

Scenarios run on the ``raft`` profile (commit only entries of the current term), where the kit's own
pusher keeps every invariant under churn, so any violation is the plugged function's: log matching,
leader completeness, committed entries never change, no acknowledged write lost (every event).
"""

from __future__ import annotations

import itertools
import random

from rocketlab.dledger.entry_dispatcher import decide_compare
from rocketlab.dledger.entry_pusher import quorum_index
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import compare_table, expect, fields_of
from rocketlab.scenarios.dledger import run_churn
from rocketlab.scenarios.dledger_group import (
    SHORT_TIMERS,
    DLedgerViolations,
    append_nowait,
    caught_up,
    commit,
    log_of,
    violated,
    wait_settled,
)
from rocketlab.scenarios.dledger_schedules import figure8_cluster, run_figure8
from rocketlab.sim.cluster import Cluster

Code = DLedgerResponseCode
PROFILE = "raft"
LOG_TERMS = [1, 1, 2, 2, 3, 3]  # the leader's log: index -> term (the current term is 3)


# ---------------------------------------------------------------------- quorum_index: table
def quorum_cases() -> list[tuple[dict[str, int], int, int, bool]]:
    cases = []
    rng = random.Random(4)
    marks3 = list(itertools.product(range(-1, 6), repeat=3))
    marks5 = [tuple(rng.randrange(-1, 6) for _ in range(5)) for _ in range(300)]
    for marks in marks3 + marks5:
        water = {f"n{i}": m for i, m in enumerate(marks)}
        for committed, only_current in itertools.product((-1, 1, 3), (False, True)):
            cases.append((water, 3, committed, only_current))
    return cases


def _term_of(index: int) -> int:
    return LOG_TERMS[index] if 0 <= index < len(LOG_TERMS) else 3


@graded("lab04.quorum_index", points=3)
def quorum_table(ctx: Ctx) -> None:
    """The commit index of 3- and 5-member groups for many water marks, with and without Raft's
    current-term rule (the leader's log holds terms 1 1 2 2 3 3, the current term is 3)."""
    compare_table(quorum_cases(), lambda c: ctx.impl(dict(c[0]), c[1], c[2], c[3], _term_of),
                  lambda c: quorum_index(dict(c[0]), c[1], c[2], c[3], _term_of),
                  lambda c: (f"quorum_index(water_marks={c[0]}, term={c[1]}, committed_index={c[2]}, "
                             f"commit_only_current_term={c[3]}, term_of=<terms {LOG_TERMS}>)"))


# ---------------------------------------------------------------------- decide_compare: table
def compare_cases() -> list[tuple[int, DLedgerResponseCode, int, int, int, int]]:
    cases = []
    for l_begin, l_end in ((0, 5), (3, 8)):
        for f_begin, f_end in ((-1, -1), (0, 2), (0, 5), (0, 9), (2, 7), (6, 9), (9, 12)):
            for compare_index in range(-1, 11):
                for code in (Code.SUCCESS, Code.INCONSISTENT_STATE):
                    cases.append((compare_index, code, f_begin, f_end, l_begin, l_end))
    return cases


COMPARE_FIELDS = ("rule", "action", "index")


@graded("lab04.decide_compare", points=3)
def decision_table(ctx: Ctx) -> None:
    """doCompare's decision for every answer of a follower whose log starts, ends or diverges before,
    inside or after the leader's."""
    compare_table(compare_cases(), lambda c: fields_of(ctx.impl(*c), COMPARE_FIELDS),
                  lambda c: fields_of(decide_compare(*c), COMPARE_FIELDS),
                  lambda c: (f"decide_compare(compare_index={c[0]}, code={c[1].name}, follower {c[2]}..{c[3]}, "
                             f"leader {c[4]}..{c[5]})"))


# ---------------------------------------------------------------------- live groups
def group(seed: int, nodes: int = 5, network: str = "reliable") -> Cluster:
    return Cluster.dledger(nodes=nodes, seed=seed, profile=PROFILE, config=SHORT_TIMERS,
                           checkers=[DLedgerViolations()], raise_on_violation=False, network=network,
                           latency="uniform:1:3")


def no_violations(c: Cluster) -> None:
    found = dict(violated(c))
    expect(not found, f"invariants broken: {found}; first: {c.violations[0].get('detail') if c.violations else ''}")


def churn(ctx: Ctx) -> None:
    c = ctx.keep(group(ctx.seed, network="unreliable"))
    wait_settled(c, timeout_ms=5_000)
    report = run_churn(c, rounds=12, settle_ms=8_000)
    no_violations(c)
    expect(not report.missing, f"{len(report.missing)} of {len(report.acked)} acknowledged writes are missing from "
                               f"the final log, e.g. {report.missing[0]!r}" if report.missing else "")
    try:
        commit(c, b"after-churn", timeout_ms=8_000)
    except Exception as e:
        raise AssertionError(f"after the churn healed, no write committed within 8 s: {e}") from None


def figure8(ctx: Ctx) -> None:
    c = ctx.keep(figure8_cluster(ctx.seed, PROFILE))
    report = run_figure8(c)
    no_violations(c)
    expect(not report.x_lost, "Figure 8: entry X was committed and then overwritten")


def backup(ctx: Ctx) -> None:
    """MIT's TestBackup, smaller: two minorities take uncommitted entries, majorities commit others."""
    c = ctx.keep(group(ctx.seed))
    leader1 = wait_settled(c, timeout_ms=5_000)
    commit(c, b"first", timeout_ms=5_000)
    ids = c.node_ids
    keep = ids[(ids.index(leader1) + 1) % 5]
    rest = [n for n in ids if n not in (leader1, keep)]
    c.partition([leader1, keep], rest)
    for i in range(20):
        append_nowait(c, leader1, b"lost-a %d" % i)
    c.run_for(200)
    for i in range(20):
        commit(c, b"kept-b %d" % i, timeout_ms=5_000)
    leader2 = c.leader()
    expect(leader2 in rest, f"the majority {rest} elected no leader")
    other = next(n for n in rest if n != leader2)
    c.partition([other, leader1, keep], [n for n in rest if n != other])
    for i in range(20):
        append_nowait(c, leader2, b"lost-c %d" % i)
    c.run_for(200)
    for i in range(20):
        commit(c, b"kept-d %d" % i, timeout_ms=5_000)
    c.heal()
    healed = c.now_ms
    commit(c, b"last", timeout_ms=5_000)
    expect(c.run_until(caught_up, timeout_ms=5_000),
           f"the logs did not agree within 5 s of healing (t={c.now_ms - healed} ms after)")
    no_violations(c)
    kept = [b for _, _, b in log_of(c, c.node_ids[0]) if b]
    expect(not any(b.startswith(b"lost") for b in kept), "an uncommitted entry of a minority survived the repair")
    expect(sum(b.startswith(b"kept") for b in kept) == 40 and kept[-1] == b"last",
           f"the agreed log lost committed entries: it ends {kept[-3:]}")


@graded("lab04.quorum_index", points=3, seeds=range(2), name="figure8")
def quorum_figure8(ctx: Ctx) -> None:
    """Raft's Figure 8 played on 5 members with your quorum_index in every leader: no committed entry
    may ever be overwritten."""
    figure8(ctx)


@graded("lab04.quorum_index", points=2, seeds=range(3), name="churn")
def quorum_churn(ctx: Ctx) -> None:
    """MIT-style churn on a lossy network with your quorum_index: every invariant at every event, no
    acknowledged write lost, writes commit again after healing."""
    churn(ctx)


@graded("lab04.decide_compare", points=3, seeds=range(3), name="backup")
def compare_backup(ctx: Ctx) -> None:
    """MIT's TestBackup with your decide_compare: followers with divergent, longer or shorter logs are
    repaired within 5 s of healing; uncommitted entries go, committed ones stay."""
    backup(ctx)


@graded("lab04.decide_compare", points=2, seeds=range(3), name="churn")
def compare_churn(ctx: Ctx) -> None:
    """MIT-style churn on a lossy network with your decide_compare: every invariant at every event, no
    acknowledged write lost, writes commit again after healing."""
    churn(ctx)
