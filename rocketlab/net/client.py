"""NetClient: a client of a node's message port (a producer, a consumer, a test), asyncio.

It speaks RocketMQ remoting (:mod:`rocketlab.remoting`) as ``NettyRemotingClient`` does: one
connection, many requests in flight, each paired with its response by ``opaque``; the node answers on
the same connection. The node names the client by the connection's address (its requests name no
sender), or by the sender a request names (a DLedger request's ``localId``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from rocketlab.errors import CodecError, RemoteProtocolError, RocketlabError
from rocketlab.i18n import _
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection


class NetClient:
    """``codec``: the node kind's (default: one that knows every family, :data:`ALL_FAMILIES`);
    ``client_id`` names the client in error messages (the wire carries no client name)."""

    def __init__(self, address: tuple[str, int], codec: Any | None = None, client_id: str = "client") -> None:
        self.address = address
        self.codec = codec if codec is not None else RemotingCodec(ALL_FAMILIES)
        self.client_id = client_id
        self.proto = RemotingConnection()
        self.waiting: dict[int, tuple[asyncio.Future, Any]] = {}
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.pump: asyncio.Task | None = None

    async def connect(self, timeout_s: float = 5.0) -> NetClient:
        try:
            self.reader, self.writer = await asyncio.wait_for(asyncio.open_connection(*self.address), timeout_s)
        except (OSError, asyncio.TimeoutError) as e:
            raise RocketlabError(_("cannot connect to {host}:{port}: {why}").format(
                host=self.address[0], port=self.address[1], why=e)) from None
        self.pump = asyncio.get_running_loop().create_task(self._read())
        return self

    async def request(self, msg: Any, timeout_s: float = 10.0) -> Any:
        """Send ``msg`` as a request and wait for its response (RocketlabError on timeout, disconnect, or
        an answer that is not ``msg``'s response: a remark from the node's remoting layer)."""
        if self.writer is None:
            raise RocketlabError(_("client is not connected"))
        cmd = self.codec.command(msg, self.proto.next_opaque())
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.waiting[cmd.opaque] = (future, msg)
        self.writer.write(self.proto.send(cmd))
        # one timer per request instead of asyncio.wait_for's waiter future and callbacks (the benchmark
        # client shares the machine with the nodes it measures)
        timer = loop.call_later(timeout_s, self._time_out, future, timeout_s)
        try:
            return await future
        finally:
            timer.cancel()
            self.waiting.pop(cmd.opaque, None)
            self.proto.forget(cmd.opaque)

    def send_oneway(self, msg: Any) -> None:
        """Send ``msg`` (a class its family sends oneway) without waiting for anything."""
        if self.writer is None:
            raise RocketlabError(_("client is not connected"))
        self.writer.write(self.proto.send(self.codec.command(msg, self.proto.next_opaque())))

    def _time_out(self, future: asyncio.Future, timeout_s: float) -> None:
        if not future.done():
            future.set_exception(RocketlabError(_("no reply from {host}:{port} in {seconds} s").format(
                host=self.address[0], port=self.address[1], seconds=timeout_s)))

    def _answer(self, cmd: RemotingCommand) -> None:
        entry = self.waiting.get(cmd.opaque)
        if entry is None or entry[0].done():
            return
        future, msg = entry
        try:
            future.set_result(self.codec.message(cmd, answers=msg))
        except CodecError as e:
            future.set_exception(RocketlabError(_("{request} answered with code {code}: {remark}").format(
                request=type(msg).__name__, code=cmd.code, remark=cmd.remark or e)))

    async def _read(self) -> None:
        error: Exception = RocketlabError(_("connection closed by the node"))
        assert self.reader is not None
        try:
            while True:
                data = await self.reader.read(65536)
                self.proto.receive_data(data)
                while (cmd := self.proto.next_command()) is not NEED_DATA and cmd is not CLOSED:
                    if not cmd.is_response:
                        raise RemoteProtocolError(f"the node sent a request (code {cmd.code}) to a client")
                    self._answer(cmd)
                if not data:
                    break
        except (OSError, RemoteProtocolError) as e:
            error = RocketlabError(_("connection to the node failed: {why}").format(why=e))
        for future, _msg in self.waiting.values():
            if not future.done():
                future.set_exception(error)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.pump is not None:
            self.pump.cancel()
            await asyncio.gather(self.pump, return_exceptions=True)
