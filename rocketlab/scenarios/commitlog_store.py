"""A classic CommitLog store as lab 02 and its grader drive it: a clock that ticks per reading, every message of
a queue pull after pull, and the fields of one CommitLog record (``CommitLog.calMsgLength``'s layout).

Shared by lab 02's helpers (:mod:`rocketlab.labs_support.commitlog`) and its graded tests. rocketlab's own.
"""

from __future__ import annotations

import struct
from typing import Any

from rocketlab.store import MessageStore
from rocketlab.store.message import MessageSysFlag
from rocketlab.store.message_codec import MESSAGE_MAGIC_CODE

TOPIC = "LabTopic"
"""The lab's topic."""


class TickClock:
    """A millisecond clock that advances 1 ms per reading (store timestamps without wall time)."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1
        return self.now


def record_fields(record: bytes) -> list[dict[str, Any]]:
    """One row per field of a CommitLog record: name, byte offset, length, hex and decoded value."""
    sys_flag = struct.unpack_from(">i", record, 36)[0]
    born = 20 if sys_flag & MessageSysFlag.BORNHOST_V6_FLAG else 8
    store = 20 if sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG else 8
    layout = [("TOTALSIZE", 4, ">i"), ("MAGICCODE", 4, ">i"), ("BODYCRC", 4, ">i"), ("QUEUEID", 4, ">i"),
              ("FLAG", 4, ">i"), ("QUEUEOFFSET", 8, ">q"), ("PHYSICALOFFSET", 8, ">q"), ("SYSFLAG", 4, ">i"),
              ("BORNTIMESTAMP", 8, ">q"), ("BORNHOST", born, None), ("STORETIMESTAMP", 8, ">q"),
              ("STOREHOSTADDRESS", store, None), ("RECONSUMETIMES", 4, ">i"),
              ("PREPARED TRANSACTION OFFSET", 8, ">q"), ("BODY length", 4, ">i")]
    rows, at = [], 0
    for name, size, fmt in layout:
        raw = record[at:at + size]
        value: Any = struct.unpack(fmt, raw)[0] if fmt else f"{'.'.join(str(b) for b in raw[:4])}:{int.from_bytes(raw[-4:], 'big')}"
        if name == "MAGICCODE":
            value = f"{value & 0xFFFFFFFF:#010x}"
        rows.append({"field": name, "offset": at, "length": size, "hex": raw.hex(" "), "value": value})
        at += size
    body_len = rows[-1]["value"]
    topic_at = at + body_len
    width = 1 if struct.unpack_from(">i", record, 4)[0] == MESSAGE_MAGIC_CODE else 2  # v1 or v2 record
    topic_len = int.from_bytes(record[topic_at:topic_at + width], "big")
    props_at = topic_at + width + topic_len
    props_len = struct.unpack_from(">h", record, props_at)[0]
    tail = [("BODY", at, body_len, record[at:at + body_len].decode(errors="replace")),
            ("TOPIC length", topic_at, width, topic_len),
            ("TOPIC", topic_at + width, topic_len, record[topic_at + width:props_at].decode()),
            ("PROPERTIES length", props_at, 2, props_len),
            ("PROPERTIES", props_at + 2, props_len,
             record[props_at + 2:props_at + 2 + props_len].decode().replace("\x01", "=").replace("\x02", ";"))]
    for name, offset, size, value in tail:
        raw = record[offset:offset + size]
        rows.append({"field": name, "offset": offset, "length": size,
                     "hex": raw[:12].hex(" ") + (" ..." if size > 12 else ""), "value": value})
    return rows


def queue_messages(store: MessageStore, topic: str = TOPIC, queue_id: int = 0) -> list[Any]:
    """Every message a consumer pulls from the queue, pull after pull."""
    out, offset = [], 0
    while True:
        got = store.get_message(topic, queue_id, offset, 32).messages
        if not got:
            return out
        out += got
        offset += len(got)


__all__ = ["TOPIC", "TickClock", "queue_messages", "record_fields"]
