"""The client-facing requests of a broker (RocketMQ 4.9.5's codes, header classes and JSON bodies).

Messages a producer, a consumer or an admin tool sends a broker, and what the broker answers, beside
the send/pull/offset ones of :mod:`rocketlab.broker.protocol`:

* HEART_BEAT 34 (``HeartbeatData``: clientID, producer groups, consumer groups with
  ``SubscriptionData``), UNREGISTER_CLIENT 35 (``UnregisterClientRequestHeader``),
  GET_CONSUMER_LIST_BY_GROUP 38 (``GetConsumerListByGroupResponseBody``);
* QUERY_CONSUMER_OFFSET 14 (QUERY_NOT_FOUND 22 when there is none), GET_MAX_OFFSET 30,
  GET_MIN_OFFSET 31, GET_EARLIEST_MSG_STORETIME 32, SEARCH_OFFSET_BY_TIMESTAMP 29;
* VIEW_MESSAGE_BY_ID 33 (the record at a CommitLog offset), QUERY_MESSAGE 12 (by key, through the index);
* LOCK_BATCH_MQ 41 / UNLOCK_BATCH_MQ 42 (``LockBatchRequestBody``, ``LockBatchResponseBody``);
* NOTIFY_CONSUMER_IDS_CHANGED 40, the broker's own oneway request to a consumer.

Java: ``common/protocol/RequestCode``, ``ResponseCode``, ``header/*RequestHeader`` /
``*ResponseHeader`` and ``heartbeat/*``, ``body/*`` of 4.9.5. JSON bodies are read as fastjson reads
them (also unquoted integer keys, enums given as ordinals, quoted numbers: rocketmq-client-cpp writes both) and
written as it writes them (properties sorted by name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting import fastjson
from rocketlab.remoting.headers import Header, props


class ClientRequestCode:
    """``RequestCode`` (4.9.5) of the requests of this module."""

    QUERY_MESSAGE = 12
    QUERY_CONSUMER_OFFSET = 14
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    UNREGISTER_CLIENT = 35
    GET_CONSUMER_LIST_BY_GROUP = 38
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    LOCK_BATCH_MQ = 41
    UNLOCK_BATCH_MQ = 42


class ClientResponseCode:
    """``ResponseCode`` (4.9.5) the client processors answer with."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_PARSE_FAILED = 23
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26


# ------------------------------------------------------------------------------------ heartbeat data
CONSUME_TYPES = ("CONSUME_ACTIVELY", "CONSUME_PASSIVELY")
"""``ConsumeType``'s constants in declaration order (fastjson reads an integer as the ordinal)."""
MESSAGE_MODELS = ("BROADCASTING", "CLUSTERING")
"""``MessageModel``'s constants in declaration order."""
CONSUME_FROM_WHERE = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
                      "CONSUME_FROM_MIN_OFFSET", "CONSUME_FROM_MAX_OFFSET", "CONSUME_FROM_FIRST_OFFSET",
                      "CONSUME_FROM_TIMESTAMP")
"""``ConsumeFromWhere``'s constants in declaration order (rocketmq-client-cpp sends the three as integers)."""


@dataclass(frozen=True, slots=True)
class SubscriptionData:
    """``SubscriptionData``: a consumer's subscription of one topic (``subString`` such as ``A || B``)."""

    topic: str
    sub_string: str = "*"
    tags_set: tuple[str, ...] = ()
    code_set: tuple[int, ...] = ()
    sub_version: int = 0
    expression_type: str = "TAG"
    class_filter_mode: bool = False
    filter_class_source: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"classFilterMode": self.class_filter_mode, "codeSet": list(self.code_set),
               "expressionType": self.expression_type, "filterClassSource": self.filter_class_source,
               "subString": self.sub_string, "subVersion": self.sub_version, "tagsSet": list(self.tags_set),
               "topic": self.topic}
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_json(cls, d: Any) -> SubscriptionData:
        d = _object(d, "SubscriptionData")
        return cls(_str(d, "topic", required=True), _str(d, "subString") or "*",
                   tuple(str(t) for t in _list(d, "tagsSet")), tuple(_long(c, "codeSet") for c in _list(d, "codeSet")),
                   _long(d.get("subVersion", 0), "subVersion"), _str(d, "expressionType") or "TAG",
                   bool(d.get("classFilterMode", False)), _str(d, "filterClassSource"))


