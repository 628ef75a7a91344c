"""The client's sans-IO cores: queue allocation, queue choice and the latency table, the producer's retries,
unique ids, batches and compression, routes in fastjson's form. Deterministic: no clock but the one given."""

from __future__ import annotations

import struct
import zlib

import pytest

from rocketlab.client.consumer import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    ProcessQueue,
    RebalanceImpl,
    RemoteBrokerOffsetStore,
)
from rocketlab.client.message import (
    Message,
    MessageClientIDSetter,
    MessageQueue,
    decode_pulled,
    encode_messages,
)
from rocketlab.client.producer import (
    Call,
    DefaultMQProducerImpl,
    FindRoute,
    MQClientException,
    ProducerConfig,
    RemotingError,
)
from rocketlab.client.protocol import BrokerAnswerError, OffsetAnswer, SendMessageResponse
from rocketlab.client.route import (
    BrokerAddrTable,
    MQFaultStrategy,
    ThreadLocalIndex,
    topic_route_data2_topic_publish_info,
)
from rocketlab.namesrv.route import TopicRouteData
from rocketlab.remoting.fastjson import loads
from rocketlab.store.message import Message as StoreMessage
from rocketlab.store.message_codec import encode_record

ROUTE = (b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a",'
         b'"cluster":"c"},{"brokerAddrs":{0:"127.0.0.1:20911"},"brokerName":"broker-b","cluster":"c"}],'
         b'"filterServerTable":{},"queueDatas":[{"brokerName":"broker-b","perm":6,"readQueueNums":4,'
         b'"topicSysFlag":0,"writeQueueNums":4},{"brokerName":"broker-a","perm":6,"readQueueNums":4,'
         b'"topicSysFlag":0,"writeQueueNums":4}]}')
"""A route as fastjson writes it (integer keys unquoted)."""


def mqs(n: int) -> list[MessageQueue]:
    return [MessageQueue("T", "broker-a", i) for i in range(n)]


@pytest.mark.parametrize("strategy", [AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle()])
def test_every_queue_is_owned_once_by_a_member_of_the_group(strategy):
    for n_mq in range(1, 17):
        for n_cid in range(1, 9):
            cids = [f"c{i}" for i in range(n_cid)]
            owned = [strategy.allocate("g", c, mqs(n_mq), cids) for c in cids]
            flat = [q for o in owned for q in o]
            assert sorted(flat) == mqs(n_mq), (n_mq, n_cid)
            sizes = [len(o) for o in owned]
            assert max(sizes) - min(sizes) <= 1
    assert strategy.allocate("g", "stranger", mqs(4), ["c0", "c1"]) == []


def test_averagely_gives_blocks_and_by_circle_deals_round():
    avg, circle = AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle()
    cids = ["c0", "c1", "c2"]
    assert [[q.queue_id for q in avg.allocate("g", c, mqs(10), cids)] for c in cids] == [[0, 1, 2, 3], [4, 5, 6],
                                                                                          [7, 8, 9]]
    assert [[q.queue_id for q in circle.allocate("g", c, mqs(10), cids)] for c in cids] == [[0, 3, 6, 9], [1, 4, 7],
                                                                                             [2, 5, 8]]
    assert [[q.queue_id for q in avg.allocate("g", c, mqs(2), cids)] for c in cids] == [[0], [1], []]


def test_process_queue_commits_the_smallest_offset_still_in_flight():
    pq = ProcessQueue()
    msgs = [_ext(i) for i in range(5)]
    pq.put_message(msgs)
    assert pq.remove_message([msgs[1], msgs[2]]) == 0
    assert pq.remove_message([msgs[0]]) == 3
    assert pq.remove_message([msgs[3], msgs[4]]) == 5
    assert pq.remove_message([msgs[4]]) == -1


def _ext(offset: int):
    record = encode_record(StoreMessage("T", b"x", 0), 0, ("127.0.0.1", 10911))
    m = decode_pulled(record)[0]
    m.queue_offset = offset
    return m


def test_a_route_in_fastjsons_form_gives_the_writable_queues_of_brokers_with_a_master():
    route = TopicRouteData.from_json(loads(ROUTE))
    info = topic_route_data2_topic_publish_info("T", route, start_index=0)
    assert [(q.broker_name, q.queue_id) for q in info.message_queue_list] == \
        [("broker-a", i) for i in range(4)] + [("broker-b", i) for i in range(4)]
    # round robin from the start index, as ThreadLocalIndex from its (here given) start
    assert [info.select_one_message_queue().queue_id for _ in range(3)] == [1, 2, 3]
    # a retry avoids the broker that just failed
    assert info.select_one_message_queue("broker-b").broker_name == "broker-a"
    table = BrokerAddrTable()
    table.update(route)
    assert table.find_broker_address_in_publish("broker-a") == "127.0.0.1:10911"
    assert table.find_broker_address_in_subscribe("broker-a", 1) == ("127.0.0.1:10921", True)


