"""Brokers registering with name servers, real processes on 127.0.0.1: broker.conf files as users write them.

* a kit master and slave register with every name server of their list (one of them down); the slave finds its
  master (SlaveSynchronize and the HA connection) from the name server's answer alone; the routes follow a
  topic's creation and a kill; a DLedger group's route follows its failover;
* the cross pairs: the real 4.9.5 broker registers with the real name server and the kit's at once (its
  ``namesrvAddr`` names both), then the kit's broker does the same: both name servers answer alike.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from rocketlab.broker.protocol import SendMessageRequest
from rocketlab.broker.send_protocol import CreateTopicRequest
from rocketlab.namesrv.protocol import (
    GetAllTopicListRequest,
    GetBrokerClusterInfoRequest,
    GetRouteInfoRequest,
)
from rocketlab.net.client import NetClient
from rocketlab.oracle.servers import Server, free_port, kit_node
from tests.namesrv.javaproc import java_broker

pytestmark = pytest.mark.realnet


def ask(port: int, msg):
    async def go():
        c = await NetClient(("127.0.0.1", port)).connect()
        try:
            return await c.request(msg)
        finally:
            await c.close()
    return asyncio.run(go())


def wait_for(what, predicate, timeout_s: float = 20.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = what()
        if predicate(value):
            return value
        assert time.monotonic() < deadline, f"not reached in {timeout_s} s: {value!r}"
        time.sleep(0.1)


def broker_addrs(port: int, topic: str) -> dict[int, str] | None:
    r = ask(port, GetRouteInfoRequest(topic))
    return None if r.route is None else dict(r.route.broker_datas[0].broker_addrs)


def conf(path: Path, **keys) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in keys.items()))
    return path


def events(run_dir: Path, kind: str) -> list[dict]:
    out = []
    for f in run_dir.glob("events-*.jsonl"):
        out += [e for e in map(json.loads, f.read_text().splitlines()) if e["kind"] == kind]
    return out


def test_a_master_and_a_slave_register_with_every_name_server_and_the_slave_finds_its_master_there(tmp_path,
                                                                                                 kit_namesrv):
    ns, dead = kit_namesrv, free_port()  # a name server that is down takes nothing from the one that is up
    mp, sp = free_port(), free_port()
    common = dict(nodeKind="broker", brokerClusterName="MS", brokerName="ms-a", haSendHeartbeatInterval=500,
                  namesrvAddr=f"127.0.0.1:{dead};127.0.0.1:{ns}", mappedFileSizeCommitLog=1 << 20)
    procs = start_nodes([conf(tmp_path / "m.conf", **common, listenPort=mp, haListenPort=free_port(),
                              storePathRootDir=tmp_path / "m", runDir=tmp_path / "mrun")])
    try:
        wait_for(lambda: ask(ns, GetBrokerClusterInfoRequest()).cluster_info.cluster_addr_table.get("MS"), bool)
        procs += start_nodes([  # the master registered: the slave's first answer names it (else its next one would)
            conf(tmp_path / "s.conf", **common, listenPort=sp, brokerId=1, brokerRole="SLAVE",
                 storePathRootDir=tmp_path / "s", runDir=tmp_path / "srun")])
        wait_for(lambda: ask(ns, GetBrokerClusterInfoRequest()).cluster_info.broker_addr_table["ms-a"].broker_addrs,
                 lambda a: a == {0: f"127.0.0.1:{mp}", 1: f"127.0.0.1:{sp}"})
        assert ask(ns, GetBrokerClusterInfoRequest()).cluster_info.cluster_addr_table["MS"] == ("ms-a",)
        assert ask(ns, GetRouteInfoRequest("MsFresh")).code == 17
        assert ask(mp, SendMessageRequest("MsFresh", b"hello")).status == "PUT_OK"  # the topic is created ...
        wait_for(lambda: broker_addrs(ns, "MsFresh"), lambda a: a == {0: f"127.0.0.1:{mp}", 1: f"127.0.0.1:{sp}"})
        wait_for(lambda: [e for e in events(tmp_path / "mrun", "ha_report") if e["offset"] > 0], bool)  # HA found
        answered = events(tmp_path / "srun", "namesrv_register")
        assert {(e["namesrv"], e["ok"]) for e in answered} == {(f"127.0.0.1:{ns}", True), (f"127.0.0.1:{dead}", False)}
        assert f"127.0.0.1:{mp}" in {e.get("master_addr") for e in answered}
        procs[0].kill()  # the master dies: its connection closes, the name server drops it
        wait_for(lambda: broker_addrs(ns, "MsFresh"), lambda a: a == {1: f"127.0.0.1:{sp}"})
    finally:
        stop_all(procs)


def start_nodes(configs: list[Path]) -> list[Server]:
    """``rocketlab node --config`` for each, started together; returns once every one listens."""
    nodes = [kit_node(config).launch() for config in configs]
    return [node.wait_up(60.0) for node in nodes]


def stop_all(nodes: list[Server]) -> None:
    """SIGTERM every node, then wait for each (SIGKILL after 20 s)."""
    for node in nodes:
        node.terminate()
    for node in nodes:
        node.stop(timeout_s=20)


def everything(port: int, names: tuple[str, ...]) -> dict:
    """What a name server holds of the brokers ``names`` (other tests share it): decoded, order-free."""
    routes = {}
    for t in sorted(ask(port, GetAllTopicListRequest()).topic_list.topic_list):
        r = ask(port, GetRouteInfoRequest(t))
        if r.route is not None and set(r.route.decoded()["brokerDatas"]) & set(names):
            routes[t] = r.route.decoded()
    cluster = ask(port, GetBrokerClusterInfoRequest()).cluster_info.decoded()
    return {"cluster": {"brokerAddrTable": {n: b for n, b in cluster["brokerAddrTable"].items() if n in names},
                        "clusterAddrTable": {c: [n for n in ns if n in names]
                                             for c, ns in cluster["clusterAddrTable"].items() if set(ns) & set(names)}},
            "topics": sorted(routes), "routes": routes}


def created_and_routed(broker_port: int, topic: str, namesrv_ports: tuple[int, ...]) -> bool:
    """UPDATE_AND_CREATE_TOPIC on the broker, then at once (no waiting) the route from each name server:
    ``updateAndCreateTopic`` answers after ``registerIncrementBrokerData`` has reached every name server."""
    assert ask(broker_port, CreateTopicRequest(topic, 2, 2)).ok
    return all(ask(p, GetRouteInfoRequest(topic)).route is not None for p in namesrv_ports)


def test_the_java_broker_and_the_kits_register_alike_with_the_java_name_server_and_the_kits(tmp_path, both):
    jport, kport = both
    names = ("java-a", "kit-a")
    both_addrs = f"127.0.0.1:{jport};127.0.0.1:{kport}"
    jb, procs = None, []
    try:
        bp = free_port(spacing=2)  # the VIP channel (p-2) and HA (p+1) free too
        props = conf(tmp_path / "jb.properties", brokerClusterName="JC", brokerName="java-a", brokerId=0,
                     brokerRole="ASYNC_MASTER", flushDiskType="ASYNC_FLUSH", listenPort=bp, namesrvAddr=both_addrs,
                     storePathRootDir=tmp_path / "jstore", mappedFileSizeCommitLog=10485760, maxHashSlotNum=10000,
                     maxIndexNum=40000)
        jb = java_broker(props, tmp_path / "jb", bp)
        java_side = wait_for(lambda: everything(jport, names), lambda s: "java-a" in s["cluster"]["brokerAddrTable"])
        # what the real broker registers, as the real name server holds it:
        assert java_side["cluster"]["brokerAddrTable"]["java-a"] == ("JC", {0: f"127.0.0.1:{bp}"})
        assert {"TBW102", "SELF_TEST_TOPIC", "JC", "java-a"} <= set(java_side["topics"])
        assert wait_for(lambda: everything(kport, names), lambda s: s == java_side) == java_side  # the kit's: same
        assert created_and_routed(bp, "JavaMade", (jport, kport))  # RocketMQ: registered before it answers
        kp = free_port(spacing=1)  # its HA port kp + 1 free too
        procs = start_nodes([conf(tmp_path / "kb.conf", nodeKind="broker", brokerClusterName="KC",
                                  brokerName="kit-a", listenPort=kp, haListenPort=kp + 1, namesrvAddr=both_addrs,
                                  storePathRootDir=tmp_path / "kstore", mappedFileSizeCommitLog=1 << 20,
                                  runDir=tmp_path / "kb")])
        assert ask(kp, SendMessageRequest("KitTopic", b"x")).status == "PUT_OK"
        java_side = wait_for(lambda: everything(jport, names), lambda s: "KitTopic" in s["topics"])
        assert java_side["routes"]["KitTopic"]["brokerDatas"] == {"kit-a": ("KC", {0: f"127.0.0.1:{kp}"})}
        assert java_side["routes"]["KitTopic"]["queueDatas"]["kit-a"].write_queue_nums == 4
        assert wait_for(lambda: everything(kport, names), lambda s: s == java_side) == java_side
        assert created_and_routed(kp, "KitMade", (jport, kport))  # the kit: the same
    finally:
        stop_all(procs)
        if jb is not None:
            jb.stop()


DLEDGER_TIMERS = dict(heartBeatTimeIntervalMs=100, maxHeartBeatLeak=10, minVoteIntervalMs=50, maxVoteIntervalMs=150,
                      voteRoundWaitBaseMs=100, maxWaitAckTimeMs=1500, dispatcherErrorBackoffMs=50,
                      pushCommitIntervalMs=200, checkAbnormalFutureIntervalMs=200, followerPushTimeoutMs=200)


def test_the_route_follows_a_dledger_failover_the_new_master_registers_as_brokerid_0(tmp_path, kit_namesrv):
    ns = kit_namesrv
    ports = {n: free_port() for n in ("n0", "n1", "n2")}
    peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ports.items())
    procs = start_nodes([conf(tmp_path / f"{n}.conf", nodeKind="broker", enableDLegerCommitLog="true",
                               brokerClusterName="DC", brokerName="RaftNode00", selfId=n, peers=peers,
                               namesrvAddr=f"127.0.0.1:{ns}", storePathRootDir=tmp_path / n,
                               runDir=tmp_path / "run", mappedFileSizeCommitLog=64 * 1024, **DLEDGER_TIMERS)
                          for n in ports])
    by_addr = {f"127.0.0.1:{p}": i for i, p in enumerate(ports.values())}
    try:
        addrs = wait_for(lambda: ask(ns, GetBrokerClusterInfoRequest()).cluster_info.broker_addr_table,
                         lambda t: "RaftNode00" in t and 0 in t["RaftNode00"].broker_addrs)["RaftNode00"].broker_addrs
        master = by_addr[addrs[0]]
        assert ask(ports[f"n{master}"], SendMessageRequest("Routed", b"x")).status == "PUT_OK"
        wait_for(lambda: broker_addrs(ns, "Routed"), lambda a: a is not None and a.get(0) == addrs[0])
        procs[master].kill()
        after = wait_for(lambda: broker_addrs(ns, "Routed"), lambda a: a.get(0) not in (None, addrs[0]), 30)
        assert addrs[0] not in after.values() and by_addr[after[0]] != master  # the dead one is gone
        assert sorted(after) == [0, by_addr[next(a for a in after.values() if a != after[0])] + 1]  # slave id
    finally:
        stop_all(procs)
