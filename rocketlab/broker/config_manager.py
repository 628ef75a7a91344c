"""The broker's metadata tables, persisted as RocketMQ's JSON files under ``<storeRoot>/config/``.

Models ``TopicConfigManager`` (``topics.json``), ``ConsumerOffsetManager`` (``consumerOffset.json``),
``ScheduleMessageService``'s offsets (``delayOffset.json``) and ``SubscriptionGroupManager``
(``subscriptionGroup.json``), each a ``ConfigManager`` that persists its table and a ``DataVersion``
(``{timestamp, counter}``; two versions are equal only if both are). Files are written as fastjson's
``PrettyFormat`` writes them (:func:`rocketlab.remoting.fastjson.dumps_pretty`: tabs, integer map keys
unquoted, ``{0:12,1:3`` with the closing brace on the next line) and read as fastjson reads them: integer
keys quoted or not (the stand-in fastjson of the shared Java jars quotes them). Files are replaced
atomically (temporary file, fsync, rename). Simplified: no ``.bak`` copy; a map's members are written
sorted, not in the Java map's order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.remoting import fastjson


@dataclass
class DataVersion:
    """Models ``DataVersion``: bumped on every change; slaves copy the master's (``assignNewOne``)."""

    timestamp: int = 0
    counter: int = 0

    def next_version(self, now_ms: int) -> None:
        self.timestamp = now_ms
        self.counter += 1

    def to_json(self) -> dict[str, int]:
        return {"counter": self.counter, "timestamp": self.timestamp}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DataVersion:
        return cls(int(data.get("timestamp", 0)), int(data.get("counter", 0)))


def default_topic_config(topic: str, queue_nums: int = 4) -> dict[str, Any]:
    """``TopicConfig`` as RocketMQ serialises it (perm 6 = read + write)."""
    return {"order": False, "perm": 6, "readQueueNums": queue_nums, "topicFilterType": "SINGLE_TAG",
            "topicName": topic, "topicSysFlag": 0, "writeQueueNums": queue_nums}


def default_subscription_group(group: str) -> dict[str, Any]:
    return {"brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
            "consumeFromMinEnable": True, "groupName": group, "notifyConsumerIdsChangedEnable": True,
            "retryMaxTimes": 16, "retryQueueNums": 1, "whichBrokerWhenConsumeSlowly": 1}


class ConfigManager:
    """One JSON file: ``encode()`` to a dict, ``decode()`` from it, ``persist()``/``load()``."""

    file_name = ""

    def __init__(self, config_dir: Path | None) -> None:
        self.config_dir = config_dir

    @property
    def path(self) -> Path | None:
        return self.config_dir / self.file_name if self.config_dir is not None else None

    def encode(self) -> dict[str, Any]:
        return {}

    def decode(self, data: dict[str, Any]) -> None:
        return None

    def load(self) -> None:
        path = self.path
        if path is None or not path.exists():
            return
        try:
            data = fastjson.loads(path.read_bytes())
        except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ConfigError(_("{path}: corrupt JSON ({why}); fix or remove it").format(path=path, why=e)) from None
        if not isinstance(data, dict):
            raise ConfigError(_("{path}: expected a JSON object").format(path=path))
        self.decode(data)

    def persist(self) -> None:
        path = self.path
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(fastjson.dumps_pretty(self.encode()))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


