"""The replication side of the message store: what HA and controller mode ask of it.

Models ``DefaultMessageStore.getCommitLogData`` / ``appendToCommitLog`` (classic HA),
``getConfirmOffset`` / ``setConfirmOffset``, ``isOffsetAligned`` and ``truncateFiles`` (5.x
controller mode), and ``AutoSwitchHAService.truncateInvalidMsg``.
"""

from __future__ import annotations

import logging
import threading

from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import MessageStoreConfig
from rocketlab.store.message_codec import check_message_and_return_size
from rocketlab.store.reput import ReputMessageService
from rocketlab.store.service_thread import ServiceThread

log = logging.getLogger(__name__)


class MessageStoreHA:
    """The replication part of :class:`~rocketlab.store.message_store.DefaultMessageStore` (a mixin: it
    reads the store's state, declared below)."""

    config: MessageStoreConfig
    commit_log: CommitLog | None
    reput_message_service: ReputMessageService | None
    shutdown_flag: bool
    _services: dict[str, ServiceThread]
    _flush_lock: threading.RLock

    # ---------------------------------------------------------------------------------- HA side ----
    def get_commit_log_data(self, offset: int, max_size: int | None = None) -> bytes | None:
        """``getCommitLogData``: raw bytes for a replica (see :meth:`CommitLog.get_data`)."""
        return self.commit_log.get_data(offset, max_size) if self.commit_log is not None else None

    def append_to_commit_log(self, start_offset: int, data: bytes) -> bool:
        """``appendToCommitLog``: a slave appends bytes from its master (see :meth:`CommitLog.append_data`)."""
        if self.shutdown_flag or self.commit_log is None:
            return False
        ok = self.commit_log.append_data(start_offset, data)
        reput_thread = self._services.get("ReputMessageService")
        if ok and reput_thread is not None:
            reput_thread.wakeup()
        return ok

    # ------------------------------------------------------------------ controller mode (5.x)
    def get_confirm_offset(self) -> int:
        """``getConfirmOffset``: how far consumers (the reput) may read (see CommitLog.get_confirm_offset)."""
        assert self.commit_log is not None
        return self.commit_log.get_confirm_offset()

    def get_confirm_offset_directly(self) -> int:
        """``getConfirmOffsetDirectly``: the tracked value, whatever the role (-1: never set)."""
        assert self.commit_log is not None
        return self.commit_log.confirm_offset

    def set_confirm_offset(self, offset: int) -> None:
        assert self.commit_log is not None
        self.commit_log.set_confirm_offset(offset)

    def is_offset_aligned(self, offset: int) -> bool:
        """``isOffsetAligned``: a record (or a file) starts at ``offset``."""
        assert self.commit_log is not None
        if offset == self.get_max_phy_offset() or offset % self.config.mapped_file_size_commit_log == 0:
            return True
        data = self.commit_log.get_data(offset)
        if not data:
            return False
        return check_message_and_return_size(data, 0, len(data), check_crc=False, read_body=False,
                                             expected_offset=offset).success

    def truncate_files(self, offset: int) -> bool:
        """``truncateFiles`` (a slave cutting its log back to where it agrees with the master): consume
        queues and commit log truncated at ``offset``, the queue table recovered, the reput moved back.
        False if ``offset`` is not at a record boundary (nothing is changed)."""
        cl, reput = self.commit_log, self.reput_message_service
        assert cl is not None and reput is not None
        if offset >= self.get_max_phy_offset():
            return True
        if not self.is_offset_aligned(offset):
            log.error("truncate_files: offset %d is not at a record boundary", offset)
            return False
        with self._flush_lock:
            self.truncate_dirty_logic_files(offset)
            cl.mapped_file_queue.truncate_dirty_files(offset)
        self.recover_topic_queue_table()
        reput.reput_from_offset = min(reput.reput_from_offset, offset)
        return True

    def truncate_invalid_msg(self) -> int:
        """``AutoSwitchHAService.truncateInvalidMsg``: when the dispatch is behind, scan from the reput
        point and cut the log at the first record that does not check out (a half-written tail); returns
        where it cut, or -1 if nothing was behind. Valid records are kept, even beyond confirmOffset."""
        cl, reput = self.commit_log, self.reput_message_service
        assert cl is not None and reput is not None
        if self.dispatch_behind_bytes() <= 0:
            return -1
        offset, top = reput.reput_from_offset, self.get_max_phy_offset()
        while offset < top:
            data = cl.get_data(offset)
            if not data:
                break
            request = check_message_and_return_size(data, 0, len(data), check_crc=False, read_body=False,
                                                    expected_offset=offset)
            if not request.success:
                break
            offset = cl.roll_next_file(offset) if request.msg_size == 0 else offset + request.msg_size
        if offset < top:
            with self._flush_lock:
                cl.mapped_file_queue.truncate_dirty_files(offset)
        return offset
