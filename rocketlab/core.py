"""The contract between sans-IO protocol cores and the two runtimes that drive them.

Theory of operation
-------------------
A *core* (an elector, an entry pusher, an HA connection, the smoke ping/pong node, ...) is a plain
object. It never opens a socket, starts a thread, sleeps or reads a clock: every input arrives as a
method call carrying ``now_ms`` and every effect leaves as an :class:`Output`, a frozen bundle of
*actions* (messages to send, byte-stream operations) and *trace* events. After every input the runtime
asks :meth:`Core.next_deadline_ms` and calls :meth:`Core.on_tick` no earlier than that time.

Two channel kinds exist:

* **messages** (``Send`` one-way, ``Request``/``Reply`` with a request id). The runtime encodes every
  message with the node's :class:`Codec` at the network boundary, so nodes never share objects. A request
  whose reply does not come back in ``timeout_ms`` (dropped, peer dead, partition) is answered to the
  caller with ``on_reply(..., msg=None)``: exactly one ``on_reply`` per ``Request``.
* **byte streams** (``Connect``/``StreamWrite``/``StreamClose``), TCP-like: ordered, but reads may split
  or merge what was written. Used by classic HA.

Connections: messages between two nodes travel on a connection (Netty's channel in Java). When the
process at the other end dies, the kernel closes its sockets and the node is told at once with
``on_peer_closed(peer, now_ms)`` (Java: ``ChannelEventListener.onChannelClose``); a runtime delivers it
to every live node that exchanged a message with the dead process. A host that fails or goes silent (power
loss, a cut cable) closes nothing: its peers learn only from their own timeouts.

Ordering contract: a core that persists state (a vote, an entry) does so synchronously inside the input
call, before it returns the messages that depend on it, so "persist before send" holds in both runtimes.

The sim runtime (``rocketlab.sim``) and the TCP runtime (``rocketlab.net``) both implement this contract.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

StreamId = Hashable


@dataclass(frozen=True, slots=True)
class Send:
    """A one-way message to node ``to``."""

    to: str
    msg: Any


@dataclass(frozen=True, slots=True)
class Request:
    """A request to ``to``; the caller later gets exactly one ``on_reply`` for ``request_id``."""

    to: str
    msg: Any
    request_id: int
    timeout_ms: int = 3000


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a request received through ``on_request``."""

    to: str
    request_id: int
    msg: Any


@dataclass(frozen=True, slots=True)
class Connect:
    """Open a byte stream to ``to``; the core picks ``stream_id`` (unique among its own streams)."""

    to: str
    stream_id: StreamId


@dataclass(frozen=True, slots=True)
class StreamWrite:
    """Append ``data`` to an open stream."""

    stream_id: StreamId
    data: bytes


@dataclass(frozen=True, slots=True)
class StreamClose:
    """Close a stream; the peer is told with ``on_stream_closed``. ``reason`` is logged/traced."""

    stream_id: StreamId
    reason: str = ""


