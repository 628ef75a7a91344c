"""Frames from a broker of another group (bad input): a broker of broker set ``broker-b`` is pointed at the
master of ``broker-a`` (a misconfigured address) and at the controllers of ``broker-a``.

The HA handshake carries only the slave's broker id, not its broker name (as in Java), so the master
cannot refuse the connection. What protects both logs is the epoch check: the foreign broker's epochs
share no (epoch, start offset) with the master's, ``findConsistentPoint`` answers -1 and the slave drops
the connection before it truncates anything; it never acknowledges, so the master's SyncStateSet and
confirm offset are untouched (each refused connection does propose dropping its id from the set, as Java's
``removeConnection`` does). A foreign broker told an epoch older than its own is refused by its HA service
(``changeToSlave``'s epoch check): it is SLAVE in name only, following nobody, as in Java (whose
ReplicasManager ignores the HA service's answer). The controllers keep broker sets apart by name: requests naming an
unknown set get the Java codes and change nothing of ``broker-a``.
"""

from __future__ import annotations

from typing import Any

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.protocol import broker_codec
from rocketlab.controller import DefaultBrokerHeartbeatManager
from rocketlab.controller.protocol import (
    AlterSyncStateSetRequestHeader,
    ControllerResponseCode,
    ElectMasterRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    SyncStateSet,
)
from rocketlab.core import Output
from rocketlab.sim import Cluster
from rocketlab.store import Message
from tests.controller.test_auto_switch_ha import call
from tests.controller.test_replicas_info_manager import ALWAYS, CLUSTER, IP, NAME, Harness

Code = ControllerResponseCode


def two_groups(tmp_path) -> Cluster:
    configs = {"a1": AutoSwitchBrokerConfig(broker_name="broker-a", mapped_file_size_commit_log=64 * 1024),
               "a2": AutoSwitchBrokerConfig(broker_name="broker-a", mapped_file_size_commit_log=64 * 1024),
               "b2": AutoSwitchBrokerConfig(broker_name="broker-b", mapped_file_size_commit_log=64 * 1024)}
    ids = {"a1": 1, "a2": 2, "b2": 2}  # b2 has the same broker id as a2, in its own set
    return Cluster(list(configs), lambda ctx: AutoSwitchBrokerCore(ctx, configs[ctx.node_id], ids[ctx.node_id]),
                   broker_codec(), seed=1, data_dir=tmp_path, latency="uniform:1:3")


def put(c: Cluster, node: str, body: bytes) -> Any:
    return call(c, node, lambda core, now: core.put_message(Message("T", body, 0), now))


def test_a_slave_of_another_group_is_refused_at_the_handshake_and_nothing_is_truncated(tmp_path):
    c = two_groups(tmp_path)
    call(c, "b2", lambda core, now: core.change_to_master(5, {2}, now))  # broker-b's master, epoch 5
    for i in range(8):
        assert put(c, "b2", b"group-b-%d" % i).status == "PUT_OK"
    call(c, "a1", lambda core, now: core.change_to_master(1, {1, 2}, now))
    call(c, "a2", lambda core, now: core.change_to_slave("a1", 1, now))
    for i in range(5):
        put(c, "a1", b"group-a-%d" % i)
    c.run_for(7_000)
    a1, b2 = c.node("a1"), c.node("b2")
    before_b = (b2.max_offset, b2.store.get_commit_log_data(0, b2.max_offset))
    before_a = (a1.max_offset, a1.store.get_commit_log_data(0, a1.max_offset), a1.store.get_confirm_offset())
    assert c.node("a2").max_offset == a1.max_offset > 0
    call(c, "b2", lambda core, now: core.change_to_slave("a1", 1, now))  # an older epoch than its own
    assert (b2.role, b2.ha_client) == ("SLAVE", None)
    assert any(e["kind"] == "role_refused" and e["node"] == "b2" for e in c.events)
    # a newer epoch, with a1 as a new master id (ReplicasManager's masterBrokerId differs): it connects to a1
    call(c, "b2", lambda core, now: core.change_to_slave("a1", 9, now, master_unchanged=False))
    c.run_for(20_000)
    closes = [e for e in c.events if e["kind"] == "stream_close" and "no consistent point" in str(e.get("reason"))]
    assert closes, "the foreign slave's handshake must fail on the epochs"
    assert (b2.max_offset, b2.store.get_commit_log_data(0, b2.max_offset)) == before_b  # nothing truncated
    assert [(e.epoch, e.start_offset) for e in b2.epoch_cache.get_all_entries()] == [(5, 0)]
    assert (a1.max_offset, a1.store.get_commit_log_data(0, a1.max_offset), a1.store.get_confirm_offset()) == before_a
    assert not any(e["kind"] == "ha_truncate" and e.get("slave") == "b2" for e in c.events)
    # Java's removeConnection drops the closed connection's slave id from the local set: the foreign broker
    # shares id 2 with a2, so each refused handshake proposes {1} - an availability cost, not a loss (a
    # smaller set only excludes a2 from elections), and a2's next ack proposes {1, 2} again
    proposals = a1.ha_service.drain_proposals()
    assert proposals and all(p == {1} for p in proposals)
    call(c, "a1", lambda core, now: (core.ha_service.set_sync_state_set({1}), Output()))
    call(c, "b2", lambda core, now: core.change_to_master(10, {2}, now))  # the operator fixes broker-b
    c.run_for(6_000)
    assert {1, 2} in a1.ha_service.drain_proposals()


def test_controllers_keep_broker_sets_apart():
    h = Harness()
    h.mock_meta_data()  # broker-a: master 1, SSS {1,2,3}
    m, before = h.manager, h.replica_info()
    other = "broker-b"
    assert m.register_broker(RegisterBrokerToControllerRequestHeader(CLUSTER, other, 1, IP[0]), ALWAYS
                             ).response_code == Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    assert m.elect_master(ElectMasterRequestHeader.of_broker_trigger(CLUSTER, other, 2), h.policy()
                          ).response_code == Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    assert m.alter_sync_state_set(AlterSyncStateSetRequestHeader(other, 1, 1), SyncStateSet(frozenset({1}), 2),
                                  ALWAYS).response_code == Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    # a heartbeat from broker-b's id 1 does not keep broker-a's id 1 alive
    beats = DefaultBrokerHeartbeatManager()
    beats.on_broker_heartbeat(0, CLUSTER, other, IP[0], 1, 10_000, "b-channel", epoch=9, max_offset=10**9)
    assert beats.get_broker_live_info(CLUSTER, NAME, 1) is None and not beats.is_broker_active(0, CLUSTER, NAME, 1)
    assert h.replica_info() == before and m.sync_state_set_info_table[NAME].sync_state_set == {1, 2, 3}
