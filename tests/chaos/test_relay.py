"""The fault-injecting relay in front of a frame echo server on 127.0.0.1: frames pass whole and in order;
delay, loss, reorder and hold do what they say, per source and direction; heal undoes them."""

from __future__ import annotations

import asyncio

from rocketlab.chaos.relay import Relay
from rocketlab.remoting.command import RemotingCommand, encode_command
from tests.realnodes import free_port


def _frame(i: int) -> bytes:
    return encode_command(RemotingCommand(60001, flag=2, opaque=i, ext_fields={"seq": str(i)}))


async def _echo_server() -> tuple[asyncio.base_events.Server, int]:
    async def handle(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)  # bytes back as they came: frames stay whole
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _exchange(port: int, n: int, wait_s: float) -> tuple[list[int], float]:
    """Send frames 0..n-1 through the relay; the opaques that came back, in order, and the time taken."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    loop = asyncio.get_running_loop()
    start = loop.time()
    writer.write(b"".join(_frame(i) for i in range(n)))
    got, buf = [], b""
    end = start + wait_s
    while len(got) < n and loop.time() < end:
        try:
            buf += await asyncio.wait_for(reader.read(65536), max(0.01, end - loop.time()))
        except asyncio.TimeoutError:
            break
        while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
            size = 4 + int.from_bytes(buf[:4], "big")
            frame, buf = buf[:size], buf[size:]
            got.append(int(frame.split(b'"opaque":')[1].split(b",")[0]))
    elapsed = loop.time() - start
    writer.close()
    return got, elapsed


def test_delay_loss_reorder_and_hold_per_source_and_heal():
    async def main() -> None:
        server, target = await _echo_server()
        ports = {"n1": (free_port(), "frames"), "n2": (free_port(), "frames")}
        relay = Relay("n0", "127.0.0.1", ports, ("127.0.0.1", target), seed=7)
        await relay.start()
        n1, n2 = ports["n1"][0], ports["n2"][0]

        got, _ = await _exchange(n1, 50, 5)
        assert got == list(range(50))  # whole frames, in order

        relay.set("n1", "in", delay_ms=150)
        got, elapsed = await _exchange(n1, 10, 5)
        assert got == list(range(10)) and elapsed >= 0.15
        got, elapsed = await _exchange(n2, 10, 5)  # another source is not delayed
        assert got == list(range(10)) and elapsed < 0.15
        relay.heal()

        relay.set("n1", "out", loss=0.5)
        got, _ = await _exchange(n1, 200, 1.5)
        assert 40 < len(got) < 160 and got == sorted(got)  # about half lost on the way back, order kept
        relay.heal()

        relay.set("n1", "in", reorder=0.5)
        got, _ = await _exchange(n1, 200, 3)
        assert sorted(got) == list(range(200)) and got != list(range(200))
        relay.heal()

        relay.set("n1", "in", hold=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", n1)
        writer.write(_frame(1))
        try:
            await asyncio.wait_for(reader.read(100), 0.5)
            raise AssertionError("a held frame went through")
        except asyncio.TimeoutError:
            pass
        relay.heal()  # released in order once healed, as TCP would after a partition
        assert (await asyncio.wait_for(reader.read(65536), 5)) == _frame(1)
        writer.close()
        await asyncio.sleep(0.1)
        assert relay.stats()["lost"] > 0 and relay.stats()["reordered"] > 0
        relay.close()
        server.close()

    asyncio.run(main())
