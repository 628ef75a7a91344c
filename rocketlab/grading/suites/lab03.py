"""Lab 03's graded tests: ``handle_vote`` and ``parse_vote_result``, in tables and in live elections, and
``handle_heart_beat`` (find the bug: handleHeartBeat with a planted fault, graded on the fix).

Scenarios run on the ``dledger-0.3.2`` profile (the elector that calls both functions) with MIT-style
short timers. They judge what the election owns: one leader per term (every event), a leader within a
time budget and with a bounded number of VoteRequests (MIT's TestCount), no leader without a majority.
Log safety under churn is lab 04's business (DLedger's own commit rule can lose entries there).
"""

from __future__ import annotations

import itertools
from typing import Any

from rocketlab.dledger.elector_decisions import (
    VoteTally,
    VoteView,
    decide_heart_beat,
    decide_vote,
    parse_vote_result,
)
from rocketlab.dledger.invariants import election_safety
from rocketlab.dledger.protocol import VoteRequest
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import Calls, compare_table, expect, fields_of
from rocketlab.i18n import N_, _
from rocketlab.scenarios.dledger import run_churn
from rocketlab.scenarios.dledger_group import SHORT_TIMERS, commit, settled_leader
from rocketlab.sim.cluster import Cluster

PROFILE = "dledger-0.3.2"
CHECK_REASONS = {
    1: N_("the candidate is not one of the peers"),
    2: N_("a vote request from this voter's own id that is not a self-vote"),
    3: N_("the candidate's last entry has an older term than the voter's"),
    4: N_("same last term, but the candidate's log is shorter"),
    5: N_("the request's term is older than the voter's"),
    6: N_("same term, and the voter already voted for someone else"),
    7: N_("the request's term is newer: the voter steps down and is not ready to vote yet"),
    8: N_("the request's term is older than the voter's last log term"),
    9: N_("the voter is taking leadership"),
    10: N_("every check passed: grant the vote"),
}
RULE_REASONS = {
    1: N_("a voter knows a bigger term"),
    2: N_("a voter already has a leader"),
    3: N_("fewer than a quorum answered validly"),
    4: N_("without the voters whose ledger is bigger there is no quorum"),
    5: N_("a quorum accepted"),
    6: N_("accepted plus TERM_NOT_READY make a quorum: vote again at once"),
    7: N_("nothing else applies"),
}


# ---------------------------------------------------------------------- handle_vote: tables
def vote_cases(*, order_only: bool = False) -> list[tuple[VoteView, VoteRequest, bool]]:
    """Voter n0 of n0..n2 in every relevant state, candidates n1, n0 (self) and an unknown x9."""
    cases = []
    for cand, is_self in (("n1", False), ("n0", True), ("n0", False), ("x9", False)):
        for curr_term, vote_for, leader, end_term, end_index, taking in itertools.product(
                (3,), (None, "n1", "n2"), (None, "n2"), (1, 2, 4), (4,), (False, True)):
            if order_only and (vote_for, leader, taking) != (None, None, False):
                continue
            view = VoteView("n0", frozenset({"n0", "n1", "n2"}), curr_term, vote_for, leader, end_index, end_term,
                            taking)
            for term, r_end_term, r_end_index in itertools.product((1, 2, 3, 4), (0, 1, 2, 3, 4), (3, 4, 5)):
                cases.append((view, VoteRequest(group="g", remote_id="n0", leader_id=cand, term=term,
                                                ledger_end_index=r_end_index, ledger_end_term=r_end_term), is_self))
    return cases


def _describe_vote(case: tuple[VoteView, VoteRequest, bool]) -> str:
    v, r, is_self = case
    return _("handle_vote(voter n0: term {term}, voted for {vote_for}, leader {leader}, ledger end {end_index}@term "
             "{end_term}, taking leadership {taking}; candidate {candidate}: term {r_term}, ledger end "
             "{r_end_index}@term {r_end_term}; is_self={is_self})").format(
        term=v.curr_term, vote_for=v.curr_vote_for, leader=v.leader_id, end_index=v.ledger_end_index,
        end_term=v.ledger_end_term, taking=v.taking_leadership, candidate=r.leader_id, r_term=r.term,
        r_end_index=r.ledger_end_index, r_end_term=r.ledger_end_term, is_self=is_self)


VOTE_FIELDS = ("check", "result", "term", "effect")


