"""A learner's complete lab 03 (written from the exercise docstrings): full marks expected."""

from __future__ import annotations

from rocketlab.dledger.elector_decisions import (
    HeartBeatDecision,
    HeartBeatEffect,
    NextVote,
    VoteDecision,
    VoteEffect,
    VoteRoundDecision,
    is_quorum,
)
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteResult


def handle_vote(view, request, is_self):
    t = view.curr_term
    if request.leader_id not in view.peers:
        return VoteDecision(1, VoteResult.REJECT_UNKNOWN_LEADER, t)
    if not is_self and request.leader_id == view.self_id:
        return VoteDecision(2, VoteResult.REJECT_UNEXPECTED_LEADER, t)
    if request.ledger_end_term < view.ledger_end_term:
        return VoteDecision(3, VoteResult.REJECT_EXPIRED_LEDGER_TERM, t)
    if request.ledger_end_term == view.ledger_end_term and request.ledger_end_index < view.ledger_end_index:
        return VoteDecision(4, VoteResult.REJECT_SMALL_LEDGER_END_INDEX, t)
    if request.term < t:
        return VoteDecision(5, VoteResult.REJECT_EXPIRED_VOTE_TERM, t)
    if request.term > t:
        return VoteDecision(7, VoteResult.REJECT_TERM_NOT_READY, t, VoteEffect.STEP_DOWN)
    if view.curr_vote_for is not None and view.curr_vote_for != request.leader_id:
        if view.leader_id is not None:
            return VoteDecision(6, VoteResult.REJECT_ALREADY_HAS_LEADER, t)
        return VoteDecision(6, VoteResult.REJECT_ALREADY_VOTED, t)
    if request.term < view.ledger_end_term:
        return VoteDecision(8, VoteResult.REJECT_TERM_SMALL_THAN_LEDGER, view.ledger_end_term)
    if (not is_self and view.taking_leadership and request.ledger_end_term == view.ledger_end_term
            and view.ledger_end_index >= request.ledger_end_index):
        return VoteDecision(9, VoteResult.REJECT_TAKING_LEADERSHIP, t)
    return VoteDecision(10, VoteResult.ACCEPT, t, VoteEffect.GRANT)


def parse_vote_result(tally, term, peer_size):
    if tally.known_max_term_in_group > term:
        return VoteRoundDecision(1, ParseResult.WAIT_TO_VOTE_NEXT, NextVote.DEFAULT)
    if tally.already_has_leader:
        return VoteRoundDecision(2, ParseResult.WAIT_TO_REVOTE, NextVote.PLUS_LEAK)
    if not is_quorum(tally.valid_num, peer_size):
        return VoteRoundDecision(3, ParseResult.WAIT_TO_REVOTE, NextVote.DEFAULT)
    if not is_quorum(tally.valid_num - tally.bigger_ledger_num, peer_size):
        return VoteRoundDecision(4, ParseResult.WAIT_TO_REVOTE, NextVote.PLUS_MAX_VOTE_INTERVAL)
    if is_quorum(tally.accepted_num, peer_size):
        return VoteRoundDecision(5, ParseResult.PASSED, NextVote.UNCHANGED)
    if is_quorum(tally.accepted_num + tally.not_ready_term_num, peer_size):
        return VoteRoundDecision(6, ParseResult.REVOTE_IMMEDIATELY, NextVote.UNCHANGED)
    return VoteRoundDecision(7, ParseResult.WAIT_TO_VOTE_NEXT, NextVote.DEFAULT)


def handle_heart_beat(self_id, peers, curr_term, leader_id, request_term, request_leader_id):
    """The planted handleHeartBeat, fixed: rows 4 and 6 were merged, so a member without a leader refreshed
    its timer but never became the sender's follower."""
    if request_leader_id not in peers:
        return HeartBeatDecision(1, DLedgerResponseCode.UNKNOWN_MEMBER, curr_term)
    if request_leader_id == self_id:
        return HeartBeatDecision(2, DLedgerResponseCode.UNEXPECTED_MEMBER, curr_term)
    if request_term < curr_term:
        return HeartBeatDecision(3, DLedgerResponseCode.EXPIRED_TERM, curr_term)
    if request_term == curr_term:
        if request_leader_id == leader_id:
            return HeartBeatDecision(4, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.REFRESH)
        if leader_id is None:  # the fix: a member without a leader follows the heartbeat's sender
            return HeartBeatDecision(6, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.BECOME_FOLLOWER)
        return HeartBeatDecision(8, DLedgerResponseCode.INCONSISTENT_LEADER, -1)
    return HeartBeatDecision(9, DLedgerResponseCode.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN)
