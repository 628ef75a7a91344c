"""RocketMQ's store files as Arrow record batches, decoded in bulk: what the Spark data sources yield.

The rows are exactly :mod:`rocketlab.analysis.store_files`' (the record-at-a-time reference decoders),
built column by column instead:

* classic commit logs (``CommitLog`` records, ``MessageDecoder``'s layout): :class:`ClassicChain` walks
  the records as recovery does, in bulk (each record carries its own offset, so numpy finds the records and
  the walk follows their sizes a run at a time); the checks of ``MessageDecoder.decode`` run on numpy
  arrays (:func:`check_records`); the fixed-width fields are gathered through big-endian numpy views with a
  one-byte stride; topic, properties and body are Arrow binary views over the mapped file, cast to
  ``binary``/``string``; the properties map is split with Arrow's string kernels;
* DLedger data files: a ``struct`` loop over the entry headers (:func:`scan_dledger`), then the same;
* consume-queue units (``ConsumeQueue``'s 20-byte ``CQ_STORE_UNIT``) and index entries (``IndexFile``'s
  20-byte entries) as numpy views of the whole file.

Only the columns asked for are built and rows failing the pushed filters are
dropped before the variable-width columns are built. Anything unusual (a record that does not decode,
text that is not UTF-8, a repeated property name) goes to the reference decoder from that record on, so
the rows stay identical. A :class:`Segment` is a byte range of one file: the records that begin in it (a
segment of a classic commit log begins anywhere; it walks, without building them, the records before it,
so a record that does not decode ends the file for every later segment as it does for the reference).
:func:`plan_partitions` cuts a store into about one range of written bytes per core, splitting big files.
rocketlab's own addition.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketlab.analysis import store_files
from rocketlab.analysis.store_files import (
    COMMIT_LOG_COLUMNS,
    CONSUME_QUEUE_COLUMNS,
    INDEX_COLUMNS,
    RECORD_MAGICS,
    StoreFile,
)
from rocketlab.dledger.entry import BLANK_MAGIC_CODE as DLEDGER_BLANK
from rocketlab.dledger.entry import BODY_OFFSET, VALID_MAGICS
from rocketlab.errors import RocketlabError
from rocketlab.store.consume_queue import INT_MAX
from rocketlab.store.index_file import HASH_SLOT_SIZE, INDEX_HEADER_SIZE, INDEX_SIZE
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, cal_msg_length

BATCH = 65536
"""Records per Arrow batch (at most): Spark took in a Python data source's prebuilt Arrow batches of the
small columns at 4.1M rows/s in batches of 8,192 rows and 6.5M in batches of 65,536 (local[2], measured
here, 4.2M rows)."""
BATCH_BYTES = 64 * 2**20
"""Record bytes per Arrow batch (at most, unless one record is bigger) when the batch holds columns that
grow with the records (:data:`_WIDE`; the reference decoder's batches always): a ``binary`` column's
offsets are 32-bit, and RocketMQ's records reach 4 MiB."""
assert BATCH * 32767 < 2**31  # topics (at most 32,767 bytes) never need the byte limit
MIN_RECORD = cal_msg_length(0, 0, 0, 0)
_HEAD = struct.Struct(">ii")
_I32 = struct.Struct(">i")
_ENTRY_HEADER = struct.Struct(">iiqqqiiii")
_BORN_V6, _STORE_V6 = 0x10, 0x20
_UNIT = 20

_ARROW = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(), "boolean": pa.bool_(),
          "binary": pa.binary(), "map<string,string>": pa.map_(pa.string(), pa.string())}


def arrow_schema(columns: Sequence[tuple[str, str]]) -> pa.Schema:
    """The Arrow schema of Spark columns ``(name, sql type)`` (``binary``, never ``large_binary``)."""
    return pa.schema([pa.field(name, _ARROW[type_]) for name, type_ in columns])


# ------------------------------------------------------------------------------ filters
NUMERIC_OPS = {"EqualTo": pc.equal, "GreaterThan": pc.greater, "GreaterThanOrEqual": pc.greater_equal,
               "LessThan": pc.less, "LessThanOrEqual": pc.less_equal}


@dataclass(frozen=True)
class Predicate:
    """One pushed filter: ``column op value`` (op: a :data:`NUMERIC_OPS` name or ``In``), SQL semantics
    (a null never matches)."""

    column: str
    op: str
    value: Any

    def mask(self, values: pa.Array) -> np.ndarray:
        if self.op == "In":
            hit = pc.is_in(values, value_set=pa.array(list(self.value), type=values.type))
        else:
            hit = NUMERIC_OPS[self.op](values, pa.scalar(self.value, type=values.type))
        return np.asarray(pc.fill_null(hit, False).to_numpy(zero_copy_only=False), dtype=bool)

    def bounds(self) -> tuple[float, float]:
        """The closed interval of values this predicate admits (numeric columns)."""
        if self.op == "In":
            return (min(self.value), max(self.value)) if self.value else (1.0, 0.0)
        v = self.value
        return {"EqualTo": (v, v), "GreaterThan": (v + 1, math.inf), "GreaterThanOrEqual": (v, math.inf),
                "LessThan": (-math.inf, v - 1), "LessThanOrEqual": (-math.inf, v)}[self.op]

    def admits(self, value: Any) -> bool:
        if value is None:
            return False
        if self.op == "In":
            return value in self.value
        if self.op == "EqualTo":
            return value == self.value
        lo, hi = self.bounds()
        return value is not None and lo <= value <= hi


def interval(predicates: Sequence[Predicate], column: str) -> tuple[float, float]:
    """The values of ``column`` every predicate on it admits, as a closed interval."""
    lo, hi = -math.inf, math.inf
    for p in predicates:
        if p.column == column:
            a, b = p.bounds()
            lo, hi = max(lo, a), min(hi, b)
    return lo, hi


def filter_batch(batch: pa.RecordBatch, predicates: Sequence[Predicate]) -> pa.RecordBatch:
    if not predicates or batch.num_rows == 0:
        return batch
    keep = np.ones(batch.num_rows, dtype=bool)
    for p in predicates:
        keep &= p.mask(batch.column(p.column))
    return batch if keep.all() else batch.filter(pa.array(keep))


