"""The record encoder: a message (or a producer's packed batch) to CommitLog records, outside the put lock.

Models ``MessageExtEncoder`` (5.x; ``CommitLog.MessageExtEncoder`` in 4.x) and 4.x's
``CommitLog.MessageExtBatchEncoder``; the record layout is in :mod:`rocketlab.store.record_layout`.
"""

from __future__ import annotations

import struct
import zlib

from rocketlab.errors import CodecError
from rocketlab.store.message import (
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    Host,
    Message,
    MessageSysFlag,
    keeps_last_property_separator,
    pack_host,
)
from rocketlab.store.put_message_status import PutMessageStatus
from rocketlab.store.record_layout import (
    ENCODER_HEADER_RESERVE,
    HOST_V6_FLAGS,
    INT16,
    MAX_PROPERTIES_LENGTH,
    MAX_TOPIC_LENGTH_V1,
    MAX_TOPIC_LENGTH_V2,
    PACKED_RECORD_HEAD,
    record_head,
    record_prefix,
)

_EMPTY = bytearray()


class MessageRejected(CodecError):
    """A message that cannot become a record; ``status`` is the PutMessageStatus to answer with."""

    def __init__(self, status: PutMessageStatus, message: str) -> None:
        self.status = status
        super().__init__(message)


class MessageExtEncoder:
    """Models ``MessageExtEncoder`` (5.x) and 4.x's ``CommitLog.MessageExtBatchEncoder``.

    :meth:`encode` builds a whole record in one ``bytearray`` outside the put lock. QUEUEOFFSET,
    PHYSICALOFFSET and STORETIMESTAMP are left as zero placeholders for the append callback to patch
    under the lock. Rejections raise :class:`MessageRejected` with the status Java returns:
    ``MESSAGE_ILLEGAL`` for a body over ``max_message_size``, a topic too long for the record version,
    or a record over body limit + 64 KiB; ``PROPERTIES_SIZE_EXCEEDED`` for properties over 32767 bytes.

    Differences from Java 4.9.5 (kit additions, each a MESSAGE_ILLEGAL where Java writes the record): a
    property name or value containing the separators ``\x01``/``\x02`` (Java writes it and the reader
    splits it wrongly), an empty property name or value (Java writes it, ``string2messageProperties``
    drops it on read), properties or a topic that are not encodable as UTF-8, and numeric fields out of
    range for their width (Java would overflow silently).

    ``rocketmq_version`` is the release whose bytes and checks it follows: the properties string
    without a separator after the last property (4.x through 5.1.x) or with one (5.2.0 on, see
    :func:`~rocketlab.store.message.keeps_last_property_separator`); and in 4.x,
    ``DefaultMessageStore.checkMessage``, which runs before the encoder and answers MESSAGE_ILLEGAL for a
    properties string of more than 32767 UTF-16 chars (the encoder's own limit, on UTF-8 bytes, answers
    PROPERTIES_SIZE_EXCEEDED; 5.x moved checkMessage into the broker's put hooks).

    The encoder caches per topic (length prefix, magic) and per born host (packed bytes, record
    layout, v6 flag): both repeat from message to message.
    """

    def __init__(self, max_message_body_size: int, store_host: Host, auto_message_version_on_topic_len: bool = False,
                 rocketmq_version: str = "4.9.5"):
        self.max_message_body_size = max_message_body_size
        self.last_property_separator = keeps_last_property_separator(rocketmq_version)
        self.check_message_chars = rocketmq_version.startswith("4.")
        self.max_message_size = max_message_body_size + ENCODER_HEADER_RESERVE
        self.auto_message_version_on_topic_len = auto_message_version_on_topic_len
        self.store_host_raw = pack_host(store_host)
        self._store_v6 = MessageSysFlag.STOREHOSTADDRESS_V6_FLAG if len(self.store_host_raw) == 20 else 0
        self._topics: dict[str, tuple[bytes, int]] = {}
        self._born_hosts: dict[Host, tuple[bytes, struct.Struct, int]] = {}

    def _born_host_field(self, host: Host) -> tuple[bytes, struct.Struct, int]:
        """(packed born host, record prefix layout, host sysFlag bits), cached per born host."""
        cached = self._born_hosts.get(host)
        if cached is not None:
            return cached
        try:
            raw = pack_host(host)
        except (ValueError, TypeError, OSError) as exc:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"bad born host {host!r}: {exc}") from exc
        flags = self._store_v6 | (MessageSysFlag.BORNHOST_V6_FLAG if len(raw) == 20 else 0)
        field = (raw, record_prefix(len(raw), len(self.store_host_raw)), flags)
        if len(self._born_hosts) > 4096:
            self._born_hosts.clear()
        self._born_hosts[host] = field
        return field

    def _topic_field(self, topic: str) -> tuple[bytes, int]:
        """(length prefix + UTF-8 topic, magic code), cached per topic."""
        cached = self._topics.get(topic)
        if cached is not None:
            return cached
        try:
            raw = topic.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"topic is not encodable as UTF-8: {exc}") from exc
        if len(raw) <= MAX_TOPIC_LENGTH_V1:
            field = (bytes((len(raw),)) + raw, MESSAGE_MAGIC_CODE)
        elif self.auto_message_version_on_topic_len and len(raw) <= MAX_TOPIC_LENGTH_V2:
            field = (INT16.pack(len(raw)) + raw, MESSAGE_MAGIC_CODE_V2)
        else:
            limit = MAX_TOPIC_LENGTH_V2 if self.auto_message_version_on_topic_len else MAX_TOPIC_LENGTH_V1
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL, f"topic of {len(raw)} bytes is longer than {limit} bytes"
            )
        if len(self._topics) > 4096:
            self._topics.clear()
        self._topics[topic] = field
        return field

    def _properties_field(self, properties: dict[str, str]) -> bytes:
        """PROPERTIES length + bytes (``messageProperties2String``), after checking that nothing would be
        lost on the way back."""
        if not properties:
            return b"\x00\x00"
        if None in properties.values():  # Java skips null values
            properties = {k: v for k, v in properties.items() if v is not None}
            if not properties:
                return b"\x00\x00"
        text = "\x02".join([f"{k}\x01{v}" for k, v in properties.items()])  # messageProperties2String
        n = len(properties)
        if text.count("\x01") != n or text.count("\x02") != n - 1:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL, "a property name or value contains \\x01 or \\x02"
            )
        if text[0] == "\x01" or text[-1] == "\x01" or "\x02\x01" in text or "\x01\x02" in text:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL, "a property name or value is empty (it would be dropped on read)"
            )
        if self.last_property_separator:
            text += "\x02"
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"properties are not UTF-8: {exc}") from exc
        if len(raw) > MAX_PROPERTIES_LENGTH:
            chars = len(text.encode("utf-16-le", "surrogatepass")) // 2  # Java's String.length()
            if self.check_message_chars and chars > MAX_PROPERTIES_LENGTH:
                raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL,
                                      f"checkMessage: properties string of {chars} chars exceeds {MAX_PROPERTIES_LENGTH}")
            raise MessageRejected(
                PutMessageStatus.PROPERTIES_SIZE_EXCEEDED,
                f"properties of {len(raw)} bytes exceed {MAX_PROPERTIES_LENGTH} bytes",
            )
        return len(raw).to_bytes(2, "big") + raw

    def encode(self, msg: Message, born_timestamp: int) -> bytearray:
        """One record with placeholders; ``born_timestamp`` is used when the message has none."""
        body = msg.body
        body_len = len(body)
        if body_len > self.max_message_body_size:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL,
                f"body of {body_len} bytes exceeds max_message_size {self.max_message_body_size}",
            )
        topic_field, magic = self._topics.get(msg.topic) or self._topic_field(msg.topic)
        props = msg.properties
        props_field = self._properties_field(props) if props else b"\x00\x00"
        born_raw, prefix, host_flags = self._born_hosts.get(msg.born_host) or self._born_host_field(msg.born_host)
        sys_flag = (msg.sys_flag & ~HOST_V6_FLAGS) | host_flags  # the hosts decide the v6 bits
        store_raw = self.store_host_raw
        total = prefix.size + body_len + len(topic_field) + len(props_field)
        if total > self.max_message_size:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL, f"record of {total} bytes exceeds {self.max_message_size} bytes"
            )
        born_ts = msg.born_timestamp
        try:
            head = prefix.pack(
                total,
                magic,
                zlib.crc32(body) & 0x7FFFFFFF,
                msg.queue_id,
                msg.flag,
                0,
                0,
                sys_flag,
                born_timestamp if born_ts is None else born_ts,
                born_raw,
                0,
                store_raw,
                msg.reconsume_times,
                msg.prepared_transaction_offset,
                body_len,
            )
        except struct.error as exc:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"a numeric field is out of range: {exc}") from exc
        return _EMPTY.join((head, body, topic_field, props_field))  # one copy, straight into a bytearray

    def encode_batch(self, batch: Message, born_timestamp: int) -> tuple[bytearray, list[int]]:
        """``MessageExtBatchEncoder.encode``: one CommitLog record per packed record of ``batch.body``
        (see :mod:`rocketlab.store.message_batch`), all in one buffer, and where each record starts.

        Topic, queue id, sysFlag, hosts and born time come from the batch; each record keeps its own
        flag, body and properties, followed by the batch's properties.
        """
        body = batch.body
        if len(body) > self.max_message_body_size:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL,
                f"batch body of {len(body)} bytes exceeds max_message_size {self.max_message_body_size}",
            )
        topic_field, magic = self._topic_field(batch.topic)
        batch_props = self._properties_field(batch.properties)[2:]
        born_raw, prefix, host_flags = self._born_host_field(batch.born_host)
        sys_flag = (batch.sys_flag & ~HOST_V6_FLAGS) | host_flags
        store_raw = self.store_host_raw
        born = born_timestamp if batch.born_timestamp is None else batch.born_timestamp
        head_fields = (magic, batch.queue_id, sys_flag, born, born_raw, store_raw, batch.reconsume_times)
        parts, starts = _encode_packed_records(body, head_fields, prefix.size, topic_field, batch_props)
        out = _EMPTY.join(parts)
        if not starts:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, "empty batch")
        if len(out) > self.max_message_size:
            raise MessageRejected(
                PutMessageStatus.MESSAGE_ILLEGAL, f"encoded batch of {len(out)} bytes exceeds {self.max_message_size} bytes"
            )
        return out, starts


