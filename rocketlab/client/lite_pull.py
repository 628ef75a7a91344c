"""LitePull: ``DefaultLitePullConsumerImpl``'s decisions (RocketMQ 4.9.5), sans-IO, for both runtimes that host the
lite pull consumer (:class:`~rocketlab.client.consumers.PullConsumer` over TCP,
:class:`~rocketlab.client.lite_pull_core.LitePullConsumerCore` in the simulator).

* the pull (``pullSyncImpl``): ``buildSysFlag(commitOffset false, block true, subscription true, classFilter false,
  litePull true)``, ``brokerSuspendMaxTimeMillis`` 20 s, the commit offset 0 (a lite pull never commits in a pull);
* ``PullTaskImpl``'s flow control: the next pull of a queue waits 50 ms
  (``PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL``) while the cache holds more than ``pullThresholdForAll`` /
  ``pullBatchSize`` consume requests, the queue more than ``pullThresholdForQueue`` messages or a span over
  ``consumeMaxSpan``; a failed pull is tried again after ``pullTimeDelayMillsWhenException`` (1 s);
* what a FOUND pull brings goes into the queue's ``ProcessQueue`` and, as one ``ConsumeRequest``, into
  ``consumeRequestCache``; ``poll`` takes the first request whose queue is still owned, ``removeMessage`` gives the
  queue's consume offset (``AssignedMessageQueue.updateConsumeOffset``, memory only);
* ``autoCommit``: each ``poll`` first calls ``maybeAutoCommit`` - past ``nextAutoCommitDeadline`` (at once on the
  first poll) ``commitAll`` copies every owned queue's consume offset into the offset store, the next deadline
  ``autoCommitIntervalMillis`` (5 s) later; the store reaches the broker with the client's persister (every
  ``persistConsumerOffsetInterval``) or when a rebalance takes the queue away.

Differences: ``pullThresholdSizeForQueue`` (MiB of cached bodies) is not checked; no pause/seek; a queue newly
owned is pulled from the offset its rebalance computed (Java computes ``computePullFromWhere`` once more in the
pull task's first ``nextPullOffset``, which gives the same unless the group committed in between).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketlab.client.consumer import ProcessQueue, RemoteBrokerOffsetStore
from rocketlab.client.message import MessageQueue
from rocketlab.client.protocol import PullMessageRequest, SubscriptionData
from rocketlab.store.message import MessageExt

FLAG_SUSPEND, FLAG_SUBSCRIPTION, FLAG_LITE_PULL_MESSAGE = 0x2, 0x4, 0x10
PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL = 50
PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION = 1000
"""``pullTimeDelayMillsWhenException``."""


@dataclass(frozen=True)
class LitePullConfig:
    """``DefaultLitePullConsumer``'s settings, Java's defaults."""

    pull_batch_size: int = 10
    pull_threshold_for_all: int = 10_000
    pull_threshold_for_queue: int = 1_000
    consume_max_span: int = 2_000
    auto_commit: bool = True
    auto_commit_interval_millis: int = 5_000
    poll_timeout_millis: int = 5_000
    broker_suspend_max_time_millis: int = 20_000
    consumer_timeout_millis_when_suspend: int = 30_000

    def __post_init__(self) -> None:
        if self.auto_commit_interval_millis < 1_000:  # setAutoCommitIntervalMillis ignores a smaller one
            object.__setattr__(self, "auto_commit_interval_millis", 1_000)
        if self.pull_batch_size <= 0:
            raise ValueError("maxNums <= 0")


@dataclass
class ConsumeRequest:
    messages: list[MessageExt]
    message_queue: MessageQueue
    process_queue: ProcessQueue


@dataclass
class LitePull:
    """One lite pull consumer's cache and consume offsets (see the module docstring)."""

    group: str
    config: LitePullConfig = field(default_factory=LitePullConfig)
    consume_request_cache: deque[ConsumeRequest] = field(default_factory=deque)
    consume_offsets: dict[MessageQueue, tuple[ProcessQueue, int]] = field(default_factory=dict)
    """queue -> (the process queue it was polled from, its consume offset): ``AssignedMessageQueue``'s."""
    next_auto_commit_deadline: int = -1

    def pull_request(self, mq: MessageQueue, offset: int, sd: SubscriptionData | None) -> PullMessageRequest:
        sd = sd or SubscriptionData(mq.topic)
        c = self.config
        return PullMessageRequest(self.group, mq.topic, mq.queue_id, offset, c.pull_batch_size,
                                  FLAG_SUSPEND | FLAG_SUBSCRIPTION | FLAG_LITE_PULL_MESSAGE, 0,
                                  c.broker_suspend_max_time_millis, sd.sub_string, sd.sub_version, "TAG",
                                  mq.broker_name)

    def flow_control_delay(self, pq: ProcessQueue) -> int:
        """How long ``PullTaskImpl`` waits before pulling the queue of ``pq`` (0: pull now)."""
        c = self.config
        if len(self.consume_request_cache) * c.pull_batch_size > c.pull_threshold_for_all \
                or pq.msg_count > c.pull_threshold_for_queue or pq.max_span > c.consume_max_span:
            return PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL
        return 0

    def submit(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]) -> None:
        """A FOUND pull: ``putMessage`` and ``submitConsumeRequest``."""
        pq.put_message(msgs)
        self.consume_request_cache.append(ConsumeRequest(msgs, mq, pq))

    def take(self) -> ConsumeRequest | None:
        """The first cached request of a queue still owned (those of dropped queues are thrown away)."""
        while self.consume_request_cache:
            request = self.consume_request_cache.popleft()
            if not request.process_queue.dropped:
                pq = request.process_queue
                self.consume_offsets[request.message_queue] = (pq, pq.remove_message(request.messages))
                return request
        return None

    def maybe_auto_commit(self, now_ms: int, offset_store: RemoteBrokerOffsetStore,
                          process_queue: Callable[[MessageQueue], ProcessQueue | None]) -> bool:
        """``poll``'s ``maybeAutoCommit`` (True when it committed)."""
        if not self.config.auto_commit or now_ms < self.next_auto_commit_deadline:
            return False
        self.commit_all(offset_store, process_queue)
        self.next_auto_commit_deadline = now_ms + self.config.auto_commit_interval_millis
        return True

    def commit_all(self, offset_store: RemoteBrokerOffsetStore,
                   process_queue: Callable[[MessageQueue], ProcessQueue | None]) -> None:
        """``commitAll``: each owned queue's consume offset into the offset store (``updateOffset(mq, o, false)``)."""
        for mq, (polled_from, offset) in list(self.consume_offsets.items()):
            pq = process_queue(mq)
            if pq is not polled_from or pq.dropped:  # no longer owned (or owned anew): its state went with it
                self.consume_offsets.pop(mq)
            elif offset != -1:
                offset_store.update_offset(mq, offset, False)
