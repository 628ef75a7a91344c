"""The walk of ``CommitLog``'s recovery over a classic commit-log file, in bulk: where its records begin.

:func:`scan_classic` is the recovery loop itself; :class:`ClassicChain` finds the same record starts a
few MiB at a time (every record carries its own offset), and remembers per file how far it walked
(:func:`file_key`), so a segment starting inside a file begins its walk there. rocketlab's own addition.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from rocketlab.analysis.store_arrow_records import MIN_RECORD, check_records
from rocketlab.analysis.store_files import RECORD_MAGICS
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, TOTAL_SIZE_AND_MAGIC


# ------------------------------------------------------------------------------ commit logs: boundaries
def scan_classic(buf: Any, start: int, end: int | None, size: int) -> tuple[list[int], int | None]:
    """Record starts from ``start`` up to ``end`` (or the file's end, a blank, zeros); and the offset of a
    record whose size or magic is wrong (None when there is none): the loop of ``CommitLog``'s recovery."""
    starts: list[int] = []
    append, unpack, magics = starts.append, TOTAL_SIZE_AND_MAGIC.unpack_from, RECORD_MAGICS
    stop = size - 8 if end is None else min(end - 1, size - 8)
    pos = start
    while pos <= stop:
        total, magic = unpack(buf, pos)
        if magic not in magics or total < MIN_RECORD or total > size - pos:
            if (total, magic) == (0, 0) or magic == BLANK_MAGIC_CODE:
                return starts, None
            return starts, pos
        append(pos)
        pos += total
    return starts, None


CHUNK = 4 * 2**20
"""Bytes of a classic commit log walked at a time (:class:`ClassicChain`), each chunk's records then checked
and built while their bytes are in the caches (64 MiB at a time ran at half the speed)."""
_SCAN = 4 * 2**20
_MAGIC_HEAD = 0xDA
_STEP_ABOVE = 640
"""Mean record size (bytes) from which :class:`ClassicChain` walks record by record rather than looking at
every byte for records (about 0.6 us a record against 0.8 ns a byte, measured here)."""
_PROBE = np.dtype([("total", ">i4"), ("magic", ">i4"), ("skip", "V20"), ("physical_offset", ">i8")])
assert all((m & 0xFFFFFFFF) >> 24 == _MAGIC_HEAD for m in RECORD_MAGICS)  # both magics begin with 0xDA


class ClassicChain:
    """The walk of ``CommitLog``'s recovery over one classic commit-log file (:func:`scan_classic`'s loop,
    record after record from offset 0), done in bulk.

    A record written at offset ``c`` of a file at ``base`` carries itself: its magic at ``c + 4`` and
    ``base + c`` in its PHYSICALOFFSET field (``c + 28``). numpy finds every such offset in a range (the
    magics' first byte, then the rest checked on the few places found); the walk then follows the records'
    sizes through them a run at a time: a run of candidates where each record ends where the next begins is
    one step. A candidate the walk does not reach (bytes in a body that happen to look like a record) is
    skipped; a record that is not a candidate (its PHYSICALOFFSET field differs) is stepped over with the
    loop's own check. So the starts are exactly the loop's, however the bytes look; only the speed depends
    on the records carrying their offsets, as every ``CommitLog`` writes them. Where the records are big
    (:data:`_STEP_ABOVE`), the loop itself is quicker than looking at every byte, and runs instead.
    """

    def __init__(self, buf: Any, u8: np.ndarray, base: int) -> None:
        self.buf, self.u8, self.base, self.size = buf, u8, base, len(u8)
        self.probe = np.ndarray((max(0, len(u8) - _PROBE.itemsize + 1),), np.dtype((np.void, _PROBE.itemsize)),
                                buffer=u8, strides=(1,))
        self.pos = 0
        """The next record's offset."""
        self.done = False
        """The walk has ended: at zeros or a blank (``bad`` None), or at a record that does not decode."""
        self.bad: int | None = None
        self.stepped = 0
        """Records the candidate search missed, walked one at a time (0 where every record carries its
        offset); the loop of :meth:`_step` is counted in ``looped``."""
        self.looped = 0
        self.walked = self.walked_bytes = 0

    def candidates(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """The offsets in ``[lo, hi)`` where a record written there would begin, and their total sizes."""
        size, u8 = self.size, self.u8
        found = []
        for a in range(lo + 4, min(hi + 4, size), _SCAN):
            b = min(a + _SCAN, hi + 4, size)
            found.append(np.flatnonzero(u8[a:b] == _MAGIC_HEAD) + (a - 4))
        c = np.concatenate(found) if found else np.zeros(0, np.int64)
        c = c[c + _PROBE.itemsize <= size]  # a record is longer
        head = self.probe[c].view(_PROBE)
        total = head["total"].astype(np.int64)
        mine = (((head["magic"] == RECORD_MAGICS[0]) | (head["magic"] == RECORD_MAGICS[1]))
                & (total >= MIN_RECORD) & (total <= size - c) & (head["physical_offset"] == self.base + c))
        return c[mine], total[mine]

    def starts(self, stop: int) -> Iterator[np.ndarray]:
        """Walk on over the records that begin at or before ``stop``; their offsets, a chunk at a time."""
        stop = min(stop, self.size - 8)
        while not self.done and self.pos <= stop:
            pos = self.pos
            hi = min(stop + 1, pos + CHUNK)
            if self.walked >= 64 and self.walked_bytes >= _STEP_ABOVE * self.walked:
                found = self._step(pos, hi)
                self.looped += len(found)
                if found:
                    yield np.asarray(found, np.int64)
                continue
            cand, total = self.candidates(pos, hi)
            after = cand + total
            breaks = np.flatnonzero(after[:-1] != cand[1:])
            out: list[np.ndarray] = []
            single: list[int] = []
            while pos < hi:
                i = int(np.searchsorted(cand, pos))
                if i < len(cand) and cand[i] == pos:
                    k = int(np.searchsorted(breaks, i))
                    j = int(breaks[k]) if k < len(breaks) else len(cand) - 1
                    if single:
                        out.append(np.asarray(single, np.int64))
                        single = []
                    out.append(cand[i:j + 1])
                    pos = int(after[j])
                    continue
                one = self._step(pos, pos + 1)  # not a candidate: one record, checked as the loop checks it
                if self.done:
                    break
                single.extend(one)
                self.stepped += 1
                pos = self.pos
            if single:
                out.append(np.asarray(single, np.int64))
            if out:
                found = np.concatenate(out)
                self.walked += len(found)
                self.walked_bytes += pos - int(found[0])
            self.pos = pos
            if out:
                yield found

    def _step(self, pos: int, hi: int) -> list[int]:
        """The loop itself, record after record from ``pos`` while before ``hi`` (faster than looking at
        every byte when the records are big): their offsets; ``pos``, ``done`` and ``bad`` move on."""
        unpack, size, buf = TOTAL_SIZE_AND_MAGIC.unpack_from, self.size, self.buf
        v1, v2 = RECORD_MAGICS
        out: list[int] = []
        append = out.append
        while pos < hi:
            length, magic = unpack(buf, pos)
            if (magic != v1 and magic != v2) or length < MIN_RECORD or length > size - pos:
                self.done = True
                if (length, magic) != (0, 0) and magic != BLANK_MAGIC_CODE:
                    self.bad = pos
                break
            append(pos)
            pos += length
        self.pos = pos
        return out

    def skip_to(self, offset: int, key: tuple | None = None) -> bool:
        """Walk (and check, as ``MessageDecoder.decode`` would) the records before ``offset`` without
        building them; whether the walk goes on at or after ``offset`` (False: the file ends before it).
        ``key`` (:func:`file_key`): start from the last place this process walked the same file to."""
        known = _WALKED.get(key, []) if key is not None else []
        i = bisect.bisect_right(known, offset) - 1
        if i >= 0 and self.carries_itself(known[i]):
            self.pos = known[i]
        elif i >= 0:  # a record no longer begins there: the file changed under the same key
            del _WALKED[key]
        for start in self.starts(offset - 1):
            bad = check_records(self.u8, start, self.size).first_bad()
            if bad is not None:
                self.done, self.bad = True, int(start[bad])
                break
            self.checked(key)
        return not self.done

    def carries_itself(self, pos: int) -> bool:
        """Whether a record written at ``pos`` begins there (its magic, a size that fits, its offset), or
        the written data ends there (zeros, or the blank at a file's end)."""
        if pos == 0 or pos + 8 > self.size:
            return True  # the walk begins, or can read no record there
        length, magic = TOTAL_SIZE_AND_MAGIC.unpack_from(self.buf, pos)
        if (length, magic) == (0, 0) or magic == BLANK_MAGIC_CODE:
            return True
        if pos + _PROBE.itemsize > self.size:
            return False
        head = self.probe[pos:pos + 1].view(_PROBE)[0]
        return (int(head["magic"]) in RECORD_MAGICS and MIN_RECORD <= int(head["total"]) <= self.size - pos
                and int(head["physical_offset"]) == self.base + pos)

    def checked(self, key: tuple | None) -> None:
        """Remember that every record before ``pos`` walks and decodes (for :meth:`skip_to` of a later
        segment of the same file, unchanged: ``key`` holds its size and times)."""
        if key is None or self.done or time.time_ns() - max(key[-2:]) < _SETTLED_NS:
            return
        if key not in _WALKED and len(_WALKED) >= 4096:
            _WALKED.clear()
        known = _WALKED.setdefault(key, [])
        i = bisect.bisect_left(known, self.pos)
        if i < len(known) and known[i] == self.pos:
            return
        if len(known) >= 4096:  # keep every other place (a place every 8 MiB of a 32 GiB file)
            del known[::2]
        bisect.insort(known, self.pos)


_WALKED: dict[tuple, list[int]] = {}
"""Per classic commit-log file (:func:`file_key`): offsets the walk reached from offset 0 with every
record before them decoding: where a segment starting later may begin its walk (if a record still begins
there). Per process (a Spark Python worker keeps it from one query to the next); files changed in the
last 2 s are not remembered."""


_SETTLED_NS = 2_000_000_000
"""A file changed this recently is not remembered: file times are coarse (a few ms), so a rewrite in place
of a file just written could keep its size and times."""


def file_key(path: str) -> tuple:
    """A file's identity and version: path, device, inode, size, modification and change times."""
    st = os.stat(path)
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
