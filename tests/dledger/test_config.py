"""DLedgerConfig: Java names and defaults, profiles and switches, loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger import DLedgerConfig
from rocketlab.dledger.config import (
    DEFAULT_PROFILE,
    PROFILE_SWITCHES,
    members_peers,
    parse_peers,
    parse_properties,
)
from rocketlab.errors import ConfigError


def test_defaults_are_dledger_0_3_1_2():
    c = DLedgerConfig()
    assert (c.group, c.self_id, c.peers, c.store_type) == ("default", "n0", "n0-localhost:20911", "FILE")
    assert (c.heart_beat_time_interval_ms, c.max_heart_beat_leak) == (2000, 3)
    assert (c.min_vote_interval_ms, c.max_vote_interval_ms) == (300, 1000)
    assert (c.max_pending_requests_num, c.max_wait_ack_time_ms, c.max_push_time_out_ms) == (10000, 2500, 1000)
    assert c.mapped_file_size_for_entry_data == 1024 ** 3
    assert c.mapped_file_size_for_entry_index == 32 * 5 * 1024 * 1024
    assert (c.min_take_leadership_vote_interval_ms, c.max_take_leadership_vote_interval_ms) == (30, 100)
    assert (c.max_leadership_transfer_wait_index, c.leadership_transfer_wait_timeout) == (1000, 1000)
    assert (c.is_enable_batch_push, c.max_batch_push_size) == (False, 4096)
    assert (c.flush_file_interval, c.check_point_interval) == (10, 3000)
    assert c.default_path == Path("/tmp/dledgerstore/dledger-n0")


def test_the_default_profile_is_dledger_0_3_1_2_as_rocketmq_ships_it():
    c = DLedgerConfig()
    assert c.profile == "dledger-0.3.1.2" == DEFAULT_PROFILE
    on = {name for name in PROFILE_SWITCHES if getattr(c, name)}
    assert on == {"bounded_push_queue"}  # 0.3.1.1's #282 queue fix is in 0.3.1.2, nothing else


def test_rocketmq_4_9_5_is_an_alias_of_dledger_0_3_1_2():
    c = DLedgerConfig(profile="rocketmq-4.9.5")
    assert c.profile == "dledger-0.3.1.2" and c == DLedgerConfig()


def test_raft_sets_every_switch_and_0_3_2_its_two_fixes_without_0_3_1_2s_queue():
    assert all(getattr(DLedgerConfig(profile="raft"), name) is True for name in PROFILE_SWITCHES)
    c = DLedgerConfig(profile="dledger-0.3.2")
    on = {name for name in PROFILE_SWITCHES if getattr(c, name)}
    assert on == {"step_down_on_bigger_term", "remove_stuck_buffered_push"}  # #247, #251; not #282


def test_an_unknown_profile_lists_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown profile 'safe', expected one of dledger-0\.3\.1\.2, "
                                          r"dledger-0\.3\.2, raft, rocketmq-4\.9\.5 \(= dledger-0\.3\.1\.2\)"):
        DLedgerConfig(profile="safe")


def test_explicit_switch_overrides_profile_and_survives_replace():
    c = DLedgerConfig(profile="rocketmq-4.9.5", remove_stuck_buffered_push=True)
    assert c.remove_stuck_buffered_push is True and c.step_down_on_bigger_term is False
    d = c.replace(profile="raft")
    assert d.step_down_on_bigger_term is True and d.remove_stuck_buffered_push is True
    e = DLedgerConfig().replace(profile="rocketmq-4.9.5")
    assert e.commit_only_current_term is False


def test_peers_id_is_text_before_first_dash():
    peers = parse_peers("n0-my-host.example:40911;n1-127.0.0.1:40912")
    assert peers == {"n0": "my-host.example:40911", "n1": "127.0.0.1:40912"}
    assert DLedgerConfig(peers="n0-[::1]:1;n1-[::1]:2").peer_ids == ("n0", "n1")
    assert members_peers(["a", "b"]) == "a-127.0.0.1:40911;b-127.0.0.1:40912"


@pytest.mark.parametrize("peers, message", [
    ("", "peers"), ("n0", "not id-host:port"), ("n0-localhost", "expected host:port"),
    ("n0-localhost:99999", "1-65535"), ("n0-a:1;n0-b:2", "appears twice"), ("-a:1", "not id-host:port"),
])
def test_malformed_peers_name_the_field(peers, message):
    with pytest.raises(ConfigError, match=message):
        DLedgerConfig(peers=peers)


@pytest.mark.parametrize("changes, field", [
    ({"self_id": "n9"}, "self_id"),
    ({"heart_beat_time_interval_ms": 0}, "heart_beat_time_interval_ms"),
    ({"max_wait_ack_time_ms": -5}, "max_wait_ack_time_ms"),
    ({"min_vote_interval_ms": -1}, "min_vote_interval_ms"),
    ({"min_vote_interval_ms": 500, "max_vote_interval_ms": 400}, "min_vote_interval_ms"),
    ({"min_take_leadership_vote_interval_ms": 200}, "min_take_leadership_vote_interval_ms"),
    ({"store_type": "DISK"}, "store_type"),
    ({"profile": "4.9.5"}, "profile"),
    ({"fsync_policy": "sometimes"}, "fsync_policy"),
    ({"mapped_file_size_for_entry_index": 100}, "mapped_file_size_for_entry_index"),
    ({"mapped_file_size_for_entry_data": 10}, "mapped_file_size_for_entry_data"),
    ({"preferred_leader_ids": "n0;n7"}, "preferred_leader_ids"),
    ({"heart_beat_time_interval_ms": "100"}, "heart_beat_time_interval_ms"),
    ({"enable_leader_elector": 1}, "enable_leader_elector"),
    ({"group": ""}, "group"),
    ({"delete_when": "4am"}, "delete_when"),
    ({"delete_when": "04;25"}, "delete_when"),
    ({"disk_space_ratio_to_force_clean": 1.5}, "disk_space_ratio_to_force_clean"),
    ({"disk_space_ratio_to_check_expired": "0.7"}, "disk_space_ratio_to_check_expired"),
    ({"file_reserved_hours": -1}, "file_reserved_hours"),
])
def test_validation_errors_name_the_field(changes, field):
    with pytest.raises(ConfigError, match=field):
        DLedgerConfig(**({"peers": "n0-a:1;n1-a:2"} | changes))


def test_every_timer_can_be_one_millisecond():
    timers = {f: 1 for f in ("heart_beat_time_interval_ms", "min_vote_interval_ms", "max_vote_interval_ms",
                             "max_wait_ack_time_ms", "max_push_time_out_ms", "flush_file_interval",
                             "check_point_interval", "rpc_timeout_ms", "state_maintainer_interval_ms",
                             "vote_round_wait_base_ms", "push_commit_interval_ms", "follower_push_timeout_ms",
                             "check_abnormal_future_interval_ms", "dispatcher_error_backoff_ms",
                             "leak_check_interval_ms", "check_preferred_leader_interval_ms",
                             "min_take_leadership_vote_interval_ms", "max_take_leadership_vote_interval_ms",
                             "leadership_transfer_wait_timeout")}
    c = DLedgerConfig(**timers)
    assert c.heart_beat_time_interval_ms == 1 and c.state_maintainer_interval_ms == 1


def test_load_accepts_java_and_snake_names_and_converts_strings():
    c = DLedgerConfig.load({"selfId": "n1", "peers": "n0-a:1;n1-b:2", "heartBeatTimeIntervalMs": "150",
                            "enableBatchPush": "true", "preferredLeaderId": "n0", "max_vote_interval_ms": 900,
                            "profile": "rocketmq-4.9.5", "step_down_on_bigger_term": "true"})
    assert c.self_id == "n1" and c.heart_beat_time_interval_ms == 150 and c.is_enable_batch_push is True
    assert c.preferred_leader_id_list == ("n0",) and c.max_vote_interval_ms == 900
    d = DLedgerConfig.load({"diskSpaceRatioToForceClean": "0.9", "deleteWhen": "04;16", "fileReservedHours": "48"})
    assert d.disk_space_ratio_to_force_clean == 0.9 and d.delete_hours == (4, 16) and d.file_reserved_hours == 48
    assert d.disk_full_ratio == 0.95 and DLedgerConfig().disk_full_ratio == pytest.approx(0.90)
    assert c.step_down_on_bigger_term is True and c.commit_only_current_term is False


@pytest.mark.parametrize("values, field", [
    ({"heartBeatTimeIntervalMs": "fast"}, "heart_beat_time_interval_ms"),
    ({"enableLeaderElector": "yes"}, "enable_leader_elector"),
    ({"heartbeatInterval": "1"}, "heartbeatInterval"),
])
def test_load_rejects_bad_values_and_unknown_keys(values, field):
    with pytest.raises(ConfigError, match=field):
        DLedgerConfig.load(values)


def test_properties_file_round_trip(tmp_path: Path):
    c = DLedgerConfig(peers="n0-a:1;n1-b:2;n2-c:3", self_id="n2", heart_beat_time_interval_ms=50,
                      profile="rocketmq-4.9.5", remove_stuck_buffered_push=True, preferred_leader_ids="n1")
    path = tmp_path / "dledger.properties"
    path.write_text("# a comment\n! another\n" + c.to_properties())
    loaded = DLedgerConfig.from_properties(path)
    assert loaded == c
    assert loaded.explicit_switches == frozenset({"remove_stuck_buffered_push"})


def test_properties_syntax_and_errors(tmp_path: Path):
    assert parse_properties("a=1\n b : two \n\n#x\nc 3") == {"a": "1", "b": "two", "c": "3"}
    with pytest.raises(ConfigError, match="cannot read"):
        DLedgerConfig.from_properties(tmp_path / "missing.properties")
    bad = tmp_path / "bad.properties"
    bad.write_text("peers=n0-a:1\nmaxHeartBeatLeak=-2\n")
    with pytest.raises(ConfigError, match="max_heart_beat_leak"):
        DLedgerConfig.from_properties(bad)


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("heart_beat_time_interval_ms", True, "an integer"),  # a bool is not a count of milliseconds
    ("heart_beat_time_interval_ms", "2000", "an integer"),
    ("heart_beat_time_interval_ms", 2000.0, "an integer"),
    ("is_enable_batch_push", 1, "a boolean"),
    ("commit_only_current_term", "yes", "a boolean"),
    ("disk_space_ratio_to_force_clean", True, "a number"),
    ("group", None, "a string"),
    ("preferred_leader_ids", 3, "a string or None"),
])
def test_a_value_of_the_wrong_type_is_named(field, value, expected):
    with pytest.raises(ConfigError, match=f"^{field}: expected {expected}, got "):
        DLedgerConfig(**{field: value})


def test_values_of_the_right_type_pass_including_unset_switches():
    c = DLedgerConfig(disk_space_ratio_to_force_clean=1, commit_only_current_term=None, preferred_leader_ids=None,
                      is_enable_batch_push=True)
    assert c.disk_space_ratio_to_force_clean == 1 and c.is_enable_batch_push is True


def test_load_gives_the_same_config_for_the_same_values_and_still_rejects_look_alikes():
    values = {"group": "g", "selfId": "n0", "peers": "n0-127.0.0.1:1;n1-127.0.0.1:2", "heartBeatTimeIntervalMs": 50}
    first = DLedgerConfig.load(values)
    assert DLedgerConfig.load(dict(values)) is first  # a sweep builds thousands of groups from a few configs
    # True == 1 and hash(True) == hash(1): the cache must not answer a bool with the config of an int
    ok = DLedgerConfig.load({**values, "isEnableBatchPush": True})
    with pytest.raises(ConfigError, match="a boolean"):
        DLedgerConfig.load({**values, "isEnableBatchPush": 1})
    assert ok.is_enable_batch_push is True
    with pytest.raises(ConfigError, match="an integer"):
        DLedgerConfig.load({**values, "heartBeatTimeIntervalMs": True})
    with pytest.raises(ConfigError):  # an unhashable value skips the cache and is still checked
        DLedgerConfig.load({**values, "peers": ["n0-127.0.0.1:1"]})
