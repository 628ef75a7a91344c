"""The name server as a sans-IO core: ``NamesrvController`` + ``DefaultRequestProcessor`` (RocketMQ 4.9.5).

Serves REGISTER_BROKER (two-way, or oneway as a 4.9.5 broker sends it after a role or topic change),
UNREGISTER_BROKER, GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO and
GET_ALL_TOPIC_LIST_FROM_NAMESERVER (:mod:`rocketlab.namesrv.protocol`) from a
:class:`~rocketlab.namesrv.route_info_manager.RouteInfoManager`; scans for brokers silent for 120 s
every 10 s, the first scan 5 s after start (``scanNotActiveBroker``); drops the broker whose connection
closed (``BrokerHousekeepingService.onChannelClose`` -> ``onChannelDestroy``). The connection a
registration came on is the runtime's ``src`` of the request (a connection's remote address, or the
node a request names).

Trace: ``broker_registered`` (cluster, broker_name, broker_id, broker_addr, first),
``broker_unregistered`` (broker_addr, reason: ``unregister`` or ``channel destroyed``),
``broker_expired`` (broker_addr), ``route_query`` (topic, ok).

Differences from 4.9.5: no KV config (PUT/GET/DELETE_KV_CONFIG, the order-topic configuration a
registration's answer carries: the answer has no body, as Java's with an empty KV table), no
write-permission wipes, no topic deletion, no ``clusterTest``; those codes are answered
REQUEST_CODE_NOT_SUPPORTED, where 4.9.5's ``DefaultRequestProcessor`` (the server's default processor)
returns null for a code it does not know and the client waits in vain. A request whose header lacks a
``@CFNotNull`` field is refused SYSTEM_ERROR and stores nothing, where 4.9.5's
``decodeCommandCustomHeader`` logs the missing field and goes on with null (it registers a broker named
null, unregisters nothing, finds no route for a null topic); a body or header value that cannot be read is
SYSTEM_ERROR in both (``tests/namesrv/test_namesrv_bad_input.py`` shows both servers). The routing info
lives in memory only, as in Java.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.namesrv.protocol import (
    V4_9_4,
    GetAllTopicListRequest,
    GetAllTopicListResponse,
    GetBrokerClusterInfoRequest,
    GetBrokerClusterInfoResponse,
    GetRouteInfoRequest,
    GetRouteInfoResponse,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
    topic_not_exist_remark,
)
from rocketlab.namesrv.route_info_manager import Removed, RouteInfoManager

SCAN_FIRST_DELAY_MS = 5_000
SCAN_INTERVAL_MS = 10_000


@dataclass(frozen=True)
class NamesrvConfig:
    """``NamesrvConfig``'s timers as the controller schedules them (not configurable in Java)."""

    scan_first_delay_ms: int = SCAN_FIRST_DELAY_MS
    scan_interval_ms: int = SCAN_INTERVAL_MS


