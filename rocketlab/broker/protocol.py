"""Requests a broker answers, with RocketMQ 4.9.5's request codes and header classes on the wire.

* ``SendMessageRequest`` / ``SendMessageResponse`` — SEND_MESSAGE (10) with ``SendMessageRequestHeader``
  in the ext fields and the message body as the command's body; the answer's code follows
  ``SendMessageProcessor.handlePutMessageResult`` (PUT_OK 0, FLUSH_DISK_TIMEOUT 10, SLAVE_NOT_AVAILABLE
  11, FLUSH_SLAVE_TIMEOUT 12, MESSAGE_ILLEGAL 13, SERVICE_NOT_AVAILABLE 14, the rest SYSTEM_ERROR with
  Java's remark) with ``SendMessageResponseHeader`` (msgId, queueId, queueOffset). SEND_MESSAGE_V2 (310,
  ``SendMessageRequestHeaderV2``'s one-letter fields, what a Java producer sends by default) is read too;
* ``PullMessageRequest`` / ``PullMessageResponse`` — PULL_MESSAGE (11), the whole ``PullMessageRequestHeader``
  (``PullSysFlag`` bits, commitOffset, suspendTimeoutMillis, subscription, subVersion, expressionType; served by
  :mod:`rocketlab.broker.pull_message_processor`); the answer's code and remark as ``PullMessageProcessor``
  sets them (remark: the store's GetMessageStatus, or Java's error remark), ``PullMessageResponseHeader``,
  and the found messages' stored records back to back as the body, as Java sends them;
* ``GetAllMetadataRequest`` / ``GetAllMetadataResponse`` — what SlaveSynchronize pulls: GET_ALL_TOPIC_CONFIG
  (21), GET_ALL_CONSUMER_OFFSET (43), GET_ALL_DELAY_OFFSET (45) and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)
  in one round trip under code 21 (simplified: Java makes four; the body is the kit's JSON of the four);
* ``UpdateConsumerOffsetRequest`` — UPDATE_CONSUMER_OFFSET (15), ``UpdateConsumerOffsetRequestHeader``.

:data:`BROKER_FAMILY` maps them to commands; :func:`broker_codec` is a classic broker's codec,
:func:`auto_switch_broker_codec` a controller-mode broker's (it also sends the controller RPCs and
serves the role-change notices of :mod:`rocketlab.controller.wire`).

Java: ``common/protocol/RequestCode``, ``ResponseCode``, ``header/SendMessageRequestHeader`` (and V2),
``SendMessageResponseHeader``, ``PullMessageRequestHeader``, ``PullMessageResponseHeader``,
``UpdateConsumerOffsetRequestHeader`` (4.9.5; 5.3.3's carry the same fields plus null ones).
A send carries every header field (``sysFlag``, ``flag``, ``reconsumeTimes``, ``maxReconsumeTimes``,
``defaultTopic``, ...) and its properties string as it came; SEND_BATCH_MESSAGE (320) is a send with
``batch`` (V2 header, the packed messages as body); the broker's send path is
:mod:`rocketlab.broker.send_path`. Differences: the kit's clients write ``producerGroup`` ``rocketlab`` and
``bornTimestamp`` 0 unless set (the broker stores what it is given, as Java does) and RemotingCommand version
0; the kit's own pull carries ``subscription``
``*`` (FLAG_SUBSCRIPTION) unless told otherwise.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

from rocketlab.broker.client_family import CLIENT_FAMILY
from rocketlab.broker.send_protocol import SEND_BACK_FAMILY
from rocketlab.controller.wire import CONTROLLER_FAMILY, NOTIFY_FAMILY
from rocketlab.errors import CodecError
from rocketlab.namesrv.protocol import NAMESRV_FAMILY
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand, RemotingSysResponseCode
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.headers import Header, props
from rocketlab.store.message import message_properties_to_string, string_to_message_properties
from rocketlab.store.message_codec import decode_message


@dataclass(frozen=True, slots=True)
class SendMessageRequest:
    topic: str
    body: bytes
    queue_id: int = 0
    tags: str | None = None
    keys: str | None = None
    properties: dict[str, str] | None = None
    producer_group: str = "rocketlab"
    born_timestamp: int = 0
    sys_flag: int = 0
    flag: int = 0
    reconsume_times: int = 0
    max_reconsume_times: int | None = None
    default_topic: str = "TBW102"
    default_topic_queue_nums: int = 4
    batch: bool = False
    unit_mode: bool = False
    v2: bool = field(default=False, compare=False)
    version: int = field(default=399, compare=False)
    """The request's RemotingCommand version (MQVersion ordinal; 399 = V4_9_5, a 4.9.5 client); below 117
    (V3_4_9) the broker ignores ``max_reconsume_times``, as Java does. Read from the wire, never written."""
    properties_string: str | None = field(default=None, compare=False)
    """The properties as they came on the wire (their order decides Java's ``HashMap`` order when the
    broker re-writes them); None: built from ``tags``, ``keys`` and ``properties``."""

    def property_map(self) -> dict[str, str]:
        """``string2messageProperties`` of the properties sent, in their order on the wire."""
        if self.properties_string is not None:
            return string_to_message_properties(self.properties_string)
        text = _properties_string(self)
        return string_to_message_properties(text) if text else {}


@dataclass(frozen=True, slots=True)
class SendMessageResponse:
    """``status``: a PutMessageStatus name, or (with ``code``) the name of the ResponseCode a processor
    refused with (NO_PERMISSION, TOPIC_NOT_EXIST, SUBSCRIPTION_GROUP_NOT_EXIST, SYSTEM_ERROR,
    MESSAGE_ILLEGAL) and Java's remark."""

    status: str
    msg_id: str | None = None
    queue_offset: int = -1
    phy_offset: int = -1
    remark: str | None = None
    queue_id: int | None = None
    code: int | None = None


