"""The DLedgerLeaderElector's decision tables as pure functions (no state, no clock, no I/O).

Each function returns the decision *and* which row/check of the Java code produced it, so tests and
notebooks can cite "handleVote, check 4" and the trace can show why something happened.

* :func:`decide_vote` - ``handleVote``'s ten checks in their 0.2.0+ order (log freshness before term).
* :func:`decide_heart_beat` - ``handleHeartBeat``'s rows.
* :class:`HeartBeatTally` + :func:`evaluate_heart_beats` - the leader's verdict on one heartbeat round.
* :class:`VoteTally` + :func:`parse_vote_result` - the candidate's ParseResult table and next-vote time.
* :func:`check_take_leadership` - ``TakeLeadershipTask.check``.

Beside each decision function, its table in words (:data:`VOTE_CHECKS`, :data:`HEART_BEAT_ROWS`,
:data:`VOTE_ROUND_RULES`): the one place the numbers are explained, read by the cluster viewer's "why"
lines and the lab's tables. Their texts are English, marked ``N_()`` for the message catalogue; whoever shows
one translates it with ``rocketlab.i18n._`` (the keys and numbers are Java's and stay).

Java file: ``DLedgerLeaderElector.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteRequest, VoteResponse, VoteResult
from rocketlab.i18n import N_

Code = DLedgerResponseCode


def is_quorum(num: int, peer_size: int) -> bool:
    """``num >= peerSize/2 + 1`` (MemberState.isQuorum)."""
    return num >= peer_size // 2 + 1


# ---------------------------------------------------------------------- handleVote
class VoteEffect(enum.Enum):
    """What the voter does besides answering."""

    NONE = "none"
    STEP_DOWN = "step_down"  # changeRoleToCandidate(request.term); needIncreaseTermImmediately = true
    GRANT = "grant"  # setCurrVoteFor(request.leaderId), persisted before the ACCEPT leaves


@dataclass(frozen=True, slots=True)
class VoteView:
    """What handleVote reads of the voter (under the MemberState lock in Java)."""

    self_id: str
    peers: frozenset[str]
    curr_term: int
    curr_vote_for: str | None
    leader_id: str | None
    ledger_end_index: int
    ledger_end_term: int
    taking_leadership: bool = False


VOTE_CHECKS: dict[str, tuple[int, str]] = {
    "REJECT_UNKNOWN_LEADER": (1, N_("the candidate is not a member of this group")),
    "REJECT_UNEXPECTED_LEADER": (2, N_("a request naming this voter as candidate came from elsewhere")),
    "REJECT_EXPIRED_LEDGER_TERM": (3, N_("the candidate's last entry has an older term than the voter's")),
    "REJECT_SMALL_LEDGER_END_INDEX": (4, N_("same last term, but the candidate's log is shorter")),
    "REJECT_EXPIRED_VOTE_TERM": (5, N_("the candidate's term is behind the voter's")),
    "REJECT_ALREADY_HAS_LEADER": (6, N_("the voter voted for another member this term and knows a leader")),
    "REJECT_ALREADY_VOTED": (6, N_("the voter already voted for another member this term")),
    "REJECT_TERM_NOT_READY": (7, N_("the candidate's term is ahead: the voter steps down to candidate in it "
                                    "and answers next round (DLedger never adopts a term from a message)")),
    "REJECT_TERM_SMALL_THAN_LEDGER": (8, N_("the candidate's term is below the voter's last entry term")),
    "REJECT_TAKING_LEADERSHIP": (9, N_("the voter is taking leadership (a transfer) with a log as fresh")),
    "ACCEPT": (10, N_("every check passed: the vote is granted and persisted before the answer leaves")),
}
"""handleVote's checks (0.2.0+ order) by the VoteResult they answer with: ``(check, when)``, the check
number :func:`decide_vote` returns with that result."""


@dataclass(frozen=True, slots=True)
class VoteDecision:
    """handleVote's answer: which check decided, the result, the term to answer with, the side effect."""

    check: int
    result: VoteResult
    term: int
    effect: VoteEffect = VoteEffect.NONE


