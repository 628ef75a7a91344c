"""SimRuntime: hosts sans-IO cores on the virtual clock and moves their messages and byte streams.

Theory of operation
-------------------
Each node is a :class:`~rocketlab.sim.node.SimNode` holding a core built by its factory. An input to a
core (message, request, reply, tick, stream event) returns an :class:`~rocketlab.core.Output`; the
runtime records the output's trace events, then carries out its actions in order, then re-arms the
node's tick at ``core.next_deadline_ms()``.

The runtime is three parts, one module each: this one (nodes, their lifecycle and faults, connectivity,
outputs and ticks, the connections a dead process's kernel closes), :mod:`rocketlab.sim.messages`
(sends, requests, replies, the ``serialize`` modes) and :mod:`rocketlab.sim.streams` (byte streams).

Faults: a *crash* discards the core (``on_crash``) and everything in flight to it, and closes its
connections: every live node that exchanged a message with it gets ``on_peer_closed`` one stream delay
later, and after every message the dead process sent it (as the kernel closes a killed process's sockets,
a FIN behind the data; a close crossing a partition waits for the heal;
one that reaches a node restarted since is lost with that node's old sockets); a *host down* discards the
core the same way but closes nothing - its peers learn only from their timeouts: messages and stream bytes
to it vanish, a request to it fails at its own timeout; a *restart* builds a new core from the same data
directory (a new incarnation: messages addressed to the old one are lost);
a *pause* defers every input of the node until *resume* (its clock keeps running, so timers fire late);
a *partition* cuts every link between groups, checked when a message is sent and when it arrives;
*drop* removes one message (by id or by the next one matching a rule), or every message a drop
filter (a predicate) names.

Requests always resolve exactly once at the caller (:mod:`rocketlab.sim.messages`); byte streams are
TCP-like (:mod:`rocketlab.sim.streams`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rocketlab.core import (
    Codec,
    Connect,
    Core,
    CoreFactory,
    NodeContext,
    Output,
    Reply,
    Request,
    Send,
    StreamClose,
    StreamWrite,
)
from rocketlab.errors import LocalProtocolError, UnknownNodeError
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.messages import SERIALIZE_MODES, DropRule, MessageTransport, _Pending
from rocketlab.sim.network import NetworkModel
from rocketlab.sim.node import SimNode
from rocketlab.sim.streams import StreamTransport, _Stream
from rocketlab.trace.recorder import TraceRecorder

_ADDRESSED = (Send, Request, Connect)


class SimRuntime(MessageTransport, StreamTransport):
    """Moves messages and bytes between simulated nodes; see the module docstring for the rules."""

    def __init__(self, scheduler: Scheduler, recorder: TraceRecorder, model: NetworkModel, seed: int,
                 trace_network: bool = True, serialize: str = "sampled") -> None:
        if serialize not in SERIALIZE_MODES:
            raise LocalProtocolError(f"serialize must be one of {', '.join(SERIALIZE_MODES)}, got {serialize!r}")
        self.serialize = serialize
        self.scheduler = scheduler
        self.recorder = recorder
        self.model = model
        self.rng = random.Random(f"{seed}/network")
        self.close_rng = random.Random(f"{seed}/peer-closed")  # its own stream: closes move no other draw
        self.held_closes: list[tuple[str, str, int, str]] = []
        self.last_arrival: dict[tuple[str, str], int] = {}  # (src, dst) -> when its last message arrives
        self.trace_network = trace_network
        self.nodes: dict[str, SimNode] = {}
        self.group_of: dict[str, int] | None = None
        self.cut_links: set[tuple[str, str]] = set()
        self.drop_rules: list[DropRule] = []
        self.doomed: set[int] = set()
        self.drop_filter: Callable[[str, str, Any], bool] | None = None
        """Asked about every message that would otherwise leave: True drops it (:meth:`Cluster.drop_if`)."""
        self.client_replies: dict[tuple[str, int], Callable[[Any], None]] = {}
        """Where a core's reply to a driver outside the cluster goes (:meth:`client_request`)."""
        self.client_seq = 0
        self.msg_seq = 0
        self.pending: dict[tuple[str, int, int], _Pending] = {}
        # (callee, its incarnation, caller, id the callee sees) -> (caller's incarnation, caller's own id): a
        # restarted caller numbers its requests afresh; one colliding with a request of its earlier process that
        # the callee still holds (a held pull) is shown to the callee under a fresh id above any core's own
        self.inbound: dict[tuple[str, int, str, int], tuple[int, int]] = {}
        self.wire_ids = 1 << 30
        self.streams: dict[int, _Stream] = {}
        self.stream_ends: dict[tuple[str, int, Any], tuple[int, str]] = {}
        self.stream_seq = 0
        self.counters = {"sent": 0, "delivered": 0, "dropped": 0}
        self.host_addresses = False
        """When True, an address ``host:port`` names the node ``host`` (the simulator's DNS: every node's
        host name is its id), so cores configured with RocketMQ addresses (a broker's ``namesrvAddr``, the
        addresses a name server hands clients) reach their peers."""
        self._apply_table: dict[type, Callable[[SimNode, Any], None]] = {
            Send: self._send, Request: self._request, Reply: self._reply, Connect: self._connect,
            StreamWrite: self._stream_write, StreamClose: self._stream_close,
        }

    def resolve(self, address: str) -> str:
        """The node an address names (see :attr:`host_addresses`); the address itself when none."""
        host = address.rpartition(":")[0]
        return host if host in self.nodes else address

    # --- nodes -------------------------------------------------------------------------------
    def add_node(self, node_id: str, factory: CoreFactory, ctx: NodeContext, codec: Codec) -> None:
        self.nodes[node_id] = SimNode(node_id, factory, ctx, codec, sizer=getattr(codec, "wire_size", None))

    def get(self, node_id: str) -> SimNode:
        try:
            return self.nodes[node_id]
        except KeyError:
            known = ", ".join(self.nodes)
            raise UnknownNodeError(f"unknown node {node_id!r} (this cluster has {known})") from None

    def start(self, node_id: str) -> None:
        """Build the node's core (a new incarnation) and give it ``on_start``."""
        self.boot(node_id)
        self.kick_off(node_id)

    def boot(self, node_id: str) -> None:
        """Build the core and mark the node alive, without input yet (so peers booted together can
        all receive each other's first messages)."""
        node = self.get(node_id)
        node.incarnation += 1
        node.core = node.factory(node.ctx)
        node.alive, node.paused, node.deferred, node.silent = True, False, [], False
        node.links = set()
        node.tick_at, node.last_tick_ms = None, -1

    def kick_off(self, node_id: str) -> None:
        node = self.get(node_id)
        self._after_input(node, node.core.on_start(self.scheduler.now_ms))

    def call(self, node_id: str, fn: Callable[[Any, int], Output]) -> Output:
        """A client's call into a live core (a put, an append): ``fn(core, now_ms)``; its output is applied."""
        node = self.get(node_id)
        if not node.alive or node.paused:
            raise LocalProtocolError(f"node {node_id} is {'paused' if node.paused else 'down'}: it takes no calls")
        out = fn(node.core, self.scheduler.now_ms)
        self._after_input(node, out)
        return out

    def client_request(self, node_id: str, client: str, msg: Any, on_reply: Callable[[Any], None]) -> None:
        """A request from ``client``, a driver outside the cluster (a test, an admin tool), handed to the
        live ``node_id`` at once: no network in between, so no ``msg_*`` events. The core's reply, given
        now or in a later input (an append answered once committed), goes to ``on_reply``."""
        if client in self.nodes:
            raise LocalProtocolError(f"a client outside the cluster cannot be named like node {client!r}")
        self.client_seq += 1
        request_id = self.client_seq
        self.client_replies[(client, request_id)] = on_reply
        try:
            self.call(node_id, lambda core, now_ms: core.on_request(client, request_id, msg, now_ms))
        except LocalProtocolError:
            del self.client_replies[(client, request_id)]
            raise

    def crash(self, node_id: str, lose_unflushed: bool = False) -> None:
        """A process crash: the core is gone and the kernel closes its connections and streams."""
        node = self.get(node_id)
        if not node.alive:
            return
        core = self._kill(node)
        self._close_streams_of(node, "peer crashed")
        self._close_links_of(node, "peer crashed")
        core.on_crash(lose_unflushed)

    def host_down(self, node_id: str, lose_unflushed: bool = True) -> None:
        """A host failure: the core is gone as in a crash, but nothing is closed (see the module docstring)."""
        node = self.get(node_id)
        if not node.alive:
            return
        core = self._kill(node)
        node.silent = True
        for peer in sorted(node.links):
            self.nodes[peer].links.discard(node_id)
        node.links = set()
        core.on_crash(lose_unflushed)

    def _kill(self, node: SimNode) -> Core:
        core = node.core
        node.alive, node.core, node.paused, node.deferred = False, None, False, []
        node.tick_at = None
        node.tick_gen += 1
        self._forget_calls(node)
        return core

    def stop(self, node_id: str) -> None:
        """A clean shutdown (``on_stop``), used when a cluster is closed."""
        node = self.get(node_id)
        if node.alive and node.core is not None:
            node.core.on_stop()
        node.alive, node.core = False, None

    def pause(self, node_id: str) -> None:
        self.get(node_id).paused = True

    def resume(self, node_id: str) -> None:
        node = self.get(node_id)
        node.paused = False
        deferred, node.deferred = node.deferred, []
        for fn, args in deferred:
            fn(*args)

    # --- connectivity ------------------------------------------------------------------------
    def partition(self, groups: list[list[str]]) -> None:
        """Cut all links between groups; nodes not named form one more group together."""
        group_of: dict[str, int] = {}
        for index, group in enumerate(groups):
            for node_id in group:
                self.get(node_id)
                if node_id in group_of:
                    raise LocalProtocolError(f"node {node_id!r} is in two partition groups")
                group_of[node_id] = index
        rest = len(groups)
        for node_id in self.nodes:
            group_of.setdefault(node_id, rest)
        self.group_of = group_of

    def heal(self) -> None:
        """End the partition and every one-way cut; bytes held on cut streams go on their way."""
        self.group_of = None
        self.cut_links.clear()
        self._release_held()

    def cut_link(self, src: str, dst: str) -> None:
        """Cut one direction: what ``src`` sends to ``dst`` is lost (messages) or held (stream bytes)."""
        self.get(src), self.get(dst)
        if src == dst:
            raise LocalProtocolError(f"a link joins two different nodes, got {src} -> {dst}")
        self.cut_links.add((src, dst))

    def heal_link(self, src: str, dst: str) -> None:
        """Heal one direction cut with :meth:`cut_link` (a partition stays as it is)."""
        self.get(src), self.get(dst)
        self.cut_links.discard((src, dst))
        self._release_held()

    def _release_held(self) -> None:
        closes, self.held_closes = self.held_closes, []
        for item in closes:
            self._send_peer_closed(item)
        for stream in list(self.streams.values()):
            for side, half in stream.halves.items():
                if half.held:
                    held, half.held = half.held, []
                    for data, reason in held:
                        self._schedule_arrival(stream, side, data, reason)

    def connected(self, a: str, b: str) -> bool:
        """Whether ``a`` can reach ``b``: the same partition group and no one-way cut from a to b."""
        if self.cut_links and (a, b) in self.cut_links:
            return False
        return self.group_of is None or self.group_of[a] == self.group_of[b]

    # --- applying outputs --------------------------------------------------------------------
    def _after_input(self, node: SimNode, out: Output) -> None:
        now = self.scheduler.now_ms
        if out.trace:
            emit, node_id = self.recorder.emit, node.node_id
            for tr in out.trace:
                emit(now, node_id, tr.kind, tr.fields)
        table = self._apply_table
        for action in out.actions:
            if node.core is None:  # an action crashed the node (an invariant checker may do this)
                return
            if self.host_addresses and type(action) in _ADDRESSED and action.to not in self.nodes:
                action = replace(action, to=self.resolve(action.to))
            table[type(action)](node, action)
        self._arm_tick(node, now)

    def _arm_tick(self, node: SimNode, now: int) -> None:
        core = node.core
        if core is None:
            return
        deadline = core.next_deadline_ms()
        if deadline is None:
            return
        # a deadline at or before the last tick is moved one ms on: the clock's resolution, and a
        # guarantee of progress even for a core whose deadline does not advance
        deadline = max(deadline, now, node.last_tick_ms + 1)
        if deadline == node.tick_at:
            return
        node.tick_at = deadline
        node.tick_gen += 1
        self.scheduler.at(deadline, self._tick, node, node.incarnation, node.tick_gen)

    def _tick(self, node: SimNode, incarnation: int, gen: int) -> None:
        if not node.alive or node.incarnation != incarnation or node.tick_gen != gen:
            return
        if node.paused:
            node.deferred.append((self._tick, (node, incarnation, gen)))
            return
        now = self.scheduler.now_ms
        node.tick_at = None
        node.last_tick_ms = now
        self._after_input(node, node.core.on_tick(now))

    # --- connections ---------------------------------------------------------------------------
    def _close_links_of(self, node: SimNode, reason: str) -> None:
        """The kernel closes a dead process's connections: each peer it had one with is told."""
        for peer in sorted(node.links):
            other = self.nodes[peer]
            other.links.discard(node.node_id)
            if other.alive:
                self._send_peer_closed((node.node_id, peer, other.incarnation, reason))
        node.links = set()

    def _send_peer_closed(self, item: tuple[str, str, int, str]) -> None:
        dead, to = item[0], item[1]
        if not self.connected(dead, to):
            self.held_closes.append(item)  # the close waits for the heal, as a FIN is retransmitted
            return
        at = max(self.scheduler.now_ms + self.model.stream_delay(self.close_rng), self.last_arrival.get((dead, to), -1))
        self.scheduler.at(at, self._peer_closed_arrive, item)

    def _peer_closed_arrive(self, item: tuple[str, str, int, str]) -> None:
        dead, to, incarnation, reason = item
        node = self.nodes[to]
        if not node.alive or node.incarnation != incarnation:
            return  # that node's own sockets died with it
        if not self.connected(dead, to):
            self.held_closes.append(item)
            return
        if node.paused:
            node.deferred.append((self._peer_closed_arrive, (item,)))
            return
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, to, "peer_closed", {"src": dead, "dst": to, "reason": reason})
        handler = getattr(node.core, "on_peer_closed", None)
        if handler is not None:
            self._after_input(node, handler(dead, self.scheduler.now_ms))
