"""HA settings with RocketMQ's names and defaults (``MessageStoreConfig`` HA keys, 4.x; 5.x option).

Kept apart from :class:`rocketlab.store.config.MessageStoreConfig` because only brokers with HA use
them; ``BrokerConfig`` (``rocketlab.broker``) holds both.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketlab.errors import ConfigError
from rocketlab.ha.wire import HA_TRANSFER_BATCH_SIZE
from rocketlab.i18n import _

HA_CLIENT_BEHAVIOURS = ("4.9.5", "5.3.3")  # the releases whose HA client loop HAClient can follow


@dataclass(frozen=True)
class HAConfig:
    """The HA keys of ``MessageStoreConfig`` (RocketMQ 4.x defaults).

    ``in_sync_replicas``: None keeps 4.x semantics (a SYNC_MASTER waits for one slave's ack through
    ``push2SlaveMaxOffset``; no slave or a slave too far behind gives SLAVE_NOT_AVAILABLE). A number
    switches to 5.x's quorum write (RIP-34): ``needAckNums = inSyncReplicas`` counting the master; with
    1 a SYNC_MASTER answers PUT_OK at once, with >= 2 it counts slaves whose ack reached the message.
    Simplified: 5.x's enableSlaveActingMaster / IN_SYNC_REPLICAS_NOT_ENOUGH path is not modelled.

    ``ha_client_behaviour`` (kit switch, no Java key) picks whose slave loop :class:`HAClient` follows:
    ``"4.9.5"`` (default; ``HAService.HAClient`` of rocketmq-all-4.9.5) or ``"5.3.3"``
    (``DefaultHAClient`` of rocketmq-all-5.3.3); :mod:`rocketlab.ha.ha_client` lists what differs.
    ``ha_reconnect_interval`` is the 5 s both versions wait after a failed connect (Java hard-codes it;
    5.3.3 also waits it after a failed transfer).
    """

    ha_send_heartbeat_interval: int = 5_000  # ms
    ha_housekeeping_interval: int = 20_000  # ms
    ha_transfer_batch_size: int = HA_TRANSFER_BATCH_SIZE
    ha_slave_fallbehind_max: int = 256 * 1024 * 1024  # 5.x name: haMaxGapNotInSync
    slave_timeout: int = 3_000  # ms: how long a SYNC_MASTER put waits for the slave (4.9.3+)
    ha_write_poll_interval: int = 100  # ms the master's write service waits for data (WaitNotifyObject)
    ha_reconnect_interval: int = 5_000  # ms the slave waits before reconnecting
    in_sync_replicas: int | None = None
    ha_client_behaviour: str = "4.9.5"

    def __post_init__(self) -> None:
        for name in ("ha_send_heartbeat_interval", "ha_housekeeping_interval", "ha_transfer_batch_size",
                     "ha_slave_fallbehind_max", "slave_timeout", "ha_write_poll_interval",
                     "ha_reconnect_interval"):
            if getattr(self, name) <= 0:
                raise ConfigError(_("{name} must be > 0, got {value}").format(name=name, value=getattr(self, name)))
        if self.in_sync_replicas is not None and self.in_sync_replicas < 1:
            raise ConfigError(_("{name} must be >= 1, got {value}").format(name="in_sync_replicas", value=self.in_sync_replicas))
        if self.ha_client_behaviour not in HA_CLIENT_BEHAVIOURS:
            raise ConfigError(_("{key}={value!r} is not one of {choices}").format(
                key="ha_client_behaviour", value=self.ha_client_behaviour, choices=", ".join(HA_CLIENT_BEHAVIOURS)))
