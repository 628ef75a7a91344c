"""The ``BrokerConfig`` keys the client processors read (4.9.5 names in snake_case, 4.9.5 defaults).

A node's configuration sets them with broker.conf's own keys (``longPollingEnable``,
``shortPollingTimeMills``, ``notifyConsumerIdsChangedEnable``, ``autoCreateSubscriptionGroup``,
``flushConsumerOffsetInterval``, ``slaveReadEnable``); ``accessMessageInMemoryMaxRatio`` is the store's
(``MessageStoreConfig``). ``total_physical_memory``: the RAM figure ``StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE``
gives the store (None: the machine's), a kit key (``totalPhysicalMemory``) so a test can put a queue's
first message "in memory" or "on disk" at will.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.errors import ConfigError

_KEYS = {"longPollingEnable": "long_polling_enable", "shortPollingTimeMills": "short_polling_time_mills",
         "notifyConsumerIdsChangedEnable": "notify_consumer_ids_changed_enable",
         "autoCreateSubscriptionGroup": "auto_create_subscription_group",
         "flushConsumerOffsetInterval": "flush_consumer_offset_interval", "slaveReadEnable": "slave_read_enable",
         "totalPhysicalMemory": "total_physical_memory", "brokerName": "broker_name"}


@dataclass(frozen=True)
class ProcessorConfig:
    """See the module docstring."""

    broker_name: str = "broker-a"
    long_polling_enable: bool = True
    short_polling_time_mills: int = 1000
    notify_consumer_ids_changed_enable: bool = True
    auto_create_subscription_group: bool = True
    flush_consumer_offset_interval: int = 5000
    slave_read_enable: bool = False
    total_physical_memory: int | None = None

    def __post_init__(self) -> None:
        if self.short_polling_time_mills <= 0:
            raise ConfigError(f"shortPollingTimeMills must be > 0, got {self.short_polling_time_mills}")
        if self.flush_consumer_offset_interval <= 0:
            raise ConfigError(f"flushConsumerOffsetInterval must be > 0, got {self.flush_consumer_offset_interval}")
        if self.total_physical_memory is not None and self.total_physical_memory < 0:
            raise ConfigError(f"totalPhysicalMemory must be >= 0, got {self.total_physical_memory}")

    @classmethod
    def from_properties(cls, props: dict[str, Any], **overrides: Any) -> ProcessorConfig:
        """From broker.conf keys (strings or values); unknown keys are left to the rest of the node."""
        kwargs: dict[str, Any] = {}
        for key, name in _KEYS.items():
            if key in props:
                kwargs[name] = _value(key, props[key], cls.__dataclass_fields__[name].type)
        kwargs.update(overrides)
        return cls(**kwargs)


def _value(key: str, raw: Any, kind: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if "bool" in str(kind):
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key}={raw!r} is not true or false")
        return text.lower() == "true"
    if "int" in str(kind):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{key}={raw!r} is not an integer") from None
    return text
