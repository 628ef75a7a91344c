"""The client processors (rocketlab.broker.processors) driven sans-IO through a broker core's inputs, each
behaviour as RocketMQ 4.9.5's processors have it (the Java line it follows is named in each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.broker import client_messages as m
from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.broker import BrokerConfig, BrokerCore
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.processor_config import ProcessorConfig
from rocketlab.broker.protocol import (
    PullMessageRequest,
    PullMessageResponse,
    PullSysFlag,
    ResponseCode,
    SendMessageRequest,
    UpdateConsumerOffsetRequest,
    UpdateConsumerOffsetResponse,
)
from rocketlab.core import NodeContext, Reply, Send
from rocketlab.errors import CodecError
from rocketlab.remoting import fastjson
from rocketlab.store import Message
from rocketlab.store.message import tags_string_to_tags_code

STORE = {"max_hash_slot_num": 64, "max_index_num": 256}
A, B = "127.0.0.1:40001", "127.0.0.1:40002"
PUSH = PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_COMMIT_OFFSET  # a push consumer's pull (no subscription)


def _broker(tmp_path, role="ASYNC_MASTER", **processors) -> BrokerCore:
    extra = {"broker_id": 1, "ha_master_address": "n0"} if role == "SLAVE" else {}
    config = BrokerConfig(broker_role=role, mapped_file_size_commit_log=64 * 1024, store_options=STORE,
                          processors=ProcessorConfig(**processors), **extra)
    core = BrokerCore(NodeContext("n0", ("n0",), 1, tmp_path), config)
    core.on_start(0)
    return core


class Client:
    """Requests to a core, as the runtime hands them over: one ``src`` (the connection), request ids."""

    def __init__(self, core, src: str = A) -> None:
        self.core, self.src, self.ids = core, src, 0

    def ask(self, msg, now_ms: int = 0):
        """The output of the request (actions and trace)."""
        self.ids += 1
        return self.core.on_request(self.src, self.ids, msg, now_ms)

    def answer(self, msg, now_ms: int = 0):
        replies = [a.msg for a in self.ask(msg, now_ms).actions if isinstance(a, Reply)]
        assert len(replies) == 1, replies
        return replies[0]


def _put(core, n: int, topic: str = "T", queue_id: int = 0, tags: str | None = None, now_ms: int = 0, keys=None):
    for i in range(n):
        handle, _ = core.put_message(Message(topic=topic, body=f"{tags}-{i}".encode(), queue_id=queue_id, tags=tags,
                                             keys=keys), now_ms)
        assert handle.status == "PUT_OK"
    return handle


def _heartbeat(group: str, client_id: str, sub: str = "*", topic: str = "T") -> m.HeartbeatRequest:
    tags = tuple(t.strip() for t in sub.split("||")) if sub != "*" else ()
    data = m.ConsumerData(group, subscriptions=(m.SubscriptionData(
        topic, sub, tags, tuple(tags_string_to_tags_code(t) for t in tags), sub_version=1),))
    return m.HeartbeatRequest(client_id, ("CLIENT_INNER_PRODUCER",), (data,))


def _notified(out) -> list[tuple[str, str]]:
    return [(a.to, a.msg.consumer_group) for a in out.actions if isinstance(a, Send)
            and isinstance(a.msg, m.NotifyConsumerIdsChanged)]


def _kinds(out) -> list[str]:
    return [t.kind for t in out.trace]


# ------------------------------------------------------------------ ClientManageProcessor / ConsumerManager
def test_heartbeats_build_a_group_and_every_member_is_told_when_it_changes(tmp_path):
    core = _broker(tmp_path)
    a, b = Client(core, A), Client(core, B)
    out = a.ask(_heartbeat("g", "ipA@1"))
    assert _notified(out) == [(A, "g")] and "consumer_group" in _kinds(out)  # registerConsumer: CHANGE
    assert a.answer(m.GetConsumerListByGroupRequest("g")) == m.ConsumerListResponse(("ipA@1",))
    assert _notified(a.ask(_heartbeat("g", "ipA@1"), 1000)) == []  # nothing changed: no notice
    out = b.ask(_heartbeat("g", "ipB@1"), 2000)
    assert sorted(_notified(out)) == [(A, "g"), (B, "g")]
    assert sorted(a.answer(m.GetConsumerListByGroupRequest("g")).consumer_id_list) == ["ipA@1", "ipB@1"]
    assert "%RETRY%g" in core.metadata.topic_config_manager.topic_config_table  # heartBeat creates it
    out = b.ask(m.UnregisterClientRequest("ipB@1", None, "g"), 3000)
    assert _notified(out) == [(A, "g")]
    out = core.on_peer_closed(A, 4000)  # onChannelClose
    assert [t.fields["event"] for t in out.trace if t.kind == "consumer_group"] == ["channel_closed"]
    assert a.answer(m.GetConsumerListByGroupRequest("g")) == m.ClientAnswer(
        ResponseCode.SYSTEM_ERROR, "no consumer for this group, g")


def test_a_member_silent_for_120_s_is_dropped_by_the_scan(tmp_path):
    core = _broker(tmp_path)
    Client(core, A).ask(_heartbeat("g", "ipA@1"))
    Client(core, B).ask(_heartbeat("g", "ipB@1"), 60_000)
    assert core.processors.next_deadline_ms() is not None  # the scan runs while clients are registered
    expired = []
    for now in range(10_000, 200_001, 10_000):  # ClientHousekeepingService: every 10 s
        expired += [(now, t.fields["client"]) for t in core.on_tick(now).trace if t.kind == "consumer_group"]
    # A's last heartbeat at 0: more than 120 s later at the 130 s scan; B's at 60 s: at the 190 s scan
    assert expired == [(130_000, A), (190_000, B)]
    assert core.processors.consumer_manager.consumer_table == {}


def test_a_group_that_does_not_want_notices_gets_none(tmp_path):
    core = _broker(tmp_path, notify_consumer_ids_changed_enable=False)
    assert _notified(Client(core, A).ask(_heartbeat("g", "ipA@1"))) == []


# ------------------------------------------------------------------ ConsumerManageProcessor
def test_query_consumer_offset_of_a_new_group_follows_whether_the_first_message_is_in_memory(tmp_path):
    """queryConsumerOffset: no offset, the queue starts at 0 and its first message is within
    accessMessageInMemoryMaxRatio (40 %) of RAM -> 0; with RAM injected as 0 it is "on disk" -> 22."""
    core = _broker(tmp_path / "mem", total_physical_memory=1 << 30)
    _put(core, 3)
    assert Client(core).answer(m.QueryConsumerOffsetRequest("g", "T", 0)) == m.OffsetResponse(0)
    on_disk = _broker(tmp_path / "disk", total_physical_memory=0)
    _put(on_disk, 3)
    assert Client(on_disk).answer(m.QueryConsumerOffsetRequest("g", "T", 0)) == m.ClientAnswer(
        m.ClientResponseCode.QUERY_NOT_FOUND,
        "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
    # an empty queue has no first message: checkInDiskByConsumeOffset is false -> 0
    assert Client(on_disk).answer(m.QueryConsumerOffsetRequest("g", "T", 1)) == m.OffsetResponse(0)


def test_offsets_committed_two_way_and_oneway_are_answered_and_persisted_in_fastjson_form(tmp_path):
    core = _broker(tmp_path)
    c = Client(core)
    assert c.answer(UpdateConsumerOffsetRequest("g", "T", 0, 12)) == UpdateConsumerOffsetResponse(True)
    assert core.on_message(A, UpdateConsumerOffsetRequest("g", "T", 1, 3), 5).actions == ()  # oneway: no answer
    assert c.answer(m.QueryConsumerOffsetRequest("g", "T", 1)) == m.OffsetResponse(3)
    path = tmp_path / "store" / "config" / "consumerOffset.json"
    assert not path.exists() and core.next_deadline_ms() <= 10_000  # persisted 10 s after start, every 5 s
    core.on_tick(10_000)
    assert path.read_text() == '{\n\t"offsetTable":{\n\t\t"T@g":{0:12,1:3\n\t\t}\n\t}\n}'
    core.on_message(A, UpdateConsumerOffsetRequest("g", "T", 0, 13), 11_000)
    core.on_stop()  # BrokerController.shutdown persists
    again = _broker(tmp_path)
    assert Client(again).answer(m.QueryConsumerOffsetRequest("g", "T", 0)) == m.OffsetResponse(13)
    again.on_stop()


# ------------------------------------------------------------------ AdminBrokerProcessor / QueryMessageProcessor
def test_offset_time_lookup_and_key_queries(tmp_path):
    core = _broker(tmp_path)
    c = Client(core)
    _put(core, 2, now_ms=1000)
    last = _put(core, 3, keys="order-7", now_ms=2000)
    assert c.answer(m.GetMaxOffsetRequest("T", 0)) == m.OffsetResponse(5)
    assert c.answer(m.GetMinOffsetRequest("T", 0)) == m.OffsetResponse(0)
    assert c.answer(m.GetMaxOffsetRequest("Nope", 0)) == m.OffsetResponse(0)
    assert c.answer(m.GetMinOffsetRequest("Nope", 0)) == m.OffsetResponse(0)  # findConsumeQueue makes it
    assert c.answer(m.GetEarliestMsgStoretimeRequest("T", 0)) == m.TimestampResponse(1000)
    # getOffsetInQueueByTime: the nearer of the two messages around the time, the earlier on a tie
    assert c.answer(m.SearchOffsetRequest("T", 0, 1500)) == m.OffsetResponse(1)
    assert c.answer(m.SearchOffsetRequest("T", 0, 1900)) == m.OffsetResponse(2)
    viewed = c.answer(m.ViewMessageRequest(last.wrote_offset))
    assert PullMessageResponse("FOUND", viewed.records).messages[0]["body"] == b"None-2"
    assert c.answer(m.ViewMessageRequest(10**9)) == m.ClientAnswer(
        ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {10**9}")
    found = c.answer(m.QueryMessageRequest("T", "order-7", 32, 0, 10**13))
    assert [x["keys"] for x in PullMessageResponse("FOUND", found.records).messages] == ["order-7"] * 3
    assert found.index_last_update_timestamp == 2000
    assert c.answer(m.QueryMessageRequest("T", "missing", 32, 0, 10**13)) == m.ClientAnswer(
        22, "can not find message, maybe time range not correct")


def test_queue_locks_expire_after_60_s(tmp_path):
    core = _broker(tmp_path)
    q0, q1 = m.MessageQueue("T", "broker-a", 0), m.MessageQueue("T", "broker-a", 1)
    a, b = Client(core, A), Client(core, B)
    assert set(a.answer(m.LockBatchRequest("g", "ipA", (q0, q1))).lock_ok_mq_set) == {q0, q1}
    assert b.answer(m.LockBatchRequest("g", "ipB", (q0, q1)), 60_000).lock_ok_mq_set == ()
    assert a.answer(m.UnlockBatchRequest("g", "ipA", (q1,)), 60_000) == m.ClientAnswer()
    assert b.answer(m.LockBatchRequest("g", "ipB", (q0, q1)), 60_000).lock_ok_mq_set == (q1,)
    assert b.answer(m.LockBatchRequest("g", "ipB", (q0,)), 60_001).lock_ok_mq_set == (q0,)  # A's expired


# ------------------------------------------------------------------ PullMessageProcessor
def _records(answer: PullMessageResponse) -> list[bytes]:
    return [x["body"] for x in answer.messages]


def test_a_pull_is_filtered_by_its_own_subscription_or_by_the_one_its_heartbeat_registered(tmp_path):
    core = _broker(tmp_path)
    for i in range(3):
        _put(core, 1, tags="TagA", now_ms=i)
        _put(core, 1, tags="TagB", now_ms=i)
    c = Client(core)
    own = c.answer(PullMessageRequest("T", 0, 0, 32, "g", subscription="TagA || TagC"))
    assert _records(own) == [b"TagA-0"] * 3 and own.next_begin_offset == 6
    pushed = PullMessageRequest("T", 0, 0, 32, "g", sys_flag=PUSH, subscription=None)
    assert c.answer(pushed) == PullMessageResponse(
        "the consumer's group info not exist\nSee http://rocketmq.apache.org/docs/faq/ for further details.",
        code=24)
    c.ask(_heartbeat("g", "ipA@1", "TagB"))
    assert _records(c.answer(pushed)) == [b"TagB-0"] * 3


def test_pull_checks_answer_as_java(tmp_path):
    core = _broker(tmp_path)
    _put(core, 1)
    c = Client(core)
    assert c.answer(PullMessageRequest("Nope", 0, 0)).code == 17  # TOPIC_NOT_EXIST
    assert c.answer(PullMessageRequest("T", 9, 0)) == PullMessageResponse(
        f"queueId[9] is illegal, topic:[T] topicConfig.readQueueNums:[4] consumer:[/{A}]", code=1)
    assert c.answer(PullMessageRequest("T", 1, 0)).response_code == ResponseCode.PULL_NOT_FOUND
    moved = c.answer(PullMessageRequest("T", 1, 5))  # an empty queue pulled past 0
    assert moved.status == "NO_MESSAGE_IN_QUEUE" and moved.response_code == ResponseCode.PULL_OFFSET_MOVED
    assert c.answer(PullMessageRequest("T", 0, 0, subscription="a ||", expression_type="SQL92")).code == 1


def test_a_pull_with_nothing_new_is_held_until_a_message_for_its_queue_arrives(tmp_path):
    core = _broker(tmp_path)
    _put(core, 2)
    c = Client(core)
    held = c.ask(PullMessageRequest("T", 0, 2, 32, "g", sys_flag=PUSH | PullSysFlag.FLAG_SUBSCRIPTION,
                                    suspend_timeout_millis=15_000, commit_offset=1), 100)
    assert held.actions == () and _kinds(held) == ["pull_held"]
    assert c.answer(m.QueryConsumerOffsetRequest("g", "T", 0)) == m.OffsetResponse(1)  # commitOffset stored
    other_queue = _put(core, 1, queue_id=1, now_ms=200)
    assert other_queue.status == "PUT_OK" and core.processors.hold_service.held == 1
    out = Client(core, B).ask(SendMessageRequest("T", b"new", 0), 300)  # a producer's send, dispatched at once
    [reply] = [a for a in out.actions if isinstance(a, Reply) and a.to == A]
    assert _records(reply.msg) == [b"new"] and reply.request_id == 1
    [woken] = [t.fields for t in out.trace if t.kind == "pull_woken"]
    assert woken["status"] == "FOUND" and woken["held_ms"] == 200


def test_a_held_pull_times_out_at_the_hold_service_check(tmp_path):
    core = _broker(tmp_path)
    _put(core, 1)
    c = Client(core)
    c.ask(PullMessageRequest("T", 0, 1, 32, "g", sys_flag=PUSH | PullSysFlag.FLAG_SUBSCRIPTION,
                             suspend_timeout_millis=12_000), 1000)
    checks = []
    while not checks or not checks[-1][1]:
        now = core.next_deadline_ms()
        checks.append((now, [a.msg for a in core.on_tick(now).actions if isinstance(a, Reply)]))
    # checkHoldRequest every 5 s from the start: 5 s, 10 s (not yet due), 15 s: 14 s held > 12 s
    assert [t for t, _ in checks if t % 5000 == 0] == [5000, 10_000, 15_000]
    assert checks[-1][1][0].status == "OFFSET_OVERFLOW_ONE"


@pytest.mark.parametrize("long_polling", [True, False])
def test_long_polling_off_answers_at_the_next_short_polling_check(tmp_path, long_polling):
    core = _broker(tmp_path, long_polling_enable=long_polling)
    _put(core, 1)
    c = Client(core)
    c.ask(PullMessageRequest("T", 0, 1, 32, "g", sys_flag=PUSH | PullSysFlag.FLAG_SUBSCRIPTION,
                             suspend_timeout_millis=15_000), 100)
    out = Client(core, B).ask(SendMessageRequest("T", b"new", 0), 200)
    woken_at_put = [a for a in out.actions if isinstance(a, Reply) and a.to == A]
    if long_polling:  # NotifyMessageArrivingListener wakes it at once
        assert len(woken_at_put) == 1
    else:  # no listener: the check every shortPollingTimeMills (1 s) finds the message
        assert woken_at_put == [] and core.processors.next_deadline_ms() == 1000
        replies = [a.msg for a in core.on_tick(1000).actions if isinstance(a, Reply)]
        assert _records(replies[0]) == [b"new"]


def test_a_slave_serves_pulls_suggests_the_master_and_stores_no_commit_offset(tmp_path):
    """4.9.5: a SLAVE without slaveReadEnable sets PULL_RETRY_IMMEDIATELY, then the status's code overwrites
    it; suggestWhichBrokerId is the master's; commitOffset is stored on a master only; an offset past
    the end is not corrected (offsetCheckInSlave=false) - the role probe the kit's tools use."""
    master = _broker(tmp_path / "m")
    _put(master, 2)
    slave = _broker(tmp_path / "s", role="SLAVE")
    slave.store.append_to_commit_log(0, master.store.get_commit_log_data(0))
    slave.store.reput()
    c = Client(slave)
    got = c.answer(PullMessageRequest("T", 0, 0, 32, "g", sys_flag=PullSysFlag.FLAG_SUBSCRIPTION
                                      | PullSysFlag.FLAG_COMMIT_OFFSET, commit_offset=2))
    assert _records(got) == [b"None-0", b"None-1"] and got.suggest_which_broker_id == 0
    assert c.answer(m.QueryConsumerOffsetRequest("g", "T", 0)) == m.OffsetResponse(0)  # none stored
    assert not c.answer(PullMessageRequest("T", 0, 1 << 62)).answered_as_master
    assert Client(master).answer(PullMessageRequest("T", 0, 1 << 62)).answered_as_master


