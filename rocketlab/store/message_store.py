"""The message store: CommitLog, ConsumeQueues, index, checkpoint, recovery and the services around them.

Models ``org.apache.rocketmq.store.DefaultMessageStore`` (4.x structure): this module holds its
lifecycle (load, recover, start, shutdown); the rest of the class is split by job into mixins:
:mod:`~rocketlab.store.message_store_put` (the put path), :mod:`~rocketlab.store.message_store_dispatch`
(the consume-queue table the reput feeds), :mod:`~rocketlab.store.message_store_get` (the read path),
:mod:`~rocketlab.store.message_store_services` (flushes, ``FlushConsumeQueueService``, retention) and
:mod:`~rocketlab.store.message_store_ha` (what HA and controller mode ask of the store). The clean
services are in :mod:`rocketlab.store.clean_service`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import threading
from collections.abc import Callable
from typing import Any

from rocketlab.errors import StoreError
from rocketlab.i18n import _
from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.clean_service import CleanCommitLogService, CleanConsumeQueueService
from rocketlab.store.commit_log import CommitLog, wall_clock_ms
from rocketlab.store.config import BrokerRole, MessageStoreConfig
from rocketlab.store.consume_queue import ConsumeQueue
from rocketlab.store.index_service import IndexService
from rocketlab.store.message_store_dispatch import MessageStoreDispatch
from rocketlab.store.message_store_get import MessageStoreGet
from rocketlab.store.message_store_ha import MessageStoreHA
from rocketlab.store.message_store_put import EventListener, MessageStorePut
from rocketlab.store.message_store_services import MessageStoreServices
from rocketlab.store.recovery import RecoveryReport, recover_abnormally, recover_normally
from rocketlab.store.reput import (
    CommitLogDispatcher,
    CommitLogDispatcherBuildConsumeQueue,
    CommitLogDispatcherBuildIndex,
    ReputMessageService,
)
from rocketlab.store.service_thread import ServiceThread

log = logging.getLogger(__name__)


def _total_physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


class DefaultMessageStore(
    MessageStorePut, MessageStoreDispatch, MessageStoreGet, MessageStoreServices, MessageStoreHA
):
    """Models ``DefaultMessageStore``: the store a broker owns.

    Open it with :meth:`open` (load, recover, start) and close it with :meth:`shutdown` (or a
    ``with`` block). Startup follows RocketMQ: take the ``lock`` file, note whether the ``abort`` file
    exists (a crash), load the CommitLog, ConsumeQueues, checkpoint and index, recover normally or
    abnormally, rebuild the topic-queue offset table, let the reput catch up, then create ``abort``.
    A clean shutdown deletes ``abort`` only if the store is writeable and fully dispatched.

    ``threads=True`` runs RocketMQ's background services (flush, group commit, reput, consume-queue
    flush, clean) as daemon threads. ``threads=False`` runs none: the caller drives
    :meth:`flush`, :meth:`reput`, :meth:`flush_consume_queue` and :meth:`delete_expired_files`
    (a deterministic simulator does this). ``clock`` (ms) replaces the wall clock for store
    timestamps and deadlines. ``event_listener(kind, fields)`` receives ``put`` and ``recover``
    trace events.

    Stop producer threads before :meth:`shutdown`: a put racing the shutdown may see closed files.

    Simplified: no schedule (delay) service, HA, stats, transient store pool, or
    ConsumeQueueExt.
    """

    enable_dleger_commit_log = False  # enableDLegerCommitLog: DLedgerMessageStore sets it

    def __init__(
        self,
        config: MessageStoreConfig,
        *,
        clock: Callable[[], int] | None = None,
        threads: bool = True,
        event_listener: EventListener | None = None,
    ) -> None:
        self.config = config.validate()
        self.clock = clock or wall_clock_ms
        self.threads = threads
        self.event_listener = event_listener
        self.consume_queue_table: dict[str, dict[int, ConsumeQueue]] = {}
        self.store_checkpoint: StoreCheckpoint | None = None
        self.commit_log: CommitLog | None = None
        self.index_service: IndexService | None = None
        self.reput_message_service: ReputMessageService | None = None
        self.dispatcher_list: list[CommitLogDispatcher] = []
        self.recovery_report: RecoveryReport | None = None
        self.last_exit_ok = True
        self.shutdown_flag = True
        self._refuse_puts = config.broker_role is BrokerRole.SLAVE
        self._valid_topics: set[str] = set()
        self.logics_queue_error = False
        self.disk_full = False
        self.clean_service = CleanCommitLogService(self.config)
        self.clean_consume_queue_service = CleanConsumeQueueService()
        self._last_flush_cq_timestamp = 0
        self._cq_lock = threading.Lock()
        self._services: dict[str, ServiceThread] = {}
        self._flush_lock = threading.RLock()
        """Held by a flush step on a service thread and by a truncation: a cut never meets a flush under
        way (each step reads the positions to flush once it holds the lock)."""
        self._lock_fd = -1
        self._total_memory = _total_physical_memory()

    # =============================================================================== lifecycle ====
    @classmethod
    def open(
        cls,
        root_dir: str | os.PathLike[str],
        *,
        config: MessageStoreConfig | None = None,
        clock: Callable[[], int] | None = None,
        threads: bool = True,
        event_listener: EventListener | None = None,
        **options: Any,
    ) -> DefaultMessageStore:
        """Open (load, recover, start) the store in ``root_dir``. Keyword options are
        ``MessageStoreConfig`` fields, e.g. ``mapped_file_size_commit_log=64 * 1024``."""
        root = os.fspath(root_dir)
        if config is None:
            config = MessageStoreConfig.from_options(store_path_root_dir=root, **options)
        else:
            config = config.replace(store_path_root_dir=root, **options)
        store = cls(config, clock=clock, threads=threads, event_listener=event_listener)
        try:
            store.load()
            store.start()
        except BaseException:
            store.shutdown_flag = True
            store._close_files()
            store._release()
            raise
        return store

    def __enter__(self) -> DefaultMessageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def _prepare_root(self) -> None:
        root = self.config.store_path_root_dir
        try:
            os.makedirs(root, exist_ok=True)
        except OSError as exc:
            raise StoreError(_("{path}: cannot create the store directory: {why}").format(path=root, why=exc.strerror)) from exc
        if not os.path.isdir(root):
            raise StoreError(_("{path}: not a directory").format(path=root))
        if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
            raise StoreError(_("{path}: the store directory is not readable and writable").format(path=root))
        try:
            fd = os.open(self.config.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(_("{path}: cannot open lock file: {why}").format(path=self.config.lock_file,
                                                                         why=exc.strerror)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise StoreError(_("{path}: the store is already open (lock file held by another store)").format(
                path=root)) from exc
        os.pwrite(fd, b"lock", 0)
        self._lock_fd = fd

    def _new_commit_log(self) -> Any:
        return CommitLog(self.config, clock=self.clock, checkpoint=self.store_checkpoint, threads=self.threads)

    def _new_reput_service(self) -> Any:
        return ReputMessageService(self.commit_log, self.dispatcher_list)

    def load(self) -> None:
        """``load``: take the lock, load files and recover. Raises :class:`StoreError` on unusable files."""
        self._prepare_root()
        config = self.config
        self.last_exit_ok = not os.path.exists(config.abort_file)
        self.store_checkpoint = StoreCheckpoint(config.store_checkpoint)
        self.commit_log = self._new_commit_log()
        self.commit_log.load()
        self._load_consume_queue()
        self.index_service = IndexService(
            config.store_path_index,
            config.max_hash_slot_num,
            config.max_index_num,
            self.store_checkpoint,
            self.clock,
            config.max_msgs_num_batch,
        )
        dropped = self.index_service.load(self.last_exit_ok)
        self.dispatcher_list = [
            CommitLogDispatcherBuildConsumeQueue(self),
            CommitLogDispatcherBuildIndex(self.index_service, config.message_index_enable, self._logics_error),
        ]
        self.reput_message_service = self._new_reput_service()
        self._recover(self.last_exit_ok, dropped)

    def _load_consume_queue(self) -> None:
        root = self.config.store_path_consume_queue
        try:
            os.makedirs(root, exist_ok=True)
            topics = sorted(os.listdir(root))
        except OSError as exc:
            raise StoreError(_("{path}: cannot read consume queue directory: {why}").format(
                path=root, why=exc.strerror)) from exc
        size = self.config.consume_queue_file_size()
        for topic in topics:
            topic_dir = os.path.join(root, topic)
            if topic.startswith(".") or not os.path.isdir(topic_dir):
                continue
            for qid_name in sorted(os.listdir(topic_dir)):
                if not qid_name.lstrip("-").isdigit():
                    raise StoreError(f"{os.path.join(topic_dir, qid_name)}: a queue directory must be named by its id")
                cq = ConsumeQueue(topic, int(qid_name), root, size)
                cq.load()
                self.consume_queue_table.setdefault(topic, {})[int(qid_name)] = cq

    def _recover_consume_queues(self) -> tuple[dict[str, list[str]], int]:
        """Each ConsumeQueue's ``recover``: the files each removed (by ``topic/queue``) and the largest
        commit log offset they reach (-1: none)."""
        cq_files_removed = {}
        max_phy_offset_of_cq = -1
        for cq in self._all_consume_queues():
            removed = cq.recover()
            if removed:
                cq_files_removed[f"{cq.topic}/{cq.queue_id}"] = removed
            max_phy_offset_of_cq = max(max_phy_offset_of_cq, cq.max_physic_offset)
        return cq_files_removed, max_phy_offset_of_cq

    def _recover(self, last_exit_ok: bool, index_files_dropped: list[str]) -> None:
        """``recover``: consume queues first, then the CommitLog, then the offset table."""
        cl = self.commit_log
        assert cl is not None and self.store_checkpoint is not None
        cq_files_removed, max_phy_offset_of_cq = self._recover_consume_queues()
        check_crc = self.config.check_crc_on_recover
        if last_exit_ok:
            report = recover_normally(cl, max_phy_offset_of_cq, self, check_crc)
        else:
            report = recover_abnormally(
                cl, max_phy_offset_of_cq, self, self.store_checkpoint, check_crc,
                # CommitLog.isMappedFileMatchedRecover (4.9.5): the index's timestamp counts only when the
                # index is enabled *and* safe
                self.config.message_index_enable and self.config.message_index_safe,
            )
        report.index_files_dropped = index_files_dropped
        report.consume_queue_files_removed = cq_files_removed
        report.half_created_files_removed = cl.mapped_file_queue.removed_at_load + [
            f"{cq.topic}/{cq.queue_id}/{name}" for cq in self._all_consume_queues() for name in cq.mapped_file_queue.removed_at_load
        ]
        self.recovery_report = report
        self.recover_topic_queue_table()
        self._emit("recover", report.as_dict())

    def recover_topic_queue_table(self) -> None:
        """``recoverTopicQueueTable``: next queue offset = each ConsumeQueue's max offset."""
        cl = self.commit_log
        assert cl is not None
        min_phy_offset = cl.get_min_offset()
        table = {}
        for cq in self._all_consume_queues():
            table[(cq.topic, cq.queue_id)] = cq.get_max_offset_in_queue()
            cq.correct_min_offset(min_phy_offset)
        with cl.put_message_lock:
            cl.topic_queue_table.clear()
            cl.topic_queue_table.update(table)

    def start(self) -> None:
        """``start``: let the reput catch up, rebuild the offset table, start services, create ``abort``."""
        cl, reput = self.commit_log, self.reput_message_service
        assert cl is not None and reput is not None
        reput_from = max(cl.get_min_offset(), 0)
        for cq in self._all_consume_queues():
            reput_from = max(reput_from, cq.max_physic_offset)
        reput.reput_from_offset = reput_from
        self._catch_up_dispatch()
        self.recover_topic_queue_table()
        self._last_flush_cq_timestamp = self.clock()
        if self.threads:
            self._start_services()
        with open(self.config.abort_file, "w"):
            pass
        self.shutdown_flag = False

    def _catch_up_dispatch(self) -> None:
        reput = self.reput_message_service
        assert reput is not None
        while reput.behind() > 0:
            before = reput.reput_from_offset
            reput.do_reput()
            if reput.reput_from_offset == before:
                log.error("reput cannot catch up at start: %s", reput.stalled_reason)
                break

    def shutdown(self) -> None:
        """``shutdown``: stop services, flush everything, and delete ``abort`` if the store is
        writeable and fully dispatched (otherwise the next start recovers abnormally)."""
        if self.commit_log is None:
            self._close_files()
            self._release()
            return
        was_running = not self.shutdown_flag
        self.shutdown_flag = True
        for service in self._services.values():
            service.shutdown()
        self._services = {}
        behind = 1
        if was_running:
            self.commit_log.flush(0)
            self._catch_up_dispatch()
            behind = self.dispatch_behind_bytes()
            self.flush_consume_queue(0)
        self._close_files()
        if was_running and self.is_writeable() and behind <= 0:
            try:
                os.unlink(self.config.abort_file)
            except FileNotFoundError:
                pass
        elif was_running:
            log.warning("the store may be wrong, so shutdown abnormally, and keep abort file (dispatch behind %d)", behind)
        self._release()

    def _close_files(self) -> None:
        if self.commit_log is not None:
            self.commit_log.shutdown()
            self.commit_log = None
        for cq in self._all_consume_queues():
            cq.shutdown()
        if self.index_service is not None:
            self.index_service.shutdown()
            self.index_service = None
        if self.store_checkpoint is not None:
            self.store_checkpoint.shutdown()
            self.store_checkpoint = None

    close = shutdown

    def _release(self) -> None:
        if self._lock_fd >= 0:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            finally:
                os.close(self._lock_fd)
                self._lock_fd = -1

    def destroy(self) -> None:
        """Delete every file of the store (the store must be shut down or never started)."""
        root = self.config.store_path_root_dir
        for name in ("commitlog", "consumequeue", "index"):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        for path in (self.config.store_checkpoint, self.config.abort_file, self.config.lock_file):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def update_config(self, **changes: object) -> None:
        """Change settings of a running store (Java calls the MessageStoreConfig setters, e.g. from
        ``updateBrokerConfig``): the store, its commit log and its clean service see the new values."""
        self.config = self.config.replace(**changes)
        self._refuse_puts = self.config.broker_role is BrokerRole.SLAVE  # a role change (controller mode)
        self.clean_service.config = self.config
        if self.commit_log is not None:
            self.commit_log.config = self.config

    def __repr__(self) -> str:
        state = "closed" if self.shutdown_flag else "open"
        return f"MessageStore({self.config.store_path_root_dir!r}, {state}, {self.commit_log!r})"


MessageStore = DefaultMessageStore