@dataclass(frozen=True, slots=True)
class ConsumerData:
    """``ConsumerData``: one consumer group of a client."""

    group_name: str
    consume_type: str = "CONSUME_PASSIVELY"
    message_model: str = "CLUSTERING"
    consume_from_where: str = "CONSUME_FROM_LAST_OFFSET"
    subscriptions: tuple[SubscriptionData, ...] = ()
    unit_mode: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"consumeFromWhere": self.consume_from_where, "consumeType": self.consume_type,
                "groupName": self.group_name, "messageModel": self.message_model,
                "subscriptionDataSet": [s.to_json() for s in self.subscriptions], "unitMode": self.unit_mode}

    @classmethod
    def from_json(cls, d: Any) -> ConsumerData:
        d = _object(d, "ConsumerData")
        return cls(_str(d, "groupName", required=True), _enum(d, "consumeType", CONSUME_TYPES) or "CONSUME_PASSIVELY",
                   _enum(d, "messageModel", MESSAGE_MODELS) or "CLUSTERING",
                   _enum(d, "consumeFromWhere", CONSUME_FROM_WHERE) or "CONSUME_FROM_LAST_OFFSET",
                   tuple(SubscriptionData.from_json(s) for s in _list(d, "subscriptionDataSet")),
                   bool(d.get("unitMode", False)))


