"""A node's own requests and oneways to a client, on the connection the client opened (a broker's
NOTIFY_CONSUMER_IDS_CHANGED goes that way): they arrive, the request's answer comes back to the node, and
once the client's connection closed they fail at once instead of dialling the client's ephemeral port."""

from __future__ import annotations

import asyncio

from rocketlab.core import NodeContext, Output, Reply, Request, Send
from rocketlab.net.runtime import NetRuntime
from rocketlab.pingpong import Heartbeat, Ping, PingPongCodec, Pong
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection
from rocketlab.trace.recorder import TraceRecorder
from tests.realnodes import free_port
from tests.sim.cores import Recorder


def test_a_node_sends_requests_and_oneways_to_a_client_on_the_connection_the_client_opened():
    async def main() -> None:
        port = free_port()
        plan = {"request": lambda core, src, rid, msg, now: [
            Send(src, Heartbeat(5)), Request(src, Ping(77, now), 500, 5000), Reply(src, rid, Pong(msg.seq, 0))]}
        node = NetRuntime(NodeContext("n", ("n",), 1), lambda c: Recorder(c, plan), PingPongCodec(),
                          listen=("127.0.0.1", port), peers={"n": ("127.0.0.1", port)}, recorder=TraceRecorder())
        await node.start()
        codec = PingPongCodec()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        conn = RemotingConnection()
        writer.write(conn.send(codec.command(Ping(1, 0), conn.next_opaque())))  # the client's request
        got: list[RemotingCommand] = []
        while len(got) < 3:  # the node's oneway, its request, and the answer to ours, in some order
            conn.receive_data(await asyncio.wait_for(reader.read(65536), 5))
            while (cmd := conn.next_command()) is not NEED_DATA and cmd is not CLOSED:
                got.append(cmd)
        oneway = next(c for c in got if c.is_oneway)
        request = next(c for c in got if not c.is_response and not c.is_oneway)
        answer = next(c for c in got if c.is_response)
        assert codec.message(oneway) == Heartbeat(5) and codec.message(request).seq == 77
        assert codec.message(answer, answers=Ping(1, 0)) == Pong(1, 0)
        writer.write(conn.send(codec.command(Pong(77, 0), request.opaque)))  # the client answers the node
        core = node.core
        for _ in range(500):
            if any(e[0] == "reply" for e in core.log):
                break
            await asyncio.sleep(0.01)
        (reply,) = [e for e in core.log if e[0] == "reply"]
        client = reply[1]
        assert reply[2:4] == (500, Pong(77, 0)) and client.startswith("127.0.0.1:") and client != f"127.0.0.1:{port}"
        writer.close()  # the client goes away: the node's next request to it fails at once, no dial
        for _ in range(500):
            if client in node.gone_clients:
                break
            await asyncio.sleep(0.01)
        node._input(lambda now: Output((Request(client, Ping(78, now), 501, 5000), Send(client, Heartbeat(6)))))
        for _ in range(100):
            if len([e for e in core.log if e[0] == "reply"]) == 2:
                break
            await asyncio.sleep(0.01)
        assert [e for e in core.log if e[0] == "reply"][-1][2:4] == (501, None)
        assert client not in node.links  # nobody dialled the client's ephemeral port
        await node.stop()

    asyncio.run(main())
