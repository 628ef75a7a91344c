"""RemotingConnection and RemotingCommand: frames from split and merged reads, fastjson's header, the
binary (ROCKETMQ) header, opaque pairing, and a table of malformed input (a clear error, nothing trusted)."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlab.errors import LocalProtocolError, RemoteProtocolError
from rocketlab.remoting.command import (
    MAX_FRAME,
    ONEWAY_FLAG,
    RESPONSE_FLAG,
    ROCKETMQ,
    RemotingCommand,
    encode_command,
    header_json,
    parse_frame,
)
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection
from rocketlab.remoting.fastjson import hashmap_order, java_long_hash, java_string_hash, loads, long_set_order

COMMANDS = [
    RemotingCommand(51001, opaque=3, body=b'{"term":1}'),
    RemotingCommand(10, flag=ONEWAY_FLAG, opaque=4, ext_fields={"topic": "T", "queueId": "1"}, body=b"x" * 999),
    RemotingCommand(3, flag=RESPONSE_FLAG, opaque=5, remark=" request type 9 not supported"),
    RemotingCommand(0, flag=RESPONSE_FLAG, opaque=6, ext_fields={"msgId": "é"}, language="PYTHON", version=373),
]


def _wire(commands: list[RemotingCommand]) -> bytes:
    return b"".join(encode_command(c) for c in commands)


def _drain(conn: RemotingConnection) -> list[RemotingCommand]:
    out = []
    while (cmd := conn.next_command()) is not NEED_DATA and cmd is not CLOSED:
        out.append(cmd)
    return out


def _receiver() -> RemotingConnection:
    conn = RemotingConnection()
    conn.awaiting = {5, 6}  # the responses above answer requests of ours
    return conn


def _same(got: list[RemotingCommand]) -> bool:
    return [encode_command(c) for c in got] == [encode_command(c) for c in COMMANDS]


WIRE = _wire(COMMANDS)


def test_whole_byte_by_byte_and_trailing_bytes_give_the_same_commands():
    whole = _receiver()
    whole.receive_data(WIRE)
    assert _same(_drain(whole))
    single, got = _receiver(), []
    for i in range(len(WIRE)):
        single.receive_data(WIRE[i:i + 1])
        got += _drain(single)
    assert _same(got)
    trailing = _receiver()
    trailing.receive_data(WIRE + WIRE[:5])
    assert _same(_drain(trailing)) and trailing.next_command() is NEED_DATA


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=64), max_size=40))
def test_any_split_gives_the_same_commands(cuts):
    conn, got, pos = _receiver(), [], 0
    for cut in cuts:
        conn.receive_data(WIRE[pos:pos + cut])
        pos += cut
        got += _drain(conn)
    conn.receive_data(WIRE[pos:])
    got += _drain(conn)
    conn.receive_data(b"")
    assert _same(got) and conn.next_command() is CLOSED


def test_the_header_is_fastjsons_bean_sorted_and_without_nulls():
    cmd = RemotingCommand(51004, opaque=86)
    assert header_json(cmd) == (b'{"code":51004,"flag":0,"language":"JAVA","opaque":86,'
                                b'"serializeTypeCurrentRPC":"JSON","version":0}')
    full = RemotingCommand(1, flag=1, opaque=2, remark="boom", ext_fields={"b": "2", "a": "1"})
    assert list(json.loads(header_json(full))) == ["code", "extFields", "flag", "language", "opaque", "remark",
                                                  "serializeTypeCurrentRPC", "version"]


def test_a_binary_rocketmq_header_reads_as_java_writes_it():
    cmd = RemotingCommand(10, flag=ONEWAY_FLAG, opaque=77, remark="r", ext_fields={"topic": "T", "q": "é"},
                          body=b"payload", serialize_type=ROCKETMQ, language="GO", version=5)
    raw = encode_command(cmd)
    assert raw[4] == ROCKETMQ  # the serialize type in the top byte of the header length
    back = parse_frame(raw)
    assert (back.code, back.flag, back.opaque, back.remark, back.ext_fields, back.body, back.language, back.version,
            back.serialize_type) == (10, ONEWAY_FLAG, 77, "r", {"topic": "T", "q": "é"}, b"payload", "GO", 5, ROCKETMQ)


def test_responses_pair_with_requests_by_opaque_and_strays_are_dropped():
    client, server = RemotingConnection(), RemotingConnection()
    requests = [RemotingCommand(51002, opaque=client.next_opaque()) for _ in range(3)]
    server.receive_data(b"".join(client.send(r) for r in requests))
    got = _drain(server)
    assert [c.opaque for c in got] == [0, 1, 2] and client.awaiting == {0, 1, 2}
    client.forget(1)  # gave up on it (a timeout)
    answers = [RemotingCommand(200, flag=RESPONSE_FLAG, opaque=o) for o in (2, 1, 0, 99)]
    client.receive_data(b"".join(server.send(a) for a in answers))
    assert [c.opaque for c in _drain(client)] == [2, 0] and client.unmatched == 2 and client.awaiting == set()


def test_a_oneway_request_waits_for_nothing():
    conn = RemotingConnection()
    conn.send(RemotingCommand(1008, flag=ONEWAY_FLAG, opaque=conn.next_opaque()))
    assert conn.awaiting == set()


def _frame(head: bytes, body: bytes = b"", mark: int | None = None) -> bytes:
    mark = len(head) if mark is None else mark
    return struct.pack(">ii", 4 + len(head) + len(body), mark) + head + body


GOOD_HEAD = b'{"code":51001,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":0}'


@pytest.mark.parametrize("garbage, problem", [
    (b"\xff\xff\xff\xff", "length field -1 out of range"),
    (b"\x00\x00\x00\x02ab", "length field 2 out of range"),
    (struct.pack(">i", MAX_FRAME), f"length field {MAX_FRAME} out of range"),
    (_frame(b"{}", mark=500), "bad header length: 500"),
    (_frame(b"{}", mark=(7 << 24) | 2), "unknown serialize type 7"),
    (_frame(b"{not json"), "the header is not JSON"),
    (_frame(b"[1]"), "not a JSON object"),
    (_frame(b'{"code":"x"}'), "header code 'x' is not a number"),
    (_frame(b'{"code":1,"opaque":4294967296}'), "not a 32-bit integer"),
    (_frame(b'{"code":1,"language":"KLINGON"}'), "unknown language 'KLINGON'"),
    (_frame(b'{"code":1,"extFields":[]}'), "extFields is not an object"),
    (_frame(b'{"code":1,"extFields":{"a":{}}}'), "a header string is dict"),
    (_frame(b"\x00\x01", mark=(1 << 24) | 2), "bad ROCKETMQ header"),
])
def test_malformed_input_is_a_clear_error_and_nothing_after_it_is_trusted(garbage, problem):
    conn = RemotingConnection()
    conn.receive_data(garbage + _frame(GOOD_HEAD))
    with pytest.raises(RemoteProtocolError, match=problem):
        conn.next_command()
    with pytest.raises(RemoteProtocolError, match=problem):  # the connection stays broken
        conn.next_command()


def test_a_close_in_the_middle_of_a_frame_is_an_error_and_data_after_the_end_a_local_one():
    conn = RemotingConnection()
    conn.receive_data(_frame(GOOD_HEAD)[:-3])
    assert conn.next_command() is NEED_DATA
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="closed the connection in the middle of a frame"):
        conn.next_command()
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"more")


def test_an_oversized_frame_is_refused_when_encoding():
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        encode_command(RemotingCommand(10, body=b"x" * MAX_FRAME))


def test_unknown_header_fields_are_ignored_and_numbers_may_be_strings_as_fastjson_reads_them():
    cmd = parse_frame(_frame(b'{"code":"51002","opaque":"9","flag":0,"suspended":true,"type":"x"}'))
    assert (cmd.code, cmd.opaque, cmd.language) == (51002, 9, "JAVA")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise_anything_but_a_protocol_error(data):
    conn = RemotingConnection()
    conn.receive_data(data)
    conn.receive_data(b"")
    try:
        _drain(conn)
    except RemoteProtocolError:
        pass


def test_java_hashes_and_hashmap_orders():
    assert java_string_hash("hello") == 99162322 and java_string_hash("é") == 233
    assert java_string_hash("polygenelubricants") == -2147483648
    assert java_long_hash(2**40 + 5) == 2**8 ^ 5
    # Java: new HashMap<>() with these puts iterates {brokerId, clusterName, designateElect, brokerName}
    assert hashmap_order(["clusterName", "brokerName", "brokerId", "designateElect"]) == [
        "brokerId", "clusterName", "designateElect", "brokerName"]
    assert long_set_order([3, 1, 2, 17, 16]) == [16, 1, 17, 2, 3]


def test_fastjson_bare_integer_map_keys_are_read():
    assert loads(b'{"brokerAddrs":{1:"a:1",-2 :"b"},"s":"{3:x}"}') == {"brokerAddrs": {"1": "a:1", "-2": "b"},
                                                                      "s": "{3:x}"}