class PullSysFlag:
    """``PullSysFlag`` (4.9.5): the pull's ``sysFlag`` bits."""

    FLAG_COMMIT_OFFSET = 0x1
    FLAG_SUSPEND = 0x1 << 1
    FLAG_SUBSCRIPTION = 0x1 << 2
    FLAG_CLASS_FILTER = 0x1 << 3
    FLAG_LITE_PULL_MESSAGE = 0x1 << 4


@dataclass(frozen=True, slots=True)
class PullMessageRequest:
    """``PullMessageRequestHeader``. The kit's own pulls carry their subscription (FLAG_SUBSCRIPTION,
    ``*``), as ``DefaultMQPullConsumer``'s do; a push consumer's carry FLAG_SUSPEND and FLAG_COMMIT_OFFSET
    and no subscription (``postSubscriptionWhenPull=false``)."""

    topic: str
    queue_id: int
    offset: int
    max_msg_nums: int = 32
    consumer_group: str = "rocketlab"
    sys_flag: int = PullSysFlag.FLAG_SUBSCRIPTION
    commit_offset: int = 0
    suspend_timeout_millis: int = 0
    subscription: str | None = "*"
    sub_version: int = 0
    expression_type: str | None = "TAG"


@dataclass(frozen=True, slots=True)
class PullMessageResponse:
    """``status``: the store's GetMessageStatus name (or PULL_RETRY_IMMEDIATELY from a fenced broker);
    ``records``: the found messages' stored records back to back (the command's body)."""

    status: str
    records: bytes = b""
    next_begin_offset: int = 0
    min_offset: int = 0
    max_offset: int = 0
    suggest_which_broker_id: int = 0
    code: int | None = None
    """The response code when it is not the status's (``PULL_CODES``): PULL_OFFSET_MOVED for an empty
    queue pulled past 0, PULL_RETRY_IMMEDIATELY, or an error (then ``status`` is Java's remark)."""

    @property
    def response_code(self) -> int:
        return self.code if self.code is not None else PULL_CODES.get(self.status, ResponseCode.SYSTEM_ERROR)

    @property
    def answered_as_master(self) -> bool:
        """The answer to :func:`role_probe` of a master: PULL_OFFSET_MOVED (a slave answers
        PULL_RETRY_IMMEDIATELY, not moving a consumer's offset: ``offsetCheckInSlave=false``)."""
        return self.response_code == ResponseCode.PULL_OFFSET_MOVED

    @property
    def messages(self) -> tuple[dict[str, Any], ...]:
        """Each record decoded: queue_offset, phy_offset, body, msg_id, tags, keys."""
        out = []
        pos = 0
        while pos + 4 <= len(self.records):
            (size,) = struct.unpack_from(">i", self.records, pos)
            if size <= 0 or pos + size > len(self.records):
                raise CodecError(f"a pulled record at {pos} claims {size} bytes of {len(self.records) - pos}")
            m = decode_message(self.records[pos:pos + size])
            out.append({"queue_offset": m.queue_offset, "phy_offset": m.commit_log_offset, "body": m.body,
                        "msg_id": m.msg_id, "tags": m.tags, "keys": m.keys})
            pos += size
        return tuple(out)


