"""CONSUMER_SEND_MSG_BACK: a push consumer's failed message goes to its group's retry topic, later its DLQ.

Models 4.9.5's ``SendMessageProcessor.asyncConsumerSendMsgBack``: the subscription group (created on first
use), the broker's write permission, ``%RETRY%group`` created with the group's ``retryQueueNums`` (0: the
message is dropped, SUCCESS), the original looked up by its commit-log offset, RETRY_TOPIC kept (the first
topic), WAIT=false; ``reconsumeTimes >= maxReconsumeTimes`` (the header's, else the group's
``retryMaxTimes``, 16) or a negative delay level sends it to ``%DLQ%group`` (1 queue); otherwise the delay
level is the header's or ``3 + reconsumeTimes`` and the message waits in SCHEDULE_TOPIC_XXXX
(:mod:`rocketlab.broker.schedule_message_service`); the copy has reconsumeTimes + 1 and ORIGIN_MESSAGE_ID
(the first message's offset id). The answer is SUCCESS once the put is PUT_OK, else SYSTEM_ERROR with the
status's name.

Differences: none in what is stored; the answer to a put that is not PUT_OK comes when the core finishes
the put, as Java's future does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.broker.message_accessor import PropertyMap
from rocketlab.broker.protocol import ResponseCode
from rocketlab.broker.send_message_processor import (
    FAQ,
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_WAIT_STORE_MSG_OK,
    TOPIC_SYS_FLAG_UNIT_SUB,
    BrokerInnerMessage,
    SendMessageProcessor,
)
from rocketlab.broker.send_protocol import V3_4_9, AdminResponse, ConsumerSendMsgBackRequest
from rocketlab.broker.topic_config_rules import (
    create_topic_in_send_message_back_method,
    find_subscription_group_config,
)
from rocketlab.broker.topic_validator import PermName, dlq_topic, retry_topic
from rocketlab.core import OutputBuilder
from rocketlab.store.message import Message

PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
PROPERTY_ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
DLQ_NUMS_PER_GROUP = 1


@dataclass
class SendBack:
    """What a send-back decided: the message to put (None: answered at once with ``response``)."""

    message: Message | None
    response: AdminResponse | None = None
    to_dlq: bool = False


def consumer_send_msg_back(processor: SendMessageProcessor, store: Any, req: ConsumerSendMsgBackRequest,
                           now_ms: int, out: OutputBuilder) -> SendBack:
    """The message ``req`` sends back, ready for the core's put (traced ``send_back``, and ``dlq`` when it
    goes to the dead-letter queue); or the answer when there is nothing to put."""
    metadata, config = processor.metadata, processor.config
    sub = find_subscription_group_config(metadata, config, req.group, now_ms)
    if sub is None:
        return SendBack(None, AdminResponse(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                            f"subscription group not exist, {req.group} {FAQ}"))
    if not PermName.is_writeable(config.broker_permission):
        return SendBack(None, AdminResponse(ResponseCode.NO_PERMISSION,
                                            f"the broker[{processor.store_host[0]}] sending message is forbidden"))
    if sub["retryQueueNums"] <= 0:
        return SendBack(None, AdminResponse(ResponseCode.SUCCESS, None))
    topic = retry_topic(req.group)
    queue_id = processor.random_queue_id(sub["retryQueueNums"])
    sys_flag = TOPIC_SYS_FLAG_UNIT_SUB if req.unit_mode else 0
    tc = create_topic_in_send_message_back_method(metadata, topic, sub["retryQueueNums"], 6, sys_flag, now_ms)
    if not PermName.is_writeable(tc["perm"]):
        return SendBack(None, AdminResponse(ResponseCode.NO_PERMISSION,
                                            f"the topic[{topic}] sending message is forbidden"))
    ext = store.look_message_by_offset(req.offset)
    if ext is None:
        return SendBack(None, AdminResponse(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {req.offset}"))
    props = PropertyMap(ext.properties)
    if props.get(PROPERTY_RETRY_TOPIC) is None:
        props.put(PROPERTY_RETRY_TOPIC, ext.topic)
    props.put(PROPERTY_WAIT_STORE_MSG_OK, "false")
    max_times = sub["retryMaxTimes"]
    if req.version >= V3_4_9 and req.max_reconsume_times is not None:
        max_times = req.max_reconsume_times
    delay_level = req.delay_level
    to_dlq = ext.reconsume_times >= max_times or delay_level < 0
    if to_dlq:
        topic, queue_id = dlq_topic(req.group), processor.random_queue_id(DLQ_NUMS_PER_GROUP)
        create_topic_in_send_message_back_method(metadata, topic, DLQ_NUMS_PER_GROUP, 6, 0, now_ms)
        props.put(PROPERTY_DELAY_TIME_LEVEL, "0")
    else:
        delay_level = delay_level or 3 + ext.reconsume_times
        props.put(PROPERTY_DELAY_TIME_LEVEL, str(delay_level))
    origin = props.get(PROPERTY_ORIGIN_MESSAGE_ID)
    props.put(PROPERTY_ORIGIN_MESSAGE_ID, origin if origin and origin.strip() else ext.msg_id)
    msg = BrokerInnerMessage(topic, ext.body, queue_id, properties=props.java_order(), flag=ext.flag,
                             born_timestamp=ext.born_timestamp, born_host=ext.born_host, sys_flag=ext.sys_flag,
                             reconsume_times=ext.reconsume_times + 1, wait_store_msg_ok=False)
    uniq = ext.uniq_key or ""
    out.trace("send_back", group=req.group, topic=ext.topic, uniq_key=uniq, offset_msg_id=ext.msg_id,
              reconsume_times=ext.reconsume_times + 1, delay_level=0 if to_dlq else delay_level)
    if to_dlq:
        out.trace("dlq", group=req.group, topic=topic, uniq_key=uniq, offset_msg_id=ext.msg_id,
                  reconsume_times=ext.reconsume_times + 1)
        return SendBack(msg, None, True)
    scheduled, refused = processor.schedule_if_delayed(msg, props)
    if refused is not None:
        return SendBack(None, AdminResponse(refused.code, refused.remark))
    return SendBack(scheduled)


def send_back_answer(status: str) -> AdminResponse:
    """The answer once the put is done: SUCCESS for PUT_OK, else SYSTEM_ERROR with the status's name."""
    if status == "PUT_OK":
        return AdminResponse(ResponseCode.SUCCESS, None)
    return AdminResponse(ResponseCode.SYSTEM_ERROR, status)
