"""The smaller differences issue #32 found between the kit and RocketMQ 5.3.3, each now as 5.3.3 does it
(the election notifications and the consume-queue switch have their own tests in test_controller_group.py
and test_auto_switch_ha_java.py): the caught-up table survives role changes, a truncation lowers the
confirm offset, a restart rebuilds the queue-offset table past the confirm offset (compensateForHA), a
fenced broker sends no periodic heartbeats, the controller leader is the first one named, retention trims
the epoch file's prefix."""

from __future__ import annotations

import random
import time
from pathlib import Path

from rocketlab.broker import auto_switch_broker as asb
from rocketlab.broker.replicas_manager import ReplicasManager, ReplicasManagerConfig
from rocketlab.controller.controller_core import CONTROLLER_GROUP
from rocketlab.controller.protocol import ControllerResponseCode
from rocketlab.controller.wire import ControllerMetadata, ControllerResponse, GetMetadataInfoRequest
from rocketlab.core import OutputBuilder, Request
from rocketlab.sim import Cluster
from tests.controller.test_auto_switch_ha import brokers, call, put, start_group

Code = ControllerResponseCode


def test_the_caught_up_table_survives_a_role_change(tmp_path):
    """Java never clears ``connectionCaughtUpTimeTable``: a master that was a slave in between still finds
    its old slaves' times there, so its first shrink keeps a member that has not reconnected yet (until
    that time is haMaxTimeSlaveNotCatchup old)."""
    c = brokers(tmp_path)
    start_group(c)
    for i in range(3):
        put(c, b"m%d" % i)
    c.run_for(7_000)
    a1 = c.node("a1")
    table = dict(a1.ha_service.connection_caught_up_time_table)
    assert set(table) == {2, 3}
    call(c, "a1", lambda core, now: core.change_to_slave("a2", 2, now, master_unchanged=False))
    assert a1.ha_service.connection_caught_up_time_table == table  # destroyConnections keeps it
    call(c, "a2", lambda core, now: core.change_to_master(2, {2}, now))
    call(c, "a1", lambda core, now: core.change_to_master(3, {1, 2, 3}, now))
    kept = a1.ha_service.maybe_shrink_sync_state_set(c.now_ms)
    assert kept == {1, 2, 3}  # no connection, but a caught-up time: not dropped yet
    c.partition(["a1"], ["a2", "a3"])  # they cannot reconnect: their times grow old
    c.run_for(16_000)
    assert a1.ha_service.maybe_shrink_sync_state_set(c.now_ms) == {1}


def test_a_handshake_truncation_lowers_the_confirm_offset(tmp_path):
    """``CommitLog.truncateDirtyFiles``: a confirm offset beyond the cut comes down to it."""
    c = brokers(tmp_path)
    start_group(c)
    for i in range(10):
        put(c, b"shared-%d" % i)
    c.run_for(7_000)
    shared = c.node("a2").max_offset
    c.partition(["a1"], ["a2", "a3"])
    for i in range(3):
        put(c, b"lost-%d" % i)
    a1 = c.node("a1")
    a1.store.set_confirm_offset(a1.max_offset)  # say its slaves had acknowledged everything
    c.heal()
    call(c, "a2", lambda core, now: core.change_to_master(2, {2}, now))
    call(c, "a1", lambda core, now: core.change_to_slave("a2", 2, now))
    assert c.run_until(lambda c: any(e["kind"] == "ha_truncate" and e["node"] == "a1" for e in c.events),
                       timeout_ms=20_000)
    assert a1.max_offset == shared and a1.store.get_confirm_offset_directly() == shared


class _TornStore:
    """What ``truncate_invalid_msg`` sees of a store: a tail cut at ``cut`` (or nothing behind: -1)."""

    def __init__(self, top: int, cut: int, confirm: int) -> None:
        self.top, self.cut, self.confirm = top, cut, confirm

    def get_max_phy_offset(self) -> int:
        return self.top

    def truncate_invalid_msg(self) -> int:
        if self.cut >= 0:
            self.top = min(self.top, self.cut)
        return self.cut

    def get_confirm_offset_directly(self) -> int:
        return self.confirm

    def set_confirm_offset(self, offset: int) -> None:
        self.confirm = offset


def test_cutting_a_half_written_tail_lowers_the_confirm_offset_only_when_it_cuts():
    torn = _TornStore(top=1000, cut=900, confirm=950)
    assert asb.truncate_invalid_msg(torn) == 900 and torn.confirm == 900
    whole = _TornStore(top=1000, cut=1000, confirm=1000)  # behind, but every record checks out: no cut
    assert asb.truncate_invalid_msg(whole) == 1000 and whole.confirm == 1000
    idle = _TornStore(top=1000, cut=-1, confirm=1000)
    assert asb.truncate_invalid_msg(idle) == -1 and idle.confirm == 1000


def test_a_restart_rebuilds_the_queue_offset_table_past_the_confirm_offset(tmp_path):
    """compensateForHA (#7689's fix): records beyond the confirm offset are in no consume queue, but a new
    master must not hand out their queue offsets again."""
    c = brokers(tmp_path, all_ack_in_sync_state_set=True)
    call(c, "a1", lambda core, now: core.change_to_master(1, {1, 2}, now))  # a2 never connects: nothing confirmed
    for i in range(4):
        put(c, b"unconfirmed-%d" % i)
    c.run_for(4_000)
    a1 = c.node("a1")
    assert a1.store.get_confirm_offset() == 0 and a1.store.get_max_offset_in_queue("T", 0) == 0
    a1.store.flush()
    c.crash("a1")
    c.restart("a1")
    a1 = c.node("a1")
    assert a1.store.get_max_offset_in_queue("T", 0) == 0  # abnormal exit: nothing beyond the confirm offset
    assert a1.store.commit_log.topic_queue_table[("T", 0)] == 4  # but the next queue offset is 4
    call(c, "a1", lambda core, now: core.change_to_master(2, {1}, now))
    assert put(c, b"after").queue_offset == 4


