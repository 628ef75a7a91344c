"""The requests a RocketMQ 4.9.5 client sends to a broker, and the one a broker sends to it, as message classes.

Each request class names its request code (``CODE``) and writes its ``CommandCustomHeader`` as ext fields
(:class:`~rocketlab.remoting.headers.Header`, the Java class's fields); each has a response class parsed from the
answering command. :data:`CLIENT_FAMILY` maps them for :class:`~rocketlab.remoting.codec.RemotingCodec`;
:func:`client_codec` adds the name server's family (GET_ROUTEINFO_BY_TOPIC, reused from
:mod:`rocketlab.namesrv.protocol`).

* SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320): ``SendMessageRequestHeaderV2``; the answer's code as
  ``MQClientAPIImpl.processSendResponse`` reads it (SUCCESS, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT,
  SLAVE_NOT_AVAILABLE are results, anything else an ``MQBrokerException``);
* PULL_MESSAGE (11): ``PullMessageRequestHeader`` with ``sysFlag`` (``PullSysFlag``), ``commitOffset``,
  ``suspendTimeoutMillis``; the answer as ``processPullResponse`` maps it (FOUND, NO_NEW_MSG, NO_MATCHED_MSG,
  OFFSET_ILLEGAL);
* HEART_BEAT (34) with a ``HeartbeatData`` JSON body, UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38),
  QUERY_CONSUMER_OFFSET (14, QUERY_NOT_FOUND 22), UPDATE_CONSUMER_OFFSET (15, oneway or not), GET_MAX_OFFSET
  (30), GET_MIN_OFFSET (31), SEARCH_OFFSET_BY_TIMESTAMP (29), CONSUMER_SEND_MSG_BACK (36);
* NOTIFY_CONSUMER_IDS_CHANGED (40): the broker's oneway request to a client (``ClientRemotingProcessor``).

Java: ``client/impl/MQClientAPIImpl``, ``common/protocol/header/*``, ``common/protocol/heartbeat/*``.
Differences: our commands say language PYTHON (``LanguageCode.PYTHON``, as the C++ client's Python binding
does not: it says CPP); ext fields of the headers with an inherited ``bname`` may travel in another order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from rocketlab.errors import CodecError
from rocketlab.namesrv.protocol import NAMESRV_FAMILY, V4_9_5
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.fastjson import dumps, java_string_hash, loads
from rocketlab.remoting.headers import Header, props


class ResponseCode:
    """``ResponseCode`` (4.9.5), the codes a client reads."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205


_H = "org.apache.rocketmq.common.protocol.header."


def _header(name: str, *specs: str, required: tuple[str, ...] = ()) -> Header:
    return Header(_H + name, props(_H + name, *specs, required=required))


SEND_V2 = _header("SendMessageRequestHeaderV2", "String a", "String b", "String c", "Integer d", "Integer e",
                  "Integer f", "Long g", "Integer h", "String i", "Integer j", "boolean k", "Integer l", "boolean m",
                  "String n", required=("a", "b", "c", "d", "e", "f", "g", "h"))
SEND_RESPONSE = _header("SendMessageResponseHeader", "String msgId", "Integer queueId", "Long queueOffset",
                        "String transactionId", required=("msgId", "queueId", "queueOffset"))
PULL = _header("PullMessageRequestHeader", "String consumerGroup", "String topic", "Integer queueId",
               "Long queueOffset", "Integer maxMsgNums", "Integer sysFlag", "Long commitOffset",
               "Long suspendTimeoutMillis", "String subscription", "Long subVersion", "String expressionType",
               required=("consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag",
                         "commitOffset", "suspendTimeoutMillis", "subVersion"))
PULL_RESPONSE = _header("PullMessageResponseHeader", "Long suggestWhichBrokerId", "Long nextBeginOffset",
                        "Long minOffset", "Long maxOffset",
                        required=("suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset"))