def test_thread_local_index_wraps_like_javas_int():
    idx = ThreadLocalIndex(0x7FFFFFFF)
    assert idx.increment_and_get() == 0  # Integer.MIN_VALUE & 0x7FFFFFFF
    assert idx.increment_and_get() == 1


def test_the_latency_table_keeps_a_failed_broker_out_for_its_window():
    route = TopicRouteData.from_json(loads(ROUTE))
    info = topic_route_data2_topic_publish_info("T", route, start_index=0)
    off = MQFaultStrategy()
    off.update_fault_item("broker-a", 30000, True, now_ms=0)  # off by default: no table
    assert off.latency_fault_tolerance.fault_item_table == {}
    on = MQFaultStrategy(send_latency_fault_enable=True)
    assert on.compute_not_available_duration(30000) == 600000 and on.compute_not_available_duration(40) == 0
    assert on.compute_not_available_duration(600) == 30000
    on.update_fault_item("broker-a", 3000, True, now_ms=1000)  # isolation: as if 30 s
    chosen = {on.select_one_message_queue(info, None, now_ms=2000).broker_name for _ in range(16)}
    assert chosen == {"broker-b"}
    assert on.select_one_message_queue(info, None, now_ms=601000).broker_name in {"broker-a", "broker-b"}
    # every broker out: pickOneAtLeast's broker, and Java's mutation of the route's queue is modelled
    on.update_fault_item("broker-b", 5000, False, now_ms=1000)
    mq = on.select_one_message_queue(info, None, now_ms=2000)
    assert mq.broker_name == "broker-a" and mq in info.message_queue_list


def drive(gen, answers):
    """Run a producer core against scripted broker answers (an exception is thrown into it)."""
    calls, value = [], None
    try:
        while True:
            step = gen.send(value)
            if isinstance(step, FindRoute):
                value = topic_route_data2_topic_publish_info("T", TopicRouteData.from_json(loads(ROUTE)))
                continue
            calls.append(step)
            answer = answers.pop(0)
            while isinstance(answer, Exception):
                calls.append(None)
                step = gen.throw(answer)
                if isinstance(step, FindRoute):
                    raise AssertionError("no second route lookup expected")
                calls[-1] = step
                answer = answers.pop(0)
            value = answer
    except StopIteration as stop:
        return stop.value, calls


def producer(**cfg) -> DefaultMQProducerImpl:
    table = BrokerAddrTable()
    table.update(TopicRouteData.from_json(loads(ROUTE)))
    ids = MessageClientIDSetter(clock=lambda: 1_700_000_000_000)
    return DefaultMQProducerImpl(ProducerConfig(**cfg), ids, lambda: 1_700_000_000_000, table)


OK = SendMessageResponse("SEND_OK", "7F0000010000" + "0" * 20, 1, 7)


def test_a_send_that_times_out_is_retried_on_another_broker():
    p = producer()
    result, calls = drive(p.send_default_impl(Message("T", b"hello")), [RemotingError("x", "timeout"), OK])
    assert isinstance(calls[0], Call) and isinstance(calls[1], Call)
    assert calls[0].addr != calls[1].addr  # broker-a, then broker-b
    assert result.send_status == "SEND_OK" and result.queue_offset == 7
    uniq = [c.request.header["properties"] for c in calls]
    assert uniq[0] == uniq[1]  # one UNIQ_KEY across retries


def test_broker_errors_retry_only_for_javas_retry_codes():
    p = producer()
    result, calls = drive(p.send_default_impl(Message("T", b"x")), [BrokerAnswerError("send", 17, "no topic"), OK])
    assert len(calls) == 2 and result.send_status == "SEND_OK"
    with pytest.raises(BrokerAnswerError):
        drive(producer().send_default_impl(Message("T", b"x")), [BrokerAnswerError("send", 13, "illegal")])
    with pytest.raises(MQClientException, match=r"Send \[3\] times, still failed") as e:
        drive(producer().send_default_impl(Message("T", b"x")), [RemotingError("refused", "connect")] * 3)
    assert e.value.response_code == 10001


def test_the_client_refuses_bad_messages_before_sending():
    for msg, text in ((Message("T", b""), "length is zero"), (Message("T", b"x" * (4 * 1024 * 1024 + 1)), "over max"),
                      (Message("bad topic", b"x"), "illegal characters"), (Message("", b"x"), "blank")):
        with pytest.raises(MQClientException, match=text):
            next(producer().send_default_impl(msg))


