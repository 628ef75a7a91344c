"""The CommitLog record, byte for byte (MessageExtEncoder / MessageDecoder / checkMessageAndReturnSize)."""

from __future__ import annotations

import socket
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlab.errors import CodecError
from rocketlab.store import Message, MessageSysFlag, PutMessageStatus
from rocketlab.store.message import (
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    java_string_hash,
    message_properties_to_string,
    pack_host,
    string_to_message_properties,
)
from rocketlab.store.message_batch import MessageExtBatch, pack_messages, unpack_messages
from rocketlab.store.message_codec import (
    check_message_and_return_size,
    create_message_id,
    decode_message,
    decode_message_id,
    decode_messages,
    encode_message,
)
from rocketlab.store.message_ext_encoder import MessageExtEncoder, MessageRejected
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, cal_msg_length, encode_blank, stamp_record
from tests.store.helpers import GOLDEN_BODY, golden_message

STORE_HOST = ("127.0.0.1", 8123)


GOLDEN_SIZE = {"4.9.5": 157, "5.3.3": 158}
"""The golden record's size per release: 5.2.0 and later keep the separator after the last property."""


def golden_bytes_by_hand(queue_offset: int, phy: int, store_ts: int, release: str = "4.9.5") -> bytes:
    """The golden record (157 bytes in 4.9.5, 158 in 5.3.3) built field by field from the digest's table,
    independent of the codec; the real stores of both releases write exactly these bytes (tests/oracle)."""
    props = b"KEYS\x011700000000000\x02TAGS\x01TAG1" + (b"\x02" if release == "5.3.3" else b"")
    host = bytes([127, 0, 0, 1]) + (8123).to_bytes(4, "big")
    fields = [
        GOLDEN_SIZE[release].to_bytes(4, "big"),
        bytes.fromhex("DAA320A7"),
        (151131488).to_bytes(4, "big"),
        (0).to_bytes(4, "big"),  # queue id
        (0).to_bytes(4, "big"),  # flag
        queue_offset.to_bytes(8, "big"),
        phy.to_bytes(8, "big"),
        (0).to_bytes(4, "big"),  # sysflag
        (1_700_000_000_000).to_bytes(8, "big"),
        host,
        store_ts.to_bytes(8, "big"),
        host,
        (0).to_bytes(4, "big"),  # reconsume times
        (0).to_bytes(8, "big"),  # prepared transaction offset
        (32).to_bytes(4, "big"),
        GOLDEN_BODY,
        bytes([6]),
        b"FooBar",
        len(props).to_bytes(2, "big"),
        props,
    ]
    return b"".join(fields)


@pytest.mark.parametrize("release", ["4.9.5", "5.3.3"])
def test_golden_record_of_each_release(release):
    raw = encode_message(golden_message(), store_host=STORE_HOST, queue_offset=3, physical_offset=474,
                         store_timestamp=1_700_000_000_123, rocketmq_version=release)
    size = GOLDEN_SIZE[release]
    assert len(raw) == size
    assert raw == golden_bytes_by_hand(3, 474, 1_700_000_000_123, release)
    assert zlib.crc32(GOLDEN_BODY) & 0x7FFFFFFF == 151131488
    assert struct.unpack_from(">i", raw, 84)[0] == 32  # the body length sits after the 84-byte prefix
    assert cal_msg_length(0, 32, 6, size - 129) == size

    m = decode_message(raw, check_crc=True)
    assert (m.topic, m.body, m.queue_offset, m.commit_log_offset) == ("FooBar", GOLDEN_BODY, 3, 474)
    assert m.properties == {"KEYS": "1700000000000", "TAGS": "TAG1"}
    assert m.store_timestamp == 1_700_000_000_123 and m.born_host == STORE_HOST and m.store_host == STORE_HOST
    assert m.body_crc == 151131488 and m.store_size == size and m.version == 1