UNREGISTER = _header("UnregisterClientRequestHeader", "String clientID", "String producerGroup",
                     "String consumerGroup", required=("clientID",))
CONSUMER_LIST = _header("GetConsumerListByGroupRequestHeader", "String consumerGroup", required=("consumerGroup",))
QUERY_OFFSET = _header("QueryConsumerOffsetRequestHeader", "String consumerGroup", "String topic", "Integer queueId",
                       required=("consumerGroup", "topic", "queueId"))
UPDATE_OFFSET = _header("UpdateConsumerOffsetRequestHeader", "String consumerGroup", "String topic",
                        "Integer queueId", "Long commitOffset",
                        required=("consumerGroup", "topic", "queueId", "commitOffset"))
OFFSET_RESPONSE = _header("QueryConsumerOffsetResponseHeader", "Long offset", required=("offset",))
MAX_OFFSET = _header("GetMaxOffsetRequestHeader", "String topic", "Integer queueId", required=("topic", "queueId"))
MIN_OFFSET = _header("GetMinOffsetRequestHeader", "String topic", "Integer queueId", required=("topic", "queueId"))
SEARCH_OFFSET = _header("SearchOffsetRequestHeader", "String topic", "Integer queueId", "Long timestamp",
                        required=("topic", "queueId", "timestamp"))
SEND_BACK = _header("ConsumerSendMsgBackRequestHeader", "Long offset", "String group", "Integer delayLevel",
                    "String originMsgId", "String originTopic", "boolean unitMode", "Integer maxReconsumeTimes",
                    required=("offset", "group", "delayLevel"))
NOTIFY_IDS = _header("NotifyConsumerIdsChangedRequestHeader", "String consumerGroup", required=("consumerGroup",))


class BrokerAnswerError(CodecError):
    """A broker answered a request with a code the client treats as an error (``MQBrokerException``)."""

    def __init__(self, what: str, code: int, remark: str | None) -> None:
        super().__init__(f"{what}: CODE: {code}  DESC: {remark}")
        self.response_code = code
        self.remark = remark


def _ok(cmd: RemotingCommand, what: str) -> None:
    if cmd.code != ResponseCode.SUCCESS:
        raise BrokerAnswerError(what, cmd.code, cmd.remark)


# ------------------------------------------------------------------------------------------ sending
@dataclass(frozen=True)
class SendMessageRequest:
    """SEND_MESSAGE_V2 (or SEND_BATCH_MESSAGE with ``batch``): ``header`` by the V1 names of
    ``SendMessageRequestHeader`` (producerGroup, topic, ..., brokerName), the body as it travels."""

    header: dict[str, Any]
    body: bytes
    batch: bool = False
    CODE: ClassVar[int] = 310
    _V2: ClassVar[dict[str, str]] = {
        "producerGroup": "a", "topic": "b", "defaultTopic": "c", "defaultTopicQueueNums": "d", "queueId": "e",
        "sysFlag": "f", "bornTimestamp": "g", "flag": "h", "properties": "i", "reconsumeTimes": "j", "unitMode": "k",
        "maxReconsumeTimes": "l", "batch": "m", "brokerName": "n"}

    def parts(self) -> Parts:
        ext = SEND_V2.write({self._V2[k]: v for k, v in self.header.items()})
        return Parts(320 if self.batch else 310, None, ext, self.body, V4_9_5)


