"""Bad input on the name server, the kit's beside the real 4.9.5 one: the answer to each malformed request
(SYSTEM_ERROR for a body or a header value that cannot be read), the connection closed on garbage, an
oversized or a truncated frame, and nothing registered before lost.

Where 4.9.5 answers otherwise, the kit's answer is a named difference (``rocketlab.namesrv.namesrv_controller``):
4.9.5 logs a missing ``@CFNotNull`` header field and goes on with null (it registers a broker named null,
unregisters nothing, finds no route for a null topic), where the kit refuses the request with SYSTEM_ERROR
and stores nothing; and it leaves a code it does not serve unanswered (its default processor returns null, the
client times out), where the kit answers REQUEST_CODE_NOT_SUPPORTED."""

from __future__ import annotations

import asyncio
import struct
import zlib

import pytest

from rocketlab.namesrv.protocol import V4_9_5, GetBrokerClusterInfoRequest, RegisterBrokerRequest, crc32
from rocketlab.namesrv.route import RegisterBrokerBody, topic_config
from rocketlab.net.client import NetClient
from rocketlab.remoting.command import RemotingCommand, encode_command
from tests.badframes import answers, broken_frames

pytestmark = pytest.mark.realnet

GOOD = {"brokerName": "bad-input-b", "brokerAddr": "127.0.0.1:61001", "clusterName": "BadC",
        "haServerAddr": "127.0.0.1:61002", "brokerId": "0", "compressed": "false", "bodyCrc32": "0"}


def cmd(code: int, opaque: int, ext: dict[str, str] | None = None, body: bytes | None = None) -> bytes:
    return encode_command(RemotingCommand(code, opaque=opaque, ext_fields=ext, body=body, version=V4_9_5))


MALFORMED = {  # name -> (frame); each answered, the connection left open
    "JSON body cut short": cmd(103, 1, GOOD, b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"X":'),
    "JSON body of the wrong shape": cmd(103, 2, GOOD, b'{"topicConfigSerializeWrapper":{"topicConfigTable":[1,2]}}'),
    "compressed flag on a plain body": cmd(103, 3, {**GOOD, "compressed": "true"}, b'{"filterServerList":[]}'),
    "deflated body cut short": cmd(103, 4, {**GOOD, "compressed": "true"}, zlib.compress(struct.pack(">i", 50))),
    "brokerName missing": cmd(103, 5, {k: v for k, v in GOOD.items() if k != "brokerName"}, b"{}"),
    "brokerId not a number": cmd(103, 6, {**GOOD, "brokerId": "zero"}, b"{}"),
    "body CRC wrong": cmd(103, 7, {**GOOD, "bodyCrc32": str(crc32(b"{}") ^ 1)}, b"{}"),
    "topic missing": cmd(105, 8, {}),
    "brokerAddr missing on unregister": cmd(104, 9, {"brokerName": "x", "clusterName": "y", "brokerId": "0"}),
    "unknown code": cmd(9999, 10, {}),
}


JAVA_ANSWERS = {name: 1 for name in MALFORMED} | {
    "brokerName missing": 0, "topic missing": 17, "brokerAddr missing on unregister": 0, "unknown code": None}
KIT_DIFFERENCES = {"brokerName missing": 1, "topic missing": 1, "brokerAddr missing on unregister": 1,
                   "unknown code": 3}


async def session(port: int) -> dict:
    keeper = await NetClient(("127.0.0.1", port)).connect()  # a broker registered before: it must stay
    body = RegisterBrokerBody({"Kept": topic_config("Kept", 2, 2)}, {"counter": 1, "timestamp": 1})
    assert (await keeper.request(RegisterBrokerRequest("BadC", "127.0.0.1:61011", "keeper", 0, "h", body))).code == 0
    codes = dict(zip(MALFORMED, await answers(port, list(MALFORMED.values())), strict=True))
    closed = await broken_frames(port, cmd(103, 11, GOOD, b"{}"))
    await asyncio.sleep(0.3)
    cluster = (await keeper.request(GetBrokerClusterInfoRequest())).cluster_info.decoded()
    await keeper.close()
    return {"codes": codes, "closed": closed, "kept": "keeper" in cluster["clusterAddrTable"].get("BadC", ()),
            "BadC": sorted(str(n) for n in cluster["clusterAddrTable"].get("BadC", ()))}


def test_rocketmq_answers_malformed_requests_and_frames_so(both):
    java = asyncio.run(session(both[0]))
    assert java["codes"] == JAVA_ANSWERS and all(java["closed"].values()) and java["kept"]
    assert java["BadC"] == ["None", "keeper"]  # 4.9.5 registered a broker named null


def test_the_kit_answers_them_alike_but_for_the_named_differences_and_loses_nothing(kit_namesrv):
    kit = asyncio.run(session(kit_namesrv))
    assert kit["codes"] == JAVA_ANSWERS | KIT_DIFFERENCES and all(kit["closed"].values()) and kit["kept"]
    assert kit["BadC"] == ["keeper"]  # nothing but the good registration stored
