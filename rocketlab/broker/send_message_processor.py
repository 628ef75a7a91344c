"""SEND_MESSAGE, SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE as 4.9.5's broker takes them, up to the store's put.

Models ``SendMessageProcessor.asyncSendMessage`` / ``asyncSendBatchMessage`` with
``AbstractSendMessageProcessor.msgCheck`` (topic name, forbidden topics, auto-creation, queue id),
``handleRetryAndDLQ`` (a send to ``%RETRY%group`` past its max reconsume times goes to ``%DLQ%group``), and
the part of ``CommitLog.asyncPutMessage`` that moves a message with a delay level to ``SCHEDULE_TOPIC_XXXX``
(queue ``level - 1``, REAL_TOPIC and REAL_QID kept) - the kit's store leaves that to the broker.

What a record keeps, as in Java: the header's ``sysFlag`` (COMPRESSED_FLAG with the body as sent: a
consumer decompresses it) and ``flag``; ``bornTimestamp`` from the header; ``bornHost`` the connection's
remote address (the runtime's ``src`` for a client, ``host:port``; anything else, a simulated client,
127.0.0.1:0); ``storeHost`` the broker's brokerIP1 and listenPort (the store's); the properties re-written
from Java's ``HashMap`` with CLUSTER added and WAIT left out (:mod:`rocketlab.broker.message_accessor`).

Differences: a prepared transaction message (TRAN_MSG) is answered as with ``rejectTransactionMessage=true``
(the kit keeps no half messages); the response carries no MSG_REGION / TRACE_ON ext fields; a random queue
id (queueId < 0) comes from the core's seeded RNG; the client's RemotingCommand version is not consulted
(every client since 3.4.9 may give maxReconsumeTimes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.message_accessor import PropertyMap
from rocketlab.broker.protocol import ResponseCode, SendMessageRequest, SendMessageResponse
from rocketlab.broker.schedule_message_service import delay_level_of, parse_delay_level
from rocketlab.broker.send_protocol import V3_4_9
from rocketlab.broker.topic_config_rules import (
    SendConfig,
    add_system_topics,
    create_topic_in_send_message_back_method,
    create_topic_in_send_message_method,
    find_subscription_group_config,
)
from rocketlab.broker.topic_validator import (
    RETRY_GROUP_TOPIC_PREFIX,
    RMQ_SYS_SCHEDULE_TOPIC,
    PermName,
    dlq_topic,
    not_allowed_send_topic,
    topic_config_string,
    validate_topic,
)
from rocketlab.store.message import DEFAULT_BORN_HOST, Host, Message, MessageSysFlag
from rocketlab.store.message_batch import MessageExtBatch

PROPERTY_CLUSTER = "CLUSTER"
PROPERTY_WAIT_STORE_MSG_OK = "WAIT"
PROPERTY_DELAY_TIME_LEVEL = "DELAY"
PROPERTY_REAL_TOPIC = "REAL_TOPIC"
PROPERTY_REAL_QUEUE_ID = "REAL_QID"
PROPERTY_TRANSACTION_PREPARED = "TRAN_MSG"
DLQ_NUMS_PER_GROUP = 1
TOPIC_SYS_FLAG_UNIT, TOPIC_SYS_FLAG_UNIT_SUB = 0x1, 0x2
FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class BrokerInnerMessage(Message):
    """``MessageExtBrokerInner``: ``properties`` are what the record stores (its propertiesString), and
    ``wait_store_msg_ok`` is the map's WAIT, which Java leaves out of the string but still obeys."""

    __slots__ = ("wait_store_msg_ok",)

    def __init__(self, *args: Any, wait_store_msg_ok: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wait_store_msg_ok = wait_store_msg_ok

    def is_wait_store_msg_ok(self) -> bool:
        return self.wait_store_msg_ok


@dataclass(frozen=True)
class Refusal:
    code: int
    remark: str | None

    def response(self) -> SendMessageResponse:
        return SendMessageResponse(_REFUSAL_NAMES.get(self.code, "SYSTEM_ERROR"), remark=self.remark, code=self.code)


_REFUSAL_NAMES = {ResponseCode.NO_PERMISSION: "NO_PERMISSION", ResponseCode.TOPIC_NOT_EXIST: "TOPIC_NOT_EXIST",
                  ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: "SUBSCRIPTION_GROUP_NOT_EXIST",
                  ResponseCode.MESSAGE_ILLEGAL: "MESSAGE_ILLEGAL", ResponseCode.SYSTEM_ERROR: "SYSTEM_ERROR"}


def born_host_of(src: str) -> Host:
    """The connection's remote address from the runtime's name for a client (``host:port``)."""
    host, sep, port = src.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return DEFAULT_BORN_HOST
    host = host.strip("[]")
    if not all(c.isdigit() or c in ".:abcdefABCDEF" for c in host):
        return DEFAULT_BORN_HOST
    return host, int(port)


class SendMessageProcessor:
    """The send path of one broker (see the module docstring). ``metadata``: the broker's tables;
    ``store_host``: its brokerIP1 and listenPort."""

    def __init__(self, config: SendConfig, broker_name: str, metadata: BrokerMetadata, store_host: Host,
                 rng: random.Random) -> None:
        self.config = config
        self.broker_name = broker_name
        self.metadata = metadata
        self.store_host = store_host
        self.rng = rng
        self.delay_level_table = parse_delay_level(config.message_delay_level)
        if config.system_topics:
            add_system_topics(metadata, config, broker_name)

    @property
    def max_delay_level(self) -> int:
        return max(self.delay_level_table, default=0)

    def random_queue_id(self, queue_nums: int) -> int:
        """``ThreadLocalRandom.nextInt(99999999) % queueNums``."""
        return self.rng.randrange(99999999) % queue_nums if queue_nums > 0 else 0

    # ------------------------------------------------------------------ msgCheck
    def msg_check(self, req: SendMessageRequest, src: str, now_ms: int) -> tuple[dict[str, Any] | None,
                                                                                    Refusal | None]:
        """``msgCheck``: the topic's config, or the refusal Java answers."""
        if not PermName.is_writeable(self.config.broker_permission) and self._is_order_topic(req.topic):
            return None, Refusal(ResponseCode.NO_PERMISSION,
                                 f"the broker[{self.store_host[0]}] sending message is forbidden")
        refused = validate_topic(req.topic) or not_allowed_send_topic(req.topic)
        if refused is not None:
            return None, Refusal(*refused)
        tc = self.metadata.topic_config_manager.select_topic_config(req.topic)
        if tc is None:
            sys_flag = 0
            if req.unit_mode:
                sys_flag = TOPIC_SYS_FLAG_UNIT_SUB if req.topic.startswith(RETRY_GROUP_TOPIC_PREFIX) \
                    else TOPIC_SYS_FLAG_UNIT
            tc = create_topic_in_send_message_method(self.metadata, self.config, req.topic, req.default_topic,
                                                     req.default_topic_queue_nums, sys_flag, now_ms)
            if tc is None and req.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                tc = create_topic_in_send_message_back_method(self.metadata, req.topic, 1, 6, sys_flag, now_ms)
            if tc is None:
                return None, Refusal(ResponseCode.TOPIC_NOT_EXIST,
                                     f"topic[{req.topic}] not exist, apply first please!{FAQ}")
        if req.queue_id >= max(tc["writeQueueNums"], tc["readQueueNums"]):
            return None, Refusal(ResponseCode.SYSTEM_ERROR, f"request queueId[{req.queue_id}] is illegal, "
                                 f"{topic_config_string(tc)} Producer: {src}")
        return tc, None

    def _is_order_topic(self, topic: str) -> bool:
        tc = self.metadata.topic_config_manager.select_topic_config(topic)
        return bool(tc and tc.get("order"))

    # ------------------------------------------------------------------ sends
    def process(self, req: SendMessageRequest, src: str, now_ms: int) -> tuple[Message | None, Refusal | None]:
        """The message to put for a send (a :class:`MessageExtBatch` for a batch), or the refusal."""
        tc, refused = self.msg_check(req, src, now_ms)
        if refused is not None:
            return None, refused
        queue_id = req.queue_id if req.queue_id >= 0 else self.random_queue_id(tc["writeQueueNums"])
        sys_flag = req.sys_flag | (MessageSysFlag.MULTI_TAGS_FLAG if tc["topicFilterType"] == "MULTI_TAG" else 0)
        props = PropertyMap(req.property_map())
        if req.batch:
            props.put(PROPERTY_CLUSTER, self.config.broker_cluster_name)
            return MessageExtBatch(req.topic, req.body, queue_id, properties=props.java_order(), flag=req.flag,
                                   born_timestamp=req.born_timestamp, born_host=born_host_of(src),
                                   sys_flag=sys_flag, reconsume_times=req.reconsume_times), None
        topic, refused = self._handle_retry_and_dlq(req, now_ms)
        if refused is not None:
            return None, refused
        if topic != req.topic:  # Java's setDelayTimeLevel(0) went to a map replaced right after: DELAY stays
            queue_id = self.random_queue_id(DLQ_NUMS_PER_GROUP)
        if (props.get(PROPERTY_TRANSACTION_PREPARED) or "").lower() == "true":
            return None, Refusal(ResponseCode.NO_PERMISSION, f"the broker[{self.store_host[0]}] sending transaction "
                                                             "message is forbidden")
        props.put(PROPERTY_CLUSTER, self.config.broker_cluster_name)
        wait = props.remove(PROPERTY_WAIT_STORE_MSG_OK)
        stored = props.java_order()
        if wait is not None:
            props.put(PROPERTY_WAIT_STORE_MSG_OK, wait)
        msg = BrokerInnerMessage(topic, req.body, queue_id, properties=stored, flag=req.flag,
                                 born_timestamp=req.born_timestamp, born_host=born_host_of(src), sys_flag=sys_flag,
                                 reconsume_times=req.reconsume_times, wait_store_msg_ok=wait != "false")
        return self.schedule_if_delayed(msg, props)

    def _handle_retry_and_dlq(self, req: SendMessageRequest, now_ms: int) -> tuple[str, Refusal | None]:
        """``handleRetryAndDLQ``: the topic to store under (the group's DLQ once reconsumeTimes reaches the
        max), or SUBSCRIPTION_GROUP_NOT_EXIST."""
        if not req.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            return req.topic, None
        group = req.topic[len(RETRY_GROUP_TOPIC_PREFIX):]
        sub = find_subscription_group_config(self.metadata, self.config, group, now_ms)
        if sub is None:
            return req.topic, Refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                      f"subscription group not exist, {group} {FAQ}")
        max_times = sub["retryMaxTimes"]
        if req.version >= V3_4_9 and req.max_reconsume_times is not None:
            max_times = req.max_reconsume_times
        if req.reconsume_times < max_times:
            return req.topic, None
        topic = dlq_topic(group)
        create_topic_in_send_message_back_method(self.metadata, topic, DLQ_NUMS_PER_GROUP, 6, 0, now_ms)
        return topic, None

    def schedule_if_delayed(self, msg: BrokerInnerMessage, props: PropertyMap) -> tuple[Message | None,
                                                                                           Refusal | None]:
        """``CommitLog.asyncPutMessage``'s delay branch: a message with DELAY > 0 (capped at the highest level)
        goes to SCHEDULE_TOPIC_XXXX, queue ``level - 1``, with REAL_TOPIC and REAL_QID; its properties string
        is then written from the whole map (WAIT included, as Java re-puts it first)."""
        tran = MessageSysFlag.get_transaction_value(msg.sys_flag)
        if tran not in (MessageSysFlag.TRANSACTION_NOT_TYPE, MessageSysFlag.TRANSACTION_COMMIT_TYPE):
            return msg, None
        try:
            level = delay_level_of(props.get(PROPERTY_DELAY_TIME_LEVEL))
        except ValueError as e:
            return None, Refusal(ResponseCode.SYSTEM_ERROR, f"java.lang.NumberFormatException: {e}")
        if level <= 0:
            return msg, None
        if level > self.max_delay_level:
            level = self.max_delay_level
            props.put(PROPERTY_DELAY_TIME_LEVEL, str(level))
        props.put(PROPERTY_REAL_TOPIC, msg.topic)
        props.put(PROPERTY_REAL_QUEUE_ID, str(msg.queue_id))
        msg.properties = props.java_order()
        msg.topic, msg.queue_id = RMQ_SYS_SCHEDULE_TOPIC, level - 1
        return msg, None