# ------------------------------------------------------------------------------ segments and partitions
@dataclass(frozen=True)
class Segment:
    """Bytes ``[start, end)`` of one store file (``end`` None: to the file's end, blanks and corruption
    included): the records (entries, units) that begin there. ``start`` is a unit boundary in a consume
    queue and an entry boundary in a DLedger file; anywhere in a classic commit log."""

    file: StoreFile
    start: int = 0
    end: int | None = None


def _mapped(path: str) -> tuple[pa.Buffer, np.ndarray] | None:
    if os.path.getsize(path) == 0:
        return None
    buf = pa.memory_map(path, "r").read_buffer()
    return buf, np.frombuffer(buf, dtype=np.uint8)


# ------------------------------------------------------------------------------ commit logs: boundaries
def scan_classic(buf: Any, start: int, end: int | None, size: int) -> tuple[list[int], int | None]:
    """Record starts from ``start`` up to ``end`` (or the file's end, a blank, zeros); and the offset of a
    record whose size or magic is wrong (None when there is none): the loop of ``CommitLog``'s recovery."""
    starts: list[int] = []
    append, unpack, magics = starts.append, _HEAD.unpack_from, RECORD_MAGICS
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
        unpack, size, buf = _HEAD.unpack_from, self.size, self.buf
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
        length, magic = _HEAD.unpack_from(self.buf, pos)
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


@dataclass
class Entries:
    """DLedger entries of a segment: index, term, pos, the body's range, whether the body is a record."""

    index: list[int] = field(default_factory=list)
    term: list[int] = field(default_factory=list)
    pos: list[int] = field(default_factory=list)
    body_at: list[int] = field(default_factory=list)
    body_end: list[int] = field(default_factory=list)
    record: list[bool] = field(default_factory=list)
    bad: int | None = None  # the offset of an entry that does not decode


def scan_dledger(buf: Any, base: int, start: int, end: int | None, size: int) -> Entries:
    """The entries from ``start`` (``DLedgerMmapFileStore``'s layout), stopping where the reference
    reader stops; ``bad`` marks an entry it would report."""
    out = Entries()
    pos, stop = start, size if end is None else min(end, size)
    unpack, head = _ENTRY_HEADER.unpack_from, _HEAD.unpack_from
    while pos + 4 <= size and pos < stop:
        if _I32.unpack_from(buf, pos)[0] == DLEDGER_BLANK:
            break
        if pos + BODY_OFFSET > size:
            out.bad = pos
            break
        magic, total, index, term, entry_pos, _ch, _chain, _crc, body_size = unpack(buf, pos)
        if (magic, total) == (0, 0):
            break
        if (magic not in VALID_MAGICS or total < BODY_OFFSET or body_size != total - BODY_OFFSET
                or pos + total > size or entry_pos != base + pos):
            out.bad = pos
            break
        body_at = pos + BODY_OFFSET
        out.index.append(index)
        out.term.append(term)
        out.pos.append(entry_pos)
        out.body_at.append(body_at)
        out.body_end.append(pos + total)
        out.record.append(body_size >= 8 and head(buf, body_at)[1] in RECORD_MAGICS)
        pos += total
    return out


def batch_edges(sizes: np.ndarray, wide: bool = True) -> list[int]:
    """Where to cut records of ``sizes`` bytes into batches of at most :data:`BATCH` records and, when
    ``wide`` (variable-width columns built from the records' bytes), :data:`BATCH_BYTES` bytes (a bigger
    record is a batch of its own)."""
    if not wide:
        return [*range(0, len(sizes), BATCH), len(sizes)] if len(sizes) else [0]
    ends = np.cumsum(sizes, dtype=np.int64)
    edges = [0]
    while edges[-1] < len(sizes):
        lo = edges[-1]
        before = int(ends[lo - 1]) if lo else 0
        fits = int(np.searchsorted(ends, before + BATCH_BYTES, side="right"))
        edges.append(max(lo + 1, min(len(sizes), lo + BATCH, fits)))
    return edges


def _gather(u8: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``width`` bytes at each offset (clipped to the buffer) as an (n, width) array."""
    idx = np.minimum(at[:, None] + np.arange(width), len(u8) - 1)
    return u8[idx]


_BE = {2: np.dtype(">i2"), 4: np.dtype(">i4"), 8: np.dtype(">i8")}
_NATIVE = {2: np.int64, 4: np.int32, 8: np.int64}


def _overlapping(u8: np.ndarray, width: int) -> np.ndarray:
    """Every offset of ``u8`` as a big-endian integer of ``width`` bytes: a view with a stride of one byte
    (element ``k`` is the integer at byte ``k``), so that one fancy index gathers a field of many records."""
    return np.ndarray((max(0, len(u8) - width + 1),), _BE[width], buffer=u8, strides=(1,))


def _int(u8: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The big-endian integers of ``width`` (2, 4, 8) bytes at ``at`` (offsets past the buffer read its
    last bytes: only records already found malformed read there) as int32 (4) or int64."""
    if len(u8) < width:
        return np.zeros(len(at), _NATIVE[width])
    return _overlapping(u8, width)[np.minimum(at, len(u8) - width)].astype(_NATIVE[width])


@dataclass
class Layout:
    """Where each field of the records at ``start`` lies (``MessageDecoder``'s order), and whether
    the record passes ``MessageDecoder.decode``'s checks."""

    start: np.ndarray
    total: np.ndarray
    magic: np.ndarray
    sys_flag: np.ndarray
    born_len: np.ndarray
    store_len: np.ndarray
    body_at: np.ndarray
    body_len: np.ndarray
    topic_at: np.ndarray
    topic_len: np.ndarray
    props_at: np.ndarray
    props_len: np.ndarray
    ok: np.ndarray
    head: np.ndarray | None = None
    """The records' fixed headers gathered at once (:data:`HEADER_V4`), when every record has IPv4 hosts."""

    def first_bad(self) -> int | None:
        bad = np.flatnonzero(~self.ok)
        return int(bad[0]) if len(bad) else None

    @classmethod
    def concat(cls, parts: Sequence[Layout]) -> Layout:
        """The records of ``parts``, in order."""
        heads = [p.head for p in parts]
        head = None if any(h is None for h in heads) else np.concatenate(heads)
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in Layout.__dataclass_fields__
                     if k != "head"), head)

    def take(self, rows: Any) -> Layout:
        """The records at ``rows`` (a slice or indices)."""
        return Layout(*(None if (v := getattr(self, k)) is None else v[rows] for k in Layout.__dataclass_fields__))


