"""The ConsumeQueue: one per topic and queue id, an index of 20-byte units into the CommitLog.

Models ``org.apache.rocketmq.store.ConsumeQueue`` (4.x).

Differences from Java 4.9.5, all about the *filler units* ``(0, Integer.MAX_VALUE, 0)`` that
``fillPreBlankAndSetPosition`` writes before the first real unit of a queue whose first file starts
mid-way (after its earlier files were deleted):

* recovery counts a filler as a valid unit (as Java: ``offset >= 0 && size > 0``) but does not take its
  ``offset + size`` as the queue's max physical offset (Java sets ``maxPhysicOffset`` to 2^31 - 1 there,
  so a queue holding only fillers would look dispatched up to 2 GiB);
* ``correctMinOffset`` skips fillers when it looks for the first unit at or above the CommitLog's min
  offset; Java compares offsets only, so with a min offset of 0 (a filler's offset) it stops on the first
  filler and reports it as the queue's min offset.
"""

from __future__ import annotations

import logging
import os
import struct
from typing import TYPE_CHECKING

from rocketlab import plugs
from rocketlab.store.config import CQ_STORE_UNIT_SIZE
from rocketlab.store.mapped_file import MappedFile
from rocketlab.store.mapped_file_queue import MappedFileQueue

UNIT_POSITION_PLUG = plugs.point("lab02.unit_position")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

if TYPE_CHECKING:
    from rocketlab.store.commit_log import CommitLog

log = logging.getLogger(__name__)

UNIT = struct.Struct(">qiq")  # commitLogOffset, size, tagsCode
INT_MAX = 2**31 - 1
FILLER_UNIT = UNIT.pack(0, INT_MAX, 0)


def _valid_units_end(mf: MappedFile) -> tuple[int, int]:
    """Where the valid units of a file end (``offset >= 0 and size > 0``), and the CommitLog end
    offset of the last real (non-filler) unit among them, or -1."""
    mm, size = mf.mm, mf.file_size
    chunk_bytes = CQ_STORE_UNIT_SIZE * 4096
    last_phy = -1
    for start in range(0, size, chunk_bytes):
        chunk = mm[start : min(start + chunk_bytes, size)]
        for i, (offset, unit_size, _tags) in enumerate(UNIT.iter_unpack(chunk)):
            if offset < 0 or unit_size <= 0:
                return start + i * CQ_STORE_UNIT_SIZE, last_phy
            if unit_size != INT_MAX:  # filler units point nowhere
                last_phy = offset + unit_size
    return size, last_phy


def unit_position(index: int, mapped_file_size: int) -> tuple[int, int]:
    """Where the unit of queue offset ``index`` lives: ``(fileFromOffset, position in that file)``.
    Its logical offset is ``index * 20``; files of ``mapped_file_size`` bytes start at multiples of it
    (``getIndexBuffer``: ``findMappedFileByOffset(offset)``, ``offset % mappedFileSize``)."""
    offset = index * CQ_STORE_UNIT_SIZE
    return offset - offset % mapped_file_size, offset % mapped_file_size


