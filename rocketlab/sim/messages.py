"""The simulator's messages: one-way sends, requests and replies between simulated nodes (rocketlab's own;
it stands in for RocketMQ's remoting over TCP).

Theory of operation
-------------------
A message is numbered and traced when it leaves (``msg_send``), checked against the drop rules, the
partition, one-way cuts and the peer's state when it leaves and again when it arrives, then delivered
(``msg_recv``) or lost (``msg_drop`` with the reason) after the network model's delay.

Messages and the codec (``serialize``): with ``"always"`` every message is encoded by the sender's codec
and decoded by the receiver's, as on a wire. With ``"sampled"`` (the default) a message whose codec can
size it without encoding (``codec.wire_size(msg)``, e.g. DLedger's frozen messages) travels as the
object itself when both ends share the codec (nodes of different kinds, a client and a broker, always go
through bytes: their message classes differ), and one in :data:`SAMPLE_EVERY` (by message id, so deterministic) still goes through
encode and decode, checked to give back an equal message of exactly that size; messages a codec cannot
size (or whose codec has no ``wire_size``) are always serialised. ``"never"`` skips the sample. The
trace is the same in every mode (a message's ``bytes`` is its encoded size either way); the mode only
trades the codec's cost for speed (a third of a DLedger run's time before this switch).

Requests always resolve exactly once at the caller: with the reply, or with ``None`` on loss, on a dead
or unreachable peer (after labrpc's failure delay), or at the request's timeout (a host that is down
answers nothing: only the timeout fails a request to it). *drop* removes one message (by id, or the next
one matching a :class:`DropRule`).

:class:`MessageTransport` is the part of :class:`~rocketlab.sim.runtime.SimRuntime` that does this.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketlab.core import Codec, Output, Reply, Request, Send
from rocketlab.errors import LocalProtocolError
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.network import NetworkModel
from rocketlab.sim.node import SimNode
from rocketlab.trace.recorder import TraceRecorder


def _replies_need_request(codec: Codec) -> bool:
    """A RemotingCodec reads a response as the answer to its request (``decode(data, answers)``)."""
    return getattr(codec, "decodes_replies", False)


SERIALIZE_MODES = ("always", "sampled", "never")
SAMPLE_EVERY = 64
"""Under ``serialize="sampled"``, message ids divisible by this go through encode and decode."""
HOST_DOWN = "host down"
"""Why a message to a host that went down (:meth:`SimRuntime.host_down`) was lost."""


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


class MessageTransport:
    """Sends, requests and replies between the nodes of a :class:`~rocketlab.sim.runtime.SimRuntime`
    (see the module docstring); the runtime owns the state named below."""

    scheduler: Scheduler
    recorder: TraceRecorder
    model: NetworkModel
    rng: random.Random
    serialize: str
    trace_network: bool
    nodes: dict[str, SimNode]
    counters: dict[str, int]
    msg_seq: int
    pending: dict[tuple[str, int, int], _Pending]
    inbound: dict[tuple[str, int, str, int], tuple[int, int]]
    wire_ids: int
    drop_rules: list[DropRule]
    doomed: set[int]
    drop_filter: Callable[[str, str, Any], bool] | None
    client_replies: dict[tuple[str, int], Callable[[Any], None]]
    cut_links: set[tuple[str, str]]
    last_arrival: dict[tuple[str, str], int]
    connected: Callable[[str, str], bool]
    _after_input: Callable[[SimNode, Output], None]

    def _new_msg(self, src: SimNode, dst: str, msg: Any, channel: str,
                 answers: str | None = None) -> tuple[int, bytes | _Carried, str]:
        """Number the message and trace its sending; returns what travels: its bytes, or the message
        itself (see ``serialize`` in the module docstring). ``answers``: a reply's request class name
        (a remoting response names no type: the codec reads it as the answer to that request)."""
        if dst not in self.nodes:
            raise LocalProtocolError(f"{src.node_id} sent {type(msg).__name__} to unknown node {dst!r}")
        self.msg_seq += 1
        payload = self._wrap(src, msg, self.msg_seq, answers, check=channel != "reply" or answers is not None,
                             same_codec=self.nodes[dst].codec is src.codec)
        size = self._size(payload)
        name = type(msg).__name__
        self.counters["sent"] += 1
        if self.trace_network:
            self.recorder.emit(self.scheduler.now_ms, src.node_id, "msg_send",
                               {"src": src.node_id, "dst": dst, "msg": name, "channel": channel,
                                "msg_id": self.msg_seq, "bytes": size})
        return self.msg_seq, payload, name

    def _wrap(self, src: SimNode, msg: Any, msg_id: int, answers: str | None = None,
              check: bool = True, same_codec: bool = True) -> bytes | _Carried:
        codec, sizer = src.codec, src.sizer
        size = sizer(msg) if sizer is not None and same_codec and self.serialize != "always" else None
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
        wire_id = request_id
        if (dst.node_id, dst.incarnation, src, wire_id) in self.inbound:  # still held from an earlier process of src
            self.wire_ids += 1
            wire_id = self.wire_ids
        self.inbound[(dst.node_id, dst.incarnation, src, wire_id)] = (src_inc, request_id)
        msg = self._unwrap(dst, data)
        self._after_input(dst, dst.core.on_request(src, wire_id, msg, self.scheduler.now_ms))

    def _reply(self, node: SimNode, action: Reply) -> None:
        answer = self.client_replies.pop((action.to, action.request_id), None) if self.client_replies else None
        if answer is not None:  # to a driver outside the cluster (client_request): no network in between
            answer(action.msg)
            return
        src = node.node_id
        caller = self.inbound.pop((src, node.incarnation, action.to, action.request_id), None)
        if caller is None:
            raise LocalProtocolError(f"{src} replied to request {action.request_id} of {action.to}, "
                                     "which it never received or already answered")
        caller_inc, request_id = caller
        key = (action.to, caller_inc, request_id)
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