def decide_vote(view: VoteView, request: VoteRequest, is_self: bool) -> VoteDecision:
    """handleVote, checks 1-10 in order; ``term`` is what the response carries."""
    r, t = VoteResult, view.curr_term
    if request.leader_id not in view.peers:
        return VoteDecision(1, r.REJECT_UNKNOWN_LEADER, t)
    if not is_self and request.leader_id == view.self_id:
        return VoteDecision(2, r.REJECT_UNEXPECTED_LEADER, t)
    if request.ledger_end_term < view.ledger_end_term:
        return VoteDecision(3, r.REJECT_EXPIRED_LEDGER_TERM, t)
    if request.ledger_end_term == view.ledger_end_term and request.ledger_end_index < view.ledger_end_index:
        return VoteDecision(4, r.REJECT_SMALL_LEDGER_END_INDEX, t)
    if request.term < view.curr_term:
        return VoteDecision(5, r.REJECT_EXPIRED_VOTE_TERM, t)
    if request.term == view.curr_term:
        if view.curr_vote_for is not None and view.curr_vote_for != request.leader_id:
            if view.leader_id is not None:
                return VoteDecision(6, r.REJECT_ALREADY_HAS_LEADER, t)
            return VoteDecision(6, r.REJECT_ALREADY_VOTED, t)
    else:
        return VoteDecision(7, r.REJECT_TERM_NOT_READY, t, VoteEffect.STEP_DOWN)
    if request.term < view.ledger_end_term:
        return VoteDecision(8, r.REJECT_TERM_SMALL_THAN_LEDGER, view.ledger_end_term)
    if (not is_self and view.taking_leadership and request.ledger_end_term == view.ledger_end_term
            and view.ledger_end_index >= request.ledger_end_index):
        return VoteDecision(9, r.REJECT_TAKING_LEADERSHIP, t)
    return VoteDecision(10, r.ACCEPT, t, VoteEffect.GRANT)


# ---------------------------------------------------------------------- handleHeartBeat
class HeartBeatEffect(enum.Enum):
    """What the receiver of a heartbeat does besides answering."""

    NONE = "none"
    REFRESH = "refresh"  # lastLeaderHeartBeatTime = now
    BECOME_FOLLOWER = "become_follower"  # changeRoleToFollower(term, leaderId)
    STEP_DOWN = "step_down"  # changeRoleToCandidate(request.term); needIncreaseTermImmediately = true


@dataclass(frozen=True, slots=True)
class HeartBeatDecision:
    """handleHeartBeat's answer: the table row, the response code and term, the side effect."""

    row: int
    code: DLedgerResponseCode
    term: int
    effect: HeartBeatEffect = HeartBeatEffect.NONE


HEART_BEAT_ROWS: dict[str, tuple[int, str]] = {
    "UNKNOWN_MEMBER": (1, N_("the sender is not a member")),
    "UNEXPECTED_MEMBER": (2, N_("the heartbeat names the receiver as leader")),
    "EXPIRED_TERM": (3, N_("the follower is in a bigger term")),
    "SUCCESS": (4, N_("same term, same leader: the follower's election timer is reset")),
    "INCONSISTENT_LEADER": (8, N_("same term, but the follower follows another leader")),
    "TERM_NOT_READY": (9, N_("the leader's term is ahead: the follower steps down to candidate in it")),
}
"""handleHeartBeat's rows by the response code they answer with: ``(row, when)``, as
:func:`decide_heart_beat` numbers them (SUCCESS cited by its usual row 4; row 6 answers SUCCESS too)."""


def decide_heart_beat(self_id: str, peers: frozenset[str], curr_term: int, leader_id: str | None,
                      request_term: int, request_leader_id: str | None) -> HeartBeatDecision:
    """handleHeartBeat's table. Rows 5 and 7 (the locked re-checks of rows 3 and 4) cannot differ from
    the fast path in a single-threaded core, so they never fire here. SUCCESS and the locked-path codes
    carry term -1, as Java's ``new HeartBeatResponse()`` does."""
    if request_leader_id not in peers:
        return HeartBeatDecision(1, Code.UNKNOWN_MEMBER, curr_term)
    if request_leader_id == self_id:
        return HeartBeatDecision(2, Code.UNEXPECTED_MEMBER, curr_term)
    if request_term < curr_term:
        return HeartBeatDecision(3, Code.EXPIRED_TERM, curr_term)
    if request_term == curr_term:
        if request_leader_id == leader_id:
            return HeartBeatDecision(4, Code.SUCCESS, -1, HeartBeatEffect.REFRESH)
        if leader_id is None:
            return HeartBeatDecision(6, Code.SUCCESS, -1, HeartBeatEffect.BECOME_FOLLOWER)
        return HeartBeatDecision(8, Code.INCONSISTENT_LEADER, -1)
    return HeartBeatDecision(9, Code.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN)


