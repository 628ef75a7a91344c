"""DefaultElectPolicy's order and quirks, the heartbeat table, the event bytes, ControllerConfig."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.controller import (
    ControllerConfig,
    DefaultBrokerHeartbeatManager,
    DefaultElectPolicy,
    EventSerializer,
)
from rocketlab.controller.elect_policy import compare_live_info, java_int
from rocketlab.controller.events import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    EventType,
    UpdateBrokerAddressEvent,
)
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo
from rocketlab.errors import CodecError, ConfigError

C, N = "c", "b"


def live(broker_id: int, epoch: int, offset: int, priority: int = 2**31 - 1) -> BrokerLiveInfo:
    return BrokerLiveInfo(N, f"a{broker_id}", broker_id, 0, 10_000, None, epoch, offset, priority)


def policy(infos: dict[int, BrokerLiveInfo], alive=lambda c, n, i: True) -> DefaultElectPolicy:
    return DefaultElectPolicy(alive, lambda c, n, i: infos.get(i))


def test_sync_state_set_first_then_all_replicas_only_if_given():
    infos = {1: live(1, 5, 100), 2: live(2, 5, 900)}
    p = policy(infos, alive=lambda c, n, i: i != 1)
    assert p.elect(C, N, {1}, None, 1, None) is None           # clean: only the SyncStateSet
    assert p.elect(C, N, {1}, {1, 2}, 1, None) == 2            # unclean: every replica


def test_old_master_stays_unless_another_broker_is_designated():
    infos = {1: live(1, 1, 10), 2: live(2, 9, 99)}
    assert policy(infos).elect(C, N, {1, 2}, None, 1, None) == 1
    assert policy(infos).elect(C, N, {1, 2}, None, 1, 1) == 1
    assert policy(infos).elect(C, N, {1, 2}, None, 1, 2) == 2
    assert policy(infos, alive=lambda c, n, i: i == 1).elect(C, N, {1, 2}, None, 1, 2) is None  # designated, dead


def test_order_is_epoch_then_offset_then_lower_priority():
    infos = {1: live(1, 2, 10, 5), 2: live(2, 3, 1, 9), 3: live(3, 3, 7, 9), 4: live(4, 3, 7, 1)}
    assert policy(infos).elect(C, N, {1, 2, 3, 4}, None, None, None) == 4
    infos[4] = live(4, 3, 7, 9)  # ties with 3 on every key: the TreeSet keeps the first added (3)
    assert policy(infos).elect(C, N, {1, 2, 3, 4}, None, None, None) == 3
    assert DefaultElectPolicy(lambda c, n, i: True, None).elect(C, N, {4, 2, 3}, None, None, None) == 2  # no info


def test_offset_difference_beyond_2_gib_wraps_as_javas_int_cast():
    """Java compares offsets with (int)(o2 - o1): more than 2^31 bytes apart, the broker behind sorts first."""
    behind = live(2, 1, 0)
    assert java_int(2**31) == -(2**31) and java_int(-(2**31) - 1) == 2**31 - 1 and java_int(2**32 + 5) == 5
    # exactly 2^31 apart both compare as "first": the one added later (2) wins, as in a TreeSet
    for offset, winner in ((2**31 - 1, 1), (2**31, 2), (2**31 + 1, 2), (2**32 - 1, 2), (2**32 + 1, 1)):
        ahead = live(1, 1, offset)
        assert policy({1: ahead, 2: behind}).elect(C, N, {1, 2}, None, None, None) == winner, offset
    assert compare_live_info(live(1, 1, 2**31 + 1), behind) > 0  # "ahead" sorts after


def test_heartbeat_table_moves_forward_only_and_times_out():
    hb = DefaultBrokerHeartbeatManager()
    hb.on_broker_heartbeat(1000, C, N, "a1", 1, 3000, "ch1", epoch=2, max_offset=500, confirm_offset=400)
    info = hb.get_broker_live_info(C, N, 1)
    assert (info.epoch, info.max_offset, info.confirm_offset, info.election_priority) == (2, 500, 0, 2**31 - 1)
    hb.on_broker_heartbeat(2000, C, N, "a1", 1, 3000, "ch1", epoch=1, max_offset=900, confirm_offset=800)
    assert (info.epoch, info.max_offset) == (2, 500)  # an older epoch never wins
    hb.on_broker_heartbeat(2500, C, N, "a1", 1, 3000, "ch1", epoch=2, max_offset=600, confirm_offset=550,
                           election_priority=1)
    assert (info.max_offset, info.confirm_offset, info.election_priority, info.last_update_timestamp) == (600, 550, 1, 2500)
    assert hb.is_broker_active(5500, C, N, 1) and not hb.is_broker_active(5501, C, N, 1)
    assert hb.get_active_brokers_num(5500) == {C: {N: 1}}
    assert hb.scan_not_active_broker(5500) == [] and hb.scan_not_active_broker(5501) == [(C, N, 1)]
    assert hb.get_broker_live_info(C, N, 1) is None


def test_detect_broker_alive_within_one_scan_and_channel_close_at_once():
    """DefaultBrokerHeartbeatManagerTest.testDetectBrokerAlive: the inactive callback comes within 5 s."""
    config = ControllerConfig()
    hb = DefaultBrokerHeartbeatManager()
    hb.on_broker_heartbeat(0, C, N, "a1", 1, 1, "ch1")
    scans = range(2000, 20_000, config.scan_not_active_broker_interval)  # first scan at 2 s
    found = next(t for t in scans if hb.scan_not_active_broker(t))
    assert found <= 5000
    hb.on_broker_heartbeat(0, C, N, "a2", 2, 10_000, "ch2")
    assert hb.on_broker_channel_close("other") is None
    assert hb.on_broker_channel_close("ch2") == (C, N, 2) and hb.get_broker_live_info(C, N, 2) is None


EVENTS = st.one_of(
    st.builds(AlterSyncStateSetEvent, st.text(max_size=6), st.frozensets(st.integers(0, 99), max_size=4)),
    st.builds(ApplyBrokerIdEvent, st.text(max_size=6), st.text(max_size=6), st.text(max_size=9),
              st.integers(1, 2**40), st.text(max_size=12)),
    st.builds(ElectMasterEvent, st.text(max_size=6), st.booleans(), st.one_of(st.none(), st.integers(1, 99))),
    st.builds(CleanBrokerDataEvent, st.text(max_size=6),
              st.one_of(st.none(), st.frozensets(st.integers(1, 99), max_size=3))),
    st.builds(UpdateBrokerAddressEvent, st.text(max_size=6), st.text(max_size=6), st.text(max_size=9),
              st.integers(1, 99)))


@settings(max_examples=300, deadline=None)
@given(EVENTS)
def test_every_event_round_trips_through_its_bytes(event):
    data = EventSerializer().serialize(event)
    assert int.from_bytes(data[:2], "big") == event.event_type
    assert EventSerializer().deserialize(data) == event


def test_event_bytes_are_the_type_id_then_json():
    data = EventSerializer().serialize(ElectMasterEvent("broker-a", True, 2))
    assert data == (b'\x00\x03{"brokerName":"broker-a","eventType":"ELECT_MASTER_EVENT","newMasterBrokerId":2,'
                    b'"newMasterElected":true}')  # fastjson: every getter, sorted, nulls left out
    no_master = EventSerializer().serialize(ElectMasterEvent("broker-a", False))
    assert no_master == b'\x00\x03{"brokerName":"broker-a","eventType":"ELECT_MASTER_EVENT","newMasterElected":false}'
    assert EventSerializer().deserialize(no_master) == ElectMasterEvent("broker-a", False, None)
    assert EventType.UPDATE_BROKER_ADDRESS == 6 and EventType.READ_EVENT == 4


@pytest.mark.parametrize(("data", "problem"), [
    (b"\x00", "shorter than its 2-byte type"),
    (b"\x00\x09{}", "unknown controller event type 9"),
    (b"\x00\x04{}", "unknown controller event type 4"),  # READ_EVENT carries nothing to apply
    (b"\x00\x03{not json", "body is not JSON"),
    (b"\x00\x03[]", "must be a JSON object"),
    (b'\x00\x03{"newMasterElected":true}', "missing field brokerName"),
    (b'\x00\x03{"brokerName":"b","eventType":"APPLY_BROKER_ID_EVENT","newMasterElected":true}',
     "eventType does not match the type id 3"),
    (b'\x00\x03{"brokerName":"b","newMasterElected":"yes","newMasterBrokerId":1}', "must be bool"),
    (b'\x00\x01{"brokerName":"b","newSyncStateSet":[1,"2"]}', "array of broker ids"),
    (b'\x00\x01{"brokerName":"b","newSyncStateSet":[1],"x":1}', "no field(s) ['x']"),
])
def test_bad_event_bytes_are_refused_with_the_reason(data, problem):
    with pytest.raises(CodecError, match=problem.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        EventSerializer().deserialize(data)


def test_controller_config_defaults_and_properties():
    c = ControllerConfig()
    assert (c.scan_not_active_broker_interval, c.scan_inactive_master_interval, c.elect_master_max_retry_count,
            c.enable_elect_unclean_master, c.notify_broker_role_changed) == (5000, 5000, 3, False, True)
    loaded = ControllerConfig.load({"enableElectUncleanMaster": "true", "scanNotActiveBrokerInterval": "1000"})
    assert loaded.enable_elect_unclean_master and loaded.scan_not_active_broker_interval == 1000
    for bad, problem in (({"enableElectUncleanMaster": "maybe"}, "true or false"), ({"nope": 1}, "unknown"),
                         ({"scanInactiveMasterInterval": "x"}, "integer"), ({"electMasterMaxRetryCount": 0}, "positive")):
        with pytest.raises(ConfigError, match=problem):
            ControllerConfig.load(bad)