HEADER_V4 = np.dtype([("total", ">i4"), ("magic", ">i4"), ("body_crc", ">i4"), ("queue_id", ">i4"),
                      ("flag", ">i4"), ("queue_offset", ">i8"), ("physical_offset", ">i8"), ("sys_flag", ">i4"),
                      ("born_timestamp", ">i8"), ("born_host", "V8"), ("store_timestamp", ">i8"),
                      ("store_host", "V8"), ("reconsume_times", ">i4"), ("prepared_transaction_offset", ">i8"),
                      ("body_len", ">i4")])
"""A record's fixed part when both hosts are IPv4 (``MessageDecoder``'s order, 88 bytes)."""
assert HEADER_V4.itemsize == 88
_HEADER_BYTES = np.dtype((np.void, HEADER_V4.itemsize))
_HEADER_NATIVE = np.dtype([(name, HEADER_V4.fields[name][0].newbyteorder("=")) for name in HEADER_V4.names],
                          align=True)


def _headers(u8: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """The :data:`HEADER_V4` of the records at ``start``, one gather for all fields; None when a record
    has an IPv6 host (or its header would pass the buffer's end)."""
    if len(start) == 0 or int(start.max()) + HEADER_V4.itemsize > len(u8):
        return None
    raw = np.ndarray((len(u8) - HEADER_V4.itemsize + 1,), _HEADER_BYTES, buffer=u8, strides=(1,))
    head = raw[start].view(HEADER_V4).astype(_HEADER_NATIVE)  # copies of 88 bytes, then one conversion
    if (head["sys_flag"] & (_BORN_V6 | _STORE_V6)).any():
        return None
    return head


def check_records(u8: np.ndarray, start: np.ndarray, limit: Any) -> Layout:
    """Every record's field offsets and ``MessageDecoder.decode``'s consistency checks, in bulk (the
    size and magic were checked by the scan; ``limit``: where each record's bytes must end by)."""
    head = _headers(u8, start)
    if head is not None:
        total, magic = head["total"].astype(np.int64), head["magic"].astype(np.int64)
        sys_flag = head["sys_flag"].astype(np.int64)
        born_len = store_len = np.full(len(start), 8, np.int64)
    else:
        total = _int(u8, start, 4)
        magic = _int(u8, start + 4, 4)
        sys_flag = _int(u8, start + 36, 4)
        born_len = np.where(sys_flag & _BORN_V6, 20, 8)
        store_len = np.where(sys_flag & _STORE_V6, 20, 8)
    end = start + total
    ok = (total >= MIN_RECORD) & (total <= limit - start) & ((magic == RECORD_MAGICS[0]) | (magic == RECORD_MAGICS[1]))
    tls = np.where(magic == MESSAGE_MAGIC_CODE_V2, 2, 1)
    prefix = 72 + born_len + store_len
    ok &= prefix + tls + 2 <= total
    body_len = head["body_len"].astype(np.int64) if head is not None else _int(u8, start + prefix - 4, 4)
    body_at = start + prefix
    ok &= (body_len >= 0) & (body_at + body_len + tls + 2 <= end)
    tl_at = body_at + np.maximum(body_len, 0)
    topic_len = np.where(tls == 1, u8[np.minimum(tl_at, len(u8) - 1)].astype(np.int8).astype(np.int64),
                         _i16(u8, tl_at))
    topic_at = tl_at + tls
    ok &= (topic_len >= 0) & (topic_at + topic_len + 2 <= end)
    props_len = _i16(u8, topic_at + np.maximum(topic_len, 0))
    props_at = topic_at + np.maximum(topic_len, 0) + 2
    ok &= (props_len >= 0) & (props_at + props_len == end)
    return Layout(start, total, magic, sys_flag, born_len, store_len, body_at, body_len, topic_at, topic_len,
                  props_at, props_len, ok, head)


def _i16(u8: np.ndarray, at: np.ndarray) -> np.ndarray:
    return _int(u8, at, 2)


# ------------------------------------------------------------------------------ commit logs: columns
def _views(buf: pa.Buffer, u8: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array:
    """A ``binary`` array of the slices ``[at, at + length)`` of ``buf``: Arrow binary views over the file
    (no copy per slice), then one cast that copies them into a ``binary`` array."""
    n = len(at)
    views = np.zeros((n, 4), dtype="<i4")
    views[:, 0] = length
    short = length <= 12
    raw = views.view(np.uint8)
    if short.any():
        inline = _gather(u8, at[short], 12)
        inline[np.arange(12)[None, :] >= length[short][:, None]] = 0
        raw[short, 4:16] = inline
    long_ = ~short
    if long_.any():
        raw[long_, 4:8] = _gather(u8, at[long_], 4)
        views[long_, 3] = at[long_]
    array = pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), buf])
    return array.cast(pa.binary())


