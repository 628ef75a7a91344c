"""Checkers for classic HA, run by the simulator after every trace event (they observe only).

* :class:`SlaveIsPrefixChecker` — every slave's CommitLog is a byte-identical prefix of the master's
  (checked on each ack the master sees, over the bytes added since the last check);
* :class:`SyncPutOnSlaveChecker` — every PUT_OK a SYNC_MASTER answers is already on a slave at that
  moment (4.x semantics: one slave suffices; not checked for 5.x with inSyncReplicas 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def commit_log_chunks(commit_log: Any, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, bytes)`` of a CommitLog's data in ``[start, end)``, file by file (``get_data`` stops at a
    file's end); stops early where the log holds nothing more. Shared by the controller-mode checkers."""
    offset = start
    while offset < end:
        data = commit_log.get_data(offset, end - offset)
        if not data:
            return
        yield offset, data
        offset += len(data)


class SlaveIsPrefixChecker:
    name = "slave_is_prefix_of_master"

    def __init__(self, master: str, slaves: list[str]) -> None:
        self.master, self.slaves = master, slaves
        self.checked: dict[str, int] = {}

    def check(self, cluster: Any, event: dict) -> str | None:
        if event["kind"] != "ha_report" or not cluster.alive(self.master):
            return None
        master_log = cluster.node(self.master).store.commit_log
        for slave in self.slaves:
            if not cluster.alive(slave):
                self.checked.pop(slave, None)
                continue
            slave_log = cluster.node(slave).store.commit_log
            start = self.checked.get(slave, slave_log.get_min_offset())
            end = slave_log.get_max_offset()
            if end > master_log.get_max_offset():
                return f"{slave} has {end} bytes, more than the master's {master_log.get_max_offset()}"
            for offset, data in commit_log_chunks(slave_log, max(start, 0), end):
                if master_log.get_data(offset, len(data)) != data:
                    return f"{slave}'s commit log differs from the master's in [{offset}, {offset + len(data)})"
            self.checked[slave] = end
        return None


class SyncPutOnSlaveChecker:
    name = "sync_put_ok_is_on_a_slave"

    def __init__(self, master: str, slaves: list[str]) -> None:
        self.master, self.slaves = master, slaves

    def check(self, cluster: Any, event: dict) -> str | None:
        if event["kind"] != "put" or event["status"] != "PUT_OK" or event["node"] != self.master:
            return None
        config = cluster.node(self.master).config
        if config.broker_role != "SYNC_MASTER" or (config.ha.in_sync_replicas or 2) <= 1:
            return None  # an ASYNC_MASTER, or 5.x with inSyncReplicas 1, answers before any slave
        end = event["phy_offset"] + event["size"]
        on = [s for s in self.slaves if cluster.alive(s) and cluster.node(s).max_offset >= end]
        if not on:
            return f"PUT_OK at phy offset {event['phy_offset']} but no live slave has reached {end}"
        return None
