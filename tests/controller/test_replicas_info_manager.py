"""ReplicasInfoManager: RocketMQ 5.3.3's ReplicasInfoManagerTest with its exact assertions, and the
checks of alterSyncStateSet / electMaster / registration in Java's order."""

from __future__ import annotations

import pytest

from rocketlab.controller import (
    ControllerConfig,
    DefaultBrokerHeartbeatManager,
    DefaultElectPolicy,
    ReplicasInfoManager,
)
from rocketlab.controller.events import ElectMasterEvent
from rocketlab.controller.protocol import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    SyncStateSet,
)
from rocketlab.controller.protocol import (
    ControllerResponseCode as Code,
)
from rocketlab.errors import CodecError

CLUSTER, NAME = "cluster-a", "broker-set-a"
IP = ["127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"]
NOW = 1_700_000_000_000
ALWAYS = lambda cluster, name, broker_id: True  # noqa: E731


class Harness:
    """The Java test's fixture: a manager (unclean election off) and a heartbeat manager."""

    def __init__(self, **config) -> None:
        self.config = ControllerConfig(**config)
        self.manager = ReplicasInfoManager(self.config)
        self.heartbeats = DefaultBrokerHeartbeatManager()

    def apply(self, result) -> None:
        for event in result.events:
            self.manager.apply_event(event)

    def replicas_info(self, name: str = NAME):
        return self.manager.get_sync_state_data([name], ALWAYS).body[name]

    def replica_info(self, name: str = NAME):
        return self.manager.get_replica_info(GetReplicaInfoRequestHeader(name)).response

    def register_new_broker(self, address: str, expect_id: int, expect_master: int | None) -> None:
        nxt = self.manager.get_next_broker_id(GetNextBrokerIdRequestHeader(CLUSTER, NAME))
        assert nxt.response_code == Code.SUCCESS and nxt.response.next_broker_id == expect_id
        applied = self.manager.apply_broker_id(ApplyBrokerIdRequestHeader(CLUSTER, NAME, expect_id, f"{address};{NOW}"))
        self.apply(applied)
        assert applied.response_code == Code.SUCCESS
        (identity,) = [r for r in self.replicas_info().not_in_sync_replicas if r.broker_id == expect_id]
        assert (identity.broker_name, identity.broker_id, identity.broker_address) == (NAME, expect_id, address)
        registered = self.manager.register_broker(RegisterBrokerToControllerRequestHeader(CLUSTER, NAME, expect_id,
                                                                                           address), ALWAYS)
        self.apply(registered)
        assert registered.response_code == Code.SUCCESS and registered.response.master_broker_id == expect_master

    def broker_elect_master(self, broker_id: int, address: str, first: bool, expect_elected: bool,
                            valid=ALWAYS) -> None:
        before, sync_info = self.replica_info(), self.replicas_info()
        result = self.manager.elect_master(ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, broker_id),
                                           DefaultElectPolicy(valid, None))
        self.apply(result)
        after, response = self.replica_info(), result.response
        if first:
            assert result.response_code == Code.SUCCESS
            assert (response.master_epoch, response.sync_state_set_epoch) == (1, 1)
            assert (response.master_address, response.master_broker_id) == (address, broker_id)
            assert (after.master_address, after.master_epoch, after.master_broker_id) == (address, 1, broker_id)
            return
        if before.master_broker_id is not None and valid(CLUSTER, NAME, before.master_broker_id):
            assert result.response_code == Code.CONTROLLER_MASTER_STILL_EXIST
            assert (response.master_address, response.master_epoch, response.master_broker_id) == (
                before.master_address, before.master_epoch, before.master_broker_id)
            assert after.master_broker_id == before.master_broker_id
            return
        if sync_info.is_exist_in_sync(NAME, broker_id, address) or self.config.enable_elect_unclean_master:
            assert result.response_code == Code.SUCCESS
            assert after.master_epoch == before.master_epoch + 1
            if expect_elected:
                assert (response.master_address, response.master_broker_id) == (address, broker_id)
                assert (after.master_address, after.master_broker_id) == (address, broker_id)
        else:
            assert result.response_code == Code.CONTROLLER_ELECT_MASTER_FAILED

    def alter(self, master: int, master_epoch: int, new_set: set[int], sss_epoch: int) -> None:
        result = self.manager.alter_sync_state_set(AlterSyncStateSetRequestHeader(NAME, master, master_epoch),
                                                   SyncStateSet(frozenset(new_set), sss_epoch), ALWAYS)
        self.apply(result)
        body = self.manager.get_replica_info(GetReplicaInfoRequestHeader(NAME)).body
        assert set(body.sync_state_set) == new_set and body.sync_state_set_epoch == sss_epoch + 1

    def mock_meta_data(self) -> None:
        for i in range(3):
            self.register_new_broker(IP[i], i + 1, None)
        self.broker_elect_master(1, IP[0], True, True)
        self.broker_elect_master(2, IP[1], False, False)
        self.broker_elect_master(3, IP[2], False, False)
        self.alter(1, 1, {1, 2, 3}, 1)

    def heartbeat(self, broker: int, timeout: int, epoch: int, offset: int, priority: int) -> None:
        self.heartbeats.on_broker_heartbeat(NOW, CLUSTER, NAME, IP[broker - 1], broker, timeout, None, epoch, offset,
                                            -1, priority)

    def policy(self) -> DefaultElectPolicy:
        return DefaultElectPolicy(self.heartbeats.alive_predicate(NOW), self.heartbeats.get_broker_live_info)


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_register_broker_success(h):
    h.mock_meta_data()
    info = h.replicas_info()
    assert (info.master_broker_id, info.master_address, info.master_epoch, info.sync_state_set_epoch) == (1, IP[0], 1, 2)
    assert (len(info.in_sync_replicas), len(info.not_in_sync_replicas)) == (3, 0)


