"""Messages as the store sees them: what a producer hands in, what a reader gets back.

Models ``org.apache.rocketmq.common.message.Message``, ``MessageExt``, ``MessageConst``,
``sysflag.MessageSysFlag`` and the property-string helpers of ``MessageDecoder``. The byte layout of
a CommitLog record lives in :mod:`rocketlab.store.message_codec`; this module knows nothing about
offsets in files.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable, Mapping
from functools import lru_cache
from operator import mul

# --- MessageVersion: the record's magic code says how wide its topic length is ---------------------

MESSAGE_MAGIC_CODE = -626843481  # 0xDAA320A7, v1: 1-byte topic length
MESSAGE_MAGIC_CODE_V2 = -626843477  # 0xDAA320AB, v2 (5.1+): 2-byte topic length

# --- MessageConst: well-known property keys ------------------------------------------------------

PROPERTY_KEYS = "KEYS"
PROPERTY_TAGS = "TAGS"
PROPERTY_WAIT_STORE_MSG_OK = "WAIT"
PROPERTY_DELAY_TIME_LEVEL = "DELAY"
PROPERTY_REAL_TOPIC = "REAL_TOPIC"
PROPERTY_REAL_QUEUE_ID = "REAL_QID"
PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX = "UNIQ_KEY"
KEY_SEPARATOR = " "

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"


class MessageSysFlag:
    """Models ``org.apache.rocketmq.common.sysflag.MessageSysFlag``: the bits of the SYSFLAG field.

    Simplified: only the bits the store reads are named; compression types are kept as constants
    but nothing compresses.
    """

    COMPRESSED_FLAG = 0x1
    MULTI_TAGS_FLAG = 0x2
    TRANSACTION_NOT_TYPE = 0x0
    TRANSACTION_PREPARED_TYPE = 0x4
    TRANSACTION_COMMIT_TYPE = 0x8
    TRANSACTION_ROLLBACK_TYPE = 0xC
    BORNHOST_V6_FLAG = 0x10
    STOREHOSTADDRESS_V6_FLAG = 0x20
    NEED_UNWRAP_FLAG = 0x40
    INNER_BATCH_FLAG = 0x80
    COMPRESSION_LZ4_TYPE = 0x100
    COMPRESSION_ZSTD_TYPE = 0x200
    COMPRESSION_ZLIB_TYPE = 0x300

    @staticmethod
    def get_transaction_value(flag: int) -> int:
        return flag & MessageSysFlag.TRANSACTION_ROLLBACK_TYPE

    @staticmethod
    def reset_transaction_value(flag: int, transaction_type: int) -> int:
        return (flag & ~MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) | transaction_type


# --- Java String.hashCode -------------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF


@lru_cache(maxsize=512)
def _powers_of_31(n: int) -> tuple[int, ...]:
    """``31**(n-1), ..., 31, 1`` modulo 2**32: the weights of ``String.hashCode`` for length ``n``."""
    out = [1] * n
    for i in range(n - 2, -1, -1):
        out[i] = (out[i + 1] * 31) & _MASK32
    return tuple(out)


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode()``: ``h = 31*h + c`` over UTF-16 code units, wrapping to a signed int.

    Python's ``hash()`` is different (and salted), so tags codes and index keys need this.
    """
    if s.isascii():
        codes: bytes | tuple[int, ...] = s.encode("ascii")
    else:
        raw = s.encode("utf-16-be", "surrogatepass")
        codes = struct.unpack(f">{len(raw) // 2}H", raw)
    h = sum(map(mul, codes, _powers_of_31(len(codes)))) & _MASK32
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


@lru_cache(maxsize=4096)
def tags_string_to_tags_code(tags: str | None) -> int:
    """``MessageExtBrokerInner.tagsString2tagsCode``: the tags' Java hash, 0 when there are none."""
    if not tags:
        return 0
    return java_string_hash(tags)


# --- properties string -----------------------------------------------------------------------------


def message_properties_to_string(properties: Mapping[str, str], *, last_separator: bool = False) -> str:
    """``MessageDecoder.messageProperties2String``: ``name\\x01value\\x02`` per entry, in the mapping's
    order; ``last_separator=False`` deletes the separator after the last entry, as RocketMQ 4.x through
    5.1.x do, ``True`` keeps it, as 5.2.0 and later do (see :func:`keeps_last_property_separator`).

    Java iterates whatever ``Map`` it is given: a producer's ``HashMap`` on the client, a
    ``LinkedHashMap`` where the caller keeps an order. Insertion order here is the order a caller with
    a ``LinkedHashMap`` gets, and keeps golden tests deterministic. ``None`` values are skipped as in Java.
    """
    text = PROPERTY_SEPARATOR.join([f"{k}\x01{v}" for k, v in properties.items() if v is not None])
    return text + PROPERTY_SEPARATOR if last_separator and text else text


ROCKETMQ_RELEASES = ("4.9.5", "5.1.0", "5.3.3")
"""The releases whose store behaviour the kit models (a store config's ``rocketmq_version``)."""


def keeps_last_property_separator(rocketmq_version: str) -> bool:
    """Whether ``messageProperties2String`` of ``rocketmq_version`` keeps the separator after the last
    property: 4.x through 5.1.x delete it (``sb.deleteCharAt``), 5.2.0 and later keep it (the rewrite
    that came with the CommitLog CRC check, apache/rocketmq#7468). A record with properties is one byte
    longer from 5.2.0 on; readers accept both."""
    major, minor = (int(part) for part in rocketmq_version.split(".")[:2])
    return (major, minor) >= (5, 2)


