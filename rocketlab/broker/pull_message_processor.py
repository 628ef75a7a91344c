"""PULL_MESSAGE as RocketMQ 4.9.5's ``PullMessageProcessor.processRequest`` answers it.

The checks in Java's order (subscription group, created on first use with ``autoCreateSubscriptionGroup``;
topic, its read permission and queue id; the subscription: the pull's own with FLAG_SUBSCRIPTION,
``FilterAPI.build``, else the one the group's heartbeat registered, its version no older than the
pull's), the store read through ``ExpressionMessageFilter`` (tags hash codes in the consume queue),
the answer's code from the store's status, ``suggestWhichBrokerId``, then: nothing new and
FLAG_SUSPEND set -> the pull is held (:mod:`rocketlab.broker.pull_request_hold_service`), for
``suspendTimeoutMillis`` with long polling, ``shortPollingTimeMills`` without; FLAG_COMMIT_OFFSET on a
master -> the pull's ``commitOffset`` is stored as the group's offset.

Faithful to a 4.9.5 quirk: a slave without ``slaveReadEnable`` sets PULL_RETRY_IMMEDIATELY, then the
store status's code overwrites it (it serves what it found, suggesting the master).

Differences: no OffsetMovedEvent message on PULL_OFFSET_MOVED, no consume-message hooks or stats; a
topic the store holds queues for counts as existing when the topic table lacks it (a slave before its
first metadata sync; controller-mode brokers, which keep no topics.json in the kit); SQL92/class
filters are refused as a broker with ``enablePropertyFilter=false`` refuses them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketlab.broker.client_manager import ConsumerManager
from rocketlab.broker.client_messages import ClientResponseCode as R
from rocketlab.broker.client_messages import SubscriptionData
from rocketlab.broker.config_manager import BrokerMetadata, default_topic_config
from rocketlab.broker.protocol import (
    PULL_CODES,
    PullMessageRequest,
    PullMessageResponse,
    PullSysFlag,
    ResponseCode,
)
from rocketlab.broker.pull_request_hold_service import PullRequest, PullRequestHoldService
from rocketlab.remoting.fastjson import java_string_hash

FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
MASTER_ID = 0
PERM_READ = 0x1 << 2


@dataclass(frozen=True)
class ExpressionMessageFilter:
    """``ExpressionMessageFilter``, TAG type: every message for ``*``, else a tags hash in the code set."""

    subscription: SubscriptionData

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        s = self.subscription
        if tags_code is None or s.class_filter_mode or s.sub_string == "*":
            return True
        return tags_code in s.code_set

    def is_matched_by_commit_log(self, msg_buffer: bytes) -> bool:
        return True


def build_subscription_data(topic: str, sub_string: str | None, expression_type: str | None) -> SubscriptionData:
    """``FilterAPI.build`` (TAG): ``A || B`` -> tags and their hash codes; ``ValueError`` on bad input."""
    if expression_type not in (None, "TAG"):
        if not sub_string:
            raise ValueError(f"Expression can't be null! {expression_type}")
        return SubscriptionData(topic, sub_string, expression_type=expression_type)
    if sub_string is None or sub_string in ("*", ""):
        return SubscriptionData(topic, "*")
    tags = tuple(dict.fromkeys(t.strip() for t in sub_string.split("||") if t.strip()))
    return SubscriptionData(topic, sub_string, tags, tuple(java_string_hash(t) for t in tags))


@dataclass
class PullContext:
    """What the processor reads of its broker: store, metadata, clients, held pulls and its role."""

    store: Any
    metadata: BrokerMetadata
    consumer_manager: ConsumerManager
    hold_service: PullRequestHoldService
    is_slave: Callable[[], bool]
    slave_read_enable: bool
    long_polling_enable: bool
    short_polling_time_mills: int
    auto_create_subscription_group: bool


def _error(code: int, remark: str) -> PullMessageResponse:
    return PullMessageResponse(remark, code=code)


def _group_config(ctx: PullContext, group: str, now_ms: int) -> dict[str, Any] | None:
    table = ctx.metadata.subscription_group_manager.subscription_group_table
    if group not in table and ctx.auto_create_subscription_group:
        ctx.metadata.subscription_group_manager.create_group_if_absent(group, now_ms)
    return table.get(group)


def _topic_config(ctx: PullContext, topic: str) -> dict[str, Any] | None:
    config = ctx.metadata.topic_config_manager.topic_config_table.get(topic)
    if config is None and ctx.store.consume_queue_table.get(topic):
        return default_topic_config(topic, max(ctx.store.consume_queue_table[topic]) + 1)
    return config


def _subscription(ctx: PullContext, req: PullMessageRequest, src: str,
                  group: dict[str, Any]) -> SubscriptionData | PullMessageResponse:
    if req.sys_flag & PullSysFlag.FLAG_SUBSCRIPTION:
        try:
            sub = build_subscription_data(req.topic, req.subscription, req.expression_type)
        except ValueError:
            return _error(R.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed")
    else:
        info = ctx.consumer_manager.get_consumer_group_info(req.consumer_group)
        if info is None:
            return _error(R.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist" + FAQ)
        if not group.get("consumeBroadcastEnable", True) and info.message_model == "BROADCASTING":
            return _error(R.NO_PERMISSION, f"the consumer group[{req.consumer_group}] can not consume by broadcast way")
        found = info.find_subscription_data(req.topic)
        if found is None:
            return _error(R.SUBSCRIPTION_NOT_EXIST, "the consumer's subscription not exist" + FAQ)
        if found.sub_version < req.sub_version:
            return _error(R.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest")
        sub = found
    if sub.expression_type != "TAG":
        return _error(R.SYSTEM_ERROR, f"The broker does not support consumer to filter message by {sub.expression_type}")
    return sub


def _checked(ctx: PullContext, req: PullMessageRequest, src: str,
             now_ms: int) -> tuple[dict[str, Any], SubscriptionData] | PullMessageResponse:
    """The checks before the read: (group config, subscription), or the error answer."""
    group = _group_config(ctx, req.consumer_group, now_ms)
    if group is None:
        return _error(R.SUBSCRIPTION_GROUP_NOT_EXIST,
                      f"subscription group [{req.consumer_group}] does not exist, {FAQ}")
    if not group.get("consumeEnable", True):
        return _error(R.NO_PERMISSION, "subscription group no permission, " + req.consumer_group)
    topic = _topic_config(ctx, req.topic)
    if topic is None:
        return _error(R.TOPIC_NOT_EXIST, f"topic[{req.topic}] not exist, apply first please! {FAQ}")
    if not int(topic.get("perm", 6)) & PERM_READ:
        return _error(R.NO_PERMISSION, f"the topic[{req.topic}] pulling message is forbidden")
    read_queue_nums = int(topic.get("readQueueNums", 0))
    if req.queue_id < 0 or req.queue_id >= read_queue_nums:
        return _error(R.SYSTEM_ERROR, f"queueId[{req.queue_id}] is illegal, topic:[{req.topic}] "
                      f"topicConfig.readQueueNums:[{read_queue_nums}] consumer:[/{src}]")
    sub = _subscription(ctx, req, src, group)
    return sub if isinstance(sub, PullMessageResponse) else (group, sub)


def _code_of(status: str, req: PullMessageRequest) -> int:
    if status in ("NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE") and req.offset != 0:
        return ResponseCode.PULL_OFFSET_MOVED
    return PULL_CODES[status]


def process_pull(ctx: PullContext, src: str, request_id: int, req: PullMessageRequest, now_ms: int,
                 broker_allow_suspend: bool = True) -> PullMessageResponse | None:
    """The answer to a pull, or None: held (answered later, when woken)."""
    checked = _checked(ctx, req, src, now_ms)
    if isinstance(checked, PullMessageResponse):
        return checked
    group, sub = checked
    message_filter = ExpressionMessageFilter(sub)
    got = ctx.store.get_message(req.topic, req.queue_id, req.offset, req.max_msg_nums, message_filter,
                                group=req.consumer_group)
    status = got.status.name
    slave = ctx.is_slave()
    if ctx.slave_read_enable:
        suggest = int(group.get("whichBrokerWhenConsumeSlowly", 1)) if got.suggest_pulling_from_slave \
            else int(group.get("brokerId", MASTER_ID))
    else:
        suggest = MASTER_ID
    code = _code_of(status, req)
    if code == ResponseCode.PULL_OFFSET_MOVED and slave and not ctx.store.config.offset_check_in_slave:
        code, suggest = ResponseCode.PULL_RETRY_IMMEDIATELY, int(group.get("brokerId", MASTER_ID))
    answer: PullMessageResponse | None = PullMessageResponse(
        status, b"".join(got.message_buffer_list) if code == ResponseCode.SUCCESS else b"",
        got.next_begin_offset, got.min_offset, got.max_offset, suggest,
        code=None if code == PULL_CODES.get(status) else code)
    if code == ResponseCode.PULL_NOT_FOUND and broker_allow_suspend and req.sys_flag & PullSysFlag.FLAG_SUSPEND:
        polling = req.suspend_timeout_millis if ctx.long_polling_enable else ctx.short_polling_time_mills
        ctx.hold_service.suspend_pull_request(req.topic, req.queue_id, PullRequest(
            src, request_id, req, now_ms, polling, req.offset, message_filter))
        answer = None
    if broker_allow_suspend and req.sys_flag & PullSysFlag.FLAG_COMMIT_OFFSET and not slave:
        ctx.metadata.consumer_offset_manager.commit_offset(req.consumer_group, req.topic, req.queue_id,
                                                           req.commit_offset)
    return answer