def test_register_with_master_exist_resp(h):
    h.register_new_broker(IP[0], 1, None)
    h.register_new_broker(IP[1], 2, None)
    h.broker_elect_master(1, IP[0], True, True)
    h.broker_elect_master(2, IP[1], False, False)
    h.register_new_broker(IP[2], 3, 1)
    h.broker_elect_master(3, IP[2], False, False)
    info = h.replicas_info()
    assert (info.master_broker_id, info.master_address, info.master_epoch, info.sync_state_set_epoch) == (1, IP[0], 1, 1)
    assert (len(info.in_sync_replicas), len(info.not_in_sync_replicas)) == (1, 2)


def test_register_with_old_master_inactive(h):
    h.mock_meta_data()
    h.broker_elect_master(3, IP[2], False, True, lambda c, n, i: i == 3)  # only broker 3 alive
    info = h.replicas_info()
    assert (info.master_broker_id, info.master_address, info.master_epoch, info.sync_state_set_epoch) == (3, IP[2], 2, 3)
    assert (len(info.in_sync_replicas), len(info.not_in_sync_replicas)) == (1, 2)


def test_elect_master_old_master_still_alive(h):
    h.mock_meta_data()
    for broker, epoch, offset in ((1, 1, 1), (2, 1, 2), (3, 1, 3)):
        h.heartbeat(broker, 10_000_000_000, epoch, offset, 0)
    result = h.manager.elect_master(ElectMasterRequestHeader.of_controller_trigger(NAME), h.policy())
    assert result.response_code == Code.CONTROLLER_MASTER_STILL_EXIST


@pytest.mark.parametrize(("beats", "winner"), [
    # (broker, timeout, epoch, offset, priority); broker 1 (the master) has timed out
    ([(1, -10_000, 1, 3, 0), (2, 10**10, 1, 2, 0), (3, 10**10, 0, 3, 0)], 2),  # PreferHigherEpoch
    ([(1, -10_000, 1, 3, 0), (2, 10**10, 1, 2, 0), (3, 10**10, 1, 3, 0)], 3),  # PreferHigherOffsetWhenEpochEquals
    ([(1, -10_000, 1, 3, 3), (2, 10**10, 1, 3, 2), (3, 10**10, 1, 3, 1)], 3),  # PreferHigherPriority...
])
def test_elect_master_prefers_higher_epoch_then_offset_then_priority(h, beats, winner):
    h.mock_meta_data()
    for beat in beats:
        h.heartbeat(*beat)
    result = h.manager.elect_master(ElectMasterRequestHeader.of_controller_trigger(NAME), h.policy())
    r = result.response
    assert (r.master_address, r.master_broker_id, r.master_epoch) == (IP[winner - 1], winner, 2)


def test_elect_master_by_controller_and_admin(h):
    h.mock_meta_data()
    not_one = DefaultElectPolicy(lambda c, n, i: i != 1, None)
    result = h.manager.elect_master(ElectMasterRequestHeader.of_controller_trigger(NAME), not_one)
    r = result.response
    assert r.master_epoch == 2 and r.master_broker_id != 1 and r.master_address != IP[0]
    h.apply(result)
    h.alter(r.master_broker_id, r.master_epoch, {1, 2, 3}, r.sync_state_set_epoch)
    dead_target = h.manager.elect_master(ElectMasterRequestHeader.of_admin_trigger(CLUSTER, NAME, 1), not_one)
    assert dead_target.response_code == Code.CONTROLLER_ELECT_MASTER_FAILED
    same = h.manager.elect_master(ElectMasterRequestHeader.of_admin_trigger(CLUSTER, NAME, r.master_broker_id),
                                  DefaultElectPolicy(ALWAYS, None))
    assert same.response_code == Code.CONTROLLER_MASTER_STILL_EXIST
    designated = h.manager.elect_master(ElectMasterRequestHeader.of_admin_trigger(CLUSTER, NAME, 1),
                                        DefaultElectPolicy(lambda c, n, i: i != r.master_broker_id, None))
    assert designated.response_code == Code.SUCCESS
    d = designated.response
    assert (d.master_broker_id, d.master_address, d.master_epoch) == (1, IP[0], 3)


