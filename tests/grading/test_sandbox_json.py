"""The channel's JSON (issue 41): ``orjson`` where it reads and writes as ``json`` does, ``json`` elsewhere."""

from __future__ import annotations

import json

import pytest

from rocketlab.grading.sandbox_json import dumps, loads

LINES = [b'{"value": 123456789012345678901234567890}', b'{"value": -9223372036854775809}',
         b'{"value": 18446744073709551616}', b'{"value": [NaN, Infinity, -Infinity]}', b'{"value": "\\ud800"}',
         b'{"value": 1e400}', b'{"a": 1, "a": 2}', b'{"value": [1.0000000000000002, -0.0, 4611686018427387903]}',
         b'{"values": [{"value": {"$t": [1, "x", null, true]}}]}']
GARBAGE = [b"", b"{", b"\xff\xfe", b'{"a": 1} x', b"[1,]", b'{"a": "\x01"}']


@pytest.mark.parametrize("line", LINES)
def test_loads_reads_as_json_does(line: bytes) -> None:
    got, want = loads(line), json.loads(line)
    assert repr(got) == repr(want) and type(got) is type(want)


@pytest.mark.parametrize("line", GARBAGE)
def test_loads_refuses_what_json_refuses(line: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(line)
    with pytest.raises(ValueError):
        loads(line)


@pytest.mark.parametrize("message", [{"op": "call", "args": ["\ud800"]}, {1: "int key"},
                                     {"op": "map", "calls": [[1, 2.5, None, True, "主题"]]}])
def test_dumps_round_trips_as_json(message: dict) -> None:
    assert json.loads(dumps(message)) == json.loads(json.dumps(message))
