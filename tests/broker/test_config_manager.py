"""Broker metadata files and SlaveSynchronize's merge rules."""

from __future__ import annotations

import json

import pytest

from rocketlab.broker.config_manager import BrokerMetadata, DataVersion
from rocketlab.broker.protocol import SendMessageRequest, broker_codec
from rocketlab.errors import CodecError, ConfigError
from rocketlab.remoting.command import RemotingCommand, encode_command, parse_frame


def test_tables_persist_as_rocketmq_json_files(tmp_path):
    meta = BrokerMetadata(tmp_path)
    assert meta.topic_config_manager.create_topic_if_absent("TopicTest", now_ms=1000)
    assert not meta.topic_config_manager.create_topic_if_absent("TopicTest", now_ms=2000)
    meta.consumer_offset_manager.commit_offset("g1", "TopicTest", 0, 12)
    meta.consumer_offset_manager.persist()
    topics = json.loads((tmp_path / "topics.json").read_text())
    assert topics["dataVersion"] == {"counter": 1, "timestamp": 1000}
    assert topics["topicConfigTable"]["TopicTest"]["perm"] == 6
    again = BrokerMetadata(tmp_path)
    again.load()
    assert again.consumer_offset_manager.query_offset("g1", "TopicTest", 0) == 12
    assert again.topic_config_manager.data_version == DataVersion(1000, 1)


def test_slave_sync_replaces_on_new_version_and_merges_offsets(tmp_path):
    master, slave = BrokerMetadata(tmp_path / "m"), BrokerMetadata(tmp_path / "s")
    master.topic_config_manager.create_topic_if_absent("A", 5)
    master.consumer_offset_manager.commit_offset("g", "A", 0, 3)
    slave.consumer_offset_manager.commit_offset("g", "B", 1, 9)
    changed = slave.sync_from(master.snapshot())
    assert "topics.json" in changed and "subscriptionGroup.json" not in changed
    assert slave.consumer_offset_manager.offset_table == {"A@g": {0: 3}, "B@g": {1: 9}}
    assert "topics.json" not in slave.sync_from(master.snapshot())  # same DataVersion: untouched
    assert json.loads((tmp_path / "s" / "topics.json").read_text())["topicConfigTable"].keys() == {"A"}


def test_corrupt_metadata_file_is_named(tmp_path):
    (tmp_path / "topics.json").write_text("{nope")
    with pytest.raises(ConfigError, match="topics.json: corrupt JSON"):
        BrokerMetadata(tmp_path).load()


def test_broker_codec_round_trips_and_refuses_what_java_refuses():
    """SEND_MESSAGE with SendMessageRequestHeader (TAGS and KEYS in the properties string, the body as the
    command's body), also as SEND_MESSAGE_V2's one-letter header; a missing @CFNotNull field is refused."""
    codec = broker_codec()
    msg = SendMessageRequest("T", b"\x00\xff", 2, "A", "k", {"p": "v"})
    raw = codec.encode(msg)
    cmd = parse_frame(raw)
    assert cmd.code == 10 and cmd.body == b"\x00\xff" and cmd.field("properties") == "TAGS\x01A\x02KEYS\x01k\x02p\x01v"
    assert codec.decode(raw) == msg
    v2 = RemotingCommand(310, ext_fields={"a": "rocketlab", "b": "T", "c": "TBW102", "d": "4", "e": "2", "f": "0",
                                          "g": "0", "h": "0", "i": cmd.field("properties")}, body=b"\x00\xff")
    assert codec.decode(encode_command(v2)) == msg
    for ext, problem in [({"topic": "T"}, "<producerGroup> is null"),
                         ({**cmd.ext_fields, "queueId": "two"}, "queueId: 'two' is not a valid Integer")]:
        with pytest.raises(CodecError, match=problem):
            codec.decode(encode_command(RemotingCommand(10, ext_fields=ext, body=b"x")))
