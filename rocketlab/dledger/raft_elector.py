"""Raft's leader election (Ongaro & Ousterhout, section 5.2) in place of DLedger's, for the ``raft`` profile.

Theory of operation
-------------------
The ``raft`` profile's ``raft_election`` switch swaps the elector; everything else (store, pusher,
MemberState, messages) stays DLedger's, so the only difference a learner sees is how leaders are chosen:

* every member has an **election timer**, drawn uniformly from ``[election_timeout_min_ms,
  election_timeout_max_ms]`` and reset when it accepts a heartbeat from the current leader or grants a
  vote; when it fires, a follower or candidate **starts an election**: term + 1, a vote for itself, a
  ``VoteRequest`` to every other member; a majority of ACCEPTs makes it leader (``vote_round`` with
  ``PASSED``); if the timer fires first, the election is abandoned (``vote_round`` with
  ``WAIT_TO_REVOTE``) and a new one starts, which is how split votes resolve;
* **any bigger term**, in a request or a response, is adopted at once (:meth:`MemberState.adopt_term`:
  vote cleared and persisted) and a candidate or leader steps down to follower;
* a vote is granted to the first candidate of a term whose log is at least as up to date (bigger last
  term, or the same last term and an index at least as large);
* the leader heartbeats every ``election_timeout_min_ms // 2`` without waiting for answers; a heartbeat
  from a leader of the current (or a bigger) term makes the receiver its follower;
* with ``candidate_persist_max_ms`` > 0 (kit addition, default 0) a candidate first writes its term and vote
  to disk, a delay drawn from ``[candidate_persist_min_ms, candidate_persist_max_ms]``, and only then sends
  its vote requests (Raft's servers persist before they ask; the simulator's disk is otherwise instant).

The answers use DLedger's codes (``ACCEPT``, ``REJECT_EXPIRED_VOTE_TERM``, ``REJECT_ALREADY_VOTED``,
``REJECT_EXPIRED_LEDGER_TERM``, ``REJECT_SMALL_LEDGER_END_INDEX``; heartbeats ``SUCCESS`` /
``EXPIRED_TERM``). A follower that adopted a term from a vote request has no leader until the next
heartbeat (role FOLLOWER, leader None). Leadership transfer keeps DLedger's request flow; the transferee
starts an election at once (Raft's TimeoutNow). Matches no DLedger release; the labs use it for Raft's
Figure 16.
"""

from __future__ import annotations

from rocketlab.core import OutputBuilder
from rocketlab.dledger.leader_elector import DLedgerLeaderElector
from rocketlab.dledger.member_state import Role
from rocketlab.dledger.protocol import (
    DLedgerResponseCode,
    HeartBeatRequest,
    HeartBeatResponse,
    ParseResult,
    VoteRequest,
    VoteResponse,
    VoteResult,
)

Code = DLedgerResponseCode


