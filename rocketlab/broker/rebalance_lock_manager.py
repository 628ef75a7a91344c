"""Which client of a consumer group holds which message queue, for orderly consumers.

Models RocketMQ 4.9.5's ``RebalanceLockManager`` (``tryLockBatch``, ``unlockBatch``, ``LockEntry``): a
lock held by one client id expires 60 s after its last renewal (``rocketmq.broker.rebalance.lockMaxLiveTime``)
and may then be taken by another client.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketlab.broker.client_messages import MessageQueue

REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000


@dataclass
class LockEntry:
    client_id: str
    last_update_timestamp: int

    def is_expired(self, now_ms: int) -> bool:
        return now_ms - self.last_update_timestamp > REBALANCE_LOCK_MAX_LIVE_TIME_MS

    def is_locked(self, client_id: str, now_ms: int) -> bool:
        return self.client_id == client_id and not self.is_expired(now_ms)


class RebalanceLockManager:
    """group -> message queue -> :class:`LockEntry`."""

    def __init__(self) -> None:
        self.mq_lock_table: dict[str, dict[MessageQueue, LockEntry]] = {}

    def try_lock_batch(self, group: str, mqs: tuple[MessageQueue, ...], client_id: str,
                       now_ms: int) -> tuple[MessageQueue, ...]:
        """The queues ``client_id`` holds after the call (renewed, newly taken, or taken over expired)."""
        table = self.mq_lock_table.setdefault(group, {})
        locked = []
        for mq in dict.fromkeys(mqs):
            entry = table.get(mq)
            if entry is None:
                entry = table[mq] = LockEntry(client_id, now_ms)
            if entry.is_locked(client_id, now_ms):
                entry.last_update_timestamp = now_ms
                locked.append(mq)
            elif entry.is_expired(now_ms):
                entry.client_id, entry.last_update_timestamp = client_id, now_ms
                locked.append(mq)
        return tuple(locked)

    def unlock_batch(self, group: str, mqs: tuple[MessageQueue, ...], client_id: str) -> None:
        table = self.mq_lock_table.get(group)
        if table is None:
            return
        for mq in mqs:
            entry = table.get(mq)
            if entry is not None and entry.client_id == client_id:
                del table[mq]