class ConsumeQueue:
    """Models ``ConsumeQueue``: unit *i* (queue offset *i*) sits at byte ``i * 20`` of the queue's
    address space and holds ``(commit_log_offset i64, size i32, tags_code i64)``. Files live in
    ``consumequeue/{topic}/{queue_id}/`` and are named by the logical byte offset of their first unit.

    :meth:`put_message_position_info` is idempotent: a unit whose ``offset + size`` is not beyond
    ``max_physic_offset`` is a repeated build and is ignored. Everything here is derived data and can
    be rebuilt from the CommitLog.
    """

    def __init__(self, topic: str, queue_id: int, store_path: str, mapped_file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.mapped_file_size = mapped_file_size
        self.store_path = store_path
        self.mapped_file_queue = MappedFileQueue(os.path.join(store_path, topic, str(queue_id)), mapped_file_size)
        self.max_physic_offset = -1
        self.min_logic_offset = 0

    # ---- load and recovery ----
    def load(self) -> None:
        self.mapped_file_queue.load()

    def recover(self) -> list[str]:
        """``recover``: scan from the third-last file, keep units while ``offset >= 0 and size > 0``,
        and cut the queue after the last valid one. Returns the names of deleted files."""
        mfs = self.mapped_file_queue.mapped_files
        if not mfs:
            return []
        index = max(0, len(mfs) - 3)
        mf = mfs[index]
        max_ext = self.max_physic_offset
        while True:
            valid_end, last_phy = _valid_units_end(mf)
            if last_phy >= 0:
                max_ext = last_phy
            if valid_end == mf.file_size and index + 1 < len(mfs):
                index += 1
                mf = mfs[index]
                continue
            break
        process_offset = mf.file_from_offset + valid_end
        self.max_physic_offset = max_ext
        removed = self.mapped_file_queue.truncate_dirty_files(process_offset)
        self.mapped_file_queue.flushed_where = process_offset
        self.mapped_file_queue.committed_where = process_offset
        return removed

    def truncate_dirty_logic_files(self, phy_offset: int) -> int:
        """``truncateDirtyLogicFiles``: drop units pointing at or past ``phy_offset`` (the CommitLog was
        cut there). Returns how many units were removed."""
        mfq = self.mapped_file_queue
        before = mfq.get_max_offset()
        self.max_physic_offset = phy_offset
        while True:
            mf = mfq.get_last_mapped_file(0, need_create=False)
            if mf is None:
                break
            mm = mf.mm
            first_offset, first_size, _ = UNIT.unpack_from(mm, 0)
            if mf.wrote_position == 0 or (first_size != INT_MAX and first_offset >= phy_offset):
                mfq.delete_last_mapped_file()
                continue
            cut = None
            for pos in range(0, mf.wrote_position, CQ_STORE_UNIT_SIZE):
                offset, size, _ = UNIT.unpack_from(mm, pos)
                if size == INT_MAX:
                    continue
                if offset < 0 or size <= 0 or offset >= phy_offset:
                    cut = pos
                    break
                self.max_physic_offset = offset + size
            if cut is not None:
                mf.truncate_to(cut)
            break
        if mfq.flushed_where > mfq.get_max_offset():
            mfq.flushed_where = mfq.committed_where = mfq.get_max_offset()
        return (before - mfq.get_max_offset()) // CQ_STORE_UNIT_SIZE

    def correct_min_offset(self, phy_min_offset: int) -> None:
        """``correctMinOffset``: the first unit (in the first file) pointing at or past the CommitLog's
        min offset becomes the queue's min offset."""
        mf = self.mapped_file_queue.get_first_mapped_file()
        if mf is None:
            return
        for pos in range(0, mf.get_read_position(), CQ_STORE_UNIT_SIZE):
            offset, size, _ = UNIT.unpack_from(mf.mm, pos)
            if offset >= phy_min_offset and size != INT_MAX:
                self.min_logic_offset = mf.file_from_offset + pos
                return
        self.min_logic_offset = mf.file_from_offset + mf.get_read_position()

    # ---- dispatch ----
    def put_message_position_info(self, offset: int, size: int, tags_code: int, cq_offset: int) -> bool:
        """``putMessagePositionInfo``: write the unit for queue offset ``cq_offset``.

        A repeated build (``offset + size <= max_physic_offset``, or a slot already written) is
        reported as success. A queue whose first file starts mid-way gets filler units before the
        first real one.
        """
        if offset + size <= self.max_physic_offset:
            return True
        expect_logic_offset = cq_offset * CQ_STORE_UNIT_SIZE
        mfq = self.mapped_file_queue
        mf = mfq.get_last_mapped_file(expect_logic_offset)
        if mf is None:
            return False
        if mf.first_create_in_queue and cq_offset != 0 and mf.wrote_position == 0:
            self.min_logic_offset = expect_logic_offset
            mfq.flushed_where = mfq.committed_where = expect_logic_offset
            self._fill_pre_blank_and_set_position(mf, expect_logic_offset)
        if cq_offset != 0:
            current_logic_offset = mf.wrote_position + mf.file_from_offset
            if expect_logic_offset < current_logic_offset:
                return True
            if expect_logic_offset != current_logic_offset:
                log.error(
                    "[BUG] consume queue %s/%d order maybe wrong: expected logic offset %d, current %d",
                    self.topic,
                    self.queue_id,
                    expect_logic_offset,
                    current_logic_offset,
                )
        self.max_physic_offset = offset + size
        return mf.append_message(UNIT.pack(offset, size, tags_code))

    def _fill_pre_blank_and_set_position(self, mf: MappedFile, until_where: int) -> None:
        count = (until_where % self.mapped_file_size) // CQ_STORE_UNIT_SIZE
        if count:
            mf.append_message(FILLER_UNIT * count)

    # ---- reads ----
    def get_index_buffer(self, start_index: int, max_bytes: int | None = None) -> bytes | None:
        """``getIndexBuffer``: units from ``start_index`` to the end of that file's data (never across
        files), at most ``max_bytes``; None when there are none."""
        file_from_offset, pos = plugs.resolve(UNIT_POSITION_PLUG, unit_position)(start_index, self.mapped_file_size)
        offset = file_from_offset + pos
        if offset < self.min_logic_offset:
            return None
        mf = self.mapped_file_queue.find_mapped_file_by_offset(offset)
        if mf is None:
            return None
        end = mf.get_read_position()
        if max_bytes is not None:
            end = min(end, pos + max_bytes)
        if pos >= end:
            return None
        return mf.mm[pos:end]

    def get_unit(self, index: int) -> tuple[int, int, int] | None:
        """The unit at queue offset ``index`` as (commit_log_offset, size, tags_code), or None."""
        data = self.get_index_buffer(index, CQ_STORE_UNIT_SIZE)
        if data is None or len(data) < CQ_STORE_UNIT_SIZE:
            return None
        return UNIT.unpack(data)

    def roll_next_file(self, index: int) -> int:
        """``rollNextFile``: the first queue offset of the next file."""
        units = self.mapped_file_size // CQ_STORE_UNIT_SIZE
        return index + units - index % units

    def get_min_offset_in_queue(self) -> int:
        return self.min_logic_offset // CQ_STORE_UNIT_SIZE

    def get_max_offset_in_queue(self) -> int:
        return self.mapped_file_queue.get_max_offset() // CQ_STORE_UNIT_SIZE

    def get_message_total_in_queue(self) -> int:
        return self.get_max_offset_in_queue() - self.get_min_offset_in_queue()

    def get_last_offset(self) -> int:
        """``getLastOffset``: the CommitLog offset just past the last message of this queue, or -1."""
        max_index = self.get_max_offset_in_queue()
        if max_index <= self.get_min_offset_in_queue():
            return -1
        unit = self.get_unit(max_index - 1)
        return -1 if unit is None else unit[0] + unit[1]

    def get_offset_in_queue_by_time(self, timestamp: int, commit_log: CommitLog) -> int:
        """``getOffsetInQueueByTime``: the queue offset whose store time (read from the CommitLog) is
        closest to ``timestamp``. An exact match wins (the earliest of equal times); between two
        neighbours the nearer wins, the earlier on a tie; past either end, the first or last offset.
        Units pointing below the CommitLog's min offset count as older than anything.

        4.x semantics, searched over the whole queue (Java first picks a file by its modification
        time, which a simulated clock cannot give). Returns 0 for an empty queue.
        """
        lo, hi = self.get_min_offset_in_queue(), self.get_max_offset_in_queue()
        if lo >= hi:
            return 0
        min_phy = commit_log.get_min_offset()

        def store_time(index: int) -> int:
            unit = self.get_unit(index)
            if unit is None or unit[0] < min_phy:
                return -1
            return commit_log.pickup_store_timestamp(unit[0], unit[1])

        left, right = lo, hi  # lower bound: the first offset stored at or after timestamp
        while left < right:
            mid = (left + right) // 2
            if store_time(mid) < timestamp:
                left = mid + 1
            else:
                right = mid
        if left == hi:
            return hi - 1
        after = store_time(left)
        if after == timestamp or left == lo:
            return left
        before = store_time(left - 1)
        return left if abs(timestamp - before) > abs(timestamp - after) else left - 1

    # ---- flush, retention, lifecycle ----
    def flush(self, flush_least_pages: int) -> bool:
        return self.mapped_file_queue.flush(flush_least_pages)

    def delete_expired_file(self, offset: int) -> int:
        count = self.mapped_file_queue.delete_expired_file_by_offset(offset, CQ_STORE_UNIT_SIZE)
        self.correct_min_offset(offset)
        return count

    def shutdown(self) -> None:
        self.mapped_file_queue.shutdown()

    def destroy(self) -> None:
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        self.mapped_file_queue.destroy()

    def __repr__(self) -> str:
        return (
            f"ConsumeQueue({self.topic!r}, {self.queue_id}, min={self.get_min_offset_in_queue()}, "
            f"max={self.get_max_offset_in_queue()}, max_physic_offset={self.max_physic_offset})"
        )
