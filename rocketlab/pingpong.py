"""PingPong: the smallest protocol that exercises every runtime feature (the smoke scenario's nodes).

Each node, as a sans-IO core:

* every ``heartbeat_interval_ms`` sends a one-way ``Heartbeat`` to every peer and counts those it gets;
* every ``ping_interval_ms`` sends a ``Ping`` request to every peer and counts the ``Pong`` replies and
  the failures (lost, peer down, timeout), tracing a ``ping`` event with the round-trip time;
* with ``stream_frames`` > 0, keeps a byte stream open to the next peer in the ring and writes that
  many length-prefixed frames per heartbeat; the receiver parses frames out of whatever split or merged
  chunks arrive and checks that each stream's counters run 0, 1, 2, ... (``frame_errors`` counts breaks).

It is not a RocketMQ component; it proves the simulator, the TCP runtime, the trace and the analyses.
"""

from __future__ import annotations

import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from rocketlab.core import (
    EMPTY,
    BaseCore,
    Connect,
    NodeContext,
    NodeSpec,
    Output,
    OutputBuilder,
    StreamClose,
    StreamWrite,
)
from rocketlab.errors import CodecError, ConfigError
from rocketlab.properties import int_property
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand, encode_command
from rocketlab.remoting.family import Family, Parts


@dataclass(frozen=True, slots=True)
class Heartbeat:
    seq: int


@dataclass(frozen=True, slots=True)
class Ping:
    seq: int
    sent_ms: int


@dataclass(frozen=True, slots=True)
class Pong:
    seq: int
    sent_ms: int


FRAME = struct.Struct(">IQ")  # frame length (always 8), then the stream counter

PING_CODES = {Heartbeat: 60001, Ping: 60002}
"""Kit request codes (RocketMQ's and DLedger's stay below 60000): a oneway ``Heartbeat``, a ``Ping``
request; a ``Pong`` is a response (code 0). The fields travel as ext fields, as a RocketMQ header's do."""


class PingPongFamily(Family):
    """PingPong's messages on RocketMQ remoting (see :data:`PING_CODES`)."""

    name = "pingpong"
    requests = dict(PING_CODES)
    oneways = frozenset({Heartbeat})
    responses = frozenset({Pong})
    codes = frozenset(PING_CODES.values())

    def encode(self, msg: Any) -> Parts:
        if type(msg) is Heartbeat:
            return Parts(PING_CODES[Heartbeat], None, {"seq": str(msg.seq)}, None)
        if type(msg) is Ping:
            return Parts(PING_CODES[Ping], None, {"sentMs": str(msg.sent_ms), "seq": str(msg.seq)}, None)
        return Parts(0, None, {"sentMs": str(msg.sent_ms), "seq": str(msg.seq)}, None)

    def decode_request(self, cmd: RemotingCommand) -> Any:
        if cmd.code == PING_CODES[Heartbeat]:
            return Heartbeat(_field(cmd, "seq"))
        return Ping(_field(cmd, "seq"), _field(cmd, "sentMs"))

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        if cmd.code != 0:
            raise CodecError(f"Pong: response code {cmd.code} ({cmd.remark})")
        return Pong(_field(cmd, "seq"), _field(cmd, "sentMs"))

    def wire_size(self, msg: Any) -> int | None:
        t = type(msg)
        if t is Heartbeat:
            return _HEARTBEAT_SIZE + len(str(msg.seq))
        if t is Ping or t is Pong:
            return (_PING_SIZE if t is Ping else _PONG_SIZE) + len(str(msg.seq)) + len(str(msg.sent_ms))
        return None


def _field(cmd: RemotingCommand, name: str) -> int:
    value = cmd.field(name)
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise CodecError(f"pingpong code {cmd.code}: ext field {name} is {value!r}, not a number") from None


PINGPONG_FAMILY = PingPongFamily()
_HEARTBEAT_SIZE = len(encode_command(RemotingCommand(PING_CODES[Heartbeat], flag=2, ext_fields={"seq": ""})))
_PING_SIZE = len(encode_command(RemotingCommand(PING_CODES[Ping], ext_fields={"sentMs": "", "seq": ""})))
_PONG_SIZE = len(encode_command(RemotingCommand(0, flag=1, ext_fields={"sentMs": "", "seq": ""})))


class PingPongCodec(RemotingCodec):
    """The remoting codec of a ping/pong node: the ping/pong messages, which it serves."""

    def __init__(self) -> None:
        super().__init__((PINGPONG_FAMILY,))


