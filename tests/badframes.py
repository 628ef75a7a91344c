"""Bad input for a remoting server (name server or broker), shared by the bad-input tests of both node kinds:
the response code to each malformed request on one connection, and whether a broken frame closes it."""

from __future__ import annotations

import asyncio
import struct

from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection


async def answers(port: int, frames: list[bytes]) -> list[int | None]:
    """The response code to each frame (by opaque 1..n), None for one unanswered after a quiet second."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = RemotingConnection()
    conn.awaiting = set(range(1, len(frames) + 1))
    writer.write(b"".join(frames))
    got: dict[int, int] = {}
    while len(got) < len(frames):
        try:
            data = await asyncio.wait_for(reader.read(65536), 1.0 if len(got) == len(frames) - 1 else 10)
        except asyncio.TimeoutError:
            break
        assert data, f"closed after {len(got)} answers"
        conn.receive_data(data)
        while (c := conn.next_command()) is not NEED_DATA and c is not CLOSED:
            got[c.opaque] = c.code
    writer.close()
    return [got.get(i) for i in range(1, len(frames) + 1)]


async def closed_after(port: int, data: bytes, then_close: bool = False) -> bool:
    """Whether the server closes the connection after ``data`` (or, with ``then_close``, we close it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    if then_close:
        await asyncio.sleep(0.2)
        writer.close()
        return True
    try:
        return await asyncio.wait_for(reader.read(65536), 10) == b""
    finally:
        writer.close()


async def broken_frames(port: int, truncated: bytes) -> dict[str, bool]:
    """Garbage, an oversized frame (17 MiB: over Netty's 16 MiB FRAME_MAX_LENGTH), a negative length and
    ``truncated`` (a good frame cut short, then the connection closed): whether each closed the connection."""
    return {
        "garbage": await closed_after(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        "oversized": await closed_after(port, struct.pack(">ii", 17 * 1024 * 1024, 20) + b"x" * 64),
        "negative length": await closed_after(port, b"\xff\xff\xff\xf0" + b"x" * 16),
        "truncated": await closed_after(port, truncated[:-1], then_close=True),
    }