def _slices(buf: pa.Buffer, u8: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array:
    """A ``binary`` array of the slices ``[at, at + length)``: short ones (topics, properties) gathered
    into one buffer with numpy, long ones (bodies) through :func:`_views`."""
    n = len(at)
    total = int(length.sum()) if n else 0
    if n == 0 or total > 64 * n:
        return _views(buf, u8, at, length)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    idx = np.arange(total, dtype=np.int64) + np.repeat(at - offsets[:-1], length)
    data = u8[idx]
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def _same_text(u8: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array | None:
    """The slices as a ``string`` array when they all hold the same valid UTF-8 (a commit log of one
    topic, or a stretch of one), built as one value repeated; else None."""
    n = len(at)
    if n == 0 or not (length == length[0]).all() or length[0] > 255:
        return None
    width = int(length[0])
    first = u8[int(at[0]):int(at[0]) + width]
    if width and not (_gather(u8, at, width) == first).all():
        return None
    try:
        value = first.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return None
    return pa.repeat(pa.scalar(value, pa.string()), n)


def _text(binary: pa.Array) -> pa.Array | None:
    """``binary`` as ``string`` when it is all valid UTF-8, else None (the reference decoder replaces
    bad bytes: the caller falls back to it)."""
    try:
        return binary.cast(pa.string())
    except pa.ArrowInvalid:
        return None


def _properties(text: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array] | None:
    """``MessageDecoder.string2messageProperties`` over a ``string`` array: a ``map<string,string>``
    array, and the ``TAGS`` and ``KEYS`` values (null where absent); None when a row names a property
    twice (the reference keeps the last: the caller falls back)."""
    n = len(text)
    parts = pc.split_pattern(text, "\x02")
    flat = parts.flatten()
    parent = np.asarray(pc.list_parent_indices(parts))
    pair = pc.split_pattern(flat, "\x01", max_splits=1)
    has_sep = np.asarray(pc.list_value_length(pair)) == 2
    name = pc.list_element(pair, 0)
    value = pc.if_else(pa.array(has_sep), pc.list_element(pc.if_else(pa.array(has_sep), pair,
                                                                          pa.scalar(["", ""], pair.type)), 1), "")
    keep = (has_sep & (np.asarray(pc.utf8_length(flat)) >= 3) & (np.asarray(pc.utf8_length(name)) > 0)
            & (np.asarray(pc.utf8_length(value)) > 0))
    rows = parent[keep]
    mask = pa.array(keep)
    keys, items = name.filter(mask), value.filter(mask)
    if len(rows) > 1:
        codes = pc.dictionary_encode(keys)
        combined = rows.astype(np.int64) * max(1, len(codes.dictionary)) + np.asarray(codes.indices)
        if len(np.unique(combined)) != len(rows):
            return None
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    props = pa.MapArray.from_arrays(pa.array(offsets), keys, items)

    def lookup(key: str) -> pa.Array:
        hit = np.asarray(pc.fill_null(pc.equal(keys, key), False))
        order = np.full(n, -1, dtype=np.int64)
        order[rows[hit]] = np.arange(int(hit.sum()))
        return items.filter(pa.array(hit)).take(pa.array(order, mask=order < 0))

    return props, lookup("TAGS"), lookup("KEYS")


_HEX = np.frombuffer(b"".join(b"%02X" % i for i in range(256)), dtype=np.uint8).reshape(256, 2)


def _fixed_text(rows: np.ndarray) -> pa.Array:
    """An (n, w) uint8 array of ASCII as a ``string`` array of n values."""
    n, w = rows.shape
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * w).tobytes())
    return pa.Array.from_buffers(pa.string(), n, [None, offsets, pa.py_buffer(np.ascontiguousarray(rows).tobytes())])


