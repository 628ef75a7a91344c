"""A broker's registration with its name servers: ``BrokerOuterAPI.registerBrokerAll`` as
``BrokerController`` drives it (RocketMQ 4.9.5), sans-IO, shared by every broker kind of the kit.

* at start, then every ``registerNameServerPeriod`` (30 s; Java clamps it to 10-60 s, the first periodic
  one 10 s after start), the broker sends REGISTER_BROKER to every name server of ``namesrvAddr``
  (``;``-separated ``host:port``), with its cluster, name, id, address (``brokerIP1``:``listenPort``),
  HA address (``brokerIP2``:``haListenPort``, default ``listenPort`` + 1), its topic config table and
  DataVersion (:class:`~rocketlab.namesrv.route.RegisterBrokerBody`);
* again at once when its broker id changes (a DLedger or controller-mode broker that becomes master
  registers as brokerId 0, one demoted re-registers with its slave id: ``changeToMaster`` /
  ``changeToSlave`` call ``registerBrokerAll``) or its topic table's DataVersion does (a topic created);
* UPDATE_AND_CREATE_TOPIC registers before it is answered (``AdminBrokerProcessor.updateAndCreateTopic``
  calls ``registerIncrementBrokerData`` synchronously, whose ``registerBrokerAll`` waits for every name
  server's answer or ``registerBrokerTimeoutMills``): :meth:`BrokerOuterAPI.register_then_answer` holds the
  answer until every name server answered or timed out, so a client that asks a name server for the route
  right after the answer finds the topic;
* the answers (:class:`~rocketlab.namesrv.protocol.RegisterBrokerResponse`) go back to the broker, which
  uses them as Java does for a slave: ``masterAddr`` for SlaveSynchronize, ``haServerAddr`` for its HA
  client when ``haMasterAddress`` was not configured.

No ``namesrvAddr``: nothing is sent (the simulator's brokers, and every broker configured before name
servers existed). Trace: ``namesrv_register`` (namesrv, broker_id, ok, master_addr, ha_server_addr) for
each answer or timeout.

Differences from 4.9.5: the registrations on change go two-way, as the periodic ones (Java sends those
oneway); a topic's creation registers the whole topic table (``registerIncrementBrokerData`` sends only
the new topic, with the same DataVersion: a name server adds the same queue data either way); ``needRegister`` (QUERY_DATA_VERSION before a periodic registration when ``forceRegister`` is
off) is not modelled: every registration is forced, Java's default; ``unregisterBrokerAll`` at shutdown is
not sent (a core's ``on_stop`` sends nothing): the name server drops the broker when its connection
closes, which a clean stop does at once; no filter servers (the list is empty, as without
``filterServerNums``). A controller-mode broker (5.x) registers with 4.9.5's REGISTER_BROKER too, once
the controller gave it an id (brokerId 0 while master), with its topic table (topics created by sends
and UPDATE_AND_CREATE_TOPIC, TBW102 for auto-creation, as the other kinds): 5.x's registration (``enableSlaveActingMaster``, the 5.x header fields)
has no 4.9.5 name server to be compared with.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketlab.core import NodeContext, OutputBuilder
from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.namesrv.protocol import RegisterBrokerRequest, RegisterBrokerResponse, ResponseCode
from rocketlab.namesrv.route import RegisterBrokerBody
from rocketlab.peers import parse_address, parse_peers
from rocketlab.properties import bool_property, int_property

REQUEST_BASE = 1 << 43  # request ids of the registrations (other components count elsewhere)
DEFAULT_LISTEN_PORT = 10911
REGISTER_TIMEOUT_MS = 6_000  # registerBrokerTimeoutMills
FIRST_PERIODIC_MS = 10_000

TopicSource = Callable[[], "tuple[int | None, Any]"]
"""What the broker registers now: (its broker id, None while it has none; its TopicConfigManager or None)."""


@dataclass(frozen=True)
class RegistrationConfig:
    namesrv_addrs: tuple[str, ...]
    cluster_name: str
    broker_name: str
    broker_addr: str
    ha_server_addr: str
    register_period_ms: int = 30_000
    compressed: bool = False


def registration_config(props: dict[str, Any], node_id: str, broker_name: str,
                        cluster_name: str | None = None) -> RegistrationConfig | None:
    """From broker.conf keys (see the module docstring); None without ``namesrvAddr``."""
    addrs = tuple(a.strip() for a in str(props.get("namesrvAddr", "")).split(";") if a.strip())
    if not addrs:
        return None
    for a in addrs:
        parse_address(a, "namesrvAddr entry")
    host, port = "127.0.0.1", DEFAULT_LISTEN_PORT
    if "peers" in props:
        host, port = parse_peers(props["peers"]).get(node_id, (host, port))
    port = int_property(props, "listenPort", port)
    host = props.get("brokerIP1", host)
    ha_port = int_property(props, "haListenPort", port + 1)
    period = int_property(props, "registerNameServerPeriod", 30_000)
    if period <= 0:
        raise ConfigError(_("{key}={value} must be positive").format(key="registerNameServerPeriod", value=period))
    return RegistrationConfig(addrs, cluster_name or props.get("brokerClusterName", "DefaultCluster"), broker_name,
                              f"{host}:{port}", f"{props.get('brokerIP2', host)}:{ha_port}",
                              max(10_000, min(period, 60_000)), bool_property(props, "compressedRegister", False))


class BrokerOuterAPI:
    """See the module docstring. ``source`` tells what to register; every method is a no-op without
    name servers."""

    def __init__(self, config: RegistrationConfig | None, source: TopicSource) -> None:
        self.config = config
        self.source = source
        self.ids = itertools.count(REQUEST_BASE)
        self.in_flight: dict[int, str] = {}
        self.next_register_ms: int | None = None
        self.sent: tuple[int | None, Any] | None = None
        """(broker id, DataVersion) of the last registration sent."""
        self.now_ms = 0
        self.registrations = 0
        self.answers_held: list[tuple[set[int], tuple[str, int], Any]] = []
        """(registrations still in flight, reply_to, answer): answers sent once those are answered."""

    @classmethod
    def of(cls, ctx: NodeContext, broker_name: str, source: TopicSource,
           cluster_name: str | None = None) -> BrokerOuterAPI:
        return cls(registration_config(ctx.options, ctx.node_id, broker_name, cluster_name), source)

    def _current(self) -> tuple[int | None, Any, Any]:
        broker_id, manager = self.source()
        version = dict(manager.data_version.to_json()) if manager is not None else {"counter": 0, "timestamp": 0}
        return broker_id, manager, version

    def start(self, now_ms: int, out: OutputBuilder) -> None:
        """``BrokerController.start``: register at once, then periodically."""
        if self.config is None:
            return
        self.now_ms = now_ms
        self.register_broker_all(now_ms, out)
        self.next_register_ms = now_ms + FIRST_PERIODIC_MS

    def next_deadline_ms(self) -> int | None:
        if self.config is None or self.next_register_ms is None:
            return None
        broker_id, _, version = self._current()
        if broker_id is not None and self.sent != (broker_id, version):
            return self.now_ms  # changed: register now
        return self.next_register_ms

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        if self.config is None or self.next_register_ms is None:
            return
        self.now_ms = now_ms
        broker_id, _, version = self._current()
        if now_ms >= self.next_register_ms:
            while self.next_register_ms <= now_ms:
                self.next_register_ms += self.config.register_period_ms
            self.register_broker_all(now_ms, out)
        elif broker_id is not None and self.sent != (broker_id, version):
            self.register_broker_all(now_ms, out)

    def register_broker_all(self, now_ms: int, out: OutputBuilder) -> None:
        """``registerBrokerAll``: one REGISTER_BROKER to each name server (none while the id is unknown)."""
        broker_id, manager, version = self._current()
        if self.config is None or broker_id is None:
            return
        table = dict(manager.topic_config_table) if manager is not None else {}
        c = self.config
        req = RegisterBrokerRequest(c.cluster_name, c.broker_addr, c.broker_name, broker_id, c.ha_server_addr,
                                    RegisterBrokerBody(table, version), compressed=c.compressed)
        self.sent = (broker_id, version)
        self.registrations += 1
        for addr in c.namesrv_addrs:
            request_id = next(self.ids)
            self.in_flight[request_id] = addr
            out.request(addr, req, request_id, timeout_ms=REGISTER_TIMEOUT_MS)

    def register_then_answer(self, now_ms: int, out: OutputBuilder, reply_to: tuple[str, int], answer: Any) -> None:
        """``registerIncrementBrokerData`` before an UPDATE_AND_CREATE_TOPIC's ``answer``: register now and
        send ``answer`` to ``reply_to`` once every name server answered or timed out (at once when nothing
        was sent: no name servers, no broker id yet)."""
        self.now_ms = now_ms
        before = set(self.in_flight)
        self.register_broker_all(now_ms, out)
        sent = set(self.in_flight) - before
        if sent:
            self.answers_held.append((sent, reply_to, answer))
        else:
            out.reply(reply_to[0], reply_to[1], answer)

    def owns(self, request_id: int) -> bool:
        return request_id in self.in_flight

    def on_reply(self, request_id: int, msg: Any | None, now_ms: int,
                 out: OutputBuilder) -> RegisterBrokerResponse | None:
        """The answer of one name server: returned when it is a success (a timeout or error: None)."""
        addr = self.in_flight.pop(request_id, None)
        if addr is None:
            return None
        self.now_ms = now_ms
        ok = isinstance(msg, RegisterBrokerResponse) and msg.code == ResponseCode.SUCCESS
        out.trace("namesrv_register", namesrv=addr, broker_id=self.sent[0] if self.sent else None, ok=ok,
                  master_addr=msg.master_addr if ok else None, ha_server_addr=msg.ha_server_addr if ok else None)
        for held in list(self.answers_held):
            held[0].discard(request_id)
            if not held[0]:
                self.answers_held.remove(held)
                out.reply(held[1][0], held[1][1], held[2])
        return msg if ok else None
