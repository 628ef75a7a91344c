"""Protocol vocabulary (codes, enums) and DLedgerCodec round trips; garbage gives CodecError."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.protocol import (
    MESSAGE_TYPES,
    AppendEntryRequest,
    AppendEntryResponse,
    BatchAppendEntryRequest,
    DLedgerRequestCode,
    DLedgerResponseCode,
    GetEntriesRequest,
    GetEntriesResponse,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    MetadataRequest,
    MetadataResponse,
    ParseResult,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    VoteRequest,
    VoteResponse,
    VoteResult,
    describe,
)
from rocketlab.errors import CodecError

CODEC = DLedgerCodec()


def test_response_codes_keep_java_numbers():
    c = DLedgerResponseCode
    expected = {"UNKNOWN": -1, "SUCCESS": 200, "NETWORK_ERROR": 302, "UNKNOWN_GROUP": 400, "UNKNOWN_MEMBER": 401,
                "UNEXPECTED_MEMBER": 402, "EXPIRED_TERM": 403, "NOT_LEADER": 404, "NOT_FOLLOWER": 405,
                "INCONSISTENT_STATE": 406, "INCONSISTENT_TERM": 407, "INCONSISTENT_INDEX": 408,
                "INCONSISTENT_LEADER": 409, "INDEX_OUT_OF_RANGE": 410, "UNEXPECTED_ARGUMENT": 411,
                "REPEATED_PUSH": 413, "DISK_ERROR": 414, "TERM_NOT_READY": 416, "FALL_BEHIND_TOO_MUCH": 417,
                "TAKE_LEADERSHIP_FAILED": 418, "INDEX_LESS_THAN_LOCAL_BEGIN": 419, "REQUEST_WITH_EMPTY_BODYS": 420,
                "PUSH_REQUEST_IS_FULL": 421, "INTERNAL_ERROR": 500, "TERM_CHANGED": 501,
                "WAIT_QUORUM_ACK_TIMEOUT": 502, "LEADER_PENDING_FULL": 503, "LEADER_TRANSFERRING": 506}
    assert {name: int(c[name]) for name in expected} == expected
    assert c.value_of(12345) is c.UNKNOWN and c.value_of(403) is c.EXPIRED_TERM


def test_request_codes_and_enum_orders():
    assert (DLedgerRequestCode.VOTE, DLedgerRequestCode.HEART_BEAT, DLedgerRequestCode.PUSH) == (51001, 51002, 51004)
    assert (DLedgerRequestCode.APPEND, DLedgerRequestCode.LEADERSHIP_TRANSFER) == (50001, 51005)
    assert [r.name for r in VoteResult][:3] == ["UNKNOWN", "ACCEPT", "REJECT_UNKNOWN_LEADER"]
    assert [r.name for r in VoteResult][-1] == "REJECT_TAKING_LEADERSHIP"
    assert [p.name for p in ParseResult] == ["WAIT_TO_REVOTE", "REVOTE_IMMEDIATELY", "PASSED", "WAIT_TO_VOTE_NEXT"]
    assert [t.name for t in PushType] == ["APPEND", "COMMIT", "COMPARE", "TRUNCATE"]
    assert VoteResponse.Result is VoteResult and VoteResponse.ParseResult is ParseResult
    assert PushEntryRequest.Type is PushType


def test_push_request_first_last_count():
    e = [DLedgerEntry(index=i) for i in (4, 5, 6)]
    assert (PushEntryRequest(entry=e[0]).first_entry_index, PushEntryRequest(entry=e[0]).count) == (4, 1)
    batch = PushEntryRequest(batch_entry=tuple(e))
    assert (batch.first_entry_index, batch.last_entry_index, batch.count, batch.is_batch) == (4, 6, 3, True)
    assert (PushEntryRequest(type=PushType.COMMIT).first_entry_index, PushEntryRequest().count) == (-1, 0)


# ---------------------------------------------------------------------- hypothesis strategies
ids = st.one_of(st.none(), st.text(max_size=8))
i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
codes = st.sampled_from(list(DLedgerResponseCode))
entries = st.builds(DLedgerEntry, magic=i32, size=i32, index=i64, term=i64, pos=i64, channel=i32,
                    chain_crc=i32, body_crc=i32, body=st.one_of(st.none(), st.binary(max_size=64)))
base = {"group": ids, "remote_id": ids, "local_id": ids, "leader_id": ids, "term": i64, "code": codes}
STRATEGIES = {
    VoteRequest: st.builds(VoteRequest, **base, ledger_end_index=i64, ledger_end_term=i64),
    VoteResponse: st.builds(VoteResponse, **base, vote_result=st.sampled_from(list(VoteResult))),
    HeartBeatRequest: st.builds(HeartBeatRequest, **base),
    HeartBeatResponse: st.builds(HeartBeatResponse, **base),
    PushEntryRequest: st.builds(PushEntryRequest, **base, commit_index=i64, type=st.sampled_from(list(PushType)),
                                entry=st.one_of(st.none(), entries),
                                batch_entry=st.lists(entries, max_size=3).map(tuple), total_size=i64),
    PushEntryResponse: st.builds(PushEntryResponse, **base, index=st.one_of(st.none(), i64), begin_index=i64,
                                 end_index=i64, count=i64),
    AppendEntryRequest: st.builds(AppendEntryRequest, **base, body=st.binary(max_size=64)),
    BatchAppendEntryRequest: st.builds(BatchAppendEntryRequest, **base, body=st.binary(max_size=8),
                                       batch_msgs=st.lists(st.binary(max_size=16), max_size=4).map(tuple)),
    AppendEntryResponse: st.builds(AppendEntryResponse, **base, index=i64, pos=i64,
                                   positions=st.lists(i64, max_size=3).map(tuple)),
    GetEntriesRequest: st.builds(GetEntriesRequest, **base, begin_index=i64, max_size=i64),
    GetEntriesResponse: st.builds(GetEntriesResponse, **base, entries=st.lists(entries, max_size=2).map(tuple)),
    MetadataRequest: st.builds(MetadataRequest, **base),
    MetadataResponse: st.builds(MetadataResponse, **base,
                                peers=st.dictionaries(st.text(max_size=4), st.text(max_size=8), max_size=3)),
    LeadershipTransferRequest: st.builds(LeadershipTransferRequest, **base, transfer_id=ids, transferee_id=ids,
                                         take_leadership_ledger_index=i64),
    LeadershipTransferResponse: st.builds(LeadershipTransferResponse, **base),
}
MESSAGES = st.one_of(*STRATEGIES.values())


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_every_message_round_trips(msg):
    assert CODEC.decode(CODEC.encode(msg)) == msg


@settings(max_examples=500, deadline=None)
@given(MESSAGES)
def test_wire_size_is_the_encoded_length_without_encoding(msg):
    """The simulator traces this size for messages it does not serialise: it must be exact."""
    size = CODEC.wire_size(msg)
    if type(msg) is MetadataResponse:
        assert size is None  # a mutable map: always copied through the codec
    else:
        assert size == len(CODEC.encode(msg))


def test_every_message_type_has_a_round_trip_strategy():
    assert set(STRATEGIES) == set(MESSAGE_TYPES)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_bytes_raise_codec_error_only(data):
    try:
        CODEC.decode(data)
    except CodecError:
        pass


@settings(max_examples=200, deadline=None)
@given(MESSAGES, st.data())
def test_flipped_or_cut_frames_raise_codec_error_or_decode(msg, data):
    raw = bytearray(CODEC.encode(msg))
    if data.draw(st.booleans()):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] ^= data.draw(st.integers(1, 255))
    else:
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    try:
        CODEC.decode(bytes(raw))
    except CodecError:
        pass


def frame(header: object, body: object) -> bytes:
    head = json.dumps(header).encode()
    payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
    return struct.pack(">ii", 4 + len(head) + len(payload), len(head)) + head + payload


VOTE_HEADER = {"code": 51001, "flag": 0, "type": "VoteRequest"}


@pytest.mark.parametrize("raw, message", [
    (b"\x00\x00", "shorter than its 8-byte prefix"),
    (struct.pack(">ii", 100, 2) + b"{}", "does not match"),
    (struct.pack(">ii", 6, (1 << 24) | 2) + b"{}", "serialize type"),
    (struct.pack(">ii", 6, 50) + b"{}", "header length"),
    (frame({"code": 1}, {}), "exactly code, flag and type"),
    (frame({"code": 51001, "flag": 0, "type": "Nope"}, {}), "unknown message type"),
    (frame({"code": 51002, "flag": 0, "type": "VoteRequest"}, {}), "do not fit"),
    (frame(VOTE_HEADER, b"{not json"), "invalid JSON"),
    (frame(VOTE_HEADER, b"\xff\xfe"), "invalid UTF-8"),
    (frame(VOTE_HEADER, []), "must be a JSON object"),
    (frame(VOTE_HEADER, {"bogus": 1}), "has no field 'bogus'"),
    (frame(VOTE_HEADER, {"remote_id": "n1"}), "has no field 'remote_id'"),
    (frame(VOTE_HEADER, {"term": "3"}), "term must be an integer"),
    (frame(VOTE_HEADER, {"term": True}), "term must be an integer"),
    (frame(VOTE_HEADER, {"term": 2**70}), "term must be an integer"),
    (frame(VOTE_HEADER, {"group": 5}), "group must be a string"),
    (frame({"code": 0, "flag": 1, "type": "VoteResponse"}, {"voteResult": "MAYBE"}), "voteResult must be one of"),
    (frame({"code": 51004, "flag": 0, "type": "PushEntryRequest"}, {"entry": {"body": "!!"}}), "not valid base64"),
    (frame({"code": 51004, "flag": 0, "type": "PushEntryRequest"}, {"entry": {"x": 1}}), "unknown fields"),
    (frame({"code": 51004, "flag": 0, "type": "PushEntryRequest"}, {"batchEntry": {}}), "JSON array"),
    (frame({"code": 0, "flag": 1, "type": "MetadataResponse"}, {"peers": {"a": 1}}), "object of strings"),
])
def test_malformed_frames_say_what_is_wrong(raw, message):
    with pytest.raises(CodecError, match=message):
        CODEC.decode(raw)


def test_codec_error_carries_offset():
    with pytest.raises(CodecError) as info:
        CODEC.decode(frame(VOTE_HEADER, b'{"term": x}'))
    assert info.value.offset is not None and info.value.offset > 8


def test_encode_rejects_non_messages():
    with pytest.raises(CodecError):
        CODEC.encode({"term": 1})


def test_frame_layout_is_remoting_like_with_camel_case_json():
    raw = CODEC.encode(VoteRequest(group="g", term=3, leader_id="n0", ledger_end_index=7, ledger_end_term=2))
    length, mark = struct.unpack(">ii", raw[:8])
    assert length == len(raw) - 4 and mark >> 24 == 0
    header = json.loads(raw[8:8 + (mark & 0xFFFFFF)])
    body = json.loads(raw[8 + (mark & 0xFFFFFF):])
    assert header == {"code": 51001, "flag": 0, "type": "VoteRequest"}
    assert body == {"code": 200, "group": "g", "leaderId": "n0", "ledgerEndIndex": 7, "ledgerEndTerm": 2, "term": 3}


def test_describe_is_one_stable_line():
    assert describe(VoteRequest(term=3, leader_id="n0", ledger_end_index=7, ledger_end_term=2), "n0", "n1") == \
        "n0->n1 VoteRequest term=3 candidate=n0 ledger_end=7/2"
    line = describe(PushEntryRequest(term=2, type=PushType.COMPARE, entry=DLedgerEntry(index=5), commit_index=3))
    assert line == "PushEntryRequest term=2 COMPARE first=5 count=1 commit=3"
    assert "\n" not in describe(VoteResponse(vote_result=VoteResult.ACCEPT))


# ---------------------------------------------------------------------- golden frames
GOLDEN_PUSH = (b'\x00\x00\x015\x00\x00\x001{"code":51004,"flag":0,"type":"PushEntryRequest"}{"batchEntry":[],"code":200,'
               b'"commitIndex":5,"entry":{"body":"aGVsbG8=","bodyCrc":0,"chainCrc":0,"channel":0,"index":6,"magic":1,'
               b'"pos":300,"size":53,"term":3},"group":"g","leaderId":"n0","localId":"n0","remoteId":"n1","term":3,'
               b'"totalSize":0,"type":"APPEND"}')
GOLDEN_VOTE = (b'\x00\x00\x00\x91\x00\x00\x00){"code":0,"flag":1,"type":"VoteResponse"}{"code":200,"group":"g",'
               b'"localId":"n1","remoteId":"n0","term":4,"voteResult":"REJECT_ALREADY_VOTED"}')


def _golden_messages():
    from rocketlab.dledger.protocol import PushType, VoteResult

    push = PushEntryRequest(group="g", remote_id="n1", local_id="n0", leader_id="n0", term=3, commit_index=5,
                            type=PushType.APPEND, entry=DLedgerEntry(magic=1, size=53, index=6, term=3, pos=300,
                                                                     body=b"hello"))
    vote = VoteResponse(group="g", remote_id="n0", local_id="n1", term=4, vote_result=VoteResult.REJECT_ALREADY_VOTED)
    return push, vote


def test_frames_are_byte_for_byte_the_golden_ones():
    """The per-type plans (cached headers, field names) write exactly these bytes; decoding gives back the
    message."""
    push, vote = _golden_messages()
    codec = DLedgerCodec()
    assert codec.encode(push) == GOLDEN_PUSH and codec.encode(vote) == GOLDEN_VOTE
    assert codec.decode(GOLDEN_PUSH) == push and codec.decode(GOLDEN_VOTE) == vote


def test_a_header_in_other_valid_json_formatting_is_still_read():
    """The fast path recognises the exact header bytes this codec writes; any other well-formed header (here
    with spaces and another key order) goes through the full checks and decodes the same."""
    _, vote = _golden_messages()
    head = b'{"type": "VoteResponse", "flag": 1, "code": 0}'
    body = GOLDEN_VOTE[8 + 41:]
    frame = struct.pack(">ii", 4 + len(head) + len(body), len(head)) + head + body
    assert DLedgerCodec().decode(frame) == vote
