"""The name server core and the brokers' registration, sans-IO (times are the inputs' ``now_ms``).

* expiry: the first scan 5 s after start, then every 10 s; a broker silent for more than 120 s goes;
* a closed connection drops the broker registered on it (only that one); a oneway registration counts;
* every broker kind registers at start and re-registers at once when its broker id changes (a DLedger or
  controller-mode broker that becomes master as brokerId 0, demoted with its slave id) or its topics do; a
  classic slave follows the answer's masterAddr and haServerAddr; no ``namesrvAddr``: nothing is sent.
"""

from __future__ import annotations

import pytest

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.broker import BrokerConfig, make_broker
from rocketlab.broker.broker_outer_api import BrokerOuterAPI, registration_config
from rocketlab.broker.dledger_broker import DLedgerBrokerConfig, make_dledger_broker
from rocketlab.broker.send_protocol import AdminResponse, CreateTopicRequest
from rocketlab.core import NodeContext, Output, OutputBuilder, Reply, Request
from rocketlab.errors import ConfigError
from rocketlab.namesrv.namesrv_controller import NamesrvCore
from rocketlab.namesrv.protocol import (
    GetRouteInfoRequest,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode,
)
from rocketlab.namesrv.route import RegisterBrokerBody, topic_config
from rocketlab.net.node import with_own_address
from rocketlab.trace.schema import validate_event

NS = "127.0.0.1:9876"


def register(addr: str, name: str = "b", broker_id: int = 0, topics=("T",)) -> RegisterBrokerRequest:
    body = RegisterBrokerBody({t: topic_config(t, 4, 4) for t in topics}, {"counter": 1, "timestamp": 1})
    return RegisterBrokerRequest("C", addr, name, broker_id, addr + "1", body)


def kinds(out: Output) -> list[str]:
    for i, tr in enumerate(out.trace):
        validate_event({"t": 0, "seq": i, "node": "ns", "kind": tr.kind, **tr.fields})
    return [tr.kind for tr in out.trace]


def route(ns: NamesrvCore, topic: str):
    return ns.process_request("probe", GetRouteInfoRequest(topic), 0, OutputBuilder())


def test_a_broker_silent_for_120_s_expires_at_the_next_scan():
    ns = NamesrvCore(NodeContext("ns", ("ns",), 1))
    ns.on_start(0)
    assert ns.next_deadline_ms() == 5_000
    assert kinds(ns.on_request("conn-1", 1, register("127.0.0.1:1"), 1_000)) == ["broker_registered"]
    ns.on_request("conn-2", 2, register("127.0.0.1:2", "c"), 60_000)
    assert kinds(ns.on_tick(115_000)) == []  # 114 s since the registration
    assert ns.next_deadline_ms() == 125_000
    out = ns.on_tick(125_000)  # 124 s: gone; the other, registered at 60 s, stays
    assert kinds(out) == ["broker_expired"] and out.trace[0].fields["broker_addr"] == "127.0.0.1:1"
    assert route(ns, "T").route.decoded()["brokerDatas"] == {"c": ("C", {0: "127.0.0.1:2"})}
    assert kinds(ns.on_tick(185_000)) == ["broker_expired"]
    assert route(ns, "T").code == ResponseCode.TOPIC_NOT_EXIST


def test_a_closed_connection_drops_the_broker_registered_on_it_and_a_oneway_registration_counts():
    ns = NamesrvCore(NodeContext("ns", ("ns",), 1))
    ns.on_start(0)
    assert kinds(ns.on_message("conn-1", register("127.0.0.1:1", "b", 0), 0)) == ["broker_registered"]
    reply = ns.on_request("conn-2", 7, register("127.0.0.1:2", "b", 1), 0).actions[0]
    assert reply.msg == RegisterBrokerResponse("127.0.0.1:11", "127.0.0.1:1")  # the master's HA address
    assert kinds(ns.on_peer_closed("conn-9", 1)) == []
    out = ns.on_peer_closed("conn-1", 1)
    assert kinds(out) == ["broker_unregistered"] and out.trace[0].fields["reason"] == "channel destroyed"
    assert route(ns, "T").route.decoded()["brokerDatas"] == {"b": ("C", {1: "127.0.0.1:2"})}


def _registrations(out: Output) -> list[RegisterBrokerRequest]:
    return [a.msg for a in out.actions if isinstance(a, Request) and isinstance(a.msg, RegisterBrokerRequest)]


