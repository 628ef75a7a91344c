"""Classic HA on real TCP: master and slave as separate processes on 127.0.0.1, killed with SIGKILL."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from rocketlab.broker.protocol import SendMessageRequest, broker_codec
from rocketlab.net.client import NetClient
from tests.realnodes import NodeProcesses, free_port, read_all

pytestmark = pytest.mark.realnet
FILE_SIZE = 64 * 1024


class Group(NodeProcesses):
    """A master and a slave broker process, their configs and ports."""

    def __init__(self, tmp: Path, role: str) -> None:
        self.tmp = tmp
        self.ports = {"n0": free_port(), "n1": free_port()}
        self.ha_port = free_port()
        peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        common = f"nodeKind=broker\npeers={peers}\nrunDir={tmp / 'run'}\nmappedFileSizeCommitLog={FILE_SIZE}\n"
        self.configs = {
            "n0": self._write("n0", common + f"selfId=n0\nbrokerRole={role}\nhaListenPort={self.ha_port}\n"
                                              f"storePathRootDir={tmp / 'master'}\n"),
            "n1": self._write("n1", common + "selfId=n1\nbrokerRole=SLAVE\nbrokerId=1\nslaveReadEnable=true\n"
                                              f"haMasterAddress=127.0.0.1:{self.ha_port}\n"
                                              f"storePathRootDir={tmp / 'slave'}\n"),
        }
        super().__init__()

    def _write(self, node: str, text: str) -> Path:
        path = self.tmp / f"{node}.conf"
        path.write_text(text)
        return path




    def client(self, node: str) -> NetClient:
        return NetClient(("127.0.0.1", self.ports[node]), broker_codec(), f"test-{node}")


@pytest.fixture
def group_factory(tmp_path):
    groups: list[Group] = []

    def make(role: str) -> Group:
        group = Group(tmp_path, role)
        groups.append(group)
        return group

    yield make
    for group in groups:
        group.stop_all()


async def _put_all(client: NetClient, bodies: list[bytes]) -> list:
    return [await client.request(SendMessageRequest("TopicTest", body, 0)) for body in bodies]


def test_sigkill_the_sync_master_and_read_every_acknowledged_message_from_the_slave(group_factory):
    group = group_factory("SYNC_MASTER")
    group.start("n0")
    group.start("n1")

    async def scenario():
        producer = await group.client("n0").connect()
        first = await producer.request(SendMessageRequest("TopicTest", b"warm-up", 0))
        deadline = time.monotonic() + 15
        while first.status != "PUT_OK" and time.monotonic() < deadline:  # until the slave is connected
            await asyncio.sleep(0.1)
            first = await producer.request(SendMessageRequest("TopicTest", b"warm-up", 0))
        assert first.status == "PUT_OK"
        bodies = [f"message-{i}".encode() * 20 for i in range(300)]
        results = await _put_all(producer, bodies)
        await producer.close()
        return [b for b, r in zip(bodies, results, strict=True) if r.status == "PUT_OK"]

    acked = asyncio.run(scenario())
    assert len(acked) == 300
    group.kill("n0")

    async def read():
        consumer = await group.client("n1").connect()
        got = await read_all(consumer, expected=len(acked) + 1)
        await consumer.close()
        return got

    got = asyncio.run(read())
    assert set(acked) <= set(got), f"{len(set(acked) - set(got))} acknowledged messages missing on the slave"


def test_sigkill_the_slave_mid_transfer_and_it_resumes_to_a_byte_identical_log(group_factory):
    group = group_factory("ASYNC_MASTER")
    group.start("n0")
    group.start("n1")
    bodies = [bytes([i % 251]) * 2000 for i in range(400)]  # ~800 KB over 13 files of 64 KiB

    async def load(part: list[bytes]) -> set[str]:
        producer = await group.client("n0").connect()
        results = await _put_all(producer, part)
        await producer.close()
        return {r.status for r in results}

    async def read(expected: int) -> list[bytes]:
        consumer = await group.client("n1").connect()
        got = await read_all(consumer, expected=expected, timeout_s=30)
        await consumer.close()
        return got

    assert asyncio.run(load(bodies[:1])) == {"PUT_OK"}
    assert asyncio.run(read(1)) == bodies[:1]  # connected and replicating from offset 0
    assert asyncio.run(load(bodies[1:200])) == {"PUT_OK"}
    group.kill("n1")  # the master is still shipping the last 100 ms of puts
    assert asyncio.run(load(bodies[200:])) == {"PUT_OK"}
    group.start("n1")  # resumes from its own max offset
    assert asyncio.run(read(400)) == bodies
    group.stop_all()
    master_dir, slave_dir = group.tmp / "master" / "commitlog", group.tmp / "slave" / "commitlog"
    assert sorted(f.name for f in master_dir.iterdir()) == sorted(f.name for f in slave_dir.iterdir())
    for master_file in master_dir.iterdir():
        assert (slave_dir / master_file.name).read_bytes() == master_file.read_bytes(), master_file.name
    events = [json.loads(line) for line in (group.tmp / "run" / "events-n0.jsonl").read_text().splitlines()]
    first_report: dict[str, int] = {}
    for event in events:
        if event["kind"] == "ha_report":
            first_report.setdefault(event["slave"], event["offset"])
    assert len(first_report) == 2  # two connections: before and after the SIGKILL
    assert list(first_report.values())[0] == 0 and list(first_report.values())[1] > 0  # resumed, not restarted