def test_all_replicas_shutdown_and_restart(h):
    h.mock_meta_data()
    h.alter(1, 1, {1}, 2)
    result = h.manager.elect_master(ElectMasterRequestHeader.of_controller_trigger(NAME),
                                    DefaultElectPolicy(lambda c, n, i: i != 1, None))
    (event,) = result.events
    assert isinstance(event, ElectMasterEvent) and not event.new_master_elected
    assert result.response_code == Code.CONTROLLER_MASTER_NOT_AVAILABLE
    h.apply(result)
    info = h.replica_info()
    assert info.master_address is None and info.master_epoch == 2
    assert h.manager.get_replica_info(GetReplicaInfoRequestHeader(NAME)).body.sync_state_set == {1}  # kept


def test_clean_broker_data(h):
    h.mock_meta_data()
    clean = h.manager.clean_broker_data
    r1 = clean(CleanControllerBrokerDataRequestHeader(CLUSTER, NAME, "1"), ALWAYS)
    assert r1.response_code == Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    r2 = clean(CleanControllerBrokerDataRequestHeader(CLUSTER, NAME, None), ALWAYS)
    assert r2.response_code == Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    assert r2.remark == "Broker broker-set-a is still alive, clean up failure"
    assert clean(CleanControllerBrokerDataRequestHeader(CLUSTER, NAME, "1"), lambda *a: False).response_code == Code.SUCCESS
    assert clean(CleanControllerBrokerDataRequestHeader(CLUSTER, NAME, "1;2;3"), lambda *a: False).response_code == \
        Code.SUCCESS
    r5 = clean(CleanControllerBrokerDataRequestHeader(CLUSTER, "broker12", "1;2;3", True), lambda *a: False)
    assert r5.response_code == Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    assert r5.remark == "Broker broker12 is not existed,clean broker data failure."
    r6 = clean(CleanControllerBrokerDataRequestHeader(None, "broker12", "1;2;3", True), lambda c, n, i: c is not None)
    assert r6.response_code == Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    r7 = clean(CleanControllerBrokerDataRequestHeader(None, NAME, "1;2;3", True), lambda *a: False)
    assert r7.response_code == Code.SUCCESS
    h.apply(r7)
    assert not h.manager.is_contains_broker(NAME)
    bad = clean(CleanControllerBrokerDataRequestHeader(CLUSTER, NAME, "1;x"), lambda *a: False)
    assert bad.response_code == Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA and "brokerControllerIdsToClean" in bad.remark


