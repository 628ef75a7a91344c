"""DLedgerEntryCoder: entries and index slots to bytes and back (layout in :mod:`rocketlab.dledger.entry`).

Index slot, 32 bytes at ``index * INDEX_UNIT_SIZE`` in the index files::

    magic(4) | pos(8) | size(4) | index(8) | term(8)

Java file: ``entry/DLedgerEntryCoder.java`` (DLedger 0.3.1.2). Decoding raises
:class:`~rocketlab.errors.CodecError` (with the offset) on bytes too short to hold what they claim.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rocketlab.dledger.entry import BODY_OFFSET, INDEX_UNIT_SIZE, POS_OFFSET, DLedgerEntry
from rocketlab.errors import CodecError

_HEADER = struct.Struct(">iiqqqiiii")
_INDEX = struct.Struct(">iqiqq")
_INDEX_TERM_MAGIC = struct.Struct(">i")
_LONG = struct.Struct(">q")

assert _HEADER.size == BODY_OFFSET and _INDEX.size == INDEX_UNIT_SIZE


@dataclass(frozen=True, slots=True)
class IndexSlot:
    """One decoded 32-byte index slot (DLedgerIndexEntry in DLedger master; a raw buffer in 0.3.1.2)."""

    magic: int
    pos: int
    size: int
    index: int
    term: int


def encode(entry: DLedgerEntry) -> bytearray:
    """The entry's bytes; ``size`` is recomputed as 48 + body length (Java's encode sets it too)."""
    body = entry.body or b""
    size = BODY_OFFSET + len(body)
    buf = bytearray(size)
    _HEADER.pack_into(buf, 0, entry.magic, size, entry.index, entry.term, entry.pos, entry.channel,
                      entry.chain_crc, entry.body_crc, len(body))
    buf[BODY_OFFSET:] = body
    return buf


def decode(data: bytes | bytearray | memoryview, offset: int = 0, read_body: bool = True) -> DLedgerEntry:
    """Decode the entry at ``offset``; the body is read only when ``bodySize < size`` (else ``None``)."""
    if len(data) - offset < BODY_OFFSET:
        raise CodecError(f"entry header needs {BODY_OFFSET} bytes, {max(len(data) - offset, 0)} left", offset)
    magic, size, index, term, pos, channel, chain_crc, body_crc, body_size = _HEADER.unpack_from(data, offset)
    body: bytes | None = None
    if read_body and 0 <= body_size < size:
        end = offset + BODY_OFFSET + body_size
        if end > len(data):
            raise CodecError(f"entry body of {body_size} bytes runs past the end of the buffer", offset)
        body = bytes(data[offset + BODY_OFFSET:end])
    elif body_size < 0:
        raise CodecError(f"negative bodySize {body_size}", offset + 44)
    return DLedgerEntry(magic=magic, size=size, index=index, term=term, pos=pos, channel=channel,
                        chain_crc=chain_crc, body_crc=body_crc, body=body)


def decode_header(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int, int, int, int, int]:
    """``(magic, size, index, term, pos, bodySize)`` of the header at ``offset``."""
    if len(data) - offset < BODY_OFFSET:
        raise CodecError(f"entry header needs {BODY_OFFSET} bytes, {max(len(data) - offset, 0)} left", offset)
    magic, size, index, term, pos, _c, _cc, _bc, body_size = _HEADER.unpack_from(data, offset)
    return magic, size, index, term, pos, body_size


def set_index_term(buf: bytearray, index: int, term: int, magic: int) -> None:
    """Models DLedgerEntryCoder.setIndexTerm: patch magic, index and term into encoded bytes."""
    _INDEX_TERM_MAGIC.pack_into(buf, 0, magic)
    _LONG.pack_into(buf, 8, index)
    _LONG.pack_into(buf, 16, term)


def set_pos(buf: bytearray, pos: int) -> None:
    """Models DLedgerEntryCoder.setPos: patch ``pos`` at POS_OFFSET."""
    _LONG.pack_into(buf, POS_OFFSET, pos)


def encode_index(pos: int, size: int, magic: int, index: int, term: int) -> bytes:
    """Models DLedgerEntryCoder.encodeIndex: one 32-byte slot."""
    return _INDEX.pack(magic, pos, size, index, term)


def decode_index(data: bytes | bytearray | memoryview, offset: int = 0) -> IndexSlot:
    if len(data) - offset < INDEX_UNIT_SIZE:
        raise CodecError(f"index slot needs {INDEX_UNIT_SIZE} bytes, {max(len(data) - offset, 0)} left", offset)
    return IndexSlot(*_INDEX.unpack_from(data, offset))
