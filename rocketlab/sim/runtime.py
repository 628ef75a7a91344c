"""SimRuntime: hosts sans-IO cores on the virtual clock and moves their messages and byte streams.

Theory of operation
-------------------
Each node is a :class:`SimNode` holding a core built by its factory. An input to a core (message,
request, reply, tick, stream event) returns an :class:`~rocketlab.core.Output`; the runtime records the
output's trace events, then carries out its actions in order, then re-arms the node's tick at
``core.next_deadline_ms()``.

Messages and the codec (``serialize``): with ``"always"`` every message is encoded by the sender's codec
and decoded by the receiver's, as on a wire. With ``"sampled"`` (the default) a message whose codec can
size it without encoding (``codec.wire_size(msg)``, e.g. DLedger's frozen messages) travels as the
object itself, and one in :data:`SAMPLE_EVERY` (by message id, so deterministic) still goes through
encode and decode, checked to give back an equal message of exactly that size; messages a codec cannot
size (or whose codec has no ``wire_size``) are always serialised. ``"never"`` skips the sample. The
trace is the same in every mode (a message's ``bytes`` is its encoded size either way); the mode only
trades the codec's cost for speed (a third of a DLedger run's time before this switch).

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

Requests always resolve exactly once at the caller: with the reply, or with ``None`` on loss, on a dead
or unreachable peer (after labrpc's failure delay), or at the request's timeout.

Byte streams are TCP-like: ordered and lossless; writes may arrive split or merged; bytes crossing a
partition are held until it heals; a crashed peer's streams are closed (as the kernel does for a
killed process). Simplified: no flow control, no connect timeout beyond the failure delay.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
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
from rocketlab.sim.network import NetworkModel
from rocketlab.trace.recorder import TraceRecorder


@dataclass(eq=False)
class SimNode:
    """One simulated process: its factory, context, codec and (while alive) its core."""

    node_id: str
    factory: CoreFactory
    ctx: NodeContext
    codec: Codec
    core: Core | None = None
    alive: bool = False
    paused: bool = False
    incarnation: int = 0
    tick_at: int | None = None
    tick_gen: int = 0
    last_tick_ms: int = -1
    deferred: list[tuple[Callable[..., None], tuple[Any, ...]]] = field(default_factory=list)
    accepted: int = 0
    sizer: Callable[[Any], int | None] | None = None  # codec.wire_size, if the codec has one
    silent: bool = False
    """Down by a host failure (no connection of it closed) rather than a process crash."""
    links: set[str] = field(default_factory=set)
    """Peers this incarnation has a message connection with (a message left for the other, either way)."""


def _replies_need_request(codec: Codec) -> bool:
    """A RemotingCodec reads a response as the answer to its request (``decode(data, answers)``)."""
    return getattr(codec, "decodes_replies", False)


SERIALIZE_MODES = ("always", "sampled", "never")
SAMPLE_EVERY = 64
HOST_DOWN = "host down"
"""Why a message to a host that went down (:meth:`SimRuntime.host_down`) was lost."""
"""Under ``serialize="sampled"``, message ids divisible by this go through encode and decode."""


class _Carried:
    """A message travelling unserialised, with the size its encoding would have."""

    __slots__ = ("msg", "size")

    def __init__(self, msg: Any, size: int) -> None:
        self.msg, self.size = msg, size


@dataclass(eq=False)
class DropRule:
    """Drop the next ``count`` messages matching src/dst/message type and, for responses, the name of
    their ``code`` (None matches anything)."""

    src: str | None
    dst: str | None
    msg: str | None
    count: int = 1
    code: str | None = None

    def matches(self, src: str, dst: str, msg_name: str, msg: Any = None) -> bool:
        if self.code is not None and getattr(getattr(msg, "code", None), "name", None) != self.code:
            return False
        return ((self.src is None or self.src == src) and (self.dst is None or self.dst == dst)
                and (self.msg is None or self.msg == msg_name))


@dataclass(eq=False)
class _Pending:
    dst: str
    msg: str
    timeout_at: int


@dataclass(eq=False)
class _Half:
    """One direction of a stream: where bytes go, what is held by a partition, arrival order."""

    node: str
    incarnation: int
    stream_id: Any
    last_arrival: int = 0
    held: list[tuple[bytes | None, str]] = field(default_factory=list)
    rx: bytearray = field(default_factory=bytearray)
    read_scheduled: bool = False
    closed: bool = False


@dataclass(eq=False)
class _Stream:
    sid: int
    halves: dict[str, _Half]  # "a" -> initiator's end, "b" -> acceptor's end

    def other(self, side: str) -> str:
        return "b" if side == "a" else "a"


class SimRuntime:
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
        self.inbound: dict[tuple[str, int, str, int], int] = {}
        self.streams: dict[int, _Stream] = {}
        self.stream_ends: dict[tuple[str, int, Any], tuple[int, str]] = {}
        self.stream_seq = 0
        self.counters = {"sent": 0, "delivered": 0, "dropped": 0}
        self._apply_table: dict[type, Callable[[SimNode, Any], None]] = {
            Send: self._send, Request: self._request, Reply: self._reply, Connect: self._connect,
            StreamWrite: self._stream_write, StreamClose: self._stream_close,
        }

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

    # --- messages ----------------------------------------------------------------------------
    def _new_msg(self, src: SimNode, dst: str, msg: Any, channel: str,
                 answers: str | None = None) -> tuple[int, bytes | _Carried, str]:
        """Number the message and trace its sending; returns what travels: its bytes, or the message
        itself (see ``serialize`` in the module docstring). ``answers``: a reply's request class name
        (a remoting response names no type: the codec reads it as the answer to that request)."""
        if dst not in self.nodes:
            raise LocalProtocolError(f"{src.node_id} sent {type(msg).__name__} to unknown node {dst!r}")
        self.msg_seq += 1
        payload = self._wrap(src, msg, self.msg_seq, answers, check=channel != "reply" or answers is not None)
        size = self._size(payload)
        name = type(msg).__name__
        self.counters["sent"] += 1
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, src.node_id, "msg_send",
                               {"src": src.node_id, "dst": dst, "msg": name, "channel": channel,
                                "msg_id": self.msg_seq, "bytes": size})
        return self.msg_seq, payload, name

    def _wrap(self, src: SimNode, msg: Any, msg_id: int, answers: str | None = None,
              check: bool = True) -> bytes | _Carried:
        codec, sizer = src.codec, src.sizer
        size = sizer(msg) if sizer is not None and self.serialize != "always" else None
        if size is None:
            return codec.encode(msg)
        if check and self.serialize == "sampled" and msg_id % SAMPLE_EVERY == 0:
            data = codec.encode(msg)
            copy = codec.decode(data, answers) if answers is not None and _replies_need_request(codec) \
                else codec.decode(data)
            if len(data) != size or copy != msg:
                raise LocalProtocolError(
                    f"codec check on message {msg_id} ({type(msg).__name__} from {src.node_id}): "
                    + (f"wire_size {size} but {len(data)} bytes encoded" if len(data) != size
                       else "decoding its bytes gives a different message"))
            return _Carried(copy, size)
        return _Carried(msg, size)

    @staticmethod
    def _unwrap(node: SimNode, payload: bytes | _Carried, answers: str | None = None) -> Any:
        if type(payload) is _Carried:
            return payload.msg
        if answers is not None and _replies_need_request(node.codec):
            return node.codec.decode(payload, answers)
        return node.codec.decode(payload)

    @staticmethod
    def _size(payload: bytes | _Carried) -> int:
        return payload.size if type(payload) is _Carried else len(payload)

    def _lost(self, src: str, dst: str, name: str, channel: str, msg_id: int, reason: str) -> None:
        self.counters["dropped"] += 1
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, dst, "msg_drop",
                               {"src": src, "dst": dst, "msg": name, "channel": channel,
                                "msg_id": msg_id, "reason": reason})

    def _gate(self, src: str, dst: str, name: str, msg: Any = None) -> str | None:
        """Why a message leaving now cannot go (a drop rule, a partition, a dead peer), or None."""
        for rule in self.drop_rules:
            if rule.matches(src, dst, name, msg):
                rule.count -= 1
                if rule.count <= 0:
                    self.drop_rules.remove(rule)
                return "fault: drop"
        if not self.connected(src, dst):
            return "link cut" if (src, dst) in self.cut_links else "partition"
        if not self.nodes[dst].alive:
            return HOST_DOWN if self.nodes[dst].silent else "peer down"
        if self.drop_filter is not None and self.drop_filter(src, dst, msg):
            return "fault: drop"
        return None

    def _arrival_gate(self, src: str, dst: SimNode, dst_inc: int, msg_id: int) -> str | None:
        if msg_id in self.doomed:
            self.doomed.discard(msg_id)
            return "fault: drop"
        if not dst.alive or dst.incarnation != dst_inc:
            return HOST_DOWN if dst.silent and dst.incarnation == dst_inc else "peer down"
        if not self.connected(src, dst.node_id):
            return "link cut" if (src, dst.node_id) in self.cut_links else "partition"
        return None

    def _received(self, src: str, dst: str, name: str, channel: str, msg_id: int, size: int) -> None:
        self.counters["delivered"] += 1
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, dst, "msg_recv",
                               {"src": src, "dst": dst, "msg": name, "channel": channel,
                                "msg_id": msg_id, "bytes": size})

    def _send(self, node: SimNode, action: Send) -> None:
        msg_id, data, name = self._new_msg(node, action.to, action.msg, "oneway")
        reason = self._gate(node.node_id, action.to, name, action.msg)
        delay = self.model.request_delay(self.rng) if reason is None else None
        if delay is None:
            self._lost(node.node_id, action.to, name, "oneway", msg_id, reason or "loss")
            return
        dst = self.nodes[action.to]
        self._in_flight_until(node.node_id, action.to, delay)
        self.scheduler.after(delay, self._deliver_oneway, node.node_id, dst, dst.incarnation, msg_id,
                             name, data)

    def _deliver_oneway(self, src: str, dst: SimNode, dst_inc: int, msg_id: int, name: str,
                        data: bytes | _Carried) -> None:
        reason = self._arrival_gate(src, dst, dst_inc, msg_id)
        if reason is not None:
            self._lost(src, dst.node_id, name, "oneway", msg_id, reason)
            return
        if dst.paused:
            dst.deferred.append((self._deliver_oneway, (src, dst, dst_inc, msg_id, name, data)))
            return
        self._received(src, dst.node_id, name, "oneway", msg_id, self._size(data))
        msg = self._unwrap(dst, data)
        self._after_input(dst, dst.core.on_message(src, msg, self.scheduler.now_ms))

    def _request(self, node: SimNode, action: Request) -> None:
        src, now = node.node_id, self.scheduler.now_ms
        key = (src, node.incarnation, action.request_id)
        if key in self.pending:
            raise LocalProtocolError(f"{src} reused request id {action.request_id} while it is pending")
        msg_id, data, name = self._new_msg(node, action.to, action.msg, "request")
        self.pending[key] = _Pending(action.to, name, now + action.timeout_ms)
        self.scheduler.at(now + action.timeout_ms, self._resolve, key, None, None)
        reason = self._gate(src, action.to, name, action.msg)
        delay = self.model.request_delay(self.rng) if reason is None else None
        if delay is None:
            self._lost(src, action.to, name, "request", msg_id, reason or "loss")
            if reason != HOST_DOWN:  # a host that is down answers nothing: the request's timeout fails it
                self.scheduler.after(self.model.failure_delay(self.rng), self._resolve, key, None, None)
            return
        dst = self.nodes[action.to]
        self._in_flight_until(src, action.to, delay)
        self.scheduler.after(delay, self._deliver_request, key, dst, dst.incarnation, msg_id, name, data)

    def _deliver_request(self, key: tuple[str, int, int], dst: SimNode, dst_inc: int, msg_id: int,
                         name: str, data: bytes | _Carried) -> None:
        src, src_inc, request_id = key
        reason = self._arrival_gate(src, dst, dst_inc, msg_id)
        if reason is not None:
            self._lost(src, dst.node_id, name, "request", msg_id, reason)
            if reason != HOST_DOWN:
                self.scheduler.after(self.model.failure_delay(self.rng), self._resolve, key, None, None)
            return
        if dst.paused:
            dst.deferred.append((self._deliver_request, (key, dst, dst_inc, msg_id, name, data)))
            return
        self._received(src, dst.node_id, name, "request", msg_id, self._size(data))
        self.inbound[(dst.node_id, dst.incarnation, src, request_id)] = src_inc
        msg = self._unwrap(dst, data)
        self._after_input(dst, dst.core.on_request(src, request_id, msg, self.scheduler.now_ms))

    def _reply(self, node: SimNode, action: Reply) -> None:
        answer = self.client_replies.pop((action.to, action.request_id), None) if self.client_replies else None
        if answer is not None:  # to a driver outside the cluster (client_request): no network in between
            answer(action.msg)
            return
        src = node.node_id
        caller_inc = self.inbound.pop((src, node.incarnation, action.to, action.request_id), None)
        if caller_inc is None:
            raise LocalProtocolError(f"{src} replied to request {action.request_id} of {action.to}, "
                                     "which it never received or already answered")
        key = (action.to, caller_inc, action.request_id)
        pending = self.pending.get(key)
        msg_id, data, name = self._new_msg(node, action.to, action.msg, "reply",
                                           pending.msg if pending is not None else None)
        reason = self._gate(src, action.to, name, action.msg)
        if reason is None and self.nodes[action.to].incarnation != caller_inc:
            reason = "peer down"
        delay = self.model.reply_delay(self.rng) if reason is None else None
        if delay is None:
            self._lost(src, action.to, name, "reply", msg_id, reason or "loss")
            self.scheduler.after(self.model.failure_delay(self.rng), self._resolve, key, None, None)
            return
        self._in_flight_until(src, action.to, delay)
        self.scheduler.after(delay, self._deliver_reply, key, src, msg_id, name, data)

    def _deliver_reply(self, key: tuple[str, int, int], src: str, msg_id: int, name: str,
                       data: bytes | _Carried) -> None:
        caller = self.nodes[key[0]]
        reason = self._arrival_gate(src, caller, key[1], msg_id)
        if reason is not None:
            self._lost(src, caller.node_id, name, "reply", msg_id, reason)
            self.scheduler.after(self.model.failure_delay(self.rng), self._resolve, key, None, None)
            return
        if key not in self.pending:  # already failed by its timeout
            self._lost(src, caller.node_id, name, "reply", msg_id, "late: request timed out")
            return
        self._received(src, caller.node_id, name, "reply", msg_id, self._size(data))
        self._resolve(key, self._unwrap(caller, data, self.pending[key].msg), src)

    def _resolve(self, key: tuple[str, int, int], msg: Any, src: str | None) -> None:
        """Give the caller its one ``on_reply`` (``msg`` None = failed), unless already given."""
        caller = self.nodes[key[0]]
        if caller.paused and caller.alive and caller.incarnation == key[1]:
            caller.deferred.append((self._resolve, (key, msg, src)))
            return
        pending = self.pending.pop(key, None)
        if pending is None or not caller.alive or caller.incarnation != key[1]:
            return
        out = caller.core.on_reply(src or pending.dst, key[2], msg, self.scheduler.now_ms)
        self._after_input(caller, out)

    def _forget_calls(self, node: SimNode) -> None:
        for key in [k for k in self.pending if k[0] == node.node_id]:
            del self.pending[key]
        for key in [k for k in self.inbound if k[0] == node.node_id]:
            del self.inbound[key]

    # --- byte streams ------------------------------------------------------------------------
    def _connect(self, node: SimNode, action: Connect) -> None:
        src, to = node.node_id, action.to
        if to not in self.nodes:
            raise LocalProtocolError(f"{src} connected to unknown node {to!r}")
        if (src, node.incarnation, action.stream_id) in self.stream_ends:
            raise LocalProtocolError(f"{src} reused stream id {action.stream_id!r}")
        dst = self.nodes[to]
        reason = "connect timed out" if not (self.connected(src, to) and self.connected(to, src)) else (
            None if dst.alive else "connect timed out" if dst.silent else "connection refused")
        if reason is not None:
            self.scheduler.after(self.model.failure_delay(self.rng), self._stream_failed, node,
                                 node.incarnation, action.stream_id, reason, to)
            return
        dst.accepted += 1
        self.stream_seq += 1
        delay = self.model.stream_delay(self.rng)
        now = self.scheduler.now_ms
        a = _Half(src, node.incarnation, action.stream_id, last_arrival=now + 2 * delay)
        b = _Half(to, dst.incarnation, f"{src}#{dst.accepted}", last_arrival=now + delay)
        stream = _Stream(self.stream_seq, {"a": a, "b": b})
        self.streams[stream.sid] = stream
        self.stream_ends[(src, a.incarnation, a.stream_id)] = (stream.sid, "a")
        self.stream_ends[(to, b.incarnation, b.stream_id)] = (stream.sid, "b")
        self.scheduler.at(now + delay, self._stream_opened, stream, "b", src)
        self.scheduler.at(now + 2 * delay, self._stream_opened, stream, "a", to)

    def _stream_failed(self, node: SimNode, incarnation: int, stream_id: Any, reason: str, to: str) -> None:
        if node.alive and node.incarnation == incarnation:
            if self.trace_network:
                self.recorder.emit(self.scheduler.now_ms, node.node_id, "stream_close",
                                   {"src": to, "dst": node.node_id, "reason": reason})
            self._after_input(node, node.core.on_stream_closed(stream_id, reason, self.scheduler.now_ms))

    def _stream_opened(self, stream: _Stream, side: str, peer: str) -> None:
        half = stream.halves[side]
        node = self.nodes[half.node]
        if half.closed or not node.alive or node.incarnation != half.incarnation:
            return
        if node.paused:
            node.deferred.append((self._stream_opened, (stream, side, peer)))
            return
        if side == "b" and self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, half.node, "stream_open",
                               {"src": peer, "dst": half.node, "channel": "stream"})
        out = node.core.on_stream_open(half.stream_id, peer, side == "b", self.scheduler.now_ms)
        self._after_input(node, out)

    def _stream_of(self, node: SimNode, stream_id: Any) -> tuple[_Stream, str] | None:
        found = self.stream_ends.get((node.node_id, node.incarnation, stream_id))
        if found is None or found[0] not in self.streams:
            return None
        return self.streams[found[0]], found[1]

    def _stream_write(self, node: SimNode, action: StreamWrite) -> None:
        found = self._stream_of(node, action.stream_id)
        if found is None or not action.data:
            return  # writing to a closed stream: the bytes go nowhere, as after a TCP reset
        stream, side = found
        if stream.halves[side].closed:
            return
        self._schedule_arrival(stream, stream.other(side), bytes(action.data), "")

    def _stream_close(self, node: SimNode, action: StreamClose) -> None:
        found = self._stream_of(node, action.stream_id)
        if found is None:
            return
        stream, side = found
        stream.halves[side].closed = True
        self._schedule_arrival(stream, stream.other(side), None, action.reason or "closed by peer")

    # --- connections ---------------------------------------------------------------------------
    def _in_flight_until(self, src: str, dst: str, delay: int) -> None:
        """A message from ``src`` is on its way to ``dst``: the two have a connection now, and a close of it
        comes after this message arrives (TCP: what was sent before the FIN arrives before it)."""
        sender = self.nodes[src]
        if dst not in sender.links:
            sender.links.add(dst)
            self.nodes[dst].links.add(src)
        at = self.scheduler.now_ms + delay
        if at > self.last_arrival.get((src, dst), -1):
            self.last_arrival[(src, dst)] = at

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

    def _close_streams_of(self, node: SimNode, reason: str) -> None:
        for key in [k for k in self.stream_ends if k[0] == node.node_id and k[1] == node.incarnation]:
            found = self._stream_of(node, key[2])
            if found is not None:
                stream, side = found
                stream.halves[side].closed = True
                self._schedule_arrival(stream, stream.other(side), None, reason)

    def _schedule_arrival(self, stream: _Stream, to_side: str, data: bytes | None, reason: str) -> None:
        """Queue bytes (or, with ``data`` None, the close) for ``to_side``, keeping stream order."""
        half = stream.halves[to_side]
        if half.held or not self.connected(stream.halves[stream.other(to_side)].node, half.node):
            half.held.append((data, reason))
            return
        now = self.scheduler.now_ms
        arrival = max(now + self.model.stream_delay(self.rng), half.last_arrival)
        half.last_arrival = arrival
        self.scheduler.at(arrival, self._stream_arrive, stream, to_side, data, reason)

    def _stream_arrive(self, stream: _Stream, side: str, data: bytes | None, reason: str) -> None:
        half = stream.halves[side]
        peer = stream.halves[stream.other(side)].node
        if half.held or not self.connected(peer, half.node):
            half.held.append((data, reason))  # cut while in flight: waits for the heal
            return
        node = self.nodes[half.node]
        if half.closed or not node.alive or node.incarnation != half.incarnation:
            half.closed = True
            self._drop_stream(stream)
            return
        if data is None and node.paused:
            node.deferred.append((self._stream_arrive, (stream, side, data, reason)))
            return
        if data is not None:
            half.rx += data
            if not half.read_scheduled:
                half.read_scheduled = True
                self.scheduler.at(self.scheduler.now_ms, self._stream_read, stream, side)
            return
        self._deliver_rx(stream, side, split=False)  # data before the close
        if not node.alive or node.incarnation != half.incarnation:
            return
        half.closed = True
        self._drop_stream(stream)
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, half.node, "stream_close",
                               {"src": peer, "dst": half.node, "reason": reason})
        self._after_input(node, node.core.on_stream_closed(half.stream_id, reason, self.scheduler.now_ms))

    def _stream_read(self, stream: _Stream, side: str) -> None:
        half = stream.halves[side]
        half.read_scheduled = False
        self._deliver_rx(stream, side, split=True)

    def _deliver_rx(self, stream: _Stream, side: str, split: bool) -> None:
        """Hand buffered bytes to the core: all at once, or (``split``) a random prefix first."""
        half = stream.halves[side]
        node = self.nodes[half.node]
        while half.rx and not half.closed and node.alive and node.incarnation == half.incarnation:
            if node.paused:
                if not half.read_scheduled:
                    half.read_scheduled = True
                    node.deferred.append((self._stream_read, (stream, side)))
                return
            cut = len(half.rx)
            if split and cut > 1 and self.rng.random() < self.model.stream_split:
                cut = self.rng.randint(1, cut - 1)
            chunk = bytes(half.rx[:cut])
            del half.rx[:cut]
            out = node.core.on_stream_data(half.stream_id, chunk, self.scheduler.now_ms)
            self._after_input(node, out)
            if split and half.rx:
                half.read_scheduled = True
                self.scheduler.at(self.scheduler.now_ms, self._stream_read, stream, side)
                return

    def _drop_stream(self, stream: _Stream) -> None:
        if all(h.closed for h in stream.halves.values()):
            self.streams.pop(stream.sid, None)
            for half in stream.halves.values():
                self.stream_ends.pop((half.node, half.incarnation, half.stream_id), None)
