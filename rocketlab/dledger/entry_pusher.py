"""DLedgerEntryPusher: replication state shared by the dispatchers, the QuorumAckChecker and the client
append futures; the follower's EntryHandler.

Theory of operation
-------------------
Leader state, keyed by term: ``peer_water_marks_by_term[term][peer]`` (highest index each member holds,
the leader included; every member starts at -1 the first time a term is touched) and
``pending_append_responses_by_term[term][index]`` (the :class:`AppendFuture` of each client append).

* :meth:`wait_ack` registers the future of a just-appended entry and sets the leader's own watermark.
* :class:`QuorumAckChecker` (run after every input and on its deadlines): completes other terms'
  futures with TERM_CHANGED; takes the median of the current term's watermarks (``sorted desc [n/2]``)
  as the quorum index; commits it (``commit_only_current_term``: only up to an entry of the current
  term); completes futures up to it with SUCCESS; times out futures above it with
  WAIT_QUORUM_ACK_TIMEOUT after ``max_wait_ack_time_ms``; every ``leak_check_interval_ms`` sets the
  leader's own watermark to its log end and sweeps the futures below the quorum index.
* One :class:`~rocketlab.dledger.entry_dispatcher.EntryDispatcher` per follower; one
  :class:`~rocketlab.dledger.entry_handler.EntryHandler` for the follower side.

:meth:`pump` runs every component until nothing changes; :meth:`next_deadline_ms` is the earliest timer.
Completion of a future is reported through its callbacks (the server turns them into replies and
trace-free notifications). Java file: ``DLedgerEntryPusher.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rocketlab import plugs
from rocketlab.core import OutputBuilder
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.entry_dispatcher import EntryDispatcher
from rocketlab.dledger.entry_handler import EntryHandler
from rocketlab.dledger.member_state import MemberState
from rocketlab.dledger.protocol import AppendEntryResponse, DLedgerException, DLedgerResponseCode
from rocketlab.dledger.rpc import DLedgerRpcService
from rocketlab.dledger.store.dledger_store import DLedgerStore
from rocketlab.errors import CodecError, StoreError

QUORUM_INDEX_PLUG = plugs.point("lab04.quorum_index")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""
COMMIT_RULE_PLUG = plugs.point("lab04.commit_rule")
"""Lab 04's design exercise: a commit rule that replaces :func:`quorum_index` on any profile."""

NEVER = -1
Code = DLedgerResponseCode
DoneCallback = Callable[["AppendFuture", OutputBuilder], None]


@dataclass(eq=False)
class AppendFuture:
    """Models AppendFuture / BatchAppendFuture (a TimeoutFuture): the handle of one client append.

    ``response`` is set once, when the append is acknowledged by a quorum (SUCCESS), refused, timed out
    (WAIT_QUORUM_ACK_TIMEOUT) or abandoned (TERM_CHANGED); then every callback runs with the Output
    builder of the input that completed it. ``positions`` lists every entry's pos for a batch.
    """

    handle: int
    term: int = -1
    index: int = -1
    pos: int = -1
    created_ms: int = 0
    timeout_ms: int = 0
    positions: tuple[int, ...] = ()
    response: AppendEntryResponse | None = None
    callbacks: list[DoneCallback] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.response is not None

    @property
    def code(self) -> DLedgerResponseCode | None:
        return self.response.code if self.response is not None else None

    def is_time_out(self, now_ms: int) -> bool:
        return now_ms - self.created_ms >= self.timeout_ms

    def add_done_callback(self, callback: DoneCallback, out: OutputBuilder | None = None) -> None:
        """Run ``callback(future, out)`` on completion (at once, with ``out``, if already done)."""
        if self.done and out is not None:
            callback(self, out)
        else:
            self.callbacks.append(callback)

    def complete(self, response: AppendEntryResponse, out: OutputBuilder) -> bool:
        if self.done:
            return False
        if self.positions and response.code is Code.SUCCESS:
            response = response.with_(positions=self.positions)
        self.response = response
        for callback in self.callbacks:
            callback(self, out)
        return True