ROLE_PROBE_OFFSET = 1 << 62


def role_probe(topic: str, queue_id: int = 0) -> PullMessageRequest:
    """A pull far past the end of a queue of an existing topic: ``PullMessageProcessor`` answers
    PULL_OFFSET_MOVED on a master, PULL_RETRY_IMMEDIATELY on a slave - how the kit's tools tell a master
    through the client protocol alone (see :attr:`PullMessageResponse.answered_as_master`)."""
    return PullMessageRequest(topic, queue_id, ROLE_PROBE_OFFSET, 1)


@dataclass(frozen=True, slots=True)
class GetAllMetadataRequest:
    pass


@dataclass(frozen=True, slots=True)
class GetAllMetadataResponse:
    snapshot: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UpdateConsumerOffsetRequest:
    group: str
    topic: str
    queue_id: int
    offset: int


@dataclass(frozen=True, slots=True)
class UpdateConsumerOffsetResponse:
    ok: bool = True


BROKER_MESSAGES = (SendMessageRequest, SendMessageResponse, PullMessageRequest, PullMessageResponse,
                   GetAllMetadataRequest, GetAllMetadataResponse, UpdateConsumerOffsetRequest,
                   UpdateConsumerOffsetResponse)


class RequestCode:
    """``RequestCode`` (4.9.5) of the requests above."""

    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    UPDATE_CONSUMER_OFFSET = 15
    GET_ALL_TOPIC_CONFIG = 21
    SEND_MESSAGE_V2 = 310
    SEND_BATCH_MESSAGE = 320


