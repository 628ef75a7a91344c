"""The put path of the message store: status and topic checks, ``putMessage``, ``putMessages``.

Models ``DefaultMessageStore.putMessage`` / ``asyncPutMessage`` / ``putMessages`` with
``checkStoreStatus`` and the broker's ``TopicValidator`` check, and the ``put`` trace event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import BrokerRole, MessageStoreConfig
from rocketlab.store.flush import PutMessageFuture
from rocketlab.store.message import Message
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.status import PutMessageResult, PutMessageStatus

EventListener = Callable[[str, dict[str, Any]], None]
"""``event_listener(kind, fields)``: receives the store's ``put`` and ``recover`` trace events."""

_VALID_TOPIC = re.compile(r"^[%|a-zA-Z0-9_-]+$")
_MAX_TOPIC_DIR_LENGTH = 255


class MessageStorePut:
    """The put part of :class:`~rocketlab.store.message_store.DefaultMessageStore` (a mixin: it reads
    the store's state, declared below)."""

    config: MessageStoreConfig
    clock: Callable[[], int]
    commit_log: CommitLog | None
    event_listener: EventListener | None
    shutdown_flag: bool
    logics_queue_error: bool
    disk_full: bool
    _refuse_puts: bool
    _valid_topics: set[str]

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