def _vote_table(ctx: Ctx, cases: list[Any]) -> None:
    compare_table(cases, Calls(ctx.impl, post=lambda got: fields_of(got, VOTE_FIELDS)),
                  lambda c: fields_of(decide_vote(*c), VOTE_FIELDS), _describe_vote,
                  why=lambda c, want: _("check {n}: {reason}").format(n=want[0], reason=_(CHECK_REASONS[want[0]])))


@graded("lab03.handle_vote", points=2,
        about=N_("Checks 3-5 in DLedger 0.2.0+'s order: a stale log is refused before the terms are compared."))
def log_freshness_before_term(ctx: Ctx) -> None:
    _vote_table(ctx, vote_cases(order_only=True))


@graded("lab03.handle_vote", points=3,
        about=N_("All ten checks, every voter state: the answer, its check number, the term and the effect."))
def decision_table(ctx: Ctx) -> None:
    _vote_table(ctx, vote_cases())


def boundary_vote_cases() -> list[tuple[VoteView, VoteRequest, bool]]:
    """Every term-like value of voter and candidate drawn from {2, 3, 4} (so each of handleVote's term
    comparisons meets equal, smaller and bigger values: the voter's term, its last log term, the
    request's term and the candidate's last log term), log ends 3, 4 and 5, every vote and leader state."""
    cases = []
    peers = frozenset({"n0", "n1", "n2", "n3"})
    for cand, is_self in (("n1", False), ("n0", True)):
        for curr_term, vote_for, leader, end_term, taking in itertools.product(
                (2, 3), (None, "n1", "n2"), (None, "n2"), (2, 3, 4), (False, True)):
            view = VoteView("n0", peers, curr_term, vote_for, leader, 4, end_term, taking)
            for term, r_end_term, r_end_index in itertools.product((2, 3, 4), (2, 3, 4), (3, 4, 5)):
                cases.append((view, VoteRequest(group="g", remote_id="n0", leader_id=cand, term=term,
                                                ledger_end_index=r_end_index, ledger_end_term=r_end_term), is_self))
    return cases


@graded("lab03.handle_vote", points=2,
        about=N_("Equal terms at every boundary of handleVote's checks: the request's term equal to, one below and"
                 " one above the voter's term and the voter's last log term, with equal and unequal log ends."))
def term_boundaries(ctx: Ctx) -> None:
    _vote_table(ctx, boundary_vote_cases())


# ---------------------------------------------------------------------- parse_vote_result: table
def tally_cases() -> list[tuple[VoteTally, int, int]]:
    cases = []
    for peers in (3, 5):
        for all_num, valid, accepted, not_ready, bigger, has_leader, known in itertools.product(
                range(peers + 1), range(peers + 1), range(peers + 1), range(3), range(3), (False, True), (5, 6)):
            if valid > all_num or accepted + not_ready + bigger > valid:
                continue
            tally = VoteTally(known_max_term_in_group=known, all_num=all_num, valid_num=valid, accepted_num=accepted,
                              not_ready_term_num=not_ready, bigger_ledger_num=bigger, already_has_leader=has_leader)
            cases.append((tally, 5, peers))
    return cases


ROUND_FIELDS = ("rule", "result", "next_vote")


@graded("lab03.parse_vote_result", points=3,
        about=N_("The ParseResult table: every tally of a 3- and a 5-member round, rule, result and next vote "
                 "time."))
def parse_result_table(ctx: Ctx) -> None:
    compare_table(tally_cases(), Calls(ctx.impl, post=lambda got: fields_of(got, ROUND_FIELDS)),
                  lambda c: fields_of(parse_vote_result(*c), ROUND_FIELDS),
                  lambda c: f"parse_vote_result({c[0]}, term={c[1]}, peer_size={c[2]})",
                  why=lambda c, want: _("rule {n}: {reason}").format(n=want[0], reason=_(RULE_REASONS[want[0]])))


def any_tally_cases() -> list[tuple[VoteTally, int, int]]:
    """Every consistent tally of groups of 1 to 6 members (even sizes included: half of 2, 4 or 6 is no
    quorum), with a bigger known term or not."""
    cases = []
    for peers in range(1, 7):
        for valid, accepted, not_ready, bigger, has_leader, known in itertools.product(
                range(peers + 1), range(peers + 1), range(peers + 1), range(peers + 1), (False, True), (5, 6)):
            if accepted + not_ready + bigger > valid:
                continue
            tally = VoteTally(known_max_term_in_group=known, all_num=peers, valid_num=valid, accepted_num=accepted,
                              not_ready_term_num=not_ready, bigger_ledger_num=bigger, already_has_leader=has_leader)
            cases.append((tally, 5, peers))
    return cases


