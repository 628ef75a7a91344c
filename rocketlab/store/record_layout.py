"""The CommitLog record's layout: magic codes, field positions, lengths, and the stamps of a record.

Models the constants of ``MessageDecoder``, ``MessageVersion`` and ``CommitLog`` (``BLANK_MAGIC_CODE``,
``calMsgLength``) and what the append callback patches under the put lock (``stamp_record``). Every
integer is big-endian; :mod:`rocketlab.store.message_codec` describes the whole record.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache
from typing import Any

from rocketlab.store.message import MessageSysFlag

BLANK_MAGIC_CODE = -875286124  # 0xCBD43194, the END_OF_FILE padding
END_FILE_MIN_BLANK_LENGTH = 4 + 4

MESSAGE_FLAG_POSITION = 16
QUEUE_OFFSET_POSITION = 20
PHY_POS_POSITION = 28
SYSFLAG_POSITION = 36
BORN_TIMESTAMP_POSITION = 40

MAX_TOPIC_LENGTH_V1 = 127  # Byte.MAX_VALUE
MAX_TOPIC_LENGTH_V2 = 32767  # Short.MAX_VALUE
MAX_PROPERTIES_LENGTH = 32767  # Short.MAX_VALUE
ENCODER_HEADER_RESERVE = 64 * 1024  # MessageExtEncoder: body limit + 64 KiB for the rest
HOST_V6_FLAGS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG

TOTAL_SIZE_AND_MAGIC = struct.Struct(">ii")  # TOTALSIZE, MAGICCODE
INT32 = struct.Struct(">i")
INT16 = struct.Struct(">h")
PACKED_RECORD_HEAD = struct.Struct(">iiiii")  # a packed batch record: TOTALSIZE, MAGICCODE, BODYCRC, FLAG, BODY len
QUEUE_AND_PHY_OFFSET = struct.Struct(">qq")  # patched at QUEUE_OFFSET_POSITION under the put lock
STORE_TIMESTAMP = struct.Struct(">q")


@lru_cache(maxsize=2)
def batch_patch(born_host_len: int) -> struct.Struct:
    """QUEUEOFFSET through STORETIMESTAMP (offset 20 on): what the append callback stamps on each
    record of a batch in one call (SYSFLAG, BORNTIMESTAMP and BORNHOST are rewritten unchanged)."""
    return struct.Struct(f">qqiq{born_host_len}sq")


@lru_cache(maxsize=4)
def record_prefix(born_host_len: int, store_host_len: int) -> struct.Struct:
    """Everything from TOTALSIZE through the BODY length (88 bytes with IPv4 hosts)."""
    return struct.Struct(f">iiiiiqqiq{born_host_len}sq{store_host_len}siqi")


@lru_cache(maxsize=4)
def record_head(born_host_len: int, store_host_len: int) -> struct.Struct:
    """Everything before the BODY length (the 84-byte prefix with IPv4 hosts)."""
    return struct.Struct(f">iiiiiqqiq{born_host_len}sq{store_host_len}siq")


def body_crc(body: bytes) -> int:
    """``UtilAll.crc32``: CRC-32 of the body, masked to a non-negative Java int."""
    return zlib.crc32(body) & 0x7FFFFFFF


def host_length(sys_flag: int, v6_flag: int) -> int:
    return 20 if sys_flag & v6_flag else 8


def store_timestamp_position(sys_flag: int) -> int:
    """Offset of STORETIMESTAMP in a record: 56, or 68 when the born host is IPv6."""
    return 48 + host_length(sys_flag, MessageSysFlag.BORNHOST_V6_FLAG)


def cal_msg_length(sys_flag: int, body_length: int, topic_length: int, properties_length: int, version: int = 1) -> int:
    """``calMsgLength``: the TOTALSIZE of a record with these field lengths."""
    born = host_length(sys_flag, MessageSysFlag.BORNHOST_V6_FLAG)
    store = host_length(sys_flag, MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)
    return (
        4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + born + 8 + store + 4 + 8
        + 4 + max(body_length, 0)
        + (1 if version == 1 else 2) + topic_length
        + 2 + max(properties_length, 0)
    )  # fmt: skip


def encode_blank(max_blank: int) -> bytes:
    """The 8-byte END_OF_FILE blank header; the rest of the gap is left as it was (zeros)."""
    return TOTAL_SIZE_AND_MAGIC.pack(max_blank, BLANK_MAGIC_CODE)


def stamp_record(buf: bytearray, queue_offset: int, physical_offset: int, store_timestamp: int, offset: int = 0) -> None:
    """Fill the three placeholders of an encoded record at ``buf[offset:]``: QUEUEOFFSET,
    PHYSICALOFFSET and STORETIMESTAMP (what the append callback does under the put lock; a
    DLedger-backed CommitLog stamps its records the same way)."""
    QUEUE_AND_PHY_OFFSET.pack_into(buf, offset + QUEUE_OFFSET_POSITION, queue_offset, physical_offset)
    sys_flag = INT32.unpack_from(buf, offset + SYSFLAG_POSITION)[0]
    STORE_TIMESTAMP.pack_into(buf, offset + store_timestamp_position(sys_flag), store_timestamp)


def read_blank(buf: Any, offset: int, limit: int) -> int | None:
    """The length of the blank at ``offset``, or None if no blank starts there."""
    if limit - offset < 8:
        return None
    total, magic = TOTAL_SIZE_AND_MAGIC.unpack_from(buf, offset)
    return total if magic == BLANK_MAGIC_CODE else None
