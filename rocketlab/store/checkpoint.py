"""The store checkpoint: how far the CommitLog, the ConsumeQueues and the index are known to be safe.

Models ``org.apache.rocketmq.store.StoreCheckpoint``.
"""

from __future__ import annotations

import os
import struct

from rocketlab.errors import StoreError
from rocketlab.i18n import _

CHECKPOINT_FILE_SIZE = 4096
_LAYOUT = struct.Struct(">qqqqq")


class StoreCheckpoint:
    """Models ``StoreCheckpoint``: a 4 KiB file whose first 40 bytes are five big-endian longs,
    ``physic_msg_timestamp`` (store time of the last flushed CommitLog message),
    ``logics_msg_timestamp`` (last message dispatched to a ConsumeQueue), ``index_msg_timestamp``
    (end time of the last full index file), ``master_flushed_offset`` and ``confirm_phy_offset``
    (both 5.x).

    Setters only change memory; :meth:`flush` writes and fsyncs. Simplified: ``os.pwrite`` instead
    of a mapped page.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.physic_msg_timestamp = 0
        self.logics_msg_timestamp = 0
        self.index_msg_timestamp = 0
        self.master_flushed_offset = 0
        self.confirm_phy_offset = 0
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(_("{path}: cannot open checkpoint: {why}").format(path=path, why=exc.strerror)) from exc
        size = os.fstat(self._fd).st_size
        if size == 0:
            os.ftruncate(self._fd, CHECKPOINT_FILE_SIZE)
        elif size != CHECKPOINT_FILE_SIZE:
            os.close(self._fd)
            raise StoreError(_("{path}: checkpoint is {size} bytes, expected {expected}").format(
                path=path, size=size, expected=CHECKPOINT_FILE_SIZE))
        else:
            (
                self.physic_msg_timestamp,
                self.logics_msg_timestamp,
                self.index_msg_timestamp,
                self.master_flushed_offset,
                self.confirm_phy_offset,
            ) = _LAYOUT.unpack(os.pread(self._fd, _LAYOUT.size, 0))

    def flush(self) -> None:
        data = _LAYOUT.pack(
            self.physic_msg_timestamp,
            self.logics_msg_timestamp,
            self.index_msg_timestamp,
            self.master_flushed_offset,
            self.confirm_phy_offset,
        )
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def shutdown(self) -> None:
        if self._fd >= 0:
            self.flush()
            os.close(self._fd)
            self._fd = -1

    def get_min_timestamp(self) -> int:
        """``getMinTimestamp``: the older of the physic and logics times, less 3 s, never negative."""
        return max(0, min(self.physic_msg_timestamp, self.logics_msg_timestamp) - 3000)

    def get_min_timestamp_index(self) -> int:
        """``getMinTimestampIndex``: the older of :meth:`get_min_timestamp` and the index time."""
        return min(self.get_min_timestamp(), self.index_msg_timestamp)

    def __repr__(self) -> str:
        return (
            f"StoreCheckpoint(physic={self.physic_msg_timestamp}, logics={self.logics_msg_timestamp}, "
            f"index={self.index_msg_timestamp})"
        )
