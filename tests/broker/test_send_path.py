"""The send path of a broker core, sans-IO: what a send keeps, topic rules and auto-creation, batches,
CONSUMER_SEND_MSG_BACK to the retry topic and the DLQ, ScheduleMessageService and delayOffset.json, and bad
input. The same requests against the real 4.9.5 broker are in ``test_send_oracle.py``."""

from __future__ import annotations

import re
import zlib

import pytest

from rocketlab.broker.broker import BrokerConfig, BrokerCore
from rocketlab.broker.config_manager import DelayOffsetManager
from rocketlab.broker.protocol import SendMessageRequest, broker_codec
from rocketlab.broker.send_protocol import ConsumerSendMsgBackRequest, CreateTopicRequest
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.broker.topic_validator import validate_topic
from rocketlab.core import NodeContext
from rocketlab.errors import CodecError, ConfigError
from rocketlab.remoting.command import RemotingCommand, encode_command
from rocketlab.sim import Cluster
from rocketlab.store.message import Message, MessageSysFlag
from rocketlab.store.message_batch import pack_messages
from rocketlab.store.message_codec import decode_message

CLIENT = "127.0.0.1:40001"


def _broker(tmp_path, send: SendConfig | None = None, role: str = "ASYNC_MASTER", **store) -> BrokerCore:
    config = BrokerConfig(broker_role=role, broker_id=0 if role != "SLAVE" else 1,
                          ha_master_address=None if role != "SLAVE" else "n0", master_id="n0",
                          mapped_file_size_commit_log=1024 * 1024,
                          store_options={"listen_port": 30911, **store},
                          send=send or SendConfig(message_delay_level="1s 2s 3s 4s"))
    core = BrokerCore(NodeContext("n0", ("n0",), 7, tmp_path), config)
    core.on_start(0)
    return core


def _answer(out):
    replies = [a.msg for a in out.actions if type(a).__name__ == "Reply"]
    assert len(replies) == 1, out.actions
    return replies[0]


def _records(core, topic, queue_id=0):
    got = core.store.get_message(topic, queue_id, offset=0, max_msg_nums=64)
    return [decode_message(r) for r in got.message_buffer_list]


def _tick_until(core, until_ms, step=50):
    events = []
    now = core.now_ms
    while now < until_ms:
        deadline = core.next_deadline_ms()
        now = min(until_ms, max(now + 1, deadline if deadline is not None else until_ms))
        events += [(now, e.kind, e.fields) for e in core.on_tick(now).trace]
    return events


# ---------------------------------------------------------------------------------------- what a send keeps
def test_a_send_keeps_sysflag_flag_born_time_born_host_and_the_broker_s_own_store_host(tmp_path):
    core = _broker(tmp_path)
    body = zlib.compress(b"x" * 5000)
    req = SendMessageRequest("T1", body, 1, born_timestamp=1_700_000_000_123, sys_flag=MessageSysFlag.COMPRESSED_FLAG,
                             flag=9, v2=True, properties_string="UNIQ_KEY\x01AB\x02WAIT\x01true\x02TAGS\x01t\x02c\x01红")
    answer = _answer(core.on_request(CLIENT, 1, req, 10))
    assert answer.status == "PUT_OK" and answer.queue_id == 1
    assert answer.msg_id.startswith("7F000001" + f"{30911:08X}")  # the offset message id names this broker
    (m,) = _records(core, "T1", 1)
    assert (m.sys_flag, m.flag, m.born_timestamp, m.body) == (1, 9, 1_700_000_000_123, body)
    assert zlib.decompress(m.body) == b"x" * 5000  # what a consumer does with COMPRESSED_FLAG
    assert m.born_host == ("127.0.0.1", 40001) and m.store_host == ("127.0.0.1", 30911)
    assert m.properties == {"UNIQ_KEY": "AB", "TAGS": "t", "c": "红", "CLUSTER": "DefaultCluster"}  # WAIT not kept
    core.on_stop()


def test_a_client_that_is_no_address_is_born_at_127_0_0_1_port_0(tmp_path):
    core = _broker(tmp_path)
    assert _answer(core.on_request("client", 1, SendMessageRequest("T1", b"x", 0), 10)).status == "PUT_OK"
    assert _records(core, "T1")[0].born_host == ("127.0.0.1", 0)
    core.on_stop()


