"""PushConsumer and PullConsumer over TCP (asyncio): ``DefaultMQPushConsumer`` and ``DefaultLitePullConsumer``.

Both are members of a consumer group (clustering): their subscriptions go to every master in HEART_BEAT, the
queues they own come from :class:`~rocketlab.client.consumer.RebalanceImpl` (every ``rebalance_interval`` ms,
20 s in Java, and at once on NOTIFY_CONSUMER_IDS_CHANGED), each owned queue is pulled by one task from the offset
``computePullFromWhere`` gives, and offsets go to the broker every ``persist_consumer_offset_interval`` (5 s) and
at shutdown (oneway UPDATE_CONSUMER_OFFSET, then UNREGISTER_CLIENT).

* :class:`PushConsumer`: long polling (``brokerSuspendMaxTimeMillis`` 15 s, ``consumerTimeoutMillisWhenSuspend``
  30 s, the committed offset carried by the pull: ``commitOffset`` and its sysFlag bit), its subscription served
  from the heartbeat (``postSubscriptionWhenPull`` false), the group's retry topic ``%RETRY%group`` subscribed too;
  the listener (plain or ``async`` function of a list of messages, answering CONSUME_SUCCESS or RECONSUME_LATER):
  a plain one runs on the event loop's thread, one call at a time; ``async`` ones run at most
  ``consume_thread_max`` at a time (Java: that many consume threads); a failed message goes back with CONSUMER_SEND_MSG_BACK (delay
  level 0: the broker's 3 + reconsume times); when that fails, it is sent to ``%RETRY%group`` by the instance's
  inner producer (DELAY 3 + reconsume times), and when that fails too it is consumed again here after 5 s;
* :class:`PullConsumer`: ``assign`` or ``subscribe``, then ``poll``; pulls carry the subscription; ``poll``
  auto-commits what it handed over every ``autoCommitIntervalMillis``; flow control by cached message count and
  span (:mod:`rocketlab.client.lite_pull`, shared with the simulator's lite pull consumer).

Differences: OFFSET_ILLEGAL is followed at once from ``nextBeginOffset`` (Java's push consumer drops the queue and
takes it back after 10 s); the push consumer has no flow control by cached message count or size
(``pullThresholdForQueue``).
"""

from __future__ import annotations

import asyncio
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any

from rocketlab.client.consumer import (
    AllocateMessageQueueAveragely,
    ProcessQueue,
    RebalanceImpl,
    RemoteBrokerOffsetStore,
)
from rocketlab.client.instance import MQClientInstance, Producer, now_ms
from rocketlab.client.lite_pull import PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION as LITE_PULL_DELAY_WHEN_EXCEPTION
from rocketlab.client.lite_pull import LitePull, LitePullConfig
from rocketlab.client.message import (
    PROPERTY_CONSUME_START_TIMESTAMP,
    RETRY_GROUP_TOPIC_PREFIX,
    Message,
    MessageQueue,
    decode_pulled,
    reset_retry_topic,
)
from rocketlab.client.producer import Call, MQClientException, ProducerConfig, RemotingError
from rocketlab.client.protocol import (
    BrokerAnswerError,
    ConsumerData,
    ConsumerSendMsgBackRequest,
    PullMessageRequest,
    SubscriptionData,
    UnregisterClientRequest,
)
from rocketlab.errors import CodecError
from rocketlab.store.message import MessageExt

FLAG_COMMIT_OFFSET, FLAG_SUSPEND, FLAG_SUBSCRIPTION = 0x1, 0x2, 0x4
PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION = 3000
Listener = Callable[[list[MessageExt]], Any]


