"""DefaultBrokerHeartbeatManager, RocketMQ 5.3.3 (``controller/.../impl/heartbeat/``): each controller's own,
unreplicated table of which brokers are alive, fed by the heartbeats every broker sends to every
controller.

Sans-IO: the caller passes ``now_ms`` (Java reads ``System.currentTimeMillis()``) and runs
:meth:`scan_not_active_broker` on its timer (2 s after start, then every ``scanNotActiveBrokerInterval``);
the inactive brokers it returns, and the one :meth:`on_broker_channel_close` returns, are what Java hands
to its ``BrokerLifecycleListener`` s (``onBrokerInactive``). A channel is any hashable connection id.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from rocketlab.controller.config import DEFAULT_BROKER_CHANNEL_EXPIRED_TIME

JAVA_INT_MAX = 2**31 - 1

BrokerIdentity = tuple[str | None, str, int | None]
"""``BrokerIdentityInfo``: (clusterName, brokerName, brokerId)."""


@dataclass
class BrokerLiveInfo:
    """Models BrokerLiveInfo: the latest heartbeat of one broker. ``epoch``, ``max_offset`` and
    ``confirm_offset`` only ever move forward (a higher epoch, or the same epoch and a higher offset)."""

    broker_name: str
    broker_addr: str
    broker_id: int
    last_update_timestamp: int
    heartbeat_timeout_millis: int
    channel: Hashable | None
    epoch: int
    max_offset: int
    election_priority: int
    confirm_offset: int = 0


class DefaultBrokerHeartbeatManager:
    """Models DefaultBrokerHeartbeatManager (see the module docstring)."""

    def __init__(self) -> None:
        self.broker_live_table: dict[BrokerIdentity, BrokerLiveInfo] = {}

    def on_broker_heartbeat(self, now_ms: int, cluster_name: str | None, broker_name: str, broker_addr: str,
                            broker_id: int | None, timeout_millis: int | None = None, channel: Hashable | None = None,
                            epoch: int | None = None, max_offset: int | None = None,
                            confirm_offset: int | None = None, election_priority: int | None = None) -> None:
        """``onBrokerHeartbeat``: missing values default as Java's (epoch/offsets -1, timeout 10 s, priority
        Integer.MAX_VALUE; a lower priority number is preferred)."""
        identity = (cluster_name, broker_name, broker_id)
        real_epoch = -1 if epoch is None else epoch
        real_max = -1 if max_offset is None else max_offset
        real_confirm = -1 if confirm_offset is None else confirm_offset
        real_timeout = DEFAULT_BROKER_CHANNEL_EXPIRED_TIME if timeout_millis is None else timeout_millis
        real_priority = JAVA_INT_MAX if election_priority is None else election_priority
        prev = self.broker_live_table.get(identity)
        if prev is None:
            # Java's constructor here leaves confirmOffset at 0: only later heartbeats set it
            self.broker_live_table[identity] = BrokerLiveInfo(
                broker_name, broker_addr, -1 if broker_id is None else broker_id, now_ms, real_timeout, channel,
                real_epoch, real_max, real_priority)
            return
        prev.last_update_timestamp = now_ms
        prev.heartbeat_timeout_millis = real_timeout
        prev.election_priority = real_priority
        if real_epoch > prev.epoch or (real_epoch == prev.epoch and real_max > prev.max_offset):
            prev.epoch, prev.max_offset, prev.confirm_offset = real_epoch, real_max, real_confirm

    def is_broker_active(self, now_ms: int, cluster_name: str | None, broker_name: str, broker_id: int | None) -> bool:
        """``isBrokerActive``: ``last + timeout >= now``."""
        info = self.broker_live_table.get((cluster_name, broker_name, broker_id))
        return info is not None and info.last_update_timestamp + info.heartbeat_timeout_millis >= now_ms

    def alive_predicate(self, now_ms: int) -> Callable[[str | None, str, int | None], bool]:
        """``heartbeatManager::isBrokerActive`` as the ``BrokerValidPredicate`` the policy takes, at ``now_ms``."""
        return lambda cluster, name, broker_id: self.is_broker_active(now_ms, cluster, name, broker_id)

    def get_broker_live_info(self, cluster_name: str | None, broker_name: str, broker_id: int | None
                             ) -> BrokerLiveInfo | None:
        return self.broker_live_table.get((cluster_name, broker_name, broker_id))

    def scan_not_active_broker(self, now_ms: int) -> list[BrokerIdentity]:
        """``scanNotActiveBroker``: remove every entry whose ``now - last > timeout`` (its channel is closed
        in Java) and return them, in the table's order, for ``onBrokerInactive``."""
        expired = [identity for identity, info in self.broker_live_table.items()
                   if now_ms - info.last_update_timestamp > info.heartbeat_timeout_millis]
        for identity in expired:
            del self.broker_live_table[identity]
        return expired

    def on_broker_channel_close(self, channel: Hashable) -> BrokerIdentity | None:
        """``onBrokerChannelClose``: the first broker that used ``channel`` is removed and returned."""
        for identity, info in self.broker_live_table.items():
            if info.channel == channel:
                del self.broker_live_table[identity]
                return identity
        return None

    def get_active_brokers_num(self, now_ms: int) -> dict[str | None, dict[str, int]]:
        """``getActiveBrokersNum``: cluster -> broker set -> number of active brokers."""
        counts: dict[str | None, dict[str, int]] = {}
        for cluster, name, broker_id in self.broker_live_table:
            if self.is_broker_active(now_ms, cluster, name, broker_id):
                per_cluster = counts.setdefault(cluster, {})
                per_cluster[name] = per_cluster.get(name, 0) + 1
        return counts
