"""What labs/03_dledger_election.ipynb claims, checked on the helpers it calls
(rocketlab.labs_support.dledger_election), across seeds."""

from __future__ import annotations

import random

import pytest

from rocketlab.dledger.elector_decisions import VoteEffect, VoteView, decide_vote
from rocketlab.dledger.protocol import VoteRequest, VoteResult
from rocketlab.labs_support import dledger_election as lab
from rocketlab.viz.figures.figure16 import downtime_cdf

PEERS = frozenset({"n0", "n1", "n2"})


def random_case(rng: random.Random) -> tuple[VoteView, VoteRequest, bool]:
    view = VoteView(self_id="n1", peers=PEERS, curr_term=rng.randint(0, 4),
                    curr_vote_for=rng.choice([None, "n0", "n1", "n2"]), leader_id=rng.choice([None, "n0", "n2"]),
                    ledger_end_index=rng.randint(-1, 4), ledger_end_term=rng.randint(-1, 3))
    request = VoteRequest(term=rng.randint(0, 5), leader_id=rng.choice(["n0", "n1", "n2", "n9"]),
                          ledger_end_index=rng.randint(-1, 4), ledger_end_term=rng.randint(-1, 3))
    return view, request, request.leader_id == "n1" and rng.random() < 0.5


def test_release_0_1_order_differs_only_for_a_stale_candidate_with_another_term():
    """0.1 ran the term checks first: the answers differ exactly when 0.2.0+ refuses the candidate's log
    (checks 3/4) while a term check (5-7) would have refused it first, and then 0.1 answers that one."""
    rng = random.Random(3)
    differed = 0
    for i in range(5000):
        view, request, is_self = random_case(rng)
        new, old = decide_vote(view, request, is_self), lab.decide_vote_release_0_1(view, request, is_self)
        if new.result is VoteResult.REJECT_TAKING_LEADERSHIP:
            continue  # check 9 did not exist in 0.1
        term_check_refuses = (request.term != view.curr_term
                              or view.curr_vote_for not in (None, request.leader_id))
        assert (new != old) == (new.check in (3, 4) and term_check_refuses), (i, view, request, new, old)
        if new != old:
            differed += 1
            assert old.check in (5, 6, 7), (i, old)
    assert differed > 100


def test_the_labs_stale_candidate_steps_voters_down_only_under_0_1():
    voter = VoteView(self_id="n1", peers=PEERS, curr_term=5, curr_vote_for="n0", leader_id="n0",
                     ledger_end_index=20, ledger_end_term=5)
    stale = VoteRequest(term=9, leader_id="n2", ledger_end_index=12, ledger_end_term=4)
    assert decide_vote(voter, stale, False).result is VoteResult.REJECT_EXPIRED_LEDGER_TERM
    old = lab.decide_vote_release_0_1(voter, stale, False)
    assert (old.check, old.result, old.effect) == (7, VoteResult.REJECT_TERM_NOT_READY, VoteEffect.STEP_DOWN)


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_without_a_majority_dledger_keeps_its_term(seed: int):
    r = lab.no_majority(seed, for_ms=20_000)
    assert r["leader"] is None and r["terms_after"] == r["terms_before"], r
    assert set(r["rounds_by_rule"]) == {3}, r


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_an_isolated_member_disturbs_raft_but_not_dledger(seed: int):
    d = lab.isolated_member(seed, profile="dledger-0.3.1.2", isolate_ms=10_000)
    assert d["term_while_isolated"] == d["term_before"] and d["elections_after_heal"] == 0, d
    assert d["leader_after_heal"] == d["leader"], d
    r = lab.isolated_member(seed, profile="raft", isolate_ms=10_000)
    assert r["term_while_isolated"] > r["term_before"] + 10 and r["elections_after_heal"] >= 1, r
    assert r["term_after_heal"] > r["term_while_isolated"], r


