"""The send path against the real RocketMQ 4.9.5 broker: the same SEND_MESSAGE_V2, SEND_BATCH_MESSAGE,
CONSUMER_SEND_MSG_BACK and UPDATE_AND_CREATE_TOPIC requests (the kit's encoder) to the real broker
(``brokeroracle.NamesrvMain``/``BrokerMain`` of ``ROCKETLAB_JAVA_BROKER``) and to a ``rocketlab node`` broker, one connection each: the same
answers, and the same stored records, byte for byte, except the fields that cannot match: the store
timestamp, the born host's port (each connection's own), the store host's port (each broker's own listen
port, asserted) and, where a property carries an offset message id (ORIGIN_MESSAGE_ID), that broker's store
host in it; and the same consume queues (a SCHEDULE_TOPIC_XXXX unit's tagsCode is its delivery time on
both: store time + the delay). Delayed messages (``messageDelayLevel=2s``: one level, so every delay is capped to it) are
delivered by both before they stop.

The real name server and broker: started from the class path ``ROCKETLAB_JAVA_BROKER`` by the kit's own
launcher (:class:`rocketlab.oracle.broker_group.Backend`); without it the test skips (fails under CI=true).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import struct
import time
import zlib
from pathlib import Path

import pytest

from rocketlab.broker.protocol import SendMessageRequest, broker_codec
from rocketlab.broker.send_protocol import ConsumerSendMsgBackRequest, CreateTopicRequest
from rocketlab.net.client import NetClient
from rocketlab.oracle.broker_group import Backend
from rocketlab.store.message import Message, pack_host
from rocketlab.store.message_batch import pack_messages
from rocketlab.store.message_codec import decode_messages
from tests.oracle.conftest import need_broker_java
from tests.realnodes import free_port, start_node

pytestmark = pytest.mark.realnet


def _p(**kv: str) -> str:
    return "\x02".join(f"{k}\x01{v}" for k, v in kv.items())


BATCH = pack_messages([Message("TopicA", b"b1", properties={"UNIQ_KEY": "U1", "TAGS": "t"}),
                       Message("TopicA", "二".encode(), properties={"UNIQ_KEY": "U2", "k": "v"}, flag=3)])
REQUESTS = [
    SendMessageRequest("TopicA", b"hello", 0, born_timestamp=1700000000000, v2=True,
                       properties_string=_p(KEYS="k1 k2", UNIQ_KEY="7F0000010001", WAIT="true", TAGS="TagA",
                                            color="红色", a="1", b="2", c="3", d="4", e="5", f="6", g="7")),
    SendMessageRequest("TopicA", zlib.compress(b"x" * 5000), 1, born_timestamp=1700000000001, sys_flag=1, flag=5,
                       v2=True, properties_string=_p(UNIQ_KEY="7F0000010002", WAIT="true")),
    SendMessageRequest("TopicA", BATCH, 2, born_timestamp=1700000000002, batch=True, properties_string=_p(WAIT="true")),
    SendMessageRequest("TopicA", b"later", 3, born_timestamp=1700000000003, v2=True,
                       properties_string=_p(UNIQ_KEY="7F0000010003", DELAY="2", WAIT="false")),
    SendMessageRequest("TopicB", b"one", 0, born_timestamp=1700000000004, properties_string=_p(TAGS="x")),
    SendMessageRequest("bad topic", b"x", 0, v2=True),
    SendMessageRequest("SCHEDULE_TOPIC_XXXX", b"x", 0, v2=True),
    SendMessageRequest("TopicA", b"x", 99, v2=True),
    SendMessageRequest("TopicA", b"x" * (4 * 1024 * 1024 + 1), 0, v2=True),
    ConsumerSendMsgBackRequest(0, "G1", 0),
    ConsumerSendMsgBackRequest(0, "G1", -1),
    ConsumerSendMsgBackRequest(999999, "G1", 0),
    CreateTopicRequest("SELF_TEST_TOPIC"),
    CreateTopicRequest("bad topic"),
    CreateTopicRequest("NewT", 2, 3),
    CreateTopicRequest("TBW102"),
    SendMessageRequest("%RETRY%G2", b"r", 0, v2=True, reconsume_times=16, properties_string=_p(DELAY="5")),
    SendMessageRequest("%RETRY%G2", b"s", 0, v2=True, reconsume_times=1, properties_string=_p(UNIQ_KEY="R2")),
]


async def _send_all(port: int) -> tuple[list[tuple], int]:
    client = await NetClient(("127.0.0.1", port), broker_codec()).connect()
    local_port = client.writer.get_extra_info("sockname")[1]
    answers = []
    deadline = time.monotonic() + 30
    first = await client.request(REQUESTS[0], 20)
    while first.status == "SERVICE_NOT_AVAILABLE":  # a DLedger group still electing: not stored, asked again
        assert time.monotonic() < deadline, "no master"
        await asyncio.sleep(0.2)
        first = await client.request(REQUESTS[0], 20)
    for req in REQUESTS:
        if isinstance(req, ConsumerSendMsgBackRequest) and req.offset == 0:  # the first message (DLedger: at 48)
            req = dataclasses.replace(req, offset=first.phy_offset)
        got = first if req is REQUESTS[0] else await client.request(req, 20)
        fields = dataclasses.asdict(got)
        if fields.get("remark"):
            fields["remark"] = fields["remark"].replace(f"127.0.0.1:{local_port}", "127.0.0.1:<client>")
        answers.append((type(got).__name__, fields.pop("msg_id", None), sorted(fields.items())))
    await client.close()
    return answers, local_port


def _masked(record: bytes, store_port: int) -> bytes:
    """Store timestamp, born and store host ports zeroed; this broker's store host in any offset message id
    in the properties replaced."""
    raw = bytearray(record)
    raw[52:56] = bytes(4)  # BORNHOST port
    raw[56:64] = bytes(8)  # STORETIMESTAMP
    raw[68:72] = bytes(4)  # STOREHOSTADDRESS port
    own = pack_host(("127.0.0.1", store_port)).hex().upper().encode()
    return bytes(raw).replace(own, b"<STORE_HOST_HEX>")


def _records(store: Path) -> dict[int, bytes]:
    """Commit-log offset -> record, up to the first unwritten byte of the first file: a classic commit log,
    or the entries of a DLedger log (each record is an entry's body, at the entry's position + 48)."""
    dledger = store / "dledger-n0" / "data" / "00000000000000000000"
    path, head, size_at = (dledger, 48, 4) if dledger.exists() else (store / "commitlog" / "00000000000000000000", 0, 0)
    with open(path, "rb") as f:
        data = f.read(8 << 20)
    out, pos = {}, 0
    while pos + 8 <= len(data) and (size := int.from_bytes(data[pos + size_at:pos + size_at + 4], "big")) > 0:
        out[pos + head] = data[pos + head:pos + size]
        pos += size
    return out


def _consume_queues(store: Path, records: dict[int, bytes]) -> dict[tuple[str, str], list[tuple[int, int, int]]]:
    """Every consume queue's units; a SCHEDULE_TOPIC_XXXX unit's tagsCode (its delivery time) checked against
    its record's store time + 2 s and then left out."""
    store_time = {phy: int.from_bytes(record[56:64], "big") for phy, record in records.items()}
    out = {}
    for queue in sorted((store / "consumequeue").glob("*/*")):
        data = (queue / "00000000000000000000").read_bytes()
        units = []
        for i in range(0, len(data), 20):
            phy, size, tags = struct.unpack_from(">qiq", data, i)
            if (phy, size, tags) == (0, 0, 0) and i > 0:
                break
            if queue.parent.name == "SCHEDULE_TOPIC_XXXX":
                assert tags == store_time[phy] + 2000, (queue, phy)
                tags = 0
            units.append((phy, size, tags))
        out[(queue.parent.name, queue.name)] = units
    return out


