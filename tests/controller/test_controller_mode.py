"""Controller mode end to end in the simulator: controllers on DLedger, brokers that register, get their
roles, replicate with epochs and fail over (AutoSwitchRoleIntegrationTest's change-master story)."""

from __future__ import annotations

import pytest

from rocketlab.sim import Cluster


def running(c: Cluster) -> bool:
    brokers = [c.node(n) for n in c.live_nodes() if n.startswith("n")]
    return all(b.replicas.state == "RUNNING" for b in brokers) and c.leader() is not None


def sync_state_set(c: Cluster) -> set[int]:
    return c.node(c.leader()).ha_service.get_local_sync_state_set()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_brokers_register_get_roles_and_the_sync_state_set_grows(seed):
    c = Cluster.controller_mode(seed=seed, broker={"allAckInSyncStateSet": True})
    assert c.run_until(running, timeout_ms=60_000)
    master = c.leader()
    ids = sorted(c.node(n).broker_id for n in ("n0", "n1", "n2"))
    assert ids == [1, 2, 3]
    first = c.put(b"first")
    assert first.status == "PUT_OK"
    assert c.run_until(lambda c: sync_state_set(c) == {1, 2, 3}, timeout_ms=30_000)
    puts = [c.put(b"m%d" % i) for i in range(10)]
    assert all(p.status == "PUT_OK" for p in puts)
    top = c.node(master).max_offset
    for n in ("n0", "n1", "n2"):
        assert c.node(n).max_offset == top  # allAck: every member has every acknowledged byte


def test_a_dead_master_is_replaced_and_rejoins_as_a_slave_that_truncates():
    c = Cluster.controller_mode(seed=4, broker={"allAckInSyncStateSet": True})
    assert c.run_until(running, timeout_ms=60_000)
    assert c.run_until(lambda c: sync_state_set(c) == {1, 2, 3}, timeout_ms=30_000)
    old = c.leader()
    old_id = c.node(old).broker_id
    acked = [c.put(b"acked-%d" % i) for i in range(5)]
    assert all(p.status == "PUT_OK" for p in acked)
    end_of_acked = c.node(old).max_offset
    c.crash(old)
    crash_ms = c.now_ms
    assert c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=40_000)
    new = c.leader()
    assert c.now_ms - crash_ms <= 10_000 + 5_000 + 5_000  # heartbeat timeout, scan, notify/sync
    assert c.node(new).term == 2
    assert c.node(new).max_offset >= end_of_acked  # I1: nothing acknowledged under allAck is lost
    assert c.put(b"after").status in ("PUT_OK", "FLUSH_SLAVE_TIMEOUT")  # the set is {new} until slaves rejoin
    c.restart(old)
    assert c.run_until(lambda c: c.node(old).role == "SLAVE" and c.node(old).replicas.state == "RUNNING"
                       and c.node(old).max_offset == c.node(new).max_offset, timeout_ms=60_000)
    assert c.node(old).broker_id == old_id  # read back from its brokerIdentity file
    epochs = [e.epoch for e in c.node(old).epoch_cache.get_all_entries()]
    assert epochs[-1] == 2


def _settled(seed: int = 5, **broker) -> Cluster:
    c = Cluster.controller_mode(seed=seed, broker=broker)
    assert c.run_until(running, timeout_ms=60_000)
    assert c.run_until(lambda c: sync_state_set(c) == {1, 2, 3}, timeout_ms=30_000)
    return c


def test_with_rocketmqs_defaults_a_partitioned_masters_acked_writes_are_recorded_as_lost():
    """allAckInSyncStateSet off (the default): the master acks alone; cut off and replaced, its acked
    messages are not on the new master - the checker records each loss instead of failing the run."""
    c = _settled()
    old = c.leader()
    others = [n for n in ("n0", "n1", "n2") if n != old]
    c.partition([old], [*others, "c0", "c1", "c2"])
    lost = [c.put(b"island-%d" % i) for i in range(3)]
    assert all(p.status == "PUT_OK" for p in lost)
    assert c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=40_000)
    losses = [e for e in c.events if e["kind"] == "acknowledged_message_lost"]
    assert len(losses) == 3 and not c.violations
    assert {e["phy_offset"] for e in losses} == {p.wrote_offset for p in lost}


def test_the_checker_catches_what_it_promises():
    from rocketlab.errors import InvariantViolation
    from rocketlab.ha.epoch_file_cache import EpochEntry
    from rocketlab.store import Message

    # I3: bytes a slave received differ from its master's (here the master's copy changed after shipping)
    c = _settled(allAckInSyncStateSet=True)
    master = c.leader()
    c.runtime.call(master, lambda core, now: core.put_message(Message("TopicTest", b"z" * 50, 0), now)[1])
    log = c.node(master).store.commit_log
    mf = log.mapped_file_queue.get_last_mapped_file()
    mf.mm[log.get_max_offset() - mf.file_from_offset - 10] ^= 0xFF
    with pytest.raises(InvariantViolation, match="I3: slave n. 's log differs|I3: slave"):
        c.run_for(1000)
    # I2: an epoch file that does not grow strictly
    c2 = _settled(seed=6, allAckInSyncStateSet=True)
    b = c2.leader()
    c2.node(b).epoch_cache.epoch_map[9] = EpochEntry(9, 0)
    with pytest.raises(InvariantViolation, match="I2"):
        c2.runtime.call(b, lambda core, now: core.change_to_master(10, {core.broker_id}, now))
    # I5: without #6728's fix a restarted broker starts with consume queues beyond its confirm offset
    from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerCore

    c3 = _settled(seed=7, allAckInSyncStateSet=True)
    slave = next(n for n in ("n0", "n1", "n2") if n != c3.leader())
    for i in range(3):
        c3.put(b"seen-%d" % i)
    c3.run_for(200)
    c3.node(slave).store.store_checkpoint.confirm_phy_offset = 0  # as if the last checkpoint was older
    c3.node(slave).store.store_checkpoint.flush()
    c3.crash(slave)
    original = AutoSwitchBrokerCore._recover_in_controller_mode
    AutoSwitchBrokerCore._recover_in_controller_mode = lambda self, on_disk: None  # the bug: all rebuilt
    try:
        with pytest.raises(InvariantViolation, match="I5"):
            c3.restart(slave)
            c3.run_for(100)
    finally:
        AutoSwitchBrokerCore._recover_in_controller_mode = original