# ---------------------------------------------------------------------- heartbeat round (leader)
@dataclass
class HeartBeatTally:
    """The counters of one sendHeartbeats round (self counts as one SUCCESS)."""

    all_num: int = 1
    succ_num: int = 1
    not_ready_num: int = 0
    max_term: int = -1
    inconsist_leader: bool = False

    def add(self, code: DLedgerResponseCode, term: int) -> None:
        if code is Code.SUCCESS:
            self.succ_num += 1
        elif code is Code.EXPIRED_TERM:
            self.max_term = term
        elif code is Code.INCONSISTENT_LEADER:
            self.inconsist_leader = True
        elif code is Code.TERM_NOT_READY:
            self.not_ready_num += 1
        self.all_num += 1

    def should_release(self, peer_size: int) -> bool:
        """The latch opens on a quorum of SUCCESS (+ TERM_NOT_READY), or when every peer answered."""
        return (is_quorum(self.succ_num, peer_size) or is_quorum(self.succ_num + self.not_ready_num, peer_size)
                or self.all_num >= peer_size)


class HeartBeatOutcome(enum.Enum):
    """The leader's verdict after a heartbeat round (what sendHeartbeats does once its latch opens)."""

    SUCCESS = "success"  # lastSuccHeartBeatTime = now
    RESEND = "resend"  # lastSendHeartBeatTime = -1: send again on the next tick
    STEP_DOWN_BIGGER_TERM = "step_down_bigger_term"  # changeRoleToCandidate(maxTerm)
    STEP_DOWN_INCONSISTENT_LEADER = "step_down_inconsistent_leader"  # changeRoleToCandidate(term)
    STEP_DOWN_LEAK = "step_down_leak"  # changeRoleToCandidate(term): no quorum for maxHeartBeatLeak intervals
    KEEP = "keep"


def evaluate_heart_beats(tally: HeartBeatTally, term: int, peer_size: int, leak_exceeded: bool,
                         step_down_on_bigger_term: bool) -> tuple[int, HeartBeatOutcome]:
    """The leader's verdict on a heartbeat round: ``(row, outcome)``.

    0.3.1.2 rows: 1 quorum SUCCESS; 2 quorum SUCCESS+NOT_READY; 3 bigger term; 4 inconsistent leader;
    5 leak. With ``step_down_on_bigger_term`` (issue #247, 0.3.2) the bigger-term check runs first (row 0).
    """
    if step_down_on_bigger_term and tally.max_term > term:
        return 0, HeartBeatOutcome.STEP_DOWN_BIGGER_TERM
    if is_quorum(tally.succ_num, peer_size):
        return 1, HeartBeatOutcome.SUCCESS
    if is_quorum(tally.succ_num + tally.not_ready_num, peer_size):
        return 2, HeartBeatOutcome.RESEND
    if tally.max_term > term:
        return 3, HeartBeatOutcome.STEP_DOWN_BIGGER_TERM
    if tally.inconsist_leader:
        return 4, HeartBeatOutcome.STEP_DOWN_INCONSISTENT_LEADER
    if leak_exceeded:
        return 5, HeartBeatOutcome.STEP_DOWN_LEAK
    return 6, HeartBeatOutcome.KEEP


# ---------------------------------------------------------------------- vote round (candidate)
@dataclass
class VoteTally:
    """The counters of one vote round; ``known_max_term_in_group`` starts at the round's term."""

    known_max_term_in_group: int
    all_num: int = 0
    valid_num: int = 0
    accepted_num: int = 0
    not_ready_term_num: int = 0
    bigger_ledger_num: int = 0
    already_has_leader: bool = False

    def add(self, response: VoteResponse) -> None:
        r = response.vote_result
        if r is not VoteResult.UNKNOWN:
            self.valid_num += 1
        if r is VoteResult.ACCEPT:
            self.accepted_num += 1
        elif r is VoteResult.REJECT_ALREADY_HAS_LEADER:
            self.already_has_leader = True
        elif r in (VoteResult.REJECT_TERM_SMALL_THAN_LEDGER, VoteResult.REJECT_EXPIRED_VOTE_TERM):
            self.known_max_term_in_group = max(self.known_max_term_in_group, response.term)
        elif r in (VoteResult.REJECT_EXPIRED_LEDGER_TERM, VoteResult.REJECT_SMALL_LEDGER_END_INDEX):
            self.bigger_ledger_num += 1
        elif r is VoteResult.REJECT_TERM_NOT_READY:
            self.not_ready_term_num += 1
        self.all_num += 1

    def should_release(self, peer_size: int) -> bool:
        return (self.already_has_leader or is_quorum(self.accepted_num, peer_size)
                or is_quorum(self.accepted_num + self.not_ready_term_num, peer_size) or self.all_num >= peer_size)


