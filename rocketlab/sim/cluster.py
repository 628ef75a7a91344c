"""Cluster: the facade notebooks, tests and graders drive (the Python API of docs/using.md).

A Cluster owns the virtual clock, the trace recorder, the simulated runtime and the invariant checkers.
It is generic: a protocol plugs in by giving node factories and a codec. Constructors for concrete
systems (``Cluster.pingpong`` here; DLedger and master-slave in their issues) are thin classmethods.

Everything that happens is a trace event; every fault is one too (kind ``fault``). Checkers run after
every event; a violation is recorded as a ``violation`` event and raised as
:class:`~rocketlab.errors.InvariantViolation` carrying the seed and scenario (``raise_on_violation``).
"""

from __future__ import annotations

import copy
import functools
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rocketlab.core import Codec, CoreFactory, NodeContext, Output, OutputBuilder
from rocketlab.dledger.protocol import ParseResult
from rocketlab.errors import InvariantViolation, RocketlabError
from rocketlab.sim.faults import Fault, FaultSchedule
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.network import Latency, NetworkModel
from rocketlab.sim.runtime import DropRule, SimRuntime
from rocketlab.trace.recorder import Event, TraceRecorder
from rocketlab.trace.rundir import write_run

LEADER_ROLES = ("LEADER", "MASTER")
TEMPORARY_PREFIX = "rocketlab-tmp-"


def _temporary_dir(kind: str) -> Path:
    """A data directory the cluster owns: removed again by :meth:`Cluster.close`."""
    return Path(tempfile.mkdtemp(prefix=TEMPORARY_PREFIX + kind))


@dataclass(frozen=True)
class Recipe:
    """How a Cluster was built: the constructor's name and the arguments given to it. ``build()`` makes
    a new cluster that runs the same way (forks and replays in the cluster widget use it); a given
    ``data_dir`` is left out (the new cluster gets a temporary one), so two copies never share files."""

    constructor: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Cluster:
        # a deep copy: checkers and configs keep state, and every build must start from the pristine ones
        kwargs = _pristine({k: v for k, v in self.kwargs.items() if k != "data_dir"})
        return getattr(Cluster, self.constructor)(**kwargs)

    def code(self) -> str:
        """The Python expression that builds the cluster: ``Cluster.dledger(nodes=5, seed=7)``."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items() if k != "data_dir")
        return f"Cluster.{self.constructor}({args})"


def _pristine(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of constructor arguments (stateful checkers start afresh in every build); an argument
    that cannot be copied (an open file, say) is shared as it is."""
    out = {}
    for key, value in kwargs.items():
        try:
            out[key] = copy.deepcopy(value)
        except Exception:  # noqa: BLE001 - not copyable: the same object, as before recipes copied
            out[key] = value
    return out


def _remember_recipe(constructor: Callable[..., Cluster]) -> Callable[..., Cluster]:
    """Record the arguments of a Cluster constructor on the cluster it returns (``cluster.recipe``)."""
    signature = inspect.signature(constructor)

    @functools.wraps(constructor)
    def build(cls: type[Cluster], *args: Any, **kwargs: Any) -> Cluster:
        bound = signature.bind(cls, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k != "cls"}
        given.update(given.pop("kwargs", {}))
        pristine = _pristine({k: v for k, v in given.items() if k != "data_dir"})
        if "data_dir" in given:
            pristine["data_dir"] = given["data_dir"]
        cluster = constructor(cls, *args, **kwargs)
        cluster.recipe = Recipe(constructor.__name__, pristine)
        cluster.calls.clear()  # what the constructor itself did, a rebuild does again
        return cluster

    return build


@dataclass(frozen=True)
class Call:
    """One call made on a Cluster from outside the simulation: where in the run it came (kernel events
    run before it, the clock, and whether every event due at that instant had run: ``drained``) and what
    it was. :attr:`Cluster.calls` keeps them, so that a cluster that has run can be rebuilt to any
    instant (the cluster viewer's forks)."""

    at_ms: int
    events_run: int
    drained: bool
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def code(self) -> str:
        words = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"cluster.{self.method}({', '.join(words)})"