def _hosts(u8: np.ndarray, at: np.ndarray, length: np.ndarray, head: np.ndarray | None = None) -> pa.Array:
    """``ip:port`` / ``[ip6]:port`` strings of the stored socket addresses (each distinct one formatted
    once); ``head``: the IPv4 addresses already gathered (a ``V8`` field of :data:`HEADER_V4`)."""
    from rocketlab.store.message import host_string, unpack_host

    if (length == 8).all():
        raw = _gather(u8, at, 8) if head is None else head
        keys = np.ascontiguousarray(raw).view("<u8").ravel()
        if len(keys) and (keys == keys[0]).all():  # one broker, one client: the usual case
            return _constant(host_string(unpack_host(keys[:1].tobytes())), len(keys), pa.string())
        uniq, inverse = np.unique(keys, return_inverse=True)
        texts = [host_string(unpack_host(k.tobytes())) for k in uniq]
        return pa.array(texts, pa.string()).take(pa.array(inverse.ravel()))
    raw = _gather(u8, at, 20)
    raw[length == 8, 8:] = 0
    keys = np.concatenate([raw, (length == 20).astype(np.uint8)[:, None]], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    texts = [host_string(unpack_host(bytes(k[:20 if k[20] else 8]))) for k in uniq]
    return pa.array(texts, pa.string()).take(pa.array(inverse.ravel()))


def _msg_ids(u8: np.ndarray, lay: Layout, phys: np.ndarray) -> pa.Array:
    """``MessageDecoder.createMessageId``: store address, port, physical offset as upper-case hex."""
    n = len(phys)
    store_at = lay.start + 56 + lay.born_len
    off = np.ascontiguousarray(phys.astype(">i8")).view(np.uint8).reshape(n, 8)
    v4 = lay.store_len == 8
    out: list[pa.Array] = []
    if v4.all() or (~v4).all():
        w = int(lay.store_len[0]) if n else 8
        host = (_gather(u8, store_at, w) if lay.head is None
                else np.ascontiguousarray(lay.head["store_host"]).view(np.uint8).reshape(n, 8))
        raw = np.concatenate([host, off], axis=1)
        return _fixed_text(_HEX[raw].reshape(n, 2 * (w + 8)))
    for i in range(n):  # mixed address families: rare, one at a time
        w = int(lay.store_len[i])
        out.append(bytes(_gather(u8, store_at[i:i + 1], w)[0]) + bytes(off[i]))
    return pa.array([b.hex().upper() for b in out], pa.string())


try:
    from isal.isal_zlib import crc32 as _crc32  # ISA-L's CRC-32: twice zlib's here (the same CRC)
except ImportError:  # pragma: no cover - a platform without isal's wheel
    from zlib import crc32 as _crc32


def _crc_ok(buf: pa.Buffer, at: np.ndarray, length: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """``UtilAll.crc32`` of each body (``crc32 & 0x7FFFFFFF``) equal to the stored BODYCRC."""
    mv = memoryview(buf)
    crc = np.fromiter(map(_crc32, map(mv.__getitem__, map(slice, at.tolist(), (at + length).tolist()))),
                      dtype=np.int64, count=len(at))
    return (crc & 0x7FFFFFFF) == stored


class _Unusual(Exception):
    """A batch the bulk path cannot build exactly (bad UTF-8, a repeated property): the reference path."""


def _record_columns(buf: pa.Buffer, u8: np.ndarray, lay: Layout, base: int, wanted: set[str],
                    predicates: Sequence[Predicate], phy: np.ndarray) -> tuple[dict[str, pa.Array], np.ndarray]:
    """The record columns in ``wanted`` for the records of ``lay``, after dropping the rows the
    predicates refuse; returns (columns, indices kept)."""
    cache: dict[str, Any] = {}

    def col(name: str) -> pa.Array:
        if name not in cache:
            cache[name] = _record_column(name, buf, u8, lay, base, phy, cache)
        return cache[name]

    keep = np.arange(len(lay.start))
    if len(keep) == 0:
        types = dict(COMMIT_LOG_COLUMNS)
        return {name: pa.array([], _ARROW[types[name]]) for name in wanted}, keep
    if predicates:
        mask = np.ones(len(keep), dtype=bool)
        for p in predicates:
            if p.column in _RECORD_FIELDS or p.column == "phy_offset":
                mask &= p.mask(col(p.column))
        if not mask.any():
            types = dict(COMMIT_LOG_COLUMNS)
            return {name: pa.array([], _ARROW[types[name]]) for name in wanted}, keep[:0]
        if not mask.all():
            keep = np.flatnonzero(mask)
            lay = lay.take(keep)
            phy = phy[keep]
            cache = {k: v.take(pa.array(keep)) for k, v in cache.items()}
    return {name: col(name) for name in wanted}, keep


_RECORD_FIELDS = {n for n, _ in COMMIT_LOG_COLUMNS[6:28]}


_FROM_HEAD = {"queue_id": np.int32, "flag": np.int32, "queue_offset": np.int64, "physical_offset": np.int64,
              "born_timestamp": np.int64, "body_crc": np.int32, "store_timestamp": np.int64,
              "reconsume_times": np.int32, "prepared_transaction_offset": np.int64}


def _record_column(name: str, buf: pa.Buffer, u8: np.ndarray, lay: Layout, base: int, phy: np.ndarray,
                   cache: dict[str, Any]) -> pa.Array:
    s = lay.start
    ints = {"queue_id": (12, 4), "flag": (16, 4), "queue_offset": (20, 8), "physical_offset": (28, 8),
            "born_timestamp": (40, 8), "body_crc": (8, 4)}
    if lay.head is not None and name in _FROM_HEAD:
        return pa.array(lay.head[name].astype(_FROM_HEAD[name]))
    if name in ints:
        at, width = ints[name]
        return pa.array(_int(u8, s + at, width))
    if name == "phy_offset":
        return pa.array(phy)
    if name == "total_size":
        return pa.array(lay.total.astype(np.int32))
    if name == "magic_code":
        return pa.array(lay.magic.astype(np.int32))
    if name == "version":
        return pa.array(np.where(lay.magic == MESSAGE_MAGIC_CODE_V2, 2, 1).astype(np.int32))
    if name == "sys_flag":
        return pa.array(lay.sys_flag.astype(np.int32))
    if name == "store_timestamp":
        return pa.array(_int(u8, s + 48 + lay.born_len, 8))
    if name == "reconsume_times":
        return pa.array(_int(u8, s + 56 + lay.born_len + lay.store_len, 4))
    if name == "prepared_transaction_offset":
        return pa.array(_int(u8, s + 60 + lay.born_len + lay.store_len, 8))
    if name == "born_host":
        return _hosts(u8, s + 48, lay.born_len, None if lay.head is None else lay.head["born_host"])
    if name == "store_host":
        return _hosts(u8, s + 56 + lay.born_len, lay.store_len, None if lay.head is None else lay.head["store_host"])
    if name == "msg_id":
        return _msg_ids(u8, lay, _int(u8, s + 28, 8))
    if name == "body":
        return _views(buf, u8, lay.body_at, lay.body_len)
    if name == "body_crc_ok":
        return pa.array(_crc_ok(buf, lay.body_at, lay.body_len, _int(u8, s + 8, 4).astype(np.int64)))
    if name == "topic":
        text = _same_text(u8, lay.topic_at, lay.topic_len)
        if text is None:
            text = _text(_slices(buf, u8, lay.topic_at, lay.topic_len))
        if text is None:
            raise _Unusual
        return text
    if name == "properties":
        if not lay.props_len.any():  # no properties at all: empty maps
            n = len(lay.start)
            empty = pa.array([], pa.string())
            cache["tags"] = cache["keys"] = pa.nulls(n, pa.string())
            return pa.MapArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), empty, empty)
        text = _text(_slices(buf, u8, lay.props_at, lay.props_len))
        props = None if text is None else _properties(text)
        if props is None:
            raise _Unusual
        cache["tags"], cache["keys"] = props[1], props[2]
        return props[0]
    if name in ("tags", "keys"):
        if "properties" not in cache:
            cache["properties"] = _record_column("properties", buf, u8, lay, base, phy, cache)
        return cache[name]
    raise KeyError(name)


def _constant(value: Any, n: int, type_: pa.DataType) -> pa.Array:
    if value is None:
        return pa.nulls(n, type_)
    return pa.repeat(pa.scalar(value, type_), n)


def _reference_batch(rows: list[tuple], full: list[tuple[str, str]], columns: Sequence[tuple[str, str]]) -> pa.RecordBatch:
    names = [n for n, _ in full]
    picks = [names.index(n) for n, _ in columns]
    data = [[r[i] for r in rows] for i in picks]
    return pa.RecordBatch.from_arrays([pa.array(d, _ARROW[t]) for d, (_, t) in zip(data, columns, strict=True)],
                                      schema=arrow_schema(columns))


def _common(f: StoreFile) -> dict[str, Any]:
    return {"run": f.run, "store": f.store, "node": f.node, "kind": f.kind, "file": os.path.basename(f.path),
            "topic": f.topic, "queue_id": f.queue_id}


