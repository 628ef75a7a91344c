"""Frames the real Java wrote (``tests/data/remoting``, made by ``python -m rocketlab.oracle.frames``): a
real DLedger 0.3.1.2 group's RPCs and its DLedgerClient's, and RocketMQ 4.9.5's and 5.3.3's own
RemotingCommand + header classes for every header-carrying message of the kit. Ours decode them and write
the same bytes (controller requests aside from ``invokeTime``, which the kit does not send)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.oracle.frames import header_cases
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import encode_command, parse_frame

DATA = Path(__file__).parent.parent / "data" / "remoting"
EXCHANGES = json.loads((DATA / "dledger-0.3.1.2.json").read_text())["exchanges"]
CODEC = DLedgerCodec()


def test_the_captured_sample_covers_every_rpc_a_member_and_a_client_send():
    assert {e["kind"] for e in EXCHANGES} == {
        "VoteRequest", "HeartBeatRequest", "PushEntryRequest/COMPARE", "PushEntryRequest/TRUNCATE",
        "PushEntryRequest/APPEND", "PushEntryRequest/COMMIT", "AppendEntryRequest", "MetadataRequest"}


@pytest.mark.parametrize("exchange", EXCHANGES, ids=lambda e: e["kind"])
def test_java_dledger_frames_decode_and_re_encode_byte_for_byte(exchange):
    request_raw, response_raw = (base64.b64decode(exchange[k]) for k in ("request", "response"))
    request, response = parse_frame(request_raw), parse_frame(response_raw)
    assert (request.flag, response.flag, response.code, response.opaque) == (0, 1, 200, request.opaque)
    msg = CODEC.message(request)
    answer = CODEC.message(response, answers=msg)
    assert encode_command(CODEC.command(msg, request.opaque)) == request_raw
    assert encode_command(CODEC.command(answer, response.opaque)) == response_raw


def test_a_push_carries_javas_getters_and_they_are_ignored_when_read():
    push = next(e for e in EXCHANGES if e["kind"] == "PushEntryRequest/APPEND")
    cmd = parse_frame(base64.b64decode(push["request"]))
    body = json.loads(cmd.body)
    assert {"batch", "count", "firstEntryIndex", "lastEntryIndex", "batchEntry"} <= set(body)
    msg = CODEC.message(cmd)
    assert msg.count == body["count"] == 1 and msg.first_entry_index == body["firstEntryIndex"]


@pytest.mark.parametrize("release", ["4.9.5", "5.3.3"])
def test_header_frames_are_the_ones_rocketmqs_own_classes_encode(release):
    frames = json.loads((DATA / f"headers-{release}.json").read_text())["frames"]
    cases = dict(header_cases()[release])
    assert [f["name"] for f in frames] == list(cases)
    codec = RemotingCodec(ALL_FAMILIES)
    for frame in frames:
        java = parse_frame(base64.b64decode(frame["java"]))
        ours = codec.command(cases[frame["name"]], opaque=7)
        if java.ext_fields is not None:
            java.ext_fields.pop("invokeTime", None)  # the JRaft controller's; the kit does not send it
        assert encode_command(ours) == encode_command(java), frame["name"]
        if not java.is_response:
            assert codec.message(java) == cases[frame["name"]], frame["name"]
