"""The producer's decisions, as RocketMQ 4.9.5's ``DefaultMQProducerImpl`` makes them, sans-IO.

:meth:`DefaultMQProducerImpl.send_default_impl` is ``sendDefaultImpl`` + ``sendKernelImpl`` written as a
generator: it yields what it needs done - :class:`FindRoute` (``tryToFindTopicPublishInfo``: the route of a topic,
from the name server if not known; answered with a :class:`~rocketlab.client.route.TopicPublishInfo` or None)
and :class:`Call` (a request to a broker address; answered with the response, or an exception thrown into the
generator: :class:`RemotingError` for a connect/timeout/send failure, ``BrokerAnswerError`` for an error code)
- and returns the :class:`SendResult`. The simulator and the asyncio runtime drive the same generator.

What it decides as Java does: ``Validators.checkMessage`` (topic, empty body, ``maxMessageSize``); the unique id
(``UNIQ_KEY``) once per message, kept across retries; compression at ``compressMsgBodyOverHowmuch``; SYNC sends try
``1 + retryTimesWhenSendFailed`` times, each on a queue chosen by ``MQFaultStrategy`` avoiding the broker that
just failed; a broker error retries only for ``retryResponseCodes``; a non-SEND_OK status is returned (retried only
with ``retryAnotherBrokerWhenNotStoreOK``); the whole send stops at ``sendMsgTimeout`` (``RemotingTooMuchRequest``
"sendDefaultImpl call timeout"); ONEWAY sends once. Batches (``DefaultMQProducer.batch``): one topic, no retry
topic, no delay, each message checked and given its id; the body ``MessageDecoder.encodeMessages``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from rocketlab.client.message import (
    MAX_MESSAGE_SIZE,
    RETRY_GROUP_TOPIC_PREFIX,
    Message,
    MessageClientIDSetter,
    MessageQueue,
    encode_messages,
    try_to_compress,
)
from rocketlab.client.protocol import BrokerAnswerError, ResponseCode, SendMessageRequest, SendMessageResponse
from rocketlab.client.route import BrokerAddrTable, MQFaultStrategy, TopicPublishInfo
from rocketlab.errors import RocketlabError
from rocketlab.store.message import message_properties_to_string

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
TOPIC_MAX_LENGTH = 127
_LEGAL = re.compile(r"^[%|a-zA-Z0-9_-]+$")
NOT_ALLOWED_SEND_TOPICS = frozenset({"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
                                     "RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC",
                                     "OFFSET_MOVED_EVENT"})
RETRY_RESPONSE_CODES = frozenset({ResponseCode.TOPIC_NOT_EXIST, ResponseCode.SERVICE_NOT_AVAILABLE,
                                  ResponseCode.SYSTEM_ERROR, ResponseCode.NO_PERMISSION, ResponseCode.NO_BUYER_ID,
                                  ResponseCode.NOT_IN_CURRENT_UNIT})


class ClientErrorCode:
    CONNECT_BROKER_EXCEPTION = 10001
    ACCESS_BROKER_TIMEOUT = 10002
    BROKER_NOT_EXIST_EXCEPTION = 10003
    NO_NAME_SERVER_EXCEPTION = 10004
    NOT_FOUND_TOPIC_EXCEPTION = 10005


class MQClientException(RocketlabError):
    """``MQClientException``: one line, with Java's response code (-1 when Java gives none)."""

    def __init__(self, message: str, response_code: int = -1) -> None:
        super().__init__(message)
        self.response_code = response_code


class RemotingError(RocketlabError):
    """A request that got no answer: ``kind`` connect, timeout or send (``RemotingConnectException``,
    ``RemotingTimeoutException``, ``RemotingSendRequestException``), or a connection that spoke garbage."""

    def __init__(self, message: str, kind: str = "send") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class FindRoute:
    """Ask for the publish info of ``topic`` (from the name server when the client has none that is ok)."""

    topic: str


@dataclass(frozen=True)
class Call:
    """Send ``request`` to broker ``addr``; ``timeout_ms``: how long to wait for the answer (oneway: none)."""

    addr: str
    request: Any
    timeout_ms: int
    oneway: bool = False


@dataclass(frozen=True)
class SendResult:
    """``SendResult``: ``msg_id`` the UNIQ_KEY (a batch: the ids joined by commas), ``offset_msg_id`` the broker's."""

    send_status: str
    msg_id: str
    offset_msg_id: str
    message_queue: MessageQueue
    queue_offset: int