def commit_log_batches(seg: Segment, columns: Sequence[tuple[str, str]], predicates: Sequence[Predicate] = (),
                       on_corrupt: Callable[[str], None] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of one commit-log segment as Arrow batches of ``columns`` (a subset of
    :data:`COMMIT_LOG_COLUMNS`, in any order), only those the predicates admit. ``on_corrupt`` sees every
    corrupt row's text first (FAILFAST raises there)."""
    f = seg.file
    mapped = _mapped(f.path)
    if mapped is None:
        return
    buf, u8 = mapped
    base, size = int(os.path.basename(f.path)), len(u8)
    common = _common(f)
    schema = arrow_schema(columns)
    wanted = {n for n, _ in columns}
    if f.kind == "dledger":
        yield from _dledger_batches(seg, buf, u8, base, common, columns, wanted, predicates, on_corrupt)
        return
    chain = ClassicChain(buf, u8, base)
    key = file_key(f.path)
    if seg.start > 0 and not chain.skip_to(seg.start, key):
        return  # the file ends before this segment (the segment holding its end says how)
    stop = size - 8 if seg.end is None else seg.end - 1
    wide = bool(wanted & _WIDE)
    parts: list[Layout] = []  # records checked a few MiB at a time (the gathers stay in the caches), built
    rows = nbytes = 0         # a batch at a time (Spark takes in few big batches faster than many small ones)

    def flush() -> Iterator[pa.RecordBatch]:
        nonlocal rows, nbytes
        if parts:
            lay = parts[0] if len(parts) == 1 else Layout.concat(parts)
            parts.clear()
            rows = nbytes = 0
            try:
                yield _classic_batch(buf, u8, lay, base, common, columns, schema, wanted, predicates)
            except _Unusual:
                end = int(lay.start[-1] + lay.total[-1])
                yield from _reference(seg, int(lay.start[0]), end, columns, predicates, on_corrupt)

    for start in chain.starts(stop):
        lay = check_records(u8, start, size)
        first_bad = lay.first_bad()
        good = len(start) if first_bad is None else first_bad
        for lo, hi in itertools.pairwise(batch_edges(lay.total[:good], wide)):
            part = lay.take(slice(lo, hi))
            size_of = int(part.total.sum())
            if parts and (rows + len(part.start) > BATCH or wide and nbytes + size_of > BATCH_BYTES):
                yield from flush()
            parts.append(part)
            rows, nbytes = rows + len(part.start), nbytes + size_of
        if first_bad is not None:
            yield from flush()
            yield from _reference(seg, int(start[first_bad]), seg.end, columns, predicates, on_corrupt)
            return
        chain.checked(key)
    yield from flush()
    if chain.bad is not None:
        yield from _reference(seg, chain.bad, seg.end, columns, predicates, on_corrupt)


_WIDE = {"body", "properties", "tags", "keys", "msg_id", "born_host", "store_host"}
"""Columns whose bytes grow with the records: their batches are cut by bytes too."""


def _classic_batch(buf, u8, lay: Layout, base: int, common: dict, columns, schema, wanted, predicates):
    phy = base + lay.start
    record_cols, keep = _record_columns(buf, u8, lay, base, wanted & (_RECORD_FIELDS | {"phy_offset"}),
                                        predicates, phy)
    n = len(keep)
    arrays = []
    for name, type_ in columns:
        if name in record_cols:
            arrays.append(record_cols[name])
        else:
            arrays.append(_constant(common.get(name), n, _ARROW[type_]))
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    return filter_batch(batch, [p for p in predicates if p.column not in _RECORD_FIELDS | {"phy_offset"}])


def _reference(seg: Segment, start: int, end: int | None, columns, predicates,
               on_corrupt: Callable[[str], None] | None) -> Iterator[pa.RecordBatch]:
    """Rows from ``start`` by the record-at-a-time reference decoder."""
    names = [n for n, _ in COMMIT_LOG_COLUMNS]
    corrupt_at, size_at = names.index("corrupt"), names.index("total_size")
    rows, nbytes = [], 0
    for row in store_files.commit_log_rows(seg.file, start=start, end=end):
        if row[corrupt_at] is not None and on_corrupt is not None:
            on_corrupt(row[corrupt_at])
        rows.append(row)
        nbytes += row[size_at] or 0
        if len(rows) == BATCH or nbytes >= BATCH_BYTES:
            yield filter_batch(_reference_batch(rows, COMMIT_LOG_COLUMNS, columns), predicates)
            rows, nbytes = [], 0
    if rows:
        yield filter_batch(_reference_batch(rows, COMMIT_LOG_COLUMNS, columns), predicates)


def _dledger_batches(seg, buf, u8, base, common, columns, wanted, predicates, on_corrupt):
    ent = scan_dledger(buf, base, seg.start, seg.end, len(u8))
    record = np.asarray(ent.record, dtype=bool)
    body_at = np.asarray(ent.body_at, dtype=np.int64)
    body_end = np.asarray(ent.body_end, dtype=np.int64)
    rec_idx = np.flatnonzero(record)
    lay = check_records(u8, body_at[rec_idx], body_end[rec_idx])
    first_bad = lay.first_bad()
    n_good = len(record) if first_bad is None else int(rec_idx[first_bad])
    resume = ent.bad if first_bad is None else int(body_at[n_good]) - BODY_OFFSET
    schema = arrow_schema(columns)
    entry_cols = {"dledger_index": np.asarray(ent.index, np.int64), "dledger_term": np.asarray(ent.term, np.int64),
                  "dledger_pos": np.asarray(ent.pos, np.int64), "phy_offset": base + body_at}
    edges = batch_edges((body_end - body_at)[:n_good])
    for lo, hi in itertools.pairwise(edges):
        try:
            yield _dledger_batch(buf, u8, lay, rec_idx, record, body_at, body_end, entry_cols, lo, hi, base, common,
                                 columns, schema, wanted, predicates)
        except _Unusual:
            end = int(body_at[hi]) - BODY_OFFSET if hi < len(record) else (seg.end if resume is None else resume)
            yield from _reference(seg, int(body_at[lo]) - BODY_OFFSET, end, columns, predicates, on_corrupt)
    if resume is not None:
        yield from _reference(seg, resume, seg.end, columns, predicates, on_corrupt)


def _dledger_batch(buf, u8, lay, rec_idx, record, body_at, body_end, entry_cols, lo, hi, base, common, columns,
                   schema, wanted, predicates):
    n = hi - lo
    in_batch = (rec_idx >= lo) & (rec_idx < hi)
    sel = np.flatnonzero(in_batch)
    part = lay.take(sel)
    rows_of_records = rec_idx[sel] - lo
    record_names = wanted & _RECORD_FIELDS
    recs, _ = _record_columns(buf, u8, part, base, record_names, (), base + part.start)
    mask_rec = np.zeros(n, dtype=bool)
    mask_rec[rows_of_records] = True
    arrays = []
    for name, type_ in columns:
        t = _ARROW[type_]
        if name in entry_cols:
            arrays.append(pa.array(entry_cols[name][lo:hi]))
        elif name == "body":
            arrays.append(_dledger_body(buf, u8, recs.get("body"), rows_of_records, body_at[lo:hi],
                                        body_end[lo:hi], mask_rec))
        elif name in record_names:
            arrays.append(_scatter(recs[name], rows_of_records, n, t))
        else:
            arrays.append(_constant(common.get(name), n, t))
    return filter_batch(pa.RecordBatch.from_arrays(arrays, schema=schema), predicates)


def _dledger_body(buf, u8, record_bodies, rows_of_records, body_at, body_end, mask_rec):
    """The record's body for record entries, the whole entry body for bare payloads."""
    n = len(body_at)
    if record_bodies is None or not mask_rec.any():
        return _views(buf, u8, body_at, body_end - body_at)
    if mask_rec.all():
        return record_bodies
    bare = np.flatnonzero(~mask_rec)
    bare_bodies = _views(buf, u8, body_at[bare], body_end[bare] - body_at[bare])
    order = np.empty(n, dtype=np.int64)
    order[rows_of_records] = np.arange(len(rows_of_records))
    order[bare] = len(rows_of_records) + np.arange(len(bare))
    return pa.concat_arrays([record_bodies, bare_bodies]).take(pa.array(order))


def _scatter(values: pa.Array, rows: np.ndarray, n: int, type_: pa.DataType) -> pa.Array:
    """``values`` at ``rows`` of an ``n``-row column, null elsewhere."""
    if len(rows) == n:
        return values
    order = np.full(n, -1, dtype=np.int64)
    order[rows] = np.arange(len(rows))
    idx = pa.array(order, mask=order < 0)
    return values.take(idx) if len(values) else pa.nulls(n, type_)


# ------------------------------------------------------------------------------ consume queues, index files
def consume_queue_batches(seg: Segment, columns: Sequence[tuple[str, str]], predicates: Sequence[Predicate] = (),
                          on_corrupt: Callable[[str], None] | None = None) -> Iterator[pa.RecordBatch]:
    """The units of one consume-queue segment (``ConsumeQueue``'s 20-byte units) up to the first empty one."""
    f = seg.file
    schema = arrow_schema(columns)
    mapped = _mapped(f.path)
    if mapped is None:
        return
    buf, u8 = mapped
    name = os.path.basename(f.path)
    if len(u8) % _UNIT:
        rows = list(store_files.consume_queue_rows(f))
        if on_corrupt is not None:
            on_corrupt(rows[0][-1])
        yield filter_batch(_reference_batch(rows, CONSUME_QUEUE_COLUMNS, columns), predicates)
        return
    end = len(u8) if seg.end is None else min(seg.end, len(u8))
    units = u8[seg.start:end].reshape(-1, _UNIT)
    phy = np.ascontiguousarray(units[:, 0:8]).view(">i8").ravel().astype(np.int64)
    size = np.ascontiguousarray(units[:, 8:12]).view(">i4").ravel().astype(np.int32)
    stop = np.flatnonzero((phy < 0) | (size <= 0))
    if seg.start > 0 and _empty_before(u8, seg.start):
        return  # the file ended earlier (a later segment of a file the first segment stopped in)
    count = int(stop[0]) if len(stop) else len(phy)
    base = int(name)
    for lo in range(0, count, 4 * BATCH):
        hi = min(count, lo + 4 * BATCH)
        cols = {"queue_offset": lambda lo=lo, hi=hi: pa.array((base + seg.start) // _UNIT + np.arange(lo, hi,
                                                                                                     dtype=np.int64)),
                "phy_offset": lambda lo=lo, hi=hi: pa.array(phy[lo:hi]),
                "size": lambda lo=lo, hi=hi: pa.array(size[lo:hi]),
                "tags_code": lambda lo=lo, hi=hi: pa.array(
                    np.ascontiguousarray(units[lo:hi, 12:20]).view(">i8").ravel().astype(np.int64)),
                "filler": lambda lo=lo, hi=hi: pa.array((size[lo:hi] == INT_MAX) & (phy[lo:hi] == 0))}
        common = _common(f)
        arrays = [cols[n]() if n in cols else _constant(common.get(n), hi - lo, _ARROW[t]) for n, t in columns]
        yield filter_batch(pa.RecordBatch.from_arrays(arrays, schema=schema), predicates)