def string_to_message_properties(properties: str) -> dict[str, str]:
    """``MessageDecoder.string2messageProperties``: lenient parse of a properties string.

    Fragments shorter than 3 characters, without a ``\\x01``, or with an empty name or value are
    skipped, exactly as the Java walk does; so an empty value does not survive a round trip.
    """
    out: dict[str, str] = {}
    for part in properties.split(PROPERTY_SEPARATOR):
        if len(part) >= 3:
            name, sep, value = part.partition(NAME_VALUE_SEPARATOR)
            if sep and name and value:
                out[name] = value
    return out


# --- hosts -----------------------------------------------------------------------------------------

Host = tuple[str, int]


@lru_cache(maxsize=1024)
def pack_host(host: Host) -> bytes:
    """A socket address as stored in BORNHOST/STOREHOSTADDRESS: 4 or 16 address bytes, then the port.

    Raises ``ValueError`` for something that is not an IPv4/IPv6 literal or a port out of range.
    """
    ip, port = host
    if not 0 <= port <= 0x7FFFFFFF:
        raise ValueError(f"port {port} out of range")
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    return socket.inet_pton(family, ip) + port.to_bytes(4, "big")


def unpack_host(raw: bytes) -> Host:
    """Inverse of :func:`pack_host` (8 bytes for IPv4, 20 for IPv6)."""
    family = socket.AF_INET6 if len(raw) == 20 else socket.AF_INET
    return socket.inet_ntop(family, raw[:-4]), int.from_bytes(raw[-4:], "big", signed=True)


def host_string(host: Host) -> str:
    ip, port = host
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


# --- Message ---------------------------------------------------------------------------------------

DEFAULT_BORN_HOST: Host = ("127.0.0.1", 0)


class Message:
    """Models ``org.apache.rocketmq.common.message.Message`` as it reaches the broker
    (``MessageExtBrokerInner`` before it is stored).

    Tags, keys and the wait-store flag live in ``properties`` as in Java (``TAGS``, ``KEYS``,
    ``WAIT``); ``tags``/``keys`` are views of them. Simplified: the born host defaults to
    127.0.0.1:0 instead of the producer's socket address, and ``born_timestamp=None`` means "the
    store's clock at put time" (a producer sets it in Java).
    """

    __slots__ = (
        "topic",
        "body",
        "queue_id",
        "flag",
        "properties",
        "born_timestamp",
        "born_host",
        "sys_flag",
        "reconsume_times",
        "prepared_transaction_offset",
    )

    def __init__(
        self,
        topic: str,
        body: bytes = b"",
        queue_id: int = 0,
        tags: str | None = None,
        keys: str | Iterable[str] | None = None,
        properties: Mapping[str, str] | None = None,
        *,
        flag: int = 0,
        born_timestamp: int | None = None,
        born_host: Host = DEFAULT_BORN_HOST,
        sys_flag: int = 0,
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
    ) -> None:
        self.topic = topic
        self.body = bytes(body)
        self.queue_id = queue_id
        self.flag = flag
        props: dict[str, str] = {}
        if tags is not None:
            props[PROPERTY_TAGS] = tags
        if keys is not None:
            props[PROPERTY_KEYS] = keys if isinstance(keys, str) else KEY_SEPARATOR.join(keys)
        if properties:
            props.update(properties)
        self.properties = props
        self.born_timestamp = born_timestamp
        self.born_host = born_host
        self.sys_flag = sys_flag
        self.reconsume_times = reconsume_times
        self.prepared_transaction_offset = prepared_transaction_offset

    @property
    def tags(self) -> str | None:
        return self.properties.get(PROPERTY_TAGS)

    @property
    def keys(self) -> str | None:
        return self.properties.get(PROPERTY_KEYS)

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)

    def is_wait_store_msg_ok(self) -> bool:
        """``WAIT`` property: true when absent (``Message.isWaitStoreMsgOK``)."""
        return self.properties.get(PROPERTY_WAIT_STORE_MSG_OK) != "false"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(topic={self.topic!r}, queue_id={self.queue_id}, body={self.body[:32]!r}"
            f"{'...' if len(self.body) > 32 else ''}, properties={self.properties!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in Message.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the Java object


class MessageExt(Message):
    """Models ``org.apache.rocketmq.common.message.MessageExt``: a message read back from the CommitLog,
    with everything the broker stamped on it.

    Hosts are kept as the raw stored bytes and decoded on access (``born_host``/``store_host`` are
    ``(ip, port)``). ``msg_id`` is the offset message id (``MessageDecoder.createMessageId``).
    """

    __slots__ = (
        "store_size",
        "magic_code",
        "body_crc",
        "queue_offset",
        "commit_log_offset",
        "store_timestamp",
        "_born_host_raw",
        "_store_host_raw",
    )

    def __init__(self) -> None:  # filled field by field by the decoder
        pass

    @property  # type: ignore[override]
    def born_host(self) -> Host:
        return unpack_host(self._born_host_raw)

    @born_host.setter
    def born_host(self, value: Host) -> None:
        self._born_host_raw = pack_host(value)

    @property
    def store_host(self) -> Host:
        return unpack_host(self._store_host_raw)

    @property
    def msg_id(self) -> str:
        return (self._store_host_raw + self.commit_log_offset.to_bytes(8, "big", signed=True)).hex().upper()

    @property
    def version(self) -> int:
        return 2 if self.magic_code == MESSAGE_MAGIC_CODE_V2 else 1

    @property
    def tags_code(self) -> int:
        return tags_string_to_tags_code(self.tags)

    def __repr__(self) -> str:
        return (
            f"MessageExt(topic={self.topic!r}, queue_id={self.queue_id}, queue_offset={self.queue_offset}, "
            f"commit_log_offset={self.commit_log_offset}, store_size={self.store_size}, "
            f"body={self.body[:32]!r}{'...' if len(self.body) > 32 else ''}, properties={self.properties!r})"
        )
