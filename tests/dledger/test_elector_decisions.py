"""Table tests for the elector's pure decision functions (digest sections 3.2, 3.4, 3.5, 3.6, 3.8)."""

from __future__ import annotations

import pytest

from rocketlab.dledger.elector_decisions import (
    HEART_BEAT_ROWS,
    VOTE_CHECKS,
    VOTE_ROUND_RULES,
    HeartBeatEffect,
    HeartBeatOutcome,
    HeartBeatTally,
    NextVote,
    VoteEffect,
    VoteTally,
    VoteView,
    check_take_leadership,
    decide_heart_beat,
    decide_vote,
    evaluate_heart_beats,
    is_quorum,
    parse_vote_result,
)
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteRequest, VoteResponse, VoteResult

R, Code, P = VoteResult, DLedgerResponseCode, ParseResult
PEERS = frozenset({"n0", "n1", "n2"})


def view(**changes) -> VoteView:
    """Voter n0 at term 5, no vote, no leader, ledger end 10/4."""
    base = dict(self_id="n0", peers=PEERS, curr_term=5, curr_vote_for=None, leader_id=None,
                ledger_end_index=10, ledger_end_term=4, taking_leadership=False)
    return VoteView(**(base | changes))


def vote(**changes) -> VoteRequest:
    """Candidate n1 asking for term 5 with ledger end 10/4."""
    base = dict(leader_id="n1", term=5, ledger_end_index=10, ledger_end_term=4)
    return VoteRequest(**(base | changes))


# (case, voter, request, is_self, expected check, result, response term, effect)
VOTE_TABLE = [
    ("unknown candidate", view(), vote(leader_id="n9"), False, 1, R.REJECT_UNKNOWN_LEADER, 5, VoteEffect.NONE),
    ("remote claims my id", view(), vote(leader_id="n0"), False, 2, R.REJECT_UNEXPECTED_LEADER, 5, VoteEffect.NONE),
    ("self vote passes check 2", view(), vote(leader_id="n0"), True, 10, R.ACCEPT, 5, VoteEffect.GRANT),
    ("stale ledger term", view(), vote(ledger_end_term=3, ledger_end_index=99), False, 3,
     R.REJECT_EXPIRED_LEDGER_TERM, 5, VoteEffect.NONE),
    ("short ledger", view(), vote(ledger_end_index=9), False, 4, R.REJECT_SMALL_LEDGER_END_INDEX, 5,
     VoteEffect.NONE),
    ("stale log beats a higher term (0.2.0+ order)", view(), vote(term=9, ledger_end_index=9), False, 4,
     R.REJECT_SMALL_LEDGER_END_INDEX, 5, VoteEffect.NONE),
    ("expired vote term", view(), vote(term=4), False, 5, R.REJECT_EXPIRED_VOTE_TERM, 5, VoteEffect.NONE),
    ("voted for another, leader known", view(curr_vote_for="n2", leader_id="n2"), vote(), False, 6,
     R.REJECT_ALREADY_HAS_LEADER, 5, VoteEffect.NONE),
    ("voted for another, no leader", view(curr_vote_for="n2"), vote(), False, 6, R.REJECT_ALREADY_VOTED, 5,
     VoteEffect.NONE),
    ("repeat vote for the same candidate", view(curr_vote_for="n1"), vote(), False, 10, R.ACCEPT, 5,
     VoteEffect.GRANT),
    ("higher term: step down, not ready", view(), vote(term=6), False, 7, R.REJECT_TERM_NOT_READY, 5,
     VoteEffect.STEP_DOWN),
    ("term below my ledger term", view(curr_term=3), vote(term=3, ledger_end_term=4), False, 8,
     R.REJECT_TERM_SMALL_THAN_LEDGER, 4, VoteEffect.NONE),
    ("taking leadership, equal log", view(taking_leadership=True), vote(), False, 9, R.REJECT_TAKING_LEADERSHIP, 5,
     VoteEffect.NONE),
    ("taking leadership, longer rival", view(taking_leadership=True), vote(ledger_end_index=11), False, 10,
     R.ACCEPT, 5, VoteEffect.GRANT),
    ("taking leadership, own vote", view(taking_leadership=True), vote(leader_id="n0"), True, 10, R.ACCEPT, 5,
     VoteEffect.GRANT),
    ("fresh voter grants", view(), vote(), False, 10, R.ACCEPT, 5, VoteEffect.GRANT),
]


@pytest.mark.parametrize("case, voter, request_, is_self, check, result, term, effect", VOTE_TABLE,
                         ids=[row[0] for row in VOTE_TABLE])
