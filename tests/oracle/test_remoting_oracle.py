"""The wire, judged live by the real Java (the stored frames of ``tests/data/remoting`` came from here):

* every frame a real DLedger 0.3.1.2 group and its DLedgerClient send, captured through relays, decodes and
  re-encodes byte for byte with ours (each response as the answer to its request);
* RocketMQ's own RemotingCommand and header classes (4.9.5 and 5.3.3) encode each header-carrying message
  of the kit to the bytes ours writes (controller requests aside from ``invokeTime``), and decode ours back
  to the same fields;
* Java's fastjson (the oracle's) reads each DLedger body we write as the class it is and writes it back as
  we wrote it, getters included."""

from __future__ import annotations

import base64
import json

import pytest

from rocketlab.dledger.codec import RESPONSE_OF, DLedgerCodec
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.protocol import (
    AppendEntryResponse,
    HeartBeatRequest,
    LeadershipTransferRequest,
    MetadataResponse,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    VoteRequest,
    VoteResponse,
    VoteResult,
)
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.oracle.frames import (
    capture_dledger_group,
    exchanges,
    header_cases,
    header_class,
    java_header_frames,
)
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import encode_command, parse_frame

pytestmark = pytest.mark.realnet
CODEC = DLedgerCodec()


def test_a_live_java_dledger_groups_frames_all_decode_and_re_encode(tmp_path, oracle4):
    frames = capture_dledger_group(oracle4, tmp_path)
    pairs = exchanges(frames)
    kinds = set()
    for request, response in pairs:
        cmd = parse_frame(request.raw)
        msg = CODEC.message(cmd)
        kinds.add(type(msg).__name__)
        assert encode_command(CODEC.command(msg, cmd.opaque)) == request.raw
        if response is not None:
            answer_cmd = parse_frame(response.raw)
            answer = CODEC.message(answer_cmd, answers=msg)
            assert encode_command(CODEC.command(answer, answer_cmd.opaque)) == response.raw
    assert {"VoteRequest", "HeartBeatRequest", "PushEntryRequest", "AppendEntryRequest"} <= kinds
    assert sum(r is not None for _, r in pairs) >= len(pairs) - 3  # a few in flight at the stop


@pytest.mark.parametrize("release", ["4.9.5", "5.3.3"])
def test_rocketmqs_header_classes_encode_our_bytes_and_decode_our_frames(tmp_path, release):
    from .conftest import need_oracle

    oracle = need_oracle(release)
    codec = RemotingCodec(ALL_FAMILIES)
    for case in java_header_frames(oracle, tmp_path):
        java = parse_frame(base64.b64decode(case["java"]))
        if java.ext_fields is not None:
            java.ext_fields.pop("invokeTime", None)
        assert encode_command(java) == base64.b64decode(case["ours"]), case["name"]
    cases = dict(header_cases()[release])
    with oracle.start(tmp_path, name=f"decode-{release}") as proc:
        for name, msg in cases.items():
            cls = header_class(msg, release)
            if cls is None:
                continue
            cmd = codec.command(msg, opaque=9)
            got = proc.request("remotingDecode", frame=base64.b64encode(encode_command(cmd)).decode(), headerClass=cls)
            assert (got["code"], got["flag"], got["opaque"]) == (cmd.code, cmd.flag, 9), name
            fields = {k: v for k, v in got["header"].items() if v is not None}
            assert {k: v for k, v in fields.items() if k in (cmd.ext_fields or {})} == (cmd.ext_fields or {}), name


BODIES = [
    VoteRequest(group="g", remote_id="n1", local_id="n0", leader_id="n0", term=4, ledger_end_index=9, ledger_end_term=3),
    VoteResponse(group="g", remote_id="n0", local_id="n1", term=4, vote_result=VoteResult.REJECT_TERM_NOT_READY),
    HeartBeatRequest(group="g", remote_id="n1", local_id="n0", leader_id="n0", term=4),
    PushEntryRequest(group="g", remote_id="n1", local_id="n0", leader_id="n0", term=4, commit_index=7,
                     type=PushType.APPEND, entry=DLedgerEntry(magic=1, size=53, index=8, term=4, pos=424, body="\x00é".encode())),
    PushEntryRequest(group="g", remote_id="n1", local_id="n0", leader_id="n0", term=4, commit_index=7,
                     type=PushType.APPEND, batch_entry=(DLedgerEntry(magic=1, size=49, index=8, term=4, pos=0, body=b"a"),
                                                        DLedgerEntry(magic=1, size=49, index=9, term=4, pos=49,
                                                                     body=b"b")), total_size=98),
    PushEntryResponse(group="g", remote_id="n0", local_id="n1", term=4, index=8, begin_index=0, end_index=8, count=1),
    AppendEntryResponse(group="g", term=4, leader_id="n0", index=8, pos=424),
    MetadataResponse(group="g", leader_id="n0", peers={"n0": "h:1", "n1": "h:2", "n2": "h:3", "n10": "h:4"}),
    LeadershipTransferRequest(group="g", remote_id="n0", term=4, transfer_id="n0", transferee_id="n2",
                              take_leadership_ledger_index=8),
]


def test_javas_fastjson_reads_our_dledger_bodies_as_their_classes_and_writes_them_back_the_same(tmp_path, oracle4):
    with oracle4.start(tmp_path, name="fastjson") as proc:
        for msg in BODIES:
            body = parse_frame(CODEC.encode(msg)).body
            cls = "io.openmessaging.storage.dledger.protocol." + type(msg).__name__
            back = base64.b64decode(proc.request("remotingJson", **{"class": cls,
                                                                    "json": base64.b64encode(body).decode()})["json"])
            assert back == body, (type(msg).__name__, back, body)
            request = next((r for r, a in RESPONSE_OF.items() if a is type(msg)), None)
            assert json.loads(back) == json.loads(body) and (request is None or CODEC.decode(
                CODEC.encode(msg), request) == msg)
