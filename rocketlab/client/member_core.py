"""MemberCore: what the simulator's two consumer styles share as members of a consumer group (clustering) inside
:class:`~rocketlab.client.client_core.MQClientCore` - the subscriptions sent in HEART_BEAT, ``RebalanceService``
(every ``rebalance_interval`` and at once on NOTIFY_CONSUMER_IDS_CHANGED) over
:class:`~rocketlab.client.consumer.RebalanceImpl`, one pull of a queue (``PullAPIWrapper.pullKernelImpl``: the
route's broker or the one the last answer suggested), and the offset persister (``persistAllConsumerOffset``: 10 s
after the start, then every ``persistConsumerOffsetInterval``, oneway UPDATE_CONSUMER_OFFSET); Java's
``DefaultMQPushConsumerImpl`` and ``DefaultLitePullConsumerImpl`` each carry their own copy of these.

The styles: :class:`~rocketlab.client.push_core.PushConsumerCore` and
:class:`~rocketlab.client.lite_pull_core.LitePullConsumerCore`; each gives ``pull_request`` (its PullSysFlag and
subscription) and ``_pull_loop`` (what it does with what a pull brings).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable
from typing import Any

from rocketlab.client.client_core import FAILURES, MQClientCore, RefreshRoute, Sleep
from rocketlab.client.consumer import AllocateMessageQueueAveragely, RebalanceImpl, RemoteBrokerOffsetStore
from rocketlab.client.consumers import FLAG_COMMIT_OFFSET
from rocketlab.client.message import MessageQueue, decode_pulled, reset_retry_topic
from rocketlab.client.producer import Call, MQClientException
from rocketlab.client.protocol import ConsumerData, PullMessageRequest, SubscriptionData


class MemberCore(ABC):
    """One member of ``group`` in ``client`` subscribing ``topics`` (see the module docstring). Inspection:
    :meth:`owned`, :attr:`consumed` (uniq keys in the order the application saw them)."""

    consume_type = "CONSUME_ACTIVELY"

    def __init__(self, client: MQClientCore, group: str, topics: Iterable[str], allocate: Any = None) -> None:
        c = client.config
        self.client = client
        self.group = group
        self.offset_store = RemoteBrokerOffsetStore(group, client.broker_addrs)
        self.rebalance_impl = RebalanceImpl(group, client.client_id, self.offset_store, client.broker_addrs,
                                            allocate or AllocateMessageQueueAveragely(), c.consume_from_where,
                                            c.start_ms - 1_800_000)
        self.subscriptions = {t: SubscriptionData(t, "*", c.start_ms) for t in topics}
        self.suggested: dict[MessageQueue, int] = {}
        self.consumed: list[str | None] = []
        self._rebalancer: Any = None
        self._wake = False

    @abstractmethod
    def start(self, client: MQClientCore) -> None:
        """The style's services, spawned on ``client`` when the application starts it."""

    @abstractmethod
    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        """The style's pull (its PullSysFlag, suspend time, subscription)."""

    @abstractmethod
    def _pull_loop(self, mq: MessageQueue, offset: int) -> Generator[Any, Any, None]:
        """Pull ``mq`` from ``offset`` while the member owns it."""

    # ---------------------------------------------------------------------------------- group
    def consumer_data(self) -> ConsumerData:
        return ConsumerData(self.group, self.consume_type, "CLUSTERING", self.client.config.consume_from_where,
                            tuple(self.subscriptions.values()))

    def update_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None:
        if topic in self.subscriptions:
            self.rebalance_impl.topic_subscribe_info_table[topic] = mqs

    def owned(self) -> list[MessageQueue]:
        return sorted(self.rebalance_impl.process_queue_table)

    def start_group_services(self, client: MQClientCore) -> None:
        """``RebalanceService`` (after the routes and a heartbeat) and the offset persister."""
        self._rebalancer = client.spawn(self._start_and_rebalance(), "rebalance")
        client.spawn(self._persist_service(), "persist")

    def rebalance_immediately(self, client: MQClientCore) -> None:
        """NOTIFY_CONSUMER_IDS_CHANGED: ``rebalanceImmediately`` (the wait ends now, or the next one at once)."""
        if self._rebalancer is None or not client.wake(self._rebalancer):
            self._wake = True

    def _start_and_rebalance(self) -> Generator[Any, Any, None]:
        for topic in self.subscriptions:
            yield RefreshRoute(topic)
        yield from self.client.heartbeat_all()
        while True:
            try:
                yield from self.do_rebalance()
            except FAILURES as e:
                self.client.events.append(("rebalance_error", str(e)))
            if self._wake:
                self._wake = False
                continue
            yield Sleep(self.client.config.rebalance_interval, wakeable=True)

    def do_rebalance(self) -> Generator[Any, Any, None]:
        for topic in self.subscriptions:
            result = yield from self.rebalance_impl.rebalance_by_topic(topic)
            if result.warning is not None:
                self.client.events.append(("rebalance_warning", result.warning))
            for mq in result.removed:
                self._persist([mq])
                self.offset_store.remove_offset(mq)
            for mq, offset in result.added.items():
                self.client.spawn(self._pull_loop(mq, offset), f"pull {mq}")
            if result.added or result.removed:
                self.client._out.trace("client_rebalance", group=self.group, topic=topic,
                                       targets=[f"{q.broker_name}:{q.queue_id}" for q in self.owned()
                                                if q.topic == topic])

    # ---------------------------------------------------------------------------------- pulling
    def _pull_once(self, mq: MessageQueue, offset: int) -> Generator[Any, Any, tuple[Any, list[Any]]]:
        addrs = self.client.broker_addrs
        found = addrs.find_broker_address_in_subscribe(mq.broker_name, self.suggested.get(mq, 0), False)
        if found is None:
            yield RefreshRoute(mq.topic)
            found = addrs.find_broker_address_in_subscribe(mq.broker_name)
        if found is None:
            raise MQClientException(f"The broker[{mq.broker_name}] not exist")
        began = self.client.now_ms
        request = self.pull_request(mq, offset)
        if request.sys_flag & FLAG_COMMIT_OFFSET and not found[1]:
            self._trace_commit(mq, request.commit_offset, "pull")
        answer = yield Call(found[0], request, self.client.config.consumer_timeout_millis_when_suspend)
        self.client._out.trace("client_pull", topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id,
                               offset=offset, status=answer.pull_status,
                               latency_ms=float(self.client.now_ms - began))
        self.suggested[mq] = answer.suggest_which_broker_id
        msgs = decode_pulled(answer.body, (), answer.min_offset, answer.max_offset) \
            if answer.pull_status == "FOUND" else []
        for m in msgs:
            reset_retry_topic(m, self.group)
        return answer, msgs

    # ---------------------------------------------------------------------------------- offsets
    def _persist(self, mqs: Iterable[MessageQueue]) -> None:
        """``persistAll``: the oneway UPDATE_CONSUMER_OFFSET of each queue to its broker's master."""
        for mq in mqs:
            for call in self.offset_store.persist_all([mq]):
                self.client._out.send(call.addr, call.request)
                self._trace_commit(mq, call.request.commit_offset, "persist")

    def _trace_commit(self, mq: MessageQueue, offset: int, how: str) -> None:
        self.client._out.trace("client_commit", group=self.group, topic=mq.topic, broker_name=mq.broker_name,
                               queue_id=mq.queue_id, offset=offset, reason=how)

    def _persist_service(self) -> Generator[Any, Any, None]:
        """``persistAllConsumerOffset``: 10 s after the start, then every ``persistConsumerOffsetInterval``."""

        def persist() -> Generator[Any, Any, None]:
            self._persist(self.owned())
            yield from ()

        yield from self.client.every(10_000, self.client.config.persist_consumer_offset_interval, persist)