def test_handle_vote_check_order(case, voter, request_, is_self, check, result, term, effect):
    """handleVote, check N of 10 (0.2.0+ order: leader, self, ledger term, ledger index, term, vote, ...)."""
    d = decide_vote(voter, request_, is_self)
    assert (d.check, d.result, d.term, d.effect) == (check, result, term, effect)


def test_the_vote_checks_table_numbers_each_answer_as_decide_vote_does():
    """VOTE_CHECKS (the viewer's why lines, the lab's table) names every VoteResult decide_vote answers with,
    under the check number it returns."""
    seen = {}
    for _case, voter, request_, is_self, *_ in VOTE_TABLE:
        d = decide_vote(voter, request_, is_self)
        seen[d.result.name] = d.check
    assert seen == {result: check for result, (check, _) in VOTE_CHECKS.items()}
    assert set(VOTE_CHECKS) == {r.name for r in VoteResult} - {"UNKNOWN"}


HB_TABLE = [
    ("leader not a member", 5, "n1", 5, "n9", 1, Code.UNKNOWN_MEMBER, 5, HeartBeatEffect.NONE),
    ("leader is me", 5, "n1", 5, "n0", 2, Code.UNEXPECTED_MEMBER, 5, HeartBeatEffect.NONE),
    ("expired term", 5, "n1", 4, "n1", 3, Code.EXPIRED_TERM, 5, HeartBeatEffect.NONE),
    ("same term same leader", 5, "n1", 5, "n1", 4, Code.SUCCESS, -1, HeartBeatEffect.REFRESH),
    ("same term, no leader yet", 5, None, 5, "n1", 6, Code.SUCCESS, -1, HeartBeatEffect.BECOME_FOLLOWER),
    ("same term, other leader", 5, "n2", 5, "n1", 8, Code.INCONSISTENT_LEADER, -1, HeartBeatEffect.NONE),
    ("higher term", 5, "n1", 6, "n1", 9, Code.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN),
]


@pytest.mark.parametrize("case, my_term, my_leader, term, leader, row, code, resp_term, effect", HB_TABLE,
                         ids=[row[0] for row in HB_TABLE])
def test_handle_heart_beat_table(case, my_term, my_leader, term, leader, row, code, resp_term, effect):
    """handleHeartBeat, row N of the table in digest 3.6."""
    d = decide_heart_beat("n0", PEERS, my_term, my_leader, term, leader)
    assert (d.row, d.code, d.term, d.effect) == (row, code, resp_term, effect)


def hb(succ=1, not_ready=0, max_term=-1, inconsistent=False, all_num=3) -> HeartBeatTally:
    return HeartBeatTally(all_num=all_num, succ_num=succ, not_ready_num=not_ready, max_term=max_term,
                          inconsist_leader=inconsistent)


HB_ROUND = [
    ("quorum of success", hb(succ=2), False, False, 1, HeartBeatOutcome.SUCCESS),
    ("success + not ready: resend", hb(succ=1, not_ready=1), True, False, 2, HeartBeatOutcome.RESEND),
    ("bigger term", hb(max_term=9), False, False, 3, HeartBeatOutcome.STEP_DOWN_BIGGER_TERM),
    ("inconsistent leader", hb(inconsistent=True), True, False, 4, HeartBeatOutcome.STEP_DOWN_INCONSISTENT_LEADER),
    ("leak exceeded", hb(), True, False, 5, HeartBeatOutcome.STEP_DOWN_LEAK),
    ("no quorum within the leak", hb(), False, False, 6, HeartBeatOutcome.KEEP),
    ("#247 0.3.1.2: quorum hides the bigger term", hb(succ=2, max_term=9), False, False, 1, HeartBeatOutcome.SUCCESS),
    ("#247 fixed: bigger term first", hb(succ=2, max_term=9), False, True, 0,
     HeartBeatOutcome.STEP_DOWN_BIGGER_TERM),
]


@pytest.mark.parametrize("case, tally, leak, fix247, row, outcome", HB_ROUND, ids=[r[0] for r in HB_ROUND])
def test_heart_beat_round_verdict(case, tally, leak, fix247, row, outcome):
    """sendHeartbeats evaluation (0.3.1.2 rows 1-5; 0.3.2 checks the bigger term first)."""
    assert evaluate_heart_beats(tally, 5, 3, leak, fix247) == (row, outcome)


def test_heart_beat_tally_counts_and_latch():
    t = HeartBeatTally()
    t.add(Code.TERM_NOT_READY, -1)
    assert t.should_release(3)  # SUCCESS(self) + NOT_READY is a quorum of 3
    t = HeartBeatTally()
    t.add(Code.EXPIRED_TERM, 8)
    t.add(Code.NETWORK_ERROR, -1)
    assert (t.max_term, t.all_num, t.succ_num) == (8, 3, 1) and t.should_release(3)
    assert not HeartBeatTally().should_release(5)


