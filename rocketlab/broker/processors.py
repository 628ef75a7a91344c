"""BrokerProcessors: the client-facing half of ``BrokerController``'s processor table, shared by every broker.

The classic broker (:mod:`rocketlab.broker.broker`), the broker on DLedger
(:mod:`rocketlab.broker.dledger_broker`) and the controller-mode broker
(:mod:`rocketlab.broker.auto_switch_broker`) hand it the requests below from ``on_request`` /
``on_message``, the closing of a client's connection from ``on_peer_closed``, and call :meth:`on_tick`,
:meth:`after_input` and :meth:`next_deadline_ms` beside their own. It holds what Java's
``BrokerController`` holds for clients: ``ProducerManager``, ``ConsumerManager``,
``RebalanceLockManager``, ``PullRequestHoldService`` and the ``ClientHousekeepingService`` scan, and
runs, from RocketMQ 4.9.5:

* ``ClientManageProcessor``: HEART_BEAT (also creates the group's ``%RETRY%`` topic, as Java does) and
  UNREGISTER_CLIENT; a group that gains or loses a member is told so (NOTIFY_CONSUMER_IDS_CHANGED,
  oneway, to every member: ``DefaultConsumerIdsChangeListener`` / ``Broker2Client``);
* ``ConsumerManageProcessor``: GET_CONSUMER_LIST_BY_GROUP, UPDATE_CONSUMER_OFFSET (two-way and
  oneway), QUERY_CONSUMER_OFFSET; offsets persisted every ``flushConsumerOffsetInterval`` (first after
  10 s) and at shutdown, as ``BrokerController`` schedules it;
* ``PullMessageProcessor`` with long polling (:mod:`rocketlab.broker.pull_message_processor`);
* ``AdminBrokerProcessor``'s offset queries and queue locks, ``QueryMessageProcessor``
  (:mod:`rocketlab.broker.admin_processors`).

The controller-mode broker (modelled on 5.3.3) serves these 4.9.5 answers too: a named difference (5.3.3's
processors answer more codes and read more header fields, e.g. a pull's ``maxMsgBytes``).

Sans-IO: the scan, the offset flush and the held pulls' checks are deadlines, set only while there is
something to do (clients registered, offsets committed, pulls held), so a broker no client talks to
(the simulator's) sets no new timer. Trace events: ``consumer_group``, ``consumer_ids_notified``,
``pull_held``, ``pull_woken``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocketlab.broker import client_messages as m
from rocketlab.broker.admin_processors import (
    answer_lock,
    answer_store_query,
    get_consumer_list_by_group,
    query_consumer_offset,
)
from rocketlab.broker.client_manager import (
    SCAN_INTERVAL_MS,
    ClientChannelInfo,
    ConsumerManager,
    GroupEvent,
    ProducerManager,
)
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.processor_config import ProcessorConfig  # noqa: F401 - the cores import it from here
from rocketlab.broker.protocol import (
    PullMessageRequest,
    UpdateConsumerOffsetRequest,
    UpdateConsumerOffsetResponse,
)
from rocketlab.broker.pull_message_processor import PullContext, process_pull
from rocketlab.broker.pull_request_hold_service import (
    MessageArrivingDispatcher,
    PullRequest,
    PullRequestHoldService,
)
from rocketlab.broker.rebalance_lock_manager import RebalanceLockManager
from rocketlab.core import Output, OutputBuilder

OFFSET_FLUSH_FIRST_DELAY_MS = 10_000
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
_SERVED = frozenset({*m.CLIENT_REQUESTS, PullMessageRequest, UpdateConsumerOffsetRequest}) - {m.NotifyConsumerIdsChanged}


class BrokerProcessors:
    """See the module docstring. ``is_slave()``: the broker's role now (it changes on a failover)."""

    def __init__(self, store: Any, metadata: BrokerMetadata, config: ProcessorConfig,
                 is_slave: Callable[[], bool], slave_read_enable: bool = False) -> None:
        self.store = store
        self.metadata = metadata
        self.config = config
        self.is_slave = is_slave
        if config.total_physical_memory is not None:
            store._total_memory = config.total_physical_memory  # StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE
        self.total_memory: int = store._total_memory
        self.producer_manager = ProducerManager()
        self.consumer_manager = ConsumerManager()
        self.lock_manager = RebalanceLockManager()
        self.hold_service = PullRequestHoldService(config.long_polling_enable, config.short_polling_time_mills)
        self.arriving = MessageArrivingDispatcher()
        store.dispatcher_list.append(self.arriving)
        self.pull_context = PullContext(store, metadata, self.consumer_manager, self.hold_service, is_slave,
                                        slave_read_enable, config.long_polling_enable,
                                        config.short_polling_time_mills, config.auto_create_subscription_group)
        self.next_scan_ms = SCAN_INTERVAL_MS
        self.next_offset_flush_ms = OFFSET_FLUSH_FIRST_DELAY_MS

    @classmethod
    def with_metadata(cls, store: Any, config_dir: Any, config: ProcessorConfig,
                      is_slave: Callable[[], bool]) -> BrokerProcessors:
        """For a broker core without metadata of its own (controller mode): the tables under ``config_dir``."""
        metadata = BrokerMetadata(config_dir)
        metadata.load()
        return cls(store, metadata, config, is_slave)

    def start(self, now_ms: int) -> None:
        """The schedules start: the scan 10 s from now, the offset flush 10 s from now."""
        self.next_scan_ms = now_ms + SCAN_INTERVAL_MS
        self.next_offset_flush_ms = now_ms + OFFSET_FLUSH_FIRST_DELAY_MS
        self.hold_service.start(now_ms)

    def shutdown(self) -> None:
        """``BrokerController.shutdown``: the consumer offsets are persisted."""
        if self.metadata.consumer_offset_manager.dirty:
            self.metadata.consumer_offset_manager.persist()

    # ------------------------------------------------------------------ inputs
    def serves(self, msg: Any) -> bool:
        return type(msg) in _SERVED

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int, out: OutputBuilder) -> bool:
        """Answer ``msg`` if it is a client request (True), else leave it to the core (False)."""
        t = type(msg)
        if t not in _SERVED:
            return False
        if t is PullMessageRequest:
            answer = process_pull(self.pull_context, src, request_id, msg, now_ms)
            if answer is None:
                out.trace("pull_held", topic=msg.topic, queue_id=msg.queue_id, offset=msg.offset, client=src,
                          timeout_ms=msg.suspend_timeout_millis if self.config.long_polling_enable
                          else self.config.short_polling_time_mills)
            else:
                out.reply(src, request_id, answer)
            return True
        if t is UpdateConsumerOffsetRequest:
            self.metadata.consumer_offset_manager.commit_offset(msg.group, msg.topic, msg.queue_id, msg.offset)
            out.reply(src, request_id, UpdateConsumerOffsetResponse(True))
            return True
        out.reply(src, request_id, self._answer(src, msg, now_ms, out))
        return True

    def on_message(self, src: str, msg: Any, now_ms: int, out: OutputBuilder) -> bool:
        """A oneway request: UPDATE_CONSUMER_OFFSET as the push consumer sends it (True if handled)."""
        if isinstance(msg, UpdateConsumerOffsetRequest):
            self.metadata.consumer_offset_manager.commit_offset(msg.group, msg.topic, msg.queue_id, msg.offset)
            return True
        return False

    def _answer(self, src: str, msg: Any, now_ms: int, out: OutputBuilder) -> Any:
        t = type(msg)
        if t is m.HeartbeatRequest:
            return self._heart_beat(src, msg, now_ms, out)
        if t is m.UnregisterClientRequest:
            return self._unregister_client(src, msg, out)
        if t is m.GetConsumerListByGroupRequest:
            return get_consumer_list_by_group(self.consumer_manager, msg)
        if t is m.QueryConsumerOffsetRequest:
            return query_consumer_offset(self.store, self.metadata.consumer_offset_manager, msg, self.total_memory)
        answer = answer_store_query(self.store, msg)
        return answer if answer is not None else answer_lock(self.lock_manager, msg, now_ms)

    def _group_config(self, group: str, now_ms: int) -> dict[str, Any] | None:
        """``findSubscriptionGroupConfig``: created on first use with ``autoCreateSubscriptionGroup``."""
        manager = self.metadata.subscription_group_manager
        if group not in manager.subscription_group_table and self.config.auto_create_subscription_group:
            manager.create_group_if_absent(group, now_ms)
        return manager.subscription_group_table.get(group)

    def _heart_beat(self, src: str, hb: m.HeartbeatRequest, now_ms: int, out: OutputBuilder) -> m.ClientAnswer:
        info = ClientChannelInfo(src, hb.client_id, hb.language, hb.version)
        for data in hb.consumers:
            group = self._group_config(data.group_name, now_ms)
            notify = True
            if group is not None:
                notify = bool(group.get("notifyConsumerIdsChangedEnable", True))
                self.metadata.topic_config_manager.create_topic_if_absent(
                    RETRY_GROUP_TOPIC_PREFIX + data.group_name, now_ms, int(group.get("retryQueueNums", 1)))
            before = self.consumer_manager.get_consumer_group_info(data.group_name)
            known = before is not None and src in before.channel_info_table
            _, events = self.consumer_manager.register_consumer(info, data, notify, now_ms)
            if not known:
                self._trace_group(out, data.group_name, "register", src)
            self._notify(events, out)
        for group_name in hb.producer_groups:
            self.producer_manager.register_producer(group_name, info, now_ms)
        return m.ClientAnswer()

    def _unregister_client(self, src: str, msg: m.UnregisterClientRequest, out: OutputBuilder) -> m.ClientAnswer:
        if msg.producer_group is not None:
            self.producer_manager.unregister_producer(msg.producer_group, src)
        if msg.consumer_group is not None:
            group = self.metadata.subscription_group_manager.subscription_group_table.get(msg.consumer_group)
            notify = bool(group.get("notifyConsumerIdsChangedEnable", True)) if group is not None else True
            info = self.consumer_manager.get_consumer_group_info(msg.consumer_group)
            known = info is not None and src in info.channel_info_table
            events = self.consumer_manager.unregister_consumer(msg.consumer_group, src, notify)
            if known:
                self._trace_group(out, msg.consumer_group, "unregister", src)
            self._notify(events, out)
        return m.ClientAnswer()

    def on_peer_closed(self, peer: str, now_ms: int, out: OutputBuilder) -> None:
        """``ClientHousekeepingService.onChannelClose``: the client's registrations go."""
        self.producer_manager.do_channel_close_event(peer)
        events = self.consumer_manager.do_channel_close_event(peer)
        for event in events:
            if event.kind == "CHANGE":
                self._trace_group(out, event.group, "channel_closed", peer)
        self._notify(events, out)

    def _trace_group(self, out: OutputBuilder, group: str, event: str, client: str) -> None:
        info = self.consumer_manager.get_consumer_group_info(group)
        out.trace("consumer_group", group=group, event=event, client=client,
                  members=len(info.channel_info_table) if info is not None else 0)

    def _notify(self, events: list[GroupEvent], out: OutputBuilder) -> None:
        if not self.config.notify_consumer_ids_changed_enable:
            return
        for event in events:
            if event.kind != "CHANGE":
                continue
            for channel in event.channels:
                out.send(channel, m.NotifyConsumerIdsChanged(event.group))
                out.trace("consumer_ids_notified", group=event.group, client=channel)

    # ------------------------------------------------------------------ time
    def next_deadline_ms(self) -> int | None:
        times = [self.hold_service.next_deadline_ms()]
        if self.consumer_manager.consumer_table or self.producer_manager.group_channel_table:
            times.append(self.next_scan_ms)
        if self.metadata.consumer_offset_manager.dirty:
            times.append(self.next_offset_flush_ms)
        return min((t for t in times if t is not None), default=None)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        """The fixed-rate tasks that are due (the scan, the offset flush), then the held pulls' check."""
        if now_ms >= self.next_scan_ms:
            self.next_scan_ms = _next_run(self.next_scan_ms, SCAN_INTERVAL_MS, now_ms)
            self._scan_not_active_channel(now_ms, out)
        if now_ms >= self.next_offset_flush_ms:
            self.next_offset_flush_ms = _next_run(self.next_offset_flush_ms, self.config.flush_consumer_offset_interval,
                                                  now_ms)
            if self.metadata.consumer_offset_manager.dirty:
                self.metadata.consumer_offset_manager.persist()
        self._wake(self.hold_service.check_hold_request(now_ms, self.store.get_max_offset_in_queue), now_ms, out)

    def _scan_not_active_channel(self, now_ms: int, out: OutputBuilder) -> None:
        """``ClientHousekeepingService.scanExceptionChannel``."""
        self.producer_manager.scan_not_active_channel(now_ms)
        for group, channel in self.consumer_manager.scan_not_active_channel(now_ms):
            self._trace_group(out, group, "expired", channel)

    def after_input(self, now_ms: int, out: OutputBuilder) -> None:
        """After every input of the core: the messages it dispatched wake the pulls held for their queues
        (``NotifyMessageArrivingListener``: on a master with long polling only)."""
        self.arriving.enabled = bool(self.hold_service.pull_request_table) and self.config.long_polling_enable \
            and not self.is_slave()
        arrived = self.arriving.drain()
        for topic, queue_id, max_offset, tags_code in arrived:
            self._wake(self.hold_service.notify_message_arriving(
                topic, queue_id, max_offset, tags_code, now_ms, self.store.get_max_offset_in_queue), now_ms, out)
        self.arriving.enabled = bool(self.hold_service.pull_request_table) and self.config.long_polling_enable \
            and not self.is_slave()

    def _wake(self, requests: list[PullRequest], now_ms: int, out: OutputBuilder) -> None:
        """``executeRequestWhenWakeup``: each pull processed again, never held again."""
        for r in requests:
            answer = process_pull(self.pull_context, r.src, r.request_id, r.request, now_ms, broker_allow_suspend=False)
            assert answer is not None
            out.reply(r.src, r.request_id, answer)
            out.trace("pull_woken", topic=r.request.topic, queue_id=r.request.queue_id, offset=r.request.offset,
                      client=r.src, status=answer.status, held_ms=now_ms - r.suspend_timestamp)


def _next_run(previous: int, period: int, now_ms: int) -> int:
    """A fixed-rate schedule's next run after ``now_ms`` (runs missed meanwhile are skipped)."""
    return previous + ((now_ms - previous) // period + 1) * period


class ClientServing:
    """What the three broker cores share of the client side: a client's connection closing
    (``on_peer_closed``). A core sets ``processors`` and, when its inputs end otherwise than with
    ``out.build()`` plus :meth:`BrokerProcessors.after_input`, overrides :meth:`_clients_done`."""

    processors: BrokerProcessors
    now_ms: int

    def _clients_done(self, out: OutputBuilder) -> Output:
        self.processors.after_input(self.now_ms, out)
        return out.build()

    def on_peer_closed(self, peer: str, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        self.processors.on_peer_closed(peer, now_ms, out)
        return self._clients_done(out)
