"""NetRuntime: hosts one sans-IO core on real TCP sockets with asyncio (one node per process or more).

The same contract as the simulator (``rocketlab.core``): the runtime calls the core's inputs with
``now_ms`` = monotonic wall time in ms, records its trace events, then carries out its actions. The
wire is RocketMQ remoting, as Netty carries it between Java processes
(``NettyRemotingClient`` / ``NettyRemotingServer``):

* a message to a peer goes on the connection this node opened to the peer's listening address (opened
  lazily, as ``NettyRemotingClient.getAndCreateChannel`` does; a destination that is no peer but a
  ``host:port`` is dialled the same way); a request gets an ``opaque`` of that
  connection and its response comes back on it; a request that arrives is answered on the connection
  it arrived on, whoever opened it - so Java members and clients (``DLedgerClient``,
  ``NettyRemotingClient``) talk to our nodes and ours to theirs; a node's own requests and oneways to a
  client (a broker's NOTIFY_CONSUMER_IDS_CHANGED) go on the connection the client opened, and once that
  connection closed they fail (a request: ``on_reply(..., None)`` at once; a oneway: dropped, logged)
  rather than dial the client's own ephemeral port, as Java's write to a closed channel fails;
* every message is a :class:`~rocketlab.remoting.command.RemotingCommand` made by the node's
  :class:`~rocketlab.remoting.codec.RemotingCodec`; connections are parsed by
  :class:`~rocketlab.remoting.connection.RemotingConnection` (sans-IO);
* who sent a request: the node id its protocol names (DLedger's ``localId``), else the peer this
  connection was opened to, else the connection's remote address (``host:port``): a client, or a Java
  process whose requests name no sender. That name is the ``src`` of ``on_request`` / ``on_message``;
* a request whose response does not arrive in ``timeout_ms``, or whose peer cannot be reached, or whose
  connection breaks, is answered to the core with ``on_reply(..., None)`` - once; so is a response the
  codec cannot read (logged);
* a request of a code the node does not serve is answered REQUEST_CODE_NOT_SUPPORTED, one whose header
  or body cannot be read SYSTEM_ERROR with the reason as remark, as ``NettyRemotingAbstract`` answers;
  garbage on the connection itself (a broken frame, an oversize length, a close mid-frame) closes it
  with a logged reason and nothing after it is trusted;
* when a connection closes (the peer died, or broke it), every pending request on it fails, and the
  core is told ``on_peer_closed(name)`` for each name that talked on it and on no other open connection
  (Java: ``ChannelEventListener.onChannelClose``);
* byte streams are plain TCP connections to a peer's stream address (``stream_peers`` or a literal
  ``host:port``), accepted on ``stream_listen``.

Simplified: no TLS, no authentication, no flow control beyond the socket's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import socket
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
from rocketlab.i18n import _
from rocketlab.peers import parse_address
from rocketlab.remoting.command import RESPONSE_FLAG, RemotingCommand, RemotingSysResponseCode
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection
from rocketlab.remoting.family import UnsupportedRequest
from rocketlab.trace.recorder import TraceRecorder

log = logging.getLogger("rocketlab.net")
CONNECT_TIMEOUT_S = 1.0
RECONNECT_COOLDOWN_MS = 100
GONE_CLIENTS_KEPT = 4096


def now_ms() -> int:
    return int(time.monotonic() * 1000)


@dataclass(eq=False)
class _Conn:
    """One message connection, whichever side opened it."""

    writer: asyncio.StreamWriter
    label: str
    """The remote end, ``host:port``."""
    node_id: str | None = None
    """The peer this node dialled (None: accepted)."""
    proto: RemotingConnection = field(default_factory=RemotingConnection)
    names: set[str] = field(default_factory=set)
    """Every ``src`` that talked on it (and the dialled peer)."""
    pending: dict[int, int] = field(default_factory=dict)
    """opaque -> our request id."""
    outgoing: list[bytes] = field(default_factory=list)
    """Frames written during this turn of the event loop, sent together at its end (one syscall)."""
    closed: bool = False


@dataclass(eq=False)
class _PeerLink:
    """How this node reaches one peer: its address and the connection it opened there."""

    node_id: str
    address: tuple[str, int]
    conn: _Conn | None = None
    connecting: asyncio.Task | None = None
    queue: list[tuple[RemotingCommand, int | None, Any, str]] = field(default_factory=list)
    """(command, request id or None, message, channel) waiting for the connection."""
    down_until_ms: int = 0


@dataclass(eq=False)
class _Pending:
    """One request of ours awaiting its response."""

    to: str
    msg: Any
    timer: asyncio.TimerHandle
    conn: _Conn | None = None
    opaque: int | None = None


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
        self.pending: dict[int, _Pending] = {}
        self.inbound: dict[tuple[str, int], tuple[_Conn, int, Any]] = {}
        self.inbound_ids = itertools.count(1)
        self.conns: set[_Conn] = set()
        self.gone_clients: dict[str, None] = {}
        """Names known only from accepted connections that closed (insertion order: the oldest go first)."""
        self.streams: dict[Any, asyncio.StreamWriter] = {}
        self.servers: list[asyncio.base_events.Server] = []
        self.tasks: set[asyncio.Task] = set()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at: int | None = None
        self.accepted = 0
        self.final_state: dict[str, Any] = {}
        self.stopping = False
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
        if self.stopped.is_set() or self.stopping:
            return
        self.stopping = True
        for server in self.servers:
            server.close()
        if self.timer is not None:
            self.timer.cancel()
        for p in self.pending.values():
            p.timer.cancel()
        for conn in list(self.conns):
            conn.closed = True
            conn.writer.close()
        for writer in self.streams.values():
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
        if out.trace:  # written before the actions go out: a SIGKILL cannot cut an event another node saw
            self.recorder.flush()
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
    def _trace_msg(self, kind: str, src: str, dst: str, msg: Any, channel: str, size: int) -> None:
        if self.trace_network:
            self.recorder.emit(now_ms(), self.ctx.node_id, kind,
                               {"src": src, "dst": dst, "msg": type(msg).__name__, "channel": channel,
                                "msg_id": 0, "bytes": size})

    def _route(self, to: str) -> _PeerLink | _Conn:
        link = self.links.get(to)
        if link is not None:
            return link
        for conn in self.conns:  # a client (not a peer): it listens on the connection it opened
            if to in conn.names and not conn.closed:
                return conn
        if to in self.gone_clients:
            raise RocketlabError(f"{self.ctx.node_id}: the connection of client {to} is closed")
        try:  # a literal address (a Java controller leader's, as its metadata names it)
            address = parse_address(to, "destination")
        except RocketlabError:
            raise RocketlabError(f"{self.ctx.node_id} sent to {to!r}, which is neither a peer, nor connected, "
                                 "nor host:port") from None
        link = self.links[to] = _PeerLink(to, address)
        return link

    def _send(self, action: Send) -> None:
        try:
            route = self._route(action.to)
        except RocketlabError as e:  # Java's invokeOneway to an address it cannot reach: logged, dropped
            log.warning("%s: %s dropped: %s", self.ctx.node_id, type(action.msg).__name__, e)
            return
        self._out(route, self.codec.command(action.msg), None, action.msg, action.to, "oneway")

    def _request(self, action: Request) -> None:
        handle = asyncio.get_running_loop().call_later(action.timeout_ms / 1000, self._time_out, action.request_id)
        self.pending[action.request_id] = _Pending(action.to, action.msg, handle)
        try:
            route = self._route(action.to)
        except RocketlabError as e:  # fails as a request to a peer that cannot be reached
            log.warning("%s: %s to nowhere: %s", self.ctx.node_id, type(action.msg).__name__, e)
            asyncio.get_running_loop().call_soon(self._resolve, action.request_id, None)
            return
        self._out(route, self.codec.command(action.msg), action.request_id, action.msg, action.to, "request")

    def _reply(self, action: Reply) -> None:
        entry = self.inbound.pop((action.to, action.request_id), None)
        if entry is None:
            raise RocketlabError(f"reply to request {action.request_id} of {action.to}, never received")
        conn, opaque, _request = entry
        cmd = self.codec.command(action.msg, opaque)
        data = conn.proto.send(cmd)
        self._trace_msg("msg_send", self.ctx.node_id, action.to, action.msg, "reply", len(data))
        self._write(conn, data)

    def _out(self, route: _PeerLink | _Conn, cmd: RemotingCommand, request_id: int | None, msg: Any, to: str,
             channel: str) -> None:
        if isinstance(route, _Conn):
            self._write_command(route, cmd, request_id, msg, to, channel)
            return
        link = route
        if link.conn is not None and not link.conn.closed:
            self._write_command(link.conn, cmd, request_id, msg, to, channel)
            return
        if now_ms() < link.down_until_ms:  # peer just refused us: fail fast, as labrpc does
            if request_id is not None:
                asyncio.get_running_loop().call_soon(self._resolve, request_id, None)
            return
        link.queue.append((cmd, request_id, msg, channel))
        if link.connecting is None:
            link.connecting = asyncio.get_running_loop().create_task(self._open_link(link))

    def _write_command(self, conn: _Conn, cmd: RemotingCommand, request_id: int | None, msg: Any, to: str,
                       channel: str) -> None:
        if request_id is not None:
            p = self.pending.get(request_id)
            if p is None:  # timed out while the connection was opening
                return
            cmd.opaque = conn.proto.next_opaque()
            p.conn, p.opaque = conn, cmd.opaque
            conn.pending[cmd.opaque] = request_id
        elif not cmd.is_response:
            cmd.opaque = conn.proto.next_opaque()
        data = conn.proto.send(cmd)
        self._trace_msg("msg_send", self.ctx.node_id, to, msg, channel, len(data))
        self._write(conn, data)

    def _write(self, conn: _Conn, data: bytes) -> None:
        if conn.closed or conn.writer.is_closing():
            return
        if not conn.outgoing:
            asyncio.get_running_loop().call_soon(self._flush_conn, conn)
        conn.outgoing.append(data)

    @staticmethod
    def _flush_conn(conn: _Conn) -> None:
        """Write the frames of this loop turn in one go, like Netty's flush after a batch of writes (a
        connection lost meanwhile loses them, as it would lose them in the socket's buffer)."""
        frames, conn.outgoing = conn.outgoing, []
        if frames and not conn.closed and not conn.writer.is_closing():
            conn.writer.write(frames[0] if len(frames) == 1 else b"".join(frames))

    def _time_out(self, request_id: int) -> None:
        p = self.pending.get(request_id)
        if p is not None and p.conn is not None and p.opaque is not None:
            p.conn.pending.pop(p.opaque, None)
            p.conn.proto.forget(p.opaque)
        self._resolve(request_id, None)

    def _resolve(self, request_id: int, msg: Any) -> None:
        p = self.pending.pop(request_id, None)
        if p is None:
            return
        p.timer.cancel()
        if self.core is not None:
            self._input(self.core.on_reply, p.to, request_id, msg)

    async def _open_link(self, link: _PeerLink) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*link.address), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as e:
            log.info("%s: cannot reach %s at %s:%d: %s", self.ctx.node_id, link.node_id, *link.address, e)
            queued, link.connecting, link.queue = link.queue, None, []
            link.down_until_ms = now_ms() + RECONNECT_COOLDOWN_MS
            for _, request_id, _, _ in queued:
                if request_id is not None:
                    self._resolve(request_id, None)
            return
        _nodelay(writer)
        conn = _Conn(writer, f"{link.address[0]}:{link.address[1]}", link.node_id, names={link.node_id})
        self.conns.add(conn)
        link.conn, link.connecting = conn, None
        queued, link.queue = link.queue, []
        for cmd, request_id, msg, channel in queued:
            self._write_command(conn, cmd, request_id, msg, link.node_id, channel)
        self._spawn(self._read_messages(conn, reader))

    # --- messages in -------------------------------------------------------------------------
    async def _accept_messages(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _nodelay(writer)
        conn = _Conn(writer, _peername(writer))
        self.conns.add(conn)
        await self._read_messages(conn, reader)

    async def _read_messages(self, conn: _Conn, reader: asyncio.StreamReader) -> None:
        reason = "closed by peer"
        try:
            while True:
                data = await reader.read(65536)
                conn.proto.receive_data(data)
                while True:
                    cmd = conn.proto.next_command()
                    if cmd is NEED_DATA or cmd is CLOSED:
                        break
                    self._on_command(conn, cmd)
                if not data or conn.closed:
                    break
        except RemoteProtocolError as e:
            reason = f"protocol error: {e}"
            log.warning("%s: closing connection with %s: %s", self.ctx.node_id, conn.label, e)
            self.recorder.emit(now_ms(), self.ctx.node_id, "msg_drop",
                               {"src": conn.label, "dst": self.ctx.node_id, "msg": "?", "channel": "frame",
                                "msg_id": 0, "reason": reason})
        except OSError as e:
            reason = f"connection error: {e}"
        except asyncio.CancelledError:
            pass
        finally:
            self._closed(conn, reason)

    def _closed(self, conn: _Conn, reason: str) -> None:
        was_closed = conn.closed
        conn.closed = True
        conn.writer.close()
        self.conns.discard(conn)
        for link in self.links.values():
            if link.conn is conn:
                link.conn = None
        if self.stopping or was_closed:
            return
        for request_id in list(conn.pending.values()):
            self._resolve(request_id, None)
        conn.pending.clear()
        still_open = set().union(*(c.names for c in self.conns)) if self.conns else set()
        if conn.node_id is None:
            self._forget_clients(conn.names - still_open)
        closed_peer = getattr(self.core, "on_peer_closed", None)
        for name in sorted(conn.names - still_open):
            if self.trace_network:
                self.recorder.emit(now_ms(), self.ctx.node_id, "peer_closed",
                                   {"src": name, "dst": self.ctx.node_id, "reason": reason})
            if closed_peer is not None and self.core is not None:
                self._input(closed_peer, name)

    def _forget_clients(self, names: set[str]) -> None:
        for name in sorted(names):
            self.gone_clients[name] = None
        while len(self.gone_clients) > GONE_CLIENTS_KEPT:
            del self.gone_clients[next(iter(self.gone_clients))]

    def _on_command(self, conn: _Conn, cmd: RemotingCommand) -> None:
        if cmd.is_response:
            request_id = conn.pending.pop(cmd.opaque, None)
            p = self.pending.get(request_id) if request_id is not None else None
            if p is None:
                return  # answered after its timeout
            try:
                msg = self.codec.message(cmd, answers=p.msg)
            except CodecError as e:
                log.warning("%s: unreadable response from %s to %s: %s", self.ctx.node_id, conn.label,
                            type(p.msg).__name__, e)
                self._resolve(request_id, None)
                return
            self._trace_msg("msg_recv", p.to, self.ctx.node_id, msg, "reply", cmd.size)
            self._resolve(request_id, msg)
            return
        try:
            msg = self.codec.message(cmd)
        except UnsupportedRequest as e:
            self._refuse(conn, cmd, RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, str(e))
            return
        except CodecError as e:
            log.warning("%s: unreadable request (code %d) from %s: %s", self.ctx.node_id, cmd.code, conn.label, e)
            self._refuse(conn, cmd, RemotingSysResponseCode.SYSTEM_ERROR, f"{type(e).__name__}: {e}")
            return
        src = self.codec.sender(msg) or conn.node_id or conn.label
        conn.names.add(src)
        self.gone_clients.pop(src, None)
        if self.core is None:
            return
        if cmd.is_oneway:
            self._trace_msg("msg_recv", src, self.ctx.node_id, msg, "oneway", cmd.size)
            self._input(self.core.on_message, src, msg)
            return
        request_id = next(self.inbound_ids)
        self.inbound[(src, request_id)] = (conn, cmd.opaque, msg)
        self._trace_msg("msg_recv", src, self.ctx.node_id, msg, "request", cmd.size)
        self._input(self.core.on_request, src, request_id, msg)

    def _refuse(self, conn: _Conn, cmd: RemotingCommand, code: int, remark: str) -> None:
        """``NettyRemotingAbstract``'s answer to a request it cannot process (none to a oneway)."""
        if cmd.is_oneway:
            return
        self._write(conn, conn.proto.send(RemotingCommand(code=code, flag=RESPONSE_FLAG, opaque=cmd.opaque,
                                                          remark=remark)))

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
            raise RocketlabError(_("port {host}:{port} is already in use").format(host=address[0], port=address[1])) from None
        raise RocketlabError(_("cannot listen on {host}:{port}: {why}").format(
            host=address[0], port=address[1], why=e.strerror)) from None


def _nodelay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _peername(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if peer else "?"
