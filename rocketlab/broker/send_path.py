"""The send path as each broker core serves it: sends, batches, send-backs, topic creation, delayed delivery.

One object per broker core (classic, on DLedger, controller mode) gathers what 4.9.5's
``SendMessageProcessor``, ``AdminBrokerProcessor`` (UPDATE_AND_CREATE_TOPIC) and the store's
``ScheduleMessageService`` do for it, over the core's own put (so a put is replicated, flushed and answered
as the core does it): :meth:`SendPath.on_request` takes SEND_MESSAGE / _V2, SEND_BATCH_MESSAGE,
CONSUMER_SEND_MSG_BACK and UPDATE_AND_CREATE_TOPIC, :meth:`SendPath.on_tick` and
:meth:`SendPath.next_deadline_ms` run the delivery timers while the broker is master. A broker that is not
master puts a send as it always did (its store refuses it: SERVICE_NOT_AVAILABLE) and creates nothing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rocketlab.broker.broker_outer_api import BrokerOuterAPI
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.protocol import SendMessageRequest, SendMessageResponse
from rocketlab.broker.schedule_message_service import ScheduleMessageService
from rocketlab.broker.send_message_back import consumer_send_msg_back, send_back_answer
from rocketlab.broker.send_message_processor import SendMessageProcessor
from rocketlab.broker.send_protocol import AdminResponse, ConsumerSendMsgBackRequest, CreateTopicRequest
from rocketlab.broker.topic_config_rules import SendConfig, update_and_create_topic
from rocketlab.broker.topic_validator import RMQ_SYS_SCHEDULE_TOPIC, SYSTEM_ERROR
from rocketlab.core import EMPTY, Output, OutputBuilder
from rocketlab.store.message import Message
from rocketlab.store.message_batch import MessageExtBatch

Put = Callable[[Message, int, "tuple[str, int] | None"], "tuple[Any, Output]"]
"""The core's put: ``put(message, now_ms, reply_to) -> (PutHandle, Output)``; a :class:`MessageExtBatch`
is put as a batch."""

SEND_PATH_REQUESTS = (SendMessageRequest, ConsumerSendMsgBackRequest, CreateTopicRequest)


class SendPath:
    """See the module docstring. ``is_master()``: whether the core takes puts now."""

    def __init__(self, config: SendConfig, broker_name: str, metadata: BrokerMetadata, store: Any, put: Put,
                 is_master: Callable[[], bool], rng: random.Random, legacy_message: Callable[[Any], Message],
                 registrar: BrokerOuterAPI | None = None) -> None:
        self.config = config
        self.registrar = registrar
        """The core's registration with its name servers: a created topic is registered before it is answered."""
        self.broker_name = broker_name
        self.metadata = metadata
        self.store = store
        self.put = put
        self.is_master = is_master
        self.legacy_message = legacy_message
        self.processor = SendMessageProcessor(config, broker_name, metadata, store.config.store_host, rng)
        self.schedule = ScheduleMessageService(store, metadata.delay_offset_manager, self.processor.delay_level_table)
        store.schedule_message_service = self.schedule

    def start(self, now_ms: int) -> None:
        """The broker became master (or starts as one): delivery timers for what waits."""
        self.schedule.levels.clear()
        self.schedule.start(now_ms)

    def stop(self) -> None:
        self.schedule.stop()

    def next_deadline_ms(self) -> int | None:
        return self.schedule.next_deadline_ms() if self.is_master() else None

    def on_tick(self, now_ms: int) -> Output:
        if not self.is_master() or not self.schedule.levels:
            return EMPTY
        out = OutputBuilder()

        def put(msg: Message, at_ms: int) -> Any:
            handle, produced = self.put(msg, at_ms, None)
            out.extend(produced)
            return handle

        self.schedule.on_tick(now_ms, put, out)
        return out.build()

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        """Serve one of :data:`SEND_PATH_REQUESTS`."""
        out = OutputBuilder()
        if isinstance(msg, CreateTopicRequest):
            answer = update_and_create_topic(self.metadata, self.config, msg, not self.is_master(), self.broker_name,
                                             now_ms)
            if answer.ok and self.registrar is not None:  # registerIncrementBrokerData, then the answer
                self.registrar.register_then_answer(now_ms, out, (src, request_id), answer)
            else:
                out.reply(src, request_id, answer)
            return out.build()
        if not self.is_master():
            if isinstance(msg, ConsumerSendMsgBackRequest):
                out.reply(src, request_id, AdminResponse(SYSTEM_ERROR, "SERVICE_NOT_AVAILABLE"))
                return out.build()
            return self.put(self.legacy_message(msg), now_ms, (src, request_id))[1]
        if isinstance(msg, ConsumerSendMsgBackRequest):
            return self._send_back(src, request_id, msg, now_ms, out)
        inner, refused = self.processor.process(msg, src, now_ms)
        if refused is not None:
            out.reply(src, request_id, refused.response())
            return out.build()
        return self._put(inner, now_ms, (src, request_id), out)


    def _put(self, msg: Message, now_ms: int, reply_to: tuple[str, int], out: OutputBuilder) -> Output:
        """Put ``msg``; the answer names the queue the producer asked for (``queueIdInt``), also when the
        message waits in SCHEDULE_TOPIC_XXXX."""
        if msg.topic == RMQ_SYS_SCHEDULE_TOPIC:
            out.trace("schedule", topic=msg.properties.get("REAL_TOPIC", ""), delay_level=msg.queue_id + 1,
                      uniq_key=msg.uniq_key or "")
        queue_id = int(msg.properties.get("REAL_QID", msg.queue_id)) if msg.topic == RMQ_SYS_SCHEDULE_TOPIC \
            else msg.queue_id
        handle, produced = self.put(msg, now_ms, None)

        def answer(status: str) -> SendMessageResponse:
            return send_response(handle, status, queue_id)

        self._answer(handle, reply_to, answer, out)
        if msg.topic == RMQ_SYS_SCHEDULE_TOPIC:
            self.schedule.wake(msg.queue_id + 1, now_ms)
        return out.build() + produced

    @staticmethod
    def _answer(handle: Any, reply_to: tuple[str, int], answer: Callable[[str], Any], out: OutputBuilder) -> None:
        """Answer now if the put is done, else when the core finishes it (``PutHandle.answer``)."""
        if handle.done:
            out.reply(reply_to[0], reply_to[1], answer(handle.status))
        else:
            handle.reply_to, handle.answer = reply_to, answer

    def _send_back(self, src: str, request_id: int, req: ConsumerSendMsgBackRequest, now_ms: int,
                   out: OutputBuilder) -> Output:
        back = consumer_send_msg_back(self.processor, self.store, req, now_ms, out)
        if back.message is None:
            out.reply(src, request_id, back.response)
            return out.build()
        if back.message.topic == RMQ_SYS_SCHEDULE_TOPIC:
            out.trace("schedule", topic=back.message.properties.get("REAL_TOPIC", ""),
                      delay_level=back.message.queue_id + 1, uniq_key=back.message.uniq_key or "")
            self.schedule.wake(back.message.queue_id + 1, now_ms)
        handle, produced = self.put(back.message, now_ms, None)
        self._answer(handle, (src, request_id), send_back_answer, out)
        return out.build() + produced


def send_response(handle: Any, status: str, queue_id: int) -> SendMessageResponse:
    """``handlePutMessageResult``'s answer for a finished put (``queue_id``: the one the producer asked for)."""
    offset = handle.queue_offset
    wrote = handle.wrote_offset
    return SendMessageResponse(status, handle.msg_id, -1 if offset is None else offset, -1 if wrote is None else wrote,
                               queue_id=queue_id)


def store_put(store: Any, msg: Message) -> Any:
    """The store's put of ``msg``: ``putMessages`` for a :class:`MessageExtBatch`, else ``putMessage``."""
    return store.put_messages(msg) if isinstance(msg, MessageExtBatch) else store.put_message(msg)


def loaded_metadata(config_dir: Path) -> BrokerMetadata:
    """The broker's tables, loaded from ``config_dir``."""
    metadata = BrokerMetadata(config_dir)
    metadata.load()
    return metadata