def tally(**counts) -> VoteTally:
    return VoteTally(**({"known_max_term_in_group": 5} | counts))


PARSE_TABLE = [
    ("known bigger term", tally(known_max_term_in_group=7, accepted_num=3, valid_num=3), 1, P.WAIT_TO_VOTE_NEXT,
     NextVote.DEFAULT),
    ("already has leader", tally(already_has_leader=True, valid_num=3, accepted_num=2), 2, P.WAIT_TO_REVOTE,
     NextVote.PLUS_LEAK),
    ("no quorum answered", tally(valid_num=1, accepted_num=1), 3, P.WAIT_TO_REVOTE, NextVote.DEFAULT),
    ("stale log", tally(valid_num=3, bigger_ledger_num=2, accepted_num=1), 4, P.WAIT_TO_REVOTE,
     NextVote.PLUS_MAX_VOTE_INTERVAL),
    ("elected", tally(valid_num=2, accepted_num=2), 5, P.PASSED, NextVote.UNCHANGED),
    ("accept + not ready", tally(valid_num=2, accepted_num=1, not_ready_term_num=1), 6, P.REVOTE_IMMEDIATELY,
     NextVote.UNCHANGED),
    ("split vote", tally(valid_num=3, accepted_num=1), 7, P.WAIT_TO_VOTE_NEXT, NextVote.DEFAULT),
]


@pytest.mark.parametrize("case, t, rule, result, next_vote", PARSE_TABLE, ids=[r[0] for r in PARSE_TABLE])
def test_parse_vote_result_table(case, t, rule, result, next_vote):
    """maintainAsCandidate's ParseResult table, rule N (first matching rule wins)."""
    d = parse_vote_result(t, 5, 3)
    assert (d.rule, d.result, d.next_vote) == (rule, result, next_vote)


def test_the_rows_and_rules_tables_cite_what_the_decisions_return():
    """HEART_BEAT_ROWS and VOTE_ROUND_RULES cover every code and rule the decision functions return."""
    rows = {}
    for _case, my_term, my_leader, term, leader, *_ in HB_TABLE:
        d = decide_heart_beat("n0", PEERS, my_term, my_leader, term, leader)
        rows.setdefault(d.code.name, d.row)
    assert rows == {code: row for code, (row, _) in HEART_BEAT_ROWS.items()}
    assert {parse_vote_result(t, 5, 3).rule for _case, t, *_ in PARSE_TABLE} == set(VOTE_ROUND_RULES)


def test_vote_tally_switch():
    t = VoteTally(known_max_term_in_group=5)
    for result, term in [(R.ACCEPT, 5), (R.UNKNOWN, -1), (R.REJECT_EXPIRED_VOTE_TERM, 8),
                         (R.REJECT_TERM_SMALL_THAN_LEDGER, 6), (R.REJECT_SMALL_LEDGER_END_INDEX, 5),
                         (R.REJECT_TERM_NOT_READY, 5), (R.REJECT_ALREADY_VOTED, 5), (R.REJECT_TAKING_LEADERSHIP, 5)]:
        t.add(VoteResponse(vote_result=result, term=term))
    assert (t.all_num, t.valid_num, t.accepted_num, t.known_max_term_in_group) == (8, 7, 1, 8)
    assert (t.bigger_ledger_num, t.not_ready_term_num, t.already_has_leader) == (1, 1, False)
    t.add(VoteResponse(vote_result=R.REJECT_ALREADY_HAS_LEADER))
    assert t.already_has_leader and t.should_release(99)


TAKE_TABLE = [(7, "LEADER", 6, Code.EXPIRED_TERM), (6, "LEADER", 6, Code.SUCCESS),
              (6, "FOLLOWER", 6, Code.TAKE_LEADERSHIP_FAILED), (6, "CANDIDATE", 6, None),
              (5, "FOLLOWER", 6, Code.TAKE_LEADERSHIP_FAILED), (5, "CANDIDATE", 6, Code.INTERNAL_ERROR)]


@pytest.mark.parametrize("term, role, target, code", TAKE_TABLE)
def test_take_leadership_task_check(term, role, target, code):
    """TakeLeadershipTask.check: the transferee's answer, or None to keep waiting."""
    assert check_take_leadership(term, role, target) is code


def test_is_quorum():
    assert [n for n in range(6) if is_quorum(n, 5)] == [3, 4, 5]