# ---------------------------------------------------------------------------------------- topics
@pytest.mark.parametrize(("topic", "remark"), [
    ("", "The specified topic is blank."),
    ("  ", "The specified topic is blank."),
    ("a b", "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"),
    ("主题", "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"),
    ("t" * 128, "The specified topic is longer than topic max length."),
])
def test_illegal_topic_names_are_answered_as_topic_validator_does(tmp_path, topic, remark):
    assert validate_topic(topic) == (1, remark)
    core = _broker(tmp_path)
    for req in (SendMessageRequest(topic, b"x", 0), CreateTopicRequest(topic)):
        answer = _answer(core.on_request(CLIENT, 1, req, 10))
        assert (answer.code, answer.remark) == (1, remark)
    assert validate_topic("t" * 127) is None and validate_topic("%RETRY%g|a-b_c") is None
    core.on_stop()


def test_auto_creation_inherits_from_tbw102_and_tells_the_change_listeners(tmp_path):
    core = _broker(tmp_path)
    topics = core.metadata.topic_config_manager
    assert topics.topic_config_table["TBW102"]["perm"] == 7 and topics.topic_config_table["TBW102"]["writeQueueNums"] == 8
    assert topics.topic_config_table["SCHEDULE_TOPIC_XXXX"]["writeQueueNums"] == 18
    heard = []
    topics.add_change_listener(heard.append)
    version = topics.data_version.counter
    req = SendMessageRequest("Fresh", b"x", 3, default_topic_queue_nums=4)
    assert _answer(core.on_request(CLIENT, 1, req, 10)).status == "PUT_OK"
    assert heard == [topics.topic_config_table["Fresh"]] and topics.data_version.counter == version + 1
    assert (heard[0]["readQueueNums"], heard[0]["writeQueueNums"], heard[0]["perm"]) == (4, 4, 6)
    bad_queue = _answer(core.on_request(CLIENT, 2, SendMessageRequest("Fresh", b"x", 4), 11))
    assert bad_queue.code == 1 and bad_queue.remark.startswith("request queueId[4] is illegal, TopicConfig "
                                                               "[topicName=Fresh, readQueueNums=4, writeQueueNums=4, "
                                                               "perm=RW-, topicFilterType=SINGLE_TAG")
    assert bad_queue.remark.endswith(f"Producer: {CLIENT}")
    created = _answer(core.on_request(CLIENT, 3, CreateTopicRequest("Admin", 2, 3, perm=4), 12))
    assert (created.code, len(heard), heard[-1]["perm"]) == (0, 2, 4)
    assert "Admin" in (tmp_path / "store" / "config" / "topics.json").read_text()
    for system in ("TBW102", "SELF_TEST_TOPIC", "DefaultCluster", "broker-a", "rmq_sys_x"):
        conflict = _answer(core.on_request(CLIENT, 4, CreateTopicRequest(system), 13))
        assert (conflict.code, conflict.remark) == (1, f"The topic[{system}] is conflict with system topic.")
    core.on_stop()


def test_without_auto_creation_a_new_topic_is_topic_not_exist(tmp_path):
    core = _broker(tmp_path, SendConfig(auto_create_topic_enable=False))
    answer = _answer(core.on_request(CLIENT, 1, SendMessageRequest("Fresh", b"x", 0), 10))
    assert (answer.code, answer.status) == (17, "TOPIC_NOT_EXIST")
    assert answer.remark == "topic[Fresh] not exist, apply first please!\nSee http://rocketmq.apache.org/docs/faq/ " \
                           "for further details."
    core.on_stop()


def test_a_slave_creates_no_topic_and_stores_nothing(tmp_path):
    core = _broker(tmp_path, role="SLAVE")
    refused = _answer(core.on_request(CLIENT, 1, CreateTopicRequest("T"), 10))
    assert refused.remark == "Can't modify topic or subscription group from slave broker, please execute it " \
                             "from master broker."
    assert _answer(core.on_request(CLIENT, 2, SendMessageRequest("T", b"x", 0), 10)).status == "SERVICE_NOT_AVAILABLE"
    assert "T" not in core.metadata.topic_config_manager.topic_config_table
    core.on_stop()


