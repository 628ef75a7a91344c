"""Status codes and result objects of the store's put and get paths.

Models ``AppendMessageStatus``, ``GetMessageStatus``, ``PutMessageResult``,
``AppendMessageResult``, ``GetMessageResult`` and ``QueryMessageResult`` from
``org.apache.rocketmq.store`` (``PutMessageStatus``, which the record encoder answers with too, is in
:mod:`rocketlab.store.put_message_status`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING

from rocketlab.store.message_codec import decode_message
from rocketlab.store.put_message_status import PutMessageStatus

if TYPE_CHECKING:
    from rocketlab.store.message import MessageExt


class AppendMessageStatus(enum.Enum):
    """Models ``org.apache.rocketmq.store.AppendMessageStatus``: the file layer's answer to one append."""

    PUT_OK = "PUT_OK"
    END_OF_FILE = "END_OF_FILE"
    MESSAGE_SIZE_EXCEEDED = "MESSAGE_SIZE_EXCEEDED"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


class GetMessageStatus(enum.Enum):
    """Models ``org.apache.rocketmq.store.GetMessageStatus``."""

    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


class AppendMessageResult:
    """Models ``org.apache.rocketmq.store.AppendMessageResult``.

    ``msg_id`` is computed on first access (Java passes a supplier for the same reason: building the
    hex id costs more than the append): from ``store_host_raw`` and ``wrote_offset``, or from a
    supplier (a batch's id is the comma-joined ids of its records).
    """

    __slots__ = (
        "status",
        "wrote_offset",
        "wrote_bytes",
        "store_timestamp",
        "logics_offset",
        "msg_num",
        "store_host_raw",
        "_msg_id",
        "_msg_id_supplier",
    )

    def __init__(
        self,
        status: AppendMessageStatus,
        wrote_offset: int = 0,
        wrote_bytes: int = 0,
        store_timestamp: int = 0,
        logics_offset: int = 0,
        msg_num: int = 1,
        store_host_raw: bytes = b"",
        msg_id_supplier: Callable[[], str] | None = None,
    ) -> None:
        self.status = status
        self.wrote_offset = wrote_offset
        self.wrote_bytes = wrote_bytes
        self.store_timestamp = store_timestamp
        self.logics_offset = logics_offset
        self.msg_num = msg_num
        self.store_host_raw = store_host_raw
        self._msg_id: str | None = None
        self._msg_id_supplier = msg_id_supplier

    @property
    def msg_id(self) -> str | None:
        if self._msg_id is None:
            if self._msg_id_supplier is not None:
                self._msg_id = self._msg_id_supplier()
            elif self.store_host_raw:
                offset = self.wrote_offset.to_bytes(8, "big", signed=True)
                self._msg_id = (self.store_host_raw + offset).hex().upper()  # MessageDecoder.createMessageId
        return self._msg_id

    def is_ok(self) -> bool:
        return self.status is AppendMessageStatus.PUT_OK

    def __repr__(self) -> str:
        return (
            f"AppendMessageResult({self.status.name}, wrote_offset={self.wrote_offset}, "
            f"wrote_bytes={self.wrote_bytes}, logics_offset={self.logics_offset}, msg_num={self.msg_num})"
        )


class PutMessageResult:
    """Models ``org.apache.rocketmq.store.PutMessageResult``: the store's answer to a put.

    The append fields are exposed flat (``wrote_offset``, ``wrote_bytes``, ``queue_offset``,
    ``msg_id``, ``store_timestamp``) for notebooks. ``is_ok()`` is true when the message was stored,
    even if the status is a durability degradation such as ``FLUSH_DISK_TIMEOUT``. ``detail`` is a
    kit addition: a one-line reason for a rejection (Java only logs it).
    """

    __slots__ = ("status", "append_message_result", "detail")

    def __init__(
        self,
        status: PutMessageStatus,
        append_message_result: AppendMessageResult | None = None,
        detail: str | None = None,
    ) -> None:
        self.status = status
        self.append_message_result = append_message_result
        self.detail = detail

    put_message_status = property(lambda self: self.status)

    def is_ok(self) -> bool:
        return self.append_message_result is not None and self.append_message_result.is_ok()

    @property
    def wrote_offset(self) -> int | None:
        r = self.append_message_result
        return r.wrote_offset if r is not None else None

    @property
    def wrote_bytes(self) -> int | None:
        r = self.append_message_result
        return r.wrote_bytes if r is not None else None

    @property
    def queue_offset(self) -> int | None:
        r = self.append_message_result
        return r.logics_offset if r is not None else None

    @property
    def msg_id(self) -> str | None:
        r = self.append_message_result
        return r.msg_id if r is not None else None

    @property
    def store_timestamp(self) -> int | None:
        r = self.append_message_result
        return r.store_timestamp if r is not None else None

    @property
    def msg_num(self) -> int:
        r = self.append_message_result
        return r.msg_num if r is not None else 0

    def __repr__(self) -> str:
        extra = f", detail={self.detail!r}" if self.detail else ""
        return f"PutMessageResult({self.status.name}, {self.append_message_result!r}{extra})"


class GetMessageResult:
    """Models ``org.apache.rocketmq.store.GetMessageResult``.

    ``message_buffer_list`` holds the raw records (copies, not mapped slices); ``messages`` decodes
    them on first access. ``message_queue_offsets`` gives each record's queue offset.
    """

    __slots__ = (
        "status",
        "next_begin_offset",
        "min_offset",
        "max_offset",
        "message_buffer_list",
        "message_queue_offsets",
        "buffer_total_size",
        "suggest_pulling_from_slave",
        "_messages",
    )

    def __init__(self) -> None:
        self.status: GetMessageStatus = GetMessageStatus.NO_MESSAGE_IN_QUEUE
        self.next_begin_offset = 0
        self.min_offset = 0
        self.max_offset = 0
        self.message_buffer_list: list[bytes] = []
        self.message_queue_offsets: list[int] = []
        self.buffer_total_size = 0
        self.suggest_pulling_from_slave = False
        self._messages: list[MessageExt] | None = None

    @property
    def message_count(self) -> int:
        return len(self.message_buffer_list)

    @property
    def messages(self) -> list[MessageExt]:
        if self._messages is None:

            self._messages = [decode_message(b) for b in self.message_buffer_list]
        return self._messages

    def __repr__(self) -> str:
        return (
            f"GetMessageResult({self.status.name}, messages={self.message_count}, "
            f"next_begin_offset={self.next_begin_offset}, min_offset={self.min_offset}, "
            f"max_offset={self.max_offset})"
        )


class QueryMessageResult:
    """Models ``org.apache.rocketmq.store.QueryMessageResult``: messages found through the IndexFile.

    As in RocketMQ the broker does not resolve hash collisions; a caller that needs exact matches
    compares the keys itself (``MQAdminImpl`` does this on the client).
    """

    __slots__ = ("message_buffer_list", "index_last_update_timestamp", "index_last_update_phyoffset", "_messages")

    def __init__(self) -> None:
        self.message_buffer_list: list[bytes] = []
        self.index_last_update_timestamp = 0
        self.index_last_update_phyoffset = 0
        self._messages: list[MessageExt] | None = None

    @property
    def messages(self) -> list[MessageExt]:
        if self._messages is None:

            self._messages = [decode_message(b) for b in self.message_buffer_list]
        return self._messages

    def __repr__(self) -> str:
        return f"QueryMessageResult(messages={len(self.message_buffer_list)})"
