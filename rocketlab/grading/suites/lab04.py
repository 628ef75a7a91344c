"""Lab 04's graded tests: ``quorum_index`` and ``decide_compare`` (the warm-ups), in tables and in live
groups, and ``commit_rule`` (the design exercise: make Figure 8 safe on ``dledger-0.3.1.2``).

Scenarios run on the ``raft`` profile (commit only entries of the current term), where the kit's own
pusher keeps every invariant under churn, so any violation is the plugged function's: log matching,
leader completeness, committed entries never change, no acknowledged write lost (every event).
``commit_rule`` runs on ``dledger-0.3.1.2`` itself: the named Figure 8 schedule, seeded schedules of its
family (:mod:`rocketlab.scenarios.figure8_family`), liveness with a majority up, and a property table
that accepts any rule that is safe and commits what is safe to commit (no one answer is imposed).
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Iterator
from typing import Any

from rocketlab.dledger.entry_dispatcher import decide_compare
from rocketlab.dledger.entry_pusher import quorum_index
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.errors import RocketlabError
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.sandbox_codec import Lookup
from rocketlab.grading.suites._common import Calls, compare_table, expect, fields_of
from rocketlab.i18n import N_, _
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
from rocketlab.scenarios.figure8_family import run_figure8_family
from rocketlab.sim.cluster import Cluster

Code = DLedgerResponseCode
PROFILE = "raft"
LOG_TERMS = [1, 1, 2, 2, 3, 3]  # the leader's log: index -> term (the current term is 3)


# ---------------------------------------------------------------------- quorum_index: table
def quorum_cases() -> list[tuple[dict[str, int], int, int, bool]]:
    cases = []
    rng = random.Random(4)
    marks3 = list(itertools.product(range(-1, 6), repeat=3))
    marks5 = [tuple(rng.randrange(-1, 6) for _i in range(5)) for _i in range(300)]
    for marks in marks3 + marks5:
        water = {f"n{i}": m for i, m in enumerate(marks)}
        for committed, only_current in itertools.product((-1, 1, 3), (False, True)):
            cases.append((water, 3, committed, only_current))
    return cases


_term_of = Lookup(dict(enumerate(LOG_TERMS)), 3)  # index -> term, 3 past the end: runs in the sandbox as data


def _kept(case: tuple[dict[str, int], int, int, bool], answer: object) -> object:
    """With the current-term rule, the commit index the store keeps: an answer at or below
    ``committed_index`` changes nothing (``update_committed_index`` ignores it), so either is right."""
    if case[3] and isinstance(answer, int) and not isinstance(answer, bool):
        return max(answer, case[2])
    return answer


class _KeptCalls(Calls):
    """:class:`Calls` whose answers pass through :func:`_kept` with their case."""

    def answers(self, cases: list[Any]) -> Iterator[tuple[Any, BaseException | None]]:
        for case, (got, error) in zip(cases, super().answers(cases), strict=True):
            yield (_kept(case, got) if error is None else got), error


@graded("lab04.quorum_index", points=3,
        about=N_("The commit index of 3- and 5-member groups for many water marks, with and without Raft's "
                 "current-term rule (the leader's log holds terms 1 1 2 2 3 3, the current term is 3)."))
def quorum_table(ctx: Ctx) -> None:
    compare_table(quorum_cases(), _KeptCalls(ctx.impl, lambda c: (dict(c[0]), c[1], c[2], c[3], _term_of)),
                  lambda c: _kept(c, quorum_index(dict(c[0]), c[1], c[2], c[3], _term_of)),
                  lambda c: (f"quorum_index(water_marks={c[0]}, term={c[1]}, committed_index={c[2]}, "
                             f"commit_only_current_term={c[3]}, term_of=<terms {LOG_TERMS}>)"))


def any_marks_cases(seed: int = 8, count: int = 3000) -> list[tuple[dict[str, int], int, int, bool]]:
    """Seeded water marks of groups of 1 to 6 members (even sizes included), ties and -1 marks, every
    committed index, with and without the current-term rule."""
    rng = random.Random(seed)
    cases = []
    for _i in range(count):
        size = rng.randrange(1, 7)
        water = {f"n{i}": rng.randrange(-1, 7) for i in range(size)}
        cases.append((water, 3, rng.choice((-1, 0, 1, 2, 3, 5)), rng.random() < 0.5))
    return cases


@graded("lab04.quorum_index", points=2,
        about=N_("3,000 seeded groups of 1 to 6 members (with 2, 4 or 6 members a commit needs more than half): "
                 "the commit index for every water mark, with and without Raft's current-term rule."))
def any_marks(ctx: Ctx) -> None:
    compare_table(any_marks_cases(), _KeptCalls(ctx.impl, lambda c: (dict(c[0]), c[1], c[2], c[3], _term_of)),
                  lambda c: _kept(c, quorum_index(dict(c[0]), c[1], c[2], c[3], _term_of)),
                  lambda c: (f"quorum_index(water_marks={c[0]}, term={c[1]}, committed_index={c[2]}, "
                             f"commit_only_current_term={c[3]}, term_of=<terms {LOG_TERMS}>)"),
                  why=lambda c, want: _("{need} of {n} members must hold an entry to commit it").format(
                      need=len(c[0]) // 2 + 1, n=len(c[0])))


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


@graded("lab04.decide_compare", points=3,
        about=N_("doCompare's decision for every answer of a follower whose log starts, ends or diverges before, "
                 "inside or after the leader's."))
def decision_table(ctx: Ctx) -> None:
    compare_table(compare_cases(), Calls(ctx.impl, post=lambda got: fields_of(got, COMPARE_FIELDS)),
                  lambda c: fields_of(decide_compare(*c), COMPARE_FIELDS),
                  lambda c: (f"decide_compare(compare_index={c[0]}, code={c[1].name}, follower {c[2]}..{c[3]}, "
                             f"leader {c[4]}..{c[5]})"))


def any_logs_cases() -> list[tuple[int, DLedgerResponseCode, int, int, int, int]]:
    """Every follower log against leader logs of several shapes, small numbers exhaustively: empty,
    disjoint, touching the leader's at either end (sharing one index), inside, around; every compare
    index from below both logs to above both, after SUCCESS and INCONSISTENT_STATE."""
    cases = []
    for l_begin, l_end in ((0, 0), (0, 4), (2, 5), (3, 3)):
        for f_begin in range(-1, 8):
            for f_end in range(max(f_begin, 0) - 1 if f_begin >= 0 else -1, 8):
                if f_begin == -1 and f_end != -1:
                    continue
                for compare_index in range(-1, 9):
                    for code in (Code.SUCCESS, Code.INCONSISTENT_STATE):
                        cases.append((compare_index, code, f_begin, f_end, l_begin, l_end))
    return cases


@graded("lab04.decide_compare", points=2,
        about=N_("doCompare for every small follower and leader log: touching at one end (one index shared), "
                 "disjoint, nested, empty, and every compare index."))
def any_logs(ctx: Ctx) -> None:
    compare_table(any_logs_cases(), Calls(ctx.impl, post=lambda got: fields_of(got, COMPARE_FIELDS)),
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
    expect(not found, _("invariants broken: {found}; first: {detail}").format(
        found=found, detail=c.violations[0].get('detail') if c.violations else ''))


def churn(ctx: Ctx) -> None:
    c = ctx.keep(group(ctx.seed, network="unreliable"))
    wait_settled(c, timeout_ms=5_000)
    report = run_churn(c, rounds=12, settle_ms=8_000)
    no_violations(c)
    expect(not report.missing, _("{n} of {acked} acknowledged writes are missing from the final log, e.g. {first}").format(
        n=len(report.missing), acked=len(report.acked), first=repr(report.missing[0])) if report.missing else "")
    try:
        commit(c, b"after-churn", timeout_ms=8_000)
    except Exception as e:
        raise AssertionError(_("after the churn healed, no write committed within 8 s: {error}").format(error=e)) from None


def figure8(ctx: Ctx) -> None:
    c = ctx.keep(figure8_cluster(ctx.seed, PROFILE))
    report = run_figure8(c)
    no_violations(c)
    expect(not report.x_lost, _("Figure 8: entry X was committed and then overwritten"))


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
    expect(leader2 in rest, _("the majority {members} elected no leader").format(members=rest))
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
           _("the logs did not agree within 5 s of healing (t={ms} ms after)").format(ms=c.now_ms - healed))
    no_violations(c)
    kept = [b for _, _, b in log_of(c, c.node_ids[0]) if b]
    expect(not any(b.startswith(b"lost") for b in kept), _("an uncommitted entry of a minority survived the repair"))
    expect(sum(b.startswith(b"kept") for b in kept) == 40 and kept[-1] == b"last",
           _("the agreed log lost committed entries: it ends {tail}").format(tail=kept[-3:]))


def figure8_without_noop(ctx: Ctx) -> None:
    """Figure 8 where the current-term rule alone protects X: ``raft`` without its NOOP entry, so in (c)
    S1 holds X on a majority with no entry of its own term; counting replicas commits X and (d) loses it."""
    c = ctx.keep(Cluster.dledger(nodes=5, seed=ctx.seed, profile=PROFILE,
                                 config={**SHORT_TIMERS, "append_noop_on_leadership": False},
                                 checkers=[DLedgerViolations()], raise_on_violation=False, latency="uniform:1:3",
                                 scenario="dledger-figure8"))
    report = run_figure8(c)
    expect(not report.x_lost, _("Figure 8 without the NOOP: entry X (of an older term) was committed by counting "
                                "its replicas and then overwritten (with commit_only_current_term, answer as your "
                                "commit_rule does)"))
    no_violations(c)


def even_group(ctx: Ctx) -> None:
    """Four members: the leader and one follower cut off from the other two may append but not commit
    (2 of 4 is no majority); once healed, every entry commits and the logs agree."""
    c = ctx.keep(group(ctx.seed, nodes=4))
    leader = wait_settled(c, timeout_ms=5_000)
    commit(c, b"first", timeout_ms=5_000)
    before = c.node(leader).committed_index
    mate, *far = [n for n in c.node_ids if n != leader]
    c.partition([leader, mate], far)
    for i in range(5):
        append_nowait(c, leader, b"half-%d" % i)
    c.run_for(1_000)
    after = c.node(leader).committed_index
    expect(after == before, _("4 members, leader {leader} and {mate} cut off from {far0} and {far1}: the leader "
                              "committed up to index {after} (was {before}) with 2 of 4 members holding it").format(
        leader=leader, mate=mate, far0=far[0], far1=far[1], after=after, before=before))
    no_violations(c)
    c.heal()
    commit(c, b"healed", timeout_ms=5_000)
    expect(c.run_until(caught_up, timeout_ms=5_000), _("the logs did not agree within 5 s of healing"))
    no_violations(c)


@graded("lab04.quorum_index", points=2, seeds=range(4), name="figure8_without_noop",
        about=N_("Raft's Figure 8 on ``raft`` without the new leader's NOOP, with your quorum_index in every "
                 "leader: an entry of an older term on a majority must not commit until one of the leader's term "
                 "does."))
def quorum_figure8_without_noop(ctx: Ctx) -> None:
    figure8_without_noop(ctx)


@graded("lab04.quorum_index", points=2, seeds=range(3), name="even_groups",
        about=N_("Your quorum_index in a group of 4: two members cut off with the leader commit nothing; healed, "
                 "everything commits."))
def quorum_even_groups(ctx: Ctx) -> None:
    even_group(ctx)


@graded("lab04.quorum_index", points=3, seeds=range(2), name="figure8",
        about=N_("Raft's Figure 8 played on 5 members with your quorum_index in every leader: no committed entry "
                 "may ever be overwritten."))
def quorum_figure8(ctx: Ctx) -> None:
    figure8(ctx)


@graded("lab04.quorum_index", points=2, seeds=range(3), name="churn",
        about=N_("MIT-style churn on a lossy network with your quorum_index: every invariant at every event, no "
                 "acknowledged write lost, writes commit again after healing."))
def quorum_churn(ctx: Ctx) -> None:
    churn(ctx)


@graded("lab04.decide_compare", points=3, seeds=range(3), name="backup",
        about=N_("MIT's TestBackup with your decide_compare: followers with divergent, longer or shorter logs are "
                 "repaired within 5 s of healing; uncommitted entries go, committed ones stay."))
def compare_backup(ctx: Ctx) -> None:
    backup(ctx)


@graded("lab04.decide_compare", points=2, seeds=range(3), name="churn",
        about=N_("MIT-style churn on a lossy network with your decide_compare: every invariant at every event, no "
                 "acknowledged write lost, writes commit again after healing."))
def compare_churn(ctx: Ctx) -> None:
    churn(ctx)


# ---------------------------------------------------------------------- commit_rule: the design exercise
DESIGN_PROFILE = "dledger-0.3.1.2"
FAMILY_SEEDS = range(200 if os.environ.get("ROCKETLAB_FULL") == "1" else 20)
"""The seeded Figure 8 schedules: 20 in CI, 200 under ``ROCKETLAB_FULL=1`` (``--stress N`` for more)."""
FAMILY_ROUNDS = 8
"""Rounds of each seeded schedule (the original rule and the half-fixes break within 8 where they break)."""


def _marks_cases(seed: int = 42, count: int = 2000) -> list[tuple[dict[str, int], int, int, list[int]]]:
    """Leader logs of terms that never decrease (the current term last or absent), marks within them."""
    rng = random.Random(seed)
    cases = []
    for _i in range(count):
        size = rng.choice((1, 3, 4, 5))
        terms = sorted(rng.randrange(1, 5) for _i in range(rng.randrange(1, 8)))
        term = max(terms) + rng.randrange(2)
        end = len(terms) - 1
        water = {f"n{i}": rng.randrange(-1, end + 1) for i in range(size)}
        water["n0"] = end  # the leader holds its whole log
        cases.append((water, term, rng.randrange(-1, end + 1), terms))
    return cases


def _safe_answer(case: tuple[dict[str, int], int, int, list[int]], got: object) -> str | None:
    """Why ``got`` is not a safe and live commit index for ``case`` (None: it is)."""
    water, term, committed, terms = case
    if not isinstance(got, int) or isinstance(got, bool):
        return _("returned {got}, not an index (an int)").format(got=repr(got))
    majority = len(water) // 2 + 1
    held = [i for i in range(len(terms)) if sum(m >= i for m in water.values()) >= majority]
    if got > committed and got not in held:
        return _("returned {got}, but only {n} of {members} members hold it").format(
            got=got, n=sum(m >= got for m in water.values()), members=len(water))
    if got > committed and not any(terms[i] == term for i in held if i >= got):
        return _("returned {got}: with these water marks a later leader may still overwrite entry {got} "
                 "(term {term}); see Figure 8 (c)-(d)").format(got=got, term=terms[got])
    live = [i for i in held if terms[i] == term]
    if live and got < max(live):
        return _("returned {got}, but entry {entry} is safe to commit now: a majority holds it").format(
            got=got, entry=max(live))
    return None


@graded("lab04.commit_rule", points=2,
        about=N_("2,000 seeded leader logs and water marks: your rule commits nothing a later leader could "
                 "overwrite, and does not hold back an entry that is already safe to commit."))
def commit_properties(ctx: Ctx) -> None:
    wrong, first = 0, None
    cases = _marks_cases()
    for case in cases:
        water, term, committed, terms = case
        got = ctx.impl(dict(water), term, committed, lambda i, t=terms: t[i] if 0 <= i < len(t) else -1)
        why = _safe_answer(case, got)
        if why is not None:
            wrong += 1
            first = first or (case, why)
    if first is not None:
        (water, term, committed, terms), why = first
        raise AssertionError(_("{wrong} of {n} cases wrong. First: {case} {why}").format(
            wrong=wrong, n=len(cases), why=why,
            case=f"commit_rule(water_marks={water}, term={term}, committed_index={committed}, "
                 f"term_of=<the leader's log: terms {terms}>)"))


def _design_figure8(ctx: Ctx) -> None:
    c = ctx.keep(figure8_cluster(ctx.seed, DESIGN_PROFILE))
    try:
        report = run_figure8(c)
    except RocketlabError as e:
        raise AssertionError(_("Figure 8 on {profile}: nothing committed ({error})").format(
            profile=DESIGN_PROFILE, error=e)) from None
    expect(not report.x_lost, _("Figure 8 on {profile}: entry X (index {index}) was committed and then overwritten "
                                "by a later leader").format(profile=DESIGN_PROFILE, index=report.x_index))
    no_violations(c)


@graded("lab04.commit_rule", points=3, seeds=range(2), name="figure8",
        about=N_("Raft's Figure 8 on dledger-0.3.1.2 with your commit rule in every leader: no committed entry may"
                 " ever be overwritten."))
def design_figure8(ctx: Ctx) -> None:
    _design_figure8(ctx)


@graded("lab04.commit_rule", points=4, seeds=FAMILY_SEEDS, name="figure8_family", time_limit_s=300,
        about=N_("Seeded schedules of Figure 8's family on dledger-0.3.1.2 (leaders write to a minority and crash,"
                 " members restart): every invariant at every event; then, healed, a write commits within 8 s, and"
                 " another with two of five members down."))
def design_figure8_family(ctx: Ctx) -> None:
    c = ctx.keep(Cluster.dledger(nodes=5, seed=ctx.seed, profile=DESIGN_PROFILE, config=SHORT_TIMERS,
                                 checkers=[DLedgerViolations()], raise_on_violation=False, latency="uniform:1:3"))
    try:
        report = run_figure8_family(c, rounds=FAMILY_ROUNDS)
    except RocketlabError as e:
        raise AssertionError(_("the group could not commit its first write: {error}").format(error=e)) from None
    no_violations(c)
    expect(report.final_committed, _("once the group healed, or with three of five members up, a write did not "
                                     "commit within 8 s: your rule must still commit once a majority is up"))
    expect(not report.missing, _("acknowledged writes missing from a member's log: {missing}").format(
        missing=report.missing))


@graded("lab04.commit_rule", points=2, seeds=range(3), name="majority_up",
        about=N_("Liveness: with two of five members down, a write commits within 2 s, also right after a leader "
                 "that held uncommitted entries of its term crashed."))
def design_majority_up(ctx: Ctx) -> None:
    c = ctx.keep(Cluster.dledger(nodes=5, seed=ctx.seed, profile=DESIGN_PROFILE, config=SHORT_TIMERS,
                                 checkers=[DLedgerViolations()], raise_on_violation=False, latency="uniform:1:3"))
    leader = wait_settled(c, timeout_ms=5_000)
    try:
        commit(c, b"first", timeout_ms=5_000)
    except RocketlabError:
        raise AssertionError(_("five members up, a write did not commit within 5 s")) from None
    mate = random.Random(ctx.seed).choice([n for n in c.node_ids if n != leader])
    c.partition([leader, mate], [n for n in c.node_ids if n not in (leader, mate)])
    for i in range(3):
        append_nowait(c, leader, b"minority-%d" % i)
    c.run_for(100)
    c.crash(leader)
    c.heal()
    other = next(n for n in c.node_ids if n not in (leader, mate))
    c.crash(other)
    start = c.now_ms
    try:
        wait_settled(c, timeout_ms=5_000)
        commit(c, b"majority", timeout_ms=2_000)
    except RocketlabError:
        raise AssertionError(_("{leader} and {other} down (three of five up, {mate} holding {leader}'s uncommitted "
                               "entries): no write committed within 2 s of a new leader ({ms} ms)").format(
            leader=leader, other=other, mate=mate, ms=c.now_ms - start)) from None
    no_violations(c)

