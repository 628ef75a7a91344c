"""The retry and topic-admin requests of a broker, with RocketMQ 4.9.5's codes and header classes.

* ``ConsumerSendMsgBackRequest`` - CONSUMER_SEND_MSG_BACK (36), ``ConsumerSendMsgBackRequestHeader``: a push
  consumer hands back a message it failed to consume (by its commit-log offset); the answer is a bare
  response (code and remark), as ``SendMessageProcessor.asyncConsumerSendMsgBack`` makes it;
* ``CreateTopicRequest`` - UPDATE_AND_CREATE_TOPIC (17), ``CreateTopicRequestHeader`` (``checkFields``: the
  topicFilterType must be a ``TopicFilterType`` name); answered by ``AdminBrokerProcessor``.

SEND_MESSAGE, SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE are in :mod:`rocketlab.broker.protocol`.
:data:`SEND_BACK_FAMILY` is handed to the broker codecs beside the broker family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.headers import Header, props

CONSUMER_SEND_MSG_BACK = 36
UPDATE_AND_CREATE_TOPIC = 17
TOPIC_FILTER_TYPES = ("SINGLE_TAG", "MULTI_TAG")
V3_4_9 = 117
"""``MQVersion.Version.V3_4_9.ordinal()``: from this client version on the broker reads maxReconsumeTimes."""


@dataclass(frozen=True, slots=True)
class ConsumerSendMsgBackRequest:
    offset: int
    group: str
    delay_level: int = 0
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: int | None = None
    version: int = field(default=399, compare=False)
    """The RemotingCommand version (see :class:`~rocketlab.broker.protocol.SendMessageRequest`)."""


@dataclass(frozen=True, slots=True)
class CreateTopicRequest:
    topic: str
    read_queue_nums: int = 8
    write_queue_nums: int = 8
    perm: int = 6
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int | None = None
    order: bool = False
    default_topic: str = "TBW102"


@dataclass(frozen=True, slots=True)
class AdminResponse:
    """The bare answer of CONSUMER_SEND_MSG_BACK and UPDATE_AND_CREATE_TOPIC: ``code`` (ResponseCode) and
    ``remark``."""

    code: int = 0
    remark: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == 0


_H = "org.apache.rocketmq.common.protocol.header."
_RPC = "org.apache.rocketmq.common.rpc.RpcRequestHeader"
CONSUMER_SEND_MSG_BACK_REQUEST_HEADER = Header(_H + "ConsumerSendMsgBackRequestHeader", props(
    _H + "ConsumerSendMsgBackRequestHeader", "Long offset", "String group", "Integer delayLevel",
    "String originMsgId", "String originTopic", "boolean unitMode", "Integer maxReconsumeTimes",
    required=("offset", "group", "delayLevel")) + props(_RPC, "String bname"))
CREATE_TOPIC_REQUEST_HEADER = Header(_H + "CreateTopicRequestHeader", props(
    _H + "CreateTopicRequestHeader", "String topic", "String defaultTopic", "Integer readQueueNums",
    "Integer writeQueueNums", "Integer perm", "String topicFilterType", "Integer topicSysFlag", "Boolean order",
    required=("topic", "defaultTopic", "readQueueNums", "writeQueueNums", "perm", "topicFilterType", "order")))


class SendBackFamily(Family):
    """CONSUMER_SEND_MSG_BACK and UPDATE_AND_CREATE_TOPIC (see the module docstring)."""

    name = "broker-send-back"
    requests = {ConsumerSendMsgBackRequest: CONSUMER_SEND_MSG_BACK, CreateTopicRequest: UPDATE_AND_CREATE_TOPIC}
    responses = frozenset({AdminResponse})
    codes = frozenset(requests.values())

    def encode(self, msg: Any) -> Parts:
        t = type(msg)
        if t is ConsumerSendMsgBackRequest:
            ext = CONSUMER_SEND_MSG_BACK_REQUEST_HEADER.write({
                "offset": msg.offset, "group": msg.group, "delayLevel": msg.delay_level,
                "originMsgId": msg.origin_msg_id, "originTopic": msg.origin_topic, "unitMode": msg.unit_mode,
                "maxReconsumeTimes": msg.max_reconsume_times, "bname": None})
            return Parts(CONSUMER_SEND_MSG_BACK, None, ext, None)
        if t is CreateTopicRequest:
            ext = CREATE_TOPIC_REQUEST_HEADER.write({
                "topic": msg.topic, "defaultTopic": msg.default_topic, "readQueueNums": msg.read_queue_nums,
                "writeQueueNums": msg.write_queue_nums, "perm": msg.perm, "topicFilterType": msg.topic_filter_type,
                "topicSysFlag": msg.topic_sys_flag, "order": msg.order})
            return Parts(UPDATE_AND_CREATE_TOPIC, None, ext, None)
        if t is AdminResponse:
            return Parts(msg.code, msg.remark, None, None)
        raise CodecError(f"cannot encode {t.__name__}: not a send-back message")

    def decode_request(self, cmd: RemotingCommand) -> Any:
        if cmd.code == CONSUMER_SEND_MSG_BACK:
            h = CONSUMER_SEND_MSG_BACK_REQUEST_HEADER.read(cmd)
            return ConsumerSendMsgBackRequest(h["offset"], h["group"], h["delayLevel"], h["originMsgId"],
                                              h["originTopic"], bool(h["unitMode"]), h["maxReconsumeTimes"],
                                              cmd.version)
        h = CREATE_TOPIC_REQUEST_HEADER.read(cmd)
        if h["topicFilterType"] not in TOPIC_FILTER_TYPES:
            raise CodecError(f"topicFilterType = [{h['topicFilterType']}] value invalid")
        return CreateTopicRequest(h["topic"], h["readQueueNums"], h["writeQueueNums"], h["perm"],
                                  h["topicFilterType"], h["topicSysFlag"], bool(h["order"]), h["defaultTopic"])

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        return AdminResponse(cmd.code, cmd.remark)


SEND_BACK_FAMILY = SendBackFamily()
