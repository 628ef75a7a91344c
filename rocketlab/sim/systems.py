"""The systems a :class:`~rocketlab.sim.cluster.Cluster` can be built as, and how each takes puts and pulls
(rocketlab's own: the Java side starts these as separate processes).

Each constructor here is a classmethod of Cluster (``Cluster.dledger(...)``, ``Cluster.master_slave(...)``,
...: :class:`~rocketlab.sim.cluster.Cluster` binds them and records their arguments as its
:class:`~rocketlab.sim.cluster.Recipe`): it names the nodes, builds their configurations and
factories, picks the invariant checkers, and installs the put and pull handlers that route a client's
``c.put`` / ``c.pull`` to the right node (the DLedger leader, the master, the master broker).

* :func:`pingpong` - the smoke protocol of :mod:`rocketlab.pingpong`;
* :func:`dledger` - a DLedger group (:mod:`rocketlab.dledger`);
* :func:`master_slave` - classic HA (:mod:`rocketlab.broker.broker`, :mod:`rocketlab.ha`);
* :func:`dledger_brokers` - brokers whose CommitLog is a DLedger log (:mod:`rocketlab.broker.dledger_broker`);
* :func:`controller_mode` - RocketMQ 5's controllers and AutoSwitch brokers (:mod:`rocketlab.controller`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.broker import BrokerConfig, make_broker
from rocketlab.broker.dledger_broker import DLedgerBrokerConfig, dledger_broker_codec, make_dledger_broker
from rocketlab.broker.protocol import PullMessageRequest, broker_codec
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.controller.config import ControllerConfig
from rocketlab.controller.controller_core import ControllerNodeConfig, make_controller
from rocketlab.controller.invariants import ControllerModeChecker
from rocketlab.controller.wire import ControllerNodeCodec
from rocketlab.core import NodeContext, Output, OutputBuilder
from rocketlab.dledger import DLedgerCodec, dledger_factory
from rocketlab.dledger.config import commits_only_current_term, resolve_profile
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.dledger.protocol import ParseResult
from rocketlab.errors import RocketlabError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.invariants import SlaveIsPrefixChecker, SyncPutOnSlaveChecker
from rocketlab.pingpong import PingPongCodec, PingPongConfig, make_pingpong_node
from rocketlab.store import Message

if TYPE_CHECKING:  # sim.cluster imports this module to bind the constructors: no import back at run time
    from rocketlab.sim.cluster import Checker, Cluster

TEMPORARY_PREFIX = "rocketlab-tmp-"
SIM_SEND_CONFIG = SendConfig(system_topics=False)
"""The simulator's brokers keep the kit's simplified topic creation (no system topics in ``topics.json``), so
the sample runs' files stay as they are (:mod:`rocketlab.broker.topic_config_rules`)."""
"""The name prefix of a data directory a cluster made for itself (:meth:`Cluster.close` removes it)."""


def _temporary_dir(kind: str) -> Path:
    """A data directory the cluster owns: removed again by :meth:`Cluster.close`."""
    return Path(tempfile.mkdtemp(prefix=TEMPORARY_PREFIX + kind))


def pingpong(cls: type[Cluster], nodes: int = 3, seed: int = 1, **kwargs: Any) -> Cluster:
    """The smoke cluster: nodes exchanging heartbeats, pings and stream frames (rocketlab.pingpong)."""
    config = kwargs.pop("config", None) or PingPongConfig()
    ids = [f"n{i}" for i in range(nodes)]
    kwargs.setdefault("meta", {})
    kwargs["meta"] = {"system": "pingpong", "config": config.as_dict(), **kwargs["meta"]}
    return cls(ids, lambda ctx: make_pingpong_node(ctx, config), PingPongCodec(), seed=seed, **kwargs)


def dledger(cls: type[Cluster], nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2", *, memory: bool = False,
            data_dir: str | Path | None = None, config: dict[str, Any] | None = None,
            checkers: Iterable[Checker] | None = None, **kwargs: Any) -> Cluster:
    """A DLedger group ``n0``..: ``profile`` ``dledger-0.3.1.2`` (what RocketMQ ships, the default),
    ``dledger-0.3.2`` or ``raft`` (see :mod:`rocketlab.dledger.config`); ``config`` overrides
    DLedgerConfig fields (e.g. ``heart_beat_time_interval_ms``). Members keep file stores under
    ``data_dir`` (a new temporary directory when None), or memory stores with ``memory=True``.
    The DLedger invariants are checked after every event (committed entries stay unchanged only
    where the config commits only current-term entries (``raft``): DLedger's releases can lose them,
    as Figure 8 shows)."""
    ids = [f"n{i}" for i in range(nodes)]
    profile = resolve_profile(profile)
    factory = dledger_factory({"profile": profile, **(config or {})})
    if checkers is None:
        checkers = [DLedgerChecker(cls.live_cores,
                                   committed_stable=commits_only_current_term(profile, config))]
    if memory:
        root = None
    else:
        root = Path(data_dir) if data_dir is not None else _temporary_dir("rocketlab-dl-")
    meta = {"system": "dledger", "profile": profile, "config": dict(config or {}), **kwargs.pop("meta", {})}
    cluster = cls(ids, factory, DLedgerCodec(), seed=seed, data_dir=root, checkers=checkers, meta=meta,
                  **kwargs)
    cluster._put_handler = _dledger_append
    return cluster


