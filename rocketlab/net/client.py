"""NetClient: a client of a node's message port (a producer, a consumer, a test), asyncio.

It speaks the node's frames (``rocketlab.net.framing``) as a named client that is not one of the
node's peers: the node answers on the same connection. One connection, many requests in flight.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from rocketlab.core import Codec
from rocketlab.errors import RemoteProtocolError, RocketlabError
from rocketlab.net.framing import REPLY, REQUEST, FrameDecoder, encode_frame


class NetClient:
    def __init__(self, address: tuple[str, int], codec: Codec, client_id: str = "client") -> None:
        self.address = address
        self.codec = codec
        self.client_id = client_id
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future] = {}
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.pump: asyncio.Task | None = None

    async def connect(self, timeout_s: float = 5.0) -> NetClient:
        try:
            self.reader, self.writer = await asyncio.wait_for(asyncio.open_connection(*self.address), timeout_s)
        except (OSError, asyncio.TimeoutError) as e:
            raise RocketlabError(f"cannot connect to {self.address[0]}:{self.address[1]}: {e}") from None
        self.pump = asyncio.get_running_loop().create_task(self._read())
        return self

    async def request(self, msg: Any, timeout_s: float = 10.0) -> Any:
        """Send ``msg`` as a request and wait for the reply (RocketlabError on timeout or disconnect)."""
        if self.writer is None:
            raise RocketlabError("client is not connected")
        request_id = next(self.ids)
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.waiting[request_id] = future
        self.writer.write(encode_frame(REQUEST, request_id, self.client_id, self.codec.encode(msg)))
        # one timer per request instead of asyncio.wait_for's waiter future and callbacks (the benchmark
        # client shares the machine with the nodes it measures)
        timer = loop.call_later(timeout_s, self._time_out, future, timeout_s)
        try:
            return await future
        finally:
            timer.cancel()
            self.waiting.pop(request_id, None)

    def _time_out(self, future: asyncio.Future, timeout_s: float) -> None:
        if not future.done():
            future.set_exception(RocketlabError(f"no reply from {self.address[0]}:{self.address[1]} in {timeout_s} s"))

    async def _read(self) -> None:
        decoder = FrameDecoder()
        error: Exception = RocketlabError("connection closed by the node")
        try:
            while data := await self.reader.read(65536):
                decoder.receive_data(data)
                while (frame := decoder.next_frame()) is not None:
                    if frame.kind != REPLY:
                        raise RemoteProtocolError(f"node sent a non-reply frame (kind {frame.kind})")
                    future = self.waiting.get(frame.request_id)
                    if future is not None and not future.done():
                        future.set_result(self.codec.decode(frame.body))
        except (OSError, RemoteProtocolError) as e:
            error = RocketlabError(f"connection to the node failed: {e}")
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(error)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.pump is not None:
            self.pump.cancel()
            await asyncio.gather(self.pump, return_exceptions=True)