def _empty_before(u8: np.ndarray, start: int) -> bool:
    """Whether a unit before ``start`` ends the queue (the reference stops at the first empty unit)."""
    units = u8[:start].reshape(-1, _UNIT)
    phy = np.ascontiguousarray(units[:, 0:8]).view(">i8").ravel()
    size = np.ascontiguousarray(units[:, 8:12]).view(">i4").ravel()
    return bool(((phy < 0) | (size <= 0)).any())


def index_batches(seg: Segment, columns: Sequence[tuple[str, str]], predicates: Sequence[Predicate] = (),
                  on_corrupt: Callable[[str], None] | None = None,
                  hash_slot_num: int | None = None) -> Iterator[pa.RecordBatch]:
    """The entries 1..indexCount-1 of one index file (``IndexFile``'s layout), with the header's fields."""
    f = seg.file
    schema = arrow_schema(columns)
    mapped = _mapped(f.path)
    if mapped is None:
        return
    _buf, u8 = mapped
    try:
        slots = store_files.index_slot_count(len(u8), hash_slot_num) if len(u8) >= INDEX_HEADER_SIZE else None
    except RocketlabError:
        slots = None
    header = struct.unpack(">qqqqii", bytes(u8[:INDEX_HEADER_SIZE])) if len(u8) >= INDEX_HEADER_SIZE else None
    entries_at = INDEX_HEADER_SIZE + HASH_SLOT_SIZE * slots if slots is not None else 0
    count = header[5] if header else 0
    if slots is None or count > 1 and entries_at + count * INDEX_SIZE > len(u8):
        rows = list(store_files.index_rows(f, hash_slot_num=hash_slot_num))
        corrupt = [r[-1] for r in rows if r[-1] is not None]
        if corrupt and on_corrupt is not None:
            on_corrupt(corrupt[0])
        yield filter_batch(_reference_batch(rows, INDEX_COLUMNS, columns), predicates)
        return
    n = max(0, count - 1)
    raw = u8[entries_at + INDEX_SIZE:entries_at + count * INDEX_SIZE].reshape(n, INDEX_SIZE)
    key_hash = np.ascontiguousarray(raw[:, 0:4]).view(">i4").ravel().astype(np.int32)
    values = {"index_no": lambda: pa.array(np.arange(1, count, dtype=np.int32)),
              "key_hash": lambda: pa.array(key_hash),
              "slot": lambda: pa.array(np.fmod(key_hash.astype(np.int64), slots).astype(np.int32)),
              "phy_offset": lambda: pa.array(np.ascontiguousarray(raw[:, 4:12]).view(">i8").ravel().astype(np.int64)),
              "time_diff": lambda: pa.array(np.ascontiguousarray(raw[:, 12:16]).view(">i4").ravel().astype(np.int32)),
              "prev_index": lambda: pa.array(np.ascontiguousarray(raw[:, 16:20]).view(">i4").ravel().astype(np.int32))}
    common = {**_common(f), **dict(zip(("begin_timestamp", "end_timestamp", "begin_phy_offset", "end_phy_offset",
                                        "hash_slot_count", "index_count"), header, strict=True))}
    arrays = [values[name]() if name in values else _constant(common.get(name), n, _ARROW[t]) for name, t in columns]
    yield filter_batch(pa.RecordBatch.from_arrays(arrays, schema=schema), predicates)