def master_slave(cls: type[Cluster], role: str = "ASYNC_MASTER", slaves: int = 1, seed: int = 1,
                 data_dir: str | Path | None = None, broker: dict[str, Any] | None = None,
                 ha: dict[str, Any] | None = None, checkers: Iterable[Checker] | None = None,
                 **kwargs: Any) -> Cluster:
    """Classic HA: ``n0`` is the master (``role`` ASYNC_MASTER or SYNC_MASTER), ``n1``.. slaves.

    ``broker`` and ``ha`` override BrokerConfig / HAConfig fields (snake_case RocketMQ names);
    stores live under ``data_dir`` (a new temporary directory when None).
    """
    ids = [f"n{i}" for i in range(slaves + 1)]
    ha_config = HAConfig(**(ha or {}))
    base = {"mapped_file_size_commit_log": 64 * 1024, "send": SIM_SEND_CONFIG, **(broker or {})}
    configs = {"n0": BrokerConfig(broker_role=role, broker_id=0, ha=ha_config, **base)}
    for i, node_id in enumerate(ids[1:], 1):
        configs[node_id] = BrokerConfig(broker_role="SLAVE", broker_id=i, ha_master_address="n0",
                                        master_id="n0", ha=ha_config, **base)
    if checkers is None:
        checkers = [SlaveIsPrefixChecker("n0", ids[1:]), SyncPutOnSlaveChecker("n0", ids[1:])]
    root = Path(data_dir) if data_dir is not None else _temporary_dir("rocketlab-ms-")
    meta = {"system": "master_slave", "role": role, "slaves": slaves, **kwargs.pop("meta", {})}
    cluster = cls(ids, lambda ctx: make_broker(ctx, configs[ctx.node_id]), broker_codec(), seed=seed,
                  data_dir=root, checkers=checkers, meta=meta, **kwargs)
    cluster._put_handler = _broker_put
    cluster._pull_handler = _broker_pull
    return cluster


def dledger_brokers(cls: type[Cluster], nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2", *,
                    data_dir: str | Path | None = None, broker: dict[str, Any] | None = None,
                    dledger: dict[str, Any] | None = None, checkers: Iterable[Checker] | None = None,
                    **kwargs: Any) -> Cluster:
    """A RocketMQ broker group on DLedger (``enableDLegerCommitLog``): brokers ``n0``.. whose commit
    log is a DLedger log; the DLedger leader becomes SYNC_MASTER, the others SLAVE.

    ``broker`` overrides DLedgerBrokerConfig fields (snake_case RocketMQ names, e.g.
    ``mapped_file_size_commit_log``), ``dledger`` DLedgerConfig fields (timers: Java's defaults unless
    given); ``profile`` is DLedger's. Stores live under ``data_dir`` (a new temporary directory when
    None). ``c.put`` goes through the current master, ``c.pull`` reads from it; the DLedger
    invariants are checked after every event.
    """
    ids = [f"n{i}" for i in range(nodes)]
    profile = resolve_profile(profile)
    dledger_values = {"mapped_file_size_for_entry_index": 32 * 1024, "fsync_policy": "never", **(dledger or {})}
    config = DLedgerBrokerConfig(**{"mapped_file_size_commit_log": 64 * 1024, "profile": profile,
                                    "send": SIM_SEND_CONFIG,
                                    "dledger": dledger_values, **(broker or {})})
    if checkers is None:
        checkers = [DLedgerChecker(lambda c: {n: c.node(n).server for n in c.live_nodes()},
                                   committed_stable=commits_only_current_term(profile, dledger))]
    root = Path(data_dir) if data_dir is not None else _temporary_dir("rocketlab-dlb-")
    meta = {"system": "dledger_brokers", "profile": profile, "dledger": dict(dledger or {}),
            **kwargs.pop("meta", {})}
    cluster = cls(ids, lambda ctx: make_dledger_broker(ctx, config), dledger_broker_codec(), seed=seed,
                  data_dir=root, checkers=checkers, meta=meta, **kwargs)
    cluster._put_handler = _dledger_broker_put
    cluster._pull_handler = _dledger_broker_pull
    return cluster


