"""AutoSwitch HA between controller-mode brokers, roles given by the test (AutoSwitchHATest's stories):
handshake and first ack, expansion of the SyncStateSet, allAckInSyncStateSet, the synchronizing union,
a new master at a new epoch and an old master that truncates to the consistent point and resyncs."""

from __future__ import annotations

from typing import Any

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.protocol import broker_codec
from rocketlab.core import Output
from rocketlab.sim import Cluster
from rocketlab.store import Message

IDS = {"a1": 1, "a2": 2, "a3": 3}


def brokers(tmp_path, seed: int = 1, **config: Any) -> Cluster:
    cfg = AutoSwitchBrokerConfig(**{"mapped_file_size_commit_log": 64 * 1024, **config})
    return Cluster(list(IDS), lambda ctx: AutoSwitchBrokerCore(ctx, cfg, IDS[ctx.node_id]), broker_codec(),
                   seed=seed, data_dir=tmp_path, latency="uniform:1:3")


def call(c: Cluster, node: str, fn) -> Any:
    result: dict[str, Any] = {}

    def run(core: AutoSwitchBrokerCore, now: int) -> Output:
        value = fn(core, now)
        if isinstance(value, tuple):
            result["value"], out = value
            return out
        return value

    c.runtime.call(node, run)
    return result.get("value")


def put(c: Cluster, body: bytes, node: str = "a1"):
    return call(c, node, lambda core, now: core.put_message(Message("T", body, 0), now))


def start_group(c: Cluster, master: str = "a1", epoch: int = 1) -> None:
    call(c, master, lambda core, now: core.change_to_master(epoch, {IDS[master]}, now))
    for n in IDS:
        if n != master:
            call(c, n, lambda core, now: core.change_to_slave(master, epoch, now))


def adopt_proposals(c: Cluster, master: str = "a1") -> set[int]:
    """What the controller does with the master's proposals: the first is accepted (and set on the master);
    later ones were made against the old set's epoch and are refused (CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH)."""
    core = c.node(master)
    proposals = core.ha_service.drain_proposals()
    if proposals:
        call(c, master, lambda core, now: (core.ha_service.set_sync_state_set(proposals[0]), Output()))
    return core.ha_service.get_sync_state_set()


def test_fenced_until_a_role_then_puts_replicate_after_the_first_ack(tmp_path):
    c = brokers(tmp_path)
    assert put(c, b"early").status == "SERVICE_NOT_AVAILABLE"  # fenced: no role yet
    start_group(c)
    handles = [put(c, b"m%d" % i) for i in range(20)]
    assert all(h.status == "PUT_OK" for h in handles)  # inSyncReplicas=1: acked by the master alone
    top = c.node("a1").max_offset
    c.run_for(4000)
    assert c.node("a2").max_offset == 0  # the first ack waits haSendHeartbeatInterval after the handshake
    c.run_for(2500)
    assert c.node("a2").max_offset == c.node("a3").max_offset == top
    assert [(e.epoch, e.start_offset) for e in c.node("a2").epoch_cache.get_all_entries()] == [(1, 0)]
    for n in ("a2", "a3"):
        assert c.node(n).store.get_commit_log_data(0, top) == c.node("a1").store.get_commit_log_data(0, top)


def test_caught_up_slaves_are_proposed_and_all_ack_waits_for_every_member(tmp_path):
    c = brokers(tmp_path, all_ack_in_sync_state_set=True)
    start_group(c)
    assert put(c, b"alone").status == "PUT_OK"  # a set of one: done at once
    c.run_for(7000)
    first = adopt_proposals(c)
    assert len(first) == 2  # the two slaves proposed separately: {1, 2} and {1, 3}; one is accepted
    c.run_for(5100)  # the other slave's next report (every 5 s) proposes it again, now with both
    assert adopt_proposals(c) == {1, 2, 3}
    handle = put(c, b"needs-all")
    assert handle.status is None
    c.run_for(100)
    assert handle.status == "PUT_OK"
    master = c.node("a1")
    assert master.store.get_confirm_offset() == master.max_offset  # every member acked everything
    c.crash("a3")  # its stream closes: the master proposes {1,2} but keeps waiting for 3 until it is set
    c.run_for(10)
    assert master.ha_service.is_synchronizing_sync_state_set and master.ha_service.get_sync_state_set() == {1, 2, 3}
    waiting = put(c, b"union")
    c.run_for(3100)
    assert waiting.status == "FLUSH_SLAVE_TIMEOUT"
    assert adopt_proposals(c) == {1, 2}
    assert put(c, b"two").status is None
    c.run_for(100)
    assert master.ha_service.in_sync_replicas_nums() == 2


def test_new_master_at_a_new_epoch_and_the_old_one_truncates_its_unreplicated_tail(tmp_path):
    c = brokers(tmp_path)
    start_group(c)
    for i in range(10):
        put(c, b"shared-%d" % i)
    c.run_for(7000)
    shared = c.node("a2").max_offset
    assert shared == c.node("a1").max_offset > 0
    c.partition(["a1"], ["a2", "a3"])
    for i in range(5):
        assert put(c, b"lost-%d" % i).status == "PUT_OK"  # acked by a1 alone (inSyncReplicas=1)
    assert c.node("a1").max_offset > shared
    c.crash("a1")
    c.heal()
    call(c, "a2", lambda core, now: core.change_to_master(2, {2}, now))
    call(c, "a3", lambda core, now: core.change_to_slave("a2", 2, now))
    for i in range(3):
        put(c, b"new-%d" % i, node="a2")
    c.restart("a1")
    call(c, "a1", lambda core, now: core.change_to_slave("a2", 2, now))
    c.run_for(8000)
    old, new = c.node("a1"), c.node("a2")
    assert any(e["kind"] == "ha_truncate" and e["node"] == "a1" and e["offset"] == shared for e in c.events)
    assert old.max_offset == new.max_offset
    assert old.store.get_commit_log_data(0, new.max_offset) == new.store.get_commit_log_data(0, new.max_offset)
    assert [(e.epoch, e.start_offset) for e in old.epoch_cache.get_all_entries()] == [(1, 0), (2, shared)]


def test_a_stale_epoch_is_refused_by_the_ha_service_and_the_role_changes_anyway(tmp_path):
    """AutoSwitchHAService.changeToSlave/changeToMaster refuse an epoch below the epoch file's last;
    ReplicasManager ignores the answer: the broker is SLAVE (or SYNC_MASTER with brokerId 0) all the same,
    its HA side untouched."""
    c = brokers(tmp_path)
    call(c, "a1", lambda core, now: core.change_to_master(3, {1}, now))
    call(c, "a1", lambda core, now: core.change_to_slave("a2", 2, now))
    a1 = c.node("a1")
    assert (a1.role, a1.master_id, a1.ha_client, a1.broker_config_id) == ("SLAVE", "a2", None, 1)
    assert [e["epoch"] for e in c.events if e["kind"] == "role_refused"] == [2]
    assert [(e.epoch, e.start_offset) for e in a1.epoch_cache.get_all_entries()] == [(3, 0)]
    call(c, "a1", lambda core, now: core.change_to_master(2, {1}, now))
    assert (a1.role, a1.broker_config_id) == ("MASTER", 0)
    assert [e["epoch"] for e in c.events if e["kind"] == "role_refused"] == [2, 2]
    assert [(e.epoch, e.start_offset) for e in a1.epoch_cache.get_all_entries()] == [(3, 0)]
