"""A raw remoting connection for tests: requests paired by opaque, and the requests the broker sends back
on it (NOTIFY_CONSUMER_IDS_CHANGED), which :class:`rocketlab.net.client.NetClient` does not take."""

from __future__ import annotations

import asyncio

from rocketlab.broker.protocol import broker_codec
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection

CODEC = broker_codec()


class Conn:
    """A raw remoting connection: requests by opaque, and the requests the broker sends us."""

    def __init__(self) -> None:
        self.proto = RemotingConnection()
        self.answers: dict[int, asyncio.Future] = {}
        self.from_broker: list[RemotingCommand] = []
        self.closed = asyncio.Event()

    async def open(self, port: int) -> Conn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.pump = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _read(self) -> None:
        while data := await self.reader.read(65536):
            self.proto.receive_data(data)
            while (cmd := self.proto.next_command()) is not NEED_DATA and cmd is not CLOSED:
                if cmd.is_response:
                    self.answers.pop(cmd.opaque).set_result(cmd)
                else:
                    self.from_broker.append(cmd)
        self.closed.set()

    def send(self, cmd: RemotingCommand) -> asyncio.Future:
        cmd.opaque = self.proto.next_opaque()
        future = asyncio.get_running_loop().create_future()
        if not cmd.is_oneway:
            self.answers[cmd.opaque] = future
        self.writer.write(self.proto.send(cmd))
        return future

    async def ask(self, msg, timeout_s: float = 5.0):
        cmd = await asyncio.wait_for(self.send(CODEC.command(msg)), timeout_s)
        return CODEC.message(cmd, answers=msg)

    async def close(self) -> None:
        self.writer.close()
        self.pump.cancel()
