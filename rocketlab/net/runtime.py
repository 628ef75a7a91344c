"""NetRuntime: hosts one sans-IO core on real TCP sockets with asyncio (one node per process or more).

The same contract as the simulator (``rocketlab.core``): the runtime calls the core's inputs with
``now_ms`` = monotonic wall time in ms, records its trace events, then carries out its actions:

* messages travel as length-prefixed frames (``rocketlab.net.framing``) on connections opened lazily to
  each peer's listening address; a frame tells its source id;
* a request whose reply does not arrive in ``timeout_ms``, or whose peer cannot be reached, or whose
  connection breaks, is answered to the core with ``on_reply(..., None)`` — once;
* byte streams are plain TCP connections to a peer's stream address (``stream_peers`` or a literal
  ``host:port``), accepted on ``stream_listen``;
* a peer that sends garbage is disconnected with a logged reason, never trusted.

Simplified: no TLS, no authentication, no flow control beyond the socket's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import time
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
from rocketlab.errors import CodecError, RemoteProtocolError, RocketlabError
from rocketlab.net.framing import ONEWAY, REPLY, REQUEST, FrameDecoder, encode_frame
from rocketlab.peers import parse_address
from rocketlab.trace.recorder import TraceRecorder

log = logging.getLogger("rocketlab.net")
CONNECT_TIMEOUT_S = 1.0
RECONNECT_COOLDOWN_MS = 100


def now_ms() -> int:
    return int(time.monotonic() * 1000)


@dataclass(eq=False)
class _PeerLink:
    """The outgoing message connection to one peer."""

    node_id: str
    address: tuple[str, int] | None  # None: a client that connected to us; replies go on its connection
    writer: asyncio.StreamWriter | None = None
    connecting: asyncio.Task | None = None
    queue: list[bytes] = field(default_factory=list)
    down_until_ms: int = 0
    outgoing: list[bytes] = field(default_factory=list)
    """Frames written during this turn of the event loop, sent together at its end (one syscall)."""


class NetRuntime:
    """Runs one core: ``await runtime.start()`` then ``await runtime.serve_forever()`` / ``stop()``."""

    def __init__(
        self,
        ctx: NodeContext,
        factory: CoreFactory,
        codec: Codec,
        *,
        listen: tuple[str, int],
        peers: dict[str, tuple[str, int]],
        stream_listen: tuple[str, int] | None = None,
        stream_peers: dict[str, tuple[str, int]] | None = None,
        recorder: TraceRecorder | None = None,
        trace_network: bool = False,
    ) -> None:
        self.ctx = ctx
        self.factory = factory
        self.codec = codec
        self.listen = listen
        self.links = {n: _PeerLink(n, a) for n, a in peers.items() if n != ctx.node_id}
        self.stream_listen = stream_listen
        self.stream_peers = dict(stream_peers or {})
        self.recorder = recorder or TraceRecorder(keep=False)
        self.trace_network = trace_network
        self.core: Core | None = None
        self.pending: dict[int, tuple[str, asyncio.TimerHandle]] = {}
        self.inbound: set[tuple[str, int]] = set()
        self.streams: dict[Any, asyncio.StreamWriter] = {}
        self.servers: list[asyncio.base_events.Server] = []
        self.tasks: set[asyncio.Task] = set()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at: int | None = None
        self.accepted = 0
        self.final_state: dict[str, Any] = {}
        self.stopped = asyncio.Event()
        self._apply_table: dict[type, Callable[[Any], None]] = {
            Send: self._send, Request: self._request, Reply: self._reply, Connect: self._connect,
            StreamWrite: self._stream_write, StreamClose: self._stream_close,
        }

    # --- life cycle --------------------------------------------------------------------------
    async def start(self) -> None:
        self.servers.append(await _serve(self._accept_messages, self.listen))
        if self.stream_listen is not None:
            self.servers.append(await _serve(self._accept_stream, self.stream_listen))
        self.core = self.factory(self.ctx)
        self._input(self.core.on_start)

    async def serve_forever(self) -> None:
        await self.stopped.wait()

    async def stop(self) -> None:
        """Clean shutdown: stop listening, close every connection, stop the core, flush the trace."""
        if self.stopped.is_set():
            return
        for server in self.servers:
            server.close()
        if self.timer is not None:
            self.timer.cancel()
        for _, handle in self.pending.values():
            handle.cancel()
        writers = [link.writer for link in self.links.values() if link.writer] + list(self.streams.values())
        for writer in writers:
            writer.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.core is not None:
            describe = getattr(self.core, "describe", None)
            self.final_state = describe() if describe is not None else {}
            self.core.on_stop()
            self.core = None
        self.recorder.flush()
        self.stopped.set()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- feeding the core --------------------------------------------------------------------
    def _input(self, fn: Callable[..., Output], *args: Any) -> None:
        if self.core is None:
            return
        now = now_ms()
        out = fn(*args, now)
        for tr in out.trace:
            self.recorder.emit(now, self.ctx.node_id, tr.kind, tr.fields)
        for action in out.actions:
            self._apply_table[type(action)](action)
        self._arm_timer()

    def _arm_timer(self) -> None:
        deadline = self.core.next_deadline_ms() if self.core is not None else None
        if deadline == self.timer_at:
            return
        if self.timer is not None:
            self.timer.cancel()
        self.timer_at = deadline
        if deadline is not None:
            delay_s = max(0.0, (deadline - now_ms()) / 1000)
            self.timer = asyncio.get_running_loop().call_later(delay_s, self._on_timer)

    def _on_timer(self) -> None:
        self.timer, self.timer_at = None, None
        if self.core is not None:
            self._input(self.core.on_tick)

    # --- messages out ------------------------------------------------------------------------
    def _link(self, node_id: str) -> _PeerLink:
        link = self.links.get(node_id)
        if link is None:
            raise RocketlabError(f"{self.ctx.node_id} sent to {node_id!r}, which is not in its peers")
        return link

    def _trace_msg(self, kind: str, src: str, dst: str, msg: Any, channel: str, size: int) -> None:
        if self.trace_network:
            self.recorder.emit(now_ms(), self.ctx.node_id, kind,
                               {"src": src, "dst": dst, "msg": type(msg).__name__, "channel": channel,
                                "msg_id": 0, "bytes": size})

    def _send(self, action: Send) -> None:
        body = self.codec.encode(action.msg)
        self._trace_msg("msg_send", self.ctx.node_id, action.to, action.msg, "oneway", len(body))
        self._enqueue(self._link(action.to), encode_frame(ONEWAY, 0, self.ctx.node_id, body))

    def _request(self, action: Request) -> None:
        link = self._link(action.to)
        body = self.codec.encode(action.msg)
        self._trace_msg("msg_send", self.ctx.node_id, action.to, action.msg, "request", len(body))
        handle = asyncio.get_running_loop().call_later(action.timeout_ms / 1000, self._resolve,
                                                       action.request_id, None, action.to)
        self.pending[action.request_id] = (action.to, handle)
        self._enqueue(link, encode_frame(REQUEST, action.request_id, self.ctx.node_id, body))

    def _reply(self, action: Reply) -> None:
        if (action.to, action.request_id) not in self.inbound:
            raise RocketlabError(f"reply to request {action.request_id} of {action.to}, never received")
        self.inbound.discard((action.to, action.request_id))
        body = self.codec.encode(action.msg)
        self._trace_msg("msg_send", self.ctx.node_id, action.to, action.msg, "reply", len(body))
        self._enqueue(self._link(action.to), encode_frame(REPLY, action.request_id, self.ctx.node_id, body))

    def _resolve(self, request_id: int, msg: Any, src: str) -> None:
        entry = self.pending.pop(request_id, None)
        if entry is None:
            return
        entry[1].cancel()
        if self.core is not None:
            self._input(self.core.on_reply, src, request_id, msg)

    def _fail_requests_to(self, node_id: str) -> None:
        for request_id in [r for r, (dst, _) in self.pending.items() if dst == node_id]:
            self._resolve(request_id, None, node_id)

    def _enqueue(self, link: _PeerLink, frame: bytes) -> None:
        if link.writer is not None and not link.writer.is_closing():
            if not link.outgoing:
                asyncio.get_running_loop().call_soon(self._flush_link, link)
            link.outgoing.append(frame)
            return
        if link.address is None:  # a client that has gone away
            return
        if now_ms() < link.down_until_ms:  # peer just refused us: fail fast, as labrpc does
            self._spawn_failure(link)
            return
        link.queue.append(frame)
        if link.connecting is None:
            link.connecting = asyncio.get_running_loop().create_task(self._open_link(link))

    @staticmethod
    def _flush_link(link: _PeerLink) -> None:
        """Write the frames of this loop turn in one go, like Netty's flush after a batch of writes (a
        connection lost meanwhile loses them, as it would lose them in the socket's buffer)."""
        frames, link.outgoing, writer = link.outgoing, [], link.writer
        if writer is not None and not writer.is_closing():
            writer.write(frames[0] if len(frames) == 1 else b"".join(frames))

    def _spawn_failure(self, link: _PeerLink) -> None:
        asyncio.get_running_loop().call_soon(self._fail_requests_to, link.node_id)

    async def _open_link(self, link: _PeerLink) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*link.address),
                                                    CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as e:
            log.info("%s: cannot reach %s at %s:%d: %s", self.ctx.node_id, link.node_id, *link.address, e)
            link.connecting, link.queue = None, []
            link.down_until_ms = now_ms() + RECONNECT_COOLDOWN_MS
            self._fail_requests_to(link.node_id)
            return
        _nodelay(writer)
        link.writer, link.connecting = writer, None
        queued, link.queue = link.queue, []
        for frame in queued:
            writer.write(frame)
        self._spawn(self._watch_link(link, reader, writer))

    async def _watch_link(self, link: _PeerLink, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        """Our outgoing connections carry no inbound data; wait for the peer to close or die."""
        try:
            while await reader.read(65536):
                pass
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            if link.writer is writer:
                link.writer = None
                writer.close()
                self._fail_requests_to(link.node_id)

    # --- messages in -------------------------------------------------------------------------
    async def _accept_messages(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _nodelay(writer)
        decoder = FrameDecoder()
        peer = _peername(writer)
        clients: list[str] = []
        try:
            while data := await reader.read(65536):
                decoder.receive_data(data)
                while (frame := decoder.next_frame()) is not None:
                    self._on_frame(frame, writer, clients)
        except (RemoteProtocolError, CodecError) as e:
            log.warning("%s: closing connection from %s: %s", self.ctx.node_id, peer, e)
            self.recorder.emit(now_ms(), self.ctx.node_id, "msg_drop",
                               {"src": peer, "dst": self.ctx.node_id, "msg": "?", "channel": "frame",
                                "msg_id": 0, "reason": f"protocol error: {e}"})
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            for client in clients:
                if self.links.get(client) is not None and self.links[client].writer is writer:
                    del self.links[client]

    def _on_frame(self, frame: Any, writer: asyncio.StreamWriter, clients: list[str]) -> None:
        if frame.src not in self.links or (frame.src in clients and self.links[frame.src].writer is not writer):
            if frame.kind == REPLY or frame.src == self.ctx.node_id:
                raise RemoteProtocolError(f"reply from unknown node {frame.src!r}")
            # a client (not a peer): it talks and listens on this one connection
            self.links[frame.src] = _PeerLink(frame.src, None, writer=writer)
            clients.append(frame.src)
        msg = self.codec.decode(frame.body)
        if self.core is None:
            return
        channel = {ONEWAY: "oneway", REQUEST: "request", REPLY: "reply"}[frame.kind]
        self._trace_msg("msg_recv", frame.src, self.ctx.node_id, msg, channel, len(frame.body))
        if frame.kind == ONEWAY:
            self._input(self.core.on_message, frame.src, msg)
        elif frame.kind == REQUEST:
            self.inbound.add((frame.src, frame.request_id))
            self._input(self.core.on_request, frame.src, frame.request_id, msg)
        else:
            self._resolve(frame.request_id, msg, frame.src)

    # --- byte streams ------------------------------------------------------------------------
    def _stream_address(self, to: str) -> tuple[str, int]:
        if to in self.stream_peers:
            return self.stream_peers[to]
        return parse_address(to, "stream address")

    def _connect(self, action: Connect) -> None:
        self._spawn(self._open_stream(action.stream_id, action.to))

    async def _open_stream(self, stream_id: Any, to: str) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*self._stream_address(to)),
                                                    CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError, RocketlabError) as e:
            if self.core is not None:
                self._input(self.core.on_stream_closed, stream_id, f"connect failed: {e}")
            return
        _nodelay(writer)
        self.streams[stream_id] = writer
        self._input(self.core.on_stream_open, stream_id, to, False)
        await self._read_stream(stream_id, reader, writer)

    async def _accept_stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _nodelay(writer)
        self.accepted += 1
        peer = _peername(writer)
        stream_id = f"{peer}#{self.accepted}"
        self.streams[stream_id] = writer
        self._input(self.core.on_stream_open, stream_id, peer, True)
        await self._read_stream(stream_id, reader, writer)

    async def _read_stream(self, stream_id: Any, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> None:
        reason = "closed by peer"
        try:
            while data := await reader.read(256 * 1024):
                if self.streams.get(stream_id) is not writer:
                    return  # we closed it ourselves
                self._input(self.core.on_stream_data, stream_id, data)
        except OSError as e:
            reason = f"connection error: {e}"
        except asyncio.CancelledError:
            return
        if self.streams.pop(stream_id, None) is writer:
            writer.close()
            self._input(self.core.on_stream_closed, stream_id, reason)

    def _stream_write(self, action: StreamWrite) -> None:
        writer = self.streams.get(action.stream_id)
        if writer is not None and not writer.is_closing():
            writer.write(action.data)

    def _stream_close(self, action: StreamClose) -> None:
        writer = self.streams.pop(action.stream_id, None)
        if writer is not None:
            if action.reason:
                log.info("%s: closing stream %s: %s", self.ctx.node_id, action.stream_id, action.reason)
            writer.close()


async def _serve(handler: Any, address: tuple[str, int]) -> asyncio.base_events.Server:
    try:
        return await asyncio.start_server(handler, *address)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise RocketlabError(f"port {address[0]}:{address[1]} is already in use") from None
        raise RocketlabError(f"cannot listen on {address[0]}:{address[1]}: {e.strerror}") from None


def _nodelay(writer: asyncio.StreamWriter) -> None:
    import socket

    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _peername(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if peer else "?"
