"""The DLedger data files of a DLedger-backed commit log as Arrow batches: entries, then their records.

:func:`scan_dledger` walks the entries (``DLedgerMmapFileStore``'s layout) with a ``struct`` loop; the
records in their bodies are checked and built as a classic commit log's are; a bare payload's row keeps
its whole body. rocketlab's own addition.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rocketlab.analysis.store_arrow_batch import (
    ARROW_TYPES,
    arrow_schema,
    batch_edges,
    constant_column,
    filter_batch,
    reference_batches,
)
from rocketlab.analysis.store_arrow_columns import RECORD_FIELDS, Unusual, binary_views, record_columns
from rocketlab.analysis.store_arrow_records import check_records
from rocketlab.analysis.store_files import RECORD_MAGICS
from rocketlab.dledger.entry import BLANK_MAGIC_CODE as DLEDGER_BLANK
from rocketlab.dledger.entry import BODY_OFFSET, VALID_MAGICS
from rocketlab.store.record_layout import INT32, TOTAL_SIZE_AND_MAGIC

_ENTRY_HEADER = struct.Struct(">iiqqqiiii")


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
    unpack, head = _ENTRY_HEADER.unpack_from, TOTAL_SIZE_AND_MAGIC.unpack_from
    while pos + 4 <= size and pos < stop:
        if INT32.unpack_from(buf, pos)[0] == DLEDGER_BLANK:
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


def dledger_batches(seg, buf, u8, base, common, columns, wanted, predicates, on_corrupt):
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
        except Unusual:
            end = int(body_at[hi]) - BODY_OFFSET if hi < len(record) else (seg.end if resume is None else resume)
            yield from reference_batches(seg, int(body_at[lo]) - BODY_OFFSET, end, columns, predicates, on_corrupt)
    if resume is not None:
        yield from reference_batches(seg, resume, seg.end, columns, predicates, on_corrupt)


def _dledger_batch(buf, u8, lay, rec_idx, record, body_at, body_end, entry_cols, lo, hi, base, common, columns,
                   schema, wanted, predicates):
    n = hi - lo
    in_batch = (rec_idx >= lo) & (rec_idx < hi)
    sel = np.flatnonzero(in_batch)
    part = lay.take(sel)
    rows_of_records = rec_idx[sel] - lo
    record_names = wanted & RECORD_FIELDS
    recs, _ = record_columns(buf, u8, part, base, record_names, (), base + part.start)
    mask_rec = np.zeros(n, dtype=bool)
    mask_rec[rows_of_records] = True
    arrays = []
    for name, type_ in columns:
        t = ARROW_TYPES[type_]
        if name in entry_cols:
            arrays.append(pa.array(entry_cols[name][lo:hi]))
        elif name == "body":
            arrays.append(_dledger_body(buf, u8, recs.get("body"), rows_of_records, body_at[lo:hi],
                                        body_end[lo:hi], mask_rec))
        elif name in record_names:
            arrays.append(_scatter(recs[name], rows_of_records, n, t))
        else:
            arrays.append(constant_column(common.get(name), n, t))
    return filter_batch(pa.RecordBatch.from_arrays(arrays, schema=schema), predicates)


def _dledger_body(buf, u8, record_bodies, rows_of_records, body_at, body_end, mask_rec):
    """The record's body for record entries, the whole entry body for bare payloads."""
    n = len(body_at)
    if record_bodies is None or not mask_rec.any():
        return binary_views(buf, u8, body_at, body_end - body_at)
    if mask_rec.all():
        return record_bodies
    bare = np.flatnonzero(~mask_rec)
    bare_bodies = binary_views(buf, u8, body_at[bare], body_end[bare] - body_at[bare])
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
