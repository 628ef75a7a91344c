"""The AutoSwitch HA frames of controller mode: exact bytes, any split, bad frames refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.autoswitch_wire import (
    MASTER_HANDSHAKE_SIZE,
    MASTER_TRANSFER_SIZE,
    NEED_DATA,
    SLAVE_HANDSHAKE_SIZE,
    SLAVE_TRANSFER_SIZE,
    HAConnectionState,
    MasterFrameParser,
    MasterHandshake,
    MasterTransfer,
    SlaveAck,
    SlaveFrameParser,
    SlaveHandshake,
    encode_master_handshake,
    encode_master_transfer,
    encode_slave_ack,
    encode_slave_handshake,
)


def test_sizes_and_golden_bytes():
    assert (SLAVE_HANDSHAKE_SIZE, SLAVE_TRANSFER_SIZE, MASTER_HANDSHAKE_SIZE, MASTER_TRANSFER_SIZE) == (16, 12, 20, 36)
    assert [s.value for s in HAConnectionState] == [0, 1, 2, 3, 4]
    assert encode_slave_handshake(SlaveHandshake(2, sync_from_last_file=True)).hex() == \
        "00000001" "0001" "0000" "0000000000000002"
    assert encode_slave_ack(SlaveAck(1580)).hex() == "00000002" "000000000000062c"
    assert encode_master_handshake(MasterHandshake(700, 3, ((1, 100), (2, 300), (3, 500)))).hex() == \
        "00000001" "00000024" "00000000000002bc" "00000003" \
        "00000001" "0000000000000064" "00000002" "000000000000012c" "00000003" "00000000000001f4"
    assert encode_master_transfer(MasterTransfer(500, 3, 500, 480, b"ab")).hex() == \
        "00000002" "00000002" "00000000000001f4" "00000003" "00000000000001f4" "00000000000001e0" "6162"


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def _events(parser, chunks):
    out = []
    for chunk in chunks:
        parser.receive_data(chunk)
        while (event := parser.next_event()) is not NEED_DATA:
            out.append(event)
    return out


slave_frames = st.lists(st.one_of(
    st.builds(SlaveHandshake, st.integers(0, 2**40), st.booleans(), st.booleans()),
    st.builds(SlaveAck, st.integers(0, 2**50))), max_size=6)
master_frames = st.lists(st.one_of(
    st.builds(MasterHandshake, st.integers(0, 2**40), st.integers(0, 99),
              st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2**40)), max_size=4).map(tuple)),
    st.builds(MasterTransfer, st.integers(0, 2**40), st.integers(0, 99), st.integers(0, 2**40),
              st.integers(0, 2**40), st.binary(max_size=80))), max_size=6)


@settings(max_examples=200, deadline=None)
@given(slave_frames, st.lists(st.integers(0, 10_000), max_size=8))
def test_slave_frames_survive_any_split(frames, cuts):
    data = b"".join(encode_slave_handshake(f) if isinstance(f, SlaveHandshake) else encode_slave_ack(f) for f in frames)
    assert _events(SlaveFrameParser(), _split(data, cuts)) == frames


@settings(max_examples=200, deadline=None)
@given(master_frames, st.lists(st.integers(0, 10_000), max_size=8))
def test_master_frames_survive_any_split(frames, cuts):
    data = b"".join(encode_master_handshake(f) if isinstance(f, MasterHandshake) else encode_master_transfer(f)
                    for f in frames)
    assert _events(MasterFrameParser(), _split(data, cuts)) == frames


def test_a_handshake_body_that_is_not_whole_entries_is_read_as_java_reads_it():
    frame = bytearray(encode_master_handshake(MasterHandshake(9, 1, ((1, 0),))))
    frame[4:8] = (14).to_bytes(4, "big")  # 12 + 2 stray bytes
    parser = MasterFrameParser()
    parser.receive_data(bytes(frame) + b"xy" + encode_master_transfer(MasterTransfer(9, 1, 0, 9)))
    assert parser.next_event() == MasterHandshake(9, 1, ((1, 0),))
    assert parser.next_event() == MasterTransfer(9, 1, 0, 9)


@pytest.mark.parametrize(("parser", "data", "problem"), [
    (SlaveFrameParser, (7).to_bytes(4, "big") + bytes(12), "state 7"),
    (SlaveFrameParser, (0).to_bytes(4, "big") + bytes(12), "state 0"),
    (SlaveFrameParser, (2).to_bytes(4, "big") + (-5).to_bytes(8, "big", signed=True), "negative offset -5"),
    (MasterFrameParser, (3).to_bytes(4, "big") + bytes(40), "state 3"),
    (MasterFrameParser, (2).to_bytes(4, "big") + (-1).to_bytes(4, "big", signed=True) + bytes(40), "body size -1"),
    (MasterFrameParser, (2).to_bytes(4, "big") + (5 << 20).to_bytes(4, "big") + bytes(40), "body size 5242880"),
])
def test_bad_frames_are_refused_with_where_they_were(parser, data, problem):
    p = parser()
    p.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=problem):
        p.next_event()


def test_too_many_epoch_entries_for_the_handshake_buffer():
    with pytest.raises(ValueError, match="at most 1000"):
        encode_master_handshake(MasterHandshake(0, 1, tuple((i, i) for i in range(1001))))
