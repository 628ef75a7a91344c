"""The Spark columns of CommitLog records, built column by column from the mapped file.

Fixed-width fields through big-endian numpy views, topic, properties and body as Arrow views over the
file, the properties map split with Arrow's string kernels (``MessageDecoder.string2messageProperties``),
hosts and message ids (``MessageDecoder.createMessageId``). Anything the bulk path cannot build exactly
raises :class:`Unusual`, and the caller falls back to the reference decoder. rocketlab's own addition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketlab.analysis.store_arrow_batch import ARROW_TYPES, Predicate, constant_column
from rocketlab.analysis.store_arrow_records import Layout, gather, int_at
from rocketlab.analysis.store_files import COMMIT_LOG_COLUMNS
from rocketlab.store.message import MESSAGE_MAGIC_CODE_V2, host_string, unpack_host


# ------------------------------------------------------------------------------ commit logs: columns
def binary_views(buf: pa.Buffer, u8: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array:
    """A ``binary`` array of the slices ``[at, at + length)`` of ``buf``: Arrow binary views over the file
    (no copy per slice), then one cast that copies them into a ``binary`` array."""
    n = len(at)
    views = np.zeros((n, 4), dtype="<i4")
    views[:, 0] = length
    short = length <= 12
    raw = views.view(np.uint8)
    if short.any():
        inline = gather(u8, at[short], 12)
        inline[np.arange(12)[None, :] >= length[short][:, None]] = 0
        raw[short, 4:16] = inline
    long_ = ~short
    if long_.any():
        raw[long_, 4:8] = gather(u8, at[long_], 4)
        views[long_, 3] = at[long_]
    array = pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), buf])
    return array.cast(pa.binary())


def _slices(buf: pa.Buffer, u8: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array:
    """A ``binary`` array of the slices ``[at, at + length)``: short ones (topics, properties) gathered
    into one buffer with numpy, long ones (bodies) through :func:`binary_views`."""
    n = len(at)
    total = int(length.sum()) if n else 0
    if n == 0 or total > 64 * n:
        return binary_views(buf, u8, at, length)
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
    if width and not (gather(u8, at, width) == first).all():
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
    if (length == 8).all():
        raw = gather(u8, at, 8) if head is None else head
        keys = np.ascontiguousarray(raw).view("<u8").ravel()
        if len(keys) and (keys == keys[0]).all():  # one broker, one client: the usual case
            return constant_column(host_string(unpack_host(keys[:1].tobytes())), len(keys), pa.string())
        uniq, inverse = np.unique(keys, return_inverse=True)
        texts = [host_string(unpack_host(k.tobytes())) for k in uniq]
        return pa.array(texts, pa.string()).take(pa.array(inverse.ravel()))
    raw = gather(u8, at, 20)
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
        host = (gather(u8, store_at, w) if lay.head is None
                else np.ascontiguousarray(lay.head["store_host"]).view(np.uint8).reshape(n, 8))
        raw = np.concatenate([host, off], axis=1)
        return _fixed_text(_HEX[raw].reshape(n, 2 * (w + 8)))
    for i in range(n):  # mixed address families: rare, one at a time
        w = int(lay.store_len[i])
        out.append(bytes(gather(u8, store_at[i:i + 1], w)[0]) + bytes(off[i]))
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


class Unusual(Exception):
    """A batch the bulk path cannot build exactly (bad UTF-8, a repeated property): the reference path."""


def record_columns(buf: pa.Buffer, u8: np.ndarray, lay: Layout, base: int, wanted: set[str],
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
        return {name: pa.array([], ARROW_TYPES[types[name]]) for name in wanted}, keep
    if predicates:
        mask = np.ones(len(keep), dtype=bool)
        for p in predicates:
            if p.column in RECORD_FIELDS or p.column == "phy_offset":
                mask &= p.mask(col(p.column))
        if not mask.any():
            types = dict(COMMIT_LOG_COLUMNS)
            return {name: pa.array([], ARROW_TYPES[types[name]]) for name in wanted}, keep[:0]
        if not mask.all():
            keep = np.flatnonzero(mask)
            lay = lay.take(keep)
            phy = phy[keep]
            cache = {k: v.take(pa.array(keep)) for k, v in cache.items()}
    return {name: col(name) for name in wanted}, keep


RECORD_FIELDS = {n for n, _ in COMMIT_LOG_COLUMNS[6:28]}


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
        return pa.array(int_at(u8, s + at, width))
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
        return pa.array(int_at(u8, s + 48 + lay.born_len, 8))
    if name == "reconsume_times":
        return pa.array(int_at(u8, s + 56 + lay.born_len + lay.store_len, 4))
    if name == "prepared_transaction_offset":
        return pa.array(int_at(u8, s + 60 + lay.born_len + lay.store_len, 8))
    if name == "born_host":
        return _hosts(u8, s + 48, lay.born_len, None if lay.head is None else lay.head["born_host"])
    if name == "store_host":
        return _hosts(u8, s + 56 + lay.born_len, lay.store_len, None if lay.head is None else lay.head["store_host"])
    if name == "msg_id":
        return _msg_ids(u8, lay, int_at(u8, s + 28, 8))
    if name == "body":
        return binary_views(buf, u8, lay.body_at, lay.body_len)
    if name == "body_crc_ok":
        return pa.array(_crc_ok(buf, lay.body_at, lay.body_len, int_at(u8, s + 8, 4).astype(np.int64)))
    if name == "topic":
        text = _same_text(u8, lay.topic_at, lay.topic_len)
        if text is None:
            text = _text(_slices(buf, u8, lay.topic_at, lay.topic_len))
        if text is None:
            raise Unusual
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
            raise Unusual
        cache["tags"], cache["keys"] = props[1], props[2]
        return props[0]
    if name in ("tags", "keys"):
        if "properties" not in cache:
            cache["properties"] = _record_column("properties", buf, u8, lay, base, phy, cache)
        return cache[name]
    raise KeyError(name)
