"""LitePullConsumerCore: ``DefaultLitePullConsumer`` inside :class:`~rocketlab.client.client_core.MQClientCore`, so
the simulator hosts the lite pull consumer beside the push one (:mod:`rocketlab.client.push_core`); its decisions
are :class:`~rocketlab.client.lite_pull.LitePull`'s, the asyncio twin's
(:class:`~rocketlab.client.consumers.PullConsumer`).

Two styles (``ClientNodeConfig.consumer_style``):

* ``lite-pull-subscribe``: ``subscribe(topic, "*")``; the group's ``RebalanceService`` gives the queues
  (:class:`~rocketlab.client.member_core.MemberCore`, as the push consumer's; no retry topic: a lite pull consumer
  sends nothing back);
* ``lite-pull-assign``: ``fetchMessageQueues(topic)`` then ``assign`` of the application's share of them (member
  ``assign_index`` of ``assign_members``, ``AllocateMessageQueueAveragely``'s split); no rebalance: the queues stay
  this member's whatever happens to the group. A ``client_rebalance`` event marks the assignment.

Each owned queue has its ``PullTaskImpl`` (flow control, long polling with ``brokerSuspendMaxTimeMillis`` 20 s, a
failed pull tried again after 1 s); the application's thread calls ``poll`` (``pollTimeoutMillis`` 5 s) in a loop
and handles each polled message (``consume_time_ms``, traced ``client_consume`` with status POLLED); ``poll``
auto-commits every ``autoCommitIntervalMillis`` (5 s) into the offset store, which the client's persister writes
to the brokers (``client_commit``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from rocketlab.client.client_core import FAILURES, ClientNodeConfig, MQClientCore, RefreshRoute, Sleep
from rocketlab.client.consumer import allocate_averagely
from rocketlab.client.lite_pull import (
    PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION,
    ConsumeRequest,
    LitePull,
    LitePullConfig,
)
from rocketlab.client.member_core import MemberCore
from rocketlab.client.message import MessageQueue
from rocketlab.client.protocol import PullMessageRequest
from rocketlab.client.push_core import PushConsumerCore
from rocketlab.client.route import topic_route_data2_topic_subscribe_info as subscribe_info
from rocketlab.core import NodeContext
from rocketlab.store.message import MessageExt

CONSUMER_STYLES = ("push", "lite-pull-subscribe", "lite-pull-assign")


class LitePullConsumerCore(MemberCore):
    """One lite pull member of ``group`` in ``client`` (see the module docstring)."""

    def __init__(self, client: MQClientCore, group: str, topic: str, assign: bool,
                 config: LitePullConfig | None = None, allocate: Any = None) -> None:
        super().__init__(client, group, () if assign else (topic,), allocate)
        self.topic = topic
        self.assign_mode = assign
        self.lite = LitePull(group, config or LitePullConfig())
        self._application: Any = None

    def start(self, client: MQClientCore) -> None:
        if self.assign_mode:
            client.spawn(self._fetch_and_assign(), "assign")
        else:
            self.start_group_services(client)
        self._application = client.spawn(self._application_thread(), "application")

    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        return self.lite.pull_request(mq, offset, self.subscriptions.get(mq.topic))

    # ---------------------------------------------------------------------------------- assign
    def _fetch_and_assign(self) -> Generator[Any, Any, None]:
        """``fetchMessageQueues`` (again every second until the name server has the topic), then ``assign``."""
        while not (yield RefreshRoute(self.topic)):
            yield Sleep(1_000)
        mqs = sorted(subscribe_info(self.topic, self.client.topic_route_table[self.topic]))
        c = self.client.config
        members = [str(i) for i in range(c.assign_members)]
        yield from self.assign(allocate_averagely(self.group, str(c.assign_index), mqs, members))
        self.start_group_services(self.client)

    def assign(self, mqs: list[MessageQueue]) -> Generator[Any, Any, None]:
        """``assign(messageQueues)``: own exactly ``mqs``, each pulled from ``computePullFromWhere``'s offset."""
        result = yield from self.rebalance_impl.update_process_queue_table_in_rebalance(self.topic, set(mqs))
        for mq, offset in result.added.items():
            self.client.spawn(self._pull_loop(mq, offset), f"pull {mq}")
        self.client._out.trace("client_rebalance", group=self.group, topic=self.topic,
                               targets=[f"{q.broker_name}:{q.queue_id}" for q in self.owned()])

    # ---------------------------------------------------------------------------------- pulling
    def _pull_loop(self, mq: MessageQueue, offset: int) -> Generator[Any, Any, None]:
        """``PullTaskImpl.run``, again and again while the queue is owned."""
        pq = self.rebalance_impl.process_queue_table.get(mq)
        while pq is not None and not pq.dropped:
            delay = self.lite.flow_control_delay(pq)
            if delay:
                yield Sleep(delay)
                continue
            try:
                answer, msgs = yield from self._pull_once(mq, offset)
            except FAILURES as e:
                self.client.events.append(("pull_error", f"{mq}: {e}"))
                yield Sleep(PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION)
                continue
            if pq.dropped:
                return
            if msgs:
                self.lite.submit(mq, pq, msgs)
                if self._application is not None:
                    self.client.wake(self._application)  # a poll waiting on the cache takes it now
            offset = answer.next_begin_offset  # updatePullOffset

    # ---------------------------------------------------------------------------------- the application
    def poll(self, timeout_ms: int) -> Generator[Any, Any, list[MessageExt]]:
        """``poll(timeout)``: auto-commit when due, then the next cached request's messages ([] after the
        timeout)."""
        request = yield from self._poll_request(timeout_ms)
        return [] if request is None else request.messages

    def _poll_request(self, timeout_ms: int) -> Generator[Any, Any, ConsumeRequest | None]:
        self.lite.maybe_auto_commit(self.client.now_ms, self.offset_store, self.rebalance_impl.process_queue_table.get)
        end = self.client.now_ms + timeout_ms
        while True:
            request = self.lite.take()
            if request is not None:
                return request
            if self.client.now_ms >= end:
                return None
            yield Sleep(end - self.client.now_ms, wakeable=True)

    def _application_thread(self) -> Generator[Any, Any, None]:
        while True:
            request = yield from self._poll_request(self.lite.config.poll_timeout_millis)
            for m in request.messages if request is not None else ():
                if self.client.config.consume_time_ms:
                    yield Sleep(self.client.config.consume_time_ms)
                self.consumed.append(m.uniq_key)
                self.client._out.trace("client_consume", group=self.group, topic=m.topic, queue_id=m.queue_id,
                                       queue_offset=m.queue_offset, uniq_key=m.uniq_key, status="POLLED",
                                       broker_name=request.message_queue.broker_name, reconsume_times=m.reconsume_times)


def make_client(ctx: NodeContext, config: ClientNodeConfig) -> MQClientCore:
    """A client process: the instance, with a consumer of ``config.consumer_style`` when ``config.consumer_group``
    is set (``lite_pull`` in ``config.options``: the :class:`LitePullConfig`)."""
    core = MQClientCore(ctx, config)
    style = config.consumer_style
    if config.consumer_group is None:
        return core
    if style == "push":
        core.consumer = PushConsumerCore(core, config.consumer_group, config.topic)
    else:
        core.consumer = LitePullConsumerCore(core, config.consumer_group, config.topic, style == "lite-pull-assign",
                                             config.options.get("lite_pull"))
    return core
