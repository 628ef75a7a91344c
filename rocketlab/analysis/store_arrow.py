"""RocketMQ's store files as Arrow record batches, decoded in bulk: what the Spark data sources yield.

The rows are exactly :mod:`rocketlab.analysis.store_files`' (the record-at-a-time reference decoders),
built column by column instead:

* classic commit logs (``CommitLog`` records, ``MessageDecoder``'s layout): :class:`~rocketlab.analysis.store_arrow_classic.ClassicChain` walks
  the records as recovery does, in bulk (each record carries its own offset, so numpy finds the records and
  the walk follows their sizes a run at a time); the checks of ``MessageDecoder.decode`` run on numpy
  arrays (:func:`~rocketlab.analysis.store_arrow_records.check_records`); the fixed-width fields are gathered through big-endian numpy views with a
  one-byte stride; topic, properties and body are Arrow binary views over the mapped file, cast to
  ``binary``/``string``; the properties map is split with Arrow's string kernels;
* DLedger data files: a ``struct`` loop over the entry headers (:func:`~rocketlab.analysis.store_arrow_dledger.scan_dledger`), then the same;
* consume-queue units (``ConsumeQueue``'s 20-byte ``CQ_STORE_UNIT``) and index entries (``IndexFile``'s
  20-byte entries) as numpy views of the whole file.

Only the columns asked for are built and rows failing the pushed filters are
dropped before the variable-width columns are built. Anything unusual (a record that does not decode,
text that is not UTF-8, a repeated property name) goes to the reference decoder from that record on, so
the rows stay identical. A :class:`~rocketlab.analysis.store_arrow_batch.Segment` is a byte range of one file: the records that begin in it (a
segment of a classic commit log begins anywhere; it walks, without building them, the records before it,
so a record that does not decode ends the file for every later segment as it does for the reference).
:func:`plan_partitions` cuts a store into about one range of written bytes per core, splitting big files.

Modules: :mod:`~rocketlab.analysis.store_arrow_batch` (schema, filters, segments, batch cutting, the
reference fallback), :mod:`~rocketlab.analysis.store_arrow_classic` (the classic walk),
:mod:`~rocketlab.analysis.store_arrow_records` (the checks in bulk),
:mod:`~rocketlab.analysis.store_arrow_columns` (the record columns),
:mod:`~rocketlab.analysis.store_arrow_dledger` (DLedger data files); this one holds the readers the
data sources call, one per source, and the planning of partitions. rocketlab's own addition.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import struct
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from rocketlab.analysis import store_files
from rocketlab.analysis.store_arrow_batch import (
    ARROW_TYPES,
    BATCH,
    BATCH_BYTES,
    Predicate,
    Segment,
    arrow_schema,
    batch_edges,
    common_values,
    constant_column,
    filter_batch,
    mapped_file,
    reference_batch,
    reference_batches,
)
from rocketlab.analysis.store_arrow_classic import ClassicChain, file_key, scan_classic
from rocketlab.analysis.store_arrow_columns import RECORD_FIELDS, Unusual, record_columns
from rocketlab.analysis.store_arrow_dledger import dledger_batches, scan_dledger
from rocketlab.analysis.store_arrow_records import Layout, check_records
from rocketlab.analysis.store_files import CONSUME_QUEUE_COLUMNS, INDEX_COLUMNS, StoreFile
from rocketlab.dledger.entry import BODY_OFFSET
from rocketlab.errors import RocketlabError
from rocketlab.store.consume_queue import INT_MAX
from rocketlab.store.index_file import HASH_SLOT_SIZE, INDEX_HEADER_SIZE, INDEX_SIZE

_UNIT = 20


def commit_log_batches(seg: Segment, columns: Sequence[tuple[str, str]], predicates: Sequence[Predicate] = (),
                       on_corrupt: Callable[[str], None] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of one commit-log segment as Arrow batches of ``columns`` (a subset of
    :data:`COMMIT_LOG_COLUMNS`, in any order), only those the predicates admit. ``on_corrupt`` sees every
    corrupt row's text first (FAILFAST raises there)."""
    f = seg.file
    mapped = mapped_file(f.path)
    if mapped is None:
        return
    buf, u8 = mapped
    base, size = int(os.path.basename(f.path)), len(u8)
    common = common_values(f)
    schema = arrow_schema(columns)
    wanted = {n for n, _ in columns}
    if f.kind == "dledger":
        yield from dledger_batches(seg, buf, u8, base, common, columns, wanted, predicates, on_corrupt)
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
            except Unusual:
                end = int(lay.start[-1] + lay.total[-1])
                yield from reference_batches(seg, int(lay.start[0]), end, columns, predicates, on_corrupt)

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
            yield from reference_batches(seg, int(start[first_bad]), seg.end, columns, predicates, on_corrupt)
            return
        chain.checked(key)
    yield from flush()
    if chain.bad is not None:
        yield from reference_batches(seg, chain.bad, seg.end, columns, predicates, on_corrupt)


