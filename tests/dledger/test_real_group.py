"""A DLedger group of three real processes on 127.0.0.1 (``nodeKind=dledger``) with short timers: it
elects, replicates client appends sent over TCP, survives SIGKILL of its leader (every acknowledged append
is on the new leader), and the restarted member catches up until its files equal the leader's. A follower
gives up after ten missed 100 ms heartbeats, not three: a node runs on one thread, and one fsync under disk
pressure can take hundreds of ms (see ``tests.realnodes``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocketlab.dledger import DLedgerCodec
from rocketlab.dledger.cli import iter_entries
from rocketlab.dledger.protocol import (
    AppendEntryRequest,
    DLedgerResponseCode,
    GetEntriesRequest,
    MetadataRequest,
)
from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient
from tests.realnodes import NodeProcesses, free_port

pytestmark = pytest.mark.realnet
Code = DLedgerResponseCode
TIMERS = ("heartBeatTimeIntervalMs=100\nmaxHeartBeatLeak=10\nminVoteIntervalMs=30\nmaxVoteIntervalMs=100\n"
          "voteRoundWaitBaseMs=200\nrpcTimeoutMs=500\nmaxPushTimeOutMs=200\npushCommitIntervalMs=100\n"
          "mappedFileSizeForEntryData=65536\nmappedFileSizeForEntryIndex=32768\n")


class Group(NodeProcesses):
    """Three member processes, their configs, ports and store directories."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ids = ["n0", "n1", "n2"]
        self.ports = {n: free_port() for n in self.ids}
        peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        self.run_dir = tmp / "run"
        self.store = tmp / "store"
        self.configs = {}
        for n in self.ids:
            path = tmp / f"{n}.conf"
            path.write_text(f"nodeKind=dledger\ngroup=g1\nselfId={n}\npeers={peers}\nrunDir={self.run_dir}\n"
                            f"storeBaseDir={self.store}\n" + TIMERS)
            self.configs[n] = path
        super().__init__()




    def client(self, node: str) -> NetClient:
        return NetClient(("127.0.0.1", self.ports[node]), DLedgerCodec(), f"test-{node}")

    def events(self, node: str) -> list[dict]:
        path = self.run_dir / f"events-{node}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def log(self, node: str) -> list[tuple[int, int, str | None]]:
        return [(e["index"], e["term"], e["body"]) for e in iter_entries(str(self.store / f"dledger-{node}"))]


@pytest.fixture
def group(tmp_path):
    g = Group(tmp_path)
    yield g
    for proc in g.procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def leader_of(g: Group, among: list[str], timeout_s: float = 10.0) -> tuple[str, int]:
    """Ask each member in ``among`` for the metadata until they all name the same leader, one of them."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        seen = set()
        for n in among:
            try:
                c = await g.client(n).connect(1.0)
                try:
                    md = await c.request(MetadataRequest(group="g1", remote_id=n), timeout_s=1.0)
                finally:
                    await c.close()
                seen.add((md.leader_id, md.term))
            except RocketlabError:
                seen.add((None, -1))
        if len(seen) == 1 and (pair := seen.pop())[0] in among:
            return pair
        await asyncio.sleep(0.05)
    raise AssertionError(f"no agreed leader among {among} within {timeout_s} s")


async def append_all(g: Group, leader: str, bodies: list[bytes]) -> list[int]:
    """Append each body through the leader (one at a time, each answered when committed)."""
    client = await g.client(leader).connect()
    try:
        indexes = []
        for body in bodies:
            r = await client.request(AppendEntryRequest(group="g1", remote_id=leader, body=body), timeout_s=5.0)
            assert r.code is Code.SUCCESS, f"{body!r}: {r.code.name} (leader {r.leader_id})"
            indexes.append(r.index)
        return indexes
    finally:
        await client.close()


async def read_log(g: Group, leader: str, last: int) -> list[bytes]:
    """The leader's entries 0..last, one GetEntriesRequest each."""
    client = await g.client(leader).connect()
    try:
        out = []
        for i in range(last + 1):
            r = await client.request(GetEntriesRequest(group="g1", remote_id=leader, begin_index=i))
            assert r.code is Code.SUCCESS and r.entries[0].index == i, f"entry {i}: {r}"
            out.append(r.entries[0].body)
        return out
    finally:
        await client.close()


def test_a_three_process_group_elects_replicates_survives_sigkill_and_catches_up(group):
    g = group
    for n in g.ids:
        g.start(n)
    leader, term = asyncio.run(leader_of(g, g.ids))
    assert term >= 1
    first = [b"before kill %d" % i for i in range(30)]
    indexes = asyncio.run(append_all(g, leader, first))
    assert indexes == list(range(indexes[0], indexes[0] + 30))

    g.kill(leader)
    killed_at = time.monotonic()
    survivors = [n for n in g.ids if n != leader]
    new_leader, new_term = asyncio.run(leader_of(g, survivors))
    failover_s = time.monotonic() - killed_at
    assert new_leader != leader and new_term > term and failover_s < 5, (new_leader, new_term, failover_s)
    second = [b"after kill %d" % i for i in range(10)]
    last = asyncio.run(append_all(g, new_leader, second))[-1]
    on_leader = asyncio.run(read_log(g, new_leader, last))
    missing = [b for b in first + second if b not in on_leader]
    assert not missing, f"acknowledged appends missing on the new leader: {missing}"

    g.start(leader)  # the old leader comes back as a follower and catches up

    def caught_up() -> bool:
        return any(e["kind"] == "commit" and e["index"] >= last for e in g.events(leader)[-200:])

    end = time.monotonic() + 10
    while not caught_up() and time.monotonic() < end:
        time.sleep(0.1)
    assert caught_up(), "the restarted member did not catch up"
    assert g.stop_all() == [0, 0, 0]
    finals = {n: json.loads((g.run_dir / f"final-{n}.json").read_text()) for n in g.ids}
    assert finals[new_leader]["role"] == "LEADER" and finals[leader]["role"] == "FOLLOWER", finals
    logs = {n: g.log(n) for n in g.ids}
    assert len({tuple(log) for log in logs.values()}) == 1, f"the members' files differ: {logs}"
    assert [b for _, _, b in logs[leader] if b][-40:] == [b.decode() for b in first + second]


def test_a_bad_dledger_property_is_one_clear_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.conf"
    port = free_port()
    bad.write_text(f"nodeKind=dledger\nselfId=n0\npeers=n0-127.0.0.1:{port}\nrunDir={tmp_path}\n"
                   "heartBeatTimeIntervalMs=fast\n")
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "rocketlab: heart_beat_time_interval_ms: expected an integer, got 'fast'"
    bad.write_text(f"nodeKind=dledger\nselfId=n0\npeers=n0-127.0.0.1:{port}\nrunDir={tmp_path}\nheartbeatMs=5\n")
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip() == "rocketlab: heartbeatMs: unknown DLedger config field"