@dataclass(frozen=True)
class SendMessageResponse:
    """``status``: SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT or SLAVE_NOT_AVAILABLE; ``offset_msg_id``:
    the broker's msgId (store host and CommitLog offset)."""

    status: str
    offset_msg_id: str
    queue_id: int
    queue_offset: int
    transaction_id: str | None = None

    _STATUS: ClassVar[dict[int, str]] = {ResponseCode.SUCCESS: "SEND_OK", ResponseCode.FLUSH_DISK_TIMEOUT:
                                         "FLUSH_DISK_TIMEOUT", ResponseCode.FLUSH_SLAVE_TIMEOUT: "FLUSH_SLAVE_TIMEOUT",
                                         ResponseCode.SLAVE_NOT_AVAILABLE: "SLAVE_NOT_AVAILABLE"}

    @classmethod
    def parse(cls, cmd: RemotingCommand) -> SendMessageResponse:
        status = cls._STATUS.get(cmd.code)
        if status is None:
            raise BrokerAnswerError("send", cmd.code, cmd.remark)
        h = SEND_RESPONSE.read(cmd)
        return cls(status, h["msgId"], h["queueId"], h["queueOffset"], h["transactionId"])


# ------------------------------------------------------------------------------------------ pulling
@dataclass(frozen=True)
class PullMessageRequest:
    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int
    max_msg_nums: int = 32
    sys_flag: int = 0
    commit_offset: int = 0
    suspend_timeout_millis: int = 0
    subscription: str | None = None
    sub_version: int = 0
    expression_type: str | None = "TAG"
    broker_name: str | None = None
    CODE: ClassVar[int] = 11

    def parts(self) -> Parts:
        ext = PULL.write({
            "consumerGroup": self.consumer_group, "topic": self.topic, "queueId": self.queue_id,
            "queueOffset": self.queue_offset, "maxMsgNums": self.max_msg_nums, "sysFlag": self.sys_flag,
            "commitOffset": self.commit_offset, "suspendTimeoutMillis": self.suspend_timeout_millis,
            "subscription": self.subscription, "subVersion": self.sub_version, "expressionType": self.expression_type})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class PullMessageResponse:
    """``pull_status`` as ``processPullResponse`` maps the code; ``body``: the stored records back to back."""

    pull_status: str
    next_begin_offset: int
    min_offset: int
    max_offset: int
    suggest_which_broker_id: int
    body: bytes = b""

    _STATUS: ClassVar[dict[int, str]] = {ResponseCode.SUCCESS: "FOUND", ResponseCode.PULL_NOT_FOUND: "NO_NEW_MSG",
                                         ResponseCode.PULL_RETRY_IMMEDIATELY: "NO_MATCHED_MSG",
                                         ResponseCode.PULL_OFFSET_MOVED: "OFFSET_ILLEGAL"}

    @classmethod
    def parse(cls, cmd: RemotingCommand) -> PullMessageResponse:
        status = cls._STATUS.get(cmd.code)
        if status is None:
            raise BrokerAnswerError("pull", cmd.code, cmd.remark)
        h = PULL_RESPONSE.read(cmd)
        return cls(status, h["nextBeginOffset"], h["minOffset"], h["maxOffset"], h["suggestWhichBrokerId"],
                   cmd.body or b"")


# ------------------------------------------------------------------------------------------ group membership
@dataclass(frozen=True)
class SubscriptionData:
    """``SubscriptionData``: a topic and its tag expression (``*`` or ``TagA || TagB``)."""

    topic: str
    sub_string: str = "*"
    sub_version: int = 0

    @property
    def tags_set(self) -> tuple[str, ...]:
        if self.sub_string in ("*", ""):
            return ()
        return tuple(dict.fromkeys(t.strip() for t in self.sub_string.split("||") if t.strip()))

    def to_json(self) -> dict[str, Any]:
        from_tags = [java_string_hash(t) for t in self.tags_set]
        return {"classFilterMode": False, "codeSet": from_tags, "expressionType": "TAG", "subString": self.sub_string,
                "subVersion": self.sub_version, "tagsSet": list(self.tags_set), "topic": self.topic}


@dataclass(frozen=True)
class ConsumerData:
    group_name: str
    consume_type: str  # CONSUME_ACTIVELY (pull) or CONSUME_PASSIVELY (push)
    message_model: str
    consume_from_where: str
    subscriptions: tuple[SubscriptionData, ...]

    def to_json(self) -> dict[str, Any]:
        return {"consumeFromWhere": self.consume_from_where, "consumeType": self.consume_type,
                "groupName": self.group_name, "messageModel": self.message_model,
                "subscriptionDataSet": [s.to_json() for s in self.subscriptions], "unitMode": False}


