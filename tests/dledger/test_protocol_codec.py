"""Protocol vocabulary (codes, enums) and DLedger's RPCs on RocketMQ remoting: round trips, exact sizes,
fastjson's leniency and strictness, garbage gives a clear error."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.dledger.codec import RESPONSE_OF, DLedgerCodec
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
from rocketlab.errors import CodecError, RemoteProtocolError
from rocketlab.remoting.command import RemotingCommand, encode_command, parse_frame

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


REQUEST_OF = {response: request for request, response in RESPONSE_OF.items()}


def _round_trip(msg):
    """Encode ``msg`` and decode it back (a response as the answer to its request class)."""
    return CODEC.decode(CODEC.encode(msg), REQUEST_OF.get(type(msg)))


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_every_message_round_trips(msg):
    assert _round_trip(msg) == msg


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
def test_garbage_bytes_raise_a_protocol_or_codec_error_only(data):
    try:
        CODEC.decode(data)
    except (CodecError, RemoteProtocolError):
        pass


@settings(max_examples=200, deadline=None)
@given(MESSAGES, st.data())
def test_flipped_or_cut_frames_raise_an_error_or_decode(msg, data):
    raw = bytearray(CODEC.encode(msg))
    if data.draw(st.booleans()):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] ^= data.draw(st.integers(1, 255))
    else:
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    try:
        CODEC.decode(bytes(raw), REQUEST_OF.get(type(msg)))
    except (CodecError, RemoteProtocolError):
        pass


def request(code: int, body: object) -> bytes:
    payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
    return encode_command(RemotingCommand(code, body=payload))


def response(body: object, code: int = 200) -> bytes:
    payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
    return encode_command(RemotingCommand(code, flag=1, body=payload))


@pytest.mark.parametrize("raw, answers, message", [
    (request(51001, b"{not json"), None, "VoteRequest body is not JSON"),
    (request(51001, b"\xff\xfe"), None, "VoteRequest body is not JSON"),
    (encode_command(RemotingCommand(51001)), None, "VoteRequest: the command has no body"),
    (request(51001, []), None, "must be a JSON object"),
    (request(51001, {"term": "three"}), None, "VoteRequest.term: 'three' is not a number"),
    (request(51001, {"term": True}), None, "VoteRequest.term must be an integer"),
    (request(51001, {"term": 2**70}), None, "VoteRequest.term must be an integer"),
    (request(51001, {"group": {}}), None, "VoteRequest.group must be a string"),
    (request(51004, {"type": "SHOVE"}), None, "PushEntryRequest.type must be one of"),
    (request(51004, {"entry": {"body": "!!"}}), None, "not valid base64"),
    (request(51004, {"entry": "x"}), None, "entry must be a JSON object"),
    (request(51004, {"batchEntry": {}}), None, "JSON array"),
    (request(51003, {}), None, "request type 51003 not supported"),
    (request(10, {}), None, "request type 10 not supported"),
    (response({"voteResult": "MAYBE"}), VoteRequest, "voteResult must be one of"),
    (response({"peers": {"a": []}}), MetadataRequest, "must be a string"),
    (response({}, code=1), VoteRequest, "remoting code 1"),
    (response({}), None, "without the request it answers"),
])
def test_malformed_commands_say_what_is_wrong(raw, answers, message):
    with pytest.raises(CodecError, match=message):
        CODEC.decode(raw, answers)


def test_fastjson_leniency_unknown_keys_missing_keys_strings_and_ordinals():
    """What ``JSON.parseObject`` accepts: unknown properties ignored, missing ones at the class's default,
    numbers as strings, an enum by its ordinal, a null primitive at its default."""
    msg = CODEC.decode(request(51001, {"term": "7", "leaderId": "n2", "nope": [1, {"x": 2}], "ledgerEndIndex": None}))
    assert msg == VoteRequest(term=7, leader_id="n2")
    push = CODEC.decode(request(51004, {"type": 2, "count": 9, "batch": True, "firstEntryIndex": 4}))
    assert push.type is PushType.COMPARE and push.count == 0
    vote = CODEC.decode(response({"voteResult": 1, "term": 3}), VoteRequest)
    assert vote.vote_result is VoteResult.ACCEPT and vote.term == 3


def test_an_append_with_batch_messages_is_a_batch_request():
    raw = CODEC.encode(BatchAppendEntryRequest(group="g", remote_id="n0", batch_msgs=(b"a", b"b")))
    msg = CODEC.decode(raw)
    assert type(msg) is BatchAppendEntryRequest and msg.batch_msgs == (b"a", b"b")
    assert type(CODEC.decode(CODEC.encode(AppendEntryRequest(group="g", body=b"a")))) is AppendEntryRequest


def test_encode_rejects_non_messages():
    with pytest.raises(CodecError):
        CODEC.encode({"term": 1})


def test_a_request_is_a_remoting_command_with_the_java_class_as_fastjson_writes_it():
    raw = CODEC.encode(VoteRequest(group="g", term=3, leader_id="n0", ledger_end_index=7, ledger_end_term=2))
    cmd = parse_frame(raw)
    assert (cmd.code, cmd.flag, cmd.ext_fields, cmd.remark) == (51001, 0, None, None)
    assert cmd.body == (b'{"code":200,"group":"g","leaderId":"n0","ledgerEndIndex":7,"ledgerEndTerm":2,"term":3}')
    answer = parse_frame(CODEC.encode(VoteResponse(term=3, vote_result=VoteResult.ACCEPT)))
    assert (answer.code, answer.flag) == (200, 1)  # every DLedger answer is remoting code 200


def test_describe_is_one_stable_line():
    assert describe(VoteRequest(term=3, leader_id="n0", ledger_end_index=7, ledger_end_term=2), "n0", "n1") == \
        "n0->n1 VoteRequest term=3 candidate=n0 ledger_end=7/2"
    line = describe(PushEntryRequest(term=2, type=PushType.COMPARE, entry=DLedgerEntry(index=5), commit_index=3))
    assert line == "PushEntryRequest term=2 COMPARE first=5 count=1 commit=3"
    assert "\n" not in describe(VoteResponse(vote_result=VoteResult.ACCEPT))