@pytest.mark.parametrize("seed", [1, 7])
def test_heartbeat_leak_and_step_down(seed: int):
    leak = lab.heart_beat_leak(seed)
    assert leak["leak_ms"] == 6_000
    assert all(6_000 <= s <= 6_000 + 10 for s in leak["followers"].silence_ms), leak["followers"]
    assert leak["crash_ms"] - max(leak["followers"].last_heartbeat_ms) < 1_000  # crashed 1 s after a send
    assert leak["failover_ms"] > 5_000 - 50, leak
    cut = lab.leader_cut_off(seed, lead_for_ms=3_000)
    assert cut["role_now"] == "CANDIDATE" and cut["term_now"] == cut["term_before"], cut
    assert 4_000 <= cut["stepped_down_after_ms"] <= 6_000 + 2_000, cut
    assert lab.leader_cut_off(seed, lead_for_ms=0)["stepped_down_after_ms"] <= 2_000  # lastSucc = -1


@pytest.mark.parametrize("seed", [1, 7])
def test_transfer_and_preferred_leader(seed: int):
    tr = lab.transfer(seed)
    assert tr["leader_now"] == tr["to"] and tr["term_now"] == tr["term_before"] + 1, tr
    pref = lab.preferred_leader(seed, "n2")
    assert pref["leader_now"] == "n2", pref


def test_first_elections_start_with_a_split_vote_and_wait_the_smallest_draw():
    starts, waits = lab.first_elections(range(1, 9))
    assert (starts.split_rounds >= 1).all() and (starts.term >= 1).all()
    winning = waits[waits.rule == 7].wait_ms
    assert winning.between(300, 1_000 + 10).all(), winning
    assert (waits[waits.rule == 6].wait_ms <= 20).all()


def test_vote_tables_and_votes_by_term():
    assert list(lab.vote_checks_table().index) == [1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10]
    assert list(lab.vote_round_rules_table().index) == [1, 2, 3, 4, 5, 6, 7]
    c = lab.group(7)
    c.run_for(2_000)
    table = lab.votes_by_term(c.events)
    elected = table[table.elected]
    assert list(elected.candidate) == [c.leader()]
    assert len(elected["granted by"].iloc[0].split(", ")) >= 3
    assert {5, 6, 7} <= set(lab.rules_seen(c.events).rule)  # split, NOT_READY's re-vote, passed
    c.close()


def test_downtime_cdf_draws_one_step_curve_per_group_and_dots_the_censored():
    import pandas as pd

    fast = pd.DataFrame({"downtime_ms": [30, 10, 20, 60000], "elected": [True, True, True, False]})
    never = pd.DataFrame({"downtime_ms": [60000, 60000], "elected": [False, False]})
    fig = downtime_cdf([("fast", fast), ("empty", fast.iloc[:0]), ("never", never)], log_x=True,
                           title="t", floor_ms=75)
    names = [t.name for t in fig.data]
    assert names == ["fast (4)", "fast: 1 without a leader", "never (2)", "never: 2 without a leader"]
    steps = fig.data[0]
    assert list(steps.x) == [10, 10, 20, 30] and list(steps.y) == [0.0, 0.25, 0.5, 0.75]
    assert list(fig.data[1].x) == [30, 60000] and list(fig.data[1].y) == [0.75, 0.75]
    assert list(fig.data[3].x) == [75, 60000] and list(fig.data[3].y) == [0.0, 0.0]
    assert fig.layout.xaxis.type == "log"
    rows = pd.concat([fast.assign(lo=150, hi=155), never.assign(lo=150, hi=150)])
    same = lab.figure16_cdf(rows, [(150, 155), (150, 150)], log_x=False, title="t")
    assert [t.name for t in same.data] == ["150-155 ms (4)", "150-155 ms: 1 without a leader", "150-150 ms (2)",
                                           "150-150 ms: 2 without a leader"]
    assert list(same.data[3].x) == [75, 60000]