def test_bodies_of_4_kib_and_more_go_compressed_with_javas_flags():
    p = producer()
    _, calls = drive(p.send_default_impl(Message("T", b"a" * 4096)), [OK])
    assert calls[0].request.header["sysFlag"] == 0x301 and zlib.decompress(calls[0].request.body) == b"a" * 4096
    _, calls = drive(producer().send_default_impl(Message("T", b"a" * 4095)), [OK])
    assert calls[0].request.header["sysFlag"] == 0 and calls[0].request.body == b"a" * 4095


def test_a_batch_is_encoded_as_message_decoder_encode_messages():
    p = producer()
    batch = p.batch([Message("T", b"one", keys="k1"), Message("T", b"two", tags="TagA")])
    body = encode_messages(batch.messages)
    pos, seen = 0, []
    while pos < len(body):
        size, magic, crc, flag, blen = struct.unpack_from(">iiiii", body, pos)
        assert (magic, crc, flag) == (0, 0, 0)
        seen.append(body[pos + 20:pos + 20 + blen])
        pos += size
    assert seen == [b"one", b"two"] and all(m.uniq_key for m in batch.messages)
    result, calls = drive(p.send_default_impl(batch), [OK])
    assert calls[0].request.batch and result.msg_id == ",".join(m.uniq_key for m in batch.messages)
    with pytest.raises(MQClientException, match="same"):
        p.batch([Message("T", b"1"), Message("U", b"2")])


def test_unique_ids_follow_javas_layout_and_replay():
    a = MessageClientIDSetter(b"\x7f\x00\x00\x01", 42, 7, clock=lambda: 1_700_000_000_000)
    b = MessageClientIDSetter(b"\x7f\x00\x00\x01", 42, 7, clock=lambda: 1_700_000_000_000)
    ids = [a.create_uniq_id() for _ in range(3)]
    assert ids == [b.create_uniq_id() for _ in range(3)]
    assert all(len(i) == 32 for i in ids) and ids[0].startswith("7F000001002A00000007")
    assert [int(i[-4:], 16) for i in ids] == [0, 1, 2]


def test_compute_pull_from_where_follows_rebalance_push_impl():
    from_where = {}
    for where in ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP"):
        table = BrokerAddrTable()
        table.update(TopicRouteData.from_json(loads(ROUTE)))
        impl = RebalanceImpl("g", "c0", RemoteBrokerOffsetStore("g", table), table, consume_from_where=where,
                             consume_timestamp_ms=1234)
        for topic, committed in (("T", None), ("T", 17), ("%RETRY%g", None)):
            gen = impl.compute_pull_from_where(MessageQueue(topic, "broker-a", 0))
            asked = [gen.send(None)]
            try:
                asked.append(gen.send(OffsetAnswer(committed)))
                gen.send(OffsetAnswer(99))
            except StopIteration as stop:
                from_where[(where, topic, committed)] = (stop.value, [type(c.request).__name__ for c in asked])
    assert from_where[("CONSUME_FROM_LAST_OFFSET", "T", None)] == (99, ["QueryConsumerOffsetRequest",
                                                                       "GetMaxOffsetRequest"])
    assert from_where[("CONSUME_FROM_LAST_OFFSET", "%RETRY%g", None)] == (0, ["QueryConsumerOffsetRequest"])
    assert from_where[("CONSUME_FROM_FIRST_OFFSET", "T", None)] == (0, ["QueryConsumerOffsetRequest"])
    assert from_where[("CONSUME_FROM_TIMESTAMP", "T", None)] == (99, ["QueryConsumerOffsetRequest",
                                                                     "SearchOffsetRequest"])
    assert from_where[("CONSUME_FROM_TIMESTAMP", "%RETRY%g", None)] == (99, ["QueryConsumerOffsetRequest",
                                                                            "GetMaxOffsetRequest"])
    assert all(v == (17, ["QueryConsumerOffsetRequest"]) for k, v in from_where.items() if k[2] == 17)


def test_a_oneway_send_is_one_attempt_without_an_answer():
    p = producer()
    gen = p.send_default_impl(Message("T", b"fire"), oneway=True)
    step = next(gen)
    assert isinstance(step, FindRoute)
    call = gen.send(topic_route_data2_topic_publish_info("T", TopicRouteData.from_json(loads(ROUTE))))
    assert isinstance(call, Call) and call.oneway
    with pytest.raises(StopIteration) as stop:
        gen.send(None)
    assert stop.value.value is None
    gen = producer().send_default_impl(Message("T", b"fire"), oneway=True)
    next(gen)
    gen.send(topic_route_data2_topic_publish_info("T", TopicRouteData.from_json(loads(ROUTE))))
    with pytest.raises(MQClientException, match=r"Send \[1\] times"):  # no retry for a oneway send
        gen.throw(RemotingError("refused", "connect"))