def test_the_controller_mode_broker_serves_the_client_codes(tmp_path):
    core = AutoSwitchBrokerCore(NodeContext("b0", ("b0",), 1, tmp_path), AutoSwitchBrokerConfig(store_options=STORE))
    core.on_start(0)
    c = Client(core)
    assert c.answer(m.GetMaxOffsetRequest("T", 0)) == m.OffsetResponse(0)
    assert _notified(c.ask(_heartbeat("g", "ipA@1"))) == [(A, "g")]
    assert c.answer(PullMessageRequest("T", 0, 0)).status == "PULL_RETRY_IMMEDIATELY"  # fenced: no reads
    core.on_stop()


def test_the_dledger_broker_serves_the_client_codes(tmp_path):
    from rocketlab.sim import Cluster

    cluster = Cluster.dledger_brokers(3, seed=1, data_dir=tmp_path, latency="uniform:1:3")
    assert cluster.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert cluster.put(b"x", topic="T").status == "PUT_OK"
    core = cluster.node(cluster.leader())
    c = Client(core)
    assert c.answer(m.GetMaxOffsetRequest("T", 0), cluster.now_ms) == m.OffsetResponse(1)
    assert _notified(c.ask(_heartbeat("g", "ipA@1"), cluster.now_ms)) == [(A, "g")]
    assert _records(c.answer(PullMessageRequest("T", 0, 0), cluster.now_ms)) == [b"x"]
    cluster.close()


