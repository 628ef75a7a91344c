"""EntryHandler: the follower side of replication - an out-of-order buffer with an ordered apply.

Theory of operation
-------------------
Pushes are pipelined and may arrive in any order. APPEND pushes wait in ``write_request_map`` keyed by
their first index (a second push of a buffered index is answered ``REPEATED_PUSH``); only the one at
``ledger_end_index + 1`` is applied, then the next, and so on. COMPARE, TRUNCATE and COMMIT pushes go
through a FIFO that is served first (``bounded_push_queue``, 0.3.1.1/0.3.1.2's #282 fix: capacity 1024,
``PUSH_REQUEST_IS_FULL`` beyond, answered NOT_FOLLOWER and emptied once the member is no longer a
follower; 0.3.2 blocks the RPC thread on a 100-slot queue instead, which here is an unbounded FIFO kept
across role changes: the same order, nothing refused); COMPARE and
TRUNCATE are barriers that drop every buffered APPEND (those are never answered: the leader's calls
time out). Each push is answered once, possibly much later, through its responder.

When nothing is applicable, :meth:`check_abnormal_future` runs at most every
``check_abnormal_future_interval_ms``: buffered pushes wholly at or below the local end are answered
SUCCESS if the stored entries equal them (a lost ack) else INCONSISTENT_STATE; if the push for
``end + 1`` is buffered nothing more happens; otherwise the smallest buffered push whose 1 s
``follower_push_timeout_ms`` expired is answered INCONSISTENT_STATE, which sends the leader back to
COMPARE. DLedger 0.3.1.2 leaves that push in the buffer (issue #251), so re-pushes of its index get
REPEATED_PUSH forever unless a COMPARE arrives; ``remove_stuck_buffered_push`` (0.3.2) removes it.

The follower's commit index is ``min(leader commit, local end)``, monotone (the store enforces both).
Java file: ``DLedgerEntryPusher.java``, inner class ``EntryHandler`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocketlab.core import OutputBuilder
from rocketlab.dledger.protocol import (
    DLedgerException,
    DLedgerResponseCode,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    check,
)
from rocketlab.dledger.rpc import Responder
from rocketlab.errors import CodecError, StoreError

if TYPE_CHECKING:
    from rocketlab.dledger.entry_pusher import DLedgerEntryPusher

NEVER = -1
Code = DLedgerResponseCode
QUEUE_CAPACITY = 1024


@dataclass(eq=False)
class PendingPush:
    """A push and the TimeoutFuture that answers it (Java ``Pair<PushEntryRequest, TimeoutFuture>``)."""

    request: PushEntryRequest
    respond: Responder
    created_ms: int
    done: bool = False

    def complete(self, response: PushEntryResponse, out: OutputBuilder) -> None:
        if not self.done:
            self.done = True
            self.respond(response, out)

    def is_time_out(self, now_ms: int, timeout_ms: int) -> bool:
        return now_ms - self.created_ms >= timeout_ms


class EntryHandler:
    """Models DLedgerEntryPusher.EntryHandler, DLedger 0.3.1.2 (see the module docstring).

    Simplified: no thread; :meth:`do_work` applies everything applicable right after each input, so the
    compare/truncate/commit queue is drained at once (Java serves one item per loop iteration).
    """

    def __init__(self, pusher: DLedgerEntryPusher) -> None:
        self.pusher = pusher
        self.write_request_map: dict[int, PendingPush] = {}
        self.compare_or_truncate_requests: deque[PendingPush] = deque()
        self.last_check_fast_forward_time_ms = NEVER

    # ------------------------------------------------------------------ inbound
    def handle_push(self, request: PushEntryRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        """Buffer or queue a push; raises DLedgerException(UNEXPECTED_ARGUMENT) for a malformed one."""
        pending = PendingPush(request, respond, now_ms)
        if request.type is PushType.APPEND:
            if request.is_batch:
                check(request.count > 0, Code.UNEXPECTED_ARGUMENT, "empty batch")
            else:
                check(request.entry is not None, Code.UNEXPECTED_ARGUMENT, "APPEND without entry")
            index = request.first_entry_index
            if index in self.write_request_map:
                pending.complete(self.build_response(request, Code.REPEATED_PUSH), out)
            else:
                self.write_request_map[index] = pending
        elif request.type is PushType.COMMIT:
            self._enqueue(pending, out)
        elif request.type in (PushType.COMPARE, PushType.TRUNCATE):
            check(request.entry is not None, Code.UNEXPECTED_ARGUMENT, f"{request.type.name} without entry")
            self.write_request_map.clear()
            self._enqueue(pending, out)
        else:
            raise DLedgerException(Code.UNEXPECTED_ARGUMENT, f"unknown push type {request.type}")

    def _enqueue(self, pending: PendingPush, out: OutputBuilder) -> None:
        if self.pusher.config.bounded_push_queue and len(self.compare_or_truncate_requests) >= QUEUE_CAPACITY:
            pending.complete(self.build_response(pending.request, Code.PUSH_REQUEST_IS_FULL), out)
        else:
            self.compare_or_truncate_requests.append(pending)

    def build_response(self, request: PushEntryRequest, code: DLedgerResponseCode) -> PushEntryResponse:
        store = self.pusher.store
        if request.type is PushType.COMMIT:
            index, count = None, 0
        else:
            index, count = request.first_entry_index, request.count
        return PushEntryResponse(group=request.group, code=code, term=request.term, index=index, count=count,
                                 begin_index=store.ledger_begin_index, end_index=store.ledger_end_index)

    # ------------------------------------------------------------------ the loop
    def do_work(self, now_ms: int, out: OutputBuilder) -> None:
        """Apply everything applicable now; then, if stuck, the abnormal-future check."""
        store = self.pusher.store
        if not self.pusher.member_state.is_follower():
            if self.pusher.config.bounded_push_queue:
                self.clear_compare_or_truncate_requests_if_need(out)
            return
        while True:
            if self.compare_or_truncate_requests:
                pending = self.compare_or_truncate_requests.popleft()
                self._handle_queued(pending, out)
                continue
            pending = self.write_request_map.pop(store.ledger_end_index + 1, None)
            if pending is None:
                self.check_abnormal_future(store.ledger_end_index, now_ms, out)
                return
            self.handle_do_append(store.ledger_end_index + 1, pending, out)

    def clear_compare_or_truncate_requests_if_need(self, out: OutputBuilder) -> None:
        while self.compare_or_truncate_requests:
            pending = self.compare_or_truncate_requests.popleft()
            pending.complete(self.build_response(pending.request, Code.NOT_FOLLOWER), out)

    def _handle_queued(self, pending: PendingPush, out: OutputBuilder) -> None:
        t = pending.request.type
        if t is PushType.TRUNCATE:
            self.handle_do_truncate(pending, out)
        elif t is PushType.COMPARE:
            self.handle_do_compare(pending, out)
        elif t is PushType.COMMIT:
            self.handle_do_commit(pending, out)

    def handle_do_append(self, write_index: int, pending: PendingPush, out: OutputBuilder) -> None:
        request, store = pending.request, self.pusher.store
        try:
            check(write_index == request.first_entry_index, Code.INCONSISTENT_STATE)
            for entry in request.entries():
                assert request.leader_id is not None
                store.append_as_follower(entry, request.term, request.leader_id)
            pending.complete(self.build_response(request, Code.SUCCESS), out)
            store.update_committed_index(request.term, request.commit_index)
        except (DLedgerException, StoreError, CodecError):
            pending.complete(self.build_response(request, Code.INCONSISTENT_STATE), out)

    def handle_do_commit(self, pending: PendingPush, out: OutputBuilder) -> None:
        request = pending.request
        try:
            self.pusher.store.update_committed_index(request.term, request.commit_index)
            pending.complete(self.build_response(request, Code.SUCCESS), out)
        except (DLedgerException, StoreError, CodecError):
            pending.complete(self.build_response(request, Code.UNKNOWN), out)

    def handle_do_compare(self, pending: PendingPush, out: OutputBuilder) -> None:
        request = pending.request
        assert request.entry is not None
        try:
            local = self.pusher.store.get(request.entry.index)
            check(request.entry == local, Code.INCONSISTENT_STATE)
            pending.complete(self.build_response(request, Code.SUCCESS), out)
        except (DLedgerException, StoreError, CodecError):
            pending.complete(self.build_response(request, Code.INCONSISTENT_STATE), out)

    def handle_do_truncate(self, pending: PendingPush, out: OutputBuilder) -> None:
        request, store = pending.request, self.pusher.store
        assert request.entry is not None and request.leader_id is not None
        try:
            index = store.truncate(request.entry, request.term, request.leader_id)
            check(index == request.entry.index, Code.INCONSISTENT_STATE)
            pending.complete(self.build_response(request, Code.SUCCESS), out)
            store.update_committed_index(request.term, request.commit_index)
        except (DLedgerException, StoreError, CodecError):
            pending.complete(self.build_response(request, Code.INCONSISTENT_STATE), out)

    # ------------------------------------------------------------------ stuck buffers
    def check_abnormal_future(self, end_index: int, now_ms: int, out: OutputBuilder) -> None:
        cfg = self.pusher.config
        last = self.last_check_fast_forward_time_ms
        if last != NEVER and now_ms - last < cfg.check_abnormal_future_interval_ms:
            return
        self.last_check_fast_forward_time_ms = now_ms
        if self.write_request_map:
            self.check_append_future(end_index, now_ms, out)

    def check_append_future(self, end_index: int, now_ms: int, out: OutputBuilder) -> None:
        cfg, store = self.pusher.config, self.pusher.store
        min_fast_forward_index: int | None = None
        for first in sorted(self.write_request_map):
            pending = self.write_request_map[first]
            request = pending.request
            if request.last_entry_index <= end_index:
                try:
                    for entry in request.entries():
                        check(entry == store.get(entry.index), Code.INCONSISTENT_STATE)
                    pending.complete(self.build_response(request, Code.SUCCESS), out)
                except (DLedgerException, StoreError, CodecError):
                    pending.complete(self.build_response(request, Code.INCONSISTENT_STATE), out)
                del self.write_request_map[first]
                continue
            if first == end_index + 1:
                return
            if not pending.is_time_out(now_ms, cfg.follower_push_timeout_ms):
                continue
            if min_fast_forward_index is None or first < min_fast_forward_index:
                min_fast_forward_index = first
        if min_fast_forward_index is None:
            return
        if cfg.remove_stuck_buffered_push:
            pending = self.write_request_map.pop(min_fast_forward_index)
        else:
            pending = self.write_request_map[min_fast_forward_index]
        pending.complete(self.build_response(pending.request, Code.INCONSISTENT_STATE), out)

    def next_deadline_ms(self) -> int | None:
        if not self.write_request_map or not self.pusher.member_state.is_follower():
            return None
        last = self.last_check_fast_forward_time_ms
        due = 0 if last == NEVER else last + self.pusher.config.check_abnormal_future_interval_ms
        oldest = min(p.created_ms for p in self.write_request_map.values())
        return max(due, oldest + self.pusher.config.follower_push_timeout_ms)
