"""Cluster: the facade notebooks, tests and graders drive (the Python API of docs/using.md).

A Cluster owns the virtual clock, the trace recorder, the simulated runtime and the invariant checkers.
It is generic: a protocol plugs in by giving node factories and a codec. The constructors of concrete
systems (``Cluster.pingpong``, ``.dledger``, ``.master_slave``, ``.dledger_brokers``,
``.controller_mode``) are classmethods defined in :mod:`rocketlab.sim.systems`.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rocketlab.core import Codec, CoreFactory, NodeContext
from rocketlab.errors import InvariantViolation, RocketlabError
from rocketlab.sim import applications, systems
from rocketlab.sim.faults import Fault, FaultSchedule
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.messages import DropRule
from rocketlab.sim.network import Latency, NetworkModel
from rocketlab.sim.node import NodeSetup
from rocketlab.sim.runtime import SimRuntime
from rocketlab.sim.systems import TEMPORARY_PREFIX
from rocketlab.trace.recorder import Event, TraceRecorder
from rocketlab.trace.rundir import write_run

LEADER_ROLES = ("LEADER", "MASTER")


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
        per_node: dict[str, NodeSetup] | None = None,
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
        self.on_close: list[Callable[[], None]] = []  # run once by close() (a replay unplugs the learner's code)
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
        self.runtime.host_addresses = bool(per_node)  # a mixed cluster's cores know each other by address
        for node_id in node_ids:
            node_dir = self.data_dir / "nodes" / node_id if self.data_dir is not None else None
            if node_dir is not None:
                node_dir.mkdir(parents=True, exist_ok=True)
            own = (per_node or {}).get(node_id) or NodeSetup()
            ctx = NodeContext(node_id, own.peers or peers, seed, node_dir, {**(options or {}), **own.options})
            self.runtime.add_node(node_id, factory, ctx, own.codec or codec)
        if self.checkers:
            self.recorder.subscribe(self._check)
        for node_id in node_ids:
            self.runtime.boot(node_id)
        for node_id in node_ids:
            self.runtime.kick_off(node_id)

    # --- constructors (rocketlab.sim.systems) -------------------------------------------------
    pingpong = classmethod(_remember_recipe(systems.pingpong))
    dledger = classmethod(_remember_recipe(systems.dledger))
    master_slave = classmethod(_remember_recipe(systems.master_slave))
    dledger_brokers = classmethod(_remember_recipe(systems.dledger_brokers))
    applications = classmethod(_remember_recipe(applications.applications))
    controller_mode = classmethod(_remember_recipe(systems.controller_mode))

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
        """Carry out one fault now: the method its row of :data:`rocketlab.trace.faults.FAULT_KINDS` names."""
        method, args, kwargs = fault.call()
        getattr(self, method)(*args, **kwargs)

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
        """Stop every live node cleanly (closes their files); a temporary data directory is removed; the
        ``on_close`` callbacks run (once)."""
        hooks, self.on_close = self.on_close, []
        for hook in hooks:
            hook()
        for node_id in self.node_ids:
            self.runtime.stop(node_id)
        if self.data_dir is not None and self.data_dir.name.startswith(TEMPORARY_PREFIX):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        ``leader``, as DLedger's ServerTestHarness does with the elector off
        (:func:`rocketlab.sim.systems.force_dledger_role`). A test's hook: no fault event (the member's
        ``role`` event says what happened)."""
        if role not in ("LEADER", "FOLLOWER") or (role == "FOLLOWER") != (leader is not None):
            raise RocketlabError(f"force_role takes LEADER, or FOLLOWER with its leader; got {role} {leader}")
        self.runtime.call(node_id, lambda core, now_ms: systems.force_dledger_role(core, now_ms, role, term, leader))

    @_journaled
    def revote(self, node_id: str, term: int) -> None:
        """DLedger's ``testRevote(term)`` on member ``node_id`` (:func:`rocketlab.sim.systems.dledger_revote`)."""
        self.runtime.call(node_id, lambda core, now_ms: systems.dledger_revote(core, now_ms, term))