_WIDE = {"body", "properties", "tags", "keys", "msg_id", "born_host", "store_host"}
"""Columns whose bytes grow with the records: their batches are cut by bytes too."""


def _classic_batch(buf, u8, lay: Layout, base: int, common: dict, columns, schema, wanted, predicates):
    phy = base + lay.start
    record_cols, keep = record_columns(buf, u8, lay, base, wanted & (RECORD_FIELDS | {"phy_offset"}),
                                       predicates, phy)
    n = len(keep)
    arrays = []
    for name, type_ in columns:
        if name in record_cols:
            arrays.append(record_cols[name])
        else:
            arrays.append(constant_column(common.get(name), n, ARROW_TYPES[type_]))
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    return filter_batch(batch, [p for p in predicates if p.column not in RECORD_FIELDS | {"phy_offset"}])


# ------------------------------------------------------------------------------ consume queues, index files
def consume_queue_batches(seg: Segment, columns: Sequence[tuple[str, str]], predicates: Sequence[Predicate] = (),
                          on_corrupt: Callable[[str], None] | None = None) -> Iterator[pa.RecordBatch]:
    """The units of one consume-queue segment (``ConsumeQueue``'s 20-byte units) up to the first empty one."""
    f = seg.file
    schema = arrow_schema(columns)
    mapped = mapped_file(f.path)
    if mapped is None:
        return
    buf, u8 = mapped
    name = os.path.basename(f.path)
    if len(u8) % _UNIT:
        rows = list(store_files.consume_queue_rows(f))
        if on_corrupt is not None:
            on_corrupt(rows[0][-1])
        yield filter_batch(reference_batch(rows, CONSUME_QUEUE_COLUMNS, columns), predicates)
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
        common = common_values(f)
        arrays = [cols[n]() if n in cols else constant_column(common.get(n), hi - lo, ARROW_TYPES[t]) for n, t in columns]
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
    mapped = mapped_file(f.path)
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
        yield filter_batch(reference_batch(rows, INDEX_COLUMNS, columns), predicates)
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
    common = {**common_values(f), **dict(zip(("begin_timestamp", "end_timestamp", "begin_phy_offset",
                                              "end_phy_offset", "hash_slot_count", "index_count"), header,
                                             strict=True))}
    arrays = [values[name]() if name in values else constant_column(common.get(name), n, ARROW_TYPES[t]) for name, t in columns]
    yield filter_batch(pa.RecordBatch.from_arrays(arrays, schema=schema), predicates)


def interval(predicates: Sequence[Predicate], column: str) -> tuple[float, float]:
    """The values of ``column`` every predicate on it admits, as a closed interval."""
    lo, hi = -math.inf, math.inf
    for p in predicates:
        if p.column == column:
            a, b = p.bounds()
            lo, hi = max(lo, a), min(hi, b)
    return lo, hi


# ------------------------------------------------------------------------------ planning
def record_starts(f: StoreFile, stop_after: int | None = None) -> list[int]:
    """The offsets of the records (DLedger: entries) of one commit-log file the reference decoder reads
    in full, up to ``stop_after`` bytes: the places a file may be split without cutting a record."""
    mapped = mapped_file(f.path)
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
