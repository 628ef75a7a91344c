"""One IndexFile: an on-disk hash table from message keys to CommitLog offsets.

Models ``org.apache.rocketmq.store.index.IndexHeader`` and ``IndexFile``.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct

from rocketlab import plugs
from rocketlab.errors import StoreError
from rocketlab.store.mapped_file import open_sized_file
from rocketlab.store.message import java_string_hash

INDEX_POSITIONS_PLUG = plugs.point("lab02.index_positions")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

log = logging.getLogger(__name__)

INDEX_HEADER_SIZE = 40
HASH_SLOT_SIZE = 4
INDEX_SIZE = 20
INVALID_INDEX = 0

_HEADER = struct.Struct(">qqqqii")
_ENTRY = struct.Struct(">iqii")  # keyHash, phyOffset, timeDiff (s), prevIndex
_I32 = struct.Struct(">i")
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


def index_key_hash_method(key: str) -> int:
    """``indexKeyHashMethod``: ``abs(key.hashCode())``, with ``Integer.MIN_VALUE`` mapped to 0."""
    h = java_string_hash(key)
    return 0 if h == INT_MIN else abs(h)


def index_positions(key_hash: int, hash_slot_num: int, index_count: int) -> tuple[int, int]:
    """``putKey``'s arithmetic: the byte position of the key's hash slot (4 bytes each, after the
    40-byte header, slot ``keyHash % hashSlotNum``) and of entry number ``index_count`` (20 bytes each,
    after all the slots)."""
    return (INDEX_HEADER_SIZE + (key_hash % hash_slot_num) * HASH_SLOT_SIZE,
            INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE + index_count * INDEX_SIZE)


def index_file_size(hash_slot_num: int, index_num: int) -> int:
    return INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE + index_num * INDEX_SIZE


class IndexHeader:
    """Models ``IndexHeader``: the first 40 bytes of an IndexFile, kept in memory and written back to
    the mapping on every change (``updateByteBuffer``). ``index_count`` starts at 1 because entry 0
    is never used, so a slot value of 0 means "empty"."""

    __slots__ = (
        "begin_timestamp",
        "end_timestamp",
        "begin_phy_offset",
        "end_phy_offset",
        "hash_slot_count",
        "index_count",
    )

    def __init__(self) -> None:
        self.begin_timestamp = 0
        self.end_timestamp = 0
        self.begin_phy_offset = 0
        self.end_phy_offset = 0
        self.hash_slot_count = 0
        self.index_count = 1

    def load(self, buf: mmap.mmap) -> None:
        (
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            self.index_count,
        ) = _HEADER.unpack_from(buf, 0)
        if self.index_count <= 0:
            self.index_count = 1

    def update_byte_buffer(self, buf: mmap.mmap) -> None:
        _HEADER.pack_into(
            buf,
            0,
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            self.index_count,
        )


class IndexFile:
    """Models ``IndexFile``: ``40 + hash_slot_num*4 + index_num*20`` bytes. Slot *s* holds the index
    number of the newest entry whose key hashes to *s*; each 20-byte entry holds
    ``(key_hash, phy_offset, time_diff_seconds, prev_index)``, chaining to older entries.

    Capacity is ``index_num - 1`` entries. Lookups compare hashes only; collisions are the caller's
    to resolve, as in RocketMQ.
    """

    def __init__(
        self,
        file_name: str,
        hash_slot_num: int,
        index_num: int,
        end_phy_offset: int = 0,
        end_timestamp: int = 0,
    ) -> None:
        self.file_name = file_name
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.file_size = index_file_size(hash_slot_num, index_num)
        existed = os.path.exists(file_name)
        try:
            self._fd = open_sized_file(file_name, self.file_size, create=True)
        except StoreError as exc:
            raise StoreError(
                f"{exc} (index files have 40 + max_hash_slot_num*4 + max_index_num*20 bytes: "
                f"max_hash_slot_num={hash_slot_num}, max_index_num={index_num})"
            ) from exc
        try:
            self.mm = mmap.mmap(self._fd, self.file_size)
        except BaseException:
            os.close(self._fd)
            raise
        self.index_header = IndexHeader()
        if existed:
            self.index_header.load(self.mm)
        else:
            if end_phy_offset > 0:
                self.index_header.begin_phy_offset = end_phy_offset
                self.index_header.end_phy_offset = end_phy_offset
            if end_timestamp > 0:
                self.index_header.begin_timestamp = end_timestamp
                self.index_header.end_timestamp = end_timestamp
            self.index_header.update_byte_buffer(self.mm)

    # ---- header views ----
    def get_begin_timestamp(self) -> int:
        return self.index_header.begin_timestamp

    def get_end_timestamp(self) -> int:
        return self.index_header.end_timestamp

    def get_end_phy_offset(self) -> int:
        return self.index_header.end_phy_offset

    def is_write_full(self) -> bool:
        return self.index_header.index_count >= self.index_num

    # ---- put ----
    def put_key(self, key: str, phy_offset: int, store_timestamp: int) -> bool:
        """``putKey``: add an entry at ``index_count`` and make it the head of its slot's chain.

        Returns False when the file is full.
        """
        header = self.index_header
        if header.index_count >= self.index_num:
            log.warning("over index file capacity: index count = %d; index max num = %d", header.index_count, self.index_num)
            return False
        mm = self.mm
        key_hash = index_key_hash_method(key)
        abs_slot_pos, abs_index_pos = plugs.resolve(INDEX_POSITIONS_PLUG, index_positions)(
            key_hash, self.hash_slot_num, header.index_count)
        slot_value = _I32.unpack_from(mm, abs_slot_pos)[0]
        if slot_value <= INVALID_INDEX or slot_value > header.index_count:
            slot_value = INVALID_INDEX
        diff_ms = store_timestamp - header.begin_timestamp
        time_diff = 0 if header.begin_timestamp <= 0 or diff_ms < 0 else min(diff_ms // 1000, INT_MAX)
        _ENTRY.pack_into(mm, abs_index_pos, key_hash, phy_offset, time_diff, slot_value)
        _I32.pack_into(mm, abs_slot_pos, header.index_count)
        if header.index_count <= 1:
            header.begin_phy_offset = phy_offset
            header.begin_timestamp = store_timestamp
        if slot_value == INVALID_INDEX:
            header.hash_slot_count += 1
        header.index_count += 1
        header.end_phy_offset = phy_offset
        header.end_timestamp = store_timestamp
        header.update_byte_buffer(mm)
        return True

    # ---- query ----
    def is_time_matched(self, begin: int, end: int) -> bool:
        """``isTimeMatched``: does ``[begin, end]`` overlap this file's time range?"""
        h = self.index_header
        return (
            (begin < h.begin_timestamp and end > h.end_timestamp)
            or h.begin_timestamp <= begin <= h.end_timestamp
            or h.begin_timestamp <= end <= h.end_timestamp
        )

    def select_phy_offset(self, phy_offsets: list[int], key: str, max_num: int, begin: int, end: int) -> None:
        """``selectPhyOffset``: walk the slot's chain newest-first, collecting offsets whose hash
        matches and whose reconstructed time lies in ``[begin, end]``."""
        header = self.index_header
        mm = self.mm
        key_hash = index_key_hash_method(key)
        positions = plugs.resolve(INDEX_POSITIONS_PLUG, index_positions)
        abs_slot_pos = positions(key_hash, self.hash_slot_num, 0)[0]
        slot_value = _I32.unpack_from(mm, abs_slot_pos)[0]
        if slot_value <= INVALID_INDEX or slot_value > header.index_count or header.index_count <= 1:
            return
        next_index = slot_value
        while len(phy_offsets) < max_num:
            entry_pos = positions(key_hash, self.hash_slot_num, next_index)[1]
            if not 0 <= entry_pos <= len(mm) - INDEX_SIZE:
                break
            key_hash_read, phy_offset_read, time_diff, prev_index = _ENTRY.unpack_from(mm, entry_pos)
            if time_diff < 0:
                break
            time_read = header.begin_timestamp + time_diff * 1000
            if key_hash == key_hash_read and begin <= time_read <= end:
                phy_offsets.append(phy_offset_read)
            if (
                prev_index <= INVALID_INDEX
                or prev_index > header.index_count
                or prev_index == next_index
                or time_read < begin
            ):
                break
            next_index = prev_index

    # ---- lifecycle ----
    def flush(self) -> None:
        self.index_header.update_byte_buffer(self.mm)
        self.mm.flush()

    def close(self) -> None:
        if self._fd >= 0:
            self.mm.close()
            os.close(self._fd)
            self._fd = -1

    def destroy(self) -> None:
        self.close()
        try:
            os.unlink(self.file_name)
        except FileNotFoundError:
            pass

    def __repr__(self) -> str:
        h = self.index_header
        return (
            f"IndexFile({os.path.basename(self.file_name)}, entries={h.index_count - 1}/{self.index_num - 1}, "
            f"phy=[{h.begin_phy_offset}, {h.end_phy_offset}], time=[{h.begin_timestamp}, {h.end_timestamp}])"
        )