class NextVote(enum.Enum):
    """How the next vote time is set after a round."""

    DEFAULT = "next"  # getNextTimeToRequestVote()
    PLUS_LEAK = "next+leak"  # + heartBeatTimeIntervalMs * maxHeartBeatLeak
    PLUS_MAX_VOTE_INTERVAL = "next+maxVoteInterval"  # + maxVoteIntervalMs
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class VoteRoundDecision:
    """The ParseResult of a vote round, the table rule that produced it and how to set the next vote time."""

    rule: int
    result: ParseResult
    next_vote: NextVote


VOTE_ROUND_RULES: dict[int, str] = {
    1: N_("a voter knows a bigger term: move to it and vote again after the random wait"),
    2: N_("a voter already has a leader: wait maxHeartBeatLeak heartbeats before voting again"),
    3: N_("fewer than a quorum answered: wait 300-1000 ms (random) and vote again in the same term"),
    4: N_("a quorum is not possible without members whose logs are fresher: wait longer (+maxVoteInterval)"),
    5: N_("a quorum accepted: this member becomes leader"),
    6: N_("accepted + not-ready voters make a quorum: vote again at once in the same term"),
    7: N_("no quorum: next round with term + 1 after the random wait"),
}
"""The ParseResult table (parseVoteResult, 0.2.0+): each rule :func:`parse_vote_result` returns -> what
happens next."""


def parse_vote_result(tally: VoteTally, term: int, peer_size: int) -> VoteRoundDecision:
    """The ParseResult table (0.2.0+), first matching rule wins. Rule 1 also means
    ``changeRoleToCandidate(knownMaxTermInGroup)``; rule 5 means ``changeRoleToLeader(term)``."""
    p, n = ParseResult, NextVote
    if tally.known_max_term_in_group > term:
        return VoteRoundDecision(1, p.WAIT_TO_VOTE_NEXT, n.DEFAULT)
    if tally.already_has_leader:
        return VoteRoundDecision(2, p.WAIT_TO_REVOTE, n.PLUS_LEAK)
    if not is_quorum(tally.valid_num, peer_size):
        return VoteRoundDecision(3, p.WAIT_TO_REVOTE, n.DEFAULT)
    if not is_quorum(tally.valid_num - tally.bigger_ledger_num, peer_size):
        return VoteRoundDecision(4, p.WAIT_TO_REVOTE, n.PLUS_MAX_VOTE_INTERVAL)
    if is_quorum(tally.accepted_num, peer_size):
        return VoteRoundDecision(5, p.PASSED, n.UNCHANGED)
    if is_quorum(tally.accepted_num + tally.not_ready_term_num, peer_size):
        return VoteRoundDecision(6, p.REVOTE_IMMEDIATELY, n.UNCHANGED)
    return VoteRoundDecision(7, p.WAIT_TO_VOTE_NEXT, n.DEFAULT)


# ---------------------------------------------------------------------- TakeLeadershipTask
def check_take_leadership(term: int, role_name: str, term_to_take_leadership: int) -> DLedgerResponseCode | None:
    """TakeLeadershipTask.check: the transferee's answer after a role change, or None to keep waiting."""
    if term > term_to_take_leadership:
        return Code.EXPIRED_TERM
    if term == term_to_take_leadership:
        if role_name == "LEADER":
            return Code.SUCCESS
        if role_name == "FOLLOWER":
            return Code.TAKE_LEADERSHIP_FAILED
        return None
    return Code.TAKE_LEADERSHIP_FAILED if role_name == "FOLLOWER" else Code.INTERNAL_ERROR
