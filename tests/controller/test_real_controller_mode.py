"""Controller mode on real TCP: three controllers and three brokers as ``rocketlab node`` processes on
127.0.0.1; the master broker and the controller leader are killed together with SIGKILL; a new master is
elected by the surviving controllers and every message acknowledged under allAckInSyncStateSet is read
back from it. Timers are shortened (controllers' DLedger heartbeat 200 ms, broker heartbeat timeout 3 s,
scans every second) so the failover takes seconds."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketlab.broker.protocol import PullMessageRequest, SendMessageRequest, broker_codec
from rocketlab.controller.protocol import GetReplicaInfoRequestHeader
from rocketlab.controller.wire import ControllerNodeCodec, GetMetadataInfoRequest
from rocketlab.net.client import NetClient
from tests.realnodes import NodeProcesses, free_port

pytestmark = pytest.mark.realnet
CONTROLLERS = ("c0", "c1", "c2")
BROKERS = ("n0", "n1", "n2")


class ControllerModeGroup(NodeProcesses):
    def __init__(self, tmp: Path) -> None:
        self.ports = {n: free_port() for n in (*CONTROLLERS, *BROKERS)}
        ha = {n: free_port() for n in BROKERS}
        peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        stream_peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ha.items())
        common = f"selfId={{n}}\npeers={peers}\nrunDir={tmp / 'run'}\ncontrollerIds={','.join(CONTROLLERS)}\n"
        self.configs = {}
        for n in CONTROLLERS:
            text = common.format(n=n) + ("nodeKind=controller\nscanNotActiveBrokerInterval=1000\n"
                                         "scanInactiveMasterInterval=1000\nheartBeatTimeIntervalMs=200\n"
                                         "maxHeartBeatLeak=3\nminVoteIntervalMs=100\nmaxVoteIntervalMs=300\n")
            self.configs[n] = tmp / f"{n}.conf"
            self.configs[n].write_text(text)
        for n in BROKERS:
            text = common.format(n=n) + (f"nodeKind=broker\nenableControllerMode=true\nhaListenPort={ha[n]}\n"
                                         f"streamPeers={stream_peers}\nallAckInSyncStateSet=true\n"
                                         f"controllerHeartBeatTimeoutMills=3000\nhaSendHeartbeatInterval=1000\n"
                                         f"mappedFileSizeCommitLog={64 * 1024}\n")
            self.configs[n] = tmp / f"{n}.conf"
            self.configs[n].write_text(text)
        super().__init__()

    async def call(self, node: str, msg, timeout_s: float = 2.0):
        client = await NetClient(("127.0.0.1", self.ports[node]), ControllerNodeCodec(), f"test-{node}").connect()
        try:
            return await client.request(msg, timeout_s=timeout_s)
        finally:
            await client.close()

    async def replica_info(self, controllers) -> tuple[str, object] | None:
        for c in controllers:
            try:
                answer = await self.call(c, GetReplicaInfoRequestHeader("broker-a"))
            except Exception:  # noqa: BLE001 - a controller just killed or still electing
                continue
            if answer.code == 0 and answer.header.master_broker_id is not None:
                return c, answer
        return None

    async def controller_leader(self) -> str | None:
        for c in CONTROLLERS:
            try:
                answer = await self.call(c, GetMetadataInfoRequest())
            except Exception:  # noqa: BLE001
                continue
            if answer.header.is_leader:
                return c
        return None


async def _until(probe, timeout_s: float, what: str):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        found = await probe()
        if found:
            return found
        await asyncio.sleep(0.2)
    raise AssertionError(f"no {what} within {timeout_s} s")


def test_killing_the_master_and_the_controller_leader_loses_no_acknowledged_message(tmp_path):
    group = ControllerModeGroup(tmp_path)
    try:
        for n in (*CONTROLLERS, *BROKERS):
            group.start(n)

        async def scenario() -> None:
            async def full_set():
                info = await group.replica_info(CONTROLLERS)
                return info if info and len(info[1].body.sync_state_set) == 3 else None

            _, info = await _until(full_set, 60, "master with all three brokers in sync")
            master = info.header.master_address
            producer = await NetClient(("127.0.0.1", group.ports[master]), broker_codec(), "producer").connect()
            acked = []
            for i in range(20):
                reply = await producer.request(SendMessageRequest("TopicTest", b"msg-%d" % i, 0), timeout_s=5)
                assert reply.status == "PUT_OK", reply
                acked.append(b"msg-%d" % i)
            await producer.close()
            leader = await _until(group.controller_leader, 10, "controller leader")
            group.kill(master)
            group.kill(leader)
            survivors = [c for c in CONTROLLERS if c != leader]

            async def new_master():
                info = await group.replica_info(survivors)
                return info if info and info[1].header.master_address not in (None, master) else None

            started = time.monotonic()
            _, info = await _until(new_master, 60, "new master")
            assert info.header.master_epoch >= 2
            took = time.monotonic() - started
            consumer = await NetClient(("127.0.0.1", group.ports[info.header.master_address]), broker_codec(),
                                       "consumer").connect()
            bodies: list[bytes] = []
            end = time.monotonic() + 20
            while len(bodies) < len(acked) and time.monotonic() < end:
                got = await consumer.request(PullMessageRequest("TopicTest", 0, len(bodies), 32), timeout_s=2)
                if got.status == "FOUND":
                    bodies += [m["body"] for m in got.messages]
                else:
                    await asyncio.sleep(0.1)
            await consumer.close()
            assert bodies == acked, f"read {len(bodies)} of {len(acked)} after a {took:.1f} s failover"

        asyncio.run(scenario())
    finally:
        group.stop_all()