def _journaled(method: Callable[..., Any]) -> Callable[..., Any]:
    """Record a call made from outside the simulation in ``cluster.calls`` (not one made by another
    journaled call, nor one a kernel event makes): the calls and the seed rebuild the run."""

    @functools.wraps(method)
    def call(self: Cluster, *args: Any, **kwargs: Any) -> Any:
        if self._call_depth:
            return method(self, *args, **kwargs)
        scheduler = self.scheduler
        next_time = scheduler.next_time()
        entry = Call(scheduler.now_ms, scheduler.events_run, next_time is None or next_time > scheduler.now_ms,
                     method.__name__, copy.deepcopy(args), copy.deepcopy(kwargs))
        self._call_depth += 1
        try:
            out = method(self, *args, **kwargs)
        except RocketlabError:
            raise  # refused before it changed anything: nothing to replay
        except BaseException:
            self.calls.append(entry)  # it may have run the simulation: replay it as it came
            raise
        finally:
            self._call_depth -= 1
        self.calls.append(entry)
        return out

    return call


class Checker(Protocol):
    """An invariant checker: observes events, never participates. Returns a detail string on violation.

    A checker may also have ``kinds``, a frozenset of the event kinds it reads: then it is not called for
    events of other kinds (without it, or with None, it sees every event)."""

    name: str

    def check(self, cluster: Cluster, event: Event) -> str | None: ...


