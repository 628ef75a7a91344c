"""The TCP runtime on RocketMQ remoting, in one process on 127.0.0.1: requests answered on the connection
they came on, whoever opened it; a code the node does not serve is answered REQUEST_CODE_NOT_SUPPORTED and
an unreadable request SYSTEM_ERROR (as ``NettyRemotingAbstract`` answers), a oneway gets nothing back;
garbage closes the connection; a closed connection fails what was pending on it and tells the core
``on_peer_closed`` once per peer."""

from __future__ import annotations

import asyncio

from rocketlab.core import NodeContext, Output, Reply, Request, Send
from rocketlab.net.runtime import NetRuntime
from rocketlab.pingpong import Heartbeat, Ping, PingPongCodec, Pong
from rocketlab.remoting.command import ONEWAY_FLAG, RemotingCommand, encode_command
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection
from rocketlab.trace.recorder import TraceRecorder
from tests.realnodes import free_port
from tests.sim.cores import Recorder


def _runtime(node_id: str, peers: dict[str, tuple[str, int]], plan: dict) -> NetRuntime:
    ctx = NodeContext(node_id, tuple(peers), 1)
    return NetRuntime(ctx, lambda c: Recorder(c, plan), PingPongCodec(), listen=peers[node_id], peers=peers,
                      recorder=TraceRecorder(keep=True), trace_network=True)


def _peer_closed(core: Recorder):
    return [e for e in core.log if e[0] == "peer_closed"]


class ClosingRecorder(Recorder):
    def on_peer_closed(self, peer, now_ms):
        return self._do("peer_closed", peer, now_ms)


async def _wait(predicate, timeout_s: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while not predicate():
        assert loop.time() < end, "timed out waiting"
        await asyncio.sleep(0.01)


def _answer(core, src, rid, msg, now):
    return [Reply(src, rid, Pong(msg.seq, msg.sent_ms))] if msg.seq != 3 else []  # ping 3 is never answered


def test_requests_go_both_ways_and_a_closed_peer_is_told_once():
    async def main() -> None:
        peers = {"a": ("127.0.0.1", free_port()), "b": ("127.0.0.1", free_port())}
        a = _runtime("a", peers, {})
        a.factory = lambda c: ClosingRecorder(c, {
            "start": lambda core, now: [Request("b", Ping(1, now), 1, 5000), Send("b", Heartbeat(7))],
            "request": _answer})
        b = _runtime("b", peers, {"message": lambda core, src, msg, now: [Request(src, Ping(2, now), 9, 5000)],
                                  "request": _answer})
        await b.start()
        await a.start()
        core_a, core_b = a.core, b.core
        await _wait(lambda: any(e[0] == "reply" for e in core_a.log) and any(e[0] == "reply" for e in core_b.log))
        assert [e[3] for e in core_a.log if e[0] == "reply"][0].seq == 1  # b answered on a's connection
        assert [e[3] for e in core_b.log if e[0] == "reply"][0].seq == 2  # a answered b's request on it too
        # a ping/pong message names no sender: b knows a by the address of the connection a opened, and its
        # request to that name went back on that connection (b never dialled a; a knows b as the peer it dialled)
        (src,) = {e[1] for e in core_b.log if e[0] == "message"}
        assert src.startswith("127.0.0.1:") and src != f"127.0.0.1:{peers['a'][1]}"
        assert [e[1] for e in core_a.log if e[0] == "request"] == ["b"]
        a._input(lambda now: Output((Request("b", Ping(3, now), 2, 60_000),)))
        await asyncio.sleep(0.1)
        await b.stop()  # b's sockets close: a's pending request fails at once, a is told once
        await _wait(lambda: bool(_peer_closed(core_a)))
        replies = [e for e in core_a.log if e[0] == "reply"]
        assert replies[-1][2:4] == (2, None)
        await asyncio.sleep(0.2)
        assert [e[1] for e in _peer_closed(core_a)] == ["b"]
        assert any(ev["kind"] == "peer_closed" for ev in a.recorder.events)
        await a.stop()

    asyncio.run(main())


async def _raw(port: int, frames: bytes, expect: int) -> tuple[list[RemotingCommand], bool]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(frames)
    conn, got, closed = RemotingConnection(), [], False
    conn.awaiting = set(range(100))
    try:
        while len(got) < expect:
            data = await asyncio.wait_for(reader.read(65536), 5)
            conn.receive_data(data)
            while (cmd := conn.next_command()) is not NEED_DATA and cmd is not CLOSED:
                got.append(cmd)
            if not data:
                closed = True
                break
        if expect == 0:
            closed = not await asyncio.wait_for(reader.read(65536), 5)
    finally:
        writer.close()
    return got, closed


def test_refusals_as_netty_remoting_answers_them_and_garbage_closes_the_connection():
    async def main() -> None:
        peers = {"a": ("127.0.0.1", free_port())}
        a = _runtime("a", peers, {})
        await a.start()
        port = peers["a"][1]
        unknown = encode_command(RemotingCommand(123, opaque=1))
        oneway_unknown = encode_command(RemotingCommand(124, flag=ONEWAY_FLAG, opaque=2))
        bad_ping = encode_command(RemotingCommand(60002, opaque=3, ext_fields={"seq": "x", "sentMs": "1"}))
        got, _ = await _raw(port, unknown + oneway_unknown + bad_ping, 2)
        assert [(c.opaque, c.code) for c in got] == [(1, 3), (3, 1)]
        assert got[0].remark == " request type 123 not supported"
        assert "ext field seq is 'x', not a number" in got[1].remark
        got, closed = await _raw(port, b"\xff\xff\xff\xff" + unknown, 0)
        assert got == [] and closed
        drops = [e for e in a.recorder.events if e["kind"] == "msg_drop"]
        assert drops and "length field -1 out of range" in drops[-1]["reason"]
        await a.stop()

    asyncio.run(main())
