"""LitePull (rocketlab.client.lite_pull): DefaultLitePullConsumerImpl 4.9.5's decisions, shared by the asyncio
PullConsumer and the simulator's LitePullConsumerCore - the pull's sysFlag, flow control, the consume request
cache and autoCommit."""

from __future__ import annotations

import pytest

from rocketlab.client.consumer import ProcessQueue, RemoteBrokerOffsetStore
from rocketlab.client.lite_pull import (
    FLAG_LITE_PULL_MESSAGE,
    FLAG_SUBSCRIPTION,
    FLAG_SUSPEND,
    PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
    LitePull,
    LitePullConfig,
)
from rocketlab.client.message import MessageQueue
from rocketlab.client.protocol import SubscriptionData
from rocketlab.client.route import BrokerAddrTable
from tests.client.test_client_cores import _ext

MQ = MessageQueue("T", "broker-a", 0)


def test_javas_defaults_and_the_pull_it_sends():
    c = LitePullConfig()
    assert (c.pull_batch_size, c.pull_threshold_for_queue, c.pull_threshold_for_all, c.consume_max_span) == \
        (10, 1000, 10000, 2000)
    assert (c.auto_commit, c.auto_commit_interval_millis, c.poll_timeout_millis) == (True, 5000, 5000)
    assert LitePullConfig(auto_commit_interval_millis=10).auto_commit_interval_millis == 1000  # MIN 1 s
    with pytest.raises(ValueError, match="maxNums"):
        LitePullConfig(pull_batch_size=0)
    # buildSysFlag(false, true, true, false, true): no commit offset, suspended, subscription, lite pull
    r = LitePull("G").pull_request(MQ, 7, SubscriptionData("T", "TagA", 42))
    assert (r.sys_flag, r.commit_offset, r.max_msg_nums, r.suspend_timeout_millis) == \
        (FLAG_SUSPEND | FLAG_SUBSCRIPTION | FLAG_LITE_PULL_MESSAGE, 0, 10, 20000)
    assert (r.queue_offset, r.subscription, r.sub_version) == (7, "TagA", 42)
    assert r.sys_flag == 0x16


def test_flow_control_by_cached_count_span_and_requests():
    lite = LitePull("G", LitePullConfig(pull_threshold_for_queue=3, consume_max_span=5, pull_threshold_for_all=20))
    pq = ProcessQueue()
    lite.submit(MQ, pq, [_ext(0), _ext(1), _ext(2)])
    assert lite.flow_control_delay(pq) == 0  # 3 cached: not more than the threshold
    lite.submit(MQ, pq, [_ext(3)])
    assert lite.flow_control_delay(pq) == PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL
    other = ProcessQueue()
    lite2 = LitePull("G", LitePullConfig(consume_max_span=5))
    lite2.submit(MQ, other, [_ext(0), _ext(6)])
    assert other.max_span == 6 and lite2.flow_control_delay(other) == 50
    lite3 = LitePull("G", LitePullConfig(pull_threshold_for_all=20))  # 3 requests x batch 10 > 20
    for i in range(3):
        lite3.submit(MQ, ProcessQueue(), [_ext(i)])
    assert lite3.flow_control_delay(ProcessQueue()) == 50


def test_poll_skips_dropped_queues_and_auto_commit_waits_for_its_deadline():
    store = RemoteBrokerOffsetStore("G", BrokerAddrTable())
    lite = LitePull("G")
    pq, gone = ProcessQueue(), ProcessQueue()
    lite.submit(MessageQueue("T", "broker-b", 1), gone, [_ext(0)])
    lite.submit(MQ, pq, [_ext(10), _ext(11)])
    gone.dropped = True
    table = {MQ: pq}
    assert lite.maybe_auto_commit(0, store, table.get)  # the first poll commits at once (nothing yet)
    assert store.offset_table == {}
    request = lite.take()
    assert request is not None and request.message_queue == MQ and [m.queue_offset for m in request.messages] == [10, 11]
    assert lite.take() is None
    assert not lite.maybe_auto_commit(4_999, store, table.get)  # autoCommitIntervalMillis not over yet
    assert store.read_offset_memory(MQ) == -1
    assert lite.maybe_auto_commit(5_000, store, table.get)
    assert store.read_offset_memory(MQ) == 12
    # the queue is taken away and owned anew: what was polled from the old process queue is not committed again
    table[MQ] = ProcessQueue()
    store.update_offset(MQ, 3, False)
    assert lite.maybe_auto_commit(10_000, store, table.get)
    assert store.read_offset_memory(MQ) == 3 and MQ not in lite.consume_offsets
