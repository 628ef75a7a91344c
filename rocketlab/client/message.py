"""Messages as a RocketMQ 4.9.5 client makes and reads them: queues, unique ids, batches, compression, pulled records.

* :class:`MessageQueue` (``common/message/MessageQueue``): topic, broker name, queue id; ordered as Java's
  ``compareTo`` (the order rebalancing sorts by);
* :class:`Message` (``common/message/Message``): topic, body, flag and properties (TAGS, KEYS, WAIT and the user's);
* :class:`MessageClientIDSetter`: ``UNIQ_KEY``, the client's message id: 4 bytes of IP, 2 of pid, 4 of a
  class-loader hash, 4 of milliseconds since the start of the month, 2 of a counter, in upper-case hex. IP, pid,
  hash and clock are inputs (Java reads them from the process; the hash is random per JVM), so ids replay;
* :func:`encode_messages`: ``MessageDecoder.encodeMessages``, a batch's body (SEND_BATCH_MESSAGE);
* :func:`try_to_compress`: ``DefaultMQProducerImpl.tryToCompressMessage``, zlib at level 5 for bodies of
  ``compressMsgBodyOverHowmuch`` (4 KiB) and more, sysFlag COMPRESSED_FLAG | COMPRESSION_ZLIB_TYPE;
* :func:`decode_pulled`: ``MessageDecoder.decodes`` of a pull's body with ``deCompressBody``, as
  ``PullAPIWrapper.processPullResult`` reads it (tags filtered on the client, MIN_OFFSET/MAX_OFFSET set).

Differences: the start of the month is taken in UTC (Java: the JVM's time zone).
"""

from __future__ import annotations

import calendar
import struct
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from rocketlab.errors import CodecError
from rocketlab.store.message import (
    MessageExt,
    MessageSysFlag,
    message_properties_to_string,
)
from rocketlab.store.message_codec import decode_message

COMPRESS_MSG_BODY_OVER_HOWMUCH = 4 * 1024
COMPRESS_LEVEL = 5  # rocketmq.message.compressLevel
MAX_MESSAGE_SIZE = 4 * 1024 * 1024
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
PROPERTY_MIN_OFFSET = "MIN_OFFSET"
PROPERTY_MAX_OFFSET = "MAX_OFFSET"
PROPERTY_UNIQ_KEY = "UNIQ_KEY"
PROPERTY_CONSUME_START_TIMESTAMP = "CONSUME_START_TIME"
SYSTEM_PROPERTIES = frozenset({
    "TRACE_ON", "MSGType", "KEYS", "TAGS", "WAIT", "DELAY", "RETRY_TOPIC", "REAL_TOPIC", "REAL_QID",
    "TRAN_MSG", "PGROUP", "MIN_OFFSET", "MAX_OFFSET", "BUYER_ID", "ORIGIN_MESSAGE_ID", "TRANSFER_FLAG",
    "CORRECTION_FLAG", "MQ2_FLAG", "RECONSUME_TIME", "MSG_REGION", "UNIQ_KEY", "MAX_RECONSUME_TIMES",
    "CONSUME_START_TIME", "__STARTDELIVERTIME", "TRAN_PREPARED_QUEUE_OFFSET", "TRANSACTION_CHECK_TIMES",
    "CHECK_IMMUNITY_TIME_IN_SECONDS", "SHARDING_KEY", "INSTANCE_ID", "CORRELATION_ID", "REPLY_TO_CLIENT",
    "TTL", "ARRIVE_TIME", "PUSH_REPLY_TIME", "CLUSTER", "MSG_TYPE", "UNIQUE_GROUP", "DUP_INFO", "EXTEND_UNIQ_INFO"})
"""``MessageConst.STRING_HASH_SET``: property names that are not the user's."""


@dataclass(frozen=True, order=True)
class MessageQueue:
    """``MessageQueue``; ``order=True`` compares topic, broker name, queue id, as ``compareTo``."""

    topic: str
    broker_name: str
    queue_id: int

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"


@dataclass
class Message:
    """``Message``: ``Message(topic, tags, keys, body)`` puts TAGS, KEYS and WAIT=true, as Java's constructor."""

    topic: str
    body: bytes
    tags: str | None = None
    keys: str | Iterable[str] | None = None
    user_properties: Mapping[str, str] | None = None
    flag: int = 0
    wait_store_msg_ok: bool = True
    properties: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.body = bytes(self.body)
        if self.tags:
            self.properties["TAGS"] = self.tags
        if self.keys:
            self.properties["KEYS"] = self.keys if isinstance(self.keys, str) else " ".join(self.keys)
        self.properties["WAIT"] = "true" if self.wait_store_msg_ok else "false"
        for k, v in (self.user_properties or {}).items():
            if k in SYSTEM_PROPERTIES:
                raise ValueError(f"The Property<{k}> is used by system, input another please")
            self.properties[k] = v

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(PROPERTY_UNIQ_KEY)