class ResponseCode:
    """``ResponseCode`` (4.9.5) of the answers above."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    SUBSCRIPTION_GROUP_NOT_EXIST = 26


# ------------------------------------------------------------------------------------ header classes
_H = "org.apache.rocketmq.common.protocol.header."
_RPC = "org.apache.rocketmq.common.rpc.RpcRequestHeader"
SEND_MESSAGE_REQUEST_HEADER = Header(_H + "SendMessageRequestHeader", props(
    _H + "SendMessageRequestHeader", "String producerGroup", "String topic", "String defaultTopic",
    "Integer defaultTopicQueueNums", "Integer queueId", "Integer sysFlag", "Long bornTimestamp", "Integer flag",
    "String properties", "Integer reconsumeTimes", "boolean unitMode", "boolean batch", "Integer maxReconsumeTimes",
    required=("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
              "bornTimestamp", "flag")) + props(_RPC, "String bname"))
SEND_MESSAGE_REQUEST_HEADER_V2 = Header(_H + "SendMessageRequestHeaderV2", props(
    _H + "SendMessageRequestHeaderV2", "String a", "String b", "String c", "Integer d", "Integer e", "Integer f",
    "Long g", "Integer h", "String i", "Integer j", "boolean k", "Integer l", "boolean m",
    required=("a", "b", "c", "d", "e", "f", "g", "h")) + props(_RPC, "String bname"))
_V2 = {"a": "producerGroup", "b": "topic", "c": "defaultTopic", "d": "defaultTopicQueueNums", "e": "queueId",
       "f": "sysFlag", "g": "bornTimestamp", "h": "flag", "i": "properties", "j": "reconsumeTimes", "k": "unitMode",
       "l": "maxReconsumeTimes", "m": "batch"}
SEND_MESSAGE_RESPONSE_HEADER = Header(_H + "SendMessageResponseHeader", props(
    _H + "SendMessageResponseHeader", "String msgId", "Integer queueId", "Long queueOffset", "String transactionId",
    required=("msgId", "queueId", "queueOffset")))
PULL_MESSAGE_REQUEST_HEADER = Header(_H + "PullMessageRequestHeader", props(
    _H + "PullMessageRequestHeader", "String consumerGroup", "String topic", "Integer queueId", "Long queueOffset",
    "Integer maxMsgNums", "Integer sysFlag", "Long commitOffset", "Long suspendTimeoutMillis", "String subscription",
    "Long subVersion", "String expressionType",
    required=("consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset",
              "suspendTimeoutMillis", "subVersion")) + props(_RPC, "String bname"))
PULL_MESSAGE_RESPONSE_HEADER = Header(_H + "PullMessageResponseHeader", props(
    _H + "PullMessageResponseHeader", "Long suggestWhichBrokerId", "Long nextBeginOffset", "Long minOffset",
    "Long maxOffset", required=("suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset")))
UPDATE_CONSUMER_OFFSET_REQUEST_HEADER = Header(_H + "UpdateConsumerOffsetRequestHeader", props(
    _H + "UpdateConsumerOffsetRequestHeader", "String consumerGroup", "String topic", "Integer queueId",
    "Long commitOffset", required=("consumerGroup", "topic", "queueId", "commitOffset")) + props(_RPC, "String bname"))

# ------------------------------------------------------------------------------------ status <-> code
SEND_CODES: dict[str, tuple[int, str | None]] = {
    "PUT_OK": (ResponseCode.SUCCESS, None),
    "FLUSH_DISK_TIMEOUT": (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    "FLUSH_SLAVE_TIMEOUT": (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    "SLAVE_NOT_AVAILABLE": (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    "CREATE_MAPEDFILE_FAILED": (ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."),
    "MESSAGE_ILLEGAL": (ResponseCode.MESSAGE_ILLEGAL, "the message is illegal, maybe msg body or properties length "
                        "not matched. msg body length limit 4194304B, msg properties length limit 32KB."),
    "SERVICE_NOT_AVAILABLE": (ResponseCode.SERVICE_NOT_AVAILABLE, "service not available now. It may be caused by one "
                              "of the following reasons: the broker's disk is full, messages are put to the slave, "
                              "message store has been shut down, etc."),
    "OS_PAGECACHE_BUSY": (ResponseCode.SYSTEM_ERROR, "[PC_SYNCHRONIZED]broker busy, start flow control for a while"),
    "UNKNOWN_ERROR": (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}
"""PutMessageStatus -> (response code, Java's remark), ``SendMessageProcessor.handlePutMessageResult``;
PROPERTIES_SIZE_EXCEEDED goes as MESSAGE_ILLEGAL, any other status as SYSTEM_ERROR "UNKNOWN_ERROR DEFAULT"."""
_SEND_OK = frozenset({"PUT_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE"})
_STATUS_OF_CODE = {code: status for status, (code, _) in SEND_CODES.items() if code != ResponseCode.SYSTEM_ERROR}
_STATUS_OF_REMARK = {remark: status for status, (code, remark) in SEND_CODES.items()
                     if code == ResponseCode.SYSTEM_ERROR}

PULL_CODES: dict[str, int] = {
    "FOUND": ResponseCode.SUCCESS, "MESSAGE_WAS_REMOVING": ResponseCode.PULL_RETRY_IMMEDIATELY,
    "NO_MATCHED_LOGIC_QUEUE": ResponseCode.PULL_NOT_FOUND, "NO_MESSAGE_IN_QUEUE": ResponseCode.PULL_NOT_FOUND,
    "NO_MATCHED_MESSAGE": ResponseCode.PULL_RETRY_IMMEDIATELY, "OFFSET_FOUND_NULL": ResponseCode.PULL_NOT_FOUND,
    "OFFSET_OVERFLOW_BADLY": ResponseCode.PULL_OFFSET_MOVED, "OFFSET_OVERFLOW_ONE": ResponseCode.PULL_NOT_FOUND,
    "OFFSET_TOO_SMALL": ResponseCode.PULL_OFFSET_MOVED, "PULL_RETRY_IMMEDIATELY": ResponseCode.PULL_RETRY_IMMEDIATELY,
}
"""GetMessageStatus -> response code (``PullMessageProcessor``; a queue that is empty at offset 0 is
PULL_NOT_FOUND). The remark carries the status's name, as Java sets it."""
_PULL_ANSWER_CODES = frozenset(PULL_CODES.values())
"""The codes of a pull answered with a ``PullMessageResponseHeader``; any other is an error answer."""


def _properties_string(msg: SendMessageRequest) -> str | None:
    props_: dict[str, str] = {}
    if msg.tags is not None:
        props_["TAGS"] = msg.tags
    if msg.keys is not None:
        props_["KEYS"] = msg.keys
    props_.update(msg.properties or {})
    return message_properties_to_string(props_) if props_ else None


def _offset_of(msg_id: str | None) -> int:
    """The CommitLog offset in an offset message id (store host, then 8 bytes of offset, in hex)."""
    if msg_id is None or len(msg_id) not in (32, 56):
        return -1
    try:
        return int(msg_id[-16:], 16)
    except ValueError:
        return -1


_REFUSALS = {ResponseCode.NO_PERMISSION: "NO_PERMISSION", ResponseCode.TOPIC_NOT_EXIST: "TOPIC_NOT_EXIST",
             ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: "SUBSCRIPTION_GROUP_NOT_EXIST"}


def _encode_send(msg: SendMessageRequest) -> Parts:
    """SEND_MESSAGE (``SendMessageRequestHeader``), or as ``MQClientAPIImpl`` sends with ``sendSmartMsg``:
    SEND_MESSAGE_V2 (``v2``) or SEND_BATCH_MESSAGE (``batch``) with the one-letter V2 header."""
    props_text = msg.properties_string if msg.properties_string is not None else _properties_string(msg)
    values = {"producerGroup": msg.producer_group, "topic": msg.topic, "defaultTopic": msg.default_topic,
              "defaultTopicQueueNums": msg.default_topic_queue_nums, "queueId": msg.queue_id, "sysFlag": msg.sys_flag,
              "bornTimestamp": msg.born_timestamp, "flag": msg.flag, "properties": props_text,
              "reconsumeTimes": msg.reconsume_times, "unitMode": msg.unit_mode, "batch": msg.batch,
              "maxReconsumeTimes": msg.max_reconsume_times}
    if not (msg.v2 or msg.batch):
        return Parts(RequestCode.SEND_MESSAGE, None, SEND_MESSAGE_REQUEST_HEADER.write(values), msg.body)
    ext = SEND_MESSAGE_REQUEST_HEADER_V2.write({k: values[v] for k, v in _V2.items()})
    return Parts(RequestCode.SEND_BATCH_MESSAGE if msg.batch else RequestCode.SEND_MESSAGE_V2, None, ext, msg.body)


def _decode_send(cmd: RemotingCommand) -> SendMessageRequest:
    """``AbstractSendMessageProcessor.parseRequestHeader``: V2 for SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE."""
    if cmd.code == RequestCode.SEND_MESSAGE:
        h = SEND_MESSAGE_REQUEST_HEADER.read(cmd)
    else:
        h = {_V2[k]: v for k, v in SEND_MESSAGE_REQUEST_HEADER_V2.read(cmd).items() if k in _V2}
    raw = h.get("properties")
    properties = string_to_message_properties(raw) if raw else {}
    tags, keys = properties.pop("TAGS", None), properties.pop("KEYS", None)
    return SendMessageRequest(
        h["topic"], cmd.body or b"", h["queueId"], tags, keys, properties or None, h["producerGroup"],
        h["bornTimestamp"], sys_flag=h["sysFlag"], flag=h["flag"], reconsume_times=h.get("reconsumeTimes") or 0,
        max_reconsume_times=h.get("maxReconsumeTimes"), default_topic=h["defaultTopic"],
        default_topic_queue_nums=h["defaultTopicQueueNums"], batch=bool(h.get("batch")),
        unit_mode=bool(h.get("unitMode")), v2=cmd.code != RequestCode.SEND_MESSAGE, version=cmd.version,
        properties_string=raw)


class BrokerFamily(Family):
    """The broker's requests (see the module docstring)."""

    name = "broker"
    requests = {SendMessageRequest: RequestCode.SEND_MESSAGE, PullMessageRequest: RequestCode.PULL_MESSAGE,
                UpdateConsumerOffsetRequest: RequestCode.UPDATE_CONSUMER_OFFSET,
                GetAllMetadataRequest: RequestCode.GET_ALL_TOPIC_CONFIG}
    responses = frozenset({SendMessageResponse, PullMessageResponse, GetAllMetadataResponse,
                           UpdateConsumerOffsetResponse})
    codes = frozenset({*requests.values(), RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE})
    _answers = {SendMessageRequest: SendMessageResponse, PullMessageRequest: PullMessageResponse,
                UpdateConsumerOffsetRequest: UpdateConsumerOffsetResponse, GetAllMetadataRequest: GetAllMetadataResponse}

    # ------------------------------------------------------------------ out
    def encode(self, msg: Any) -> Parts:
        t = type(msg)
        if t is SendMessageRequest:
            return _encode_send(msg)
        if t is PullMessageRequest:
            ext = PULL_MESSAGE_REQUEST_HEADER.write({
                "consumerGroup": msg.consumer_group, "topic": msg.topic, "queueId": msg.queue_id,
                "queueOffset": msg.offset, "maxMsgNums": msg.max_msg_nums, "sysFlag": msg.sys_flag,
                "commitOffset": msg.commit_offset, "suspendTimeoutMillis": msg.suspend_timeout_millis,
                "subscription": msg.subscription, "subVersion": msg.sub_version,
                "expressionType": msg.expression_type})
            return Parts(RequestCode.PULL_MESSAGE, None, ext, None)
        if t is UpdateConsumerOffsetRequest:
            ext = UPDATE_CONSUMER_OFFSET_REQUEST_HEADER.write({
                "consumerGroup": msg.group, "topic": msg.topic, "queueId": msg.queue_id, "commitOffset": msg.offset})
            return Parts(RequestCode.UPDATE_CONSUMER_OFFSET, None, ext, None)
        if t is GetAllMetadataRequest:
            return Parts(RequestCode.GET_ALL_TOPIC_CONFIG, None, None, None)
        if t is SendMessageResponse:
            if msg.code is not None:
                return Parts(msg.code, msg.remark, {}, None)
            code, remark = SEND_CODES.get(msg.status, (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT"))
            if msg.status == "PROPERTIES_SIZE_EXCEEDED":
                code, remark = SEND_CODES["MESSAGE_ILLEGAL"]
            ext: dict[str, str] = {}  # the processor always makes its response with the header class
            if msg.status in _SEND_OK:
                ext = SEND_MESSAGE_RESPONSE_HEADER.write({
                    "msgId": msg.msg_id, "queueId": msg.queue_id, "queueOffset": msg.queue_offset, "transactionId": None})
                remark = None
            return Parts(code, msg.remark if msg.remark is not None else remark, ext, None)
        if t is PullMessageResponse:
            code = msg.code if msg.code is not None else PULL_CODES.get(msg.status, RemotingSysResponseCode.SYSTEM_ERROR)
            if code not in _PULL_ANSWER_CODES:  # an error: Java answers with the remark, no header
                return Parts(code, msg.status, None, None)
            ext = PULL_MESSAGE_RESPONSE_HEADER.write({
                "suggestWhichBrokerId": msg.suggest_which_broker_id, "nextBeginOffset": msg.next_begin_offset,
                "minOffset": msg.min_offset, "maxOffset": msg.max_offset})
            return Parts(code, msg.status, ext, msg.records or None)
        if t is UpdateConsumerOffsetResponse:
            return (Parts(ResponseCode.SUCCESS, None, None, None) if msg.ok
                    else Parts(ResponseCode.SYSTEM_ERROR, "update consumer offset failed", None, None))
        if t is GetAllMetadataResponse:
            return Parts(ResponseCode.SUCCESS, None, None, json.dumps(msg.snapshot, sort_keys=True).encode())
        raise CodecError(f"cannot encode {t.__name__}: not a broker message")

    # ------------------------------------------------------------------ in
    def decode_request(self, cmd: RemotingCommand) -> Any:
        if cmd.code in (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE):
            return _decode_send(cmd)
        if cmd.code == RequestCode.PULL_MESSAGE:
            h = PULL_MESSAGE_REQUEST_HEADER.read(cmd)
            return PullMessageRequest(h["topic"], h["queueId"], h["queueOffset"], h["maxMsgNums"], h["consumerGroup"],
                                      h["sysFlag"], h["commitOffset"], h["suspendTimeoutMillis"], h["subscription"],
                                      h["subVersion"], h["expressionType"])
        if cmd.code == RequestCode.UPDATE_CONSUMER_OFFSET:
            h = UPDATE_CONSUMER_OFFSET_REQUEST_HEADER.read(cmd)
            return UpdateConsumerOffsetRequest(h["consumerGroup"], h["topic"], h["queueId"], h["commitOffset"])
        return GetAllMetadataRequest()

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        t = self._answers[answers]
        if t is SendMessageResponse:
            if cmd.code == ResponseCode.SYSTEM_ERROR:
                status = _STATUS_OF_REMARK.get(cmd.remark or "", "UNKNOWN_ERROR")
            elif cmd.code in _REFUSALS:
                return SendMessageResponse(_REFUSALS[cmd.code], remark=cmd.remark, code=cmd.code)
            else:
                status = _STATUS_OF_CODE.get(cmd.code)
                if status is None:
                    raise CodecError(f"SEND_MESSAGE answered with code {cmd.code} ({cmd.remark})")
            if status in _SEND_OK:
                h = SEND_MESSAGE_RESPONSE_HEADER.read(cmd)
                return SendMessageResponse(status, h["msgId"], h["queueOffset"], _offset_of(h["msgId"]), cmd.remark,
                                           h["queueId"])
            return SendMessageResponse(status, remark=cmd.remark)
        if t is PullMessageResponse:
            if cmd.code not in _PULL_ANSWER_CODES:
                return PullMessageResponse(cmd.remark or "", code=cmd.code)
            h = PULL_MESSAGE_RESPONSE_HEADER.read(cmd)
            status = cmd.remark if cmd.remark in PULL_CODES else {0: "FOUND", 19: "OFFSET_FOUND_NULL", 20:
                                                                  "PULL_RETRY_IMMEDIATELY", 21: "OFFSET_TOO_SMALL"}[cmd.code]
            return PullMessageResponse(status, cmd.body or b"", h["nextBeginOffset"], h["minOffset"], h["maxOffset"],
                                       h["suggestWhichBrokerId"],
                                       None if PULL_CODES.get(status) == cmd.code else cmd.code)
        if t is UpdateConsumerOffsetResponse:
            return UpdateConsumerOffsetResponse(cmd.code == ResponseCode.SUCCESS)
        if cmd.code != ResponseCode.SUCCESS or not cmd.body:
            raise CodecError(f"GET_ALL_TOPIC_CONFIG answered with code {cmd.code} ({cmd.remark})")
        try:
            snapshot = json.loads(cmd.body)
        except (ValueError, UnicodeDecodeError) as e:
            raise CodecError(f"GET_ALL_TOPIC_CONFIG body is not JSON: {e}") from None
        if not isinstance(snapshot, dict):
            raise CodecError("GET_ALL_TOPIC_CONFIG body must be a JSON object")
        return GetAllMetadataResponse(snapshot)


BROKER_FAMILY = BrokerFamily()


def broker_codec() -> RemotingCodec:
    """The remoting codec of a classic broker and its clients: the broker's requests (SlaveSynchronize's
    too) and the client-facing ones (:mod:`rocketlab.broker.client_family`), which it serves; the name
    server's, which it sends to register."""
    return RemotingCodec((BROKER_FAMILY, SEND_BACK_FAMILY, CLIENT_FAMILY, NAMESRV_FAMILY),
                         serves=("broker", SEND_BACK_FAMILY.name, CLIENT_FAMILY.name))


def auto_switch_broker_codec() -> RemotingCodec:
    """The remoting codec of a controller-mode broker (:mod:`rocketlab.broker.auto_switch_broker`): it serves
    the broker's requests and the controllers' role-change notices, and sends the controller RPCs and the
    name server's registrations."""
    return RemotingCodec((BROKER_FAMILY, SEND_BACK_FAMILY, CLIENT_FAMILY, CONTROLLER_FAMILY, NOTIFY_FAMILY,
                          NAMESRV_FAMILY), serves=("broker", SEND_BACK_FAMILY.name, CLIENT_FAMILY.name, "controller-notify"))
