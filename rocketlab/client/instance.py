"""MQClientInstance and the producer over TCP (asyncio): the thin runtime around the sans-IO cores.

:class:`MQClientInstance` keeps what Java's keeps per client id: the name servers, the broker address table, each
topic's route, publish and subscribe info; it answers the cores' :class:`~rocketlab.client.producer.FindRoute`
and :class:`~rocketlab.client.producer.Call` (:meth:`MQClientInstance.drive`), refreshes every route each
``pollNameServerInterval`` (30 s), sends HEART_BEAT to every master each ``heartbeatBrokerInterval`` (30 s) and
hands NOTIFY_CONSUMER_IDS_CHANGED to the consumers (an immediate rebalance); with a
:class:`~rocketlab.trace.recorder.TraceRecorder` it records the ``client_*`` trace events (route changes, every
send attempt, rebalances, pulls, consumption, send-backs). :class:`Producer` is
``DefaultMQProducer``: ``send`` (sync), ``send_oneway``, ``send_batch``.

A name server that does not answer in ``mqClientApiTimeout`` (3 s), answers an error, or a route that does not
parse: one :class:`~rocketlab.client.producer.MQClientException` line (``No route info of this topic``, with the
cause), never a hang.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Generator, Sequence
from typing import Any

from rocketlab.client.message import Message, MessageClientIDSetter
from rocketlab.client.producer import (
    Call,
    DefaultMQProducerImpl,
    FindRoute,
    MessageBatch,
    MQClientException,
    ProducerConfig,
    RemotingError,
    SendResult,
)
from rocketlab.client.protocol import (
    BrokerAnswerError,
    ConsumerData,
    HeartbeatRequest,
    NotifyConsumerIdsChanged,
    SendMessageRequest,
)
from rocketlab.client.remoting_client import RemotingClient
from rocketlab.client.route import (
    TopicPublishInfo,
    topic_route_data2_topic_publish_info,
    topic_route_data2_topic_subscribe_info,
)
from rocketlab.client.route_tables import RouteTables, route_targets, send_attempt_fields
from rocketlab.errors import CodecError
from rocketlab.namesrv.protocol import GetRouteInfoRequest
from rocketlab.namesrv.route import TopicRouteData
from rocketlab.remoting.fastjson import java_string_hash
from rocketlab.trace.recorder import TraceRecorder

MQ_CLIENT_API_TIMEOUT = 3000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class MQClientInstance:
    """``namesrv_addr``: ``host:port;host:port``; ``instance_name`` as ``ClientConfig`` (the pid by default);
    ``start_index``: where every ``sendWhichQueue`` starts (Java: random)."""

    def __init__(self, namesrv_addr: str, instance_name: str | None = None, client_ip: str = "127.0.0.1",
                 poll_name_server_interval: int = 30000, heartbeat_broker_interval: int = 30000,
                 start_index: int = 0, recorder: TraceRecorder | None = None) -> None:
        self.namesrv_addrs = [a.strip() for a in namesrv_addr.split(";") if a.strip()]
        if not self.namesrv_addrs:
            raise MQClientException("No name server address, please set it.", 10004)
        self.client_id = f"{client_ip}@{instance_name or os.getpid()}"
        self.poll_name_server_interval = poll_name_server_interval
        self.heartbeat_broker_interval = heartbeat_broker_interval
        self.start_index = start_index
        self.remoting = RemotingClient(self._on_request)
        self.tables = RouteTables(start_index)
        self.broker_addrs = self.tables.broker_addrs
        self.topic_route_table = self.tables.topic_route_table
        self.publish_info = self.tables.publish_info
        self.producer_groups: set[str] = set()
        self.consumers: dict[str, Any] = {}
        self.id_setter = MessageClientIDSetter(bytes(int(p) for p in client_ip.split(".")), os.getpid(),
                                               java_string_hash(self.client_id), now_ms)
        self._tasks: list[asyncio.Task] = []
        self._ns_index = 0
        self.recorder = recorder
        self.events: list[tuple[str, str]] = []
        """What failed quietly, as Java logs it: ("heartbeat_error", text), ..."""

    def trace(self, kind: str, **fields: Any) -> None:
        """One trace event of this client (node: its client id; ``t``: wall-clock milliseconds)."""
        if self.recorder is not None and self.recorder.wants(kind):
            self.recorder.emit(now_ms(), self.client_id, kind, fields)

    def _trace_route(self, topic: str, route: TopicRouteData | None) -> None:
        if self.tables.route_changed(topic, route):
            self.trace("client_route", topic=topic, ok=route is not None, targets=list(route_targets(route)))

    # ---------------------------------------------------------------------------------- routes
    async def get_topic_route_info_from_name_server(self, topic: str, asked: str | None = None) -> TopicRouteData:
        """GET_ROUTEINFO_BY_TOPIC to the name servers in turn; MQClientException when none gives a route, naming
        ``asked`` (the application's topic when ``topic`` is the default TBW102, as Java's send names it)."""
        errors = []
        named = asked or topic
        for k in range(len(self.namesrv_addrs)):
            addr = self.namesrv_addrs[(self._ns_index + k) % len(self.namesrv_addrs)]
            try:
                answer = await self.remoting.invoke(addr, GetRouteInfoRequest(topic), MQ_CLIENT_API_TIMEOUT)
            except (RemotingError, CodecError) as e:
                errors.append(f"{addr}: {e}")
                continue
            if answer.route is None:
                raise MQClientException(f"No route info of this topic: {named} (name server {addr}: CODE: "
                                        f"{answer.code} DESC: {(answer.remark or '').splitlines()[0]})", answer.code)
            self._ns_index = (self._ns_index + k) % len(self.namesrv_addrs)
            return answer.route
        raise MQClientException(f"No route info of this topic: {named} ({'; '.join(errors)})", 10004)

    async def update_topic_route_info_from_name_server(self, topic: str) -> bool:
        """The route of ``topic`` read again; False (and the old route kept) when the name server has none."""
        try:
            route = await self.get_topic_route_info_from_name_server(topic)
        except MQClientException:
            self._trace_route(topic, None)
            return False
        self._trace_route(topic, route)
        self.tables.apply(topic, route)
        for c in self.consumers.values():
            c.update_subscribe_info(topic, topic_route_data2_topic_subscribe_info(topic, route))
        return True

    async def try_to_find_topic_publish_info(self, topic: str) -> TopicPublishInfo | None:
        info = self.publish_info.get(topic)
        if info is None or not info.ok():
            try:
                route = await self.get_topic_route_info_from_name_server(topic)
            except MQClientException as e:
                if e.response_code != 17:  # TOPIC_NOT_EXIST: the default topic's route next, as Java does
                    raise
                route = await self.get_topic_route_info_from_name_server("TBW102", asked=topic)
                route = _default_route(route)
            self._trace_route(topic, route)
            self.topic_route_table[topic] = route
            self.broker_addrs.update(route)
            self.publish_info[topic] = topic_route_data2_topic_publish_info(topic, route, self.start_index)
        return self.publish_info.get(topic)

    # ---------------------------------------------------------------------------------- driving the cores
    async def drive(self, gen: Generator[Any, Any, Any]) -> Any:
        """Run a core's generator: answer its FindRoute and Call until it returns."""
        value: Any = None
        error: BaseException | None = None
        attempts = [0]
        while True:
            try:
                step = gen.throw(error) if error is not None else gen.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                if isinstance(step, FindRoute):
                    value = await self.try_to_find_topic_publish_info(step.topic)
                elif isinstance(step, Call):
                    value = await self._traced_call(step, attempts)
                else:
                    raise TypeError(f"a core yielded {step!r}")
            except (RemotingError, BrokerAnswerError, MQClientException) as e:
                error = e
            except CodecError as e:
                error = RemotingError(f"{getattr(step, 'addr', '?')}: an answer that does not decode: {e}", "send")

    async def _traced_call(self, step: Call, attempts: list[int]) -> Any:
        """``call``, with a ``client_send`` event for each send attempt."""
        if not isinstance(step.request, SendMessageRequest) or self.recorder is None:
            return await self.call(step)
        fields = send_attempt_fields(step.request, attempts[0])
        attempts[0] += 1
        try:
            answer = await self.call(step)
        except (RemotingError, BrokerAnswerError, CodecError) as e:
            self.trace("client_send", status=type(e).__name__, reason=str(e)[:200], **fields)
            raise
        if answer is None:
            self.trace("client_send", status="ONEWAY", **fields)
        else:
            self.trace("client_send", status=answer.status, queue_offset=answer.queue_offset, **fields)
        return answer

    async def call(self, step: Call) -> Any:
        if step.oneway:
            await self.remoting.oneway(step.addr, step.request)
            return None
        return await self.remoting.invoke(step.addr, step.request, step.timeout_ms)

    # ---------------------------------------------------------------------------------- heartbeats
    def heartbeat(self) -> HeartbeatRequest:
        consumers: tuple[ConsumerData, ...] = tuple(c.consumer_data() for c in self.consumers.values())
        return HeartbeatRequest(self.client_id, tuple(sorted(self.producer_groups)), consumers)

    async def send_heartbeat_to_all_broker(self) -> None:
        if not self.producer_groups and not self.consumers:
            return
        hb = self.heartbeat()
        for addr in self.broker_addrs.masters():
            try:
                await self.remoting.invoke(addr, hb, MQ_CLIENT_API_TIMEOUT)
            except (RemotingError, BrokerAnswerError, CodecError) as e:
                self.events.append(("heartbeat_error", f"{addr}: {e}"))

    def _on_request(self, addr: str, msg: Any) -> None:
        if isinstance(msg, NotifyConsumerIdsChanged):
            consumer = self.consumers.get(msg.consumer_group)
            if consumer is not None:
                consumer.rebalance_immediately()

    # ---------------------------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.get_running_loop().create_task(self._every(self.poll_name_server_interval,
                                                                              self._refresh_routes)),
                           asyncio.get_running_loop().create_task(self._every(self.heartbeat_broker_interval,
                                                                              self.send_heartbeat_to_all_broker))]

    async def _refresh_routes(self) -> None:
        """``updateTopicRouteInfoFromNameServer``: every topic a consumer subscribes or a producer sent to."""
        topics = set(self.topic_route_table) | set(self.publish_info)
        for c in self.consumers.values():
            topics |= set(c.subscriptions)
        for topic in sorted(topics):
            await self.update_topic_route_info_from_name_server(topic)

    @staticmethod
    async def _every(interval_ms: int, job: Any) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            await job()

    async def shutdown(self) -> None:
        for t in self._tasks:
            t.cancel()
        self._tasks = []
        self.remoting.close()


