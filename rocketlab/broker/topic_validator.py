"""Topic names and permissions as the 4.9.5 broker checks them.

Models ``common/topic/TopicValidator`` (``validateTopic``, ``isSystemTopic``, ``isNotAllowedSendTopic``),
``common/constant/PermName``, ``TopicConfig.toString`` and the ``MixAll`` names of retry and dead-letter
topics. A check answers ``None`` when it passes, else ``(response code, remark)`` with Java's code and
remark, so every processor answers an illegal name as Java does.
"""

from __future__ import annotations

import re
from typing import Any

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
RMQ_SYS_SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
RMQ_SYS_BENCHMARK_TOPIC = "BenchmarkTest"
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
RMQ_SYS_OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
SYSTEM_TOPIC_PREFIX = "rmq_sys_"
TOPIC_MAX_LENGTH = 127

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"

SYSTEM_TOPICS = frozenset({AUTO_CREATE_TOPIC_KEY_TOPIC, RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_BENCHMARK_TOPIC,
                           RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRACE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
                           RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_SELF_TEST_TOPIC, RMQ_SYS_OFFSET_MOVED_EVENT})
"""``SYSTEM_TOPIC_SET`` as the class starts; a broker adds its cluster and broker names and reply topic
(``TopicConfigManager``'s constructor), see :func:`broker_system_topics`."""
NOT_ALLOWED_SEND_TOPICS = frozenset({RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
                                     RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_SELF_TEST_TOPIC,
                                     RMQ_SYS_OFFSET_MOVED_EVENT})

_ILLEGAL = re.compile(r"[^%|a-zA-Z0-9_-]")

SYSTEM_ERROR = 1
NO_PERMISSION = 16


class PermName:
    """``PermName``: the bits of a topic's (and the broker's) permission."""

    PERM_PRIORITY = 0x8
    PERM_READ = 0x4
    PERM_WRITE = 0x2
    PERM_INHERIT = 0x1

    @staticmethod
    def is_readable(perm: int) -> bool:
        return perm & PermName.PERM_READ == PermName.PERM_READ

    @staticmethod
    def is_writeable(perm: int) -> bool:
        return perm & PermName.PERM_WRITE == PermName.PERM_WRITE

    @staticmethod
    def is_inherited(perm: int) -> bool:
        return perm & PermName.PERM_INHERIT == PermName.PERM_INHERIT

    @staticmethod
    def perm2string(perm: int) -> str:
        return ("R" if PermName.is_readable(perm) else "-") + ("W" if PermName.is_writeable(perm) else "-") + \
            ("X" if PermName.is_inherited(perm) else "-")


def is_topic_or_group_illegal(name: str) -> bool:
    """``isTopicOrGroupIllegal``: a character outside ``[%|a-zA-Z0-9_-]``."""
    return _ILLEGAL.search(name) is not None


def validate_topic(topic: str | None) -> tuple[int, str] | None:
    """``validateTopic``: blank, illegal characters, longer than 127 (UTF-16 units) -> SYSTEM_ERROR."""
    if topic is None or not topic.strip():
        return SYSTEM_ERROR, "The specified topic is blank."
    if is_topic_or_group_illegal(topic):
        return SYSTEM_ERROR, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    if len(topic.encode("utf-16-le")) // 2 > TOPIC_MAX_LENGTH:
        return SYSTEM_ERROR, "The specified topic is longer than topic max length."
    return None


def is_system_topic(topic: str, system_topics: frozenset[str] | set[str] = SYSTEM_TOPICS) -> bool:
    return topic in system_topics or topic.startswith(SYSTEM_TOPIC_PREFIX)


def system_topic_conflict(topic: str, system_topics: frozenset[str] | set[str] = SYSTEM_TOPICS
                          ) -> tuple[int, str] | None:
    """``isSystemTopic(topic, response)``."""
    if is_system_topic(topic, system_topics):
        return SYSTEM_ERROR, f"The topic[{topic}] is conflict with system topic."
    return None


def not_allowed_send_topic(topic: str) -> tuple[int, str] | None:
    """``isNotAllowedSendTopic(topic, response)``: NO_PERMISSION."""
    if topic in NOT_ALLOWED_SEND_TOPICS:
        return NO_PERMISSION, f"Sending message to topic[{topic}] is forbidden."
    return None


def retry_topic(group: str) -> str:
    """``MixAll.getRetryTopic``."""
    return RETRY_GROUP_TOPIC_PREFIX + group


def dlq_topic(group: str) -> str:
    """``MixAll.getDLQTopic``."""
    return DLQ_GROUP_TOPIC_PREFIX + group


def topic_config_string(config: dict[str, Any]) -> str:
    """``TopicConfig.toString`` of a topic config as the kit keeps it (its JSON form)."""
    return (f"TopicConfig [topicName={config['topicName']}, readQueueNums={config['readQueueNums']}, "
            f"writeQueueNums={config['writeQueueNums']}, perm={PermName.perm2string(config['perm'])}, "
            f"topicFilterType={config['topicFilterType']}, topicSysFlag={config['topicSysFlag']}, "
            f"order={'true' if config['order'] else 'false'}]")


def broker_system_topics(cluster_name: str, broker_name: str) -> frozenset[str]:
    """``SYSTEM_TOPIC_SET`` once a broker's TopicConfigManager is built: the static set plus the cluster's
    and the broker's names and ``<cluster>_REPLY_TOPIC``."""
    return SYSTEM_TOPICS | {cluster_name, broker_name, f"{cluster_name}_{REPLY_TOPIC_POSTFIX}"}
