"""NetClient against a remoting stand-in on 127.0.0.1: responses find their requests by opaque (in any
order), a silent node times out, a cancelled request leaves nothing waiting, a refusal is an error."""

from __future__ import annotations

import asyncio

import pytest

from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient
from rocketlab.pingpong import Ping, PingPongCodec, Pong
from rocketlab.remoting.command import RESPONSE_FLAG, RemotingCommand, RemotingSysResponseCode
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection

CODEC = PingPongCodec()


async def _server(mode: str) -> asyncio.base_events.Server:
    """Answers each Ping with its Pong (in reverse order of arrival per read), never, or with a refusal."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = RemotingConnection()
        while data := await reader.read(65536):
            conn.receive_data(data)
            requests = []
            while (cmd := conn.next_command()) is not NEED_DATA and cmd is not CLOSED:
                requests.append(cmd)
            for cmd in reversed(requests):
                if mode == "answer":
                    ping = CODEC.message(cmd)
                    writer.write(conn.send(CODEC.command(Pong(ping.seq, ping.sent_ms), cmd.opaque)))
                elif mode == "refuse":
                    writer.write(conn.send(RemotingCommand(RemotingSysResponseCode.SYSTEM_BUSY, flag=RESPONSE_FLAG,
                                                           opaque=cmd.opaque, remark="[PCBUSY_CLEAN_QUEUE]busy")))
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_replies_find_their_requests_and_a_silent_node_times_out():
    async def main() -> None:
        server = await _server("answer")
        port = server.sockets[0].getsockname()[1]
        client = await NetClient(("127.0.0.1", port), CODEC, "c").connect()
        replies = await asyncio.gather(*(client.request(Ping(i, 100 + i), timeout_s=5) for i in range(50)))
        assert replies == [Pong(i, 100 + i) for i in range(50)] and client.waiting == {}
        assert client.proto.awaiting == set()
        await client.close()
        server.close()

        silent = await _server("silent")
        port = silent.sockets[0].getsockname()[1]
        client = await NetClient(("127.0.0.1", port), CODEC, "c").connect()
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(RocketlabError, match="no reply from 127.0.0.1:.* in 0.2 s"):
            await client.request(Ping(1, 1), timeout_s=0.2)
        assert 0.15 <= loop.time() - start < 5 and client.waiting == {} and client.proto.awaiting == set()
        await client.close()
        silent.close()

    asyncio.run(main())


def test_a_request_cancelled_by_its_caller_leaves_nothing_waiting():
    async def main() -> None:
        silent = await _server("silent")
        client = await NetClient(("127.0.0.1", silent.sockets[0].getsockname()[1]), CODEC, "c").connect()
        task = asyncio.get_running_loop().create_task(client.request(Ping(1, 1), timeout_s=30))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.waiting == {}
        await client.close()
        silent.close()

    asyncio.run(main())


def test_a_refusal_from_the_remoting_layer_is_an_error_with_its_remark():
    async def main() -> None:
        server = await _server("refuse")
        client = await NetClient(("127.0.0.1", server.sockets[0].getsockname()[1]), CODEC, "c").connect()
        with pytest.raises(RocketlabError, match=r"Ping answered with code 2: \[PCBUSY_CLEAN_QUEUE\]busy"):
            await client.request(Ping(1, 1), timeout_s=5)
        await client.close()
        server.close()

    asyncio.run(main())