# ------------------------------------------------------------------------------ planning
def record_starts(f: StoreFile, stop_after: int | None = None) -> list[int]:
    """The offsets of the records (DLedger: entries) of one commit-log file the reference decoder reads
    in full, up to ``stop_after`` bytes: the places a file may be split without cutting a record."""
    mapped = _mapped(f.path)
    if mapped is None:
        return []
    buf, u8 = mapped
    base, size = int(os.path.basename(f.path)), len(u8)
    end = None if stop_after is None else min(stop_after, size)
    if f.kind == "dledger":
        ent = scan_dledger(buf, base, 0, end, size)
        body_at = np.asarray(ent.body_at, dtype=np.int64)
        rec = np.flatnonzero(np.asarray(ent.record, dtype=bool))
        lay = check_records(u8, body_at[rec], np.asarray(ent.body_end, dtype=np.int64)[rec])
        bad = lay.first_bad()
        n = len(body_at) if bad is None else int(rec[bad])
        return (body_at[:n] - BODY_OFFSET).tolist()
    starts, _bad = scan_classic(buf, 0, end, size)
    start = np.asarray(starts, dtype=np.int64)
    bad = check_records(u8, start, np.full(len(start), size, dtype=np.int64)).first_bad()
    return starts if bad is None else starts[:bad]


_PAGE = 2**16


def written_bytes(path: str) -> int:
    """About how many bytes of a mapped file hold data: the end of its last non-zero 64 KiB page, found by
    bisection (RocketMQ preallocates its mapped files and writes them from the front, the rest stays
    zero). For balancing partitions only: a zero page inside the data can make it short (0 when the
    first page is zero)."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    pages = -(-size // _PAGE)
    fd = os.open(path, os.O_RDONLY)
    try:
        def written(i: int) -> bool:
            return os.pread(fd, _PAGE, i * _PAGE).strip(b"\0") != b""

        if written(pages - 1):
            return size
        lo, hi = -1, pages - 1  # page lo has data (or lo == -1), page hi has none
        if written(0):
            lo = 0
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if written(mid) else (lo, mid)
        return min(size, (lo + 1) * _PAGE)
    finally:
        os.close(fd)


def plan_partitions(files: Sequence[StoreFile], parts: int, split: Callable[[StoreFile, int], int | None] | None,
                    sizes: Sequence[int] | None = None) -> list[list[Segment]]:
    """About ``parts`` partitions of equal bytes over ``files`` in order: small files grouped, a big file
    cut at ``split(file, offset)`` (where a segment may begin at or after ``offset``; None: nowhere; no
    ``split``: files are never cut). ``sizes``: the bytes of each file to balance (default: the file
    sizes; :func:`written_bytes` leaves out a preallocated tail). A file's last segment runs to its end,
    so every byte of every file is in exactly one segment."""
    sizes = [os.path.getsize(f.path) for f in files] if sizes is None else list(sizes)
    total = sum(sizes)
    parts = max(1, parts)
    target = max(total / parts, 1.0)
    out: list[list[Segment]] = [[] for _ in range(parts)]
    at = 0
    for f, size in zip(files, sizes, strict=True):
        if split is None or size == 0:
            out[min(parts - 1, int((at + size / 2) // target))].append(Segment(f))
            at += size
            continue
        cuts = {0}
        for k in range(int(at // target) + 1, parts):
            local = math.ceil(k * target) - at
            if local >= size:
                break
            if local > 0:
                cut = split(f, local)
                if cut is not None and 0 < cut < size:
                    cuts.add(cut)
        ordered = sorted(cuts)
        for i, c in enumerate(ordered):
            end = ordered[i + 1] if i + 1 < len(ordered) else None
            out[min(parts - 1, int((at + c) // target))].append(Segment(f, c, end))
        at += size
    return [p for p in out if p]


_STARTS: dict[tuple, list[int]] = {}


def commit_log_split(f: StoreFile, offset: int) -> int | None:
    """Where a segment of a commit-log file may begin at or after ``offset``: there for a classic commit
    log (its segments find their records themselves, :class:`ClassicChain`); the first entry boundary
    for a DLedger file (found by walking the file), None if none."""
    if f.kind != "dledger":
        return offset
    st = os.stat(f.path)
    key = (f.path, f.kind, st.st_size, st.st_mtime_ns)
    if key not in _STARTS:
        if len(_STARTS) > 16:
            _STARTS.clear()
        _STARTS[key] = record_starts(f)
    starts = _STARTS[key]
    i = bisect.bisect_left(starts, offset)
    return starts[i] if i < len(starts) else None


def consume_queue_split(_f: StoreFile, offset: int) -> int:
    """Consume-queue units are 20 bytes: the first unit boundary at or after ``offset``."""
    return -(-offset // _UNIT) * _UNIT
