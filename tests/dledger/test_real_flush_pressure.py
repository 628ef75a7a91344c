"""Flush off the event loop, on real processes: beside a writer that fsyncs heavily (the disk pressure under
which one fsync of a small mapped file took 0.3-0.65 s here), a 3-member DLedger group with DLedger's
default timers (heartbeat 2000 ms, maxHeartBeatLeak 3, votes 300-1000 ms) taking a steady trickle of
appends keeps one leader in one term for 60 s: each member's fsyncs and checkpoints run on its
FlushDataService thread (as Java's), so its event loop keeps answering heartbeats and pushes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from rocketlab.chaos.campaign import DiskPressure
from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.protocol import AppendEntryRequest, DLedgerResponseCode
from rocketlab.net.client import NetClient
from tests.realnodes import NodeProcesses, free_port

pytestmark = pytest.mark.realnet
PRESSURE_S = 60.0


class Group(NodeProcesses):
    def __init__(self, tmp: Path) -> None:
        self.ids = ["n0", "n1", "n2"]
        self.ports = {n: free_port() for n in self.ids}
        peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        self.run_dir = tmp / "run"
        self.configs = {}
        for n in self.ids:
            path = tmp / f"{n}.conf"
            # DLedger's default timers; small files only so that they roll (64 KiB data, 32 KiB index)
            path.write_text(f"nodeKind=dledger\ngroup=g1\nselfId={n}\npeers={peers}\nrunDir={self.run_dir}\n"
                            f"storeBaseDir={tmp / 'store'}\nmappedFileSizeForEntryData=65536\n"
                            "mappedFileSizeForEntryIndex=32768\n")
            self.configs[n] = path
        super().__init__()

    def roles(self) -> list[dict]:
        out = []
        for n in self.ids:
            path = self.run_dir / f"events-{n}.jsonl"
            if path.exists():
                out += [e for e in map(json.loads, path.read_text().splitlines()) if e["kind"] == "role"]
        return out


async def _leader(g: Group, timeout_s: float = 30.0) -> tuple[str, int]:
    from rocketlab.dledger.protocol import MetadataRequest

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        seen = set()
        for n in g.ids:
            client = await NetClient(("127.0.0.1", g.ports[n]), DLedgerCodec()).connect()
            try:
                md = await client.request(MetadataRequest(group="g1", remote_id=n), timeout_s=3)
                seen.add((md.leader_id, md.term))
            finally:
                await client.close()
        if len(seen) == 1 and (pair := seen.pop())[0] in g.ids:
            return pair
        await asyncio.sleep(0.2)
    raise AssertionError("no leader")


async def _trickle(g: Group, leader: str, seconds: float) -> int:
    """One append every 50 ms for ``seconds``; every one must be committed (SUCCESS)."""
    client = await NetClient(("127.0.0.1", g.ports[leader]), DLedgerCodec()).connect()
    n, end = 0, time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            r = await client.request(AppendEntryRequest(group="g1", remote_id=leader, body=b"x" * 512), timeout_s=10)
            assert r.code is DLedgerResponseCode.SUCCESS, f"append {n}: {r.code.name}"
            n += 1
            await asyncio.sleep(0.05)
    finally:
        await client.close()
    return n


def test_a_group_keeps_one_leader_for_60_s_beside_a_writer_that_fsyncs_heavily(tmp_path):
    g = Group(tmp_path)
    writer = DiskPressure(tmp_path / "pressure.bin")
    try:
        for n in g.ids:
            g.start(n)
        leader, term = asyncio.run(_leader(g))
        settled_ms = time.monotonic() * 1000  # the nodes trace with the same monotonic clock (ms)
        writer.thread.start()
        appended = asyncio.run(_trickle(g, leader, PRESSURE_S))
        writer.stop.set()
        writer.thread.join()
        assert asyncio.run(_leader(g)) == (leader, term)
        time.sleep(0.5)  # the nodes write their traces out every 0.2 s
        changes = [e for e in g.roles() if e["t"] > settled_ms]
        assert changes == [], f"role changes under disk pressure: {changes}"
        assert writer.fsyncs > 10 and appended > 300, (writer.fsyncs, appended)
        print(f"{appended} appends, {writer.fsyncs} writer fsyncs (slowest {writer.slowest_s * 1000:.0f} ms), "
              f"leader {leader} term {term} throughout")
    finally:
        writer.stop.set()
        assert g.stop_all() == [0, 0, 0]
