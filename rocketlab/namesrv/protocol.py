"""The name server's requests, with RocketMQ 4.9.5's request codes, header classes and bodies.

* ``RegisterBrokerRequest`` / ``RegisterBrokerResponse`` — REGISTER_BROKER (103),
  ``RegisterBrokerRequestHeader`` (brokerName, brokerAddr, clusterName, haServerAddr, brokerId,
  compressed, bodyCrc32) and a :class:`~rocketlab.namesrv.route.RegisterBrokerBody`; sent with the
  command version of 4.9.5 (``V4_9_5``), as ``BrokerOuterAPI`` does, so a Java name server takes its
  ``registerBrokerWithFilterServer`` path. The answer: ``RegisterBrokerResponseHeader`` (haServerAddr,
  masterAddr); a body whose CRC32 (``UtilAll.crc32``: the low 31 bits) does not match is answered
  SYSTEM_ERROR "crc32 not match", as ``DefaultRequestProcessor.checksum``;
* ``UnregisterBrokerRequest`` — UNREGISTER_BROKER (104), ``UnRegisterBrokerRequestHeader``;
* ``GetRouteInfoRequest`` / ``GetRouteInfoResponse`` — GET_ROUTEINFO_BY_TOPIC (105),
  ``GetRouteInfoRequestHeader`` (topic, acceptStandardJsonOnly); TOPIC_NOT_EXIST (17) with Java's
  remark for a topic without a route; a request of version >= ``V4_9_4`` (or acceptStandardJsonOnly) gets
  standard JSON, an older one fastjson's (integer keys unquoted);
* ``GetBrokerClusterInfoRequest`` / ``GetBrokerClusterInfoResponse`` — GET_BROKER_CLUSTER_INFO (106);
* ``GetAllTopicListRequest`` / ``GetAllTopicListResponse`` — GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206).

:data:`NAMESRV_FAMILY` maps them to commands; :func:`namesrv_codec` is the name server's codec, and
brokers add the family to theirs to register. Java: ``common/protocol/RequestCode``, ``ResponseCode``,
``header/namesrv/*``, ``namesrv/processor/DefaultRequestProcessor``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.namesrv.route import ClusterInfo, RegisterBrokerBody, TopicList, TopicRouteData, dumps
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.fastjson import loads
from rocketlab.remoting.headers import Header, props


class RequestCode:
    REGISTER_BROKER = 103
    UNREGISTER_BROKER = 104
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206


class ResponseCode:
    SUCCESS = 0
    SYSTEM_ERROR = 1
    TOPIC_NOT_EXIST = 17


V3_0_11 = 37
"""``MQVersion.Version.V3_0_11.ordinal()``: from it on, REGISTER_BROKER carries a RegisterBrokerBody."""
V4_9_4 = 401
"""From it on (or with acceptStandardJsonOnly) a route is written as standard JSON."""
V4_9_5 = 403
"""``MQVersion.CURRENT_VERSION`` of 4.9.5: the version a 4.9.5 broker's and client's commands carry."""

APPLY_TOPIC_URL = "http://rocketmq.apache.org/docs/faq/"


def topic_not_exist_remark(topic: str) -> str:
    """``"No topic route info in name server for the topic: " + topic + FAQUrl.suggestTodo(...)``."""
    return f"No topic route info in name server for the topic: {topic}\nSee {APPLY_TOPIC_URL} for further details."


def crc32(data: bytes | None) -> int:
    """``UtilAll.crc32``: CRC32 masked to 31 bits (0 for no body)."""
    return zlib.crc32(data) & 0x7FFFFFFF if data is not None else 0


@dataclass(frozen=True)
class RegisterBrokerRequest:
    cluster_name: str
    broker_addr: str
    broker_name: str
    broker_id: int
    ha_server_addr: str
    body: RegisterBrokerBody = field(default_factory=RegisterBrokerBody)
    compressed: bool = False
    crc_ok: bool = True
    """False when the header's bodyCrc32 named another CRC than the body's (set by the decoder)."""
    version: int = V4_9_5


@dataclass(frozen=True)
class RegisterBrokerResponse:
    ha_server_addr: str | None = None
    master_addr: str | None = None
    code: int = ResponseCode.SUCCESS
    remark: str | None = None


@dataclass(frozen=True)
class UnregisterBrokerRequest:
    cluster_name: str
    broker_addr: str
    broker_name: str
    broker_id: int


@dataclass(frozen=True)
class UnregisterBrokerResponse:
    code: int = ResponseCode.SUCCESS


@dataclass(frozen=True)
class GetRouteInfoRequest:
    topic: str
    accept_standard_json_only: bool | None = None
    version: int = V4_9_5


@dataclass(frozen=True)
class GetRouteInfoResponse:
    route: TopicRouteData | None
    code: int = ResponseCode.SUCCESS
    remark: str | None = None
    standard_json: bool = True
    """How the body is written (see the module docstring); set by the name server from the request."""


@dataclass(frozen=True)
class GetBrokerClusterInfoRequest:
    pass


@dataclass(frozen=True)
class GetBrokerClusterInfoResponse:
    cluster_info: ClusterInfo


@dataclass(frozen=True)
class GetAllTopicListRequest:
    pass


@dataclass(frozen=True)
class GetAllTopicListResponse:
    topic_list: TopicList


_H = "org.apache.rocketmq.common.protocol.header.namesrv."
REGISTER_BROKER_REQUEST_HEADER = Header(_H + "RegisterBrokerRequestHeader", props(
    _H + "RegisterBrokerRequestHeader", "String brokerName", "String brokerAddr", "String clusterName",
    "String haServerAddr", "Long brokerId", "boolean compressed", "Integer bodyCrc32",
    required=("brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId")))
REGISTER_BROKER_RESPONSE_HEADER = Header(_H + "RegisterBrokerResponseHeader", props(
    _H + "RegisterBrokerResponseHeader", "String haServerAddr", "String masterAddr"))
UNREGISTER_BROKER_REQUEST_HEADER = Header(_H + "UnRegisterBrokerRequestHeader", props(
    _H + "UnRegisterBrokerRequestHeader", "String brokerName", "String brokerAddr", "String clusterName",
    "Long brokerId", required=("brokerName", "brokerAddr", "clusterName", "brokerId")))
GET_ROUTE_INFO_REQUEST_HEADER = Header(_H + "GetRouteInfoRequestHeader", props(
    _H + "GetRouteInfoRequestHeader", "String topic", "Boolean acceptStandardJsonOnly", required=("topic",)))

_ANSWERS: dict[type, type] = {
    RegisterBrokerRequest: RegisterBrokerResponse, UnregisterBrokerRequest: UnregisterBrokerResponse,
    GetRouteInfoRequest: GetRouteInfoResponse, GetBrokerClusterInfoRequest: GetBrokerClusterInfoResponse,
    GetAllTopicListRequest: GetAllTopicListResponse}


class NamesrvFamily(Family):
    """The name server's requests (see the module docstring)."""

    name = "namesrv"
    requests = {RegisterBrokerRequest: RequestCode.REGISTER_BROKER,
                UnregisterBrokerRequest: RequestCode.UNREGISTER_BROKER,
                GetRouteInfoRequest: RequestCode.GET_ROUTEINFO_BY_TOPIC,
                GetBrokerClusterInfoRequest: RequestCode.GET_BROKER_CLUSTER_INFO,
                GetAllTopicListRequest: RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER}
    responses = frozenset(_ANSWERS.values())
    codes = frozenset(requests.values())

    def encode(self, msg: Any) -> Parts:
        t = type(msg)
        if t is RegisterBrokerRequest:
            body = msg.body.encode(msg.compressed)
            ext = REGISTER_BROKER_REQUEST_HEADER.write({
                "brokerName": msg.broker_name, "brokerAddr": msg.broker_addr, "clusterName": msg.cluster_name,
                "haServerAddr": msg.ha_server_addr, "brokerId": msg.broker_id, "compressed": msg.compressed,
                "bodyCrc32": crc32(body) if msg.crc_ok else crc32(body) ^ 1})
            return Parts(RequestCode.REGISTER_BROKER, None, ext, body, msg.version)
        if t is UnregisterBrokerRequest:
            ext = UNREGISTER_BROKER_REQUEST_HEADER.write({
                "brokerName": msg.broker_name, "brokerAddr": msg.broker_addr, "clusterName": msg.cluster_name,
                "brokerId": msg.broker_id})
            return Parts(RequestCode.UNREGISTER_BROKER, None, ext, None, V4_9_5)
        if t is GetRouteInfoRequest:
            ext = GET_ROUTE_INFO_REQUEST_HEADER.write({"topic": msg.topic,
                                                      "acceptStandardJsonOnly": msg.accept_standard_json_only})
            return Parts(RequestCode.GET_ROUTEINFO_BY_TOPIC, None, ext, None, msg.version)
        if t is GetBrokerClusterInfoRequest:
            return Parts(RequestCode.GET_BROKER_CLUSTER_INFO, None, None, None, V4_9_5)
        if t is GetAllTopicListRequest:
            return Parts(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, None, None, None, V4_9_5)
        return self._encode_response(msg)

    def _encode_response(self, msg: Any) -> Parts:
        t = type(msg)
        if t is RegisterBrokerResponse:
            if msg.code != ResponseCode.SUCCESS:
                return Parts(msg.code, msg.remark, None, None)
            ext = REGISTER_BROKER_RESPONSE_HEADER.write({"haServerAddr": msg.ha_server_addr,
                                                         "masterAddr": msg.master_addr})
            return Parts(ResponseCode.SUCCESS, None, ext, None)
        if t is UnregisterBrokerResponse:
            return Parts(msg.code, None, None, None)
        if t is GetRouteInfoResponse:
            if msg.route is None:
                return Parts(msg.code, msg.remark, None, None)
            return Parts(ResponseCode.SUCCESS, None, None, dumps(msg.route.to_json(), standard=msg.standard_json))
        if t is GetBrokerClusterInfoResponse:
            return Parts(ResponseCode.SUCCESS, None, None, dumps(msg.cluster_info.to_json()))
        if t is GetAllTopicListResponse:
            return Parts(ResponseCode.SUCCESS, None, None, dumps(msg.topic_list.to_json()))
        raise CodecError(f"cannot encode {t.__name__}: not a name server message")

    def decode_request(self, cmd: RemotingCommand) -> Any:
        if cmd.code == RequestCode.REGISTER_BROKER:
            return _decode_register(cmd)
        if cmd.code == RequestCode.UNREGISTER_BROKER:
            h = UNREGISTER_BROKER_REQUEST_HEADER.read(cmd)
            return UnregisterBrokerRequest(h["clusterName"], h["brokerAddr"], h["brokerName"], h["brokerId"])
        if cmd.code == RequestCode.GET_ROUTEINFO_BY_TOPIC:
            h = GET_ROUTE_INFO_REQUEST_HEADER.read(cmd)
            return GetRouteInfoRequest(h["topic"], h["acceptStandardJsonOnly"], cmd.version)
        if cmd.code == RequestCode.GET_BROKER_CLUSTER_INFO:
            return GetBrokerClusterInfoRequest()
        return GetAllTopicListRequest()

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        t = _ANSWERS[answers]
        if t is GetRouteInfoResponse:
            if cmd.code != ResponseCode.SUCCESS:
                return GetRouteInfoResponse(None, cmd.code, cmd.remark)
            return GetRouteInfoResponse(TopicRouteData.from_json(_json_body(cmd, "GET_ROUTEINFO_BY_TOPIC")))
        if t is RegisterBrokerResponse:
            if cmd.code != ResponseCode.SUCCESS:
                return RegisterBrokerResponse(code=cmd.code, remark=cmd.remark)
            h = REGISTER_BROKER_RESPONSE_HEADER.read(cmd)
            return RegisterBrokerResponse(h["haServerAddr"], h["masterAddr"])
        if t is UnregisterBrokerResponse:
            return UnregisterBrokerResponse(cmd.code)
        if cmd.code != ResponseCode.SUCCESS:
            raise CodecError(f"{answers.__name__} answered with code {cmd.code} ({cmd.remark})")
        if t is GetBrokerClusterInfoResponse:
            return GetBrokerClusterInfoResponse(ClusterInfo.from_json(_json_body(cmd, "GET_BROKER_CLUSTER_INFO")))
        return GetAllTopicListResponse(TopicList.from_json(_json_body(cmd, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER")))


def _decode_register(cmd: RemotingCommand) -> RegisterBrokerRequest:
    h = REGISTER_BROKER_REQUEST_HEADER.read(cmd)
    crc_ok = not h["bodyCrc32"] or crc32(cmd.body) == h["bodyCrc32"]
    body = RegisterBrokerBody()
    if cmd.body is not None and crc_ok:
        old = cmd.version < V3_0_11  # DefaultRequestProcessor.registerBroker: a bare TopicConfigSerializeWrapper
        body = RegisterBrokerBody.decode(cmd.body, h["compressed"] and not old, wrapper_only=old)
    return RegisterBrokerRequest(h["clusterName"], h["brokerAddr"], h["brokerName"], h["brokerId"],
                                 h["haServerAddr"], body, h["compressed"], crc_ok, cmd.version)


def _json_body(cmd: RemotingCommand, what: str) -> Any:
    if not cmd.body:
        raise CodecError(f"{what} answered without a body")
    try:
        return loads(cmd.body)
    except ValueError as e:
        raise CodecError(f"{what}'s body is not JSON: {e}") from None


NAMESRV_FAMILY = NamesrvFamily()


def namesrv_codec() -> RemotingCodec:
    """The name server's codec: it serves the name server's requests."""
    return RemotingCodec((NAMESRV_FAMILY,))