@dataclass(frozen=True)
class HeartbeatRequest:
    """HEART_BEAT: ``HeartbeatData`` (clientID, the producer groups, the consumer groups) as its JSON body."""

    client_id: str
    producer_groups: tuple[str, ...] = ()
    consumers: tuple[ConsumerData, ...] = ()
    CODE: ClassVar[int] = 34

    def parts(self) -> Parts:
        body = {"clientID": self.client_id, "consumerDataSet": [c.to_json() for c in self.consumers],
                "producerDataSet": [{"groupName": g} for g in self.producer_groups]}
        return Parts(self.CODE, None, None, dumps(body), V4_9_5)


@dataclass(frozen=True)
class UnregisterClientRequest:
    client_id: str
    producer_group: str | None = None
    consumer_group: str | None = None
    CODE: ClassVar[int] = 35

    def parts(self) -> Parts:
        ext = UNREGISTER.write({"clientID": self.client_id, "producerGroup": self.producer_group,
                                "consumerGroup": self.consumer_group})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class Done:
    """The answer to a request whose answer carries nothing but SUCCESS."""

    @classmethod
    def parse(cls, cmd: RemotingCommand) -> Done:
        _ok(cmd, "request")
        return cls()


@dataclass(frozen=True)
class GetConsumerListRequest:
    consumer_group: str
    CODE: ClassVar[int] = 38

    def parts(self) -> Parts:
        return Parts(self.CODE, None, CONSUMER_LIST.write({"consumerGroup": self.consumer_group}), None, V4_9_5)


@dataclass(frozen=True)
class ConsumerList:
    consumer_id_list: tuple[str, ...]

    @classmethod
    def parse(cls, cmd: RemotingCommand) -> ConsumerList:
        _ok(cmd, "GET_CONSUMER_LIST_BY_GROUP")
        try:
            body = loads(cmd.body or b"{}")
            ids = body.get("consumerIdList") or []
        except (ValueError, AttributeError) as e:
            raise CodecError(f"GET_CONSUMER_LIST_BY_GROUP: a body that is no consumer list: {e}") from None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise CodecError("GET_CONSUMER_LIST_BY_GROUP: consumerIdList is no list of strings")
        return cls(tuple(ids))


# ------------------------------------------------------------------------------------------ offsets
@dataclass(frozen=True)
class QueryConsumerOffsetRequest:
    consumer_group: str
    topic: str
    queue_id: int
    CODE: ClassVar[int] = 14

    def parts(self) -> Parts:
        ext = QUERY_OFFSET.write({"consumerGroup": self.consumer_group, "topic": self.topic, "queueId": self.queue_id})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class OffsetAnswer:
    """QUERY_CONSUMER_OFFSET's, GET_MAX_OFFSET's, GET_MIN_OFFSET's, SEARCH_OFFSET's answer; ``offset`` None for
    QUERY_NOT_FOUND (the client then decides by ``consumeFromWhere``)."""

    offset: int | None

    @classmethod
    def parse(cls, cmd: RemotingCommand) -> OffsetAnswer:
        if cmd.code == ResponseCode.QUERY_NOT_FOUND:
            return cls(None)
        _ok(cmd, "offset")
        return cls(OFFSET_RESPONSE.read(cmd)["offset"])


@dataclass(frozen=True)
class UpdateConsumerOffsetRequest:
    consumer_group: str
    topic: str
    queue_id: int
    commit_offset: int
    CODE: ClassVar[int] = 15

    def parts(self) -> Parts:
        ext = UPDATE_OFFSET.write({"consumerGroup": self.consumer_group, "topic": self.topic,
                                   "queueId": self.queue_id, "commitOffset": self.commit_offset})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class UpdateConsumerOffsetOneway(UpdateConsumerOffsetRequest):
    """The same request sent oneway (``updateConsumerOffsetOneway``, what persistAll uses)."""


