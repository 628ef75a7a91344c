"""The ``BrokerConfig`` keys the client processors read (4.9.5 names in snake_case, 4.9.5 defaults).

A node's configuration sets them with broker.conf's own keys (``longPollingEnable``,
``shortPollingTimeMills``, ``notifyConsumerIdsChangedEnable``, ``autoCreateSubscriptionGroup``,
``flushConsumerOffsetInterval``; ``slaveReadEnable`` is the broker's own); ``accessMessageInMemoryMaxRatio`` is the store's
(``MessageStoreConfig``). ``total_physical_memory``: the RAM figure ``StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE``
gives the store (None: the machine's), a kit key (``totalPhysicalMemory``) so a test can put a queue's
first message "in memory" or "on disk" at will.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.properties import bool_property, int_property


@dataclass(frozen=True)
class ProcessorConfig:
    """See the module docstring."""

    long_polling_enable: bool = True
    short_polling_time_mills: int = 1000
    notify_consumer_ids_changed_enable: bool = True
    auto_create_subscription_group: bool = True
    flush_consumer_offset_interval: int = 5000
    total_physical_memory: int | None = None

    def __post_init__(self) -> None:
        if self.short_polling_time_mills <= 0:
            raise ConfigError(_("{name} must be > 0, got {value}").format(name="shortPollingTimeMills",
                                                                         value=self.short_polling_time_mills))
        if self.flush_consumer_offset_interval <= 0:
            raise ConfigError(_("{name} must be > 0, got {value}").format(name="flushConsumerOffsetInterval",
                                                                         value=self.flush_consumer_offset_interval))
        if self.total_physical_memory is not None and self.total_physical_memory < 0:
            raise ConfigError(_("{name} must be >= 0, got {value}").format(name="totalPhysicalMemory",
                                                                          value=self.total_physical_memory))

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> ProcessorConfig:
        """From broker.conf keys; keys of the rest of the node are left alone."""
        d = cls()
        memory = props.get("totalPhysicalMemory")
        return cls(
            long_polling_enable=bool_property(props, "longPollingEnable", d.long_polling_enable),
            short_polling_time_mills=int_property(props, "shortPollingTimeMills", d.short_polling_time_mills),
            notify_consumer_ids_changed_enable=bool_property(props, "notifyConsumerIdsChangedEnable",
                                                             d.notify_consumer_ids_changed_enable),
            auto_create_subscription_group=bool_property(props, "autoCreateSubscriptionGroup",
                                                         d.auto_create_subscription_group),
            flush_consumer_offset_interval=int_property(props, "flushConsumerOffsetInterval",
                                                        d.flush_consumer_offset_interval),
            total_physical_memory=None if memory is None else int_property(props, "totalPhysicalMemory", 0))
