"""NettyRemotingClient for the kit's client: one asyncio TCP connection per address, requests paired with answers
by opaque, the broker's own requests (NOTIFY_CONSUMER_IDS_CHANGED) handed to a callback; any other request the
broker sends (GET_CONSUMER_RUNNING_INFO, ...) is answered REQUEST_CODE_NOT_SUPPORTED, as ``NettyRemotingAbstract``
answers a code without a processor.

Failures are :class:`~rocketlab.client.producer.RemotingError` with Java's kinds and defaults: ``connect``
(``connectTimeoutMillis`` 3 s), ``timeout`` (the caller's), ``send`` (the peer closed, or spoke something that is
no remoting frame: the connection is closed and every request on it fails at once, one line naming the
address). An answer that does not decode is a ``CodecError`` of that request only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rocketlab.client.producer import RemotingError
from rocketlab.client.protocol import client_codec
from rocketlab.errors import CodecError, RemoteProtocolError
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RESPONSE_FLAG, RemotingCommand, RemotingSysResponseCode
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection
from rocketlab.remoting.family import UnsupportedRequest

CONNECT_TIMEOUT_MS = 3000


class Channel:
    """One connection to ``addr`` (``host:port``)."""

    def __init__(self, addr: str, codec: RemotingCodec, on_request: Callable[[str, Any], None]) -> None:
        self.addr = addr
        self.codec = codec
        self.on_request = on_request
        self.proto = RemotingConnection()
        self.waiting: dict[int, tuple[asyncio.Future, Any]] = {}
        self.writer: asyncio.StreamWriter | None = None
        self.pump: asyncio.Task | None = None
        self.closed = False

    async def connect(self) -> None:
        host, _, port = self.addr.rpartition(":")
        try:
            reader, self.writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)),
                                                         CONNECT_TIMEOUT_MS / 1000)
        except (OSError, ValueError, asyncio.TimeoutError) as e:
            raise RemotingError(f"connect to {self.addr} failed: {e or type(e).__name__}", "connect") from None
        self.pump = asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        error = f"connection to {self.addr} closed by the peer"
        try:
            while True:
                data = await reader.read(65536)
                self.proto.receive_data(data)
                while True:
                    cmd = self.proto.next_command()
                    if cmd is NEED_DATA or cmd is CLOSED:
                        break
                    self._dispatch(cmd)
                if cmd is CLOSED or not data:
                    break
        except RemoteProtocolError as e:
            error = f"{self.addr} answered something that is no RocketMQ remoting frame: {e}"
        except OSError as e:
            error = f"connection to {self.addr} failed: {e}"
        self.close(error)

    def _dispatch(self, cmd: Any) -> None:
        if not cmd.is_response:
            try:
                self.on_request(self.addr, self.codec.message(cmd))
            except CodecError as e:  # a request the client does not serve, or a bad one: answered as Java does
                if not cmd.is_oneway and self.writer is not None:
                    unsupported = isinstance(e, UnsupportedRequest)
                    self.writer.write(self.proto.send(RemotingCommand(
                        code=RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED if unsupported
                        else RemotingSysResponseCode.SYSTEM_ERROR, flag=RESPONSE_FLAG, opaque=cmd.opaque,
                        remark=f" request type {cmd.code} not supported" if unsupported else str(e),
                        language="PYTHON")))
            return
        entry = self.waiting.pop(cmd.opaque, None)
        if entry is None or entry[0].done():
            return
        future, msg = entry
        try:
            future.set_result(self.codec.message(cmd, answers=msg))
        except CodecError as e:
            future.set_exception(e)

    async def invoke(self, msg: Any, timeout_ms: int) -> Any:
        if self.closed or self.writer is None:
            raise RemotingError(f"connection to {self.addr} is closed", "send")
        cmd = self.codec.command(msg, self.proto.next_opaque())
        cmd.language = "PYTHON"
        future = asyncio.get_running_loop().create_future()
        self.waiting[cmd.opaque] = (future, msg)
        self.writer.write(self.proto.send(cmd))
        try:
            return await asyncio.wait_for(future, timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise RemotingError(f"wait response on the channel <{self.addr}> timeout, {timeout_ms}(ms)",
                                "timeout") from None
        finally:
            self.waiting.pop(cmd.opaque, None)
            self.proto.forget(cmd.opaque)

    def oneway(self, msg: Any) -> None:
        if self.closed or self.writer is None:
            raise RemotingError(f"connection to {self.addr} is closed", "send")
        cmd = self.codec.command(msg, self.proto.next_opaque())
        cmd.language = "PYTHON"
        self.writer.write(self.proto.send(cmd))

    def close(self, reason: str = "closed") -> None:
        if self.closed:
            return
        self.closed = True
        for future, _ in self.waiting.values():
            if not future.done():
                future.set_exception(RemotingError(reason, "send"))
        self.waiting.clear()
        if self.writer is not None:
            self.writer.close()
        if self.pump is not None and self.pump is not asyncio.current_task():
            self.pump.cancel()


class RemotingClient:
    """Channels by address, opened on first use and again after a close."""

    def __init__(self, on_request: Callable[[str, Any], None] | None = None) -> None:
        self.codec = client_codec()
        self.on_request = on_request or (lambda addr, msg: None)
        self.channels: dict[str, Channel] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def channel(self, addr: str) -> Channel:
        ch = self.channels.get(addr)
        if ch is not None and not ch.closed:
            return ch
        lock = self._locks.setdefault(addr, asyncio.Lock())
        async with lock:
            ch = self.channels.get(addr)
            if ch is None or ch.closed:
                ch = Channel(addr, self.codec, self.on_request)
                await ch.connect()
                self.channels[addr] = ch
        return ch

    async def invoke(self, addr: str, msg: Any, timeout_ms: int) -> Any:
        return await (await self.channel(addr)).invoke(msg, timeout_ms)

    async def oneway(self, addr: str, msg: Any) -> None:
        (await self.channel(addr)).oneway(msg)

    def close(self) -> None:
        for ch in self.channels.values():
            ch.close()
        self.channels.clear()