def test_a_fenced_broker_sends_only_its_start_up_heartbeats():
    """BrokerController's heartbeat task returns while the broker is isolated (fenced): a broker that finds
    no master heartbeats once per start-up attempt (every 5 s), not every second."""
    c = Cluster.controller_mode(brokers=3, seed=2, broker={"asyncLearner": True}, raise_on_violation=False)
    assert c.run_until(lambda c: c.leader() is not None and all(
        c.node(n).replicas.state == "RUNNING" for n in ("n0", "n1", "n2")), timeout_ms=60_000)
    master = c.leader()
    slaves = [n for n in ("n0", "n1", "n2") if n != master]
    c.crash(master, slaves[0])  # the set is {master}: nobody else can be elected
    c.run_for(3_000)
    c.crash(slaves[1])
    c.restart(slaves[1])
    start = c.now_ms
    c.run_for(20_000)
    node = c.node(slaves[1])
    assert node.fenced and node.replicas.state == "REGISTER_TO_CONTROLLER_DONE"
    beats = [e["t"] for e in c.events if e["kind"] == "msg_send" and e["src"] == slaves[1]
             and e["dst"] == "c0" and e["msg"] == "BrokerHeartbeatRequestHeader" and e["t"] >= start]
    assert 3 <= len(beats) <= 5  # one per start-up attempt
    assert all(b - a >= 4_000 for a, b in zip(beats, beats[1:], strict=False))


class _Broker:
    role, fenced, ha_service = "SLAVE", True, None


def test_the_controller_leader_is_the_first_one_named(tmp_path: Path):
    """updateControllerMetadata: the first controller answering with a leader address names the leader -
    a follower's answer counts; the broker does not wait for the others (one may be dead)."""
    rm = ReplicasManager("n0", ("c0", "c1", "c2"), ReplicasManagerConfig(), _Broker(), tmp_path / "id",
                         random.Random(1))
    out = OutputBuilder()
    found: list[bool] = []
    rm._update_controller_metadata(lambda ok, now, out2: found.append(ok), out)
    asked = {a.to: a.request_id for a in out.actions if isinstance(a, Request)}
    assert set(asked) == {"c0", "c1", "c2"} and all(isinstance(a.msg, GetMetadataInfoRequest) for a in out.actions)
    rm.on_reply(asked["c2"], ControllerResponse(Code.SUCCESS, header=ControllerMetadata(
        CONTROLLER_GROUP, None, None, False, "")), 5, OutputBuilder())  # a candidate: knows no leader
    assert found == []
    rm.on_reply(asked["c1"], ControllerResponse(Code.SUCCESS, header=ControllerMetadata(
        CONTROLLER_GROUP, "c0", "c0", False, "")), 6, OutputBuilder())  # a follower names c0
    assert found == [True] and rm.leader == "c0"
    rm.on_reply(asked["c0"], None, 3006, OutputBuilder())  # c0 timed out: changes nothing now
    assert found == [True] and rm.leader == "c0"


def test_retention_trims_the_epoch_file_and_a_new_slave_starts_at_the_min_offset(tmp_path):
    """CleanCommitLogService in controller mode: commit-log files deleted -> truncateEpochFilePrefix(min - 1)
    drops the epochs that ended below the new min offset; an empty slave then starts at that min offset
    and ends with the same epoch file as its master."""
    c = brokers(tmp_path, mapped_file_size_commit_log=4096, store_options={"file_reserved_time": 0})
    call(c, "a1", lambda core, now: core.change_to_master(1, {1}, now))
    for epoch in (1, 2, 3):
        if epoch > 1:
            call(c, "a1", lambda core, now, e=epoch: core.change_to_master(e, None, now))
        for i in range(40):
            put(c, b"epoch-%d-%03d" % (epoch, i) + b"x" * 40)
    a1 = c.node("a1")
    before = [(e.epoch, e.start_offset) for e in a1.epoch_cache.get_all_entries()]
    assert [e for e, _ in before] == [1, 2, 3]
    a1.store.flush()
    a1.store.execute_delete_files_manually()
    time.sleep(0.01)  # file ages come from their modification times
    deleted = a1.delete_expired_files(int(time.time() * 1000) + 1000)
    low = a1.store.get_min_phy_offset()
    assert deleted > 0 and low > before[1][1]  # epoch 1 and part of 2 are gone
    after = [(e.epoch, e.start_offset) for e in a1.epoch_cache.get_all_entries()]
    assert after == [entry for entry, nxt in zip(before, [*before[1:], (None, 2**63 - 1)], strict=True)
                     if nxt[1] > low - 1]
    assert after[0][1] <= low  # the first entry kept still covers the min offset
    call(c, "a2", lambda core, now: core.change_to_slave("a1", 3, now))
    assert c.run_until(lambda c: c.node("a2").max_offset == a1.max_offset, timeout_ms=30_000)
    a2 = c.node("a2")
    assert a2.store.get_min_phy_offset() == low
    assert [(e.epoch, e.start_offset) for e in a2.epoch_cache.get_all_entries()] == after