class NamesrvCore(BaseCore):
    """One name server (see the module docstring). :attr:`route_info_manager` holds its tables."""

    def __init__(self, ctx: NodeContext, config: NamesrvConfig | None = None) -> None:
        self.node_id = ctx.node_id
        self.config = config or NamesrvConfig()
        self.route_info_manager = RouteInfoManager()
        self.next_scan_ms: int | None = None

    def describe(self) -> dict[str, Any]:
        return {"node": self.node_id, "kind": "namesrv", **self.route_info_manager.describe()}

    # ------------------------------------------------------------------ timers
    def on_start(self, now_ms: int) -> Output:
        self.next_scan_ms = now_ms + self.config.scan_first_delay_ms
        return Output()

    def next_deadline_ms(self) -> int | None:
        return self.next_scan_ms

    def on_tick(self, now_ms: int) -> Output:
        out = OutputBuilder()
        if self.next_scan_ms is not None and now_ms >= self.next_scan_ms:
            while self.next_scan_ms <= now_ms:  # scheduleAtFixedRate
                self.next_scan_ms += self.config.scan_interval_ms
            for removed in self.route_info_manager.scan_not_active_broker(now_ms):
                out.trace("broker_expired", **_fields(removed))
        return out.build()

    # ------------------------------------------------------------------ connections
    def on_peer_closed(self, peer: str, now_ms: int) -> Output:
        removed = self.route_info_manager.on_channel_destroy(peer, peer)
        if removed is None:
            return Output()
        out = OutputBuilder()
        out.trace("broker_unregistered", reason="channel destroyed", **_fields(removed))
        return out.build()

    # ------------------------------------------------------------------ requests
    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """A oneway request: Java's processor runs it and the answer is not sent."""
        out = OutputBuilder()
        self.process_request(src, msg, now_ms, out)
        return out.build()

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        out = OutputBuilder()
        answer = self.process_request(src, msg, now_ms, out)
        if answer is not None:
            out.reply(src, request_id, answer)
        return out.build()

    def process_request(self, src: str, msg: Any, now_ms: int, out: OutputBuilder) -> Any:
        """``DefaultRequestProcessor.processRequest``: the answer to ``msg`` (None: not a name server's)."""
        rim = self.route_info_manager
        if isinstance(msg, RegisterBrokerRequest):
            return self.register_broker(src, msg, now_ms, out)
        if isinstance(msg, UnregisterBrokerRequest):
            removed = rim.unregister_broker(msg.cluster_name, msg.broker_addr, msg.broker_name, msg.broker_id)
            out.trace("broker_unregistered", reason="unregister", **_fields(
                removed or Removed(msg.broker_addr, msg.broker_name, msg.broker_id, msg.cluster_name)))
            return UnregisterBrokerResponse()
        if isinstance(msg, GetRouteInfoRequest):
            route = rim.pickup_topic_route_data(msg.topic)
            out.trace("route_query", topic=msg.topic, ok=route is not None)
            if route is None:
                return GetRouteInfoResponse(None, ResponseCode.TOPIC_NOT_EXIST, topic_not_exist_remark(msg.topic))
            standard = msg.version >= V4_9_4 or bool(msg.accept_standard_json_only)
            return GetRouteInfoResponse(route, standard_json=standard)
        if isinstance(msg, GetBrokerClusterInfoRequest):
            return GetBrokerClusterInfoResponse(rim.get_all_cluster_info())
        if isinstance(msg, GetAllTopicListRequest):
            return GetAllTopicListResponse(rim.get_all_topic_list())
        return None

    def register_broker(self, src: str, msg: RegisterBrokerRequest, now_ms: int,
                        out: OutputBuilder) -> RegisterBrokerResponse:
        """``registerBrokerWithFilterServer`` (``registerBroker`` for a command older than 3.0.11)."""
        if not msg.crc_ok:
            return RegisterBrokerResponse(code=ResponseCode.SYSTEM_ERROR, remark="crc32 not match")
        body = msg.body
        result = self.route_info_manager.register_broker(
            msg.cluster_name, msg.broker_addr, msg.broker_name, msg.broker_id, msg.ha_server_addr,
            body.topic_config_table, body.data_version, list(body.filter_server_list), src, now_ms)
        out.trace("broker_registered", cluster=msg.cluster_name, broker_name=msg.broker_name,
                  broker_id=msg.broker_id, broker_addr=msg.broker_addr, first=result.first)
        return RegisterBrokerResponse(result.ha_server_addr, result.master_addr)


def _fields(removed: Removed) -> dict[str, Any]:
    return {"broker_addr": removed.broker_addr, "broker_name": removed.broker_name,
            "broker_id": removed.broker_id, "cluster": removed.cluster}


def make_namesrv(ctx: NodeContext, config: NamesrvConfig | None = None) -> NamesrvCore:
    return NamesrvCore(ctx, config)