# ---------------------------------------------------------------------------------------- batches
def test_a_batch_gives_each_message_its_own_queue_offset_and_the_batch_properties(tmp_path):
    core = _broker(tmp_path)
    body = pack_messages([Message("B", b"m%d" % i, properties={"UNIQ_KEY": f"U{i}"}, flag=i) for i in range(3)])
    answer = _answer(core.on_request(CLIENT, 1, SendMessageRequest("B", body, 0, batch=True,
                                                                     properties_string="WAIT\x01true"), 10))
    assert answer.status == "PUT_OK" and answer.queue_offset == 0 and answer.msg_id.count(",") == 2
    records = _records(core, "B")
    assert [(m.queue_offset, m.body, m.flag) for m in records] == [(i, b"m%d" % i, i) for i in range(3)]
    assert records[1].properties == {"UNIQ_KEY": "U1", "WAIT": "true", "CLUSTER": "DefaultCluster"}
    core.on_stop()


@pytest.mark.parametrize(("body", "props"), [
    (pack_messages([Message("B", b"abc")])[:-3], None),  # truncated
    (b"\x00\x00\x00\x05garbage", None),
    (pack_messages([Message("B", b"abc")]), "DELAY\x012"),  # delay levels are not for batches
])
def test_a_bad_batch_is_message_illegal_and_stores_nothing(tmp_path, body, props):
    core = _broker(tmp_path)
    req = SendMessageRequest("B", body, 0, batch=True, properties_string=props)
    assert _answer(core.on_request(CLIENT, 1, req, 10)).status == "MESSAGE_ILLEGAL"
    assert core.store.get_max_phy_offset() == 0
    core.on_stop()


# ---------------------------------------------------------------------------------------- bad input
def test_bad_sends_are_refused_as_java_refuses_them_and_nothing_is_lost(tmp_path):
    core = _broker(tmp_path)
    assert _answer(core.on_request(CLIENT, 1, SendMessageRequest("T", b"kept", 0), 10)).status == "PUT_OK"
    cases = [
        (SendMessageRequest("T", b"x" * (4 * 1024 * 1024 + 1), 0), "MESSAGE_ILLEGAL"),
        (SendMessageRequest("SCHEDULE_TOPIC_XXXX", b"x", 0), "NO_PERMISSION"),
        (SendMessageRequest("T", b"x", 0, properties_string="DELAY\x01soon"), "SYSTEM_ERROR"),
        (SendMessageRequest("T", b"x", 0, properties_string="TRAN_MSG\x01true"), "NO_PERMISSION"),
    ]
    for req, status in cases:
        assert _answer(core.on_request(CLIENT, 2, req, 11)).status == status
    assert [m.body for m in _records(core, "T")] == [b"kept"]
    core.on_stop()


@pytest.mark.parametrize(("code", "ext", "error"), [
    (310, {"a": "pg", "b": "T"}, "the custom field <c> is null"),
    (36, {"offset": "x", "group": "G", "delayLevel": "0"}, "offset"),
    (17, {"topic": "T", "defaultTopic": "TBW102", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6",
          "topicFilterType": "NO_SUCH", "order": "false"}, "topicFilterType = [NO_SUCH] value invalid"),
])
def test_malformed_headers_are_codec_errors_the_runtime_answers_system_error(code, ext, error):
    with pytest.raises(CodecError, match=error.replace("[", r"\[").replace("]", r"\]")):
        broker_codec().decode(encode_command(RemotingCommand(code, ext_fields=ext)))


def test_a_bad_message_delay_level_fails_at_start():
    with pytest.raises(ConfigError, match="messageDelayLevel"):
        SendConfig(message_delay_level="1s 5x")


