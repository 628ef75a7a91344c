"""CleanSpaceService: how a DLedger member deletes its old data files (DLedger 0.3.1.2).

Theory of operation
-------------------
DLedger keeps no snapshot: its log is its state, and space comes back only by deleting whole data
files from the front. One round (Java runs one every 100 ms) works like this:

1. measure the disk: ``storeBaseRatio`` (the partition of ``storeBaseDir``) and ``dataRatio`` (the data
   path), each a fraction of the disk used, rounded *up* to whole percent as ``DLedgerUtils`` does;
2. ``isDiskFull`` = either ratio above ``disk_full_ratio`` (force-clean ratio + 0.05, at most 0.95):
   from then on every append, as leader or follower, fails with DISK_FULL;
3. delete when it is ``delete_when`` o'clock (*timeUp*) or either ratio is above
   ``disk_space_ratio_to_check_expired`` (0.70): data files last modified more than
   ``file_reserved_hours`` ago (at least one hour), from the first on, never the last one; when either
   ratio is above ``disk_space_ratio_to_force_clean`` (0.85) and ``enable_disk_force_clean`` is on,
   files go whatever their age;
4. if files went, ``reviseLedgerBeginIndex``: the first remaining entry is the new ledger begin index,
   and the index files are reset to it. Entries below it are gone for good (``get`` answers
   INDEX_OUT_OF_RANGE / "less than local begin").

RocketMQ on DLedger changes two of these settings while the broker runs (``DLedgerCommitLog``): while
files of an *old* (pre-upgrade) commit log remain it sets ``fileReservedHours`` to ten years and turns
force-clean off, so DLedger deletes nothing until the old files are gone; then it puts back the broker's
``fileReservedTime + 1`` and ``cleanFileForciblyEnable``. Java mutates the shared DLedgerConfig for that;
here the service keeps its own copies (:attr:`file_reserved_hours`, :attr:`enable_disk_force_clean`,
:attr:`delete_when`) that the commit log sets.

Models ``DLedgerMmapFileStore.CleanSpaceService`` (``store/file/DLedgerMmapFileStore.java``).
Simplified: a round runs when :meth:`do_work` is called with a wall-clock ``now_ms`` (file ages come from
their modification times, as in Java, so a simulated clock cannot drive it and the simulator never calls
it on its own); the hour of ``delete_when`` is taken in UTC (Java: the JVM's time zone); no retry of a
file still referenced, no multi-path data directories.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocketlab.dledger.config import delete_hours

if TYPE_CHECKING:
    from rocketlab.dledger.store.mmap_file_store import DLedgerMmapFileStore

HOUR_MS = 3600 * 1000


def disk_partition_space_used_percent(path: str | Path) -> float:
    """``DLedgerUtils.getDiskPartitionSpaceUsedPercent``: used / (used + usable) of the partition holding
    ``path``, rounded up to a whole percent, as a fraction (0.37); -1 when the path does not exist."""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return -1.0
    used, usable = usage.total - usage.free, usage.free
    entire = used + usable
    if usage.total <= 0 or entire <= 0:
        return -1.0
    percent = used * 100 // entire + (1 if used * 100 % entire else 0)
    return percent / 100.0


@dataclass(frozen=True, slots=True)
class CleanRound:
    """What one round saw and did (the fields of Java's "Clean space" log line)."""

    count: int
    time_up: bool
    check_expired: bool
    force_clean: bool
    enable_force_clean: bool
    disk_full: bool
    store_base_ratio: float
    data_ratio: float
    ledger_begin_index: int


class CleanSpaceService:
    """Models ``CleanSpaceService`` of DLedgerMmapFileStore; see the module docstring.

    ``disk_ratio(path)`` measures a path's partition (default: the real disk); tests and labs pass their
    own to play a filling disk.
    """

    def __init__(self, store: DLedgerMmapFileStore,
                 disk_ratio: Callable[[str | Path], float] = disk_partition_space_used_percent) -> None:
        config = store.config
        self.store = store
        self.disk_ratio = disk_ratio
        self.file_reserved_hours = config.file_reserved_hours
        self.enable_disk_force_clean = config.enable_disk_force_clean
        self.delete_when = config.delete_when
        self.rounds = 0

    def is_time_to_delete(self, now_ms: int) -> bool:
        """``DLedgerUtils.isItTimeToDo(deleteWhen)``: is it one of the listed hours (UTC here)?"""
        return (now_ms // HOUR_MS) % 24 in delete_hours(self.delete_when)

    def do_work(self, now_ms: int) -> CleanRound:
        """One round at wall-clock ``now_ms`` (epoch ms)."""
        store, config = self.store, self.store.config
        store_base_ratio = self.disk_ratio(store.store_dir.parent)
        data_ratio = self.disk_ratio(store.store_dir / "data")
        reserved_ms = max(self.file_reserved_hours * HOUR_MS, HOUR_MS)
        full_ratio = config.disk_full_ratio
        store.is_disk_full = store_base_ratio > full_ratio or data_ratio > full_ratio
        time_up = self.is_time_to_delete(now_ms)
        check_expired = max(store_base_ratio, data_ratio) > config.disk_space_ratio_to_check_expired
        force_clean = max(store_base_ratio, data_ratio) > config.disk_space_ratio_to_force_clean
        count = 0
        if time_up or check_expired:
            count = store.data_file_list.delete_expired_file_by_time(
                reserved_ms, now_ms, force_clean and self.enable_disk_force_clean)
            if count:
                store.revise_ledger_begin_index()
                store.trace("clean_space", count=count, ledger_begin_index=store.ledger_begin_index)
        self.rounds += 1
        return CleanRound(count, time_up, check_expired, force_clean, self.enable_disk_force_clean,
                          store.is_disk_full, store_base_ratio, data_ratio, store.ledger_begin_index)


__all__ = ["CleanRound", "CleanSpaceService", "disk_partition_space_used_percent"]
