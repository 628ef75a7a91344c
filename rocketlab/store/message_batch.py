"""Batch messages as the producer sends them: one message whose body packs many small records.

Models ``org.apache.rocketmq.common.message.MessageBatch`` (client side), ``MessageExtBatch``
(broker side) and ``MessageDecoder.encodeMessages``/``decodeMessages``. Each packed record is::

    TOTALSIZE i32 | MAGICCODE i32 (0) | BODYCRC i32 (0) | FLAG i32 | BODY len i32 + bytes |
    PROPERTIES len i16 + bytes

The store turns each one into a full CommitLog record (``MessageExtEncoder.encode_batch``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from rocketlab.errors import CodecError
from rocketlab.store.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    Message,
    MessageSysFlag,
    message_properties_to_string,
    string_to_message_properties,
)

_MINI_HEAD = struct.Struct(">iiiii")  # TOTALSIZE, MAGICCODE, BODYCRC, FLAG, BODY length
_I16 = struct.Struct(">h")


def pack_message(message: Message, last_property_separator: bool = False) -> bytes:
    """``MessageDecoder.encodeMessage``: one packed record (only flag, body and properties travel);
    ``last_property_separator`` as in :func:`~rocketlab.store.message.message_properties_to_string`."""
    props = message_properties_to_string(message.properties, last_separator=last_property_separator).encode("utf-8")
    if len(props) > 32767:
        raise CodecError(f"properties of {len(props)} bytes exceed 32767 bytes")
    body = message.body
    size = _MINI_HEAD.size + len(body) + 2 + len(props)
    return b"".join((_MINI_HEAD.pack(size, 0, 0, message.flag, len(body)), body, _I16.pack(len(props)), props))


def pack_messages(messages: Iterable[Message], last_property_separator: bool = False) -> bytes:
    """``MessageDecoder.encodeMessages``: the packed records, back to back."""
    return b"".join(pack_message(m, last_property_separator) for m in messages)


def iter_packed(body: bytes) -> Iterable[tuple[int, int, int, int, int]]:
    """Walk packed records: (flag, body start, body length, properties start, properties length).

    Raises :class:`CodecError` (with the offset) for a record that does not add up.
    """
    pos, end = 0, len(body)
    head_size = _MINI_HEAD.size
    while pos < end:
        if end - pos < head_size + 2:
            raise CodecError(f"truncated batch record header ({end - pos} bytes left)", pos)
        total, _magic, _crc, flag, body_len = _MINI_HEAD.unpack_from(body, pos)
        if body_len < 0 or pos + head_size + body_len + 2 > end:
            raise CodecError(f"batch record body length {body_len} runs past the batch", pos)
        props_pos = pos + head_size + body_len + 2
        props_len = _I16.unpack_from(body, props_pos - 2)[0]
        if props_len < 0 or props_pos + props_len > end or total != head_size + body_len + 2 + props_len:
            raise CodecError(f"batch record TOTALSIZE {total} does not match its fields", pos)
        yield flag, pos + head_size, body_len, props_pos, props_len
        pos += total


def unpack_messages(body: bytes) -> list[Message]:
    """``MessageDecoder.decodeMessages``: the messages packed in a batch body (topic left empty)."""
    out = []
    for flag, bpos, blen, ppos, plen in iter_packed(body):
        props = string_to_message_properties(body[ppos : ppos + plen].decode("utf-8", "replace"))
        out.append(Message("", body[bpos : bpos + blen], properties=props, flag=flag))
    return out


class MessageExtBatch(Message):
    """Models ``MessageExtBatch``: a batch as the broker receives it. ``body`` is the packed records;
    ``topic``, ``queue_id``, hosts, ``sys_flag`` and ``born_timestamp`` belong to the whole batch,
    and the batch's own ``properties`` are appended to every record's properties.

    Build one from messages with :meth:`from_messages`, which applies the producer's checks
    (``MessageBatch.generateFromList``): one topic, no delay level, no transactions. The packed
    records keep the properties string of the producer's release (``last_property_separator``): the
    broker writes them as they come.
    """

    __slots__ = ()

    @classmethod
    def from_messages(cls, messages: Sequence[Message], queue_id: int | None = None, *,
                      last_property_separator: bool = False) -> MessageExtBatch:
        if not messages:
            raise CodecError("a batch needs at least one message")
        first = messages[0]
        for m in messages:
            if m.topic != first.topic:
                raise CodecError("the topics of the messages in a batch must be the same")
            if PROPERTY_DELAY_TIME_LEVEL in m.properties:
                raise CodecError("delay level is not supported for batching")
            if m.sys_flag & MessageSysFlag.TRANSACTION_ROLLBACK_TYPE:
                raise CodecError("transactional messages are not supported for batching")
        return cls(
            first.topic,
            pack_messages(messages, last_property_separator),
            first.queue_id if queue_id is None else queue_id,
            born_timestamp=first.born_timestamp,
            born_host=first.born_host,
        )