Action = Send | Request | Reply | Connect | StreamWrite | StreamClose


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace event without its envelope; the runtime adds ``t``, ``seq`` and ``node``."""

    kind: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Output:
    """What a core wants done after one input: actions in order, then trace events."""

    actions: tuple[Action, ...] = ()
    trace: tuple[Trace, ...] = ()

    def __add__(self, other: Output) -> Output:
        if not other.actions and not other.trace:
            return self
        if not self.actions and not self.trace:
            return other
        return Output(self.actions + other.actions, self.trace + other.trace)

    def __bool__(self) -> bool:
        return bool(self.actions or self.trace)


EMPTY = Output()


def trace(kind: str, **fields: Any) -> Trace:
    """Shorthand for ``Trace(kind, fields)``."""
    return Trace(kind, fields)


class OutputBuilder:
    """Collects actions and trace events while a core handles one input; ``build()`` freezes them."""

    __slots__ = ("actions", "events")

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self.events: list[Trace] = []

    def send(self, to: str, msg: Any) -> None:
        self.actions.append(Send(to, msg))

    def request(self, to: str, msg: Any, request_id: int, timeout_ms: int = 3000) -> None:
        self.actions.append(Request(to, msg, request_id, timeout_ms))

    def reply(self, to: str, request_id: int, msg: Any) -> None:
        self.actions.append(Reply(to, request_id, msg))

    def act(self, action: Action) -> None:
        self.actions.append(action)

    def trace(self, kind: str, **fields: Any) -> None:
        self.events.append(Trace(kind, fields))

    def extend(self, out: Output) -> None:
        self.actions.extend(out.actions)
        self.events.extend(out.trace)

    def build(self) -> Output:
        if not self.actions and not self.events:
            return EMPTY
        return Output(tuple(self.actions), tuple(self.events))


class Codec(Protocol):
    """Turns a node's messages into bytes and back; decode raises ``CodecError`` on bad bytes. The
    kit's one codec is :class:`rocketlab.remoting.codec.RemotingCodec` (RocketMQ remoting frames): a
    response names no type, so decoding one takes ``answers``, the request it answers (or its class
    or class name)."""

    def encode(self, msg: Any) -> bytes: ...

    def decode(self, data: bytes, answers: Any = None) -> Any: ...


class Core(Protocol):
    """The inputs every runtime may deliver. :class:`BaseCore` gives do-nothing defaults."""

    def on_start(self, now_ms: int) -> Output: ...

    def on_tick(self, now_ms: int) -> Output: ...

    def next_deadline_ms(self) -> int | None: ...

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output: ...

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output: ...

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output: ...

    def on_stream_open(self, stream_id: StreamId, peer: str, accepted: bool, now_ms: int) -> Output: ...

    def on_stream_data(self, stream_id: StreamId, data: bytes, now_ms: int) -> Output: ...

    def on_stream_closed(self, stream_id: StreamId, reason: str, now_ms: int) -> Output: ...

    def on_peer_closed(self, peer: str, now_ms: int) -> Output: ...

    def on_stop(self) -> None: ...

    def on_crash(self, lose_unflushed: bool) -> None: ...


class BaseCore:
    """Default input handlers: a core overrides the ones its protocol uses; the rest are no-ops.

    ``on_stop`` is called on a clean shutdown (flush and close). ``on_crash`` is called on a simulated
    crash (the object is then discarded): it releases handles and must not flush anything a crash would
    not have flushed; its default falls back to ``on_stop``, which suits cores without storage.
    """

    def on_start(self, now_ms: int) -> Output:
        return EMPTY

    def on_tick(self, now_ms: int) -> Output:
        return EMPTY

    def next_deadline_ms(self) -> int | None:
        return None

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        return EMPTY

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        return EMPTY

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        return EMPTY

    def on_stream_open(self, stream_id: StreamId, peer: str, accepted: bool, now_ms: int) -> Output:
        return EMPTY

    def on_stream_data(self, stream_id: StreamId, data: bytes, now_ms: int) -> Output:
        return EMPTY

    def on_stream_closed(self, stream_id: StreamId, reason: str, now_ms: int) -> Output:
        return EMPTY

    def on_peer_closed(self, peer: str, now_ms: int) -> Output:
        """The message connection with ``peer`` closed: its process died (see the module docstring)."""
        return EMPTY

    def on_stop(self) -> None:
        return None

    def on_crash(self, lose_unflushed: bool) -> None:
        """A simulated crash: drop volatile state. ``lose_unflushed`` asks the core's storage to forget
        what was written but not yet flushed (power loss); the default only releases handles."""
        self.on_stop()


def derive_rng(seed: int, *path: str) -> random.Random:
    """An independent, process-stable random stream for one component: ``derive_rng(7, "n1", "elector")``.

    ``random.Random`` seeds a string from its bytes and their SHA-512, never from ``hash()``, so the
    stream is the same in every process and Python run.
    """
    return random.Random("/".join([str(seed), *path]))


@dataclass
class NodeContext:
    """What a runtime hands a core factory: identity, peers, a private data directory, seeded RNGs."""

    node_id: str
    peers: tuple[str, ...]
    seed: int
    data_dir: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    threads: bool = False
    """True in the TCP runtime: a core may run disk work (fsync) on threads of its own, as the Java
    services do. The simulator leaves it False, so every run stays deterministic."""

    def rng(self, component: str) -> random.Random:
        return derive_rng(self.seed, self.node_id, component)


CoreFactory = Callable[[NodeContext], Core]


@dataclass
class NodeSpec:
    """What a node kind of ``rocketlab node`` builds from its properties: the core factory, its codec, and
    the port for byte streams if the kind listens for them (a master's haListenPort). Kinds register in
    :data:`rocketlab.net.node.NODE_KINDS`, each built by the core package that owns the kind."""

    factory: CoreFactory
    codec: Codec
    stream_listen_port: int = 0

