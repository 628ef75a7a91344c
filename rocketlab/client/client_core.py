"""MQClientCore: one client process - ``MQClientInstance`` with a producer and/or a push consumer - as a sans-IO
core (:mod:`rocketlab.core`), so the simulator hosts the kit's client on its network beside the brokers and the
name server (Java: ``MQClientInstance``, ``DefaultMQProducer``, ``DefaultMQPushConsumer``, their services).

The decisions are the shared cores' (:class:`~rocketlab.client.producer.DefaultMQProducerImpl`,
:class:`~rocketlab.client.consumer.RebalanceImpl`, ``ProcessQueue``, ``RemoteBrokerOffsetStore``,
``MQFaultStrategy``); this module is their runtime, written as the asyncio one is (:mod:`rocketlab.client.instance`,
:mod:`rocketlab.client.consumers`): every service is a generator (the producer's ``sendDefaultImpl``, the
consumer's start, rebalance service, pull loops and offset persister) yielding what it waits for -
:class:`~rocketlab.client.producer.FindRoute`, :class:`~rocketlab.client.producer.Call`, :class:`RefreshRoute`
(``updateTopicRouteInfoFromNameServer``), :class:`Sleep` - and this core answers them with requests, oneway
messages and timers. A request that gets no answer fails with Java's exception: ``connect`` when the broker is
gone before the timeout, ``timeout`` at the caller's timeout (a request in flight to a process that dies waits for
its timeout, as Java's ``ResponseFuture`` does: a closed channel wakes nobody).

The consumer lives in :mod:`rocketlab.client.push_core` (push) or :mod:`rocketlab.client.lite_pull_core`
(lite pull, ``consumer_style``), both on :mod:`rocketlab.client.member_core`. Java's defaults: route refresh
and heartbeats every 30 s, ``mqClientApiTimeout`` 3 s, ``sendMsgTimeout`` 3 s. Trace (node: the client's node): ``client_route``,
``client_send`` (each attempt), ``client_send_failed`` (what the application is thrown), ``client_rebalance``,
``client_pull``, ``client_consume``, ``client_commit`` (an offset written to the broker).

The route bookkeeping is :class:`~rocketlab.client.route_tables.RouteTables`, the asyncio instance's too.

Differences: one producer group and one consumer group per process; the application's producer sends in one
thread, one message after another (``send_count`` every ``send_interval_ms``); no default-topic (TBW102) route
fallback (the simulator's topics exist before the clients start).
"""

from __future__ import annotations

import heapq
import itertools
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from rocketlab.client.message import Message, MessageClientIDSetter
from rocketlab.client.producer import (
    Call,
    DefaultMQProducerImpl,
    FindRoute,
    MQClientException,
    ProducerConfig,
    RemotingError,
)
from rocketlab.client.protocol import BrokerAnswerError, HeartbeatRequest, SendMessageRequest, client_codec
from rocketlab.client.route import topic_route_data2_topic_subscribe_info as subscribe_info
from rocketlab.client.route_tables import RouteTables, route_targets, send_attempt_fields
from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.errors import CodecError, RemoteProtocolError, RocketlabError
from rocketlab.namesrv.protocol import GetRouteInfoRequest, GetRouteInfoResponse
from rocketlab.namesrv.route import TopicRouteData

MQ_CLIENT_API_TIMEOUT = 3000
FAILURES = (RemotingError, BrokerAnswerError, MQClientException, CodecError)
"""What a request or a core may throw into a service (each service catches what Java's catches)."""


@dataclass(frozen=True)
class Sleep:
    """Wait ``ms`` milliseconds (``wakeable``: a NOTIFY_CONSUMER_IDS_CHANGED ends the wait of the rebalance)."""

    ms: int
    wakeable: bool = False


@dataclass(frozen=True)
class RefreshRoute:
    """``updateTopicRouteInfoFromNameServer(topic)``: answered True when the name server gave a route."""

    topic: str


