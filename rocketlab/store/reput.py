"""The reput: tail the CommitLog and hand every record to the dispatchers (ConsumeQueue, index).

Models ``DefaultMessageStore.ReputMessageService``, ``CommitLogDispatcherBuildConsumeQueue`` and
``CommitLogDispatcherBuildIndex``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from rocketlab.errors import StoreError
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.message import MessageSysFlag
from rocketlab.store.message_codec import check_message_and_return_size

if TYPE_CHECKING:
    from rocketlab.store.commit_log import CommitLog
    from rocketlab.store.index_service import IndexService

log = logging.getLogger(__name__)


class CommitLogDispatcher(Protocol):
    """Models ``CommitLogDispatcher``: receives every record the reput reads, in order."""

    def dispatch(self, request: DispatchRequest) -> None: ...


class ConsumeQueueBuilder(Protocol):
    def put_message_position_info(self, request: DispatchRequest) -> None: ...


class CommitLogDispatcherBuildConsumeQueue:
    """Models ``CommitLogDispatcherBuildConsumeQueue``: only NOT and COMMIT transaction types reach a
    ConsumeQueue; PREPARED and ROLLBACK records stay in the CommitLog only."""

    def __init__(self, store: ConsumeQueueBuilder) -> None:
        self.store = store

    def dispatch(self, request: DispatchRequest) -> None:
        tran = MessageSysFlag.get_transaction_value(request.sys_flag)
        if tran == MessageSysFlag.TRANSACTION_NOT_TYPE or tran == MessageSysFlag.TRANSACTION_COMMIT_TYPE:
            self.store.put_message_position_info(request)


class CommitLogDispatcherBuildIndex:
    """Models ``CommitLogDispatcherBuildIndex`` (``messageIndexEnable``). An index file that cannot be
    created or written is reported to ``on_error`` (the store stops taking puts) instead of stopping
    the reput."""

    def __init__(self, index_service: IndexService, enabled: bool, on_error: Callable[[str], None]) -> None:
        self.index_service = index_service
        self.enabled = enabled
        self.on_error = on_error

    def dispatch(self, request: DispatchRequest) -> None:
        if self.enabled:
            try:
                self.index_service.build_index(request)
            except (OSError, StoreError) as exc:
                log.exception("build index failed at %d", request.commit_log_offset)
                self.on_error(f"index: {exc}")


class ReputMessageService:
    """Models ``ReputMessageService``: from ``reput_from_offset`` up to the CommitLog's confirm offset
    (4.x: the max offset; see ``read_uncommitted``), parse records without CRC or body and dispatch
    each one to every dispatcher in order.

    * A blank jumps to the next file.
    * A complete record whose lengths disagree is logged and skipped (Java does the same).
    * A torn or garbage record stops the round and the offset stays put: on a slave the rest of the
      record arrives with the next HA chunk. Deviation: Java's master skips the rest of the slice;
      here the reput waits in every role, so a damaged record is never skipped silently (the store
      then keeps its abort file at shutdown and the next start's recovery cuts the damage).

    :meth:`do_reput` is one round, callable from a thread or by hand; it is idempotent because the
    dispatchers are.
    """

    def __init__(self, commit_log: CommitLog, dispatchers: list[CommitLogDispatcher]) -> None:
        self.commit_log = commit_log
        self.dispatcher_list = dispatchers
        self.reput_from_offset = 0
        self.last_end_offset = -1
        """The end (the confirm offset) the last round dispatched up to; -1 before the first round."""
        self.stalled_reason: str | None = None
        self.dispatched_total = 0
        self.skipped_bytes = 0
        self._lock = threading.Lock()

    def behind(self) -> int:
        return self.commit_log.get_confirm_offset() - self.reput_from_offset

    def is_commit_log_available(self) -> bool:
        return self.reput_from_offset < self.commit_log.get_confirm_offset()

    def do_dispatch(self, request: DispatchRequest) -> None:
        for dispatcher in self.dispatcher_list:
            dispatcher.dispatch(request)

    def do_reput(self, max_bytes: int | None = None) -> int:
        """One round, at most about ``max_bytes`` of records (None: all there is). Returns the number
        of messages dispatched."""
        with self._lock:
            return self._do_reput(max_bytes)

    def _skip_below_min_offset(self) -> None:
        """A reput offset below the commit log's first (its files deleted meanwhile) jumps to it."""
        min_offset = self.commit_log.get_min_offset()
        if self.reput_from_offset < min_offset:
            log.warning("reput_from_offset %d below commit log min offset %d: jumping", self.reput_from_offset, min_offset)
            self.reput_from_offset = min_offset

    def _do_reput(self, max_bytes: int | None = None) -> int:
        cl = self.commit_log
        self._skip_below_min_offset()
        end = cl.get_confirm_offset()
        self.last_end_offset = end  # getReputEndOffset of this round
        if max_bytes is not None:
            budget_end = self.reput_from_offset + max_bytes
        dispatched = 0
        dispatchers = self.dispatcher_list
        mfq = cl.mapped_file_queue
        while self.reput_from_offset < end:
            mf = mfq.find_mapped_file_by_offset(self.reput_from_offset)
            if mf is None:
                break
            base = mf.file_from_offset
            pos = self.reput_from_offset - base
            limit = min(mf.get_read_position(), end - base)
            mm = mf.mm
            while pos < limit:
                req = check_message_and_return_size(
                    mm, pos, limit, check_crc=False, read_body=False, expected_offset=base + pos
                )
                size = req.msg_size
                if req.success:
                    if size > 0:
                        for dispatcher in dispatchers:
                            dispatcher.dispatch(req)
                        dispatched += 1
                        pos += size
                        if max_bytes is not None and base + pos >= budget_end:
                            self.reput_from_offset = base + pos
                            self.stalled_reason = None
                            self.dispatched_total += dispatched
                            return dispatched
                    else:  # END_OF_FILE blank: roll to the next file
                        pos = mf.file_size
                        break
                elif size > 0:
                    log.error("[BUG] reput: %s; skipping %d bytes at %d", req.reason, size, base + pos)
                    self.skipped_bytes += size
                    pos += size
                else:
                    self.stalled_reason = f"waiting at {base + pos}: {req.reason}"
                    self.reput_from_offset = base + pos
                    self.dispatched_total += dispatched
                    return dispatched
            self.reput_from_offset = base + pos
            if pos < mf.file_size:  # caught up inside this file
                break
        self.stalled_reason = None
        self.dispatched_total += dispatched
        return dispatched


__all__ = [
    "CommitLogDispatcher",
    "CommitLogDispatcherBuildConsumeQueue",
    "CommitLogDispatcherBuildIndex",
    "ReputMessageService",
]
