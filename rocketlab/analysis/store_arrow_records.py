"""``MessageDecoder.decode``'s checks on many CommitLog records at once, with numpy: where each field lies.

:func:`check_records` finds every record's field offsets and whether it decodes (:class:`Layout`), from
one gather of the fixed headers (:data:`HEADER_V4`) when the hosts are IPv4. rocketlab's own addition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rocketlab.analysis.store_files import RECORD_MAGICS
from rocketlab.store.message import MESSAGE_MAGIC_CODE_V2
from rocketlab.store.record_layout import cal_msg_length

MIN_RECORD = cal_msg_length(0, 0, 0, 0)
_BORN_V6, _STORE_V6 = 0x10, 0x20


def gather(u8: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``width`` bytes at each offset (clipped to the buffer) as an (n, width) array."""
    idx = np.minimum(at[:, None] + np.arange(width), len(u8) - 1)
    return u8[idx]


_BE = {2: np.dtype(">i2"), 4: np.dtype(">i4"), 8: np.dtype(">i8")}
_NATIVE = {2: np.int64, 4: np.int32, 8: np.int64}


def _overlapping(u8: np.ndarray, width: int) -> np.ndarray:
    """Every offset of ``u8`` as a big-endian integer of ``width`` bytes: a view with a stride of one byte
    (element ``k`` is the integer at byte ``k``), so that one fancy index gathers a field of many records."""
    return np.ndarray((max(0, len(u8) - width + 1),), _BE[width], buffer=u8, strides=(1,))


def int_at(u8: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
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
        total = int_at(u8, start, 4)
        magic = int_at(u8, start + 4, 4)
        sys_flag = int_at(u8, start + 36, 4)
        born_len = np.where(sys_flag & _BORN_V6, 20, 8)
        store_len = np.where(sys_flag & _STORE_V6, 20, 8)
    end = start + total
    ok = (total >= MIN_RECORD) & (total <= limit - start) & ((magic == RECORD_MAGICS[0]) | (magic == RECORD_MAGICS[1]))
    tls = np.where(magic == MESSAGE_MAGIC_CODE_V2, 2, 1)
    prefix = 72 + born_len + store_len
    ok &= prefix + tls + 2 <= total
    body_len = head["body_len"].astype(np.int64) if head is not None else int_at(u8, start + prefix - 4, 4)
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
    return int_at(u8, at, 2)
