"""A broker group on DLedger on real TCP: three ``rocketlab node`` processes on 127.0.0.1
(``enableDLegerCommitLog=true``), the master killed with SIGKILL, failover, every acknowledged message
readable from the new master, the old master back as a slave that catches up.

DLedger's timers are shortened (heartbeat 100 ms) so that failover takes about a second. A follower gives
up on its leader after ten missed heartbeats (1 s), not DLedger's three: each node runs on one thread, and
under disk pressure one fsync of its store can take several hundred ms (Java flushes on its own thread), so
three missed 100 ms heartbeats would start elections in the middle of the test (``tests.realnodes`` also
writes back what earlier tests left dirty before it starts anything).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import pytest

from rocketlab.broker.dledger_broker import dledger_broker_codec
from rocketlab.broker.protocol import SendMessageRequest, role_probe
from rocketlab.errors import ConfigError
from rocketlab.net.client import NetClient
from rocketlab.net.node import build_runtime
from tests.realnodes import NodeProcesses, free_port, read_all

pytestmark = pytest.mark.realnet
NODES = ("n0", "n1", "n2")
TIMERS = ("heartBeatTimeIntervalMs=100\nmaxHeartBeatLeak=10\nminVoteIntervalMs=50\nmaxVoteIntervalMs=150\n"
          "voteRoundWaitBaseMs=100\nmaxWaitAckTimeMs=1500\ndispatcherErrorBackoffMs=50\n"
          "pushCommitIntervalMs=200\ncheckAbnormalFutureIntervalMs=200\nfollowerPushTimeoutMs=200\n")


class DLedgerGroup(NodeProcesses):
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ports = {n: free_port() for n in NODES}
        peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        self.configs = {}
        for n in NODES:
            text = (f"nodeKind=broker\nenableDLegerCommitLog=true\nbrokerName=RaftNode00\ndLegerGroup=RaftNode00\n"
                    f"dLegerPeers={peers}\ndLegerSelfId={n}\nselfId={n}\npeers={peers}\nslaveReadEnable=true\n"
                    f"runDir={tmp / 'run'}\nstorePathRootDir={tmp / n}\nmappedFileSizeCommitLog={64 * 1024}\n"
                    + TIMERS)
            path = tmp / f"broker-{n}.conf"
            path.write_text(text)
            self.configs[n] = path
        super().__init__()

    async def client(self, node: str) -> NetClient:
        return await NetClient(("127.0.0.1", self.ports[node]), dledger_broker_codec(), f"test-{node}").connect()




async def _master(group: DLedgerGroup, candidates, timeout_s: float) -> tuple[str, float]:
    """The node that takes a put (a probe, to a topic of its own: a slave refuses puts), and how long it
    took to find it. (A pull cannot tell: 4.9.5 serves pulls on a slave and suggests brokerId 0.)"""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        for node in candidates:
            try:
                client = await group.client(node)
                got = await client.request(SendMessageRequest("RoleProbe", b"?", 0), timeout_s=1)
                await client.close()
            except Exception:  # noqa: BLE001 - a node still starting or just killed
                continue
            if got.status == "PUT_OK":
                return node, time.monotonic() - start
        await asyncio.sleep(0.05)
    raise AssertionError(f"no master among {candidates} within {timeout_s} s")


@pytest.fixture
def group(tmp_path):
    g = DLedgerGroup(tmp_path)
    yield g
    g.stop_all()


def test_sigkill_the_master_fails_over_and_no_acknowledged_message_is_lost(group):
    for node in NODES:
        group.start(node)

    async def produce() -> tuple[str, list[bytes]]:
        master, _ = await _master(group, NODES, 20)
        producer = await group.client(master)
        bodies = [f"message-{i}".encode() * 10 for i in range(200)]
        results = [await producer.request(SendMessageRequest("TopicTest", b, 0)) for b in bodies]
        await producer.close()
        statuses.update(r.status for r in results)
        return master, [b for b, r in zip(bodies, results, strict=True) if r.status == "PUT_OK"]

    statuses: Counter[str] = Counter()
    old, acked = asyncio.run(produce())
    assert len(acked) == 200, f"statuses: {dict(statuses)}; run directory {group.tmp / 'run'}"
    group.kill(old)
    survivors = [n for n in NODES if n != old]

    async def after_failover() -> tuple[str, float, list[bytes]]:
        new, took = await _master(group, survivors, 15)
        consumer = await group.client(new)
        got = await read_all(consumer, len(acked), timeout_s=15)
        late = await consumer.request(SendMessageRequest("TopicTest", b"after failover", 0))
        await consumer.close()
        assert late.status == "PUT_OK" and late.queue_offset == len(acked)
        return new, took, got

    new, took, got = asyncio.run(after_failover())
    print(f"new master {new} found {took:.2f} s after the SIGKILL")
    assert took < 5.0, f"failover took {took:.1f} s"
    assert got == acked
    group.start(old)

    async def rejoined() -> tuple[list[bytes], int]:
        client = await group.client(old)
        got = await read_all(client, len(acked) + 1, timeout_s=15)
        probe = await client.request(role_probe("TopicTest"))
        await client.close()
        return got, probe.answered_as_master

    got_old, as_master = asyncio.run(rejoined())
    assert got_old == acked + [b"after failover"]
    assert not as_master  # a slave again
    group.stop_all()
    roles = [json.loads(line) for line in (group.tmp / "run" / f"events-{new}.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "role" and e["role"] == "MASTER" for e in roles)


def test_node_properties_with_a_self_id_without_digits_or_foreign_peers_fail_at_start(tmp_path):
    base = {"nodeKind": "broker", "enableDLegerCommitLog": "true", "selfId": "n0",
            "peers": "n0-127.0.0.1:1;n1-127.0.0.1:2;n2-127.0.0.1:3", "runDir": str(tmp_path)}
    with pytest.raises(ConfigError, match="dLegerSelfId"):
        build_runtime({**base, "selfId": "node", "peers": "node-127.0.0.1:1;n1-127.0.0.1:2"})
    with pytest.raises(ConfigError, match="differ from the node's peers"):
        build_runtime({**base, "dLegerPeers": "n0-127.0.0.1:1;n1-127.0.0.1:2;n3-127.0.0.1:4"})
    with pytest.raises(ConfigError, match="must equal the node's selfId"):
        build_runtime({**base, "dLegerSelfId": "n1"})
    with pytest.raises(ConfigError, match="heart_beat_time_interval_ms"):
        build_runtime({**base, "heartBeatTimeIntervalMs": "soon"})