@pytest.mark.parametrize("release, max_offset", [("4.9.5", 1570), ("5.3.3", 1580)])
def test_ten_golden_messages_leave_max_offset(open_store, release, max_offset):
    """5.3.3's ReputMessageServiceTest: 10 such messages -> max phy offset 1580 (1570 in 4.9.5)."""
    store = open_store(broker_ip1="127.0.0.1", listen_port=8123, mapped_file_size_commit_log=64 * 1024,
                       rocketmq_version=release)
    for _ in range(10):
        assert store.put_message(golden_message()).status is PutMessageStatus.PUT_OK
    assert store.get_max_phy_offset() == max_offset


def test_java_string_hash_matches_java():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("TAG1") == 84 * 31**3 + 65 * 31**2 + 71 * 31 + 49 == 2567159
    assert java_string_hash("polygenelubricants") == -(2**31)  # wraps to Integer.MIN_VALUE
    assert java_string_hash("\U0001f600") == 55357 * 31 + 56832  # surrogate pair, UTF-16 code units
    assert java_string_hash("é") == 233


def test_properties_string_and_lenient_parse():
    text = message_properties_to_string({"KEYS": "k1 k2", "TAGS": "A", "none": None})
    assert text == "KEYS\x01k1 k2\x02TAGS\x01A"  # 4.x: the separator after the last property deleted
    kept = message_properties_to_string({"KEYS": "k1 k2", "TAGS": "A"}, last_separator=True)
    assert kept == text + "\x02"  # 5.2.0 on
    assert string_to_message_properties(text) == string_to_message_properties(kept) == {"KEYS": "k1 k2", "TAGS": "A"}
    assert message_properties_to_string({}, last_separator=True) == ""
    # fragments shorter than 3 chars, without \x01, with an empty name or value are skipped, as in Java
    assert string_to_message_properties("a\x02\x01x\x02k\x01\x02ok\x01v\x02nosep\x02") == {"ok": "v"}


