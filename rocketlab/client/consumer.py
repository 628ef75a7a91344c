"""A consumer group member's decisions, as RocketMQ 4.9.5's client makes them, sans-IO.

* :class:`AllocateMessageQueueAveragely` and :class:`AllocateMessageQueueAveragelyByCircle`
  (``client/consumer/rebalance``): which of the sorted queues the member at ``currentCID``'s place in the sorted
  member list owns (the former's ``allocate`` is :func:`allocate_averagely`, or the function plugged in at lab
  08's point ``lab08.allocate``);
* :class:`ProcessQueue`: the messages pulled and not yet consumed of one queue (``msgTreeMap``), and the offset
  that may be committed when some are done (``removeMessage``: the smallest still in flight, else max + 1);
* :class:`RemoteBrokerOffsetStore`: the offsets a member commits, kept in memory and written to the broker of the
  queue (UPDATE_CONSUMER_OFFSET, oneway from ``persistAll``), read back with QUERY_CONSUMER_OFFSET;
* :class:`RebalanceImpl`: ``rebalanceByTopic`` (clustering) and ``updateProcessQueueTableInRebalance`` with
  ``computePullFromWhere`` (RebalancePushImpl's CONSUME_FROM_LAST_OFFSET / FIRST_OFFSET / TIMESTAMP rules).

The parts that need a broker are generators yielding :class:`~rocketlab.client.producer.Call` (as the producer's
are), answered by whichever runtime hosts them.

Difference: ``findConsumerIdList`` asks the broker of the first of the topic's sorted queues for the member list,
where Java's ``findBrokerAddrByTopic`` picks a random broker of the route; so a run replays by its seed. (Right after
a failover, the broker asked may have heard from only part of the group: lab 08 shows the queue owned twice that
follows. Java asks that broker only when its random pick falls on it.)
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

from rocketlab import plugs
from rocketlab.client.message import RETRY_GROUP_TOPIC_PREFIX, MessageQueue
from rocketlab.client.producer import Call, MQClientException
from rocketlab.client.protocol import (
    BrokerAnswerError,
    GetConsumerListRequest,
    GetMaxOffsetRequest,
    QueryConsumerOffsetRequest,
    SearchOffsetRequest,
    UpdateConsumerOffsetOneway,
)
from rocketlab.client.route import MASTER_ID, BrokerAddrTable
from rocketlab.store.message import MessageExt

MQ_CLIENT_API_TIMEOUT = 3000  # ClientConfig.mqClientApiTimeout
CONSUME_FROM = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP")


ALLOCATE_PLUG = plugs.point("lab08.allocate")
"""The override point of this module (lab 08's graded exercise plugs in here: :mod:`rocketlab.plugs`)."""


def allocate_averagely(consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
                       cid_all: list[str]) -> list[MessageQueue]:
    """``AllocateMessageQueueAveragely.allocate``: a contiguous run of the sorted queues per member, the first
    ``len(mq_all) % len(cid_all)`` members one more."""
    if not check(current_cid, mq_all, cid_all):
        return []
    index = cid_all.index(current_cid)
    mod = len(mq_all) % len(cid_all)
    if len(mq_all) <= len(cid_all):
        average = 1
    elif mod > 0 and index < mod:
        average = len(mq_all) // len(cid_all) + 1
    else:
        average = len(mq_all) // len(cid_all)
    start = index * average if mod > 0 and index < mod else index * average + mod
    return [mq_all[(start + i) % len(mq_all)] for i in range(min(average, len(mq_all) - start))]


class AllocateMessageQueueAveragely:
    name = "AVG"

    def allocate(self, consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
                 cid_all: list[str]) -> list[MessageQueue]:
        return plugs.resolve(ALLOCATE_PLUG, allocate_averagely)(consumer_group, current_cid, mq_all, cid_all)


class AllocateMessageQueueAveragelyByCircle:
    name = "AVG_BY_CIRCLE"

    def allocate(self, consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
                 cid_all: list[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = cid_all.index(current_cid)
        return [mq for i, mq in enumerate(mq_all) if i % len(cid_all) == index]


def check(current_cid: str, mq_all: list[MessageQueue], cid_all: list[str]) -> bool:
    """``AbstractAllocateMessageQueueStrategy.check``: a member not in the list owns nothing."""
    if not current_cid:
        raise ValueError("currentCID is empty")
    if not mq_all:
        raise ValueError("mqAll is null or mqAll empty")
    if not cid_all:
        raise ValueError("cidAll is null or cidAll empty")
    return current_cid in cid_all


@dataclass
class ProcessQueue:
    msg_tree_map: dict[int, MessageExt] = field(default_factory=dict)
    queue_offset_max: int = 0
    dropped: bool = False

    def put_message(self, msgs: Iterable[MessageExt]) -> None:
        for m in msgs:
            if m.queue_offset not in self.msg_tree_map:
                self.msg_tree_map[m.queue_offset] = m
            self.queue_offset_max = max(self.queue_offset_max, m.queue_offset)

    def remove_message(self, msgs: Iterable[MessageExt]) -> int:
        """The offset to commit after ``msgs`` are consumed (-1: nothing was in flight)."""
        if not self.msg_tree_map:
            return -1
        result = self.queue_offset_max + 1
        for m in msgs:
            self.msg_tree_map.pop(m.queue_offset, None)
        if self.msg_tree_map:
            result = min(self.msg_tree_map)
        return result

    @property
    def msg_count(self) -> int:
        return len(self.msg_tree_map)

    @property
    def max_span(self) -> int:
        """``getMaxSpan``: the last offset in flight minus the first (0 when none is)."""
        return max(self.msg_tree_map) - min(self.msg_tree_map) if self.msg_tree_map else 0


class RemoteBrokerOffsetStore:
    def __init__(self, group: str, broker_addrs: BrokerAddrTable) -> None:
        self.group = group
        self.broker_addrs = broker_addrs
        self.offset_table: dict[MessageQueue, int] = {}

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        old = self.offset_table.get(mq)
        if old is None or not increase_only or offset > old:
            self.offset_table[mq] = offset

    def read_offset_memory(self, mq: MessageQueue) -> int:
        return self.offset_table.get(mq, -1)

    def read_offset_from_store(self, mq: MessageQueue) -> Generator[Call, Any, int]:
        """READ_FROM_STORE: QUERY_CONSUMER_OFFSET; -1 when the broker has none (or answers an error), -2 when
        the broker cannot be asked."""
        addr = self._addr(mq)
        if addr is None:
            return -2
        try:
            answer = yield Call(addr, QueryConsumerOffsetRequest(self.group, mq.topic, mq.queue_id),
                                MQ_CLIENT_API_TIMEOUT)
        except BrokerAnswerError:
            return -1
        except MQClientException:
            return -2
        if answer.offset is None:
            return -1
        self.update_offset(mq, answer.offset, False)
        return answer.offset

    def persist_all(self, mqs: Iterable[MessageQueue]) -> list[Call]:
        """The oneway UPDATE_CONSUMER_OFFSET of every owned queue with an offset (``persistAll``)."""
        wanted = set(mqs)
        calls = []
        for mq, offset in self.offset_table.items():
            addr = self._addr(mq)
            if mq in wanted and addr is not None:
                calls.append(Call(addr, UpdateConsumerOffsetOneway(self.group, mq.topic, mq.queue_id, offset),
                                  MQ_CLIENT_API_TIMEOUT, oneway=True))
        return calls

    def remove_offset(self, mq: MessageQueue) -> None:
        self.offset_table.pop(mq, None)

    def _addr(self, mq: MessageQueue) -> str | None:
        found = self.broker_addrs.find_broker_address_in_subscribe(mq.broker_name, MASTER_ID, True)
        return None if found is None else found[0]


@dataclass
class RebalanceResult:
    added: dict[MessageQueue, int]
    """Queues newly owned -> the offset to pull from."""
    removed: list[MessageQueue]
    warning: str | None = None
    """What Java logs as a warning here (no member list, this member not in it)."""


class RebalanceImpl:
    """One member of ``consumer_group`` (clustering). ``topic_subscribe_info_table``: topic -> its readable queues;
    ``consume_from_where`` and ``consume_timestamp`` as DefaultMQPushConsumer's."""

    def __init__(self, consumer_group: str, client_id: str, offset_store: RemoteBrokerOffsetStore,
                 broker_addrs: BrokerAddrTable, strategy: Any = None,
                 consume_from_where: str = "CONSUME_FROM_LAST_OFFSET", consume_timestamp_ms: int = 0) -> None:
        if consume_from_where not in CONSUME_FROM:
            raise ValueError(f"consumeFromWhere {consume_from_where!r} is none of {', '.join(CONSUME_FROM)}")
        self.consumer_group = consumer_group
        self.client_id = client_id
        self.offset_store = offset_store
        self.broker_addrs = broker_addrs
        self.strategy = strategy or AllocateMessageQueueAveragely()
        self.consume_from_where = consume_from_where
        self.consume_timestamp_ms = consume_timestamp_ms
        self.topic_subscribe_info_table: dict[str, set[MessageQueue]] = {}
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}

    def find_consumer_id_list(self, topic: str) -> Generator[Call, Any, list[str]]:
        mqs = self.topic_subscribe_info_table.get(topic) or set()
        addr = None
        for mq in sorted(mqs):
            found = self.broker_addrs.find_broker_address_in_subscribe(mq.broker_name)
            if found is not None:
                addr = found[0]
                break
        if addr is None:
            return []
        answer = yield Call(addr, GetConsumerListRequest(self.consumer_group), MQ_CLIENT_API_TIMEOUT)
        return list(answer.consumer_id_list)

    def rebalance_by_topic(self, topic: str) -> Generator[Call, Any, RebalanceResult]:
        mq_set = self.topic_subscribe_info_table.get(topic)
        if not mq_set:
            return RebalanceResult({}, [])
        cid_all = yield from self.find_consumer_id_list(topic)
        if not cid_all:
            return RebalanceResult({}, [], f"doRebalance, {self.consumer_group} {topic}, get consumer id list failed")
        mine = self.strategy.allocate(self.consumer_group, self.client_id, sorted(mq_set), sorted(cid_all))
        result = yield from self.update_process_queue_table_in_rebalance(topic, set(mine))
        if self.client_id not in cid_all:
            result.warning = (f"[BUG] ConsumerGroup: {self.consumer_group} The consumerId: {self.client_id} not in "
                              f"cidAll: {sorted(cid_all)}")
        return result

    def update_process_queue_table_in_rebalance(self, topic: str,
                                                mq_set: set[MessageQueue]) -> Generator[Call, Any, RebalanceResult]:
        removed = []
        for mq in [q for q in self.process_queue_table if q.topic == topic and q not in mq_set]:
            self.process_queue_table.pop(mq).dropped = True
            removed.append(mq)
        added: dict[MessageQueue, int] = {}
        for mq in sorted(mq_set - set(self.process_queue_table)):
            self.offset_store.remove_offset(mq)  # removeDirtyOffset
            offset = yield from self.compute_pull_from_where(mq)
            if offset >= 0:
                self.process_queue_table[mq] = ProcessQueue()
                added[mq] = offset
        return RebalanceResult(added, removed)

    def compute_pull_from_where(self, mq: MessageQueue) -> Generator[Call, Any, int]:
        last = yield from self.offset_store.read_offset_from_store(mq)
        if last >= 0:
            return last
        if last != -1:
            return -1
        retry = mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
        if self.consume_from_where == "CONSUME_FROM_FIRST_OFFSET" or (
                retry and self.consume_from_where == "CONSUME_FROM_LAST_OFFSET"):
            return 0
        found = self.broker_addrs.find_broker_address_in_publish(mq.broker_name)
        if found is None:
            return -1
        if self.consume_from_where == "CONSUME_FROM_LAST_OFFSET" or retry:
            answer = yield Call(found, GetMaxOffsetRequest(mq.topic, mq.queue_id), MQ_CLIENT_API_TIMEOUT)
        else:
            answer = yield Call(found, SearchOffsetRequest(mq.topic, mq.queue_id, self.consume_timestamp_ms),
                                MQ_CLIENT_API_TIMEOUT)
        return -1 if answer.offset is None else answer.offset
