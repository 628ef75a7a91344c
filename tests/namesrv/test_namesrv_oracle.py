"""The kit's name server against the real RocketMQ 4.9.5 one: the same registrations, the same answers.

Both servers get the same REGISTER_BROKER / UNREGISTER_BROKER requests (each broker on a connection of its
own, as a broker has); every answer is decoded and compared field by field: the registration's masterAddr and
haServerAddr, GET_ROUTEINFO_BY_TOPIC (TOPIC_NOT_EXIST and its remark for an unknown topic),
GET_BROKER_CLUSTER_INFO, GET_ALL_TOPIC_LIST_FROM_NAMESERVER. Each comparison is first an assertion about what
the Java server answers (so the scenario shows RocketMQ's behaviour), then the kit must answer the same.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from rocketlab.namesrv.protocol import (
    NAMESRV_FAMILY,
    GetAllTopicListRequest,
    GetBrokerClusterInfoRequest,
    GetRouteInfoRequest,
    GetRouteInfoResponse,
    RegisterBrokerRequest,
    ResponseCode,
    UnregisterBrokerRequest,
    topic_not_exist_remark,
)
from rocketlab.namesrv.route import BrokerData, QueueData, RegisterBrokerBody, TopicRouteData, topic_config
from rocketlab.net.client import NetClient

pytestmark = pytest.mark.realnet

A0, A1, B0, C0, C2 = "127.0.0.1:10911", "127.0.0.1:10921", "127.0.0.1:20911", "127.0.0.1:30911", "127.0.0.1:30931"
BAD_TOPIC = "bad/topic!name"  # TopicValidator would refuse it at a broker; the name server stores what it is sent
SPACED = "with space"  # fine in JSON; in a compressed body TopicConfig.decode splits it and Java fails


def body(counter: int, *topics: tuple, servers: tuple[str, ...] = ()) -> RegisterBrokerBody:
    return RegisterBrokerBody({t[0]: topic_config(*t) for t in topics}, {"counter": counter, "timestamp": 1700000000000 + counter},
                              servers)


A_TOPICS = (("T1", 8, 8, 6), ("T2", 4, 2, 4), ("%RETRY%g", 1, 1, 6))
REGISTRATIONS = [  # (broker key, request): the slave of broker-c first, so its master is unknown then
    ("c2", RegisterBrokerRequest("C2", C2, "broker-c", 2, "127.0.0.1:30932", body(1, ("T4", 16, 16, 6)))),
    ("a0", RegisterBrokerRequest("C1", A0, "broker-a", 0, "127.0.0.1:10912", body(1, *A_TOPICS))),
    ("a1", RegisterBrokerRequest("C1", A1, "broker-a", 1, "127.0.0.1:10922", body(1, ("T9", 1, 1, 6)))),
    ("b0", RegisterBrokerRequest("C1", B0, "broker-b", 0, "127.0.0.1:20912",
                                 body(3, ("T1", 4, 4, 6), ("T3", 2, 2, 2, "SINGLE_TAG", 1),
                                      servers=("127.0.0.1:40000",)))),
    ("c0", RegisterBrokerRequest("C2", C0, "broker-c", 0, "127.0.0.1:30912",
                                 body(1, ("T4", 16, 16, 6), (BAD_TOPIC, 2, 2, 6)), compressed=True)),
    ("c2", RegisterBrokerRequest("C2", C2, "broker-c", 2, "127.0.0.1:30932", body(1, ("T4", 16, 16, 6)))),
]
TOPICS = ("T1", "T2", "T3", "T4", "T9", "%RETRY%g", BAD_TOPIC, SPACED, "D", "NoSuchTopic")


async def observe(clients: dict[str, NetClient], probe: NetClient) -> dict:
    """Every answer a client can get, decoded and order-free."""
    routes = {}
    for topic in TOPICS:
        r = await probe.request(GetRouteInfoRequest(topic))
        routes[topic] = (r.code, r.remark, r.route.decoded() if r.route else None)
    cluster = (await probe.request(GetBrokerClusterInfoRequest())).cluster_info.decoded()
    cluster = {  # this scenario's clusters only: other tests share the servers
        "brokerAddrTable": {n: b for n, b in cluster["brokerAddrTable"].items() if b[0] in ("C1", "C2")},
        "clusterAddrTable": {c: n for c, n in cluster["clusterAddrTable"].items() if c in ("C1", "C2")}}
    topics = sorted(set((await probe.request(GetAllTopicListRequest())).topic_list.topic_list) & set(TOPICS))
    return {"routes": routes, "cluster": cluster, "topics": topics}


async def scenario(port: int) -> list:
    """The registrations, changes and removals; what the server answered after each step."""
    seen: list = []
    clients = {k: await NetClient(("127.0.0.1", port)).connect() for k in ("a0", "a1", "b0", "c0", "c2", "new")}
    probe = await NetClient(("127.0.0.1", port)).connect()
    for key, req in REGISTRATIONS:
        r = await clients[key].request(req)
        seen.append(("register", key, r.code, r.ha_server_addr, r.master_addr))
    seen.append(("state", await observe(clients, probe)))
    d0 = RegisterBrokerRequest("C2", "127.0.0.1:50911", "broker-d", 0, "127.0.0.1:50912", body(1, ("D", 1, 1, 6),
                                                                                          (SPACED, 1, 1, 6)))
    r = await clients["new"].request(dataclasses.replace(d0, compressed=True))
    seen.append(("spaced compressed", r.code, await observe(clients, probe)))
    r = await clients["new"].request(d0)
    seen.append(("spaced", r.code, await observe(clients, probe)))
    a0 = REGISTRATIONS[1][1]
    changed = RegisterBrokerRequest("C1", A0, "broker-a", 0, a0.ha_server_addr, body(1, ("T1", 2, 2, 6)))
    await clients["a0"].request(changed)  # same DataVersion: the topic table is NOT re-read
    seen.append(("same version", await observe(clients, probe)))
    changed = RegisterBrokerRequest("C1", A0, "broker-a", 0, a0.ha_server_addr, body(2, ("T1", 2, 2, 6), ("T2", 4, 4, 6)))
    await clients["a0"].request(changed)
    seen.append(("new version", await observe(clients, probe)))
    bad = RegisterBrokerRequest("C1", B0, "broker-b", 0, "x", body(9, ("T5", 1, 1, 6)), crc_ok=False)
    r = await clients["b0"].request(bad)
    seen.append(("crc", r.code, r.remark, await observe(clients, probe)))
    await clients["a0"].request(UnregisterBrokerRequest("C1", A0, "broker-a", 0))
    seen.append(("unregistered", await observe(clients, probe)))
    promoted = RegisterBrokerRequest("C1", A1, "broker-a", 0, "127.0.0.1:10922", body(5, *A_TOPICS))
    r = await clients["a1"].request(promoted)  # the slave becomes master: <1, A1> goes, <0, A1> comes
    seen.append(("promoted", r.code, r.ha_server_addr, r.master_addr, await observe(clients, probe)))
    await clients["b0"].close()  # broker-b's connection closes: BrokerHousekeepingService drops it
    for _ in range(100):
        state = await observe(clients, probe)
        if "broker-b" not in state["cluster"]["brokerAddrTable"]:
            break
        await asyncio.sleep(0.05)
    seen.append(("channel closed", await observe(clients, probe)))  # again: routes were read before the cluster
    for c in [*clients.values(), probe]:
        await c.close()
    return seen


def test_the_same_registrations_get_the_same_answers_from_the_kit_and_from_rocketmq(both):
    java_port, kit_port = both
    java = asyncio.run(scenario(java_port))
    # What RocketMQ 4.9.5 answers (shown true of the Java server first):
    assert java[0] == ("register", "c2", 0, None, None)  # no master yet
    assert java[2] == ("register", "a1", 0, "127.0.0.1:10912", A0)  # a slave learns its master's HA address
    assert java[5] == ("register", "c2", 0, "127.0.0.1:30912", C0)
    state = java[6][1]
    assert java[7][1] == ResponseCode.SYSTEM_ERROR and "D" not in java[7][2]["topics"]  # nothing stored
    assert java[8][1] == 0 and {"D", SPACED} <= set(java[8][2]["topics"])
    assert state["routes"]["NoSuchTopic"] == (ResponseCode.TOPIC_NOT_EXIST, topic_not_exist_remark("NoSuchTopic"), None)
    assert state["routes"]["T9"][0] == ResponseCode.TOPIC_NOT_EXIST  # a slave's topics are not routes
    t1 = state["routes"]["T1"][2]
    assert {n: (q.read_queue_nums, q.write_queue_nums, q.perm) for n, q in t1["queueDatas"].items()} == {
        "broker-a": (8, 8, 6), "broker-b": (4, 4, 6)}
    assert t1["brokerDatas"]["broker-a"] == ("C1", {0: A0, 1: A1})
    assert state["routes"]["T3"][2]["queueDatas"]["broker-b"].topic_sys_flag == 1
    assert state["routes"][BAD_TOPIC][0] == 0  # compressed body; the illegal name is stored as sent
    assert state["routes"]["T1"][2]["filterServerTable"] == {B0: ["127.0.0.1:40000"]}
    assert state["cluster"]["clusterAddrTable"] == {"C1": ["broker-a", "broker-b"], "C2": ["broker-c"]}
    assert java[9][1]["routes"]["T1"] == state["routes"]["T1"]  # same DataVersion: ignored
    assert java[10][1]["routes"]["T1"][2]["queueDatas"]["broker-a"].read_queue_nums == 2
    assert java[11][1:3] == (ResponseCode.SYSTEM_ERROR, "crc32 not match") and "T5" not in java[11][3]["topics"]
    assert java[12][1]["routes"]["T1"][2]["brokerDatas"]["broker-a"] == ("C1", {1: A1})
    assert java[13][4]["routes"]["T1"][2]["brokerDatas"]["broker-a"] == ("C1", {0: A1})
    assert "broker-b" not in java[14][1]["cluster"]["brokerAddrTable"]
    assert java[14][1]["routes"]["T3"][0] == ResponseCode.TOPIC_NOT_EXIST
    # ... and the kit answers the same, step by step:
    kit = asyncio.run(scenario(kit_port))
    for j, k in zip(java, kit, strict=True):
        assert k == j


def test_a_topic_route_is_written_as_fastjson_or_as_standard_json_as_the_client_version_asks():
    route = TopicRouteData((QueueData("b", 4, 4, 6),), (BrokerData("C", "b", {0: A0, 1: A1}),))
    old = NAMESRV_FAMILY.encode(GetRouteInfoResponse(route, standard_json=False)).body
    new = NAMESRV_FAMILY.encode(GetRouteInfoResponse(route, standard_json=True)).body
    assert b'"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"}' in old
    assert b'"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}' in new