class RaftLeaderElector(DLedgerLeaderElector):
    """Raft's election rules behind DLedgerLeaderElector's interface (see the module docstring).

    Not a Java class: rocketlab's model of the Raft paper's section 5.2 and Figure 16 set-up.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.election_deadline_ms: int | None = None
        self.next_heart_beat_ms = 0
        self.votes: set[str] = set()
        self.election_term = -1
        self.election_started_ms = 0
        self.persisting: tuple[int, int] | None = None  # (term, when its vote requests go out)
        ms = self.member_state
        if ms.role is Role.CANDIDATE:  # Raft members start as followers (without a leader)
            ms.role = Role.FOLLOWER

    # ------------------------------------------------------------------ timers
    def reset_election_timer(self, now_ms: int) -> None:
        cfg = self.config
        self.election_deadline_ms = now_ms + self.rng.randint(cfg.election_timeout_min_ms, cfg.election_timeout_max_ms)

    def next_deadline_ms(self) -> int | None:
        if not self.config.enable_leader_elector:
            return self.take_leadership_wait.give_up_ms if self.take_leadership_wait else None
        due = self.next_heart_beat_ms if self.member_state.is_leader() else (self.election_deadline_ms or 0)
        if self.persisting is not None:
            due = min(due, self.persisting[1])
        if self.take_leadership_wait is not None:
            due = min(due, self.take_leadership_wait.give_up_ms)
        return due

    def time_out_now(self, now_ms: int, out: OutputBuilder) -> None:
        """The kit's "time out now": a follower's or candidate's election timer fires at once."""
        if self.member_state.is_leader():
            return
        self.election_deadline_ms = now_ms
        self.on_tick(now_ms, out)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        self.check_take_leadership_wait(now_ms, out)
        if not self.config.enable_leader_elector:
            return
        self.last_pass_ms = now_ms
        if self.persisting is not None and now_ms >= self.persisting[1]:
            term, self.persisting = self.persisting[0], None
            if self.member_state.is_candidate() and self.member_state.curr_term == term == self.election_term:
                self._ask_for_votes(term, now_ms, out)
        if self.member_state.is_leader():
            if now_ms >= self.next_heart_beat_ms:
                self.next_heart_beat_ms = now_ms + self.config.leader_heart_beat_interval_ms
                self.broadcast_heart_beats(now_ms, out)
        elif self.election_deadline_ms is None:
            self.reset_election_timer(now_ms)
        elif now_ms >= self.election_deadline_ms:
            self.start_election(now_ms, out)

    # ------------------------------------------------------------------ candidate
    def start_election(self, now_ms: int, out: OutputBuilder) -> None:
        """The election timer fired: abandon a running election, term + 1, vote for self, ask everyone."""
        ms = self.member_state
        if ms.is_candidate() and self.election_term == ms.curr_term:
            out.trace("vote_round", term=ms.curr_term, result=ParseResult.WAIT_TO_REVOTE.name,
                      accepted=len(self.votes), not_ready=0, bigger_ledger=0, valid=len(self.votes), all=len(self.votes))
        if not ms.is_candidate():
            self.change_role_to_candidate(ms.curr_term, now_ms, out)
        term = self.next_term(out)
        ms.set_curr_vote_for(ms.self_id)
        self.votes = {ms.self_id}
        self.election_term, self.election_started_ms = term, now_ms
        self.reset_election_timer(now_ms)
        cfg = self.config
        if cfg.candidate_persist_max_ms > 0:  # the vote requests wait for the candidate's own disk write
            delay = self.rng.randint(cfg.candidate_persist_min_ms, cfg.candidate_persist_max_ms)
            self.persisting = (term, now_ms + delay)
            return
        self._ask_for_votes(term, now_ms, out)

    def _ask_for_votes(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        ms = self.member_state
        for peer in ms.other_peer_ids():
            req = VoteRequest(group=ms.group, ledger_end_index=ms.ledger_end_index, ledger_end_term=ms.ledger_end_term,
                              leader_id=ms.self_id, term=term, remote_id=peer, local_id=ms.self_id)
            out.trace("vote_request", term=term, candidate=ms.self_id, voter=peer,
                      ledger_end_index=ms.ledger_end_index, ledger_end_term=ms.ledger_end_term)
            self.rpc.request(out, peer, req, self._raft_vote_continuation(term, peer))
        self._maybe_win(term, now_ms, out)

    def _raft_vote_continuation(self, term: int, voter: str):
        def on_response(resp: VoteResponse | None, now_ms: int, out: OutputBuilder) -> None:
            resp = resp if resp is not None else VoteResponse()
            out.trace("vote_response", term=term, candidate=self.member_state.self_id, voter=voter,
                      result=resp.vote_result.name)
            if resp.vote_result is not VoteResult.UNKNOWN and resp.term > self.member_state.curr_term:
                self.step_down(resp.term, now_ms, out)
                return
            ms = self.member_state
            if resp.vote_result is VoteResult.ACCEPT and ms.is_candidate() and ms.curr_term == term == self.election_term:
                self.votes.add(voter)
                self._maybe_win(term, now_ms, out)
        return on_response

    def _maybe_win(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        ms = self.member_state
        if ms.is_candidate() and ms.curr_term == term and ms.is_quorum(len(self.votes)):
            n = len(self.votes)
            out.trace("vote_round", term=term, result=ParseResult.PASSED.name, accepted=n, not_ready=0,
                      bigger_ledger=0, valid=n, all=n)
            self.last_vote_cost = now_ms - self.election_started_ms
            self.change_role_to_leader(term, now_ms, out)
            self.next_heart_beat_ms = now_ms

    # ------------------------------------------------------------------ leader
    def broadcast_heart_beats(self, now_ms: int, out: OutputBuilder) -> None:
        ms = self.member_state
        term, leader_id = ms.curr_term, ms.self_id
        for peer in ms.other_peer_ids():
            req = HeartBeatRequest(group=ms.group, local_id=ms.self_id, remote_id=peer, leader_id=leader_id, term=term)
            self.rpc.request(out, peer, req, self._raft_heart_beat_continuation(term, peer))

    def _raft_heart_beat_continuation(self, term: int, peer: str):
        def on_response(resp: HeartBeatResponse | None, now_ms: int, out: OutputBuilder) -> None:
            out.trace("heartbeat", term=term, leader=self.member_state.self_id, to=peer,
                      code=None if resp is None else resp.code.name)
            self.member_state.peers_live_table[peer] = resp is not None
            if resp is not None and resp.term > self.member_state.curr_term:
                self.step_down(resp.term, now_ms, out)
        return on_response

    # ------------------------------------------------------------------ terms
    def step_down(self, term: int, now_ms: int, out: OutputBuilder, leader_id: str | None = None) -> None:
        """Adopt a bigger term and become a follower (of ``leader_id`` if known)."""
        ms = self.member_state
        prev = ms.curr_term
        ms.adopt_term(term)
        out.trace("term", term=term, prev=prev)
        self.votes = set()
        self.change_role_to_follower(term, leader_id, now_ms, out)
        if leader_id is None:
            self.last_leader_heart_beat_time = -1

    def change_role_to_follower(self, term: int, leader_id: str | None, now_ms: int, out: OutputBuilder) -> None:
        super().change_role_to_follower(term, leader_id, now_ms, out)  # type: ignore[arg-type]
        if self.election_deadline_ms is None or leader_id is not None:
            self.reset_election_timer(now_ms)

    # ------------------------------------------------------------------ inbound
    def handle_vote(self, request: VoteRequest, is_self: bool, now_ms: int, out: OutputBuilder) -> VoteResponse:
        ms = self.member_state
        r = VoteResult
        base = VoteResponse(**request.base_info())
        if request.leader_id not in ms.peer_map:
            return base.with_(term=ms.curr_term, vote_result=r.REJECT_UNKNOWN_LEADER)
        if request.term > ms.curr_term:
            self.step_down(request.term, now_ms, out)
        if request.term < ms.curr_term:
            return base.with_(term=ms.curr_term, vote_result=r.REJECT_EXPIRED_VOTE_TERM)
        if ms.curr_vote_for is not None and ms.curr_vote_for != request.leader_id:
            return base.with_(term=ms.curr_term, vote_result=r.REJECT_ALREADY_VOTED)
        if request.ledger_end_term < ms.ledger_end_term:
            return base.with_(term=ms.curr_term, vote_result=r.REJECT_EXPIRED_LEDGER_TERM)
        if request.ledger_end_term == ms.ledger_end_term and request.ledger_end_index < ms.ledger_end_index:
            return base.with_(term=ms.curr_term, vote_result=r.REJECT_SMALL_LEDGER_END_INDEX)
        ms.set_curr_vote_for(request.leader_id)
        self.reset_election_timer(now_ms)
        return base.with_(term=ms.curr_term, vote_result=r.ACCEPT)

    def handle_heart_beat(self, request: HeartBeatRequest, now_ms: int, out: OutputBuilder) -> HeartBeatResponse:
        ms = self.member_state
        if request.leader_id not in ms.peer_map:
            return HeartBeatResponse(term=ms.curr_term, code=Code.UNKNOWN_MEMBER)
        if request.leader_id == ms.self_id:
            return HeartBeatResponse(term=ms.curr_term, code=Code.UNEXPECTED_MEMBER)
        if request.term < ms.curr_term:
            return HeartBeatResponse(term=ms.curr_term, code=Code.EXPIRED_TERM)
        if not self.observe_leader(request.term, request.leader_id, now_ms, out):
            return HeartBeatResponse(term=ms.curr_term, code=Code.INCONSISTENT_LEADER)
        return HeartBeatResponse(term=ms.curr_term, code=Code.SUCCESS)

    def observe_leader(self, term: int, leader_id: str | None, now_ms: int, out: OutputBuilder) -> bool:
        """A heartbeat or push from ``leader_id`` in ``term`` >= ours: Raft's AppendEntries rule - adopt a
        bigger term, follow that leader, reset the election timer. False if another leader holds this term
        (cannot happen while election safety holds)."""
        ms = self.member_state
        if leader_id is None or term < ms.curr_term or leader_id == ms.self_id:
            return False
        if term > ms.curr_term:
            self.step_down(term, now_ms, out, leader_id)
        elif ms.leader_id is None or not ms.is_follower():
            self.change_role_to_follower(term, leader_id, now_ms, out)
        elif ms.leader_id != leader_id:
            return False
        self.last_leader_heart_beat_time = now_ms
        self.reset_election_timer(now_ms)
        return True

    # ------------------------------------------------------------------ leadership transfer
    def take_leadership_now(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        """The transferee, caught up: start an election now (Raft's TimeoutNow)."""
        self.start_election(now_ms, out)

    def maintain_state(self, now_ms: int, out: OutputBuilder) -> None:
        """Unused under Raft's rules (the timers drive :meth:`on_tick`); kept for the interface."""
        self.on_tick(now_ms, out)