@graded("lab03.parse_vote_result", points=2,
        about=N_("Every tally of a round in groups of 1 to 6 members: with 2, 4 or 6 members half is not a quorum."))
def any_tally(ctx: Ctx) -> None:
    compare_table(any_tally_cases(), Calls(ctx.impl, post=lambda got: fields_of(got, ROUND_FIELDS)),
                  lambda c: fields_of(parse_vote_result(*c), ROUND_FIELDS),
                  lambda c: f"parse_vote_result({c[0]}, term={c[1]}, peer_size={c[2]})",
                  why=lambda c, want: _("rule {n}: {reason}").format(n=want[0], reason=_(RULE_REASONS[want[0]])))


# ---------------------------------------------------------------------- live elections
def election_cluster(seed: int, nodes: int = 3, network: str = "reliable") -> Cluster:
    return Cluster.dledger(nodes=nodes, seed=seed, profile=PROFILE, config=SHORT_TIMERS,
                           network=network, latency="uniform:1:3")


def vote_requests(c: Cluster, since_seq: int = -1) -> int:
    return sum(1 for e in c.events if e["kind"] == "msg_send" and e.get("msg") == "VoteRequest"
               and e["seq"] > since_seq)


def check_one_leader_per_term(c: Cluster) -> None:
    found = election_safety(c.events)
    expect(not found, _("two leaders in one term: {detail}").format(detail=found[0].detail) if found else "")


def elections(ctx: Ctx) -> None:
    """MIT's TestInitialElection, TestReElection and TestCount on 3 members."""
    c = ctx.keep(election_cluster(ctx.seed))
    expect(c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=5_000),
           _("no leader that every member follows within 5 s of the start (t={now} ms)").format(now=c.now_ms))
    check_one_leader_per_term(c)
    used = vote_requests(c)
    expect(used <= 30, _("the first election sent {used} VoteRequests; a healthy one needs at most 30").format(
        used=used))
    leader, term = settled_leader(c), c.node(settled_leader(c)).term
    seq = c.events[-1]["seq"]
    c.run_for(2_000)
    expect(settled_leader(c) == leader and c.node(leader).term == term,
           _("with no failure the leadership changed within 2 s (leader {leader} term {term} -> {now}): members "
             "must not start elections against a healthy leader").format(leader=leader, term=term,
                                                                         now=settled_leader(c)))
    expect(vote_requests(c, seq) == 0, _("VoteRequests were sent while a healthy leader was in place"))
    c.crash(leader)
    others = [n for n in c.node_ids if n != leader]
    expect(c.run_until(lambda c: settled_leader(c, others) is not None, timeout_ms=5_000),
           _("no new leader within 5 s of crashing leader {leader}").format(leader=leader))
    second = settled_leader(c, others)
    c.crash(second)
    c.run_for(3_000)
    alone = [n for n in others if n != second]
    expect(all(c.node(n).role != "LEADER" for n in alone),
           _("a member became leader with only itself up (1 of 3 is no majority)"))
    c.restart(leader, second)
    expect(c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=5_000),
           _("no leader within 5 s once all three members were back"))
    check_one_leader_per_term(c)


def churn(ctx: Ctx) -> None:
    """MIT's churn on 5 members over a lossy network: crashes, restarts, partitions, three clients."""
    c = ctx.keep(election_cluster(ctx.seed, nodes=5, network="unreliable"))
    expect(c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=5_000),
           _("no leader within 5 s of the start"))
    run_churn(c, rounds=12, settle_ms=8_000)
    check_one_leader_per_term(c)
    try:
        commit(c, b"after-churn", timeout_ms=8_000)
    except Exception as e:  # RocketlabError: no leader could commit
        raise AssertionError(_("after the churn healed, no leader committed a write within 8 s: {error}").format(
            error=e)) from None


