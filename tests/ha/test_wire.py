"""The classic HA wire protocol: byte layout, split and merged reads, bad frames."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.wire import (
    NEED_DATA,
    ReportParser,
    TransferFrame,
    TransferParser,
    encode_report,
    encode_transfer,
)


def test_byte_layout_is_big_endian_8_and_12_bytes():
    assert encode_report(0x0102030405060708) == bytes.fromhex("0102030405060708")
    assert encode_transfer(1024, b"ab") == bytes.fromhex("0000000000000400" "00000002") + b"ab"
    assert encode_transfer(7) == bytes.fromhex("0000000000000007" "00000000")  # heartbeat


def _frames(parser):
    out = []
    while (event := parser.next_event()) is not NEED_DATA:
        out.append(event)
    return out


FRAMES = [TransferFrame(0, b"x" * 100), TransferFrame(100, b""), TransferFrame(100, b"y" * 7)]
WIRE = b"".join(encode_transfer(f.phy_offset, f.body) for f in FRAMES)


def test_transfer_frames_whole_byte_by_byte_and_with_trailing_bytes():
    whole = TransferParser()
    whole.receive_data(WIRE)
    assert _frames(whole) == FRAMES
    single, got = TransferParser(), []
    for i in range(len(WIRE)):
        single.receive_data(WIRE[i:i + 1])
        got += _frames(single)
    assert got == FRAMES
    trailing = TransferParser()
    trailing.receive_data(WIRE + WIRE[:11])
    assert _frames(trailing) == FRAMES and len(trailing.buffer) == 11


@given(st.lists(st.integers(min_value=1, max_value=40), max_size=20))
def test_any_split_of_transfer_frames_gives_the_same_frames(cuts):
    parser, got, pos = TransferParser(), [], 0
    for cut in cuts:
        parser.receive_data(WIRE[pos:pos + cut])
        pos += cut
        got += _frames(parser)
    parser.receive_data(WIRE[pos:])
    assert got + _frames(parser) == FRAMES


def test_master_acts_on_the_newest_complete_report_only():
    parser = ReportParser()
    parser.receive_data(encode_report(5) + encode_report(9) + encode_report(12)[:3])
    assert parser.next_event() == 9
    assert parser.next_event() is NEED_DATA
    parser.receive_data(encode_report(12)[3:])
    assert parser.next_event() == 12


@pytest.mark.parametrize("wire,problem", [
    (encode_transfer(0, b"") [:8] + (5_000_000).to_bytes(4, "big"), "bodySize 5000000, outside 0..4194292"),
    ((-1).to_bytes(8, "big", signed=True) + bytes(4), "negative phyOffset"),
    (bytes(8) + (-5).to_bytes(4, "big", signed=True), "bodySize -5"),
])
def test_bad_transfer_headers_are_protocol_errors(wire, problem):
    parser = TransferParser()
    parser.receive_data(wire)
    with pytest.raises(RemoteProtocolError, match=problem):
        parser.next_event()


def test_negative_report_is_a_protocol_error():
    parser = ReportParser()
    parser.receive_data((-8).to_bytes(8, "big", signed=True))
    with pytest.raises(RemoteProtocolError, match="negative offset -8"):
        parser.next_event()
    with pytest.raises(ValueError):
        encode_report(-1)
