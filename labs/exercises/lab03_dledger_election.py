"""Lab 03 exercises: DLedger's leader election.

Edit the bodies below, then check them from the notebook (``check("lab03.handle_vote")``) or from a
shell (``rocketlab grade lab03``). The grader plugs your code into every member's real
DLedgerLeaderElector and runs groups through crashes, partitions and lossy networks for many seeds,
judged by the invariant checkers (one leader per term, committed entries never lost). Keep the names
and signatures; you may add helpers.
"""

from __future__ import annotations

from rocketlab.dledger.elector_decisions import (  # noqa: F401  (yours to use)
    HeartBeatDecision,
    HeartBeatEffect,
    NextVote,
    VoteDecision,
    VoteEffect,
    VoteRoundDecision,
    VoteTally,
    VoteView,
    is_quorum,
)
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteRequest, VoteResult  # noqa: F401


def handle_vote(view: VoteView, request: VoteRequest, is_self: bool) -> VoteDecision:
    """``DLedgerLeaderElector.handleVote`` (DLedger 0.2.0+): the voter's answer to a VoteRequest.

    ``view`` is the voter (its id, peers, ``curr_term``, ``curr_vote_for``, ``leader_id``, ledger end
    index and term, ``taking_leadership``); ``request`` carries the candidate's ``leader_id``, ``term``,
    ``ledger_end_index`` and ``ledger_end_term``; ``is_self`` is True when a candidate votes for itself.
    Return ``VoteDecision(check, result, term, effect)``: the number of the check that decided (1-10),
    the VoteResult, the term the response carries (``view.curr_term`` except for check 8) and the effect.
    The checks, first match wins:

    1. candidate not among the peers: REJECT_UNKNOWN_LEADER
    2. not ``is_self`` and the candidate is this voter: REJECT_UNEXPECTED_LEADER
    3. candidate's ledger end term < ours: REJECT_EXPIRED_LEDGER_TERM
    4. same ledger end term, candidate's ledger end index < ours: REJECT_SMALL_LEDGER_END_INDEX
    5. request term < our term: REJECT_EXPIRED_VOTE_TERM
    6. same term and we already voted for someone else: REJECT_ALREADY_HAS_LEADER if we know a leader,
       else REJECT_ALREADY_VOTED
    7. request term > our term: REJECT_TERM_NOT_READY, effect STEP_DOWN (we become a candidate with the
       request's term in mind, ``knownMaxTermInGroup``; on our next tick we move to that term
       (``nextTerm``) without starting a vote round, so we can grant the candidate's re-vote ~10 ms later)
    8. request term < our ledger end term: REJECT_TERM_SMALL_THAN_LEDGER, answering with our ledger end term
    9. not ``is_self``, we are taking leadership, same ledger end term and our ledger end index >= the
       candidate's: REJECT_TAKING_LEADERSHIP
    10. otherwise ACCEPT, effect GRANT (the elector persists the vote before answering)
    """
    raise NotImplementedError("lab03.handle_vote")


def parse_vote_result(tally: VoteTally, term: int, peer_size: int) -> VoteRoundDecision:
    """The candidate's verdict on one vote round (``DLedgerLeaderElector.maintainAsCandidate``).

    ``tally`` counts the answers: ``all_num``, ``valid_num`` (answers other than UNKNOWN),
    ``accepted_num``, ``not_ready_term_num``, ``bigger_ledger_num``, ``already_has_leader`` and
    ``known_max_term_in_group``. A quorum of ``n`` is ``is_quorum(n, peer_size)`` (more than half).
    Return ``VoteRoundDecision(rule, result, next_vote)``; first matching rule wins:

    1. ``known_max_term_in_group > term``: WAIT_TO_VOTE_NEXT, NextVote.DEFAULT (the elector then becomes
       a candidate at that term)
    2. ``already_has_leader``: WAIT_TO_REVOTE, NextVote.PLUS_LEAK
    3. no quorum of valid answers: WAIT_TO_REVOTE, NextVote.DEFAULT
    4. no quorum of valid answers once those with a bigger ledger are taken away: WAIT_TO_REVOTE,
       NextVote.PLUS_MAX_VOTE_INTERVAL
    5. a quorum accepted: PASSED, NextVote.UNCHANGED (the candidate becomes leader)
    6. a quorum of accepted plus TERM_NOT_READY answers: REVOTE_IMMEDIATELY, NextVote.UNCHANGED
    7. otherwise WAIT_TO_VOTE_NEXT, NextVote.DEFAULT
    """
    raise NotImplementedError("lab03.parse_vote_result")


def handle_heart_beat(self_id: str, peers: frozenset[str], curr_term: int, leader_id: str | None,
                      request_term: int, request_leader_id: str | None) -> HeartBeatDecision:
    """Find the bug: DLedgerLeaderElector.handleHeartBeat as a colleague wrote it.

    A member answers each heartbeat of ``request_leader_id`` (for ``request_term``) by its own state:
    ``self_id``, ``peers``, ``curr_term`` and the ``leader_id`` it follows (None: none yet). Return
    ``HeartBeatDecision(row, code, term, effect)``. Every member runs this function, and
    ``check("lab03.handle_heart_beat")`` fails with a seed and a replay line: open that history in the
    viewer, find the moment the group goes wrong, and step back to the heartbeats before it. The fault
    is in this function; fix it where it is (a small change: the grader also compares every decision
    with DLedger's own).
    """
    if request_leader_id not in peers:
        return HeartBeatDecision(1, DLedgerResponseCode.UNKNOWN_MEMBER, curr_term)
    if request_leader_id == self_id:
        return HeartBeatDecision(2, DLedgerResponseCode.UNEXPECTED_MEMBER, curr_term)
    if request_term < curr_term:
        return HeartBeatDecision(3, DLedgerResponseCode.EXPIRED_TERM, curr_term)
    if request_term == curr_term:
        if request_leader_id == leader_id or leader_id is None:
            return HeartBeatDecision(4, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.REFRESH)
        return HeartBeatDecision(8, DLedgerResponseCode.INCONSISTENT_LEADER, -1)
    return HeartBeatDecision(9, DLedgerResponseCode.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN)
