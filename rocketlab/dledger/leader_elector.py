"""DLedgerLeaderElector as a sans-IO core: maintain_as_leader / follower / candidate, handle_vote,
handle_heart_beat, leadership transfer.

Theory of operation
-------------------
Java runs a ``StateMaintainer`` thread: every 10 ms it calls ``maintainState()``, which dispatches on
the role; the leader's heartbeat round and the candidate's vote round *block* that thread until a
latch opens (a quorum answered, everyone answered, or a timeout). Here the thread is a deadline:

* :meth:`next_deadline_ms` is the earliest time a maintainer pass can do something - never earlier than
  ``state_maintainer_interval_ms`` after the previous pass (Java's ``sleep(10)``) - or the deadline of the
  round in flight; :meth:`on_tick` runs the pass.
* A round in flight is a :class:`HeartBeatRound` or :class:`VoteRound` holding the Java counters; answers
  arrive through RPC continuations; when its latch condition holds (or its deadline passes) the round's
  deadline becomes *now*, and the verdict, from the pure tables in
  :mod:`rocketlab.dledger.elector_decisions`, is read at that tick. So answers delivered in the same
  millisecond as the one that opened the latch count too: in Java the maintainer thread wakes up after
  ``countDown()`` while other callbacks still run, and the simulator's clock cannot order events inside
  one millisecond (a simplification; it matters only for equal latencies, see #247 below).

Roles: a leader steps down to candidate (same term) after ``maxHeartBeatLeak`` intervals without a
quorum; a follower becomes candidate (same term) after the same leak without a heartbeat; a candidate
re-votes in the same term unless the last round said WAIT_TO_VOTE_NEXT or a larger term was seen
(``need_increase_term_immediately``), in which case ``MemberState.next_term()`` moves the term first.

Never reads a clock, never sleeps, never touches a socket; all randomness comes from the injected
``random.Random``; peers are contacted in sorted order. Java file: ``DLedgerLeaderElector.java`` (0.3.1.2;
0.3.2's #247 heartbeat round with ``step_down_on_bigger_term``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab import plugs
from rocketlab.core import OutputBuilder
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.elector_decisions import (
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
    parse_vote_result,
)
from rocketlab.dledger.member_state import MemberState, Role
from rocketlab.dledger.protocol import (
    DLedgerResponseCode,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    ParseResult,
    VoteRequest,
    VoteResponse,
)
from rocketlab.dledger.rpc import DLedgerRpcService, Responder

HANDLE_VOTE_PLUG = plugs.point("lab03.handle_vote")
PARSE_VOTE_RESULT_PLUG = plugs.point("lab03.parse_vote_result")
HANDLE_HEART_BEAT_PLUG = plugs.point("lab03.handle_heart_beat")
"""The override points of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`);
``lab03.handle_heart_beat`` is lab 03's find-the-bug exercise (handleHeartBeat with a planted fault,
fixed by the learner)."""

NEVER = -1
VOTE_RESULT_WAIT_TIME_MS = 10
"""0.3.2's ``voteResultWaitTime`` (#247): the heartbeat latch waits at most the interval minus this, then
the leader sleeps this long before it reads the counters, so late EXPIRED_TERM answers are counted."""
Code = DLedgerResponseCode
RoleListener = Callable[[int, Role, int, OutputBuilder], None]
"""Internal role-change listener ``(term, role, now_ms, out)`` (the server's pusher hooks)."""


def elapsed(now_ms: int, since_ms: int) -> float:
    """``now - since``, or infinity when ``since`` is NEVER (Java's -1 against a wall clock)."""
    return float("inf") if since_ms < 0 else now_ms - since_ms


@dataclass(eq=False)
class HeartBeatRound:
    """One sendHeartbeats call in flight: Java's counters and latch deadline (heartBeatTimeIntervalMs).

    With ``step_down_on_bigger_term`` (0.3.2) the round has two phases: until ``latch_open_ms`` is set
    the deadline is the latch timeout (interval - 10 ms); once the latch opens (quorum, everyone
    answered, or timeout) the deadline becomes that instant + 10 ms, the ``Thread.sleep(10)`` during which
    answers still count. 0.3.1.2 judges the round the moment the latch opens (the next tick, in the same
    millisecond)."""

    term: int
    leader_id: str
    deadline_ms: int
    tally: HeartBeatTally = field(default_factory=HeartBeatTally)
    done: bool = False
    latch_open_ms: int | None = None


@dataclass(eq=False)
class VoteRound:
    """One voteForQuorumResponses round in flight: counters and the latch deadline (2000 + rand ms)."""

    term: int
    started_ms: int
    deadline_ms: int
    tally: VoteTally
    done: bool = False


@dataclass(eq=False)
class _TakeLeadershipWait:
    """The transferee's catch-up wait (0.2.4+): poll until the ledger reaches the leader's end index."""

    request: LeadershipTransferRequest
    respond: Responder
    give_up_ms: int


class DLedgerLeaderElector:
    """Models DLedgerLeaderElector (with its StateMaintainer and TakeLeadershipTask), DLedger 0.3.1.2.

    Simplified: no threads, latches or locks (see the module docstring); role-change handlers are
    called synchronously, as Java does under the MemberState lock; the ``testRevote`` hook is left
    to the tests. Interval settings are read from the (immutable) config instead of being refreshed.
    """

    def __init__(self, config: DLedgerConfig, member_state: MemberState, rpc: DLedgerRpcService,
                 rng: random.Random) -> None:
        self.config = config
        self.member_state = member_state
        self.rpc = rpc
        self.rng = rng
        self.last_leader_heart_beat_time = NEVER
        self.last_send_heart_beat_time = NEVER
        self.last_succ_heart_beat_time = NEVER
        self.next_time_to_request_vote = NEVER
        self.need_increase_term_immediately = False
        self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        self.last_vote_cost = 0
        self.last_pass_ms: int | None = None
        self.heart_beat_round: HeartBeatRound | None = None
        self.vote_round: VoteRound | None = None
        self.role_change_handlers: list[Any] = []
        self.role_listeners: list[RoleListener] = []
        self.take_leadership_respond: Responder | None = None
        self.take_leadership_wait: _TakeLeadershipWait | None = None
        self._last_role_trace: tuple[int, str, str | None] | None = None

    # ------------------------------------------------------------------ scheduling
    def next_deadline_ms(self) -> int | None:
        if not self.config.enable_leader_elector:
            return self.take_leadership_wait.give_up_ms if self.take_leadership_wait else None
        if self.heart_beat_round is not None:
            return self.heart_beat_round.deadline_ms
        if self.vote_round is not None:
            return self.vote_round.deadline_ms
        earliest = 0 if self.last_pass_ms is None else self.last_pass_ms + self.config.state_maintainer_interval_ms
        due = self._condition_ms()
        if self.take_leadership_wait is not None:
            due = min(due, self.take_leadership_wait.give_up_ms)
        return max(earliest, due)

    def _condition_ms(self) -> int:
        """The earliest time at which a maintainer pass would act, for the current role."""
        cfg, ms = self.config, self.member_state
        if ms.is_leader():
            last = self.last_send_heart_beat_time
            return 0 if last == NEVER else last + cfg.heart_beat_time_interval_ms + 1
        if ms.is_follower():
            last = self.last_leader_heart_beat_time
            return 0 if last == NEVER else last + cfg.max_heart_beat_leak * cfg.heart_beat_time_interval_ms + 1
        if self.need_increase_term_immediately:
            return 0
        return max(self.next_time_to_request_vote, 0)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        self.check_take_leadership_wait(now_ms, out)
        rnd = self.heart_beat_round
        if rnd is not None:
            if now_ms >= rnd.deadline_ms:
                if rnd.latch_open_ms is None:
                    self.open_heart_beat_latch(rnd, now_ms)  # the latch timed out; 0.3.2's 10 ms sleep follows
                if now_ms >= rnd.deadline_ms:
                    self.finish_heart_beat_round(rnd, now_ms, out)
            return
        if self.vote_round is not None:
            if now_ms >= self.vote_round.deadline_ms:
                self.finish_vote_round(self.vote_round, now_ms, out)
            return
        earliest = None if self.last_pass_ms is None else self.last_pass_ms + self.config.state_maintainer_interval_ms
        if earliest is not None and now_ms < earliest:
            return
        self.maintain_state(now_ms, out)

    def maintain_state(self, now_ms: int, out: OutputBuilder) -> None:
        """One StateMaintainer pass: dispatch on the role."""
        if not self.config.enable_leader_elector:
            return
        self.last_pass_ms = now_ms
        role = self.member_state.role
        if role is Role.LEADER:
            self.maintain_as_leader(now_ms, out)
        elif role is Role.FOLLOWER:
            self.maintain_as_follower(now_ms, out)
        else:
            self.maintain_as_candidate(now_ms, out)

    def time_out_now(self, now_ms: int, out: OutputBuilder) -> None:
        """The kit's "time out now" (RaftScope's button; Java has no such call): a follower acts as if
        ``maxHeartBeatLeak`` heartbeats were missed, a candidate as if its wait for the next vote round
        were over; then one StateMaintainer pass runs. A leader, or a member waiting for a round's answers,
        is left alone."""
        role = self.member_state.role
        if role is Role.LEADER or self.heart_beat_round is not None or self.vote_round is not None:
            return
        if role is Role.FOLLOWER:
            self.last_leader_heart_beat_time = NEVER
        else:
            self.next_time_to_request_vote = now_ms
        self.maintain_state(now_ms, out)  # a new candidate's first vote round follows on the next pass

    # ------------------------------------------------------------------ leader
    def maintain_as_leader(self, now_ms: int, out: OutputBuilder) -> None:
        if elapsed(now_ms, self.last_send_heart_beat_time) > self.config.heart_beat_time_interval_ms:
            ms = self.member_state
            if not ms.is_leader():
                return
            self.last_send_heart_beat_time = now_ms
            self.send_heartbeats(ms.curr_term, ms.leader_id or ms.self_id, now_ms, out)

    def send_heartbeats(self, term: int, leader_id: str, now_ms: int, out: OutputBuilder) -> None:
        ms, cfg = self.member_state, self.config
        grace = VOTE_RESULT_WAIT_TIME_MS if cfg.step_down_on_bigger_term else 0
        rnd = HeartBeatRound(term, leader_id, now_ms + cfg.heart_beat_time_interval_ms - grace)
        self.heart_beat_round = rnd
        for peer in ms.other_peer_ids():
            req = HeartBeatRequest(group=ms.group, local_id=ms.self_id, remote_id=peer, leader_id=leader_id, term=term)
            self.rpc.request(out, peer, req, self._heart_beat_continuation(rnd, peer))
        if not rnd.done and rnd.latch_open_ms is None and rnd.tally.should_release(ms.peer_size):
            self.open_heart_beat_latch(rnd, now_ms)

    def open_heart_beat_latch(self, rnd: HeartBeatRound, now_ms: int) -> None:
        """The latch opened (or timed out): 0.3.1.2 judges at once (the next tick, this millisecond);
        0.3.2 first sleeps 10 ms, during which answers still count."""
        rnd.latch_open_ms = now_ms
        rnd.deadline_ms = now_ms + (VOTE_RESULT_WAIT_TIME_MS if self.config.step_down_on_bigger_term else 0)

    def _heart_beat_continuation(self, rnd: HeartBeatRound, peer: str):
        def on_response(resp: HeartBeatResponse | None, now_ms: int, out: OutputBuilder) -> None:
            code = Code.NETWORK_ERROR if resp is None else resp.code
            out.trace("heartbeat", term=rnd.term, leader=rnd.leader_id, to=peer,
                      code=None if resp is None else code.name)
            self.member_state.peers_live_table[peer] = code is not Code.NETWORK_ERROR
            if rnd.done:
                return
            rnd.tally.add(code, -1 if resp is None else resp.term)
            if rnd.latch_open_ms is None and rnd.tally.should_release(self.member_state.peer_size):
                self.open_heart_beat_latch(rnd, now_ms)
        return on_response

    def finish_heart_beat_round(self, rnd: HeartBeatRound, now_ms: int, out: OutputBuilder) -> None:
        rnd.done = True
        if self.heart_beat_round is rnd:
            self.heart_beat_round = None
        cfg = self.config
        leak = elapsed(now_ms, self.last_succ_heart_beat_time) > cfg.max_heart_beat_leak * cfg.heart_beat_time_interval_ms
        _row, outcome = evaluate_heart_beats(rnd.tally, rnd.term, self.member_state.peer_size, leak,
                                             cfg.step_down_on_bigger_term)
        if outcome is HeartBeatOutcome.SUCCESS:
            self.last_succ_heart_beat_time = now_ms
        elif outcome is HeartBeatOutcome.RESEND:
            self.last_send_heart_beat_time = NEVER
        elif outcome is HeartBeatOutcome.STEP_DOWN_BIGGER_TERM:
            self.change_role_to_candidate(rnd.tally.max_term, now_ms, out)
        elif outcome in (HeartBeatOutcome.STEP_DOWN_INCONSISTENT_LEADER, HeartBeatOutcome.STEP_DOWN_LEAK):
            self.change_role_to_candidate(rnd.term, now_ms, out)
        self.last_pass_ms = now_ms

    # ------------------------------------------------------------------ follower
    def maintain_as_follower(self, now_ms: int, out: OutputBuilder) -> None:
        cfg, ms = self.config, self.member_state
        since = elapsed(now_ms, self.last_leader_heart_beat_time)
        if since > 2 * cfg.heart_beat_time_interval_ms:
            if ms.is_follower() and since > cfg.max_heart_beat_leak * cfg.heart_beat_time_interval_ms:
                self.change_role_to_candidate(ms.curr_term, now_ms, out)

    # ------------------------------------------------------------------ candidate
    def maintain_as_candidate(self, now_ms: int, out: OutputBuilder) -> None:
        ms = self.member_state
        if now_ms < self.next_time_to_request_vote and not self.need_increase_term_immediately:
            return
        if not ms.is_candidate():
            return
        if self.last_parse_result is ParseResult.WAIT_TO_VOTE_NEXT or self.need_increase_term_immediately:
            term = self.next_term(out)
            self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        else:
            term = ms.curr_term
        if self.need_increase_term_immediately:
            self.next_time_to_request_vote = self.get_next_time_to_request_vote(now_ms)
            self.need_increase_term_immediately = False
            return
        self.vote_for_quorum_responses(term, ms.ledger_end_term, ms.ledger_end_index, now_ms, out)

    def next_term(self, out: OutputBuilder) -> int:
        prev = self.member_state.curr_term
        term = self.member_state.next_term()
        out.trace("term", term=term, prev=prev)
        return term

    def vote_for_quorum_responses(self, term: int, ledger_end_term: int, ledger_end_index: int, now_ms: int,
                                  out: OutputBuilder) -> None:
        """Ask every member (self first, by a direct call) for its vote, then wait for the latch."""
        ms, cfg = self.member_state, self.config
        wait = cfg.vote_round_wait_base_ms + self.rng.randrange(cfg.max_vote_interval_ms)
        rnd = VoteRound(term, now_ms, now_ms + wait, VoteTally(known_max_term_in_group=term))
        self.vote_round = rnd
        for peer in [ms.self_id, *ms.other_peer_ids()]:
            req = VoteRequest(group=ms.group, ledger_end_index=ledger_end_index, ledger_end_term=ledger_end_term,
                              leader_id=ms.self_id, term=term, remote_id=peer, local_id=ms.self_id)
            out.trace("vote_request", term=term, candidate=ms.self_id, voter=peer,
                      ledger_end_index=ledger_end_index, ledger_end_term=ledger_end_term)
            on_response = self._vote_continuation(rnd, peer)
            if peer == ms.self_id:
                on_response(self.handle_vote(req, True, now_ms, out), now_ms, out)
            else:
                self.rpc.request(out, peer, req, on_response)
            if rnd.done:
                break

    def _vote_continuation(self, rnd: VoteRound, voter: str):
        def on_response(resp: VoteResponse | None, now_ms: int, out: OutputBuilder) -> None:
            resp = resp if resp is not None else VoteResponse()
            out.trace("vote_response", term=rnd.term, candidate=self.member_state.self_id, voter=voter,
                      result=resp.vote_result.name)
            if rnd.done:
                return
            rnd.tally.add(resp)
            if rnd.tally.should_release(self.member_state.peer_size):
                rnd.deadline_ms = min(rnd.deadline_ms, now_ms)  # the latch opened: judged at the next tick
        return on_response

    def finish_vote_round(self, rnd: VoteRound, now_ms: int, out: OutputBuilder) -> None:
        rnd.done = True
        if self.vote_round is rnd:
            self.vote_round = None
        cfg, t = self.config, rnd.tally
        decision = plugs.resolve(PARSE_VOTE_RESULT_PLUG, parse_vote_result)(t, rnd.term, self.member_state.peer_size)
        if decision.next_vote is NextVote.DEFAULT:
            self.next_time_to_request_vote = self.get_next_time_to_request_vote(now_ms)
        elif decision.next_vote is NextVote.PLUS_LEAK:
            self.next_time_to_request_vote = (self.get_next_time_to_request_vote(now_ms)
                                              + cfg.heart_beat_time_interval_ms * cfg.max_heart_beat_leak)
        elif decision.next_vote is NextVote.PLUS_MAX_VOTE_INTERVAL:
            self.next_time_to_request_vote = self.get_next_time_to_request_vote(now_ms) + cfg.max_vote_interval_ms
        self.last_parse_result = decision.result
        self.last_vote_cost = now_ms - rnd.started_ms
        out.trace("vote_round", term=rnd.term, result=decision.result.name, accepted=t.accepted_num,
                  not_ready=t.not_ready_term_num, bigger_ledger=t.bigger_ledger_num, valid=t.valid_num, all=t.all_num,
                  rule=decision.rule)
        if decision.rule == 1:
            self.change_role_to_candidate(t.known_max_term_in_group, now_ms, out)
        if decision.result is ParseResult.PASSED:
            self.change_role_to_leader(rnd.term, now_ms, out)
        self.last_pass_ms = now_ms

    def is_taking_leadership(self) -> bool:
        """0.2.3+: preferred ids set, ``termToTakeLeadership == currTerm`` and self is preferred."""
        ms = self.member_state
        prefs = self.config.preferred_leader_id_list
        return bool(prefs) and ms.term_to_take_leadership == ms.curr_term and ms.self_id in prefs

    def get_next_time_to_request_vote(self, now_ms: int) -> int:
        cfg = self.config
        if self.is_taking_leadership():
            lo, hi = cfg.min_take_leadership_vote_interval_ms, cfg.max_take_leadership_vote_interval_ms
        else:
            lo, hi = cfg.min_vote_interval_ms, cfg.max_vote_interval_ms
        return now_ms + lo + (self.rng.randrange(hi - lo) if hi > lo else 0)

    # ------------------------------------------------------------------ inbound: vote and heartbeat
    def handle_vote(self, request: VoteRequest, is_self: bool, now_ms: int, out: OutputBuilder) -> VoteResponse:
        """handleVote: the checks of :func:`decide_vote`; a granted vote is persisted before returning."""
        ms = self.member_state
        view = VoteView(ms.self_id, frozenset(ms.peer_map), ms.curr_term, ms.curr_vote_for, ms.leader_id,
                        ms.ledger_end_index, ms.ledger_end_term, self.is_taking_leadership())
        decision = plugs.resolve(HANDLE_VOTE_PLUG, decide_vote)(view, request, is_self)
        if decision.effect is VoteEffect.STEP_DOWN:
            self.change_role_to_candidate(request.term, now_ms, out)
            self.need_increase_term_immediately = True
        elif decision.effect is VoteEffect.GRANT:
            ms.set_curr_vote_for(request.leader_id)
        return VoteResponse(**request.base_info()).with_(term=decision.term, vote_result=decision.result)

    def handle_heart_beat(self, request: HeartBeatRequest, now_ms: int, out: OutputBuilder) -> HeartBeatResponse:
        ms = self.member_state
        d = plugs.resolve(HANDLE_HEART_BEAT_PLUG, decide_heart_beat)(
            ms.self_id, frozenset(ms.peer_map), ms.curr_term, ms.leader_id, request.term, request.leader_id)
        if d.effect is HeartBeatEffect.REFRESH:
            self.last_leader_heart_beat_time = now_ms
        elif d.effect is HeartBeatEffect.BECOME_FOLLOWER:
            assert request.leader_id is not None
            self.change_role_to_follower(request.term, request.leader_id, now_ms, out)
        elif d.effect is HeartBeatEffect.STEP_DOWN:
            self.change_role_to_candidate(request.term, now_ms, out)
            self.need_increase_term_immediately = True
        return HeartBeatResponse(term=d.term, code=d.code)

    # ------------------------------------------------------------------ role changes
    def change_role_to_leader(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        if self.member_state.curr_term == term:
            self.member_state.change_to_leader(term)
            self.last_send_heart_beat_time = NEVER
            self.handle_role_change(term, Role.LEADER, now_ms, out)

    def change_role_to_candidate(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        if term >= self.member_state.curr_term:
            self.member_state.change_to_candidate(term)
            self.handle_role_change(term, Role.CANDIDATE, now_ms, out)

    def change_role_to_follower(self, term: int, leader_id: str, now_ms: int, out: OutputBuilder) -> None:
        self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        self.member_state.change_to_follower(term, leader_id)
        self.last_leader_heart_beat_time = now_ms
        self.handle_role_change(term, Role.FOLLOWER, now_ms, out)

    def trace_role(self, out: OutputBuilder) -> None:
        """Emit a ``role`` event with the member's current term, role and leader (if it changed)."""
        ms = self.member_state
        state = (ms.curr_term, ms.role.name, ms.leader_id)
        if state != self._last_role_trace:
            self._last_role_trace = state
            out.trace("role", term=ms.curr_term, role=ms.role.name, leader=ms.leader_id)

    def handle_role_change(self, term: int, role: Role, now_ms: int, out: OutputBuilder) -> None:
        """TakeLeadershipTask.check, the ``role`` trace event, then every RoleChangeHandler."""
        self.take_leadership_task_check(term, role, out)
        self.trace_role(out)
        for handler in list(self.role_change_handlers):
            (handler.handle if hasattr(handler, "handle") else handler)(term, role)
        for listener in list(self.role_listeners):
            listener(term, role, now_ms, out)

    def add_role_change_handler(self, handler: Any) -> None:
        """Register a RoleChangeHandler (an object with ``handle(term, role)`` or a callable); deduplicated."""
        if handler not in self.role_change_handlers:
            self.role_change_handlers.append(handler)

    # ------------------------------------------------------------------ leadership transfer
    def handle_leadership_transfer(self, request: LeadershipTransferRequest, respond: Responder,
                                   out: OutputBuilder) -> None:
        """Leader side: set the transferee (appends now fail) and tell it to take leadership."""
        ms = self.member_state
        if ms.curr_term != request.term:
            return respond(LeadershipTransferResponse(term=ms.curr_term, code=Code.INCONSISTENT_TERM), out)
        if not ms.is_leader():
            return respond(LeadershipTransferResponse(term=ms.curr_term, code=Code.NOT_LEADER), out)
        if ms.transferee is not None:
            return respond(LeadershipTransferResponse(term=ms.curr_term, code=Code.LEADER_TRANSFERRING), out)
        assert request.transferee_id is not None
        ms.set_transferee(request.transferee_id)
        take = LeadershipTransferRequest(group=ms.group, leader_id=ms.leader_id, local_id=ms.self_id,
                                         remote_id=request.transferee_id, term=request.term,
                                         take_leadership_ledger_index=ms.ledger_end_index,
                                         transfer_id=ms.self_id, transferee_id=request.transferee_id)

        def on_response(resp: LeadershipTransferResponse | None, now_ms: int, out2: OutputBuilder) -> None:
            resp = resp if resp is not None else LeadershipTransferResponse(code=Code.NETWORK_ERROR)
            if resp.code is not Code.SUCCESS or (ms.curr_term == request.term and ms.transferee is not None):
                ms.transferee = None
            respond(resp, out2)

        self.rpc.request(out, request.transferee_id, take, on_response)
        return None

    def begin_take_leadership(self, request: LeadershipTransferRequest, respond: Responder, now_ms: int,
                              out: OutputBuilder) -> None:
        """Transferee side (0.2.4+): wait until caught up to ``take_leadership_ledger_index``, then take it."""
        self.take_leadership_wait = _TakeLeadershipWait(request, respond,
                                                        now_ms + self.config.leadership_transfer_wait_timeout)
        self.check_take_leadership_wait(now_ms, out)

    def check_take_leadership_wait(self, now_ms: int, out: OutputBuilder) -> None:
        wait = self.take_leadership_wait
        if wait is None:
            return
        if self.member_state.ledger_end_index >= wait.request.take_leadership_ledger_index:
            self.take_leadership_wait = None
            self.handle_take_leadership(wait.request, wait.respond, now_ms, out)
        elif now_ms > wait.give_up_ms:
            self.take_leadership_wait = None
            wait.respond(LeadershipTransferResponse(term=self.member_state.curr_term,
                                                    code=Code.TAKE_LEADERSHIP_FAILED), out)

    def handle_take_leadership(self, request: LeadershipTransferRequest, respond: Responder, now_ms: int,
                               out: OutputBuilder) -> None:
        ms = self.member_state
        if ms.curr_term != request.term:
            respond(LeadershipTransferResponse(term=ms.curr_term, code=Code.INCONSISTENT_TERM), out)
            return
        ms.term_to_take_leadership = request.term + 1
        self.take_leadership_respond = respond
        self.take_leadership_now(request.term, now_ms, out)

    def take_leadership_now(self, term: int, now_ms: int, out: OutputBuilder) -> None:
        """The transferee's move once the checks passed: a candidate that takes the next term at once."""
        self.change_role_to_candidate(term + 1, now_ms, out)
        self.need_increase_term_immediately = True

    def take_leadership_task_check(self, term: int, role: Role, out: OutputBuilder) -> None:
        ms = self.member_state
        if ms.term_to_take_leadership == -1 or self.take_leadership_respond is None:
            return
        code = check_take_leadership(term, role.name, ms.term_to_take_leadership)
        if code is None:
            return
        respond, self.take_leadership_respond = self.take_leadership_respond, None
        ms.term_to_take_leadership = -1
        respond(LeadershipTransferResponse(term=term, code=code), out)