@dataclass
class ProducerConfig:
    """``DefaultMQProducer``'s settings, Java's defaults."""

    producer_group: str = "DEFAULT_PRODUCER"
    create_topic_key: str = AUTO_CREATE_TOPIC_KEY_TOPIC
    default_topic_queue_nums: int = 4
    send_msg_timeout: int = 3000
    compress_msg_body_over_howmuch: int = 4 * 1024
    retry_times_when_send_failed: int = 2
    retry_another_broker_when_not_store_ok: bool = False
    max_message_size: int = MAX_MESSAGE_SIZE
    send_latency_fault_enable: bool = False


def check_topic(topic: str) -> None:
    if not topic or not topic.strip():
        raise MQClientException("The specified topic is blank")
    if len(topic) > TOPIC_MAX_LENGTH:
        raise MQClientException(f"The specified topic is longer than topic max length {TOPIC_MAX_LENGTH}.")
    if not _LEGAL.match(topic):
        raise MQClientException(f"The specified topic[{topic}] contains illegal characters, allowing only "
                                "^[%|a-zA-Z0-9_-]+$")


def check_message(msg: Message, max_message_size: int) -> None:
    """``Validators.checkMessage``."""
    check_topic(msg.topic)
    if msg.topic in NOT_ALLOWED_SEND_TOPICS:
        raise MQClientException(f"Sending message to topic[{msg.topic}] is forbidden.", ResponseCode.NO_PERMISSION)
    if not msg.body:
        raise MQClientException("the message body length is zero", ResponseCode.MESSAGE_ILLEGAL)
    if len(msg.body) > max_message_size:
        raise MQClientException(f"the message body size over max value, MAX: {max_message_size}",
                                ResponseCode.MESSAGE_ILLEGAL)


@dataclass
class MessageBatch:
    """``MessageBatch.generateFromList``: the messages (each with its id) and the batch's own properties."""

    topic: str
    messages: list[Message]
    properties: dict[str, str]

    @property
    def body(self) -> bytes:
        return encode_messages(self.messages)