@pytest.mark.parametrize(
    "props, release, status",
    [
        ({"a": "x\x01y"}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        ({"a\x02": "v"}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        ({"": "v"}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        ({"k": ""}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        ({"k": "v", "z": ""}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        # 4.x's checkMessage counts UTF-16 chars first (MESSAGE_ILLEGAL), the encoder UTF-8 bytes
        ({"k": "v" * 32767}, "4.9.5", PutMessageStatus.MESSAGE_ILLEGAL),
        ({"k": "é" * 16383}, "4.9.5", PutMessageStatus.PROPERTIES_SIZE_EXCEEDED),
        ({"k": "v" * 32767}, "5.3.3", PutMessageStatus.PROPERTIES_SIZE_EXCEEDED),
    ],
)
def test_encoder_rejects_properties_that_would_not_survive(props, release, status):
    with pytest.raises(MessageRejected) as info:
        MessageExtEncoder(4 << 20, STORE_HOST, rocketmq_version=release).encode(Message("T", b"x", properties=props), 0)
    assert info.value.status is status


def test_stamp_record_fills_the_placeholders():
    buf = MessageExtEncoder(4 << 20, STORE_HOST).encode(golden_message(), 0)
    assert struct.unpack_from(">qq", buf, 20) == (0, 0)
    stamp_record(buf, 3, 474, 1_700_000_000_123)
    assert bytes(buf) == golden_bytes_by_hand(3, 474, 1_700_000_000_123)


def test_v2_record_for_long_topic_only_when_enabled():
    topic = "t" * 200
    with pytest.raises(MessageRejected) as info:
        MessageExtEncoder(4 << 20, STORE_HOST, auto_message_version_on_topic_len=False).encode(Message(topic, b"x"), 0)
    assert info.value.status is PutMessageStatus.MESSAGE_ILLEGAL and "127" in str(info.value)
    raw = encode_message(Message(topic, b"x"), auto_message_version_on_topic_len=True)
    assert struct.unpack_from(">i", raw, 4)[0] == MESSAGE_MAGIC_CODE_V2
    assert struct.unpack_from(">h", raw, 88 + 1)[0] == 200  # 2-byte topic length after the body
    assert len(raw) == cal_msg_length(0, 1, 200, 0, version=2)
    m = decode_message(raw)
    assert m.topic == topic and m.version == 2
    short = encode_message(Message("t" * 127, b"x"))
    assert struct.unpack_from(">i", short, 4)[0] == MESSAGE_MAGIC_CODE


def test_ipv6_hosts_set_sysflag_and_widen_the_record():
    msg = golden_message()
    msg.born_host = ("2001:db8::1", 9876)
    raw = encode_message(msg, store_host=("::1", 10911), store_timestamp=42)
    sys_flag = struct.unpack_from(">i", raw, 36)[0]
    assert sys_flag & MessageSysFlag.BORNHOST_V6_FLAG and sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    assert len(raw) == GOLDEN_SIZE["4.9.5"] + 12 + 12
    assert struct.unpack_from(">q", raw, 68)[0] == 42  # STORETIMESTAMP moves to 68 with an IPv6 born host
    m = decode_message(raw)
    assert m.born_host == ("2001:db8::1", 9876) and m.store_host == ("::1", 10911)
    assert len(m.msg_id) == 56


def test_host_flags_come_from_the_hosts_not_the_caller():
    msg = Message("T", b"x", sys_flag=MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)
    m = decode_message(encode_message(msg))
    assert m.sys_flag & 0x30 == 0 and m.born_host == ("127.0.0.1", 0)


def test_blank_record_and_message_id():
    assert encode_blank(1000) == (1000).to_bytes(4, "big") + bytes.fromhex("CBD43194")
    assert struct.unpack(">i", bytes.fromhex("CBD43194"))[0] == BLANK_MAGIC_CODE
    req = check_message_and_return_size(encode_blank(1000) + bytes(992), 0, 1000)
    assert req.success and req.msg_size == 0
    with pytest.raises(CodecError):
        decode_message(encode_blank(1000))
    msg_id = create_message_id(pack_host(("10.0.0.7", 10911)), 1580)
    assert msg_id == "0A00000700002A9F000000000000062C"
    assert decode_message_id(msg_id) == (("10.0.0.7", 10911), 1580)
    assert decode_message_id(create_message_id(pack_host(("fe80::1", 1)), 7)) == (("fe80::1", 1), 7)
    with pytest.raises(CodecError):
        decode_message_id("zz")


def test_check_message_classifies_torn_mismatched_and_corrupt_records():
    raw = bytearray(encode_message(golden_message()))
    size = GOLDEN_SIZE["4.9.5"]
    ok = check_message_and_return_size(raw, 0, len(raw))
    assert ok.success and ok.msg_size == size and ok.topic == "FooBar" and ok.keys == "1700000000000"
    assert ok.tags_code == java_string_hash("TAG1")
    torn = check_message_and_return_size(raw, 0, 100)
    assert not torn.success and torn.msg_size == -1 and str(size) in torn.reason
    crc = bytearray(raw)
    crc[100] ^= 0xFF
    bad_crc = check_message_and_return_size(crc, 0, len(crc), check_crc=True)
    assert not bad_crc.success and bad_crc.msg_size == size and "CRC" in bad_crc.reason
    assert check_message_and_return_size(crc, 0, len(crc), check_crc=False).success  # the reput does not check
    topic_len = bytearray(raw)
    topic_len[120] = 7  # damaged topic length: the recomputed length differs from TOTALSIZE
    mismatch = check_message_and_return_size(topic_len, 0, len(topic_len), check_crc=False)
    assert not mismatch.success and mismatch.msg_size == size
    magic = bytearray(raw)
    magic[4:8] = b"\x00\x00\x00\x01"
    assert check_message_and_return_size(magic, 0, len(magic)).msg_size == -1
    misplaced = check_message_and_return_size(raw, 0, len(raw), expected_offset=999)
    assert not misplaced.success and "PHYSICALOFFSET" in misplaced.reason


def test_decode_messages_walks_a_buffer_until_a_blank():
    records = [encode_message(golden_message(keys=str(i)), physical_offset=GOLDEN_SIZE["4.9.5"] * i)
               for i in range(3)]
    buf = b"".join(records) + encode_blank(50) + bytes(42)
    assert [m.keys for m in decode_messages(buf)] == ["0", "1", "2"]


def test_producer_batch_packing_round_trip():
    msgs = [Message("B", bytes([i]) * i, tags=f"t{i}", flag=i) for i in range(5)]
    body = pack_messages(msgs)
    back = unpack_messages(body)
    assert [(m.body, m.tags, m.flag) for m in back] == [(m.body, m.tags, m.flag) for m in msgs]
    batch = MessageExtBatch.from_messages(msgs)
    batch.properties = {"BATCH": "yes"}
    encoded, starts = MessageExtEncoder(4 << 20, STORE_HOST).encode_batch(batch, 5)
    decoded = [decode_message(encoded, s, check_crc=True) for s in starts]
    assert [m.body for m in decoded] == [m.body for m in msgs]
    assert decoded[3].properties == {"TAGS": "t3", "BATCH": "yes"} and decoded[3].flag == 3
    with pytest.raises(CodecError):
        MessageExtBatch.from_messages([Message("A", b""), Message("B", b"")])


# ------------------------------------------------------------------------------ properties ----
_text = st.text(
    alphabet=st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)), min_size=1, max_size=20
)
_ipv4 = st.ip_addresses(v=4).map(str)
_ipv6 = st.ip_addresses(v=6).map(lambda a: socket.inet_ntop(socket.AF_INET6, a.packed))  # canonical as read back
_host = st.tuples(st.one_of(_ipv4, _ipv6), st.integers(0, 65535))
_int32 = st.integers(-(2**31), 2**31 - 1)
_int64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def messages(draw):
    topic = draw(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60).filter(
            lambda t: len(t.encode()) <= 127
        )
    )
    return Message(
        topic,
        draw(st.binary(max_size=600)),
        draw(_int32),
        properties=draw(st.dictionaries(_text, _text, max_size=5)),
        flag=draw(_int32),
        born_timestamp=draw(_int64),
        born_host=draw(_host),
        sys_flag=draw(st.sampled_from([0, 0x1, 0x2, 0x4, 0x8, 0xC])),
        reconsume_times=draw(_int32),
        prepared_transaction_offset=draw(_int64),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msg=messages(), store_host=_host, queue_offset=_int64, phy=_int64, store_ts=_int64)
def test_round_trip_arbitrary_messages(msg, store_host, queue_offset, phy, store_ts):
    raw = encode_message(
        msg, store_host=store_host, queue_offset=queue_offset, physical_offset=phy, store_timestamp=store_ts
    )
    m = decode_message(raw, check_crc=True)
    assert (m.topic, m.body, m.queue_id, m.flag, m.properties) == (
        msg.topic,
        msg.body,
        msg.queue_id,
        msg.flag,
        msg.properties,
    )
    assert (m.born_timestamp, m.born_host, m.store_host) == (msg.born_timestamp, msg.born_host, store_host)
    assert (m.queue_offset, m.commit_log_offset, m.store_timestamp) == (queue_offset, phy, store_ts)
    assert (m.reconsume_times, m.prepared_transaction_offset) == (msg.reconsume_times, msg.prepared_transaction_offset)
    assert m.sys_flag & 0xF == msg.sys_flag and m.store_size == len(raw)
    assert check_message_and_return_size(raw, 0, len(raw), expected_offset=phy).success


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), offset=st.integers(0, 20))
def test_random_bytes_raise_only_codec_errors(data, offset):
    try:
        decode_message(data, offset, check_crc=True)
    except CodecError as exc:
        assert exc.offset == offset
    req = check_message_and_return_size(data, offset, len(data))
    assert isinstance(req.success, bool)


@settings(max_examples=100, deadline=None)
@given(msg=messages(), data=st.data())
def test_truncated_or_flipped_records_raise_codec_errors(msg, data):
    raw = encode_message(msg)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(CodecError) as info:
        decode_message(raw[:cut])
    assert info.value.offset == 0
    flipped = bytearray(raw)
    pos = data.draw(st.integers(0, len(raw) - 1))
    flipped[pos] ^= data.draw(st.integers(1, 255))
    try:
        decode_message(bytes(flipped), check_crc=True)
    except CodecError as exc:
        assert exc.offset == 0
