"""Retention: delete expired CommitLog files, then what the queues and the index no longer need.

Models ``DefaultMessageStore.CleanCommitLogService`` and ``CleanConsumeQueueService`` (4.x).
"""

from __future__ import annotations

import logging
import shutil
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocketlab.store.commit_log import CommitLog
    from rocketlab.store.config import MessageStoreConfig
    from rocketlab.store.consume_queue import ConsumeQueue
    from rocketlab.store.index_service import IndexService

log = logging.getLogger(__name__)

DISK_SPACE_WARNING_LEVEL_RATIO = 0.90  # beyond it the store is marked disk-full (puts refused)
DISK_SPACE_CLEAN_FORCIBLY_RATIO = 0.85  # beyond it files are deleted at once, expired or not
MAX_MANUAL_DELETE_FILE_TIMES = 20


class CleanCommitLogService:
    """Models ``CleanCommitLogService``. A round deletes CommitLog files last modified more than
    ``file_reserved_time`` hours ago when it is ``delete_when`` o'clock, when the disk holding the
    CommitLog is fuller than ``disk_max_used_space_ratio`` percent, or while a manual deletion is
    pending. Above 85% it deletes immediately (when ``clean_file_forcibly_enable``); above 90% the store
    is marked disk-full.

    A file's age comes from its modification time on disk, as in Java, so with a simulated clock
    call :meth:`delete_expired_files` with a wall-clock ``now_ms``.

    Simplified: the hour is taken in UTC from the store clock (Java: local time); no pause between
    two deletions; the 120 s forced-destroy grace is gone.
    """

    def __init__(self, config: MessageStoreConfig) -> None:
        self.config = config
        self.manual_delete_file_several_times = 0
        self.disk_full = False

    def execute_delete_files_manually(self) -> None:
        self.manual_delete_file_several_times = MAX_MANUAL_DELETE_FILE_TIMES

    def is_time_to_delete(self, now_ms: int) -> bool:
        hour = time.gmtime(now_ms // 1000).tm_hour
        return any(part.strip().isdigit() and int(part) == hour for part in self.config.delete_when.split(";"))

    def disk_ratio(self) -> float:
        """Used fraction of the disk holding the CommitLog, or -1 when it cannot be read."""
        try:
            usage = shutil.disk_usage(self.config.store_path_commit_log)
        except OSError:
            return -1.0
        return usage.used / usage.total if usage.total else -1.0

    def delete_expired_files(self, commit_log: CommitLog, now_ms: int) -> int:
        ratio = self.disk_ratio()
        clean_immediately = self.config.clean_file_forcibly_enable and ratio > DISK_SPACE_CLEAN_FORCIBLY_RATIO
        self.disk_full = ratio > DISK_SPACE_WARNING_LEVEL_RATIO
        space_full = ratio < 0 or ratio > self.config.disk_max_used_space_ratio / 100
        manual = self.manual_delete_file_several_times > 0
        if not (self.is_time_to_delete(now_ms) or space_full or manual):
            return 0
        if manual:
            self.manual_delete_file_several_times -= 1
        deleted = commit_log.delete_expired_file(self.config.file_reserved_time * 3600 * 1000, now_ms, clean_immediately)
        if deleted:
            log.info("deleted %d expired commit log files (disk %.0f%% used)", deleted, ratio * 100)
        return deleted


class CleanConsumeQueueService:
    """Models ``CleanConsumeQueueService``: once the CommitLog's min offset moved, drop ConsumeQueue
    files and index files that only point below it, and correct each queue's min offset."""

    def __init__(self) -> None:
        self.last_physical_min_offset = 0

    def delete_expired_files(
        self, commit_log: CommitLog, queues: list[ConsumeQueue], index_service: IndexService | None
    ) -> None:
        min_offset = commit_log.get_min_offset()
        if min_offset <= self.last_physical_min_offset:
            return
        self.last_physical_min_offset = min_offset
        for cq in queues:
            cq.delete_expired_file(min_offset)
        if index_service is not None:
            index_service.delete_expired_file(min_offset)