def user_properties(props: Mapping[str, str]) -> dict[str, str]:
    """The properties of a message that are not the system's (what the Java suite compares)."""
    return {k: v for k, v in props.items() if k not in SYSTEM_PROPERTIES}


class MessageClientIDSetter:
    """Unique ids (see the module docstring); ``clock`` returns milliseconds since the epoch."""

    def __init__(self, ip: bytes = b"\x7f\x00\x00\x01", pid: int = 0, loader_hash: int = 0,
                 clock: Callable[[], int] | None = None) -> None:
        self.fix_string = (ip + struct.pack(">hi", _short(pid), _int(loader_hash))).hex().upper()
        self.clock = clock or (lambda: time.time_ns() // 1_000_000)
        self.counter = 0
        self.start_time = 0
        self.next_start_time = 0
        self._set_start_time(self.clock())

    def _set_start_time(self, millis: int) -> None:
        t = time.gmtime(millis / 1000)
        self.start_time = calendar.timegm((t.tm_year, t.tm_mon, 1, 0, 0, 0)) * 1000
        year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        self.next_start_time = calendar.timegm((year, month, 1, 0, 0, 0)) * 1000

    def create_uniq_id(self) -> str:
        current = self.clock()
        if current >= self.next_start_time:
            self._set_start_time(current)
        diff = _int(current - self.start_time)
        if -1_000_000 < diff < 0:
            diff = 0
        counter = self.counter
        self.counter = (self.counter + 1) & 0xFFFFFFFF
        return self.fix_string + struct.pack(">ih", diff, _short(counter)).hex().upper()

    def set_uniq_id(self, msg: Message) -> None:
        """``setUniqID``: only when the message has none yet (a resend keeps its id)."""
        if PROPERTY_UNIQ_KEY not in msg.properties:
            msg.properties[PROPERTY_UNIQ_KEY] = self.create_uniq_id()


def _short(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


def _int(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def encode_messages(messages: Iterable[Message]) -> bytes:
    """``MessageDecoder.encodeMessages``: per message TOTALSIZE, MAGIC 0, BODYCRC 0, FLAG, BODY, PROPERTIES."""
    out = bytearray()
    for m in messages:
        props = message_properties_to_string(m.properties).encode("utf-8")
        if len(props) > 32767:
            raise ValueError(f"Properties size of message exceeded, properties size: {len(props)}, maxSize: 32767.")
        size = 4 + 4 + 4 + 4 + 4 + len(m.body) + 2 + len(props)
        out += struct.pack(">iiiii", size, 0, 0, m.flag, len(m.body)) + m.body + struct.pack(">h", len(props)) + props
    return bytes(out)


def try_to_compress(body: bytes, over: int = COMPRESS_MSG_BODY_OVER_HOWMUCH,
                    level: int = COMPRESS_LEVEL) -> tuple[bytes, int]:
    """The body to send and the sysFlag bits it needs (0 when not compressed)."""
    if len(body) >= over:
        return zlib.compress(body, level), MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE
    return body, 0


def decode_pulled(body: bytes, tags: tuple[str, ...] = (), min_offset: int | None = None,
                  max_offset: int | None = None) -> list[MessageExt]:
    """The messages of a pull's body, decompressed; with ``tags``, only those whose TAGS is one of them."""
    out: list[MessageExt] = []
    pos = 0
    while pos + 4 <= len(body):
        (size,) = struct.unpack_from(">i", body, pos)
        if size <= 0 or pos + size > len(body):
            raise CodecError(f"a pulled record at byte {pos} claims {size} bytes of {len(body) - pos}")
        m = decode_message(body, pos, limit=pos + size)
        pos += size
        if m.sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            try:
                m.body = zlib.decompress(m.body)
            except zlib.error as e:
                raise CodecError(f"message at queue offset {m.queue_offset}: a compressed body that is no "
                                 f"zlib stream: {e}") from None
        if tags and m.tags not in tags:
            continue
        if min_offset is not None:
            m.properties[PROPERTY_MIN_OFFSET] = str(min_offset)
        if max_offset is not None:
            m.properties[PROPERTY_MAX_OFFSET] = str(max_offset)
        out.append(m)
    if pos != len(body):
        raise CodecError(f"a pull's body ends in {len(body) - pos} bytes that are no record")
    return out


def msg_id(m: MessageExt) -> str:
    """``MessageClientExt.getMsgId``: the UNIQ_KEY, else the offset message id."""
    return m.properties.get(PROPERTY_UNIQ_KEY) or m.msg_id


def reset_retry_topic(m: MessageExt, group: str) -> None:
    """``resetRetryAndNamespace``: a message pulled from %RETRY%group shows its original topic again."""
    retry = m.properties.get(PROPERTY_RETRY_TOPIC)
    if retry is not None and m.topic == RETRY_GROUP_TOPIC_PREFIX + group:
        m.topic = retry
