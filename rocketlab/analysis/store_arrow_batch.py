"""What every Arrow reader of the store files shares: the schema, the pushed filters, segments, batch sizes.

The Arrow types of the Spark columns, the filters Spark pushes (:class:`Predicate`), a :class:`Segment`
(a byte range of one store file), where batches are cut (:func:`batch_edges`), and the way back to the
record-at-a-time reference decoders of :mod:`rocketlab.analysis.store_files` (:func:`reference_batches`).
rocketlab's own addition.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketlab.analysis import store_files
from rocketlab.analysis.store_files import COMMIT_LOG_COLUMNS, StoreFile

BATCH = 65536
"""Records per Arrow batch (at most): Spark took in a Python data source's prebuilt Arrow batches of the
small columns at 4.1M rows/s in batches of 8,192 rows and 6.5M in batches of 65,536 (local[2], measured
here, 4.2M rows)."""
BATCH_BYTES = 64 * 2**20
"""Record bytes per Arrow batch (at most, unless one record is bigger) when the batch holds columns that
grow with the records (:data:`~rocketlab.analysis.store_arrow._WIDE`; the reference decoder's batches always): a ``binary`` column's
offsets are 32-bit, and RocketMQ's records reach 4 MiB."""
assert BATCH * 32767 < 2**31  # topics (at most 32,767 bytes) never need the byte limit

ARROW_TYPES = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(), "boolean": pa.bool_(),
               "binary": pa.binary(), "map<string,string>": pa.map_(pa.string(), pa.string())}


def arrow_schema(columns: Sequence[tuple[str, str]]) -> pa.Schema:
    """The Arrow schema of Spark columns ``(name, sql type)`` (``binary``, never ``large_binary``)."""
    return pa.schema([pa.field(name, ARROW_TYPES[type_]) for name, type_ in columns])


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


def mapped_file(path: str) -> tuple[pa.Buffer, np.ndarray] | None:
    if os.path.getsize(path) == 0:
        return None
    buf = pa.memory_map(path, "r").read_buffer()
    return buf, np.frombuffer(buf, dtype=np.uint8)


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


def constant_column(value: Any, n: int, type_: pa.DataType) -> pa.Array:
    if value is None:
        return pa.nulls(n, type_)
    return pa.repeat(pa.scalar(value, type_), n)


def reference_batch(rows: list[tuple], full: list[tuple[str, str]], columns: Sequence[tuple[str, str]]) -> pa.RecordBatch:
    names = [n for n, _ in full]
    picks = [names.index(n) for n, _ in columns]
    data = [[r[i] for r in rows] for i in picks]
    return pa.RecordBatch.from_arrays([pa.array(d, ARROW_TYPES[t]) for d, (_, t) in zip(data, columns, strict=True)],
                                      schema=arrow_schema(columns))


def common_values(f: StoreFile) -> dict[str, Any]:
    return {"run": f.run, "store": f.store, "node": f.node, "kind": f.kind, "file": os.path.basename(f.path),
            "topic": f.topic, "queue_id": f.queue_id}


def reference_batches(seg: Segment, start: int, end: int | None, columns, predicates,
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
            yield filter_batch(reference_batch(rows, COMMIT_LOG_COLUMNS, columns), predicates)
            rows, nbytes = [], 0
    if rows:
        yield filter_batch(reference_batch(rows, COMMIT_LOG_COLUMNS, columns), predicates)