def quorum_index(water_marks: dict[str, int], term: int, committed_index: int, commit_only_current_term: bool,
                 term_of: Callable[[int], int]) -> int:
    """The QuorumAckChecker's quorum index: the median of every member's water mark, the leader's own
    included (``sorted desc [n/2]``), the highest index a majority holds. DLedger commits it as is; with
    ``commit_only_current_term`` (the ``raft`` profile, Raft's Figure 8 rule) an index above
    ``committed_index`` whose entry is not of ``term`` (``term_of(index)``; -1 if unreadable) is not
    committed: the answer stays at ``committed_index``."""
    marks = sorted(water_marks.values(), reverse=True)
    index = marks[len(marks) // 2]
    if commit_only_current_term and index > committed_index and term_of(index) != term:
        index = min(index, committed_index)
    return index


def safe_commit_index(water_marks: dict[str, int], term: int, committed_index: int,
                      term_of: Callable[[int], int]) -> int:
    """Lab 04's design exercise, the kit's answer: :func:`quorum_index` with Raft's rule (section 5.4.2)
    on every profile. An index a majority holds commits only if its entry is of the current ``term``;
    older entries below it then commit with it (log matching), never by counting their own replicas."""
    marks = sorted(water_marks.values(), reverse=True)
    index = marks[len(marks) // 2]
    if index > committed_index and term_of(index) != term:
        return committed_index
    return index


class QuorumAckChecker:
    """Models DLedgerEntryPusher.QuorumAckChecker, DLedger 0.3.1.2 (no thread, no state machine caller).

    Simplified: the 3 s watermark log line is not modelled. 0.3.x behaviour kept: when not leader it does
    nothing, so a deposed leader's futures wait until it leads again (then TERM_CHANGED).
    """

    def __init__(self, pusher: DLedgerEntryPusher) -> None:
        self.pusher = pusher
        self.last_quorum_index = -1
        self.last_check_leak_time_ms = NEVER

    def do_work(self, now_ms: int, out: OutputBuilder) -> None:
        p = self.pusher
        ms, store = p.member_state, p.store
        if not ms.is_leader():
            return
        term = ms.curr_term
        p.check_term_for_pending_map(term)
        p.check_term_for_water_mark(term)
        self.clear_other_terms(term, out)
        quorum_index = self.quorum_index(term)
        store.update_committed_index(term, quorum_index)
        responses = p.pending_append_responses_by_term[term]
        need_check, ack_num = False, 0
        for i in range(quorum_index, self.last_quorum_index, -1):
            future = responses.pop(i, None)
            if future is None:
                need_check = True
                break
            future.complete(self.success(future, term), out)
            ack_num += 1
        if ack_num == 0:
            self.time_out_futures(quorum_index, term, now_ms, out)
        if need_check or self.last_check_leak_time_ms == NEVER \
                or now_ms - self.last_check_leak_time_ms > p.config.leak_check_interval_ms:
            if p.get_peer_water_mark(term, ms.self_id) < store.ledger_end_index:
                p.update_peer_water_mark(term, ms.self_id, store.ledger_end_index)
                p.wakeup()  # Java's checker loops again a millisecond later with the new mark
            for i in sorted(i for i in responses if i <= quorum_index):
                future = responses.pop(i)
                future.complete(self.success(future, term), out)
            self.last_check_leak_time_ms = now_ms
        self.last_quorum_index = quorum_index

    def clear_other_terms(self, term: int, out: OutputBuilder) -> None:
        p = self.pusher
        pending, marks = p.pending_append_responses_by_term, p.peer_water_marks_by_term
        if len(pending) > 1 or (pending and term not in pending):  # (called on every pass: usually nothing)
            for other in sorted(t for t in pending if t != term):
                for index, future in sorted(pending.pop(other).items()):
                    future.complete(AppendEntryResponse(group=p.member_state.group, index=index,
                                                        code=Code.TERM_CHANGED, leader_id=p.member_state.leader_id), out)
        if len(marks) > 1 or (marks and term not in marks):
            for other in [t for t in marks if t != term]:
                del marks[other]

    def quorum_index(self, term: int) -> int:
        """:func:`quorum_index` of the term's watermarks (or the function plugged in for lab 04)."""
        p = self.pusher
        store = p.store

        def term_of(index: int) -> int:
            try:
                return store.get(index).term if index <= store.ledger_end_index else term
            except (DLedgerException, StoreError, CodecError):  # an unreadable entry cannot be committed
                return -1

        rule = plugs.resolve(COMMIT_RULE_PLUG, None)
        if rule is not None:  # lab 04's design exercise: the learner's rule decides on every profile
            return int(rule(dict(p.peer_water_marks_by_term[term]), term, store.committed_index, term_of))
        return plugs.resolve(QUORUM_INDEX_PLUG, quorum_index)(
            dict(p.peer_water_marks_by_term[term]), term, store.committed_index,
            bool(p.config.commit_only_current_term), term_of)

    def success(self, future: AppendFuture, term: int) -> AppendEntryResponse:
        ms = self.pusher.member_state
        return AppendEntryResponse(group=ms.group, term=term, index=future.index, pos=future.pos,
                                   leader_id=ms.self_id, code=Code.SUCCESS)

    def timeout_candidates(self, quorum_index: int, term: int) -> list[AppendFuture]:
        """The futures the timeout walk visits: from ``quorum_index + 1`` upward, stopping at the first
        index without a future (0.3.1.2) - or skipping such gaps when ``append_noop_on_leadership`` is on,
        because NOOP entries (and all but the last entry of a batch) have no future."""
        responses = self.pusher.pending_append_responses_by_term.get(term, {})
        if self.pusher.config.append_noop_on_leadership:
            return [responses[i] for i in sorted(responses) if i > quorum_index]
        found, i = [], quorum_index + 1
        while i in responses:
            found.append(responses[i])
            i += 1
        return found

    def time_out_futures(self, quorum_index: int, term: int, now_ms: int, out: OutputBuilder) -> None:
        ms = self.pusher.member_state
        for future in self.timeout_candidates(quorum_index, term):
            if not future.is_time_out(now_ms):
                break
            future.complete(AppendEntryResponse(group=ms.group, code=Code.WAIT_QUORUM_ACK_TIMEOUT, term=term,
                                                index=future.index, leader_id=ms.self_id), out)

    def next_deadline_ms(self) -> int | None:
        p = self.pusher
        if not p.member_state.is_leader():
            return None
        term = p.member_state.curr_term
        responses = p.pending_append_responses_by_term.get(term, {})
        times = []
        first = self._first_waiting(responses)
        if first is not None:
            times.append(first.created_ms + first.timeout_ms)
        own = p.peer_water_marks_by_term.get(term, {}).get(p.member_state.self_id, -1)
        if own < p.store.ledger_end_index or (first is not None or any(not f.done for f in responses.values())):
            last = self.last_check_leak_time_ms
            times.append(0 if last == NEVER else last + p.config.leak_check_interval_ms + 1)
        if len(p.pending_append_responses_by_term) > 1:
            times.append(0)
        return min(times) if times else None

    def _first_waiting(self, responses: dict[int, AppendFuture]) -> AppendFuture | None:
        """The first future of :meth:`timeout_candidates` not done yet (without building the list)."""
        if not responses:
            return None
        if self.pusher.config.append_noop_on_leadership:
            return next((responses[i] for i in sorted(responses) if i > self.last_quorum_index
                         and not responses[i].done), None)
        i = self.last_quorum_index + 1
        while i in responses:
            if not responses[i].done:
                return responses[i]
            i += 1
        return None


class DLedgerEntryPusher:
    """Models DLedgerEntryPusher, DLedger 0.3.1.2: see the module docstring.

    Simplified: no threads and no ``wakeup()`` signalling beyond a "dirty" flag; no state machine caller.
    """

    def __init__(self, config: DLedgerConfig, member_state: MemberState, store: DLedgerStore,
                 rpc: DLedgerRpcService) -> None:
        self.config = config
        self.member_state = member_state
        self.store = store
        self.rpc = rpc
        self.peer_water_marks_by_term: dict[int, dict[str, int]] = {}
        self.pending_append_responses_by_term: dict[int, dict[int, AppendFuture]] = {}
        self.state_changes: list[tuple[str, str, int]] = []
        """Dispatcher state changes ``(peer, state, index)`` not yet traced (``pump`` traces them)."""
        self.dispatchers = {peer: EntryDispatcher(self, peer) for peer in member_state.other_peer_ids()}
        self._dispatcher_list = [self.dispatchers[peer] for peer in sorted(self.dispatchers)]
        self.entry_handler = EntryHandler(self)
        self.quorum_ack_checker = QuorumAckChecker(self)
        self._woken = False
        self._next_handle = 1

    # ------------------------------------------------------------------ watermarks and futures
    def check_term_for_water_mark(self, term: int) -> None:
        if term not in self.peer_water_marks_by_term:
            self.peer_water_marks_by_term[term] = {peer: -1 for peer in sorted(self.member_state.peer_map)}

    def check_term_for_pending_map(self, term: int) -> None:
        self.pending_append_responses_by_term.setdefault(term, {})

    def update_peer_water_mark(self, term: int, peer_id: str, index: int) -> None:
        self.check_term_for_water_mark(term)
        marks = self.peer_water_marks_by_term[term]
        if marks.get(peer_id, -1) < index:
            marks[peer_id] = index

    def get_peer_water_mark(self, term: int, peer_id: str) -> int:
        self.check_term_for_water_mark(term)
        return self.peer_water_marks_by_term[term].get(peer_id, -1)

    def is_pending_full(self, term: int) -> bool:
        self.check_term_for_pending_map(term)
        return len(self.pending_append_responses_by_term[term]) > self.config.max_pending_requests_num

    def new_future(self, now_ms: int, **fields: object) -> AppendFuture:
        future = AppendFuture(handle=self._next_handle, created_ms=now_ms, timeout_ms=self.config.max_wait_ack_time_ms,
                              **fields)  # type: ignore[arg-type]
        self._next_handle += 1
        return future

    def wait_ack(self, entry: DLedgerEntry, now_ms: int, positions: tuple[int, ...] = ()) -> AppendFuture:
        """Register the future of ``entry`` (the last one of a batch) under ``[term][index]``."""
        self.update_peer_water_mark(entry.term, self.member_state.self_id, entry.index)
        self.check_term_for_pending_map(entry.term)
        future = self.new_future(now_ms, term=entry.term, index=entry.index, pos=entry.pos, positions=positions)
        self.pending_append_responses_by_term[entry.term][entry.index] = future
        self.wakeup()
        return future

    def wakeup(self) -> None:
        self._woken = True

    # ------------------------------------------------------------------ driving
    def pump(self, now_ms: int, out: OutputBuilder) -> None:
        """Run the handler, every dispatcher and the ack checker until none of them changes anything."""
        dispatchers = self._dispatcher_list
        for _ in range(16):
            self._woken = False
            if not self.member_state.is_leader():
                # the same as below without the calls that return at once when not leading: a dispatcher
                # only ends an elapsed back-off, the ack checker does nothing
                self.entry_handler.do_work(now_ms, out)
                changed = False
                for d in dispatchers:
                    if not d.waiting and d.idle_until_ms != NEVER and now_ms >= d.idle_until_ms:
                        d.idle_until_ms = NEVER
                        changed = True
                if not self._woken and not changed:
                    break
                continue
            self.entry_handler.do_work(now_ms, out)
            ms = self.member_state
            key = (ms.curr_term, ms.leader_id, self.store.ledger_end_index)
            changed = False
            for d in dispatchers:
                if d.is_quiet(key, now_ms):  # nothing but a timer can give it work (its do_work is a no-op)
                    continue
                before = d.signature()
                d.do_work(now_ms, out)
                d.note_quiet(key)
                changed = changed or d.signature() != before
            self.quorum_ack_checker.do_work(now_ms, out)
            if not self._woken and not changed:
                break
        for peer, state, index in self.state_changes:
            out.trace("push_state", peer=peer, state=state, index=index)
        self.state_changes.clear()

    def next_deadline_ms(self) -> int | None:
        if not self.member_state.is_leader():  # dispatchers and the ack checker wait for leadership
            return self.entry_handler.next_deadline_ms()
        ms = self.member_state
        key = (ms.curr_term, ms.leader_id, self.store.ledger_end_index)
        times = [d.quiet[1] if d.quiet is not None and d.quiet[0] == key else d.next_deadline_ms()
                 for d in self._dispatcher_list]
        times += [self.entry_handler.next_deadline_ms(), self.quorum_ack_checker.next_deadline_ms()]
        present = [t for t in times if t is not None]
        return min(present) if present else None