class TopicConfigManager(ConfigManager):
    """Models ``TopicConfigManager``: ``topicConfigTable`` and its DataVersion.

    Every change (a topic created on first use, by CONSUMER_SEND_MSG_BACK, or by UPDATE_AND_CREATE_TOPIC)
    bumps the DataVersion, persists, and calls each listener of :meth:`add_change_listener` with the
    changed topic's config: Java's ``registerBrokerAll`` / ``registerIncrementBrokerData`` after a change,
    for the name server registration to hook into. The creation rules themselves are in
    :mod:`rocketlab.broker.topic_config_rules`; :meth:`create_topic_if_absent` is the kit's simplified
    creation the simulator's direct puts use (4 queues, perm RW).
    """

    file_name = "topics.json"

    def __init__(self, config_dir: Path | None) -> None:
        super().__init__(config_dir)
        self.topic_config_table: dict[str, dict[str, Any]] = {}
        self.data_version = DataVersion()
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def add_change_listener(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """``listener(topic_config)`` after every change (the DataVersion is bumped and persisted first)."""
        self.listeners.append(listener)

    def select_topic_config(self, topic: str) -> dict[str, Any] | None:
        return self.topic_config_table.get(topic)

    def update_topic_config(self, config: dict[str, Any], now_ms: int) -> None:
        """``updateTopicConfig``: put, next DataVersion, persist; then the listeners."""
        self.topic_config_table[config["topicName"]] = config
        self.data_version.next_version(now_ms)
        self.persist()
        for listener in self.listeners:
            listener(config)

    def create_topic_if_absent(self, topic: str, now_ms: int, queue_nums: int = 4) -> bool:
        if topic in self.topic_config_table:
            return False
        self.update_topic_config(default_topic_config(topic, queue_nums), now_ms)
        return True

    def encode(self) -> dict[str, Any]:
        return {"dataVersion": self.data_version.to_json(), "topicConfigTable": self.topic_config_table}

    def decode(self, data: dict[str, Any]) -> None:
        self.topic_config_table = dict(data.get("topicConfigTable", {}))
        self.data_version = DataVersion.from_json(data.get("dataVersion", {}))


class SubscriptionGroupManager(ConfigManager):
    """Models ``SubscriptionGroupManager``."""

    file_name = "subscriptionGroup.json"

    def __init__(self, config_dir: Path | None) -> None:
        super().__init__(config_dir)
        self.subscription_group_table: dict[str, dict[str, Any]] = {}
        self.data_version = DataVersion()

    def create_group_if_absent(self, group: str, now_ms: int) -> bool:
        if group in self.subscription_group_table:
            return False
        self.subscription_group_table[group] = default_subscription_group(group)
        self.data_version.next_version(now_ms)
        self.persist()
        return True

    def encode(self) -> dict[str, Any]:
        return {"dataVersion": self.data_version.to_json(),
                "subscriptionGroupTable": self.subscription_group_table}

    def decode(self, data: dict[str, Any]) -> None:
        self.subscription_group_table = dict(data.get("subscriptionGroupTable", {}))
        self.data_version = DataVersion.from_json(data.get("dataVersion", {}))


class ConsumerOffsetManager(ConfigManager):
    """Models ``ConsumerOffsetManager``: ``offsetTable`` keyed ``topic@group`` then queue id."""

    file_name = "consumerOffset.json"

    def __init__(self, config_dir: Path | None) -> None:
        super().__init__(config_dir)
        self.offset_table: dict[str, dict[int, int]] = {}
        self.dirty = False
        """Committed since the last persist (``BrokerController`` persists every ``flushConsumerOffsetInterval``)."""

    def commit_offset(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        self.offset_table.setdefault(f"{topic}@{group}", {})[queue_id] = offset
        self.dirty = True

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        return self.offset_table.get(f"{topic}@{group}", {}).get(queue_id, -1)

    def persist(self) -> None:
        super().persist()
        self.dirty = False

    def encode(self) -> dict[str, Any]:
        return {"offsetTable": self.offset_table}

    def decode(self, data: dict[str, Any]) -> None:
        self.offset_table = read_offset_table(data.get("offsetTable", {}), self.path)


def read_offset_table(table: Any, where: Any) -> dict[str, dict[int, int]]:
    """``offsetTable`` (``topic@group`` -> queue id -> offset) from JSON, its queue ids quoted or not."""
    if not isinstance(table, dict):
        raise ConfigError(_("{where}: offsetTable must be an object").format(where=where))
    out: dict[str, dict[int, int]] = {}
    for key, queues in table.items():
        if not isinstance(queues, dict) or "@" not in key:
            raise ConfigError(_("{where}: offsetTable[{key!r}] must be topic@group -> {{queueId: offset}}").format(
                where=where, key=key))
        try:
            out[key] = {int(q): int(o) for q, o in queues.items()}
        except (TypeError, ValueError):
            raise ConfigError(_("{where}: offsetTable[{key!r}] has a queue id or offset that is no integer").format(
                where=where, key=key)) from None
    return out


class DelayOffsetManager(ConfigManager):
    """``ScheduleMessageService``'s progress per delay level (``delayOffset.json``, its
    ``DelayOffsetSerializeWrapper``): ``offsetTable`` delay level -> the next consume-queue offset of
    ``SCHEDULE_TOPIC_XXXX``'s queue ``level - 1``. Written in fastjson's form, the integer keys unquoted
    (``{"offsetTable": {1: 3, 2: 0}}``); read in that form or with quoted keys."""

    file_name = "delayOffset.json"

    def __init__(self, config_dir: Path | None) -> None:
        super().__init__(config_dir)
        self.offset_table: dict[int, int] = {}

    def encode(self) -> dict[str, Any]:
        return {"offsetTable": dict(sorted(self.offset_table.items()))}

    def decode(self, data: dict[str, Any]) -> None:
        table = data.get("offsetTable", {})
        if not isinstance(table, dict):
            raise ConfigError(_("{where}: offsetTable must be an object").format(where=self.file_name))
        try:
            self.offset_table = {int(k): int(v) for k, v in table.items()}
        except (TypeError, ValueError) as e:
            raise ConfigError(_("{where}: offsetTable needs integer levels and offsets ({why})").format(
                where=self.file_name, why=e)) from None


class BrokerMetadata:
    """The four tables together, loaded from and persisted to one config directory."""

    def __init__(self, config_dir: Path | None) -> None:
        self.topic_config_manager = TopicConfigManager(config_dir)
        self.consumer_offset_manager = ConsumerOffsetManager(config_dir)
        self.delay_offset_manager = DelayOffsetManager(config_dir)
        self.subscription_group_manager = SubscriptionGroupManager(config_dir)

    @property
    def managers(self) -> tuple[ConfigManager, ...]:
        return (self.topic_config_manager, self.consumer_offset_manager, self.delay_offset_manager,
                self.subscription_group_manager)

    def load(self) -> None:
        for manager in self.managers:
            manager.load()

    def snapshot(self) -> dict[str, Any]:
        """What the master answers to a slave's sync request."""
        return {m.file_name: m.encode() for m in self.managers}

    def sync_from(self, snapshot: dict[str, Any]) -> list[str]:
        """Models ``SlaveSynchronize.syncAll``: topics and groups only on a new DataVersion; consumer
        offsets merged (putAll); delay offsets replaced. Returns the files that changed."""
        changed: list[str] = []
        for manager in (self.topic_config_manager, self.subscription_group_manager):
            incoming = snapshot.get(manager.file_name, {})
            if DataVersion.from_json(incoming.get("dataVersion", {})) != manager.data_version:
                manager.decode(incoming)
                manager.persist()
                changed.append(manager.file_name)
        offsets = snapshot.get(ConsumerOffsetManager.file_name, {}).get("offsetTable", {})
        if offsets:
            for key, table in read_offset_table(offsets, "the master's offsets").items():
                self.consumer_offset_manager.offset_table.setdefault(key, {}).update(table)
            self.consumer_offset_manager.persist()
            changed.append(ConsumerOffsetManager.file_name)
        delay = snapshot.get(DelayOffsetManager.file_name)
        if delay is not None:
            self.delay_offset_manager.decode(delay)
            self.delay_offset_manager.persist()
            changed.append(DelayOffsetManager.file_name)
        return changed