# ---------------------------------------------------------------------------------------- retries
def test_send_back_retries_with_growing_delay_then_the_dlq(tmp_path):
    core = _broker(tmp_path, SendConfig(message_delay_level="1s 2s 3s 4s 5s"))
    req = SendMessageRequest("T", b"payload", 0, properties_string="UNIQ_KEY\x01U1\x02TAGS\x01a")
    original = _answer(core.on_request(CLIENT, 1, req, 0))
    offset, now, seen = original.phy_offset, 0, []
    for times in range(2):  # maxReconsumeTimes 2 (the consumer's header)
        back = ConsumerSendMsgBackRequest(offset, "G", 0, max_reconsume_times=2)
        assert _answer(core.on_request(CLIENT, 10 + times, back, now)).code == 0
        events = _tick_until(core, now + 7_000)
        delivered = [e for e in events if e[1] == "schedule_deliver"]
        assert len(delivered) == 1 and delivered[0][2]["delay_level"] == 3 + times  # 3 + reconsumeTimes
        assert delivered[0][0] == now + (3 + times) * 1000  # the level's delay after it was stored
        now = delivered[0][0]
        retry = _records(core, "%RETRY%G")[times]
        assert retry.reconsume_times == times + 1 and retry.body == b"payload" and retry.uniq_key == "U1"
        assert retry.properties["RETRY_TOPIC"] == "T" and retry.properties["ORIGIN_MESSAGE_ID"] == original.msg_id
        assert retry.properties["REAL_TOPIC"] == "%RETRY%G" and retry.properties["WAIT"] == "false"
        offset, seen = retry.commit_log_offset, seen + [retry]
    dead = ConsumerSendMsgBackRequest(offset, "G", 0, max_reconsume_times=2)
    out = core.on_request(CLIENT, 20, dead, now)
    assert _answer(out).code == 0
    assert [t.kind for t in out.trace if t.kind in ("send_back", "dlq")] == ["send_back", "dlq"]
    (dlq,) = _records(core, "%DLQ%G")
    assert dlq.reconsume_times == 3 and dlq.properties["ORIGIN_MESSAGE_ID"] == original.msg_id
    table = core.metadata.topic_config_manager.topic_config_table
    assert (table["%RETRY%G"]["writeQueueNums"], table["%DLQ%G"]["writeQueueNums"]) == (1, 1)
    assert core.metadata.subscription_group_manager.subscription_group_table["G"]["retryMaxTimes"] == 16
    core.on_stop()


def test_an_old_client_s_max_reconsume_times_is_ignored_and_a_negative_delay_goes_to_the_dlq(tmp_path):
    core = _broker(tmp_path)
    first = _answer(core.on_request(CLIENT, 1, SendMessageRequest("T", b"p", 0), 0))
    old = ConsumerSendMsgBackRequest(first.phy_offset, "G", 0, max_reconsume_times=0, version=0)
    core.on_request(CLIENT, 2, old, 1)  # version 0 < V3_4_9: the group's 16 applies, so it is retried
    assert not _records(core, "%DLQ%G")
    core.on_request(CLIENT, 3, ConsumerSendMsgBackRequest(first.phy_offset, "G", -1), 2)
    assert len(_records(core, "%DLQ%G")) == 1
    missing = _answer(core.on_request(CLIENT, 4, ConsumerSendMsgBackRequest(10**9, "G", 0), 3))
    assert (missing.code, missing.remark) == (1, f"look message by offset failed, {10**9}")
    core.metadata.subscription_group_manager.subscription_group_table["G"]["retryQueueNums"] = 0
    before = core.store.get_max_phy_offset()
    assert _answer(core.on_request(CLIENT, 5, ConsumerSendMsgBackRequest(first.phy_offset, "G", 0), 4)).code == 0
    assert core.store.get_max_phy_offset() == before  # no retry queue: dropped, answered SUCCESS
    core.on_stop()


