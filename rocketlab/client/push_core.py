"""PushConsumerCore: ``DefaultMQPushConsumer``'s services inside :class:`~rocketlab.client.client_core.MQClientCore`
(``RebalanceService``, ``PullMessageService``, ``ConsumeMessageConcurrentlyService``, the offset persister), as
generators the client core drives; the asyncio twin is :class:`~rocketlab.client.consumers.PushConsumer`.

Start: the subscribed topics' routes, HEART_BEAT to every master, a rebalance (then every ``rebalance_interval``
and at once on NOTIFY_CONSUMER_IDS_CHANGED). Each owned queue is pulled from ``computePullFromWhere``'s offset
with long polling (``brokerSuspendMaxTimeMillis`` 15 s, the pull timing out after
``consumerTimeoutMillisWhenSuspend`` 30 s, the committed offset carried by the pull), a failed pull retried after
3 s (``PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION``). The application's listener consumes each message at once and
answers CONSUME_SUCCESS (RECONSUME_LATER for a message whose KEYS is one of ``reject_keys``: it is sent back,
CONSUMER_SEND_MSG_BACK, and comes again on ``%RETRY%group`` after its delay level, until ``maxReconsumeTimes``
sends it to ``%DLQ%group``; when the send-back fails it is consumed here again 5 s later); the offset that may be
committed moves as ``ProcessQueue.removeMessage`` says and reaches
the broker every ``persistConsumerOffsetInterval`` (5 s, oneway UPDATE_CONSUMER_OFFSET), when a queue is taken
away by a rebalance, and in the next pull's ``commitOffset``.

Differences (as :mod:`rocketlab.client.consumers`): OFFSET_ILLEGAL is followed at once from ``nextBeginOffset``; no
flow control; a failed send-back is not resent through the instance's inner producer (it is consumed again here).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from rocketlab.client.client_core import FAILURES, ClientNodeConfig, MQClientCore, Sleep
from rocketlab.client.consumer import ProcessQueue
from rocketlab.client.consumers import FLAG_COMMIT_OFFSET, FLAG_SUSPEND, PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION
from rocketlab.client.member_core import MemberCore
from rocketlab.client.message import RETRY_GROUP_TOPIC_PREFIX, MessageQueue
from rocketlab.client.producer import Call
from rocketlab.client.protocol import ConsumerSendMsgBackRequest, PullMessageRequest
from rocketlab.core import NodeContext


class PushConsumerCore(MemberCore):
    """One member of ``group`` (clustering) in ``client`` (see the module docstring), subscribing ``topic`` and the
    group's retry topic. Inspection: :meth:`owned`, :attr:`consumed` (uniq keys in the order the listener saw
    them)."""

    consume_type = "CONSUME_PASSIVELY"

    def __init__(self, client: MQClientCore, group: str, topic: str, allocate: Any = None) -> None:
        super().__init__(client, group, (topic, RETRY_GROUP_TOPIC_PREFIX + group), allocate)

    def start(self, client: MQClientCore) -> None:
        self.start_group_services(client)

    # ---------------------------------------------------------------------------------- pulling
    def pull_request(self, mq: MessageQueue, offset: int) -> PullMessageRequest:
        committed = self.offset_store.read_offset_memory(mq)
        sys_flag = FLAG_SUSPEND | (FLAG_COMMIT_OFFSET if committed > 0 else 0)
        sd = self.subscriptions[mq.topic]
        c = self.client.config
        return PullMessageRequest(self.group, mq.topic, mq.queue_id, offset, c.pull_batch_size, sys_flag,
                                  max(committed, 0), c.broker_suspend_max_time_millis, None, sd.sub_version, "TAG",
                                  mq.broker_name)

    def _pull_loop(self, mq: MessageQueue, offset: int) -> Generator[Any, Any, None]:
        pq = self.rebalance_impl.process_queue_table.get(mq)
        while pq is not None and not pq.dropped:
            try:
                answer, msgs = yield from self._pull_once(mq, offset)
            except FAILURES as e:
                self.client.events.append(("pull_error", f"{mq}: {e}"))
                yield Sleep(PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION)
                continue
            if pq.dropped:
                return
            offset = answer.next_begin_offset
            if msgs:
                pq.put_message(msgs)
                self.client.spawn(self._consume_request(mq, pq, msgs), f"consume {mq}")
            elif pq.msg_count == 0:  # correctTagsOffset
                self.offset_store.update_offset(mq, offset, True)

    def _consume_request(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[Any]) -> Generator[Any, Any, None]:
        """``ConsumeMessageConcurrentlyService``'s ``ConsumeRequest``, on the consume threads: it runs after the pull
        callback has sent the next pull (so that pull carries the offset committed before these messages), each
        message taking ``consume_time_ms``; CONSUME_SUCCESS moves the offset on."""
        for m in msgs:
            yield Sleep(self.client.config.consume_time_ms)
            if pq.dropped:  # the queue went to another member meanwhile: not consumed here
                return
            self.consumed.append(m.uniq_key)
            status = "RECONSUME_LATER" if m.keys in self.client.config.reject_keys else "CONSUME_SUCCESS"
            self.client._out.trace("client_consume", group=self.group, topic=m.topic, queue_id=m.queue_id,
                                   queue_offset=m.queue_offset, uniq_key=m.uniq_key, status=status,
                                   broker_name=mq.broker_name, reconsume_times=m.reconsume_times)
            if status != "CONSUME_SUCCESS" and not (yield from self.send_message_back(m, mq)):
                m.reconsume_times += 1  # consumed here again in 5 s (submitConsumeRequestLater)
                self.client.spawn(self._consume_later(mq, pq, m), f"consume later {mq}")
                continue
            offset = pq.remove_message([m])
            if offset >= 0 and not pq.dropped:
                self.offset_store.update_offset(mq, offset, True)

    def _consume_later(self, mq: MessageQueue, pq: ProcessQueue, m: Any) -> Generator[Any, Any, None]:
        yield Sleep(5_000)
        yield from self._consume_request(mq, pq, [m])

    def send_message_back(self, m: Any, mq: MessageQueue) -> Generator[Any, Any, bool]:
        """``sendMessageBack``: CONSUMER_SEND_MSG_BACK to the queue's master (delay level 0: the broker's 3 +
        reconsume times; ``maxReconsumeTimes`` 16 unless set), then the broker schedules the retry or, past the
        maximum, moves the message to ``%DLQ%group``. True when the broker took it."""
        addr = self.client.broker_addrs.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            host, port = m.store_host
            addr = f"{host}:{port}"
        request = ConsumerSendMsgBackRequest(m.commit_log_offset, self.group, 0, m.msg_id, m.topic,
                                             self.client.config.max_reconsume_times)
        try:
            yield Call(addr, request, 5_000)
        except FAILURES as e:
            self.client._out.trace("client_send_back", group=self.group, uniq_key=m.uniq_key, ok=False,
                                   reason=str(e)[:200])
            return False
        self.client._out.trace("client_send_back", group=self.group, uniq_key=m.uniq_key, ok=True)
        return True


def make_client(ctx: NodeContext, config: ClientNodeConfig) -> MQClientCore:
    """A client process: the instance, with a push consumer when ``config.consumer_group`` is set."""
    core = MQClientCore(ctx, config)
    if config.consumer_group is not None:
        core.consumer = PushConsumerCore(core, config.consumer_group, config.topic)
    return core
