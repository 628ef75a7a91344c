"""The simulator's byte streams: TCP-like connections for classic HA (rocketlab's own; it stands in for
the sockets of RocketMQ's ``HAConnection`` / ``HAClient``).

Theory of operation
-------------------
Byte streams are TCP-like: ordered and lossless; writes may arrive split or merged; bytes crossing a
partition are held until it heals; a crashed peer's streams are closed (as the kernel does for a
killed process). Simplified: no flow control, no connect timeout beyond the failure delay.

:class:`StreamTransport` is the part of :class:`~rocketlab.sim.runtime.SimRuntime` that does this.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab.core import Connect, Output, StreamClose, StreamWrite
from rocketlab.errors import LocalProtocolError
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.network import NetworkModel
from rocketlab.sim.node import SimNode
from rocketlab.trace.recorder import TraceRecorder


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


class StreamTransport:
    """Connects, writes and closes of byte streams between the nodes of a
    :class:`~rocketlab.sim.runtime.SimRuntime` (see the module docstring); the runtime owns the state
    named below."""

    scheduler: Scheduler
    recorder: TraceRecorder
    model: NetworkModel
    rng: random.Random
    trace_network: bool
    nodes: dict[str, SimNode]
    streams: dict[int, _Stream]
    stream_ends: dict[tuple[str, int, Any], tuple[int, str]]
    stream_seq: int
    connected: Callable[[str, str], bool]
    _after_input: Callable[[SimNode, Output], None]

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