def _encode_packed_records(
    body: bytes, head_fields: tuple, prefix_size: int, topic_field: bytes, batch_props: bytes
) -> tuple[list[bytes], list[int]]:
    """The parts of :meth:`MessageExtEncoder.encode_batch`'s buffer, record by record, and where each
    record starts; ``head_fields`` are the batch's (magic, queue id, sysFlag, born time, born host,
    store host, reconsume times)."""
    magic, queue_id, sys_flag, born, born_raw, store_raw, reconsume = head_fields
    pack = record_head(len(born_raw), len(store_raw)).pack  # everything before BODY len
    fixed = prefix_size + len(topic_field) + 2
    extra_props = len(batch_props)
    parts: list[bytes] = []
    add = parts.extend
    starts = []
    length = 0
    pos, end = 0, len(body)
    unpack_head = PACKED_RECORD_HEAD.unpack_from
    crc32 = zlib.crc32
    # The packed records are walked inline (see message_batch.iter_packed): this loop is the
    # batch hot path. A packed record is [TOTALSIZE][MAGIC][CRC][FLAG][BODY len][BODY][PROPS len][PROPS],
    # so "BODY len + BODY" and "PROPS len + PROPS" are copied as they are when the batch adds no
    # properties of its own.
    view = memoryview(body)
    while pos < end:
        if end - pos < 22:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"malformed batch body: truncated record at {pos}")
        total, _magic, _crc, flag, body_len = unpack_head(body, pos)
        props_pos = pos + 22 + body_len
        props_len = INT16.unpack_from(body, props_pos - 2)[0] if 0 <= body_len and props_pos <= end else -1
        if props_len < 0 or props_pos + props_len > end or total != 22 + body_len + props_len:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"malformed batch body: bad record at {pos}")
        total_props = props_len
        sep = False
        if extra_props:
            sep = props_len > 0 and body[props_pos + props_len - 1] != 2
            total_props += extra_props + sep
            if total_props > MAX_PROPERTIES_LENGTH:
                raise MessageRejected(
                    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED,
                    f"properties of {total_props} bytes exceed {MAX_PROPERTIES_LENGTH} bytes",
                )
        record = fixed + body_len + total_props
        starts.append(length)
        length += record
        try:
            head = pack(record, magic, crc32(view[pos + 20 : props_pos - 2]) & 0x7FFFFFFF, queue_id, flag, 0, 0,
                        sys_flag, born, born_raw, 0, store_raw, reconsume, 0)  # fmt: skip
        except struct.error as exc:
            raise MessageRejected(PutMessageStatus.MESSAGE_ILLEGAL, f"a numeric field is out of range: {exc}") from exc
        if not extra_props:
            add((head, body[pos + 16 : props_pos - 2], topic_field, body[props_pos - 2 : props_pos + props_len]))
        else:
            tail = b"\x02" + batch_props if sep else batch_props
            add((head, body[pos + 16 : props_pos - 2], topic_field, total_props.to_bytes(2, "big"),
                 body[props_pos : props_pos + props_len], tail))  # fmt: skip
        pos += total
    return parts, starts
