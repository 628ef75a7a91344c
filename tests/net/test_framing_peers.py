"""Frames parsed from split and merged reads; peers strings; properties files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketlab.errors import ConfigError, RemoteProtocolError
from rocketlab.net.framing import MAX_FRAME, ONEWAY, REPLY, REQUEST, Frame, FrameDecoder, encode_frame
from rocketlab.peers import format_peers, parse_address, parse_peers
from rocketlab.properties import load_properties, parse_properties, write_properties

FRAMES = [Frame(ONEWAY, 0, "n0", b"hello"), Frame(REQUEST, 7, "n1", b""), Frame(REPLY, 2**63, "n-é", b"x" * 999)]
WIRE = b"".join(encode_frame(f.kind, f.request_id, f.src, f.body) for f in FRAMES)


def _drain(decoder):
    out = []
    while (frame := decoder.next_frame()) is not None:
        out.append(frame)
    return out


def test_frames_whole_byte_by_byte_and_merged_give_the_same_frames():
    whole = FrameDecoder()
    whole.receive_data(WIRE)
    assert _drain(whole) == FRAMES
    single, got = FrameDecoder(), []
    for i in range(len(WIRE)):
        single.receive_data(WIRE[i:i + 1])
        got += _drain(single)
    assert got == FRAMES
    trailing = FrameDecoder()
    trailing.receive_data(WIRE + WIRE[:5])
    assert _drain(trailing) == FRAMES and len(trailing.buffer) == 5


@given(st.lists(st.integers(min_value=1, max_value=64), max_size=40))
def test_any_split_gives_the_same_frames(cuts):
    decoder, got, pos = FrameDecoder(), [], 0
    for cut in cuts:
        decoder.receive_data(WIRE[pos:pos + cut])
        pos += cut
        got += _drain(decoder)
    decoder.receive_data(WIRE[pos:])
    assert got + _drain(decoder) == FRAMES


@pytest.mark.parametrize("garbage,problem", [
    (b"\xff\xff\xff\xff", "out of range"),
    (b"\x00\x00\x00\x02ab", "out of range"),
    (b"\x00\x00\x00\x0b\x09" + b"\x00" * 10, "unknown frame kind 9"),
    (b"\x00\x00\x00\x0b\x01" + b"\x00" * 8 + b"\x00\x50", "longer than the frame"),
])
def test_garbage_is_a_remote_protocol_error(garbage, problem):
    decoder = FrameDecoder()
    decoder.receive_data(garbage)
    with pytest.raises(RemoteProtocolError, match=problem):
        decoder.next_frame()


def test_oversized_frames_are_refused_when_encoding():
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        encode_frame(ONEWAY, 0, "n0", b"x" * MAX_FRAME)


def test_peers_parse_in_dledger_form():
    peers = parse_peers("n0-127.0.0.1:40911;n1-my-host:40912;n2-[::1]:40913;")
    assert peers == {"n0": ("127.0.0.1", 40911), "n1": ("my-host", 40912), "n2": ("::1", 40913)}
    assert parse_peers(format_peers({"a": ("h", 1)})) == {"a": ("h", 1)}


@pytest.mark.parametrize("text,problem", [
    ("", "empty"), ("n0127.0.0.1:1", "not id-host:port"), ("n0-host", "expected host:port"),
    ("n0-host:x", "not a number"), ("n0-host:70000", "1-65535"), ("n0-h:1;n0-h:2", "appears twice"),
    ("n 0-h:1", "letters, digits"),
])
def test_malformed_peers_are_named(text, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_peers(text)


def test_parse_address_names_what():
    with pytest.raises(ConfigError, match="haMasterAddress"):
        parse_address("nowhere", "haMasterAddress")


def test_properties_round_trip_atomically_and_name_bad_lines(tmp_path):
    path = tmp_path / "currterm"
    write_properties(path, {"currTerm": 3, "voteLeader": "n1"})
    assert load_properties(path) == {"currTerm": "3", "voteLeader": "n1"}
    assert not (tmp_path / "currterm.tmp").exists()
    assert parse_properties("# c\n! c\n a = b \nc:d\n") == {"a": "b", "c": "d"}
    with pytest.raises(ConfigError, match="line 2: expected key=value"):
        parse_properties("a=1\nnonsense\n", "broker.conf")
    with pytest.raises(ConfigError, match="a is set twice"):
        parse_properties("a=1\na=2")
    with pytest.raises(ConfigError, match="does not exist"):
        load_properties(tmp_path / "missing.conf")