# ---------------------------------------------------------------------------------------- delayed messages
def test_a_producer_s_delayed_message_waits_in_the_schedule_topic_and_survives_a_restart(tmp_path):
    core = _broker(tmp_path)
    props = "UNIQ_KEY\x01D1\x02DELAY\x019\x02WAIT\x01true"  # level 9 > the highest (4): capped
    answer = _answer(core.on_request(CLIENT, 1, SendMessageRequest("T", b"later", 2, properties_string=props), 0))
    assert answer.status == "PUT_OK" and answer.queue_id == 2  # the queue the producer asked for
    (waiting,) = _records(core, "SCHEDULE_TOPIC_XXXX", 3)
    assert waiting.properties["DELAY"] == "4" and waiting.properties["REAL_QID"] == "2"
    assert waiting.properties["WAIT"] == "true"  # re-put before the delay branch writes the string
    core.on_stop()  # before its time: it waits on disk
    core = _broker(tmp_path)
    core.now_ms = 0
    events = _tick_until(core, 6_000)
    assert [e[2]["uniq_key"] for e in events if e[1] == "schedule_deliver"] == ["D1"]
    (delivered,) = _records(core, "T", 2)
    assert delivered.body == b"later" and delivered.properties["REAL_TOPIC"] == "T"
    text = (tmp_path / "store" / "config" / "delayOffset.json").read_text()
    assert re.search(r"\b4\s*:\s*1\b", text) and '"4"' not in text  # fastjson's unquoted integer key
    core.on_stop()
    (tmp_path / "store" / "config" / "delayOffset.json").write_text('{"offsetTable":{"4":1}}')
    reread = DelayOffsetManager(tmp_path / "store" / "config")
    reread.load()
    assert reread.offset_table == {4: 1}


# ---------------------------------------------------------------------------------------- every broker kind
def _kind(kind: str, tmp_path):
    send = SendConfig(message_delay_level="1s 2s 3s")
    if kind == "dledger":
        c = Cluster.dledger_brokers(3, seed=3, data_dir=tmp_path, broker={"send": send}, latency="uniform:1:3",
                                    dledger={"heart_beat_time_interval_ms": 200, "max_vote_interval_ms": 300,
                                             "min_vote_interval_ms": 100})
    else:
        c = Cluster.controller_mode(seed=4, data_dir=tmp_path, broker={"send": send})
    assert c.run_until(lambda c: c.leader() is not None and c.node(c.leader()).send_path.is_master(),
                       timeout_ms=30_000), f"no master ({kind})"
    return c


@pytest.mark.parametrize("kind", ["dledger", "controller-mode"])
def test_every_broker_kind_serves_sends_send_backs_and_delayed_delivery(tmp_path, kind):
    c = _kind(kind, tmp_path)
    master = c.leader()
    sent = c.request(master, SendMessageRequest("T", b"p", 0, properties_string="UNIQ_KEY\x01K1\x02DELAY\x011"))
    assert c.run_until(lambda c: bool(sent), timeout_ms=5_000) and sent[0].status == "PUT_OK"
    assert c.run_until(lambda c: any(e["kind"] == "schedule_deliver" for e in c.events), timeout_ms=5_000)
    assert c.run_until(lambda c: len(_records(c.node(master), "T")) == 1, timeout_ms=5_000)
    back = c.request(master, ConsumerSendMsgBackRequest(_records(c.node(master), "T")[0].commit_log_offset, "G", 1))
    assert c.run_until(lambda c: bool(back), timeout_ms=5_000) and back[0].code == 0
    assert c.run_until(lambda c: len(_records(c.node(master), "%RETRY%G")) == 1, timeout_ms=5_000)
    (retry,) = _records(c.node(master), "%RETRY%G")
    assert retry.reconsume_times == 1 and retry.uniq_key == "K1"
    assert c.run_until(lambda c: sum(e["kind"] == "schedule_deliver" for e in c.events) == 2, timeout_ms=5_000)
    body = pack_messages([Message("B", b"m%d" % i, properties={"UNIQ_KEY": f"U{i}"}) for i in range(3)])
    batch = c.request(master, SendMessageRequest("B", body, 0, batch=True))
    assert c.run_until(lambda c: bool(batch), timeout_ms=5_000) and batch[0].status == "PUT_OK"
    records = _records(c.node(master), "B")
    assert [(m.queue_offset, m.uniq_key) for m in records] == [(i, f"U{i}") for i in range(3)]
    # DLedgerCommitLog's serializer writes each record's own properties only; the classic CommitLog adds the batch's
    assert ("CLUSTER" in records[0].properties) == (kind == "controller-mode")
    kinds = [e["kind"] for e in c.events if e["kind"] in ("schedule", "send_back", "schedule_deliver")]
    assert kinds == ["schedule", "schedule_deliver", "send_back", "schedule", "schedule_deliver"]
    assert {e["status"] for e in c.events if e["kind"] == "schedule_deliver"} == {"PUT_OK"}
    c.close()
