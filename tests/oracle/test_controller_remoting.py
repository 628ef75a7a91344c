"""Controller mode across languages over RocketMQ remoting, judged by the real RocketMQ 5.3.3:

* a rocketlab controller group (three ``rocketlab node`` controllers) and a real one (three
  ``ControllerStartup`` JVMs) take the same requests from 5.3.3's own ``NettyRemotingClient`` built with its
  own header classes - next id, apply, register, heartbeat, elect, replica info, alter SyncStateSet, sync
  state data - and answer them alike: codes, response headers and bodies as Java reads them;
* rocketlab brokers (controller mode) register with, heartbeat to and are elected master by the real
  controller group; the master's SyncStateSet grows to both brokers through AlterSyncStateSet, accepted by
  the real controllers, and the master takes puts.

Known differences (the kit's controller core, not the wire): its GET_METADATA_INFO names the leader by its
node id where Java names its address, and a heartbeat's answer carries no "Heart beat success" remark."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from rocketlab.broker.protocol import SendMessageRequest
from rocketlab.net.client import NetClient
from rocketlab.oracle.controllers import JavaControllerGroup, JavaRemotingClient, free_port
from tests.realnodes import NodeProcesses

pytestmark = pytest.mark.realnet
SYNC_STATE_SET = "org.apache.rocketmq.remoting.protocol.body.SyncStateSet"
SEQUENCE = [
    ("getNextBrokerId", {"clusterName": "c", "brokerName": "b"}, None),
    ("applyBrokerId", {"clusterName": "c", "brokerName": "b", "appliedBrokerId": 1,
                       "registerCheckCode": "10.0.0.1:10911;1700000000000"}, None),
    ("registerBroker", {"clusterName": "c", "brokerName": "b", "brokerId": 1, "brokerAddress": "10.0.0.1:10911"}, None),
    ("heartbeat", {"clusterName": "c", "brokerName": "b", "brokerId": 1, "brokerAddr": "10.0.0.1:10911", "epoch": 0,
                   "maxOffset": 0, "confirmOffset": 0, "heartbeatTimeoutMills": 10000, "electionPriority": 1}, None),
    ("electMaster", {"clusterName": "c", "brokerName": "b", "brokerId": 1, "designateElect": False}, None),
    ("getReplicaInfo", {"brokerName": "b"}, None),
    ("alterSyncStateSet", {"brokerName": "b", "masterBrokerId": 1, "masterEpoch": 1},
     {"syncStateSet": [1], "syncStateSetEpoch": 1}),
    ("alterSyncStateSet", {"brokerName": "b", "masterBrokerId": 1, "masterEpoch": 7},
     {"syncStateSet": [1, 2], "syncStateSetEpoch": 1}),
    ("alterSyncStateSet", {"brokerName": "b", "masterBrokerId": 2, "masterEpoch": 1},
     {"syncStateSet": [1, 2], "syncStateSetEpoch": 1}),
    ("getSyncStateData", None, ["b"]),
]


class OurControllers(NodeProcesses):
    def __init__(self, tmp: Path, ids: tuple[str, ...] = ("c0", "c1", "c2")) -> None:
        self.ids = ids
        self.ports = {i: free_port() for i in ids}
        peers = ";".join(f"{i}-127.0.0.1:{p}" for i, p in self.ports.items())
        self.configs = {}
        for i in ids:
            self.configs[i] = tmp / f"{i}.conf"
            self.configs[i].write_text(
                f"nodeKind=controller\nselfId={i}\npeers={peers}\nrunDir={tmp / 'run'}\ncontrollerIds={','.join(ids)}\n"
                "heartBeatTimeIntervalMs=300\nmaxHeartBeatLeak=3\nminVoteIntervalMs=100\nmaxVoteIntervalMs=300\n")
        super().__init__()


def _leader(client: JavaRemotingClient, addresses: dict[str, str], timeout_s: float = 60) -> str:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for c, address in addresses.items():
            try:
                if client.call(address, "getMetadata").get("header", {}).get("isLeader") == "true":
                    return c
            except Exception:  # noqa: BLE001 - still starting
                pass
        time.sleep(0.3)
    raise AssertionError("no leader")


def _answers(client: JavaRemotingClient, address: str) -> list[dict]:
    out = []
    for name, header, body in SEQUENCE:
        r = client.call(address, name, header=header, body=body,
                        body_class=SYNC_STATE_SET if name == "alterSyncStateSet" else None)
        out.append({"request": name, "code": r["code"], "header": r.get("header"), "body": r.get("body")})
    return out


@pytest.fixture(scope="module")
def real(oracle5, tmp_path_factory):
    """A real 5.3.3 controller group and RocketMQ's own client, for the module (each test its broker name)."""
    work = tmp_path_factory.mktemp("real-controllers")
    client = JavaRemotingClient(oracle5, work)
    java = JavaControllerGroup(oracle5, work)
    try:
        java.start_all()
        java.leader(client)
        yield java, client
    finally:
        client.close()
        java.stop_all()


