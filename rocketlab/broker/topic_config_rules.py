"""Where topics and subscription groups come from: the broker's keys, the system topics, auto-creation.

Models the parts of 4.9.5's ``BrokerConfig`` the send path reads (:class:`SendConfig`), the system topics
``TopicConfigManager``'s constructor puts in the table, ``createTopicInSendMessageMethod`` (a new topic
inherits from the producer's default topic, TBW102, when that one has PERM_INHERIT: ``autoCreateTopicEnable``),
``createTopicInSendMessageBackMethod`` (retry and dead-letter topics), ``AdminBrokerProcessor``'s
UPDATE_AND_CREATE_TOPIC and ``SubscriptionGroupManager.findSubscriptionGroupConfig`` (a group is created on
first use, ``autoCreateSubscriptionGroup``). Each change goes through
:meth:`~rocketlab.broker.config_manager.TopicConfigManager.update_topic_config`, so its listeners (the name
server registration) hear of it.

Difference, a kit switch: ``SendConfig.system_topics`` False (the simulator's brokers) leaves the system
topics out and creates a topic on first use as the kit always did (4 queues, perm RW), so the sample runs'
``topics.json`` stay as they are; ``rocketlab node`` brokers run with it True, as Java does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.broker.config_manager import BrokerMetadata, default_subscription_group
from rocketlab.broker.schedule_message_service import parse_delay_level
from rocketlab.broker.send_protocol import AdminResponse, CreateTopicRequest
from rocketlab.broker.topic_validator import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    REPLY_TOPIC_POSTFIX,
    RMQ_SYS_BENCHMARK_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT,
    RMQ_SYS_SCHEDULE_TOPIC,
    RMQ_SYS_SELF_TEST_TOPIC,
    SYSTEM_ERROR,
    PermName,
    broker_system_topics,
    system_topic_conflict,
    validate_topic,
)
from rocketlab.errors import ConfigError
from rocketlab.i18n import _

DEFAULT_MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
SCHEDULE_TOPIC_QUEUE_NUM = 18


@dataclass(frozen=True)
class SendConfig:
    """The broker.conf keys of the send and retry path (``BrokerConfig`` and ``MessageStoreConfig`` of
    4.9.5, defaults as there): ``brokerClusterName``, ``autoCreateTopicEnable``, ``defaultTopicQueueNums``,
    ``brokerPermission``, ``autoCreateSubscriptionGroup``, ``rejectTransactionMessage`` (the kit stores no
    half messages: a prepared transaction message is answered as with it true), ``messageDelayLevel``,
    ``maxMessageSize`` (for the remark only; the store enforces it); ``system_topics`` is the kit switch
    of the module docstring."""

    broker_cluster_name: str = "DefaultCluster"
    auto_create_topic_enable: bool = True
    default_topic_queue_nums: int = 8
    broker_permission: int = PermName.PERM_READ | PermName.PERM_WRITE
    auto_create_subscription_group: bool = True
    message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL
    max_message_size: int = 4 * 1024 * 1024
    system_topics: bool = True

    def __post_init__(self) -> None:
        if self.default_topic_queue_nums <= 0:
            raise ConfigError(_("{key}={value} must be positive").format(key="defaultTopicQueueNums",
                                                                         value=self.default_topic_queue_nums))
        parse_delay_level(self.message_delay_level)  # a bad messageDelayLevel fails at start


def topic_config(topic: str, queue_nums: int = 16, perm: int = 6, sys_flag: int = 0,
                 filter_type: str = "SINGLE_TAG", order: bool = False, write_queue_nums: int | None = None
                 ) -> dict[str, Any]:
    """A ``TopicConfig`` as its JSON (``new TopicConfig(topic)``: 16 queues, perm RW)."""
    return {"order": order, "perm": perm, "readQueueNums": queue_nums, "topicFilterType": filter_type,
            "topicName": topic, "topicSysFlag": sys_flag,
            "writeQueueNums": queue_nums if write_queue_nums is None else write_queue_nums}


def add_system_topics(metadata: BrokerMetadata, config: SendConfig, broker_name: str) -> None:
    """The topics ``TopicConfigManager``'s constructor puts before ``load()`` (the file's wins)."""
    table = metadata.topic_config_manager.topic_config_table
    rw, inherit = PermName.PERM_READ | PermName.PERM_WRITE, PermName.PERM_INHERIT
    system = [topic_config(RMQ_SYS_SELF_TEST_TOPIC, 1)]
    if config.auto_create_topic_enable:
        system.append(topic_config(AUTO_CREATE_TOPIC_KEY_TOPIC, config.default_topic_queue_nums, rw | inherit))
    system += [topic_config(RMQ_SYS_BENCHMARK_TOPIC, 1024),
               topic_config(config.broker_cluster_name, 16, inherit | rw),  # clusterTopicEnable
               topic_config(broker_name, 1, inherit | rw),  # brokerTopicEnable
               topic_config(RMQ_SYS_OFFSET_MOVED_EVENT, 1),
               topic_config(RMQ_SYS_SCHEDULE_TOPIC, SCHEDULE_TOPIC_QUEUE_NUM),
               topic_config(f"{config.broker_cluster_name}_{REPLY_TOPIC_POSTFIX}", 1)]
    for tc in system:
        table.setdefault(tc["topicName"], tc)


def create_topic_in_send_message_method(metadata: BrokerMetadata, config: SendConfig, topic: str, default_topic: str,
                                        client_queue_nums: int, topic_sys_flag: int, now_ms: int
                                        ) -> dict[str, Any] | None:
    """``createTopicInSendMessageMethod``; None when the default topic is absent or does not let inherit."""
    manager = metadata.topic_config_manager
    found = manager.select_topic_config(topic)
    if found is not None:
        return found
    if not config.system_topics:
        manager.create_topic_if_absent(topic, now_ms)
        return manager.select_topic_config(topic)
    default = manager.select_topic_config(default_topic)
    if default is None:
        return None
    if default_topic == AUTO_CREATE_TOPIC_KEY_TOPIC and not config.auto_create_topic_enable:
        default["perm"] = PermName.PERM_READ | PermName.PERM_WRITE
    if not PermName.is_inherited(default["perm"]):
        return None
    queue_nums = max(0, min(client_queue_nums, default["writeQueueNums"]))
    created = topic_config(topic, queue_nums, default["perm"] & ~PermName.PERM_INHERIT, topic_sys_flag,
                           default["topicFilterType"])
    manager.update_topic_config(created, now_ms)
    return created


def create_topic_in_send_message_back_method(metadata: BrokerMetadata, topic: str, queue_nums: int, perm: int,
                                             topic_sys_flag: int, now_ms: int) -> dict[str, Any]:
    """``createTopicInSendMessageBackMethod``: the retry or DLQ topic, created with ``queue_nums`` queues."""
    manager = metadata.topic_config_manager
    found = manager.select_topic_config(topic)
    if found is not None:
        return found
    created = topic_config(topic, queue_nums, perm, topic_sys_flag)
    manager.update_topic_config(created, now_ms)
    return created


def find_subscription_group_config(metadata: BrokerMetadata, config: SendConfig, group: str,
                                   now_ms: int) -> dict[str, Any] | None:
    """``findSubscriptionGroupConfig``: created on first use when ``autoCreateSubscriptionGroup`` (4.9.5 does
    not check the name here); None otherwise."""
    manager = metadata.subscription_group_manager
    found = manager.subscription_group_table.get(group)
    if found is not None:
        return found
    if not config.auto_create_subscription_group and not group.startswith("CID_RMQ_SYS_"):
        return None
    manager.subscription_group_table[group] = default_subscription_group(group)
    manager.data_version.next_version(now_ms)
    manager.persist()
    return manager.subscription_group_table[group]


def update_and_create_topic(metadata: BrokerMetadata, config: SendConfig, req: CreateTopicRequest, is_slave: bool,
                            broker_name: str, now_ms: int) -> AdminResponse:
    """``AdminBrokerProcessor.updateAndCreateTopic``."""
    if is_slave:
        return AdminResponse(SYSTEM_ERROR, "Can't modify topic or subscription group from slave broker, "
                                           "please execute it from master broker.")
    refused = validate_topic(req.topic) or system_topic_conflict(
        req.topic, broker_system_topics(config.broker_cluster_name, broker_name))
    if refused is not None:
        return AdminResponse(*refused)
    created = topic_config(req.topic, req.read_queue_nums, req.perm, req.topic_sys_flag or 0,
                           req.topic_filter_type, write_queue_nums=req.write_queue_nums)
    metadata.topic_config_manager.update_topic_config(created, now_ms)
    return AdminResponse(0, "not set any response code")  # createResponseCommand's remark, never cleared