@dataclass(frozen=True)
class PingPongConfig:
    heartbeat_interval_ms: int = 50
    ping_interval_ms: int = 200
    ping_timeout_ms: int = 500
    stream_frames: int = 0
    trace_pings: bool = True

    def __post_init__(self) -> None:
        for name in ("heartbeat_interval_ms", "ping_interval_ms", "ping_timeout_ms"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.stream_frames < 0:
            raise ConfigError(f"stream_frames must be >= 0, got {self.stream_frames}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PingPongStats:
    heartbeats_sent: int = 0
    heartbeats_received: dict[str, int] = field(default_factory=dict)
    pings_sent: int = 0
    pongs: int = 0
    ping_failures: int = 0
    pings_answered: int = 0
    frames_sent: int = 0
    frames_received: int = 0
    frame_errors: int = 0
    streams_opened: int = 0
    streams_closed: int = 0


class PingPongNode(BaseCore):
    """The smoke core (see module docstring). Not a RocketMQ class."""

    role = "NODE"

    def __init__(self, node_id: str, peers: tuple[str, ...], config: PingPongConfig) -> None:
        self.node_id = node_id
        self.peers = tuple(sorted(p for p in peers if p != node_id))
        self.config = config
        self.stats = PingPongStats()
        self.next_heartbeat_ms = 0
        self.next_ping_ms = 0
        self.seq = 0
        self.request_id = 0
        self.stream_to = self._ring_successor(peers)
        self.out_stream: str | None = None
        self.connecting: str | None = None
        self.out_counter = 0
        self.rx: dict[Any, tuple[bytearray, int]] = {}

    def _ring_successor(self, peers: tuple[str, ...]) -> str | None:
        ring = sorted(peers)
        if len(ring) < 2:
            return None
        return ring[(ring.index(self.node_id) + 1) % len(ring)]

    # --- timers ------------------------------------------------------------------------------
    def on_start(self, now_ms: int) -> Output:
        self.next_heartbeat_ms = now_ms
        self.next_ping_ms = now_ms + self.config.ping_interval_ms
        return self.on_tick(now_ms)

    def next_deadline_ms(self) -> int:
        return min(self.next_heartbeat_ms, self.next_ping_ms)

    def on_tick(self, now_ms: int) -> Output:
        out = OutputBuilder()
        if now_ms >= self.next_heartbeat_ms:
            self.next_heartbeat_ms = now_ms + self.config.heartbeat_interval_ms
            self.seq += 1
            for peer in self.peers:
                out.send(peer, Heartbeat(self.seq))
            self.stats.heartbeats_sent += len(self.peers)
            self._stream_tick(out)
        if now_ms >= self.next_ping_ms:
            self.next_ping_ms = now_ms + self.config.ping_interval_ms
            for peer in self.peers:
                self.request_id += 1
                out.request(peer, Ping(self.request_id, now_ms), self.request_id, self.config.ping_timeout_ms)
            self.stats.pings_sent += len(self.peers)
        return out.build()

    # --- messages ----------------------------------------------------------------------------
    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        received = self.stats.heartbeats_received
        received[src] = received.get(src, 0) + 1
        return EMPTY

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.stats.pings_answered += 1
        out = OutputBuilder()
        out.reply(src, request_id, Pong(msg.seq, msg.sent_ms))
        return out.build()

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        out = OutputBuilder()
        ok = msg is not None
        if ok:
            self.stats.pongs += 1
        else:
            self.stats.ping_failures += 1
        if self.config.trace_pings:
            rtt = float(now_ms - msg.sent_ms) if ok else None
            out.trace("ping", to=src, ping_seq=request_id, ok=ok, rtt_ms=rtt)
        return out.build()

    # --- the stream ring ---------------------------------------------------------------------
    def _stream_tick(self, out: OutputBuilder) -> None:
        if self.stream_to is None or self.config.stream_frames == 0:
            return
        if self.out_stream is None and self.connecting is None:
            self.connecting = f"{self.node_id}->{self.stream_to}#{self.seq}"
            self.out_counter = 0
            out.act(Connect(self.stream_to, self.connecting))
        if self.out_stream is not None:
            frames = b"".join(FRAME.pack(8, self.out_counter + i) for i in range(self.config.stream_frames))
            self.out_counter += self.config.stream_frames
            self.stats.frames_sent += self.config.stream_frames
            out.act(StreamWrite(self.out_stream, frames))

    def on_stream_open(self, stream_id: Any, peer: str, accepted: bool, now_ms: int) -> Output:
        self.stats.streams_opened += 1
        if accepted:
            self.rx[stream_id] = (bytearray(), 0)
        else:
            self.connecting = None
            self.out_stream = stream_id
        return EMPTY

    def on_stream_data(self, stream_id: Any, data: bytes, now_ms: int) -> Output:
        buf, expected = self.rx.get(stream_id, (bytearray(), 0))
        buf += data
        while len(buf) >= FRAME.size:
            length, counter = FRAME.unpack_from(buf)
            if length != 8 or counter != expected:
                self.stats.frame_errors += 1
                self.rx.pop(stream_id, None)
                out = OutputBuilder()
                out.act(StreamClose(stream_id, f"bad frame: length {length}, counter {counter}, "
                                               f"expected {expected}"))
                return out.build()
            del buf[:FRAME.size]
            expected += 1
            self.stats.frames_received += 1
        self.rx[stream_id] = (buf, expected)
        return EMPTY

    def on_stream_closed(self, stream_id: Any, reason: str, now_ms: int) -> Output:
        self.stats.streams_closed += 1
        self.rx.pop(stream_id, None)
        if stream_id == self.out_stream:
            self.out_stream = None
        if stream_id == self.connecting:
            self.connecting = None
        return EMPTY

    def describe(self) -> dict[str, Any]:
        return {"node": self.node_id, **asdict(self.stats)}


def make_pingpong_node(ctx: NodeContext, config: PingPongConfig | None = None) -> PingPongNode:
    """Factory for both runtimes."""
    return PingPongNode(ctx.node_id, ctx.peers, config or PingPongConfig())


def build_pingpong(props: dict[str, str]) -> NodeSpec:
    """``nodeKind=pingpong`` for ``rocketlab node``: keys ``heartbeatIntervalMs`` (50), ``pingIntervalMs``
    (200), ``pingTimeoutMs`` (500), ``streamFrames`` (0)."""
    config = PingPongConfig(
        heartbeat_interval_ms=int_property(props, "heartbeatIntervalMs", 50),
        ping_interval_ms=int_property(props, "pingIntervalMs", 200),
        ping_timeout_ms=int_property(props, "pingTimeoutMs", 500),
        stream_frames=int_property(props, "streamFrames", 0),
    )
    return NodeSpec(lambda ctx: make_pingpong_node(ctx, config), PingPongCodec())