class _Member(ABC):
    """What both consumer styles share: subscriptions, rebalance, pull tasks, offsets."""

    consume_type = "CONSUME_ACTIVELY"

    def __init__(self, instance: MQClientInstance, group: str, consume_from_where: str, allocate: Any,
                 rebalance_interval: int, persist_consumer_offset_interval: int, pull_batch_size: int,
                 consume_timestamp_ms: int | None = None) -> None:
        self.instance = instance
        self.group = group
        self.consume_from_where = consume_from_where
        self.offset_store = RemoteBrokerOffsetStore(group, instance.broker_addrs)
        self.rebalance_impl = RebalanceImpl(group, instance.client_id, self.offset_store, instance.broker_addrs,
                                            allocate or AllocateMessageQueueAveragely(), consume_from_where,
                                            now_ms() - 1_800_000 if consume_timestamp_ms is None
                                            else consume_timestamp_ms)  # Java: half an hour ago
        self.subscriptions: dict[str, SubscriptionData] = {}
        self.rebalance_interval = rebalance_interval
        self.persist_interval = persist_consumer_offset_interval
        self.pull_batch_size = pull_batch_size
        self.pull_tasks: dict[MessageQueue, asyncio.Task] = {}
        self.suggested: dict[MessageQueue, int] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self.events: list[tuple[str, Any]] = []
        """What the member did, in order: ("rebalance", (added, removed)), ("pull_error", text), ..."""

    # ---------------------------------------------------------------------------------- group
    def subscribe(self, topic: str, expression: str = "*") -> None:
        self.subscriptions[topic] = SubscriptionData(topic, expression or "*", now_ms())

    def consumer_data(self) -> ConsumerData:
        return ConsumerData(self.group, self.consume_type, "CLUSTERING", self.consume_from_where,
                            tuple(self.subscriptions.values()))

    def update_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None:
        if topic in self.subscriptions:
            self.rebalance_impl.topic_subscribe_info_table[topic] = mqs

    def rebalance_immediately(self) -> None:
        self._wake.set()

    async def start(self) -> None:
        if self.group in self.instance.consumers:
            raise MQClientException(f"The consumer group[{self.group}] has been created before, specify another name "
                                    "please.")
        self.instance.consumers[self.group] = self
        self.instance.start()
        for topic in self.subscriptions:
            await self.instance.update_topic_route_info_from_name_server(topic)
        await self.instance.send_heartbeat_to_all_broker()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._rebalance_service()), loop.create_task(self._persist_service())]

    async def _rebalance_service(self) -> None:
        while True:
            try:
                await self.do_rebalance()
            except (RemotingError, BrokerAnswerError, MQClientException, CodecError) as e:
                self.events.append(("rebalance_error", str(e)))
            try:
                await asyncio.wait_for(self._wake.wait(), self.rebalance_interval / 1000)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()

    async def do_rebalance(self) -> None:
        for topic in self.subscriptions:
            result = await self.instance.drive(self.rebalance_impl.rebalance_by_topic(topic))
            if result.warning is not None:
                self.events.append(("rebalance_warning", result.warning))
            for mq in result.removed:
                task = self.pull_tasks.pop(mq, None)
                if task is not None:
                    task.cancel()
                await self._persist([mq])
                self.offset_store.remove_offset(mq)
            for mq, offset in result.added.items():
                self.pull_tasks[mq] = asyncio.get_running_loop().create_task(self._pull_loop(mq, offset))
            if result.added or result.removed:
                self.events.append(("rebalance", (sorted(result.added), sorted(result.removed))))
                self.instance.trace("client_rebalance", group=self.group, topic=topic,
                                    targets=[f"{q.broker_name}:{q.queue_id}" for q in self.owned() if q.topic == topic])

    def owned(self) -> list[MessageQueue]:
        return sorted(self.rebalance_impl.process_queue_table)

    # ---------------------------------------------------------------------------------- pulling
    @abstractmethod
    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        """The style's pull (its PullSysFlag, suspend time, subscription)."""

    async def _pull_once(self, mq: MessageQueue, offset: int, timeout_ms: int) -> Any:
        found = self.instance.broker_addrs.find_broker_address_in_subscribe(mq.broker_name,
                                                                            self.suggested.get(mq, 0), False)
        if found is None:
            await self.instance.update_topic_route_info_from_name_server(mq.topic)
            found = self.instance.broker_addrs.find_broker_address_in_subscribe(mq.broker_name)
        if found is None:
            raise MQClientException(f"The broker[{mq.broker_name}] not exist")
        began = now_ms()
        answer = await self.instance.call(Call(found[0], self.pull_request(mq, offset), timeout_ms))
        self.instance.trace("client_pull", topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id,
                            offset=offset, status=answer.pull_status, latency_ms=float(now_ms() - began))
        self.suggested[mq] = answer.suggest_which_broker_id
        sd = self.subscriptions.get(mq.topic) or SubscriptionData(mq.topic)
        msgs = decode_pulled(answer.body, sd.tags_set, answer.min_offset, answer.max_offset) \
            if answer.pull_status == "FOUND" else []
        for m in msgs:
            reset_retry_topic(m, self.group)
        return answer, msgs

    async def _pull_loop(self, mq: MessageQueue, offset: int) -> None:
        pq = self.rebalance_impl.process_queue_table.get(mq)
        while pq is not None and not pq.dropped:
            delay = self.flow_control_delay(pq)
            if delay:
                await asyncio.sleep(delay / 1000)
                continue
            try:
                answer, msgs = await self._pull_once(mq, offset, self.pull_timeout_ms)
            except (RemotingError, BrokerAnswerError, MQClientException, CodecError) as e:
                self.events.append(("pull_error", f"{mq}: {e}"))
                await asyncio.sleep(self.pull_time_delay_mills_when_exception / 1000)
                continue
            offset = answer.next_begin_offset
            if msgs:
                await self.hand_over(mq, pq, msgs)
            else:
                self.pulled_nothing(mq, pq, offset)

    pull_time_delay_mills_when_exception = PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION

    def flow_control_delay(self, pq: ProcessQueue) -> int:
        """How long to wait before the next pull of ``pq``'s queue (ms; 0: now)."""
        return 0

    @abstractmethod
    def pulled_nothing(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        """A pull that brought no message (NO_NEW_MSG, NO_MATCHED_MSG, OFFSET_ILLEGAL)."""

    pull_timeout_ms = 30000

    @abstractmethod
    async def hand_over(self, mq: MessageQueue, pq: Any, msgs: list[MessageExt]) -> None:
        """Give pulled messages to the application, the style's way."""

    # ---------------------------------------------------------------------------------- offsets
    async def _persist(self, mqs: Iterable[MessageQueue]) -> None:
        for call in self.offset_store.persist_all(mqs):
            try:
                await self.instance.call(call)
            except RemotingError as e:
                self.events.append(("persist_error", str(e)))

    async def _persist_service(self) -> None:
        while True:
            await asyncio.sleep(self.persist_interval / 1000)
            await self._persist(self.owned())

    async def shutdown(self) -> None:
        for t in [*self._tasks, *self.pull_tasks.values()]:
            t.cancel()
        await self._persist(self.owned())
        self.instance.consumers.pop(self.group, None)
        for addr in self.instance.broker_addrs.masters():
            try:
                await self.instance.remoting.invoke(addr, UnregisterClientRequest(self.instance.client_id, None,
                                                                                  self.group), 3000)
            except (RemotingError, BrokerAnswerError, CodecError):
                continue


class PushConsumer(_Member):
    """``DefaultMQPushConsumer`` (see the module docstring)."""

    consume_type = "CONSUME_PASSIVELY"

    def __init__(self, instance: MQClientInstance, group: str, listener: Listener,
                 consume_from_where: str = "CONSUME_FROM_LAST_OFFSET", allocate: Any = None,
                 consume_thread_max: int = 20, max_reconsume_times: int = -1, rebalance_interval: int = 20000,
                 persist_consumer_offset_interval: int = 5000, pull_batch_size: int = 32,
                 broker_suspend_max_time_millis: int = 15000, consume_timestamp_ms: int | None = None) -> None:
        super().__init__(instance, group, consume_from_where, allocate, rebalance_interval,
                         persist_consumer_offset_interval, pull_batch_size, consume_timestamp_ms)
        self.listener = listener
        self.max_reconsume_times = 16 if max_reconsume_times == -1 else max_reconsume_times
        self.suspend_ms = broker_suspend_max_time_millis
        self._slots = asyncio.Semaphore(consume_thread_max)

    async def start(self) -> None:
        self.subscriptions[RETRY_GROUP_TOPIC_PREFIX + self.group] = SubscriptionData(
            RETRY_GROUP_TOPIC_PREFIX + self.group, "*", now_ms())
        await super().start()

    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        committed = self.offset_store.read_offset_memory(mq)
        sys_flag = FLAG_SUSPEND | (FLAG_COMMIT_OFFSET if committed > 0 else 0)
        sd = self.subscriptions[mq.topic]
        return PullMessageRequest(self.group, mq.topic, mq.queue_id, offset, self.pull_batch_size, sys_flag,
                                  max(committed, 0), self.suspend_ms, None, sd.sub_version, "TAG", mq.broker_name)

    def pulled_nothing(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        if pq.msg_count == 0:  # correctTagsOffset
            self.offset_store.update_offset(mq, next_offset, True)

    async def hand_over(self, mq: MessageQueue, pq: Any, msgs: list[MessageExt]) -> None:
        pq.put_message(msgs)
        for m in msgs:  # consumeMessageBatchMaxSize 1: one request per message, in order
            await self._slots.acquire()
            asyncio.get_running_loop().create_task(self._consume(mq, pq, m))

    async def _consume(self, mq: MessageQueue, pq: Any, m: MessageExt) -> None:
        try:
            m.properties[PROPERTY_CONSUME_START_TIMESTAMP] = str(now_ms())
            try:
                status = self.listener([m])
                if inspect.isawaitable(status):
                    status = await status
            except Exception as e:  # noqa: BLE001 - Java: a listener that throws is RECONSUME_LATER
                self.events.append(("listener_error", repr(e)))
                status = "RECONSUME_LATER"
        finally:
            self._slots.release()
        self.instance.trace("client_consume", group=self.group, topic=m.topic, queue_id=m.queue_id,
                            queue_offset=m.queue_offset, uniq_key=m.uniq_key, status=status)
        if status != "CONSUME_SUCCESS" and not await self.send_message_back(m, mq):
            m.reconsume_times += 1
            asyncio.get_running_loop().call_later(5, lambda: asyncio.ensure_future(self._consume_later(mq, pq, m)))
            return
        offset = pq.remove_message([m])
        if offset >= 0 and not pq.dropped:
            self.offset_store.update_offset(mq, offset, True)

    async def _consume_later(self, mq: MessageQueue, pq: Any, m: MessageExt) -> None:
        await self._slots.acquire()
        await self._consume(mq, pq, m)

    async def send_message_back(self, m: MessageExt, mq: MessageQueue) -> bool:
        addr = self.instance.broker_addrs.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            host, port = m.store_host
            addr = f"{host}:{port}"
        request = ConsumerSendMsgBackRequest(m.commit_log_offset, self.group, 0, m.msg_id, m.topic,
                                             self.max_reconsume_times)
        try:
            await self.instance.call(Call(addr, request, 5000))
            self.instance.trace("client_send_back", group=self.group, uniq_key=m.uniq_key, ok=True)
            return True
        except (RemotingError, BrokerAnswerError, CodecError) as e:
            self.instance.trace("client_send_back", group=self.group, uniq_key=m.uniq_key, ok=False,
                                reason=str(e)[:200])
            self.events.append(("send_back_error", str(e)))
        retry = Message(RETRY_GROUP_TOPIC_PREFIX + self.group, m.body, flag=m.flag, properties=dict(m.properties))
        retry.properties.setdefault("ORIGIN_MESSAGE_ID", m.msg_id)
        retry.properties.update({"RETRY_TOPIC": m.topic, "RECONSUME_TIME": str(m.reconsume_times + 1),
                                 "MAX_RECONSUME_TIMES": str(self.max_reconsume_times),
                                 "DELAY": str(3 + m.reconsume_times)})
        try:  # Java: through the client instance's inner producer (CLIENT_INNER_PRODUCER)
            await Producer(self.instance, ProducerConfig(producer_group="CLIENT_INNER_PRODUCER")).send(retry)
        except (RemotingError, BrokerAnswerError, MQClientException, CodecError) as e:
            self.events.append(("send_back_error", str(e)))
            return False
        return True


class PullConsumer(_Member):
    """``DefaultLitePullConsumer``: ``assign(queues)`` or ``subscribe(topic, expression)``, then ``poll``; its
    decisions (the pull, flow control, the consume request cache, autoCommit) are
    :class:`~rocketlab.client.lite_pull.LitePull`'s, as in the simulator's
    :class:`~rocketlab.client.lite_pull_core.LitePullConsumerCore`."""

    pull_time_delay_mills_when_exception = LITE_PULL_DELAY_WHEN_EXCEPTION

    def __init__(self, instance: MQClientInstance, group: str, consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
                 allocate: Any = None, rebalance_interval: int = 20000, auto_commit_interval_millis: int = 5000,
                 pull_batch_size: int = 10, broker_suspend_max_time_millis: int = 20000,
                 persist_consumer_offset_interval: int = 5000, config: LitePullConfig | None = None) -> None:
        config = config or LitePullConfig(pull_batch_size=pull_batch_size,
                                          auto_commit_interval_millis=auto_commit_interval_millis,
                                          broker_suspend_max_time_millis=broker_suspend_max_time_millis)
        super().__init__(instance, group, consume_from_where, allocate, rebalance_interval,
                         persist_consumer_offset_interval, config.pull_batch_size)
        self.lite = LitePull(group, config)
        self._arrived = asyncio.Event()
        self.assigned: list[MessageQueue] | None = None

    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        return self.lite.pull_request(mq, offset, self.subscriptions.get(mq.topic))

    def flow_control_delay(self, pq: ProcessQueue) -> int:
        return self.lite.flow_control_delay(pq)

    def pulled_nothing(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        """Nothing to do: a lite pull consumer's offsets move only by its commits (no ``correctTagsOffset``)."""

    async def fetch_message_queues(self, topic: str) -> list[MessageQueue]:
        if not await self.instance.update_topic_route_info_from_name_server(topic):
            raise MQClientException(f"Can not find Message Queue for this topic, {topic}")
        route = self.instance.topic_route_table[topic]
        return sorted(MessageQueue(topic, q.broker_name, i) for q in route.queue_datas for i in range(q.read_queue_nums))

    async def assign(self, mqs: list[MessageQueue]) -> None:
        """Own exactly ``mqs`` (no group rebalance); each is pulled from ``computePullFromWhere``'s offset."""
        self.assigned = sorted(mqs)
        self.instance.start()
        for topic in {mq.topic for mq in mqs}:
            await self.instance.update_topic_route_info_from_name_server(topic)
        result = await self.instance.drive(self.rebalance_impl.update_process_queue_table_in_rebalance(
            mqs[0].topic if mqs else "", set(mqs)))
        for mq, offset in result.added.items():
            self.pull_tasks[mq] = asyncio.get_running_loop().create_task(self._pull_loop(mq, offset))
        self._tasks = [asyncio.get_running_loop().create_task(self._persist_service())]

    async def hand_over(self, mq: MessageQueue, pq: Any, msgs: list[MessageExt]) -> None:
        self.lite.submit(mq, pq, msgs)
        self._arrived.set()

    async def poll(self, timeout_ms: int | None = None) -> list[MessageExt]:
        """``poll(timeout)`` (``pollTimeoutMillis`` unless given): auto-commit when due, then the next pulled
        messages of one queue ([] after the timeout)."""
        timeout_ms = self.lite.config.poll_timeout_millis if timeout_ms is None else timeout_ms
        self.lite.maybe_auto_commit(now_ms(), self.offset_store, self.rebalance_impl.process_queue_table.get)
        end = asyncio.get_running_loop().time() + timeout_ms / 1000
        while (request := self.lite.take()) is None:
            remaining = end - asyncio.get_running_loop().time()
            if remaining <= 0:
                return []
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                continue
        for m in request.messages:
            self.instance.trace("client_consume", group=self.group, topic=m.topic, queue_id=m.queue_id,
                                queue_offset=m.queue_offset, uniq_key=m.uniq_key, status="POLLED",
                                broker_name=request.message_queue.broker_name)
        return request.messages