@dataclass(frozen=True, slots=True)
class MessageQueue:
    """``MessageQueue``: topic, broker name, queue id."""

    topic: str
    broker_name: str
    queue_id: int

    def to_json(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_json(cls, d: Any) -> MessageQueue:
        d = _object(d, "MessageQueue")
        return cls(_str(d, "topic", required=True), _str(d, "brokerName", required=True),
                   _int(d.get("queueId"), "queueId"))


# ------------------------------------------------------------------------------------ requests
@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    """HEART_BEAT: ``HeartbeatData`` as the body; ``language``/``version`` from the command."""

    client_id: str
    producer_groups: tuple[str, ...] = ()
    consumers: tuple[ConsumerData, ...] = ()
    language: str = "JAVA"
    version: int = 0


@dataclass(frozen=True, slots=True)
class UnregisterClientRequest:
    client_id: str
    producer_group: str | None = None
    consumer_group: str | None = None


@dataclass(frozen=True, slots=True)
class GetConsumerListByGroupRequest:
    consumer_group: str


@dataclass(frozen=True, slots=True)
class QueryConsumerOffsetRequest:
    consumer_group: str
    topic: str
    queue_id: int


@dataclass(frozen=True, slots=True)
class GetMaxOffsetRequest:
    topic: str
    queue_id: int


@dataclass(frozen=True, slots=True)
class GetMinOffsetRequest:
    topic: str
    queue_id: int


@dataclass(frozen=True, slots=True)
class GetEarliestMsgStoretimeRequest:
    topic: str
    queue_id: int


@dataclass(frozen=True, slots=True)
class SearchOffsetRequest:
    topic: str
    queue_id: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ViewMessageRequest:
    """VIEW_MESSAGE_BY_ID: ``offset`` is the CommitLog offset an offset message id carries."""

    offset: int


@dataclass(frozen=True, slots=True)
class QueryMessageRequest:
    """QUERY_MESSAGE; ``unique_key``: the ``_UNIQUE_KEY_QUERY`` ext field (then maxNum is the store's
    ``defaultQueryMaxNum``)."""

    topic: str
    key: str
    max_num: int = 32
    begin_timestamp: int = 0
    end_timestamp: int = 2**63 - 1
    unique_key: bool = False


@dataclass(frozen=True, slots=True)
class LockBatchRequest:
    consumer_group: str
    client_id: str
    mq_set: tuple[MessageQueue, ...] = ()


@dataclass(frozen=True, slots=True)
class UnlockBatchRequest:
    consumer_group: str
    client_id: str
    mq_set: tuple[MessageQueue, ...] = ()


@dataclass(frozen=True, slots=True)
class NotifyConsumerIdsChanged:
    """NOTIFY_CONSUMER_IDS_CHANGED, oneway, from the broker to each consumer of a group that changed."""

    consumer_group: str


# ------------------------------------------------------------------------------------ responses
@dataclass(frozen=True, slots=True)
class ClientAnswer:
    """An answer without a header: ``code`` and ``remark`` (HEART_BEAT, UNREGISTER_CLIENT,
    UNLOCK_BATCH_MQ; any request's error answer)."""

    code: int = ClientResponseCode.SUCCESS
    remark: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == ClientResponseCode.SUCCESS


@dataclass(frozen=True, slots=True)
class ConsumerListResponse:
    consumer_id_list: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetResponse:
    """The ``offset`` header of QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and
    SEARCH_OFFSET_BY_TIMESTAMP."""

    offset: int


@dataclass(frozen=True, slots=True)
class TimestampResponse:
    """GET_EARLIEST_MSG_STORETIME's ``timestamp`` header."""

    timestamp: int


@dataclass(frozen=True, slots=True)
class MessageRecordsResponse:
    """VIEW_MESSAGE_BY_ID (one record) and QUERY_MESSAGE (the index hits): stored records back to back;
    QUERY_MESSAGE also carries the index's last update (``QueryMessageResponseHeader``)."""

    records: bytes
    index_last_update_timestamp: int | None = None
    index_last_update_phyoffset: int | None = None


@dataclass(frozen=True, slots=True)
class LockBatchResponse:
    lock_ok_mq_set: tuple[MessageQueue, ...] = field(default=())


CLIENT_REQUESTS: dict[type, int] = {
    HeartbeatRequest: ClientRequestCode.HEART_BEAT, UnregisterClientRequest: ClientRequestCode.UNREGISTER_CLIENT,
    GetConsumerListByGroupRequest: ClientRequestCode.GET_CONSUMER_LIST_BY_GROUP,
    QueryConsumerOffsetRequest: ClientRequestCode.QUERY_CONSUMER_OFFSET,
    GetMaxOffsetRequest: ClientRequestCode.GET_MAX_OFFSET, GetMinOffsetRequest: ClientRequestCode.GET_MIN_OFFSET,
    GetEarliestMsgStoretimeRequest: ClientRequestCode.GET_EARLIEST_MSG_STORETIME,
    SearchOffsetRequest: ClientRequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
    ViewMessageRequest: ClientRequestCode.VIEW_MESSAGE_BY_ID, QueryMessageRequest: ClientRequestCode.QUERY_MESSAGE,
    LockBatchRequest: ClientRequestCode.LOCK_BATCH_MQ, UnlockBatchRequest: ClientRequestCode.UNLOCK_BATCH_MQ,
    NotifyConsumerIdsChanged: ClientRequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
}
"""Request class -> code."""

ANSWERS: dict[type, type] = {
    HeartbeatRequest: ClientAnswer, UnregisterClientRequest: ClientAnswer, UnlockBatchRequest: ClientAnswer,
    GetConsumerListByGroupRequest: ConsumerListResponse, QueryConsumerOffsetRequest: OffsetResponse,
    GetMaxOffsetRequest: OffsetResponse, GetMinOffsetRequest: OffsetResponse, SearchOffsetRequest: OffsetResponse,
    GetEarliestMsgStoretimeRequest: TimestampResponse, ViewMessageRequest: MessageRecordsResponse,
    QueryMessageRequest: MessageRecordsResponse, LockBatchRequest: LockBatchResponse,
}
"""Request class -> the class of its successful answer (an error answer is a :class:`ClientAnswer`)."""

# ------------------------------------------------------------------------------------ header classes
_H = "org.apache.rocketmq.common.protocol.header."
_RPC = "org.apache.rocketmq.common.rpc.RpcRequestHeader"


def _header(name: str, *specs: str, rpc: bool = False, optional: tuple[str, ...] = ()) -> Header:
    fields = props(_H + name, *specs, required=tuple(s.split()[1] for s in specs if s.split()[1] not in optional))
    return Header(_H + name, fields + (props(_RPC, "String bname") if rpc else ()))


UNREGISTER_CLIENT_REQUEST_HEADER = _header("UnregisterClientRequestHeader", "String clientID", "String producerGroup",
                                           "String consumerGroup", optional=("producerGroup", "consumerGroup"))
GET_CONSUMER_LIST_BY_GROUP_REQUEST_HEADER = _header("GetConsumerListByGroupRequestHeader", "String consumerGroup")
QUERY_CONSUMER_OFFSET_REQUEST_HEADER = _header("QueryConsumerOffsetRequestHeader", "String consumerGroup",
                                               "String topic", "Integer queueId", rpc=True)
QUERY_CONSUMER_OFFSET_RESPONSE_HEADER = _header("QueryConsumerOffsetResponseHeader", "Long offset")
GET_MAX_OFFSET_REQUEST_HEADER = _header("GetMaxOffsetRequestHeader", "String topic", "Integer queueId", rpc=True)
GET_MIN_OFFSET_REQUEST_HEADER = _header("GetMinOffsetRequestHeader", "String topic", "Integer queueId", rpc=True)
GET_EARLIEST_MSG_STORETIME_REQUEST_HEADER = _header("GetEarliestMsgStoretimeRequestHeader", "String topic",
                                                    "Integer queueId", rpc=True)
SEARCH_OFFSET_REQUEST_HEADER = _header("SearchOffsetRequestHeader", "String topic", "Integer queueId",
                                       "Long timestamp", rpc=True)
OFFSET_RESPONSE_HEADER = _header("GetMaxOffsetResponseHeader", "Long offset")
TIMESTAMP_RESPONSE_HEADER = _header("GetEarliestMsgStoretimeResponseHeader", "Long timestamp")
VIEW_MESSAGE_REQUEST_HEADER = _header("ViewMessageRequestHeader", "Long offset")
QUERY_MESSAGE_REQUEST_HEADER = _header("QueryMessageRequestHeader", "String topic", "String key", "Integer maxNum",
                                       "Long beginTimestamp", "Long endTimestamp")
QUERY_MESSAGE_RESPONSE_HEADER = _header("QueryMessageResponseHeader", "Long indexLastUpdateTimestamp",
                                        "Long indexLastUpdatePhyoffset")
NOTIFY_CONSUMER_IDS_CHANGED_REQUEST_HEADER = _header("NotifyConsumerIdsChangedRequestHeader", "String consumerGroup")
UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"  # MixAll.UNIQUE_MSG_QUERY_FLAG


# ------------------------------------------------------------------------------------ JSON bodies
def heartbeat_body(msg: HeartbeatRequest) -> bytes:
    return fastjson.dumps({"clientID": msg.client_id, "consumerDataSet": [c.to_json() for c in msg.consumers],
                           "producerDataSet": [{"groupName": g} for g in msg.producer_groups]})


def read_heartbeat(body: bytes | None, language: str, version: int) -> HeartbeatRequest:
    d = _object(_json(body, "HeartbeatData"), "HeartbeatData")
    producers = tuple(_str(_object(p, "ProducerData"), "groupName", required=True) for p in _list(d, "producerDataSet"))
    consumers = tuple(ConsumerData.from_json(c) for c in _list(d, "consumerDataSet"))
    return HeartbeatRequest(_str(d, "clientID") or "", producers, consumers, language, version)


def lock_body(msg: LockBatchRequest | UnlockBatchRequest) -> bytes:
    return fastjson.dumps({"clientId": msg.client_id, "consumerGroup": msg.consumer_group,
                           "mqSet": [mq.to_json() for mq in msg.mq_set]})


def read_lock_body(body: bytes | None, cls: type) -> Any:
    d = _object(_json(body, cls.__name__), cls.__name__)
    return cls(_str(d, "consumerGroup", required=True), _str(d, "clientId", required=True),
               tuple(MessageQueue.from_json(m) for m in _list(d, "mqSet")))


def read_json_body(body: bytes | None, what: str) -> dict[str, Any]:
    return _object(_json(body, what), what)


def _json(body: bytes | None, what: str) -> Any:
    if not body:
        raise CodecError(f"{what}: the request has no body")
    try:
        return fastjson.loads(body)
    except ValueError as e:
        raise CodecError(f"{what}: the body is not JSON ({e})") from None


def _object(d: Any, what: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise CodecError(f"{what}: expected a JSON object, got {type(d).__name__}")
    return d


def _list(d: dict[str, Any], key: str) -> list[Any]:
    value = d.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise CodecError(f"{key}: expected a JSON array, got {type(value).__name__}")
    return value


def _str(d: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = d.get(key)
    if value is None:
        if required:
            raise CodecError(f"{key}: missing")
        return None
    if not isinstance(value, str):
        raise CodecError(f"{key}: expected a string, got {type(value).__name__}")
    return value


def _enum(d: dict[str, Any], key: str, names: tuple[str, ...]) -> str | None:
    """A Java enum as fastjson's ``EnumDeserializer`` reads it: its name, or an integer as the ordinal."""
    value = d.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(names):
            raise CodecError(f"{key}: no constant with ordinal {value} (0..{len(names) - 1})")
        return names[value]
    return _str(d, key)


def _long(value: Any, key: str) -> int:
    """A number field as fastjson reads it: a JSON integer or a quoted one (rocketmq-client-cpp quotes
    ``subVersion``)."""
    if isinstance(value, str) and value.lstrip("-").isdigit() and value.isascii():
        return int(value)
    return _int(value, key)


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"{key}: expected an integer, got {value!r}")
    return value
