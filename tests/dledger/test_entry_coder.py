"""DLedgerEntry and DLedgerEntryCoder: the 48-byte header, 32-byte index slots (DLedgerEntryCoderTest)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.dledger import entry_coder
from rocketlab.dledger.entry import BODY_OFFSET, HEADER_SIZE, INDEX_UNIT_SIZE, POS_OFFSET, DLedgerEntry
from rocketlab.errors import CodecError


def test_header_layout_is_byte_exact():
    e = DLedgerEntry(magic=1, index=7, term=3, pos=148, channel=0, body=b"hello")
    raw = bytes(entry_coder.encode(e))
    assert len(raw) == 48 + 5 == e.compute_size_in_bytes()
    assert struct.unpack(">iiqqqiiii", raw[:48]) == (1, 53, 7, 3, 148, 0, 0, 0, 5)
    assert raw[BODY_OFFSET:] == b"hello"
    assert (HEADER_SIZE, BODY_OFFSET, POS_OFFSET, INDEX_UNIT_SIZE) == (44, 48, 24, 32)


def test_index_slot_layout():
    raw = entry_coder.encode_index(pos=296, size=148, magic=1, index=2, term=5)
    assert len(raw) == 32 and struct.unpack(">iqiqq", raw) == (1, 296, 148, 2, 5)
    slot = entry_coder.decode_index(raw)
    assert (slot.magic, slot.pos, slot.size, slot.index, slot.term) == (1, 296, 148, 2, 5)


i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)


@settings(max_examples=200, deadline=None)
@given(magic=i32, index=i64, term=i64, pos=i64, channel=i32, crc1=i32, crc2=i32, body=st.binary(max_size=300))
def test_round_trip_of_every_field(magic, index, term, pos, channel, crc1, crc2, body):
    e = DLedgerEntry(magic=magic, size=48 + len(body), index=index, term=term, pos=pos, channel=channel,
                     chain_crc=crc1, body_crc=crc2, body=body)
    d = entry_coder.decode(entry_coder.encode(e))
    assert d == e and (d.chain_crc, d.body_crc) == (crc1, crc2)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=120))
def test_decode_garbage_raises_codec_error_or_decodes(data):
    try:
        entry_coder.decode(data)
    except CodecError:
        pass


def test_equals_ignores_crcs_but_includes_channel_and_pos():
    a = DLedgerEntry(index=1, term=1, pos=10, size=50, body=b"ab")
    assert a == a.with_(chain_crc=9, body_crc=8)
    assert a != a.with_(channel=1)
    assert a != a.with_(pos=11)
    assert a != a.with_(body=b"ac")


def test_corrupt_body_size_gives_null_body():
    raw = entry_coder.encode(DLedgerEntry(index=1, body=b"abc"))
    struct.pack_into(">i", raw, 44, 1000)
    assert entry_coder.decode(raw).body is None
    struct.pack_into(">i", raw, 44, -1)
    with pytest.raises(CodecError, match="negative bodySize"):
        entry_coder.decode(raw)


def test_truncated_bytes_raise_with_offset():
    raw = bytes(entry_coder.encode(DLedgerEntry(body=b"abcdef")))
    with pytest.raises(CodecError, match="header needs 48 bytes"):
        entry_coder.decode(raw[:40])
    with pytest.raises(CodecError, match="runs past the end") as info:
        entry_coder.decode(raw[:50])
    assert info.value.offset == 0
    with pytest.raises(CodecError):
        entry_coder.decode_index(b"\x00" * 31)


def test_patch_index_term_and_pos():
    raw = entry_coder.encode(DLedgerEntry(body=b"x"))
    entry_coder.set_index_term(raw, 9, 4, 2)
    entry_coder.set_pos(raw, 4096)
    d = entry_coder.decode(raw)
    assert (d.index, d.term, d.magic, d.pos) == (9, 4, 2, 4096)
    assert d.is_noop
