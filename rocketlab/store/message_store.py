"""The message store: CommitLog, ConsumeQueues, index, checkpoint, recovery and the services around them.

Models ``org.apache.rocketmq.store.DefaultMessageStore`` (4.x structure) with its inner
``FlushConsumeQueueService``; the clean services are in :mod:`rocketlab.store.clean_service`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable, Sequence
from typing import Any

from rocketlab.errors import StoreError
from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.clean_service import CleanCommitLogService, CleanConsumeQueueService
from rocketlab.store.commit_log import CommitLog, wall_clock_ms
from rocketlab.store.config import CQ_STORE_UNIT_SIZE, BrokerRole, MessageStoreConfig
from rocketlab.store.consume_queue import UNIT, ConsumeQueue
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.flush import FlushRealTimeService, GroupCommitService, PutMessageFuture
from rocketlab.store.index_service import IndexService
from rocketlab.store.message import Message, MessageExt
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.message_codec import CodecError, check_message_and_return_size, decode_message
from rocketlab.store.message_filter import MessageFilter
from rocketlab.store.recovery import RecoveryReport, recover_abnormally, recover_normally
from rocketlab.store.reput import (
    CommitLogDispatcher,
    CommitLogDispatcherBuildConsumeQueue,
    CommitLogDispatcherBuildIndex,
    ReputMessageService,
)
from rocketlab.store.service_thread import ServiceThread
from rocketlab.store.status import (
    GetMessageResult,
    GetMessageStatus,
    PutMessageResult,
    PutMessageStatus,
    QueryMessageResult,
)

log = logging.getLogger(__name__)

EventListener = Callable[[str, dict[str, Any]], None]

_LONG_MIN = -(2**63)
_VALID_TOPIC = re.compile(r"^[%|a-zA-Z0-9_-]+$")
_MAX_TOPIC_DIR_LENGTH = 255


def _total_physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


class DefaultMessageStore:
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
            raise StoreError(f"{root}: cannot create the store directory: {exc.strerror}") from exc
        if not os.path.isdir(root):
            raise StoreError(f"{root}: not a directory")
        if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
            raise StoreError(f"{root}: the store directory is not readable and writable")
        try:
            fd = os.open(self.config.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"{self.config.lock_file}: cannot open lock file: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"{root}: the store is already open (lock file held by another store)") from exc
        os.pwrite(fd, b"lock", 0)
        self._lock_fd = fd

    def load(self) -> None:
        """``load``: take the lock, load files and recover. Raises :class:`StoreError` on unusable files."""
        self._prepare_root()
        config = self.config
        self.last_exit_ok = not os.path.exists(config.abort_file)
        self.store_checkpoint = StoreCheckpoint(config.store_checkpoint)
        self.commit_log = CommitLog(config, clock=self.clock, checkpoint=self.store_checkpoint, threads=self.threads)
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
        self.reput_message_service = ReputMessageService(self.commit_log, self.dispatcher_list)
        self._recover(self.last_exit_ok, dropped)

    def _load_consume_queue(self) -> None:
        root = self.config.store_path_consume_queue
        try:
            os.makedirs(root, exist_ok=True)
            topics = sorted(os.listdir(root))
        except OSError as exc:
            raise StoreError(f"{root}: cannot read consume queue directory: {exc.strerror}") from exc
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

    def _recover(self, last_exit_ok: bool, index_files_dropped: list[str]) -> None:
        """``recover``: consume queues first, then the CommitLog, then the offset table."""
        cl = self.commit_log
        assert cl is not None and self.store_checkpoint is not None
        cq_files_removed = {}
        max_phy_offset_of_cq = -1
        for cq in self._all_consume_queues():
            removed = cq.recover()
            if removed:
                cq_files_removed[f"{cq.topic}/{cq.queue_id}"] = removed
            max_phy_offset_of_cq = max(max_phy_offset_of_cq, cq.max_physic_offset)
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

    # ================================================================================ put path ====
    def is_writeable(self) -> bool:
        return not self.logics_queue_error and not self.disk_full

    def _check_store_status(self) -> PutMessageResult | None:
        """``checkStoreStatus``: shut down, slave, or not writeable -> SERVICE_NOT_AVAILABLE."""
        if self.shutdown_flag:
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, None, "the store is shut down")
        if self.config.broker_role is BrokerRole.SLAVE:
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, None, "a slave does not accept puts")
        if not self.is_writeable():
            reason = "consume queue error" if self.logics_queue_error else "disk full"
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, None, f"the store is not writeable ({reason})")
        return None

    def _check_topic(self, topic: str) -> PutMessageResult | None:
        """The broker's ``TopicValidator`` check, which keeps topics usable as directory names:
        ``[%|a-zA-Z0-9_-]`` only, and at most 255 bytes (a file-name limit; v1 records also stop at 127)."""
        if topic in self._valid_topics:
            return None
        if not _VALID_TOPIC.match(topic):
            detail = f"topic {topic!r} is empty or has characters outside [%|a-zA-Z0-9_-]"
        elif len(topic) > _MAX_TOPIC_DIR_LENGTH:
            detail = f"topic of {len(topic)} bytes is longer than the {_MAX_TOPIC_DIR_LENGTH} bytes of a directory name"
        else:
            if len(self._valid_topics) < 100_000:
                self._valid_topics.add(topic)
            return None
        return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, None, detail)

    def put_message(self, msg: Message) -> PutMessageResult:
        """``putMessage``: store one message. See :class:`PutMessageStatus` for the answers."""
        if self.shutdown_flag or self._refuse_puts or self.logics_queue_error or self.disk_full:
            return self._check_store_status()  # type: ignore[return-value]
        if msg.topic not in self._valid_topics:
            bad = self._check_topic(msg.topic)
            if bad is not None:
                return bad
        cl = self.commit_log
        if cl is None:  # shut down meanwhile
            return self._check_store_status()  # type: ignore[return-value]
        if self.event_listener is None:
            return cl.put_message(msg)
        begin = self.clock()
        result = cl.put_message(msg)
        self._emit_put(msg, result, begin)
        return result

    def async_put_message(self, msg: Message) -> PutMessageFuture:
        """``asyncPutMessage``: append now; the future completes when the flush (SYNC_FLUSH) is done."""
        refused = self._check_store_status() or self._check_topic(msg.topic)
        if refused is not None:
            return PutMessageFuture(refused)
        return self.commit_log.async_put_message(msg)  # type: ignore[union-attr]

    def put_messages(self, batch: MessageExtBatch | Sequence[Message]) -> PutMessageResult:
        """``putMessages``: store a batch of one topic and queue with one lock acquisition
        (see :meth:`CommitLog.put_messages`)."""
        topic = batch.topic if isinstance(batch, Message) else batch[0].topic if batch else ""
        refused = self._check_store_status() or self._check_topic(topic)
        if refused is not None:
            return refused
        begin = self.clock() if self.event_listener is not None else 0
        result = self.commit_log.put_messages(batch)  # type: ignore[union-attr]
        if self.event_listener is not None and batch:
            self._emit_put(batch if isinstance(batch, Message) else batch[0], result, begin)
        return result

    def _emit(self, kind: str, fields: dict[str, Any]) -> None:
        if self.event_listener is not None:
            self.event_listener(kind, fields)

    def _emit_put(self, msg: Message, result: PutMessageResult, begin: int) -> None:
        r = result.append_message_result
        self._emit(
            "put",
            {
                "topic": msg.topic,
                "queue_id": msg.queue_id,
                "queue_offset": r.logics_offset if r else None,
                "phy_offset": r.wrote_offset if r else None,
                "size": r.wrote_bytes if r else 0,
                "status": result.status.name,
                "latency_ms": self.clock() - begin,
            },
        )

    # ============================================================================ dispatch side ====
    def find_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        """``findConsumeQueue``: the queue, created on first use."""
        queues = self.consume_queue_table.get(topic)
        cq = queues.get(queue_id) if queues is not None else None
        if cq is not None:
            return cq
        with self._cq_lock:
            queues = self.consume_queue_table.setdefault(topic, {})
            cq = queues.get(queue_id)
            if cq is None:
                cq = ConsumeQueue(
                    topic, queue_id, self.config.store_path_consume_queue, self.config.consume_queue_file_size()
                )
                queues[queue_id] = cq
            return cq

    def get_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        """The queue if it exists (reads never create one, unlike Java's ``findConsumeQueue``)."""
        queues = self.consume_queue_table.get(topic)
        return queues.get(queue_id) if queues is not None else None

    def _all_consume_queues(self) -> list[ConsumeQueue]:
        return [cq for queues in list(self.consume_queue_table.values()) for cq in list(queues.values())]

    def _logics_error(self, reason: str) -> None:
        """``makeLogicsQueueError``: derived data could not be written; refuse puts from now on."""
        if not self.logics_queue_error:
            log.error("logics queue error, the store stops accepting messages: %s", reason)
        self.logics_queue_error = True

    def put_message_position_info(self, request: DispatchRequest) -> None:
        """``putMessagePositionInfo`` (the CQ dispatcher's target): write the unit, stamp the checkpoint.
        Java retries 30 times and then marks the logics queue broken; this marks it at once."""
        try:
            cq = self.find_consume_queue(request.topic, request.queue_id)
            ok = cq.put_message_position_info(
                request.commit_log_offset, request.msg_size, request.tags_code, request.consume_queue_offset
            )
        except (OSError, StoreError) as exc:
            self._logics_error(f"consume queue {request.topic}/{request.queue_id}: {exc}")
            return
        checkpoint = self.store_checkpoint
        if ok and checkpoint is not None:
            if self.config.broker_role is BrokerRole.SLAVE or self.enable_dleger_commit_log:
                checkpoint.physic_msg_timestamp = request.store_timestamp
            checkpoint.logics_msg_timestamp = request.store_timestamp
        elif not ok:
            self._logics_error(f"put commit log position info to {request.topic}:{request.queue_id} failed")

    def do_dispatch(self, request: DispatchRequest) -> None:
        """``doDispatch``: every dispatcher, in order (also used by abnormal recovery)."""
        for dispatcher in self.dispatcher_list:
            dispatcher.dispatch(request)

    def reput(self, max_bytes: int | None = None) -> int:
        """Run one reput round now (any mode), over at most about ``max_bytes`` of records (None: all).
        Returns the number of messages dispatched."""
        assert self.reput_message_service is not None
        return self.reput_message_service.do_reput(max_bytes)

    do_reput = reput

    def dispatch_behind_bytes(self) -> int:
        assert self.reput_message_service is not None
        return self.reput_message_service.behind()

    def truncate_dirty_logic_files(self, phy_offset: int) -> dict[str, int]:
        """``truncateDirtyLogicFiles`` on every queue; returns units removed per ``topic/queue_id``."""
        with self._flush_lock:
            return {f"{cq.topic}/{cq.queue_id}": cq.truncate_dirty_logic_files(phy_offset)
                    for cq in self._all_consume_queues()}

    def destroy_logics(self) -> None:
        """``destroyLogics``: delete every ConsumeQueue (the CommitLog has no files)."""
        for cq in self._all_consume_queues():
            cq.destroy()
        self.consume_queue_table.clear()

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

    # =========================================================================== retention ====
    def update_config(self, **changes: object) -> None:
        """Change settings of a running store (Java calls the MessageStoreConfig setters, e.g. from
        ``updateBrokerConfig``): the store, its commit log and its clean service see the new values."""
        self.config = self.config.replace(**changes)
        self._refuse_puts = self.config.broker_role is BrokerRole.SLAVE  # a role change (controller mode)
        self.clean_service.config = self.config
        if self.commit_log is not None:
            self.commit_log.config = self.config

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

    # =============================================================================== read path ====
    def _next_offset_correction(self, old_offset: int, new_offset: int) -> int:
        if self.config.broker_role is not BrokerRole.SLAVE or self.config.offset_check_in_slave:
            return new_offset
        return old_offset

    def _is_the_batch_full(self, size_py: int, max_msg_nums: int, buffer_total: int, message_total: int, in_disk: bool) -> bool:
        if buffer_total == 0 or message_total == 0:
            return False
        if max_msg_nums <= message_total:
            return True
        c = self.config
        if in_disk:
            return (
                buffer_total + size_py > c.max_transfer_bytes_on_message_in_disk
                or message_total > c.max_transfer_count_on_message_in_disk - 1
            )
        return (
            buffer_total + size_py > c.max_transfer_bytes_on_message_in_memory
            or message_total > c.max_transfer_count_on_message_in_memory - 1
        )

    def get_message(
        self,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int = 32,
        message_filter: MessageFilter | None = None,
        group: str | None = None,
    ) -> GetMessageResult:
        """``getMessage``: up to ``max_msg_nums`` messages of one queue from queue offset ``offset``.

        The status says why nothing came back (see :class:`GetMessageStatus`); ``next_begin_offset``
        is where the next pull should start. ``group`` is accepted for API fidelity and unused.
        """
        if self.shutdown_flag or self.commit_log is None:
            raise StoreError("the store is shut down; get_message is forbidden")
        cl = self.commit_log
        result = GetMessageResult()
        status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
        next_begin_offset = offset
        min_offset = max_offset = 0
        max_offset_py = cl.get_max_offset()
        cq = self.get_consume_queue(topic, queue_id)
        if cq is None:
            status = GetMessageStatus.NO_MATCHED_LOGIC_QUEUE
            next_begin_offset = self._next_offset_correction(offset, 0)
        else:
            min_offset = cq.get_min_offset_in_queue()
            max_offset = cq.get_max_offset_in_queue()
            if max_offset == 0:
                status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
                next_begin_offset = self._next_offset_correction(offset, 0)
            elif offset < min_offset:
                status = GetMessageStatus.OFFSET_TOO_SMALL
                next_begin_offset = self._next_offset_correction(offset, min_offset)
            elif offset == max_offset:
                status = GetMessageStatus.OFFSET_OVERFLOW_ONE
                next_begin_offset = self._next_offset_correction(offset, offset)
            elif offset > max_offset:
                status = GetMessageStatus.OFFSET_OVERFLOW_BADLY
                next_begin_offset = self._next_offset_correction(offset, min_offset if min_offset == 0 else max_offset)
            else:
                status, next_begin_offset = self._read_queue(cq, offset, max_msg_nums, message_filter, max_offset_py, result)
        result.status = status
        result.next_begin_offset = next_begin_offset
        result.min_offset = min_offset
        result.max_offset = max_offset
        return result

    def _read_queue(
        self,
        cq: ConsumeQueue,
        offset: int,
        max_msg_nums: int,
        message_filter: MessageFilter | None,
        max_offset_py: int,
        result: GetMessageResult,
    ) -> tuple[GetMessageStatus, int]:
        cl = self.commit_log
        assert cl is not None
        buf = cq.get_index_buffer(offset, max(16000, max_msg_nums * CQ_STORE_UNIT_SIZE))
        if buf is None:
            return GetMessageStatus.OFFSET_FOUND_NULL, self._next_offset_correction(offset, cq.roll_next_file(offset))
        status = GetMessageStatus.NO_MATCHED_MESSAGE
        next_phy_file_start_offset = _LONG_MIN
        max_phy_offset_pulling = 0
        memory = self._total_memory * self.config.access_message_in_memory_max_ratio // 100
        i = 0
        size = len(buf) - len(buf) % CQ_STORE_UNIT_SIZE
        while i < size:
            offset_py, size_py, tags_code = UNIT.unpack_from(buf, i)
            max_phy_offset_pulling = offset_py
            if next_phy_file_start_offset != _LONG_MIN and offset_py < next_phy_file_start_offset:
                i += CQ_STORE_UNIT_SIZE
                continue
            in_disk = max_offset_py - offset_py > memory
            if self._is_the_batch_full(size_py, max_msg_nums, result.buffer_total_size, result.message_count, in_disk):
                break
            if message_filter is not None and not message_filter.is_matched_by_consume_queue(tags_code):
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.NO_MATCHED_MESSAGE
                i += CQ_STORE_UNIT_SIZE
                continue
            data = cl.get_message(offset_py, size_py)
            if data is None:
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.MESSAGE_WAS_REMOVING
                next_phy_file_start_offset = cl.roll_next_file(offset_py)
                i += CQ_STORE_UNIT_SIZE
                continue
            if message_filter is not None and not message_filter.is_matched_by_commit_log(data):
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.NO_MATCHED_MESSAGE
                i += CQ_STORE_UNIT_SIZE
                continue
            result.message_buffer_list.append(data)
            result.message_queue_offsets.append(offset + i // CQ_STORE_UNIT_SIZE)
            result.buffer_total_size += len(data)
            status = GetMessageStatus.FOUND
            next_phy_file_start_offset = _LONG_MIN
            i += CQ_STORE_UNIT_SIZE
        result.suggest_pulling_from_slave = max_offset_py - max_phy_offset_pulling > memory
        return status, offset + i // CQ_STORE_UNIT_SIZE

    def look_message_by_offset(self, commit_log_offset: int, size: int | None = None) -> MessageExt | None:
        """``lookMessageByOffset``: the message whose record starts at ``commit_log_offset``, or None."""
        cl = self.commit_log
        if cl is None:
            return None
        if size is None:
            head = cl.get_message(commit_log_offset, 4)
            if head is None:
                return None
            size = int.from_bytes(head, "big", signed=True)
            if size <= 0:
                return None
        data = cl.get_message(commit_log_offset, size)
        if data is None:
            return None
        try:
            return decode_message(data)
        except CodecError:
            return None

    def query_message(
        self, topic: str, key: str, max_num: int = 32, begin: int = 0, end: int = 2**63 - 1
    ) -> QueryMessageResult:
        """``queryMessage``: messages whose ``KEYS`` or ``UNIQ_KEY`` hash like ``key``, stored in
        ``[begin, end]`` (ms). Up to three passes, moving the end back to the oldest hit found."""
        result = QueryMessageResult()
        cl, index = self.commit_log, self.index_service
        if cl is None or index is None:
            return result
        last_query_msg_time = end
        for _ in range(3):
            found = index.query_offset(topic, key, max_num, begin, last_query_msg_time)
            if not found.phy_offsets:
                break
            found.phy_offsets.sort()
            result.index_last_update_phyoffset = found.index_last_update_phyoffset
            result.index_last_update_timestamp = found.index_last_update_timestamp
            for m, phy_offset in enumerate(found.phy_offsets):
                msg = self.look_message_by_offset(phy_offset)
                if msg is None:
                    continue
                if m == 0:
                    last_query_msg_time = msg.store_timestamp
                data = cl.get_message(phy_offset, msg.store_size)
                if data is not None:
                    result.message_buffer_list.append(data)
            if result.message_buffer_list or last_query_msg_time < begin:
                break
        return result

    # ------------------------------------------------------------------ offsets and timestamps ----
    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        return cq.get_max_offset_in_queue() if cq is not None else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        return cq.get_min_offset_in_queue() if cq is not None else -1

    def get_commit_log_offset_in_queue(self, topic: str, queue_id: int, consume_queue_offset: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        unit = cq.get_unit(consume_queue_offset) if cq is not None else None
        return unit[0] if unit is not None else 0

    def get_message_store_timestamp(self, topic: str, queue_id: int, consume_queue_offset: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        unit = cq.get_unit(consume_queue_offset) if cq is not None else None
        if unit is None or self.commit_log is None:
            return -1
        return self.commit_log.pickup_store_timestamp(unit[0], unit[1])

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """``getOffsetInQueueByTime``: see :meth:`ConsumeQueue.get_offset_in_queue_by_time`; 0 for a
        missing queue."""
        cq = self.get_consume_queue(topic, queue_id)
        if cq is None or self.commit_log is None:
            return 0
        return cq.get_offset_in_queue_by_time(timestamp, self.commit_log)

    def get_max_phy_offset(self) -> int:
        return self.commit_log.get_max_offset() if self.commit_log is not None else 0

    def get_min_phy_offset(self) -> int:
        return self.commit_log.get_min_offset() if self.commit_log is not None else -1

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        return self.get_message_store_timestamp(topic, queue_id, self.get_min_offset_in_queue(topic, queue_id))

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

    def __repr__(self) -> str:
        state = "closed" if self.shutdown_flag else "open"
        return f"MessageStore({self.config.store_path_root_dir!r}, {state}, {self.commit_log!r})"


MessageStore = DefaultMessageStore
