"""NetClient against a node stand-in on 127.0.0.1: replies by request id, a timeout, a cancelled request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from rocketlab.errors import RocketlabError
from rocketlab.jsoncodec import JsonCodec
from rocketlab.net.client import NetClient
from rocketlab.net.framing import REPLY, FrameDecoder, encode_frame


@dataclass(frozen=True)
class Ping:
    n: int


CODEC = JsonCodec([Ping])


async def _server(answer: bool) -> asyncio.base_events.Server:
    """Echoes each request's body back as its reply (in reverse order of arrival per read), or never answers."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            decoder.receive_data(data)
            frames = []
            while (frame := decoder.next_frame()) is not None:
                frames.append(frame)
            if answer:
                for frame in reversed(frames):
                    writer.write(encode_frame(REPLY, frame.request_id, "node", frame.body))
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_replies_find_their_requests_and_a_silent_node_times_out():
    async def main() -> None:
        server = await _server(answer=True)
        port = server.sockets[0].getsockname()[1]
        client = await NetClient(("127.0.0.1", port), CODEC, "c").connect()
        replies = await asyncio.gather(*(client.request(Ping(i), timeout_s=5) for i in range(50)))
        assert replies == [Ping(i) for i in range(50)] and client.waiting == {}
        await client.close()
        server.close()

        silent = await _server(answer=False)
        port = silent.sockets[0].getsockname()[1]
        client = await NetClient(("127.0.0.1", port), CODEC, "c").connect()
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(RocketlabError, match="no reply from 127.0.0.1:.* in 0.2 s"):
            await client.request(Ping(1), timeout_s=0.2)
        assert 0.15 <= loop.time() - start < 5 and client.waiting == {}
        await client.close()
        silent.close()

    asyncio.run(main())


def test_a_request_cancelled_by_its_caller_leaves_nothing_waiting():
    async def main() -> None:
        silent = await _server(answer=False)
        client = await NetClient(("127.0.0.1", silent.sockets[0].getsockname()[1]), CODEC, "c").connect()
        task = asyncio.get_running_loop().create_task(client.request(Ping(1), timeout_s=30))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.waiting == {}
        await client.close()
        silent.close()

    asyncio.run(main())
