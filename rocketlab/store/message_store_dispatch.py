"""The dispatch side of the message store: the consume-queue table and what the reput feeds it.

Models ``DefaultMessageStore``'s ``findConsumeQueue``, ``putMessagePositionInfo`` (the target of
``CommitLogDispatcherBuildConsumeQueue``), ``doDispatch``, ``truncateDirtyLogicFiles`` and
``destroyLogics``; the dispatchers and the reput loop are in :mod:`rocketlab.store.reput`.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from rocketlab.errors import StoreError
from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.config import BrokerRole, MessageStoreConfig
from rocketlab.store.consume_queue import ConsumeQueue
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.reput import CommitLogDispatcher, ReputMessageService

log = logging.getLogger(__name__)
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"  # TopicValidator.RMQ_SYS_SCHEDULE_TOPIC


class MessageStoreDispatch:
    """The dispatch part of :class:`~rocketlab.store.message_store.DefaultMessageStore` (a mixin: it
    reads the store's state, declared below)."""

    config: MessageStoreConfig
    consume_queue_table: dict[str, dict[int, ConsumeQueue]]
    store_checkpoint: StoreCheckpoint | None
    reput_message_service: ReputMessageService | None
    dispatcher_list: list[CommitLogDispatcher]
    logics_queue_error: bool
    enable_dleger_commit_log: bool
    _cq_lock: threading.Lock
    _flush_lock: threading.RLock
    schedule_message_service: Any = None
    """``getScheduleMessageService()``: set by the broker that runs one (its ``tags_code_of`` gives a
    SCHEDULE_TOPIC_XXXX unit's tagsCode: the delivery time, as ``checkMessageAndReturnSize`` computes it)."""

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
            tags_code = request.tags_code
            if self.schedule_message_service is not None and request.topic == SCHEDULE_TOPIC:
                tags_code = self.schedule_message_service.tags_code_of(request.properties_map, request.store_timestamp,
                                                                       tags_code)
            ok = cq.put_message_position_info(
                request.commit_log_offset, request.msg_size, tags_code, request.consume_queue_offset
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