def _ctx(tmp_path, node_id: str = "n0", **options) -> NodeContext:
    return NodeContext(node_id, ("n0", "n1", "n2"), 1, tmp_path / node_id,
                       {"peers": "n0-127.0.0.1:30911;n1-127.0.0.1:30921;n2-127.0.0.1:30931", **options})


def test_a_dledger_broker_registers_as_brokerid_0_when_it_becomes_master_and_with_its_id_when_demoted(tmp_path):
    core = make_dledger_broker(_ctx(tmp_path, namesrvAddr=f"{NS};127.0.0.1:9877", brokerClusterName="DC"),
                               DLedgerBrokerConfig(broker_name="broker-d"))
    first = _registrations(core.on_start(0))
    assert [(r.broker_id, r.broker_addr, r.cluster_name, r.ha_server_addr) for r in first] == [
        (1, "127.0.0.1:30911", "DC", "127.0.0.1:30912")] * 2  # to each name server; n0 is brokerId 1 as slave
    out = OutputBuilder()
    core.change_to_master("SYNC_MASTER", 10, out)
    assert core.next_deadline_ms() <= 10  # at once
    assert [r.broker_id for r in _registrations(core.on_tick(11))] == [0, 0]
    core.change_to_slave(20, OutputBuilder())
    assert [r.broker_id for r in _registrations(core.on_tick(21))] == [1, 1]
    assert _registrations(core.on_tick(22)) == []  # nothing changed
    assert [r.broker_id for r in _registrations(core.on_tick(10_000))] == [1, 1]  # the first periodic one
    assert core.outer_api.next_deadline_ms() == 40_000  # then every registerNameServerPeriod (30 s)
    assert [r.broker_id for r in _registrations(core.on_tick(40_000))] == [1, 1]
    core.on_stop()


def test_a_controller_mode_broker_registers_once_it_has_an_id_and_as_brokerid_0_while_master(tmp_path):
    core = AutoSwitchBrokerCore(_ctx(tmp_path, namesrvAddr=NS), AutoSwitchBrokerConfig(cluster_name="AC"))
    assert _registrations(core.on_start(0)) == []  # FENCED: no id yet
    core.assign_broker_id(3)
    assert [r.broker_id for r in _registrations(core.on_tick(1))] == [3]
    core.change_to_master(1, {3}, 2)
    assert [(r.broker_id, r.cluster_name) for r in _registrations(core.on_tick(3))] == [(0, "AC")]
    core.on_stop()


def test_a_classic_broker_registers_its_topics_and_its_slave_follows_the_name_servers_answer(tmp_path):
    master = make_broker(_ctx(tmp_path, namesrvAddr=NS, listenPort="20911"), BrokerConfig(broker_name="m"))
    (reg,) = _registrations(master.on_start(0))
    assert (reg.broker_addr, reg.ha_server_addr) == ("127.0.0.1:20911", "127.0.0.1:20912")
    system_topics, counter = set(reg.body.topic_config_table), reg.body.data_version["counter"]
    assert "TBW102" in system_topics  # a 4.9.5 broker registers its system topics too
    master.metadata.topic_config_manager.create_topic_if_absent("New", 5)
    (reg,) = _registrations(master.on_tick(master.next_deadline_ms()))
    assert set(reg.body.topic_config_table) == system_topics | {"New"}
    assert reg.body.data_version["counter"] == counter + 1
    slave = make_broker(_ctx(tmp_path, "n1", namesrvAddr=NS),
                        BrokerConfig(broker_name="m", broker_id=1, broker_role="SLAVE"))
    assert slave.ha_client.master_address is None and slave.master_id is None
    request = [a for a in slave.on_start(0).actions if isinstance(a, Request)][0]
    out = slave.on_reply(NS, request.request_id, RegisterBrokerResponse("127.0.0.1:20912", "127.0.0.1:20911"), 1)
    assert slave.ha_client.master_address == "127.0.0.1:20912" and slave.master_id == "127.0.0.1:20911"
    assert [(t.kind, t.fields["ok"]) for t in out.trace] == [("namesrv_register", True)]
    master.on_stop()
    slave.on_stop()


def _replies(out: Output) -> list:
    return [(a.to, a.request_id, a.msg) for a in out.actions if isinstance(a, Reply)]