@dataclass(frozen=True)
class GetMaxOffsetRequest:
    topic: str
    queue_id: int
    CODE: ClassVar[int] = 30

    def parts(self) -> Parts:
        header = MAX_OFFSET if self.CODE == 30 else MIN_OFFSET
        return Parts(self.CODE, None, header.write({"topic": self.topic, "queueId": self.queue_id}), None, V4_9_5)


@dataclass(frozen=True)
class GetMinOffsetRequest(GetMaxOffsetRequest):
    CODE: ClassVar[int] = 31


@dataclass(frozen=True)
class SearchOffsetRequest:
    topic: str
    queue_id: int
    timestamp: int
    CODE: ClassVar[int] = 29

    def parts(self) -> Parts:
        ext = SEARCH_OFFSET.write({"topic": self.topic, "queueId": self.queue_id, "timestamp": self.timestamp})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class ConsumerSendMsgBackRequest:
    offset: int
    group: str
    delay_level: int
    origin_msg_id: str | None
    origin_topic: str | None
    max_reconsume_times: int
    CODE: ClassVar[int] = 36

    def parts(self) -> Parts:
        ext = SEND_BACK.write({"offset": self.offset, "group": self.group, "delayLevel": self.delay_level,
                               "originMsgId": self.origin_msg_id, "originTopic": self.origin_topic,
                               "unitMode": False, "maxReconsumeTimes": self.max_reconsume_times})
        return Parts(self.CODE, None, ext, None, V4_9_5)


@dataclass(frozen=True)
class NotifyConsumerIdsChanged:
    """NOTIFY_CONSUMER_IDS_CHANGED, oneway from a broker: the group's members changed, rebalance now."""

    consumer_group: str
    CODE: ClassVar[int] = 40


_ANSWERS: dict[type, Any] = {
    SendMessageRequest: SendMessageResponse, PullMessageRequest: PullMessageResponse, HeartbeatRequest: Done,
    UnregisterClientRequest: Done, GetConsumerListRequest: ConsumerList, QueryConsumerOffsetRequest: OffsetAnswer,
    UpdateConsumerOffsetRequest: Done, GetMaxOffsetRequest: OffsetAnswer, GetMinOffsetRequest: OffsetAnswer,
    SearchOffsetRequest: OffsetAnswer, ConsumerSendMsgBackRequest: Done}


@dataclass
class ClientFamily(Family):
    """The client's requests (see the module docstring)."""

    name: str = "client"
    requests: dict[type, int] = field(default_factory=lambda: {t: t.CODE for t in (*_ANSWERS, UpdateConsumerOffsetOneway)})
    oneways: frozenset[type] = frozenset({UpdateConsumerOffsetOneway})
    responses: frozenset[type] = frozenset(_ANSWERS.values())
    codes: frozenset[int] = frozenset({NotifyConsumerIdsChanged.CODE})

    def encode(self, msg: Any) -> Parts:
        if type(msg) not in self.requests:
            raise CodecError(f"cannot encode {type(msg).__name__}: not a client request")
        return msg.parts()

    def decode_request(self, cmd: RemotingCommand) -> Any:
        return NotifyConsumerIdsChanged(NOTIFY_IDS.read(cmd)["consumerGroup"])

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        base = UpdateConsumerOffsetRequest if answers is UpdateConsumerOffsetOneway else answers
        return _ANSWERS[base].parse(cmd)


CLIENT_FAMILY = ClientFamily()


def client_codec() -> RemotingCodec:
    """A client's codec: its own requests and the name server's route request; it serves the broker's notice."""
    return RemotingCodec((CLIENT_FAMILY, NAMESRV_FAMILY), serves=("client",))