def controller_mode(cls: type[Cluster], brokers: int = 3, controllers: int = 3, seed: int = 1, *,
                    data_dir: str | Path | None = None, broker: dict[str, Any] | None = None,
                    controller: dict[str, Any] | None = None, dledger: dict[str, Any] | None = None,
                    checkers: Iterable[Checker] | None = None, **kwargs: Any) -> Cluster:
    """RocketMQ 5's controller mode: controllers ``c0``.. (their metadata on a DLedger group, see
    :mod:`rocketlab.controller.controller_core`) and brokers ``n0``.. of one broker set, each with its
    store and AutoSwitch HA, taking ids and roles from the controllers
    (:mod:`rocketlab.broker.auto_switch_broker`, :mod:`rocketlab.broker.replicas_manager`).

    ``broker`` sets AutoSwitchBrokerConfig fields (``all_ack_in_sync_state_set``, ``in_sync_replicas``,
    ``min_in_sync_replicas``, ...; the camelCase RocketMQ names work too), ``controller``
    ControllerConfig fields (``enable_elect_unclean_master``, ...), ``dledger`` the controllers'
    DLedger timers. ``c.put`` goes through the current master broker. The invariants I1-I5
    (:mod:`rocketlab.controller.invariants`) are checked after every event."""
    if brokers < 1 or controllers < 1:
        raise RocketlabError(f"controller mode needs at least one broker and one controller, got "
                             f"{brokers} and {controllers}")
    controller_ids = tuple(f"c{i}" for i in range(controllers))
    broker_ids = [f"n{i}" for i in range(brokers)]
    broker_config = AutoSwitchBrokerConfig.load({"mapped_file_size_commit_log": 64 * 1024, "send": SIM_SEND_CONFIG,
                                                 **(broker or {})})
    node_config = ControllerNodeConfig(ControllerConfig.load(controller or {}), dict(dledger or {}),
                                       controller_ids)
    root = Path(data_dir) if data_dir is not None else _temporary_dir("rocketlab-cm-")
    meta = {"system": "controller_mode", "broker": dict(broker or {}), "controller": dict(controller or {}),
            **kwargs.pop("meta", {})}

    def factory(ctx: NodeContext) -> Any:
        if ctx.node_id in controller_ids:
            return make_controller(ctx, node_config)
        return AutoSwitchBrokerCore(ctx, broker_config, controllers=controller_ids)

    if checkers is None:
        checkers = [ControllerModeChecker(unsafe=node_config.controller.enable_elect_unclean_master)]
    cluster = cls([*controller_ids, *broker_ids], factory, ControllerNodeCodec(), seed=seed, data_dir=root,
                  meta=meta, checkers=checkers, **kwargs)
    cluster.leader_candidates = frozenset(broker_ids)
    cluster._put_handler = _controller_mode_put
    cluster._pull_handler = _controller_mode_pull
    return cluster


def _call_leader_and_wait(cluster: Cluster, call: Callable[[Any, int], tuple[Any, Any]], missing: str,
                          timeout_ms: Callable[[Any], int], wait: bool = True, via: str | None = None) -> Any:
    """Call ``call(core, now_ms) -> (pending, Output)`` on the leader/master (or on ``via``, a client
    that still believes ``via`` leads: a stale leader answers as its code does), then (``wait``) run the
    simulation until ``pending.done`` or ``timeout_ms(core)`` passes; returns ``pending``."""
    if via is not None:
        node = cluster.runtime.get(via)
        if not node.alive or node.paused:
            raise RocketlabError(f"cannot send to {via}: it is {'paused' if node.paused else 'down'}")
        leader: str | None = via
    else:
        leader = cluster.leader()
    if leader is None:
        raise RocketlabError(missing)
    results = []

    def step(core: Any, now_ms: int) -> Any:
        pending, out = call(core, now_ms)
        results.append(pending)
        return out

    cluster.runtime.call(leader, step)
    pending = results[0]
    if wait and not pending.done:
        cluster.run_until(lambda c: pending.done, timeout_ms=timeout_ms(cluster.node(leader)))
    return pending


def _broker_put(cluster: Cluster, body: bytes, topic: str, *, queue_id: int = 0, tags: str | None = None,
                keys: str | None = None, properties: dict[str, str] | None = None, wait: bool = True,
                via: str | None = None) -> Any:
    """Put through the master and run the simulation until the put is answered."""
    msg = Message(topic=topic, body=body, queue_id=queue_id, tags=tags, keys=keys, properties=properties or {})
    return _call_leader_and_wait(cluster, lambda core, now: core.put_message(msg, now),
                                 "no master is up to take the put",
                                 lambda core: core.config.ha.slave_timeout + 1000, wait, via)


