"""Flushing the CommitLog: group commit for SYNC_FLUSH, periodic page-gated flush for ASYNC_FLUSH.

Models ``CommitLog.GroupCommitRequest``, ``CommitLog.GroupCommitService``,
``CommitLog.FlushRealTimeService`` and ``FlushDiskWatcher``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rocketlab.store.status import PutMessageResult, PutMessageStatus

if TYPE_CHECKING:
    from rocketlab.store.checkpoint import StoreCheckpoint
    from rocketlab.store.mapped_file_queue import MappedFileQueue

_COMPLETE = threading.Lock()


class GroupCommitRequest:
    """Models ``GroupCommitRequest``: "tell me when everything below ``next_offset`` is on disk".

    The first completion wins (``FlushDiskWatcher`` relies on that): once timed out, a later flush
    cannot turn the answer back into ``PUT_OK``.
    """

    __slots__ = ("next_offset", "deadline_ms", "status", "_event")

    def __init__(self, next_offset: int, deadline_ms: int) -> None:
        self.next_offset = next_offset
        self.deadline_ms = deadline_ms
        self.status: PutMessageStatus | None = None
        self._event = threading.Event()

    def wakeup_customer(self, status: PutMessageStatus) -> bool:
        with _COMPLETE:
            if self.status is not None:
                return False
            self.status = status
        self._event.set()
        return True

    def done(self) -> bool:
        return self.status is not None

    def wait(self, timeout_s: float | None) -> PutMessageStatus | None:
        self._event.wait(timeout_s)
        return self.status

    def __repr__(self) -> str:
        return f"GroupCommitRequest(next_offset={self.next_offset}, status={self.status})"


class PutMessageFuture:
    """The kit's stand-in for ``CompletableFuture<PutMessageResult>`` of ``asyncPutMessage``.

    ``done()`` turns true when the flush (if one was asked for) completed. In threaded mode
    :meth:`result` blocks until then, or until the request's deadline, when it completes the request
    with ``FLUSH_DISK_TIMEOUT`` as ``FlushDiskWatcher`` does. A driver without threads calls
    ``store.flush()`` (or ``check_timeouts``) and then reads :meth:`result` once ``done()``.
    """

    __slots__ = ("_result", "flush_request", "_wait")

    def __init__(
        self,
        result: PutMessageResult,
        flush_request: GroupCommitRequest | None = None,
        wait: Callable[[GroupCommitRequest], None] | None = None,
    ) -> None:
        self._result = result
        self.flush_request = flush_request
        self._wait = wait

    def done(self) -> bool:
        return self.flush_request is None or self.flush_request.done()

    def result_so_far(self) -> PutMessageResult:
        """The put's result as appended (where it went), without waiting for the flush: its status
        may still change to ``FLUSH_DISK_TIMEOUT`` when :meth:`result` is read once ``done()``."""
        return self._result

    def result(self) -> PutMessageResult:
        req = self.flush_request
        if req is not None:
            if not req.done() and self._wait is not None:
                self._wait(req)
            status = req.status
            if status is None:
                raise RuntimeError("the flush has not completed yet: drive store.flush() first or check done()")
            if status is not PutMessageStatus.PUT_OK and self._result.status is PutMessageStatus.PUT_OK:
                self._result.status = status
        return self._result


class GroupCommitService:
    """Models ``CommitLog.GroupCommitService`` (SYNC_FLUSH).

    Producers append under the put lock, release it, and then :meth:`put_request`; :meth:`do_commit`
    swaps the request list (producers never wait for the flusher to take a lock), flushes once for
    all of them and completes each request. One fsync serves every message appended before it:
    that is the group commit. 4.x semantics: up to two flush attempts per request, because a message
    may end in the next file and ``MappedFileQueue.flush`` handles one file per call.
    """

    def __init__(self, mapped_file_queue: MappedFileQueue, checkpoint: StoreCheckpoint | None) -> None:
        self.mapped_file_queue = mapped_file_queue
        self.checkpoint = checkpoint
        self._lock = threading.Lock()
        self._requests_write: list[GroupCommitRequest] = []
        self._committing: list[GroupCommitRequest] = []
        """The requests of the round under way (its flush may be slow: the watcher still sees them)."""
        self.wakeup: Callable[[], None] = _noop
        self.flush_count = 0

    def put_request(self, request: GroupCommitRequest) -> None:
        with self._lock:
            self._requests_write.append(request)
        self.wakeup()

    def pending(self) -> int:
        with self._lock:
            return len(self._requests_write)

    def do_commit(self) -> int:
        """One round: flush and complete every queued request. Returns how many were handled."""
        with self._lock:
            requests, self._requests_write = self._requests_write, []
            self._committing = requests
        try:
            return self._commit(requests)
        finally:
            with self._lock:
                self._committing = []

    def _commit(self, requests: list[GroupCommitRequest]) -> int:
        mfq = self.mapped_file_queue
        if not requests:
            # WAIT=false messages only wake the service; flush what is there anyway (as Java does).
            if mfq.flushed_where < mfq.get_max_offset():
                mfq.flush(0)
                self.flush_count += 1
            return 0
        for req in requests:
            if req.done():  # already timed out by the watcher
                continue
            flush_ok = mfq.flushed_where >= req.next_offset
            for _ in range(2):
                if flush_ok:
                    break
                mfq.flush(0)
                self.flush_count += 1
                flush_ok = mfq.flushed_where >= req.next_offset
            req.wakeup_customer(PutMessageStatus.PUT_OK if flush_ok else PutMessageStatus.FLUSH_DISK_TIMEOUT)
        if self.checkpoint is not None and mfq.store_timestamp > 0:
            self.checkpoint.physic_msg_timestamp = mfq.store_timestamp
        return len(requests)

    def check_timeouts(self, now_ms: int) -> int:
        """``FlushDiskWatcher`` as a step: complete requests past their deadline, queued or in a round
        under way, with ``FLUSH_DISK_TIMEOUT`` (the message stays stored). Returns how many timed out."""
        with self._lock:
            overdue = [r for r in (*self._committing, *self._requests_write) if r.deadline_ms <= now_ms and not r.done()]
        return sum(r.wakeup_customer(PutMessageStatus.FLUSH_DISK_TIMEOUT) for r in overdue)

    def shutdown_flush(self) -> None:
        """Complete whatever is still queued (``GroupCommitService.run``'s final round)."""
        self.do_commit()


class FlushRealTimeService:
    """Models ``CommitLog.FlushRealTimeService`` (ASYNC_FLUSH): each step flushes when at least
    ``flush_commit_log_least_pages`` 4 KiB pages are dirty, and everything once
    ``flush_commit_log_thorough_interval`` ms have passed since the last thorough flush. The store
    time of the last flushed message goes to the checkpoint."""

    def __init__(
        self,
        mapped_file_queue: MappedFileQueue,
        checkpoint: StoreCheckpoint | None,
        least_pages: int,
        thorough_interval_ms: int,
        clock: Callable[[], int],
    ) -> None:
        self.mapped_file_queue = mapped_file_queue
        self.checkpoint = checkpoint
        self.least_pages = least_pages
        self.thorough_interval_ms = thorough_interval_ms
        self.clock = clock
        self.last_flush_timestamp = 0
        self.wakeup: Callable[[], None] = _noop

    def do_flush(self, least_pages: int | None = None) -> bool:
        """One flush attempt; returns True when something was written to disk."""
        if least_pages is None:
            least_pages = self.least_pages
            now = self.clock()
            if now >= self.last_flush_timestamp + self.thorough_interval_ms:
                self.last_flush_timestamp = now
                least_pages = 0
        moved = not self.mapped_file_queue.flush(least_pages)
        if self.checkpoint is not None and self.mapped_file_queue.store_timestamp > 0:
            self.checkpoint.physic_msg_timestamp = self.mapped_file_queue.store_timestamp
        return moved

    def shutdown_flush(self) -> None:
        """Java retries ``flush(0)`` up to 10 times at shutdown (one file per call)."""
        for _ in range(10):
            if not self.do_flush(0):
                break


def _noop() -> None:
    return None