@dataclass(frozen=True)
class ClientNodeConfig:
    """One client process: ``namesrv_addr`` (``host:port;...``); a producer (``producer`` set) sending
    ``send_count`` messages to ``topic``, one every ``send_interval_ms`` from ``send_start_ms``; a push consumer
    of ``consumer_group`` (set) subscribing ``topic``; both started at ``start_ms``. Java's timers unless given (and
    ``startScheduledTask``'s first delays: route refresh 10 ms, heartbeats 1 s, offsets 10 s after the start)."""

    namesrv_addr: str
    topic: str = "TopicTest"
    producer: ProducerConfig | None = None
    send_count: int = 0
    send_interval_ms: int = 100
    send_start_ms: int = 0
    start_index: int = 0
    consumer_group: str | None = None
    consume_from_where: str = "CONSUME_FROM_FIRST_OFFSET"
    poll_name_server_interval: int = 30_000
    heartbeat_broker_interval: int = 30_000
    rebalance_interval: int = 20_000
    persist_consumer_offset_interval: int = 5_000
    pull_batch_size: int = 32
    consume_time_ms: int = 0
    reject_keys: frozenset[str] = frozenset()
    """The application's listener answers RECONSUME_LATER for a message with one of these KEYS (a retry demo)."""
    max_reconsume_times: int = 16
    broker_suspend_max_time_millis: int = 15_000
    consumer_timeout_millis_when_suspend: int = 30_000
    start_ms: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    consumer_style: str = "push"
    """``push`` (:mod:`rocketlab.client.push_core`), ``lite-pull-subscribe`` or ``lite-pull-assign``
    (:mod:`rocketlab.client.lite_pull_core`: member ``assign_index`` of ``assign_members`` takes its share)."""
    assign_index: int = 0
    assign_members: int = 1

    def __post_init__(self) -> None:
        if self.consumer_style not in ("push", "lite-pull-subscribe", "lite-pull-assign"):
            raise MQClientException(f"consumer style {self.consumer_style!r} is none of push, lite-pull-subscribe, "
                                    "lite-pull-assign")


class _Task:
    __slots__ = ("gen", "name", "sleep_token", "wakeable")

    def __init__(self, gen: Generator[Any, Any, Any], name: str) -> None:
        self.gen, self.name, self.sleep_token, self.wakeable = gen, name, 0, False