class Cluster:
    """A simulated cluster of nodes hosting sans-IO cores; see the module docstring."""

    def __init__(
        self,
        node_ids: Sequence[str],
        factory: CoreFactory,
        codec: Codec,
        *,
        seed: int = 1,
        network: str | NetworkModel = "reliable",
        latency: str | Latency | None = None,
        data_dir: str | Path | None = None,
        options: dict[str, Any] | None = None,
        trace: bool = True,
        trace_network: bool = True,
        serialize: str | None = None,
        checkers: Iterable[Checker] = (),
        raise_on_violation: bool = True,
        scenario: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if not node_ids:
            raise RocketlabError("a cluster needs at least one node")
        if len(set(node_ids)) != len(node_ids):
            raise RocketlabError(f"duplicate node ids in {list(node_ids)}")
        self.seed = seed
        self.scenario = scenario
        self.model = network if isinstance(network, NetworkModel) else NetworkModel.named(network, latency)
        self.scheduler = Scheduler()
        self.recorder = TraceRecorder(enabled=trace)
        serialize = serialize or os.environ.get("ROCKETLAB_SERIALIZE") or "sampled"
        self.runtime = SimRuntime(self.scheduler, self.recorder, self.model, seed, trace_network and trace, serialize)
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.meta = dict(meta or {})
        self.checkers = list(checkers)
        self._checkers_by_kind: dict[str, tuple[Any, ...]] = {"violation": ()}
        """Per event kind, the checkers that read it (filled as kinds appear)."""
        self.raise_on_violation = raise_on_violation
        self.violations: list[Event] = []
        self.recipe: Recipe | None = None  # set by the constructors below
        self.calls: list[Call] = []
        """The journaled calls made on this cluster since it was built (see :class:`Call`)."""
        self._call_depth = 0
        # set by code that can rebuild this run (rocketlab.grading.replay): the viewer uses them to go back
        self.rebuild: Callable[[int], Cluster] | None = None
        self.rebuild_code: Callable[[int], str] | None = None
        self.failure: dict[str, Any] | None = None  # where a graded test failed: {"t", "text"}
        self._ends_before_loss: dict[str, int] = {}
        self._put_handler: Callable[..., Any] | None = None
        self.leader_candidates: frozenset[str] | None = None
        """Nodes :meth:`leader` looks at (None: all); controller mode leaves its controllers out."""
        self._pull_handler: Callable[..., Any] | None = None
        peers = tuple(node_ids)
        for node_id in node_ids:
            node_dir = self.data_dir / "nodes" / node_id if self.data_dir is not None else None
            if node_dir is not None:
                node_dir.mkdir(parents=True, exist_ok=True)
            ctx = NodeContext(node_id, peers, seed, node_dir, dict(options or {}))
            self.runtime.add_node(node_id, factory, ctx, codec)
        if self.checkers:
            self.recorder.subscribe(self._check)
        for node_id in node_ids:
            self.runtime.boot(node_id)
        for node_id in node_ids:
            self.runtime.kick_off(node_id)

    # --- constructors ------------------------------------------------------------------------
    @classmethod
    @_remember_recipe
    def pingpong(cls, nodes: int = 3, seed: int = 1, **kwargs: Any) -> Cluster:
        """The smoke cluster: nodes exchanging heartbeats, pings and stream frames (rocketlab.pingpong)."""
        from rocketlab.pingpong import PingPongCodec, PingPongConfig, make_pingpong_node

        config = kwargs.pop("config", None) or PingPongConfig()
        ids = [f"n{i}" for i in range(nodes)]
        kwargs.setdefault("meta", {})
        kwargs["meta"] = {"system": "pingpong", "config": config.as_dict(), **kwargs["meta"]}
        return cls(ids, lambda ctx: make_pingpong_node(ctx, config), PingPongCodec(), seed=seed, **kwargs)

    @classmethod
    @_remember_recipe
    def dledger(cls, nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2", *, memory: bool = False,
                data_dir: str | Path | None = None, config: dict[str, Any] | None = None,
                checkers: Iterable[Checker] | None = None, **kwargs: Any) -> Cluster:
        """A DLedger group ``n0``..: ``profile`` ``dledger-0.3.1.2`` (what RocketMQ ships, the default),
        ``dledger-0.3.2`` or ``raft`` (see :mod:`rocketlab.dledger.config`); ``config`` overrides
        DLedgerConfig fields (e.g. ``heart_beat_time_interval_ms``). Members keep file stores under
        ``data_dir`` (a new temporary directory when None), or memory stores with ``memory=True``.
        The DLedger invariants are checked after every event (committed entries stay unchanged only
        where the config commits only current-term entries (``raft``): DLedger's releases can lose them,
        as Figure 8 shows)."""
        from rocketlab.dledger import DLedgerCodec, dledger_factory
        from rocketlab.dledger.config import commits_only_current_term, resolve_profile
        from rocketlab.dledger.invariants import DLedgerChecker

        ids = [f"n{i}" for i in range(nodes)]
        profile = resolve_profile(profile)
        factory = dledger_factory({"profile": profile, **(config or {})})
        if checkers is None:
            checkers = [DLedgerChecker(Cluster.live_cores,
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

    @classmethod
    @_remember_recipe
    def master_slave(cls, role: str = "ASYNC_MASTER", slaves: int = 1, seed: int = 1,
                     data_dir: str | Path | None = None, broker: dict[str, Any] | None = None,
                     ha: dict[str, Any] | None = None, checkers: Iterable[Checker] | None = None,
                     **kwargs: Any) -> Cluster:
        """Classic HA: ``n0`` is the master (``role`` ASYNC_MASTER or SYNC_MASTER), ``n1``.. slaves.

        ``broker`` and ``ha`` override BrokerConfig / HAConfig fields (snake_case RocketMQ names);
        stores live under ``data_dir`` (a new temporary directory when None).
        """
        from rocketlab.broker.broker import BrokerConfig, make_broker
        from rocketlab.broker.protocol import broker_codec
        from rocketlab.ha.config import HAConfig
        from rocketlab.ha.invariants import SlaveIsPrefixChecker, SyncPutOnSlaveChecker

        ids = [f"n{i}" for i in range(slaves + 1)]
        ha_config = HAConfig(**(ha or {}))
        base = {"mapped_file_size_commit_log": 64 * 1024, **(broker or {})}
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

    # --- time --------------------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    @property
    def events(self) -> list[Event]:
        return self.recorder.events

    def step(self) -> bool:
        """Run one kernel event; False when nothing is left to run."""
        return self.scheduler.step()

    def run_for(self, duration_ms: int) -> None:
        self.scheduler.run_until_time(self.scheduler.now_ms + duration_ms)

    def run_until(self, predicate: Callable[[Cluster], bool], timeout_ms: int = 30_000) -> bool:
        """Run until ``predicate(self)`` holds (checked after every event) or ``timeout_ms`` passes."""
        end = self.scheduler.now_ms + timeout_ms
        while not predicate(self):
            next_time = self.scheduler.next_time()
            if next_time is None or next_time > end:
                self.scheduler.run_until_time(end)
                return predicate(self)
            self.scheduler.step()
        return True

    # --- nodes -------------------------------------------------------------------------------
    @property
    def node_ids(self) -> list[str]:
        return list(self.runtime.nodes)

    def node(self, node_id: str) -> Any:
        """The node's core, for inspection (None while crashed)."""
        return self.runtime.get(node_id).core

    def alive(self, node_id: str) -> bool:
        return self.runtime.get(node_id).alive

    def live_nodes(self) -> list[str]:
        return [n for n, node in self.runtime.nodes.items() if node.alive]

    def live_cores(self) -> dict[str, Any]:
        """``{node_id: core}`` of the live nodes (what invariant checkers read)."""
        return {n: node.core for n, node in self.runtime.nodes.items() if node.alive}

    def leader(self) -> str | None:
        """The live node whose core's ``role`` is LEADER/MASTER (the highest ``term`` if several)."""
        best: tuple[int, str] | None = None
        for node_id, node in self.runtime.nodes.items():
            if self.leader_candidates is not None and node_id not in self.leader_candidates:
                continue
            if node.alive and getattr(node.core, "role", None) in LEADER_ROLES:
                term = getattr(node.core, "term", 0) or 0
                if best is None or term > best[0]:
                    best = (term, node_id)
        return best[1] if best else None

    def followers(self) -> list[str]:
        leader = self.leader()
        return [n for n in self.live_nodes() if n != leader]

    @_journaled
    def put(self, body: bytes, topic: str = "TopicTest", *, wait: bool = True, **kwargs: Any) -> Any:
        """Put a message through the current leader or master (systems with a store install this) and
        run the simulation until it is answered; with ``wait=False`` return the pending handle at once
        (the answer comes in a later event, as for a producer sending asynchronously). ``via=NODE`` sends
        it to that node whatever its role (a client with a stale route: a deposed leader that has not
        noticed yet still takes it, as in Raft's Figure 8)."""
        if self._put_handler is None:
            raise RocketlabError("this cluster's system takes no puts (it has no message store)")
        return self._put_handler(self, body, topic, wait=wait, **kwargs)

    def pull(self, topic: str, queue_id: int = 0, offset: int = 0, max_msg_nums: int = 32) -> Any:
        """Read a queue as a consumer would: from the master, or from a slave when the master is down."""
        if self._pull_handler is None:
            raise RocketlabError("this cluster's system has no queues to pull from")
        return self._pull_handler(self, topic, queue_id, offset, max_msg_nums)

    # --- faults ------------------------------------------------------------------------------
    def _fault(self, action: str, targets: Sequence[str]) -> None:
        self.recorder.emit(self.now_ms, None, "fault", {"action": action, "targets": list(targets)})

    @_journaled
    def crash(self, *node_ids: str, lose_unflushed: bool = False) -> None:
        """Crash processes: volatile state is lost; with ``lose_unflushed`` unflushed writes are too. The
        kernel closes a dead process's connections, so every node that talked with it is told at once
        (``on_peer_closed``) and its streams close."""
        for node_id in node_ids:
            self.runtime.get(node_id)
        self._fault("crash", node_ids)
        for node_id in node_ids:
            self._remember_end(node_id, lose_unflushed)
            self.runtime.crash(node_id, lose_unflushed)

    @_journaled
    def host_down(self, *node_ids: str, lose_unflushed: bool = True) -> None:
        """Fail the nodes' hosts (power loss, a kernel panic): the process is gone as in :meth:`crash`,
        but nothing closes its connections or streams, so peers notice only by their timeouts; what the
        OS had not written to disk is lost too (``lose_unflushed``). :meth:`restart` boots it again."""
        for node_id in node_ids:
            self.runtime.get(node_id)
        self._fault("host_down", node_ids)
        for node_id in node_ids:
            self._remember_end(node_id, lose_unflushed)
            self.runtime.host_down(node_id, lose_unflushed)

    def _remember_end(self, node_id: str, lose_unflushed: bool) -> None:
        """Before a crash that loses unflushed writes: the member's log end, to tell at restart what
        was lost (a ``lost`` fault event, so the viewer crosses those entries out)."""
        core = self.runtime.get(node_id).core
        end = getattr(core, "ledger_end_index", None) if core is not None else None
        if lose_unflushed and isinstance(end, int):
            self._ends_before_loss[node_id] = end
        else:
            self._ends_before_loss.pop(node_id, None)

    @_journaled
    def restart(self, *node_ids: str) -> None:
        for node_id in node_ids:
            if self.runtime.get(node_id).alive:
                raise RocketlabError(f"cannot restart {node_id}: it is running (crash it first)")
        self._fault("restart", node_ids)
        for node_id in node_ids:
            self.runtime.boot(node_id)
        for node_id in node_ids:
            before = self._ends_before_loss.pop(node_id, None)
            end = getattr(self.node(node_id), "ledger_end_index", None)
            if before is not None and isinstance(end, int) and end < before:
                self._fault("lost", [node_id, str(end + 1), str(before)])
        for node_id in node_ids:
            self.runtime.kick_off(node_id)

    @_journaled
    def partition(self, *groups: Sequence[str]) -> None:
        """Cut links between groups: ``c.partition(["n0"], ["n1", "n2"])``; unnamed nodes group together."""
        self.runtime.partition([list(g) for g in groups])
        self._fault("partition", [",".join(g) for g in groups])

    @_journaled
    def isolate(self, node_id: str) -> None:
        self.partition([node_id])

    @_journaled
    def heal(self) -> None:
        """End the partition and every one-way cut."""
        self._fault("heal", [])
        self.runtime.heal()

    @_journaled
    def cut_link(self, src: str, dst: str) -> None:
        """Cut one direction of one link: ``src``'s messages to ``dst`` are lost, stream bytes held
        (``dst`` still reaches ``src``). Undo with :meth:`heal_link` or :meth:`heal`."""
        self.runtime.cut_link(src, dst)
        self._fault("cut_link", [src, dst])

    @_journaled
    def heal_link(self, src: str, dst: str) -> None:
        """Heal the direction ``src`` -> ``dst`` cut by :meth:`cut_link`."""
        self.runtime.heal_link(src, dst)
        self._fault("heal_link", [src, dst])

    @_journaled
    def set_network(self, mode: str, latency: str | Latency | None = None) -> None:
        """Switch the network model from now on (messages already in flight keep their delays)."""
        model = NetworkModel.named(mode, latency)
        self.model = self.runtime.model = model
        self._fault("network", [model.mode, str(model.latency)])

    @_journaled
    def time_out(self, node_id: str) -> None:
        """Make a DLedger member's election timer expire now (RaftScope's "time out"): a follower
        becomes a candidate, a candidate starts its next vote round; a leader refuses. An addition of
        the kit: Java has no such call (an operator would wait for ``maxHeartBeatLeak`` heartbeats)."""
        self._live_core(node_id, "time out")
        if getattr(self.node(node_id), "role", None) in LEADER_ROLES:
            raise RocketlabError(f"{node_id} is the leader: only a follower or candidate can time out")
        self._fault("timeout", [node_id])
        self.runtime.call(node_id, lambda core, now: core.time_out_now(now))

    @_journaled
    def transfer_leadership(self, to: str) -> None:
        """Ask the current leader to hand over to ``to`` (DLedger's LeadershipTransferRequest, as
        ``preferredLeaderIds`` or an admin would); the transfer itself runs in the simulation."""
        self._live_core(to, "take leadership")
        leader = self.leader()
        if leader is None:
            raise RocketlabError("no leader to transfer leadership from")
        if leader == to:
            raise RocketlabError(f"{to} already leads")
        self._fault("transfer", [leader, to])
        self.runtime.call(leader, lambda core, now: core.transfer_leadership(to, now))

    def _live_core(self, node_id: str, what: str) -> Any:
        node = self.runtime.get(node_id)
        if not node.alive or node.paused:
            raise RocketlabError(f"{node_id} cannot {what}: it is {'paused' if node.paused else 'down'}")
        if not hasattr(node.core, "time_out_now"):
            raise RocketlabError(f"{node_id} cannot {what}: its system has no leader election")
        return node.core

    @_journaled
    def pause(self, *node_ids: str) -> None:
        for node_id in node_ids:
            self.runtime.get(node_id)
        self._fault("pause", node_ids)
        for node_id in node_ids:
            self.runtime.pause(node_id)

    @_journaled
    def resume(self, *node_ids: str) -> None:
        for node_id in node_ids:
            self.runtime.get(node_id)
        self._fault("resume", node_ids)
        for node_id in node_ids:
            self.runtime.resume(node_id)

    @_journaled
    def drop_next(self, src: str | None = None, dst: str | None = None, msg: str | None = None,
                  count: int = 1, code: str | None = None) -> None:
        """Drop the next ``count`` messages from ``src`` to ``dst`` of type ``msg`` whose ``code`` (a
        response code's name) is ``code`` (None = any)."""
        for node_id in (src, dst):
            if node_id is not None:
                self.runtime.get(node_id)
        self.runtime.drop_rules.append(DropRule(src, dst, msg, count, code))
        self._fault("drop", [src or "*", dst or "*", *(w for w in (msg, code) if w)])

    @_journaled
    def drop(self, msg_id: int) -> None:
        """Drop the message in flight with this ``msg_id`` (from its ``msg_send`` event)."""
        self.runtime.doomed.add(msg_id)
        self._fault("drop", [str(msg_id)])

    @_journaled
    def apply(self, fault: Fault) -> None:
        """Carry out one fault now."""
        if fault.action in ("crash", "crash!"):
            self.crash(*fault.targets, lose_unflushed=fault.action == "crash!")
        elif fault.action == "host_down":
            self.host_down(*fault.targets)
        elif fault.action == "restart":
            self.restart(*fault.targets)
        elif fault.action == "partition":
            self.partition(*fault.groups)
        elif fault.action == "heal":
            self.heal()
        elif fault.action == "pause":
            self.pause(*fault.targets)
        elif fault.action == "resume":
            self.resume(*fault.targets)
        else:
            src, dst, msg, code = (None if t == "*" else t for t in (*fault.targets, None, None)[:4])
            self.drop_next(src, dst, msg, code=code)

    @_journaled
    def apply_schedule(self, schedule: FaultSchedule | str) -> None:
        """Schedule every fault of a schedule (or its text) at its time, relative to time 0."""
        faults = FaultSchedule.parse(schedule) if isinstance(schedule, str) else schedule
        for fault in faults:
            for node_id in [*fault.targets, *(n for g in fault.groups for n in g)]:
                if node_id != "*":
                    self.runtime.get(node_id)
        for fault in faults:
            self.scheduler.at(max(fault.at_ms, self.now_ms), self._apply_scheduled, fault)

    def _apply_scheduled(self, fault: Fault) -> None:
        self._call_depth += 1
        try:
            self.apply(fault)
        finally:
            self._call_depth -= 1

    # --- checks and output -------------------------------------------------------------------
    def _check(self, event: Event) -> None:
        kind = event["kind"]
        checkers = self._checkers_by_kind.get(kind)
        if checkers is None:
            checkers = self._checkers_by_kind[kind] = tuple(
                checker for checker in self.checkers if getattr(checker, "kinds", None) is None or kind in checker.kinds)
        for checker in checkers:
            detail = checker.check(self, event)
            if detail is not None:
                violation = self.recorder.emit(self.now_ms, event.get("node"), "violation",
                                               {"invariant": checker.name, "detail": detail})
                self.violations.append(violation or {"invariant": checker.name, "detail": detail})
                if self.raise_on_violation:
                    raise InvariantViolation(checker.name, detail, self.seed, self.scenario)

    def describe(self) -> dict[str, Any]:
        """Seed, scenario, network and node ids: the first thing written for a run."""
        return {"seed": self.seed, "scenario": self.scenario, "network": self.model.describe(),
                "nodes": self.node_ids, **self.meta}

    def save(self, run_dir: str | Path, *, parquet: bool = False, stores: bool = True) -> Path:
        """Write ``meta.json`` and the events to ``run_dir``, and (``stores``) the nodes' store files under
        ``run_dir/nodes/<id>/``: copied there when the cluster's ``data_dir`` is elsewhere (a temporary
        directory, say), as they are at this moment (a live node's files are read through the page
        cache, so what it wrote is there even if not yet flushed to disk)."""
        meta = {**self.describe(), "end_ms": self.now_ms, "counters": dict(self.runtime.counters),
                "violations": len(self.violations)}
        out = write_run(run_dir, meta, self.recorder.events, parquet=parquet)
        source = self.data_dir / "nodes" if self.data_dir is not None else None
        target = Path(run_dir) / "nodes"
        if stores and source is not None and source.is_dir() and source.resolve() != target.resolve():
            for node in sorted(p for p in source.iterdir() if p.is_dir()):
                shutil.copytree(node, target / node.name, dirs_exist_ok=True)
        return out

    def close(self) -> None:
        """Stop every live node cleanly (closes their files); a temporary data directory is removed."""
        for node_id in self.node_ids:
            self.runtime.stop(node_id)
        if self.data_dir is not None and self.data_dir.name.startswith(TEMPORARY_PREFIX):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- brokers on DLedger (issue #6) ---------------------------------------------------------
    @classmethod
    @_remember_recipe
    def dledger_brokers(cls, nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2", *,
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
        from rocketlab.broker.dledger_broker import (
            DLedgerBrokerConfig,
            dledger_broker_codec,
            make_dledger_broker,
        )
        from rocketlab.dledger.config import commits_only_current_term, resolve_profile
        from rocketlab.dledger.invariants import DLedgerChecker

        ids = [f"n{i}" for i in range(nodes)]
        profile = resolve_profile(profile)
        dledger_values = {"mapped_file_size_for_entry_index": 32 * 1024, "fsync_policy": "never", **(dledger or {})}
        config = DLedgerBrokerConfig(**{"mapped_file_size_commit_log": 64 * 1024, "profile": profile,
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


    @classmethod
    @_remember_recipe
    def controller_mode(cls, brokers: int = 3, controllers: int = 3, seed: int = 1, *,
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
        from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
        from rocketlab.controller.config import ControllerConfig
        from rocketlab.controller.controller_core import ControllerNodeConfig, make_controller
        from rocketlab.controller.invariants import ControllerModeChecker
        from rocketlab.controller.wire import ControllerNodeCodec

        if brokers < 1 or controllers < 1:
            raise RocketlabError(f"controller mode needs at least one broker and one controller, got "
                                 f"{brokers} and {controllers}")
        controller_ids = tuple(f"c{i}" for i in range(controllers))
        broker_ids = [f"n{i}" for i in range(brokers)]
        broker_config = AutoSwitchBrokerConfig.load({"mapped_file_size_commit_log": 64 * 1024, **(broker or {})})
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

    # --- a test's hand on the run (DLedger's ServerTestHarness) --------------------------------
    def events_of(self, kind: str, node: str | None = None) -> list[Event]:
        """The recorded events of ``kind`` (only ``node``'s when given), in the order they happened."""
        return [e for e in self.recorder.events if e["kind"] == kind and (node is None or e["node"] == node)]

    @_journaled
    def drop_if(self, predicate: Callable[[str, str, Any], bool] | None) -> None:
        """From now on drop every message for which ``predicate(src, dst, msg)`` is true (None: drop no
        more); it is asked about each message that would otherwise leave (not one a partition, a
        :meth:`drop_next` rule or a dead peer stops), so it may count them ("every third push"). A
        dropped message is a ``msg_drop`` event (reason ``fault: drop``) and fails its request as a lost
        one does."""
        self.runtime.drop_filter = predicate

    @_journaled
    def request(self, node_id: str, msg: Any, client: str = "client") -> list[Any]:
        """Hand ``msg`` to ``node_id`` as a request from ``client``, a driver outside the cluster (a test,
        an admin tool), with no network in between; returns the list its reply goes to: a reply the
        core gives at once is in it on return, a later one (an append answered once committed) is added
        when the core gives it."""
        answers: list[Any] = []
        self.runtime.client_request(node_id, client, msg, answers.append)
        return answers

    @_journaled
    def force_role(self, node_id: str, role: str, term: int = 0, leader: str | None = None) -> None:
        """Put DLedger member ``node_id`` in ``role`` by hand at ``term``: ``LEADER``, or ``FOLLOWER`` of
        ``leader``, as DLedger's ServerTestHarness does with the elector off (``enableLeaderElector``
        false); a member behind ``term`` moves up to it first. A test's hook: no fault event (the
        member's ``role`` event says what happened)."""
        if role not in ("LEADER", "FOLLOWER") or (role == "FOLLOWER") != (leader is not None):
            raise RocketlabError(f"force_role takes LEADER, or FOLLOWER with its leader; got {role} {leader}")

        def force(core: Any, now_ms: int) -> Output:
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

        self.runtime.call(node_id, force)

    @_journaled
    def revote(self, node_id: str, term: int) -> None:
        """DLedger's ``testRevote(term)`` (LeaderElectorTest): member ``node_id`` becomes a candidate that
        has seen ``term``, its last round WAIT_TO_VOTE_NEXT, so its next pass (due at once) moves to
        ``term`` and asks for votes."""

        def revote(core: Any, now_ms: int) -> Output:
            elector, out = core.elector, OutputBuilder()
            elector.change_role_to_candidate(term, now_ms, out)
            elector.last_parse_result = ParseResult.WAIT_TO_VOTE_NEXT
            elector.next_time_to_request_vote = -1
            elector.last_pass_ms = None
            return core.finish_input(out, now_ms)

        self.runtime.call(node_id, revote)


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
    from rocketlab.store import Message

    msg = Message(topic=topic, body=body, queue_id=queue_id, tags=tags, keys=keys, properties=properties or {})
    return _call_leader_and_wait(cluster, lambda core, now: core.put_message(msg, now),
                                 "no master is up to take the put",
                                 lambda core: core.config.ha.slave_timeout + 1000, wait, via)


def _controller_mode_put(cluster: Cluster, body: bytes, topic: str, *, queue_id: int = 0, wait: bool = True,
                         via: str | None = None, **_: Any) -> Any:
    """Put through the master broker (the one whose role is MASTER with the highest epoch)."""
    from rocketlab.store import Message

    msg = Message(topic=topic, body=body, queue_id=queue_id)
    return _call_leader_and_wait(cluster, lambda core, now: core.put_message(msg, now),
                                 "no master broker is up to take the put",
                                 lambda core: core.config.ha.slave_timeout + 1000, wait, via)


def _controller_mode_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """Read a queue from the master broker; with none, from the live broker with the lowest brokerId (a
    fenced broker answers PULL_RETRY_IMMEDIATELY)."""
    from rocketlab.broker.protocol import PullMessageRequest

    master = cluster.leader()
    brokers = sorted((cluster.node(n).broker_id or 0, n) for n in cluster.live_nodes()
                     if n in (cluster.leader_candidates or ()))
    if master is None and not brokers:
        raise RocketlabError("no broker of the group is up")
    node = master if master is not None else brokers[0][1]
    return cluster.node(node).pull_message(PullMessageRequest(topic, queue_id, offset, max_msg_nums))


def _broker_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """``findBrokerAddressInSubscribe``: brokerId 0 if it is up, else the next live broker id."""
    from rocketlab.broker.protocol import PullMessageRequest

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
    from rocketlab.store import Message

    msg = Message(topic=topic, body=body, queue_id=queue_id, tags=tags, keys=keys, properties=properties or {})
    return _call_leader_and_wait(
        cluster, lambda core, now: core.put_message(msg, now),
        "no master is up to take the put: run until one is (c.run_until(lambda c: c.leader()))",
        lambda core: core.config.put_timeout_ms + 1, wait, via)


def _dledger_broker_pull(cluster: Cluster, topic: str, queue_id: int, offset: int, max_msg_nums: int) -> Any:
    """Read a queue from the master; with no master up, from the live broker with the lowest brokerId
    (which answers only with slaveReadEnable)."""
    from rocketlab.broker.protocol import PullMessageRequest

    live = sorted((cluster.node(n).broker_id, n) for n in cluster.live_nodes())
    if not live:
        raise RocketlabError("no broker of the group is up")
    return cluster.node(live[0][1]).pull_message(PullMessageRequest(topic, queue_id, offset, max_msg_nums))