def test_the_offset_file_reads_fastjson_and_quoted_keys(tmp_path):
    """The fixture is in fastjson's own form (``JSON.toJSONString(this, true)``: tabs, integer keys
    unquoted); the stand-in fastjson of the shared jars writes them quoted. Both are read."""
    fixture = Path(__file__).parent.parent / "data" / "broker" / "consumerOffset-fastjson.json"
    for text in (fixture.read_text(), '{"offsetTable":{"TopicTest@group":{"0":12,"1":3}}}'):
        (tmp_path / "consumerOffset.json").write_text(text)
        meta = BrokerMetadata(tmp_path)
        meta.load()
        assert meta.consumer_offset_manager.query_offset("group", "TopicTest", 1) == 3
    assert fastjson.loads(fixture.read_bytes())["offsetTable"]["TopicTest@group"] == {"0": 12, "1": 3}


def test_a_held_pull_is_woken_only_by_a_message_its_subscription_matches(tmp_path):
    """notifyMessageArriving: the arriving message's tags code against the held pull's filter."""
    core = _broker(tmp_path)
    _put(core, 1, tags="TagA")
    c, producer = Client(core, A), Client(core, B)
    c.ask(PullMessageRequest("T", 0, 1, 32, "g", sys_flag=PUSH | PullSysFlag.FLAG_SUBSCRIPTION,
                             suspend_timeout_millis=15_000, subscription="TagA"), 100)
    out = producer.ask(SendMessageRequest("T", b"b", 0, "TagB"), 200)
    assert [a for a in out.actions if isinstance(a, Reply) and a.to == A] == []  # TagB: still held
    out = producer.ask(SendMessageRequest("T", b"a", 0, "TagA"), 300)
    [reply] = [a.msg for a in out.actions if isinstance(a, Reply) and a.to == A]
    assert _records(reply) == [b"a"] and reply.next_begin_offset == 3  # the TagB unit skipped by its code
    # a pull held later starts the 5 s check grid afresh
    c.ask(PullMessageRequest("T", 0, 3, 32, "g", sys_flag=PUSH | PullSysFlag.FLAG_SUBSCRIPTION,
                             suspend_timeout_millis=15_000), 7_000)
    assert core.processors.hold_service.next_deadline_ms() == 10_000