class MQClientCore(BaseCore):
    """See the module docstring. Inspection: :attr:`acked` (uniq key -> (broker name, queue id, queue offset)),
    :attr:`failed` (uniq key -> reason), :attr:`consumer` (the push consumer, or None)."""

    def __init__(self, ctx: NodeContext, config: ClientNodeConfig) -> None:
        self.node_id = ctx.node_id
        self.config = config
        self.client_id = f"{ctx.node_id}@DEFAULT"
        self.namesrv_addrs = [a.strip() for a in config.namesrv_addr.split(";") if a.strip()]
        if not self.namesrv_addrs:
            raise MQClientException("No name server address, please set it.", 10004)
        self.now_ms = 0
        self.tables = RouteTables(config.start_index)
        self.broker_addrs = self.tables.broker_addrs
        self.topic_route_table = self.tables.topic_route_table
        self.publish_info = self.tables.publish_info
        pid = zlib.crc32(ctx.node_id.encode()) & 0x7FFF
        self.id_setter = MessageClientIDSetter(bytes([10, 0, pid >> 8, pid & 0xFF]), pid, pid, lambda: self.now_ms)
        self.producer = None if config.producer is None else DefaultMQProducerImpl(
            config.producer, self.id_setter, lambda: self.now_ms, self.broker_addrs, config.start_index)
        self.consumer: Any = None
        self.acked: dict[str, tuple[str, int, int]] = {}
        self.failed: dict[str, str] = {}
        self.events: list[tuple[str, str]] = []
        """What failed quietly, as Java logs it: ("heartbeat_error", text), ("pull_error", text), ..."""
        self._ids = itertools.count(1)
        self._seq = itertools.count()
        self._timers: list[tuple[int, int, _Task, int]] = []
        self._waiting: dict[int, tuple[_Task, Any, int]] = {}
        self._out = OutputBuilder()
        self._attempts: dict[str | None, int] = {}

    # ---------------------------------------------------------------------------------- inputs
    def _run(self, now_ms: int, fn: Callable[..., None], *args: Any) -> Output:
        self.now_ms = now_ms
        self._out = OutputBuilder()
        fn(*args)
        return self._out.build()

    def on_start(self, now_ms: int) -> Output:
        return self._run(now_ms, self._start)

    def _start(self) -> None:
        self.spawn(self._boot(), "start")

    def _boot(self) -> Generator[Any, Any, None]:
        """The application starts its producer and consumer ``start_ms`` after the process."""
        if self.config.start_ms > self.now_ms:
            yield Sleep(self.config.start_ms - self.now_ms)
        # startScheduledTask's first delays: routes after 10 ms, heartbeats after 1 s (so a heartbeat follows each
        # route refresh by a second and reaches a master the refresh found)
        self.spawn(self.every(10, self.config.poll_name_server_interval, self._refresh_routes), "route-refresh")
        self.spawn(self.every(1_000, self.config.heartbeat_broker_interval, self.heartbeat_all), "heartbeat")
        if self.consumer is not None:
            self.consumer.start(self)
        if self.producer is not None and self.config.send_count:
            self.spawn(self._send_service(), "send")

    def next_deadline_ms(self) -> int | None:
        return self._timers[0][0] if self._timers else None

    def on_tick(self, now_ms: int) -> Output:
        return self._run(now_ms, self._fire_timers)

    def _fire_timers(self) -> None:
        while self._timers and self._timers[0][0] <= self.now_ms:
            _, _, task, token = heapq.heappop(self._timers)
            if task.sleep_token == token:
                task.sleep_token = -1
                self._step(task, None, None)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        return self._run(now_ms, self._answered, request_id, msg)

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """A broker's oneway request: NOTIFY_CONSUMER_IDS_CHANGED wakes the rebalance service."""
        if self.consumer is None or getattr(msg, "consumer_group", None) != self.consumer.group:
            return Output()
        return self._run(now_ms, self.consumer.rebalance_immediately, self)

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        return Output()  # GET_CONSUMER_RUNNING_INFO and the like: not served (no answer, as no processor)

    # ---------------------------------------------------------------------------------- the services' driver
    def spawn(self, gen: Generator[Any, Any, Any], name: str) -> _Task:
        task = _Task(gen, name)
        self._step(task, None, None)
        return task

    def wake(self, task: _Task) -> bool:
        """End ``task``'s wakeable sleep now (False when it is not in one)."""
        if task.sleep_token <= 0 or not task.wakeable:
            return False
        task.sleep_token = -1
        self._step(task, None, None)
        return True

    def _step(self, task: _Task, value: Any, error: BaseException | None) -> None:
        while True:
            try:
                step = task.gen.throw(error) if error is not None else task.gen.send(value)
            except StopIteration:
                return
            value, error = None, None
            kind = type(step)
            if kind is Sleep:
                token = next(self._seq) + 1
                task.sleep_token, task.wakeable = token, step.wakeable
                heapq.heappush(self._timers, (self.now_ms + step.ms, token, task, token))
                return
            if kind is FindRoute:
                info = self.publish_info.get(step.topic)
                if info is not None and info.ok():
                    value = info
                    continue
                self._ask_route(task, step)
                return
            if kind is RefreshRoute:
                self._ask_route(task, step)
                return
            if kind is not Call:
                raise RocketlabError(f"client service {task.name} yielded {step!r}")
            if step.oneway:
                self._out.send(step.addr, step.request)
                continue
            request_id = next(self._ids)
            self._waiting[request_id] = (task, step, self.now_ms)
            self._out.request(step.addr, step.request, request_id, step.timeout_ms)
            return

    def _answered(self, request_id: int, msg: Any | None) -> None:
        entry = self._waiting.pop(request_id, None)
        if entry is None:
            return
        task, step, sent_ms = entry
        if isinstance(step, Call):
            error = self._failure(step.addr, step.timeout_ms, sent_ms, msg)
            if isinstance(step.request, SendMessageRequest):
                self._trace_send(task, step.request, msg, error)
            self._step(task, None if error is not None else msg, error)
            return
        self._route_answered(task, step, msg, self._failure(self.namesrv_addrs[0], MQ_CLIENT_API_TIMEOUT, sent_ms, msg))

    def _failure(self, addr: str, timeout_ms: int, sent_ms: int, msg: Any | None) -> BaseException | None:
        if isinstance(msg, BaseException):
            return msg
        if msg is not None:
            return None
        if self.now_ms - sent_ms >= timeout_ms:
            return RemotingError(f"wait response on the channel <{addr}> timeout, {timeout_ms}(ms)", "timeout")
        return RemotingError(f"connect to {addr} failed", "connect")

    def _trace_send(self, task: _Task, request: SendMessageRequest, msg: Any, error: BaseException | None) -> None:
        fields = send_attempt_fields(request, 0)
        uniq = fields["uniq_key"]
        fields["attempt"] = self._attempts[uniq] = self._attempts.get(uniq, -1) + 1
        if error is not None:
            self._out.trace("client_send", status=type(error).__name__, reason=str(error)[:200], **fields)
        else:
            self._out.trace("client_send", status=msg.status, queue_offset=msg.queue_offset, **fields)

    # ---------------------------------------------------------------------------------- routes
    def _ask_route(self, task: _Task, step: FindRoute | RefreshRoute) -> None:
        request_id = next(self._ids)
        self._waiting[request_id] = (task, step, self.now_ms)
        self._out.request(self.namesrv_addrs[0], GetRouteInfoRequest(step.topic), request_id, MQ_CLIENT_API_TIMEOUT)

    def _route_answered(self, task: _Task, step: FindRoute | RefreshRoute, msg: Any,
                        error: BaseException | None) -> None:
        route = msg.route if error is None and isinstance(msg, GetRouteInfoResponse) else None
        if route is None:
            self._trace_route(step.topic, None)
            if isinstance(step, RefreshRoute):
                self._step(task, False, None)
                return
            why = error or f"CODE: {getattr(msg, 'code', '?')} DESC: {getattr(msg, 'remark', '')}"
            self._step(task, None, MQClientException(f"No route info of this topic: {step.topic} ({why})", 10004))
            return
        self.update_route(step.topic, route)
        self._step(task, True if isinstance(step, RefreshRoute) else self.publish_info[step.topic], None)

    def update_route(self, topic: str, route: TopicRouteData) -> None:
        """A route read from the name server: the tables as ``updateTopicRouteInfoFromNameServer`` sets them."""
        self._trace_route(topic, route)
        self.tables.apply(topic, route)
        if self.consumer is not None:
            self.consumer.update_subscribe_info(topic, subscribe_info(topic, route))

    def _trace_route(self, topic: str, route: TopicRouteData | None) -> None:
        if self.tables.route_changed(topic, route):
            self._out.trace("client_route", topic=topic, ok=route is not None, targets=list(route_targets(route)))

    def _refresh_routes(self) -> Generator[Any, Any, None]:
        topics = set(self.topic_route_table) | set(self.publish_info)
        if self.consumer is not None:
            topics |= set(self.consumer.subscriptions)
        for topic in sorted(topics):
            yield RefreshRoute(topic)

    # ---------------------------------------------------------------------------------- heartbeats
    def heartbeat_all(self) -> Generator[Any, Any, None]:
        """``sendHeartbeatToAllBroker``: HEART_BEAT to every master the client knows."""
        groups = (self.config.producer.producer_group,) if self.config.producer is not None else ()
        consumers = (self.consumer.consumer_data(),) if self.consumer is not None else ()
        if not groups and not consumers:
            return
        hb = HeartbeatRequest(self.client_id, groups, consumers)
        for addr in self.broker_addrs.masters():
            try:
                yield Call(addr, hb, MQ_CLIENT_API_TIMEOUT)
            except FAILURES as e:
                self.events.append(("heartbeat_error", f"{addr}: {e}"))

    def every(self, first_ms: int, interval_ms: int,
              job: Callable[[], Generator[Any, Any, None]]) -> Generator[Any, Any, None]:
        """``scheduleAtFixedRate(job, first_ms, interval_ms)``: runs at start + first + k * interval (a run that
        overruns its period is followed by the next at once, as the JDK's executor does)."""
        due = self.now_ms + first_ms
        while True:
            if due > self.now_ms:
                yield Sleep(due - self.now_ms)
            yield from job()
            due += interval_ms

    # ---------------------------------------------------------------------------------- the producer
    def _send_service(self) -> Generator[Any, Any, None]:
        """The application's thread: ``send_count`` sync sends, one every ``send_interval_ms``."""
        c = self.config
        assert self.producer is not None
        for i in range(c.send_count):
            due = c.send_start_ms + i * c.send_interval_ms
            if due > self.now_ms:
                yield Sleep(due - self.now_ms)
            msg = Message(c.topic, f"{self.node_id}-{i}".encode(), keys=f"{self.node_id}-{i}")
            yield from self.send(msg)

    def app_send(self, msg: Message, now_ms: int) -> Output:
        """The application sends ``msg`` now (a cell's ``cluster.runtime.call(node, lambda core, now:
        core.app_send(msg, now))``): its outcome lands in :attr:`acked` or :attr:`failed` and the trace."""
        if self.producer is None:
            raise MQClientException(f"{self.node_id} has no producer")
        return self._run(now_ms, self.spawn, self.send(msg), "app send")

    def send(self, msg: Message) -> Generator[Any, Any, None]:
        """One ``DefaultMQProducer.send`` (sync): the result recorded in :attr:`acked` or :attr:`failed`."""
        assert self.producer is not None
        try:
            result = yield from self.producer.send_default_impl(msg)
        except FAILURES as e:
            uniq = msg.properties.get("UNIQ_KEY")
            self.failed[uniq or f"#{len(self.failed)}"] = str(e)
            self._out.trace("client_send_failed", topic=msg.topic, uniq_key=uniq, reason=str(e)[:200])
            return
        assert result is not None
        self.acked[result.msg_id] = (result.message_queue.broker_name, result.message_queue.queue_id,
                                     result.queue_offset)
        self._attempts.pop(result.msg_id, None)

    def describe(self) -> dict[str, Any]:
        """What the viewer and the node table show of a client process."""
        out: dict[str, Any] = {"node": self.node_id, "kind": "client", "client_id": self.client_id}
        if self.producer is not None:
            out.update(acked=len(self.acked), failed=len(self.failed))
        if self.consumer is not None:
            out.update(group=self.consumer.group, consumed=len(self.consumer.consumed),
                       owned=len([q for q in self.consumer.owned() if not q.topic.startswith("%")]))
        return out


def client_node_codec() -> Any:
    """The client's codec as a node of the simulator: what it cannot read of an answer (a broker's error code,
    garbage) comes back as the exception, thrown into the service that waits for it, never into the runtime."""
    return _TolerantCodec(client_codec())


class _TolerantCodec:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.decodes_replies = True

    def encode(self, msg: Any) -> bytes:
        return self.inner.encode(msg)

    def decode(self, data: bytes, answers: Any = None) -> Any:
        try:
            return self.inner.decode(data, answers)
        except CodecError as e:
            return e
        except RemoteProtocolError as e:  # no remoting frame at all
            return CodecError(f"an answer that is no remoting frame: {e}")

    def wire_size(self, msg: Any) -> int | None:
        return None