def test_rocketmqs_own_client_gets_the_same_answers_from_our_controllers_as_from_real_ones(tmp_path, real):
    java, client = real
    ours = OurControllers(tmp_path)
    try:
        for c in ours.ids:
            ours.start(c)
        theirs = _answers(client, java.address(java.leader(client)))
        our_addresses = {c: f"127.0.0.1:{p}" for c, p in ours.ports.items()}
        mine = _answers(client, our_addresses[_leader(client, our_addresses)])
    finally:
        ours.stop_all()
    assert [a["code"] for a in theirs[:6]] == [0] * 6 and theirs[6]["code"] == 2013, theirs  # no change: refused
    assert mine == theirs, json.dumps({"ours": mine, "java": theirs}, indent=1)


def test_our_brokers_register_heartbeat_and_are_elected_by_real_controllers(tmp_path, real):
    java, client = real
    brokers = NodeProcesses()
    brokers.ports = {n: free_port() for n in ("n0", "n1")}
    ha = {n: free_port() for n in brokers.ports}
    try:
        leader = java.leader(client)
        peers = ";".join([f"{c}-{java.address(c)}" for c in java.ids] +
                         [f"{n}-127.0.0.1:{p}" for n, p in brokers.ports.items()])
        stream = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ha.items())
        brokers.configs = {}
        for n in brokers.ports:
            brokers.configs[n] = tmp_path / f"{n}.conf"
            brokers.configs[n].write_text(
                f"nodeKind=broker\nenableControllerMode=true\nselfId={n}\npeers={peers}\nrunDir={tmp_path / 'run'}\n"
                f"controllerIds={','.join(java.ids)}\nbrokerName=broker-a\nhaListenPort={ha[n]}\nstreamPeers={stream}\n"
                f"haSendHeartbeatInterval=1000\nmappedFileSizeCommitLog={64 * 1024}\n")
            brokers.start(n)
        end, info = time.monotonic() + 90, {}
        while time.monotonic() < end:
            info = client.call(java.address(leader), "getReplicaInfo", header={"brokerName": "broker-a"})
            if info["code"] == 0 and info.get("header", {}).get("masterBrokerId") and \
                    len(info.get("body", {}).get("syncStateSet", [])) == 2:
                break
            time.sleep(0.5)
        assert info["code"] == 0 and len(info["body"]["syncStateSet"]) == 2, info
        master_id = int(info["header"]["masterBrokerId"])
        events = [json.loads(line) for path in (tmp_path / "run").glob("events-n*.jsonl")
                  for line in path.read_text().splitlines()]
        masters = {e["node"] for e in events if e["kind"] == "role" and e["role"] == "MASTER"}
        assert len(masters) == 1, masters
        (master,) = masters
        assert info["header"]["masterAddress"] == master  # what our broker registered as its address
        state = client.call(java.address(leader), "getSyncStateData", body=["broker-a"])["body"]
        replicas = state["replicasInfoTable"]["broker-a"]
        assert replicas["masterBrokerId"] == master_id and all(r["alive"] for r in replicas["inSyncReplicas"])

        async def put() -> str:
            c = await NetClient(("127.0.0.1", brokers.ports[master])).connect()
            try:
                return (await c.request(SendMessageRequest("TopicTest", b"through real controllers"), 10)).status
            finally:
                await c.close()

        assert asyncio.run(put()) == "PUT_OK"
    finally:
        brokers.stop_all()
