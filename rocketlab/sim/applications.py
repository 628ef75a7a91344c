"""``Cluster.applications``: RocketMQ as applications live it, in the simulator - a name server, broker groups
that register with it, and client processes (the kit's client, :mod:`rocketlab.client.client_core`) that find
their brokers through it (rocketlab's own: the Java side starts these as separate processes).

Nodes: ``ns`` (the name server, :mod:`rocketlab.namesrv`); per DLedger group ``g`` of ``dledger_groups``
the brokers ``g0``..``g2`` of brokerName ``broker-g`` (:mod:`rocketlab.broker.dledger_broker`); per classic
pair ``g`` of ``classic_pairs`` ``g0`` (ASYNC_MASTER) and ``g1`` (SLAVE) of ``broker-g``; ``p0``.. producers
(group ``PG``) and ``k0``.. consumers of group ``CG`` (``consumer_style``: ``push``, the default,
``lite-pull-subscribe`` or ``lite-pull-assign``: :mod:`rocketlab.client.lite_pull_core`; assigned, member ``ki`` of
``consumers`` takes the i-th share of the sorted queues). Every broker has ``topic`` with ``queues`` queues
before it starts (so the first route a client reads has it) and registers with ``ns:9876`` as
``BrokerOuterAPI`` does; a node's address is ``<node id>:<port>`` (the runtime's ``host_addresses``), so the
routes the name server hands out name real nodes, and every request and answer crosses the simulated
network: a partition, a crash or a lost message reaches clients as it reaches brokers.

The clients start at ``client_start_ms`` (after the groups have elected masters), the producer sends
``messages`` messages, one every ``send_interval_ms`` (the i-th with KEYS ``p0-i``); the consumers' listener answers
RECONSUME_LATER for the KEYS in ``reject_keys`` (the message is sent back, retried on ``%RETRY%CG`` and, after
``max_reconsume_times``, moved to ``%DLQ%CG``), CONSUME_SUCCESS for the rest.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocketlab.broker.broker import BrokerConfig, make_broker
from rocketlab.broker.dledger_broker import DLedgerBrokerConfig, dledger_broker_codec, make_dledger_broker
from rocketlab.broker.protocol import broker_codec
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.client.client_core import ClientNodeConfig, client_node_codec
from rocketlab.client.lite_pull_core import CONSUMER_STYLES, make_client
from rocketlab.client.producer import ProducerConfig
from rocketlab.core import Core, NodeContext
from rocketlab.dledger.config import resolve_profile
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.errors import RocketlabError
from rocketlab.ha.config import HAConfig
from rocketlab.namesrv.namesrv_controller import make_namesrv
from rocketlab.namesrv.protocol import namesrv_codec
from rocketlab.sim.node import NodeSetup

if TYPE_CHECKING:
    from rocketlab.sim.cluster import Cluster

NAMESRV = "ns"
NAMESRV_ADDR = "ns:9876"
LISTEN_PORT = 10911
PRODUCER_GROUP = "PG"
CONSUMER_GROUP = "CG"
SEND_CONFIG = SendConfig(system_topics=False)


def broker_name(group: str) -> str:
    return f"broker-{group}"


def applications(cls: type[Cluster], seed: int = 1, *, dledger_groups: tuple[str, ...] = ("a", "b"),
                 classic_pairs: tuple[str, ...] = ("c",), producers: int = 1, consumers: int = 3,
                 topic: str = "TopicTest", queues: int = 4, messages: int = 200, send_interval_ms: int = 100,
                 client_start_ms: int = 5_000, retry_times_when_send_failed: int = 2,
                 send_latency_fault_enable: bool = False, reject_keys: tuple[str, ...] = (),
                 max_reconsume_times: int = 16, consumer_style: str = "push", data_dir: str | Path | None = None,
                 **kwargs: Any) -> Cluster:
    """See the module docstring; ``kwargs`` go to :class:`~rocketlab.sim.cluster.Cluster` (network, latency...)."""
    if consumer_style not in CONSUMER_STYLES:
        raise RocketlabError(f"consumer_style {consumer_style!r} is none of {', '.join(CONSUMER_STYLES)}")
    groups = {g: [f"{g}{i}" for i in range(3)] for g in dledger_groups}
    pairs = {g: [f"{g}0", f"{g}1"] for g in classic_pairs}
    if len({*groups, *pairs}) != len(groups) + len(pairs) or any(len(g) != 1 or not g.isalpha() for g in {*groups, *pairs}):
        raise RocketlabError(f"broker groups are distinct single letters, got {dledger_groups} and {classic_pairs}")
    producer_ids = [f"p{i}" for i in range(producers)]
    consumer_ids = [f"k{i}" for i in range(consumers)]
    setups: dict[str, NodeSetup] = {NAMESRV: NodeSetup((NAMESRV,), {}, namesrv_codec())}
    dledger_codec, classic_codec, client_codec = dledger_broker_codec(), broker_codec(), client_node_codec()
    for members, codec in [*((m, dledger_codec) for m in groups.values()), *((m, classic_codec) for m in pairs.values())]:
        for node_id in members:
            setups[node_id] = NodeSetup(tuple(members), {"namesrvAddr": NAMESRV_ADDR, "brokerIP1": node_id,
                                                         "listenPort": LISTEN_PORT}, codec)
    for node_id in [*producer_ids, *consumer_ids]:
        setups[node_id] = NodeSetup((node_id,), {}, client_codec)
    producer = ProducerConfig(producer_group=PRODUCER_GROUP, retry_times_when_send_failed=retry_times_when_send_failed,
                              send_latency_fault_enable=send_latency_fault_enable)
    makers: dict[str, Any] = {NAMESRV: make_namesrv}
    for g, members in groups.items():
        config = DLedgerBrokerConfig(broker_name=broker_name(g), mapped_file_size_commit_log=64 * 1024,
                                     send=SEND_CONFIG, dledger={"mapped_file_size_for_entry_index": 32 * 1024,
                                                                "fsync_policy": "never"},
                                     profile=resolve_profile("dledger-0.3.1.2"))
        makers.update({n: _with_topic(lambda ctx, c=config: make_dledger_broker(ctx, c), topic, queues) for n in members})
    for g, (master, slave) in pairs.items():
        base = {"broker_name": broker_name(g), "mapped_file_size_commit_log": 64 * 1024, "send": SEND_CONFIG,
                "ha": HAConfig()}
        configs = {master: BrokerConfig(broker_role="ASYNC_MASTER", broker_id=0, **base),
                   slave: BrokerConfig(broker_role="SLAVE", broker_id=1, ha_master_address=master, master_id=master,
                                       **base)}
        makers.update({n: _with_topic(lambda ctx, c=configs[n]: make_broker(ctx, c), topic, queues) for n in configs})
    for i, node_id in enumerate(producer_ids):
        config = ClientNodeConfig(NAMESRV_ADDR, topic, producer, messages, send_interval_ms, client_start_ms,
                                  start_index=i, start_ms=client_start_ms)
        makers[node_id] = lambda ctx, c=config: make_client(ctx, c)
    for i, node_id in enumerate(consumer_ids):
        config = ClientNodeConfig(NAMESRV_ADDR, topic, consumer_group=CONSUMER_GROUP, start_ms=client_start_ms,
                                  reject_keys=frozenset(reject_keys), max_reconsume_times=max_reconsume_times,
                                  consumer_style=consumer_style, assign_index=i, assign_members=consumers)
        makers[node_id] = lambda ctx, c=config: make_client(ctx, c)

    def factory(ctx: NodeContext) -> Core:
        return makers[ctx.node_id](ctx)

    checkers = kwargs.pop("checkers", None)
    if checkers is None:
        checkers = [_GroupChecker(g, frozenset(members), DLedgerChecker(
            lambda c, m=tuple(members): {n: c.node(n).server for n in m if c.alive(n)})) for g, members in groups.items()]
    root = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="rocketlab-tmp-apps-"))
    meta = {"system": "applications", "dledger_groups": list(groups), "classic_pairs": list(pairs),
            "producers": producer_ids, "consumers": consumer_ids, "topic": topic,
            **({"consumer_style": consumer_style} if consumer_style != "push" else {}),
            "node_kinds": {NAMESRV: "namesrv", **dict.fromkeys(producer_ids, "producer"),
                           **dict.fromkeys(consumer_ids, "consumer")}, **kwargs.pop("meta", {})}
    node_ids = [NAMESRV, *(n for m in groups.values() for n in m), *(n for m in pairs.values() for n in m),
                *producer_ids, *consumer_ids]
    cluster = cls(node_ids, factory, client_codec, seed=seed, data_dir=root, checkers=checkers, meta=meta,
                  per_node=setups, **kwargs)
    return cluster


def _with_topic(make: Any, topic: str, queues: int) -> Any:
    """A broker factory whose broker has ``topic`` (``queues`` queues) before it starts."""

    def build(ctx: NodeContext) -> Core:
        core = make(ctx)
        core.metadata.topic_config_manager.create_topic_if_absent(topic, 0, queues)
        return core

    return build


class _GroupChecker:
    """A checker of one broker group: it sees only its members' events (each group has its own terms)."""

    def __init__(self, group: str, members: frozenset[str], inner: Any) -> None:
        self.name = f"{inner.name} {broker_name(group)}"
        self.members = members
        self.inner = inner
        self.kinds = getattr(inner, "kinds", None)

    def check(self, cluster: Cluster, event: dict[str, Any]) -> str | None:
        node = event.get("node")
        if node is not None and node not in self.members:
            return None
        return self.inner.check(cluster, event)