def _default_route(route: TopicRouteData) -> TopicRouteData:
    """``getTopicRouteInfoFromNameServer(TBW102, isDefault)``: each queue data's counts capped at the producer's
    ``defaultTopicQueueNums`` (4); the broker creates the topic on the first send."""
    qds = tuple(type(q)(q.broker_name, min(4, q.read_queue_nums), min(4, q.write_queue_nums), q.perm,
                        q.topic_sys_flag) for q in route.queue_datas)
    return TopicRouteData(qds, route.broker_datas, route.filter_server_table, route.order_topic_conf)


class Producer:
    """``DefaultMQProducer`` over TCP (see the module docstring); ``config`` as :class:`ProducerConfig`."""

    def __init__(self, instance: MQClientInstance, config: ProducerConfig | None = None) -> None:
        self.instance = instance
        self.config = config or ProducerConfig()
        self.impl = DefaultMQProducerImpl(self.config, instance.id_setter, now_ms, instance.broker_addrs)

    async def start(self) -> Producer:
        self.instance.producer_groups.add(self.config.producer_group)
        self.instance.start()
        return self

    async def send(self, msg: Message, timeout_ms: int | None = None) -> SendResult:
        result = await self.instance.drive(self.impl.send_default_impl(msg, False, timeout_ms))
        assert result is not None
        return result

    async def send_oneway(self, msg: Message) -> None:
        await self.instance.drive(self.impl.send_default_impl(msg, True))

    async def send_batch(self, msgs: Sequence[Message], timeout_ms: int | None = None) -> SendResult:
        batch: MessageBatch = self.impl.batch(msgs)
        result = await self.instance.drive(self.impl.send_default_impl(batch, False, timeout_ms))
        assert result is not None
        return result

    async def shutdown(self) -> None:
        self.instance.producer_groups.discard(self.config.producer_group)