def test_a_created_topic_is_registered_before_update_and_create_topic_is_answered(tmp_path):
    """``AdminBrokerProcessor.updateAndCreateTopic`` calls ``registerIncrementBrokerData`` (which waits for
    every name server) before it answers: the answer leaves once each name server answered or timed out."""
    core = make_broker(_ctx(tmp_path, namesrvAddr=f"{NS};127.0.0.1:9877"), BrokerConfig(broker_name="m"))
    core.on_start(0)
    out = core.on_request("admin", 5, CreateTopicRequest("Fresh", 2, 2), 1)
    regs = [a for a in out.actions if isinstance(a, Request) and isinstance(a.msg, RegisterBrokerRequest)]
    assert [r.to for r in regs] == [NS, "127.0.0.1:9877"] and _replies(out) == []  # registering, not answered
    assert all("Fresh" in r.msg.body.topic_config_table for r in regs)
    assert _registrations(core.on_tick(2)) == []  # already registered: the change is not sent again
    assert _replies(core.on_reply(NS, regs[0].request_id, RegisterBrokerResponse(), 3)) == []
    assert _replies(core.on_reply("127.0.0.1:9877", regs[1].request_id, None, 6001)) == [  # a timeout counts
        ("admin", 5, AdminResponse(0, "not set any response code"))]
    out = core.on_request("admin", 6, CreateTopicRequest("bad topic"), 7)  # refused: answered at once
    assert _registrations(out) == [] and _replies(out)[0][2].code != 0
    core.on_stop()
    alone = make_broker(_ctx(tmp_path, "n1"), BrokerConfig(broker_name="m"))  # no name server: answered at once
    alone.on_start(0)
    assert _replies(alone.on_request("admin", 1, CreateTopicRequest("Fresh"), 1))[0][2].ok
    alone.on_stop()


def test_a_dledger_and_a_controller_mode_master_also_register_a_created_topic_before_answering(tmp_path):
    dledger = make_dledger_broker(_ctx(tmp_path, namesrvAddr=NS), DLedgerBrokerConfig(broker_name="broker-d"))
    dledger.on_start(0)
    dledger.change_to_master("SYNC_MASTER", 10, OutputBuilder())
    dledger.on_tick(11)  # the registration as brokerId 0
    controlled = AutoSwitchBrokerCore(_ctx(tmp_path, "n1", namesrvAddr=NS), AutoSwitchBrokerConfig(cluster_name="AC"))
    controlled.on_start(0)
    controlled.assign_broker_id(3)
    controlled.change_to_master(1, {3}, 2)
    controlled.on_tick(3)
    for core in (dledger, controlled):
        out = core.on_request("admin", 9, CreateTopicRequest("Fresh"), 20)
        (reg,) = [a for a in out.actions if isinstance(a, Request) and isinstance(a.msg, RegisterBrokerRequest)]
        assert "Fresh" in reg.msg.body.topic_config_table and _replies(out) == []
        assert _replies(core.on_reply(NS, reg.request_id, RegisterBrokerResponse(), 21)) == [
            ("admin", 9, AdminResponse(0, "not set any response code"))]
        core.on_stop()


def test_without_namesrvaddr_nothing_is_sent_and_bad_addresses_are_one_clear_error(tmp_path):
    core = make_broker(_ctx(tmp_path), BrokerConfig())
    assert _registrations(core.on_start(0)) == [] and core.outer_api.next_deadline_ms() is None
    core.on_stop()
    assert registration_config({}, "n0", "b") is None
    with pytest.raises(ConfigError, match="namesrvAddr entry 'nowhere'"):
        registration_config({"namesrvAddr": "nowhere"}, "n0", "b")
    api = BrokerOuterAPI(registration_config({"namesrvAddr": NS, "registerNameServerPeriod": "1000"}, "n0", "b"),
                         lambda: (0, None))
    assert api.config.register_period_ms == 10_000  # Java clamps it to 10-60 s


def test_a_config_without_selfid_and_peers_is_a_node_of_its_own_and_half_of_them_is_one_clear_error():
    assert with_own_address({"nodeKind": "namesrv"}) == {
        "nodeKind": "namesrv", "selfId": "namesrv_9876", "peers": "namesrv_9876-127.0.0.1:9876"}
    assert with_own_address({"nodeKind": "broker", "listenPort": "30911"})["peers"] == "broker_30911-127.0.0.1:30911"
    today = {"selfId": "n0", "peers": "n0-127.0.0.1:1"}
    assert with_own_address(today) is today
    with pytest.raises(ConfigError, match="x.conf: selfId is set but peers is not"):
        with_own_address({"selfId": "n0"}, "x.conf")
    with pytest.raises(ConfigError, match="listenPort=70000 is not a TCP port"):
        with_own_address({"nodeKind": "namesrv", "listenPort": "70000"})