class DefaultMQProducerImpl:
    """The decisions of one producer (see the module docstring); ``clock`` gives milliseconds."""

    def __init__(self, config: ProducerConfig, id_setter: MessageClientIDSetter, clock: Callable[[], int],
                 broker_addrs: BrokerAddrTable, which_item_worst_start: int = 0) -> None:
        self.config = config
        self.id_setter = id_setter
        self.clock = clock
        self.broker_addrs = broker_addrs
        self.mq_fault_strategy = MQFaultStrategy(config.send_latency_fault_enable, which_item_worst_start)

    def batch(self, msgs: Sequence[Message]) -> MessageBatch:
        if not msgs:
            raise MQClientException("MessageBatch is empty")
        first = msgs[0]
        for m in msgs:
            if m.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                raise MQClientException("Retry Group is not supported for batching")
            if "DELAY" in m.properties:
                raise MQClientException("TimeDelayLevel is not supported for batching")
            if m.topic != first.topic:
                raise MQClientException("The topic of the messages in one batch should be the same")
            check_message(m, self.config.max_message_size)
            self.id_setter.set_uniq_id(m)
        return MessageBatch(first.topic, list(msgs), {"WAIT": first.properties.get("WAIT", "true")})

    def send_default_impl(self, msg: Message | MessageBatch, oneway: bool = False,
                          timeout_ms: int | None = None) -> Generator[FindRoute | Call, Any, SendResult | None]:
        timeout = self.config.send_msg_timeout if timeout_ms is None else timeout_ms
        if isinstance(msg, Message):
            check_message(msg, self.config.max_message_size)
        elif len(msg.body) > self.config.max_message_size:
            raise MQClientException(f"the message body size over max value, MAX: {self.config.max_message_size}",
                                    ResponseCode.MESSAGE_ILLEGAL)
        begin_first = self.clock()
        info: TopicPublishInfo | None = yield FindRoute(msg.topic)
        if info is None or not info.ok():
            raise MQClientException(f"No route info of this topic: {msg.topic}\nSee "
                                    "http://rocketmq.apache.org/docs/faq/ for further details.",
                                    ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION)
        times_total = 1 if oneway else 1 + self.config.retry_times_when_send_failed
        mq: MessageQueue | None = None
        exception: Exception | None = None
        result: SendResult | None = None
        brokers_sent: list[str | None] = [None] * times_total
        times = 0
        while times < times_total:
            last = None if mq is None else mq.broker_name
            mq = self.mq_fault_strategy.select_one_message_queue(info, last, self.clock())
            brokers_sent[times] = mq.broker_name
            begin = self.clock()
            if timeout < begin - begin_first:
                raise RemotingError("sendDefaultImpl call timeout", "timeout")
            try:
                result = yield from self._send_kernel_impl(msg, mq, oneway, timeout - (begin - begin_first))
            except RemotingError as e:
                self._update_fault_item(mq.broker_name, begin, True)
                exception, times = e, times + 1
                continue
            except MQClientException as e:
                self._update_fault_item(mq.broker_name, begin, True)
                exception, times = e, times + 1
                continue
            except BrokerAnswerError as e:
                self._update_fault_item(mq.broker_name, begin, True)
                exception, times = e, times + 1
                if e.response_code in RETRY_RESPONSE_CODES:
                    continue
                if result is not None:
                    return result
                raise
            self._update_fault_item(mq.broker_name, begin, False)
            times += 1
            if oneway:
                return None
            assert result is not None
            if result.send_status != "SEND_OK" and self.config.retry_another_broker_when_not_store_ok:
                continue
            return result
        if result is not None:
            return result
        raise _failure(times, self.clock() - begin_first, msg.topic, brokers_sent, exception)

    def _update_fault_item(self, broker_name: str, begin: int, isolation: bool) -> None:
        now = self.clock()
        self.mq_fault_strategy.update_fault_item(broker_name, now - begin, isolation, now)

    def _send_kernel_impl(self, msg: Message | MessageBatch, mq: MessageQueue, oneway: bool,
                          timeout_ms: int) -> Generator[FindRoute | Call, Any, SendResult | None]:
        addr = self.broker_addrs.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            yield FindRoute(mq.topic)
            addr = self.broker_addrs.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            raise MQClientException(f"The broker[{mq.broker_name}] not exist", ClientErrorCode.BROKER_NOT_EXIST_EXCEPTION)
        batch = isinstance(msg, MessageBatch)
        body, sys_flag = msg.body, 0
        if not batch:
            self.id_setter.set_uniq_id(msg)  # type: ignore[arg-type]
            body, sys_flag = try_to_compress(msg.body, self.config.compress_msg_body_over_howmuch)
        header = {"producerGroup": self.config.producer_group, "topic": msg.topic,
                  "defaultTopic": self.config.create_topic_key,
                  "defaultTopicQueueNums": self.config.default_topic_queue_nums, "queueId": mq.queue_id,
                  "sysFlag": sys_flag, "bornTimestamp": self.clock(), "flag": 0 if batch else msg.flag,  # type: ignore[union-attr]
                  "properties": message_properties_to_string(msg.properties), "reconsumeTimes": 0,
                  "unitMode": False, "batch": batch, "brokerName": mq.broker_name}
        if msg.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            props = dict(msg.properties)
            if "RECONSUME_TIME" in props:
                header["reconsumeTimes"] = int(props.pop("RECONSUME_TIME"))
            if "MAX_RECONSUME_TIMES" in props:
                header["maxReconsumeTimes"] = int(props.pop("MAX_RECONSUME_TIMES"))
            header["properties"] = message_properties_to_string(props)
        answer = yield Call(addr, SendMessageRequest(header, body, batch), timeout_ms, oneway)
        if oneway:
            return None
        return send_result(answer, msg, mq)


def send_result(answer: SendMessageResponse, msg: Message | MessageBatch, mq: MessageQueue) -> SendResult:
    """``processSendResponse``: the client's id of what was sent, the broker's queue and offsets."""
    if isinstance(msg, MessageBatch):
        uniq = ",".join(m.properties["UNIQ_KEY"] for m in msg.messages)
    else:
        uniq = msg.properties["UNIQ_KEY"]
    return SendResult(answer.status, uniq, answer.offset_msg_id, MessageQueue(mq.topic, mq.broker_name,
                                                                              answer.queue_id), answer.queue_offset)


def _failure(times: int, cost_ms: int, topic: str, brokers: list[str | None], e: Exception | None) -> Exception:
    names = ", ".join("null" if b is None else b for b in brokers)
    info = (f"Send [{times}] times, still failed, cost [{cost_ms}]ms, Topic: {topic}, BrokersSent: [{names}]"
            f" ({type(e).__name__}: {e})")
    if isinstance(e, BrokerAnswerError):
        return MQClientException(info, e.response_code)
    if isinstance(e, RemotingError):
        code = ClientErrorCode.ACCESS_BROKER_TIMEOUT if e.kind == "timeout" else ClientErrorCode.CONNECT_BROKER_EXCEPTION
        return MQClientException(info, code)
    return MQClientException(info, ClientErrorCode.BROKER_NOT_EXIST_EXCEPTION)