def _controller_mode_put(cluster: Cluster, body: bytes, topic: str, *, queue_id: int = 0, wait: bool = True,
                         via: str | None = None, **_: Any) -> Any:
    """Put through the master broker (the one whose role is MASTER with the highest epoch)."""
    msg = Message(topic=topic, body=body, queue_id=queue_id)
    return _call_leader_and_wait(cluster, lambda core, now: core.put_message(msg, now),
                                 "no master broker is up to take the put",
                                 lambda core: core.config.ha.slave_timeout + 1000, wait, via)


def _controller_mode_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """Read a queue from the master broker; with none, from the live broker with the lowest brokerId (a
    fenced broker answers PULL_RETRY_IMMEDIATELY)."""
    master = cluster.leader()
    brokers = sorted((cluster.node(n).broker_id or 0, n) for n in cluster.live_nodes()
                     if n in (cluster.leader_candidates or ()))
    if master is None and not brokers:
        raise RocketlabError("no broker of the group is up")
    node = master if master is not None else brokers[0][1]
    return cluster.node(node).pull_message(PullMessageRequest(topic, queue_id, offset, max_msg_nums))


def _broker_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """``findBrokerAddressInSubscribe``: brokerId 0 if it is up, else the next live broker id."""
    live = sorted((cluster.node(n).config.broker_id, n) for n in cluster.live_nodes())
    if not live:
        raise RocketlabError("no broker of the group is up")
    return cluster.node(live[0][1]).pull_message(PullMessageRequest(topic, queue_id, offset, max_msg_nums))


def _dledger_append(cluster: Cluster, body: bytes, topic: str, *, wait: bool = True, via: str | None = None,
                    **_: Any) -> Any:
    """Append ``body`` through the leader and run until the append completes (or 10 s pass).

    ``topic`` is unused by a bare DLedger group (the broker on DLedger puts RocketMQ records instead).
    Returns the AppendFuture (``done``, ``code``, ``response`` with the entry's index and pos).
    """
    return _call_leader_and_wait(
        cluster, lambda core, now: core.append(body, now),
        "no leader to append to: run until one is elected (c.run_until(...leader()...))", lambda core: 10_000,
        wait, via)


def _dledger_broker_put(cluster: Cluster, body: bytes, topic: str, *, queue_id: int = 0, tags: str | None = None,
                        keys: str | None = None, properties: dict[str, str] | None = None,
                        wait: bool = True, via: str | None = None) -> Any:
    """Put through the current master (the broker whose DLedger member leads and has caught up) and run
    until the put is answered: PUT_OK once a majority has it, or an error status (at the latest after
    the broker's ``put_timeout_ms``)."""
    msg = Message(topic=topic, body=body, queue_id=queue_id, tags=tags, keys=keys, properties=properties or {})
    return _call_leader_and_wait(
        cluster, lambda core, now: core.put_message(msg, now),
        "no master is up to take the put: run until one is (c.run_until(lambda c: c.leader()))",
        lambda core: core.config.put_timeout_ms + 1, wait, via)


def _dledger_broker_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """Read a queue from the master; with no master up, from the live broker with the lowest brokerId
    (which answers only with slaveReadEnable)."""
    live = sorted((cluster.node(n).broker_id, n) for n in cluster.live_nodes())
    if not live:
        raise RocketlabError("no broker of the group is up")
    return cluster.node(live[0][1]).pull_message(PullMessageRequest(topic, queue_id, offset, max_msg_nums))


# --- a test's hand on a DLedger member (DLedger's ServerTestHarness) ---------------------------
def force_dledger_role(core: Any, now_ms: int, role: str, term: int, leader: str | None) -> Output:
    """Put a DLedger member in ``role`` (``LEADER``, or ``FOLLOWER`` of ``leader``) at ``term`` by hand, as
    DLedger's ServerTestHarness does with the elector off (``enableLeaderElector`` false); a member behind
    ``term`` moves up to it first."""
    ms, out = core.member_state, OutputBuilder()
    if ms.curr_term < term:
        ms.change_to_candidate(term)
        while ms.curr_term < term:
            ms.next_term()
    if role == "LEADER":
        core.elector.change_role_to_leader(term, now_ms, out)
    else:
        core.elector.change_role_to_follower(term, leader, now_ms, out)
    return core.finish_input(out, now_ms)


def dledger_revote(core: Any, now_ms: int, term: int) -> Output:
    """DLedger's ``testRevote(term)`` (LeaderElectorTest): the member becomes a candidate that has seen
    ``term``, its last round WAIT_TO_VOTE_NEXT, so its next pass (due at once) moves to ``term`` and asks
    for votes."""
    elector, out = core.elector, OutputBuilder()
    elector.change_role_to_candidate(term, now_ms, out)
    elector.last_parse_result = ParseResult.WAIT_TO_VOTE_NEXT
    elector.next_time_to_request_vote = -1
    elector.last_pass_ms = None
    return core.finish_input(out, now_ms)