@pytest.mark.parametrize("kind", ["classic", pytest.param("dledger", marks=pytest.mark.slow)])
def test_the_kit_broker_answers_and_stores_sends_as_the_real_4_9_5_broker(tmp_path, kind):
    """``classic``: an ASYNC_MASTER; ``dledger``: a DLedger group of one (enableDLegerCommitLog; ROCKETLAB_FULL)."""
    java = need_broker_java()
    kit_port = free_port()
    dledger = ["enableDLegerCommitLog=true", "dLegerGroup=broker-a", "dLegerSelfId=n0"] if kind == "dledger" else []
    java_peers = [f"dLegerPeers=n0-127.0.0.1:{free_port()}"] if dledger else []
    backend = Backend("java", tmp_path / "java", java, broker_extra=dict(
        kv.split("=", 1) for kv in ["messageDelayLevel=2s", "mappedFileSizeCommitLog=10485760", *dledger, *java_peers]))
    backend.start()
    java_dir, java_port = backend.workdir / "broker-a", backend.servers["broker-a"].port
    conf = tmp_path / "kit.conf"
    conf.write_text(f"nodeKind=broker\nselfId=n0\npeers=n0-127.0.0.1:{kit_port}\nrunDir={tmp_path / 'run'}\n"
                    f"storePathRootDir={tmp_path / 'kit'}\nmappedFileSizeCommitLog=10485760\nmessageDelayLevel=2s\n"
                    + "".join(f"{kv}\n" for kv in dledger))
    try:
        kit = start_node(conf, "n0")
    except BaseException:
        backend.kill()
        raise
    try:
        java_answers, java_client = asyncio.run(_send_all(java_port))
        kit_answers, kit_client = asyncio.run(_send_all(kit_port))
        deadline = time.monotonic() + 15  # level 1 (2 s, after every send): both deliver what waits
        while time.monotonic() < deadline and min(len(_records(java_dir / "store")), len(_records(tmp_path / "kit"))) < 13:
            time.sleep(0.2)
    finally:
        kit.send_signal(signal.SIGTERM)
        kit.wait(timeout=20)
        backend.stop()
    # the answers, shown for RocketMQ and then for the kit
    statuses = [a[2] for a in java_answers]
    assert dict(statuses[0])["status"] == "PUT_OK" and dict(statuses[6])["code"] == 16  # NO_PERMISSION
    assert dict(statuses[8])["status"] == "MESSAGE_ILLEGAL"
    assert [a[2] for a in kit_answers] == statuses
    for (_, java_id, _), (_, kit_id, _) in zip(java_answers, kit_answers, strict=True):
        assert (java_id is None) == (kit_id is None)
        if java_id is not None:  # the offset message id: each broker's own address, then the same offsets
            assert java_id.replace(pack_host(("127.0.0.1", java_port)).hex().upper(), "*") == \
                kit_id.replace(pack_host(("127.0.0.1", kit_port)).hex().upper(), "*")
    # the stored records
    java_by_offset, kit_by_offset = _records(java_dir / "store"), _records(tmp_path / "kit")
    assert list(java_by_offset) == list(kit_by_offset)  # the same commit-log offsets
    java_records, kit_records = list(java_by_offset.values()), list(kit_by_offset.values())
    topics = [m.topic for m in decode_messages(b"".join(java_records))]
    assert topics.count("SCHEDULE_TOPIC_XXXX") == 3 and topics.count("TopicA") == 5  # 2 + 2 in the batch + 1 due
    assert {"%RETRY%G1", "%DLQ%G1", "%DLQ%G2", "%RETRY%G2"} <= set(topics) and len(topics) == 13
    assert len(kit_records) == len(java_records)
    for java_record, kit_record in zip(java_records, kit_records, strict=True):
        j, k = next(decode_messages(java_record)), next(decode_messages(kit_record))
        assert j.store_host == ("127.0.0.1", java_port) and k.store_host == ("127.0.0.1", kit_port)
        assert j.born_host[0] == k.born_host[0] == "127.0.0.1"
        assert _masked(kit_record, kit_port) == _masked(java_record, java_port), (j, k)
    java_queues = _consume_queues(java_dir / "store", java_by_offset)
    assert java_queues[("SCHEDULE_TOPIC_XXXX", "0")] and java_queues[("%DLQ%G2", "0")]
    assert _consume_queues(tmp_path / "kit", kit_by_offset) == java_queues