def test_serialize_round_trips_both_tables_and_rejects_bad_bytes(h):
    h.mock_meta_data()
    data = h.manager.serialize()
    other = ReplicasInfoManager(h.config)
    other.deserialize_from(data)
    assert other.replica_info_table == h.manager.replica_info_table
    assert other.sync_state_set_info_table == h.manager.sync_state_set_info_table
    for cut in (3, len(data) // 2, len(data) - 1):
        with pytest.raises(CodecError, match="truncated"):
            ReplicasInfoManager().deserialize_from(data[:cut])
    with pytest.raises(CodecError, match="after the two tables"):
        ReplicasInfoManager().deserialize_from(data + b"\0")


# ---------------------------------------------------------------------- beyond the Java test
def test_alter_sync_state_set_checks_in_javas_order(h):
    h.mock_meta_data()  # master 1, masterEpoch 1, SSS {1,2,3} at epoch 2

    def alter(master=1, master_epoch=1, new=frozenset({1, 2}), epoch=2, alive=ALWAYS, name=NAME):
        return h.manager.alter_sync_state_set(AlterSyncStateSetRequestHeader(name, master, master_epoch),
                                              SyncStateSet(frozenset(new), epoch), alive).response_code

    assert alter(name="nope") == Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    assert alter(new={1, 2, 3}) == Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED       # same as now
    assert alter(master=2, master_epoch=0, epoch=0) == Code.CONTROLLER_INVALID_MASTER  # master first
    assert alter(master_epoch=0, epoch=0) == Code.CONTROLLER_FENCED_MASTER_EPOCH      # then masterEpoch
    assert alter(epoch=1) == Code.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
    assert alter(new={1, 4}) == Code.CONTROLLER_INVALID_REPLICAS
    assert alter(alive=lambda c, n, i: i != 2) == Code.CONTROLLER_BROKER_NOT_ALIVE
    assert alter(new={2, 3}) == Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED           # lacks the master
    ok = h.manager.alter_sync_state_set(AlterSyncStateSetRequestHeader(NAME, 1, 1), SyncStateSet(frozenset({1, 2}), 2),
                                        ALWAYS)
    assert ok.response_code == Code.SUCCESS and ok.response.new_sync_state_set_epoch == 3
    assert h.manager.sync_state_set_info_table[NAME].sync_state_set == {1, 2, 3}  # nothing changes until applied


def test_validation_makes_events_and_every_replica_that_applies_them_agrees():
    """The controller's write path: the leader validates, the events are committed, every controller
    applies them blindly - a manager fed only the committed events ends in the leader's state."""
    leader, committed = Harness(), []
    apply = leader.apply

    def commit_then_apply(result):
        committed.extend(result.events)
        apply(result)

    leader.apply = commit_then_apply  # type: ignore[method-assign]
    leader.mock_meta_data()
    leader.apply(leader.manager.elect_master(ElectMasterRequestHeader.of_controller_trigger(NAME),
                                             DefaultElectPolicy(lambda c, n, i: i == 3, None)))
    follower = ReplicasInfoManager()
    for event in committed:
        follower.apply_event(event)
    assert follower.replica_info_table == leader.manager.replica_info_table
    assert follower.sync_state_set_info_table == leader.manager.sync_state_set_info_table
    assert follower.sync_state_set_info_table[NAME].master_broker_id == 3


def test_registration_refusals():
    h = Harness()
    m = h.manager
    assert m.apply_broker_id(ApplyBrokerIdRequestHeader(CLUSTER, NAME, 2, f"{IP[0]};1")).response_code == \
        Code.CONTROLLER_BROKER_ID_INVALID  # an unknown set takes only id 1
    assert m.register_broker(RegisterBrokerToControllerRequestHeader(CLUSTER, NAME, 1, IP[0]), ALWAYS).response_code == \
        Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    assert m.get_replica_info(GetReplicaInfoRequestHeader(NAME)).response_code == Code.CONTROLLER_BROKER_METADATA_NOT_EXIST
    assert m.elect_master(ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 1),
                          DefaultElectPolicy()).response_code == Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    h.register_new_broker(IP[0], 1, None)
    taken = m.apply_broker_id(ApplyBrokerIdRequestHeader(CLUSTER, NAME, 1, f"{IP[1]};2"))
    assert taken.response_code == Code.CONTROLLER_BROKER_ID_INVALID
    again = m.apply_broker_id(ApplyBrokerIdRequestHeader(CLUSTER, NAME, 1, f"{IP[0]};{NOW}"))
    assert again.response_code == Code.SUCCESS  # the same broker retrying with its own check code
    moved = m.register_broker(RegisterBrokerToControllerRequestHeader(CLUSTER, NAME, 1, "10.0.0.9:9000"), ALWAYS)
    h.apply(moved)
    assert m.replica_info_table[NAME].get_broker_address(1) == "10.0.0.9:9000"
    assert m.register_broker(RegisterBrokerToControllerRequestHeader(CLUSTER, NAME, 7, IP[0]), ALWAYS).response_code == \
        Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED


def test_unclean_election_takes_a_replica_outside_the_sync_state_set():
    for unclean, code, master in ((False, Code.CONTROLLER_ELECT_MASTER_FAILED, 1), (True, Code.SUCCESS, 2)):
        h = Harness(enable_elect_unclean_master=unclean)
        h.register_new_broker(IP[0], 1, None)
        h.register_new_broker(IP[1], 2, None)
        h.broker_elect_master(1, IP[0], True, True)  # SSS {1}
        result = h.manager.elect_master(ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 2),
                                        DefaultElectPolicy(lambda c, n, i: i == 2, None))
        h.apply(result)
        assert result.response_code == code and h.replica_info().master_broker_id == master


def test_scan_need_reelect_finds_sets_with_a_dead_master_and_a_live_replica(h):
    h.mock_meta_data()
    assert h.manager.scan_need_reelect_broker_sets(ALWAYS) == []
    assert h.manager.scan_need_reelect_broker_sets(lambda c, n, i: i != 1) == [NAME]
    assert h.manager.scan_need_reelect_broker_sets(lambda c, n, i: False) == []  # nobody alive to elect