def even_groups(ctx: Ctx) -> None:
    """Groups of 2 and 4 members: one member of 2 alone, or two of 4 cut off from the others, must not
    elect a leader (half is no majority); one leader per term throughout, and a leader once healed."""
    for nodes in (2, 4):
        c = ctx.keep(election_cluster(ctx.seed, nodes=nodes))
        expect(c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=5_000),
               _("{nodes} members: no leader within 5 s of the start").format(nodes=nodes))
        leader = settled_leader(c)
        others = [n for n in c.node_ids if n != leader]
        if nodes == 2:
            c.crash(leader)
            half = others
        else:
            half = others[:2]
            c.partition(half, [leader, others[2]])
        seq = c.events[-1]["seq"]
        c.run_for(3_000)
        risen = sorted({e["node"] for e in c.events if e["seq"] > seq and e["kind"] == "role"
                        and e.get("role") == "LEADER" and e["node"] in half})
        expect(not risen, _("{nodes} members, {half} cut off from the rest: {risen} became leader with {votes} of "
                            "{nodes} votes (a quorum is more than half)").format(
            nodes=nodes, half=" + ".join(half), risen=", ".join(risen), votes=len(half)))
        check_one_leader_per_term(c)
        c.restart(*[n for n in c.node_ids if not c.alive(n)])
        c.heal()
        expect(c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=5_000),
               _("{nodes} members: no leader within 5 s of healing").format(nodes=nodes))
        check_one_leader_per_term(c)


@graded("lab03.parse_vote_result", points=2, seeds=range(3), name="even_groups",
        about=N_("Your parse_vote_result in groups of 2 and 4: no leader from half of the group (one of 2, two of "
                 "4 cut off), one leader per term, a leader again once healed."))
def parse_even_groups(ctx: Ctx) -> None:
    even_groups(ctx)


@graded("lab03.handle_vote", points=3, seeds=range(3), name="elections",
        about=N_("Your handle_vote in every member: a leader within 5 s and at most 30 VoteRequests, no needless "
                 "elections, failover within 5 s, no leader without a majority, one leader per term."))
def handle_vote_elections(ctx: Ctx) -> None:
    elections(ctx)


@graded("lab03.handle_vote", points=2, seeds=range(3), name="churn",
        about=N_("Your handle_vote under MIT-style churn on a lossy network: one leader per term, and writes "
                 "commit again once the faults heal."))
def handle_vote_churn(ctx: Ctx) -> None:
    churn(ctx)


@graded("lab03.parse_vote_result", points=2, seeds=range(3), name="elections",
        about=N_("Your parse_vote_result in every candidate: a leader within 5 s and at most 30 VoteRequests, no "
                 "needless elections, failover within 5 s, no leader without a majority, one leader per term."))
def parse_elections(ctx: Ctx) -> None:
    elections(ctx)


@graded("lab03.parse_vote_result", points=2, seeds=range(3), name="churn",
        about=N_("Your parse_vote_result under MIT-style churn on a lossy network: one leader per term, and writes"
                 " commit again once the faults heal."))
def parse_churn(ctx: Ctx) -> None:
    churn(ctx)


# ---------------------------------------------------------------------- handle_heart_beat: find the bug
def heart_beat_cases() -> list[tuple[str, frozenset[str], int, str | None, int, str | None]]:
    """Follower n0 of n0..n2 at term 3 with no leader, n1 or n2; heartbeats of terms 2-4 from every
    member, n0 itself and a stranger x9."""
    peers = frozenset({"n0", "n1", "n2"})
    return [("n0", peers, 3, leader, term, sender)
            for leader, term, sender in itertools.product((None, "n1", "n2"), (2, 3, 4), ("n0", "n1", "n2", "x9"))]


@graded("lab03.handle_heart_beat", points=3, seeds=range(3), name="elections",
        about=N_("The elections of handle_vote with your handle_heart_beat in every member: a leader every member "
                 "follows within 5 s, no needless elections, failover, one leader per term."))
def heart_beat_elections(ctx: Ctx) -> None:
    elections(ctx)


@graded("lab03.handle_heart_beat", points=2, seeds=range(1), name="churn",
        about=N_("Churn on 5 members over a lossy network with your handle_heart_beat: one leader per term, and "
                 "writes commit again once the faults heal."))
def heart_beat_churn(ctx: Ctx) -> None:
    churn(ctx)


HEART_BEAT_FIELDS = ("row", "code", "term", "effect")


@graded("lab03.handle_heart_beat", points=2,
        about=N_("The fix changes only what was wrong: every decision of DLedger's handleHeartBeat for a follower "
                 "with and without a leader (which decisions differ is for the failing history to show, not this "
                 "table)."))
def heart_beat_fixed_alone(ctx: Ctx) -> None:
    cases = heart_beat_cases()
    wrong = sum(fields_of(ctx.impl(*c), HEART_BEAT_FIELDS) != fields_of(decide_heart_beat(*c), HEART_BEAT_FIELDS)
                for c in cases)
    expect(not wrong, _("{wrong} of {n} heartbeat decisions differ from DLedger's handleHeartBeat: find the moment "
                        "the failing history goes wrong in the viewer, and the heartbeats before it").format(
        wrong=wrong, n=len(cases)))
