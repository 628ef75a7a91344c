"""The background services of the message store: flushes, the consume-queue flush, retention.

Models the service threads ``DefaultMessageStore`` starts (its inner ``FlushConsumeQueueService``,
``CleanCommitLogService`` and ``CleanConsumeQueueService``, and the CommitLog's flusher), and the
steps a caller drives itself when the store runs without threads (a deterministic simulator).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rocketlab.errors import StoreError
from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.clean_service import CleanCommitLogService, CleanConsumeQueueService
from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import MessageStoreConfig
from rocketlab.store.flush import FlushRealTimeService, GroupCommitService
from rocketlab.store.index_service import IndexService
from rocketlab.store.reput import ReputMessageService
from rocketlab.store.service_thread import ServiceThread


class MessageStoreServices:
    """The service part of :class:`~rocketlab.store.message_store.DefaultMessageStore` (a mixin: it
    reads the store's state, declared below)."""

    config: MessageStoreConfig
    clock: Callable[[], int]
    commit_log: CommitLog | None
    store_checkpoint: StoreCheckpoint | None
    index_service: IndexService | None
    reput_message_service: ReputMessageService | None
    clean_service: CleanCommitLogService
    clean_consume_queue_service: CleanConsumeQueueService
    disk_full: bool
    _services: dict[str, ServiceThread]
    _flush_lock: threading.RLock
    _last_flush_cq_timestamp: int

    def _locked(self, step: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            with self._flush_lock:
                step()
        return run

    def _flush_services(self, after_flush: Callable[[], object] | None = None) -> list[ServiceThread]:
        """The CommitLog's flusher (GroupCommitService or FlushRealTimeService; then ``after_flush``, if
        given) and FlushConsumeQueueService, each step under the flush lock."""
        cl, config = self.commit_log, self.config
        assert cl is not None
        service: GroupCommitService | FlushRealTimeService
        if cl.group_commit_service is not None:
            service = cl.group_commit_service
            name, flush, interval_s = "GroupCommitService", service.do_commit, 0.010
        else:
            assert cl.flush_real_time_service is not None
            service = cl.flush_real_time_service
            name, flush, interval_s = "FlushRealTimeService", service.do_flush, config.flush_interval_commit_log / 1000

        def step() -> None:
            flush()
            if after_flush is not None:
                after_flush()

        flusher = ServiceThread(name, self._locked(step), interval_s, self._locked(service.shutdown_flush))
        service.wakeup = flusher.wakeup
        return [flusher, ServiceThread("FlushConsumeQueueService", self._locked(self.flush_consume_queue_step),
                                       config.flush_interval_consume_queue / 1000)]

    def _start_services(self) -> None:
        reput = self.reput_message_service
        assert reput is not None
        services = [
            *self._flush_services(),
            ServiceThread("ReputMessageService", reput.do_reput, 0.001),
            ServiceThread("CleanCommitLogService", self.delete_expired_files, self.config.clean_resource_interval / 1000),
        ]
        self._run_services(services)

    def _run_services(self, services: list[ServiceThread]) -> None:
        self._services = {service.name: service for service in services}
        for service in services:
            service.start()

    def start_flush_services(self, after_flush: Callable[[], object] | None = None) -> None:
        """For a store opened with ``threads=False`` whose owner drives the rest (a broker core in the TCP
        runtime): run only the flushes on threads, so an fsync never holds up the owner's thread: Java's
        FlushRealTimeService (ASYNC_FLUSH: at least ``flush_commit_log_least_pages`` dirty pages,
        everything every thorough interval) or GroupCommitService (SYNC_FLUSH: :meth:`async_put_message`
        returns at once and the thread completes its future), and FlushConsumeQueueService. The owner
        keeps dispatching (reput) itself; :meth:`shutdown` stops the threads before its own last flush.
        ``after_flush`` runs on the flush thread after each CommitLog flush (controller mode: the
        checkpoint with its confirm offset). A truncation waits for a flush under way (the flush lock)."""
        if self.commit_log is None:
            raise StoreError("flush services on threads are for an open store")
        if not self._services:
            self._run_services(self._flush_services(after_flush))

    def halt_services(self) -> None:
        """Stop the service threads without their last flush (a crash: nothing more reaches the disk)."""
        for service in self._services.values():
            service.halt()
        self._services = {}

    # ================================================================================ flushing ====
    def flush(self) -> None:
        """Flush the CommitLog now (all of it) and complete pending SYNC_FLUSH requests."""
        assert self.commit_log is not None
        self.commit_log.flush(0)

    def check_flush_timeouts(self, now_ms: int | None = None) -> int:
        """``FlushDiskWatcher`` step: time out overdue SYNC_FLUSH requests (the messages stay stored)."""
        assert self.commit_log is not None
        gcs = self.commit_log.group_commit_service
        return 0 if gcs is None else gcs.check_timeouts(self.clock() if now_ms is None else now_ms)

    def flush_consume_queue_step(self) -> None:
        """One ``FlushConsumeQueueService`` round: page-gated, thorough (plus checkpoint) every
        ``flush_consume_queue_thorough_interval`` ms."""
        now = self.clock()
        if now >= self._last_flush_cq_timestamp + self.config.flush_consume_queue_thorough_interval:
            self._last_flush_cq_timestamp = now
            self.flush_consume_queue(0)
        else:
            self.flush_consume_queue(self.config.flush_consume_queue_least_pages)

    def flush_consume_queue(self, least_pages: int = 0) -> None:
        """Flush every ConsumeQueue; with ``least_pages=0`` also the index and the checkpoint (the
        logics time is read before the flush, so the checkpoint never claims more than is on disk)."""
        checkpoint = self.store_checkpoint
        logics_msg_timestamp = checkpoint.logics_msg_timestamp if checkpoint is not None else 0
        for cq in self._all_consume_queues():
            for _ in range(len(cq.mapped_file_queue.mapped_files) + 1):
                if cq.flush(least_pages):
                    break
        if least_pages == 0 and checkpoint is not None:
            if self.index_service is not None:
                self.index_service.flush_all()
            checkpoint.logics_msg_timestamp = logics_msg_timestamp
            checkpoint.flush()

    def execute_delete_files_manually(self) -> None:
        """``executeDeleteFilesManualy``: the next 20 clean rounds delete expired files whatever the hour."""
        self.clean_service.execute_delete_files_manually()

    def delete_expired_files(self, now_ms: int | None = None) -> int:
        """One clean round (see :class:`~rocketlab.store.clean_service.CleanCommitLogService`).
        Returns the number of CommitLog files deleted."""
        if self.commit_log is None:
            return 0
        now = self.clock() if now_ms is None else now_ms
        deleted = self.clean_service.delete_expired_files(self.commit_log, now)
        self.disk_full = self.clean_service.disk_full
        self.clean_consume_queue_service.delete_expired_files(
            self.commit_log, self._all_consume_queues(), self.index_service
        )
        return deleted