def test_a_heartbeat_with_enums_as_ordinals_and_a_quoted_sub_version_is_read_as_fastjson_reads_it():
    """rocketmq-client-cpp (PyPI's rocketmq 0.4.4) writes HeartbeatData's enums as integers and subVersion as a
    string; the 4.9.5 broker's fastjson reads an integer as the enum's ordinal (EnumDeserializer) and a quoted
    number into a long, so that client push-consumes from it (tests/oracle/test_client_app.py, the pypi test
    against the java backend). The kit answered SYSTEM_ERROR 'consumeType: expected a string' before."""
    body = (b'{"clientID":"127.0.0.1@9186#1","consumerDataSet":[{"consumeFromWhere":4,"consumeType":1,'
            b'"groupName":"g_pypi","messageModel":1,"subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],'
            b'"expressionType":"TAG","subString":"*","subVersion":"1795954141022","tagsSet":[],"topic":"PyTopic"}],'
            b'"unitMode":false}],"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}')
    hb = m.read_heartbeat(body, "CPP", 0)
    (consumer,) = hb.consumers
    assert (consumer.consume_type, consumer.message_model, consumer.consume_from_where) == (
        "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_FIRST_OFFSET")
    assert consumer.subscriptions[0].sub_version == 1795954141022
    by_name = body.replace(b'"consumeType":1', b'"consumeType":"CONSUME_PASSIVELY"')
    assert m.read_heartbeat(by_name, "JAVA", 0).consumers == hb.consumers
    for bad in (b'"consumeType":2', b'"consumeType":-1'):
        with pytest.raises(CodecError, match="consumeType: no constant with ordinal"):
            m.read_heartbeat(body.replace(b'"consumeType":1', bad), "CPP", 0)
    with pytest.raises(CodecError, match="subVersion: expected an integer"):
        m.read_heartbeat(body.replace(b'"1795954141022"', b'"12ab"'), "CPP", 0)
