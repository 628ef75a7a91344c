"""The read path of the message store: pulls, lookups by offset and key, queue offsets and times.

Models ``DefaultMessageStore.getMessage`` (with ``isTheBatchFull`` and ``nextOffsetCorrection``),
``lookMessageByOffset``, ``queryMessage`` and the offset/timestamp getters. A read creates no consume queue
(Java's ``findConsumeQueue`` creates an empty one in memory, and no file): a queue that never had a message
reads as that empty queue, NO_MESSAGE_IN_QUEUE, as in Java (NO_MATCHED_LOGIC_QUEUE never comes from it).
"""

from __future__ import annotations

from rocketlab.errors import CodecError, StoreError
from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import CQ_STORE_UNIT_SIZE, BrokerRole, MessageStoreConfig
from rocketlab.store.consume_queue import UNIT, ConsumeQueue
from rocketlab.store.index_service import IndexService
from rocketlab.store.message import MessageExt
from rocketlab.store.message_codec import decode_message
from rocketlab.store.message_filter import MessageFilter
from rocketlab.store.status import GetMessageResult, GetMessageStatus, QueryMessageResult

_LONG_MIN = -(2**63)


class MessageStoreGet:
    """The read part of :class:`~rocketlab.store.message_store.DefaultMessageStore` (a mixin: it reads
    the store's state, declared below)."""

    config: MessageStoreConfig
    commit_log: CommitLog | None
    index_service: IndexService | None
    shutdown_flag: bool
    _total_memory: int

    # =============================================================================== read path ====
    def _next_offset_correction(self, old_offset: int, new_offset: int) -> int:
        if self.config.broker_role is not BrokerRole.SLAVE or self.config.offset_check_in_slave:
            return new_offset
        return old_offset

    def _is_the_batch_full(self, size_py: int, max_msg_nums: int, buffer_total: int, message_total: int, in_disk: bool) -> bool:
        if buffer_total == 0 or message_total == 0:
            return False
        if max_msg_nums <= message_total:
            return True
        c = self.config
        if in_disk:
            return (
                buffer_total + size_py > c.max_transfer_bytes_on_message_in_disk
                or message_total > c.max_transfer_count_on_message_in_disk - 1
            )
        return (
            buffer_total + size_py > c.max_transfer_bytes_on_message_in_memory
            or message_total > c.max_transfer_count_on_message_in_memory - 1
        )

    def get_message(
        self,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int = 32,
        message_filter: MessageFilter | None = None,
        group: str | None = None,
    ) -> GetMessageResult:
        """``getMessage``: up to ``max_msg_nums`` messages of one queue from queue offset ``offset``.

        The status says why nothing came back (see :class:`GetMessageStatus`); ``next_begin_offset``
        is where the next pull should start. ``group`` is accepted for API fidelity and unused.
        """
        if self.shutdown_flag or self.commit_log is None:
            raise StoreError("the store is shut down; get_message is forbidden")
        cl = self.commit_log
        result = GetMessageResult()
        status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
        next_begin_offset = offset
        min_offset = max_offset = 0
        max_offset_py = cl.get_max_offset()
        cq = self.get_consume_queue(topic, queue_id)
        if cq is not None:
            min_offset, max_offset = cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue()
        if cq is None or max_offset == 0:  # a missing queue reads as findConsumeQueue creates it: empty
            status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
            next_begin_offset = self._next_offset_correction(offset, 0)
        elif offset < min_offset:
            status = GetMessageStatus.OFFSET_TOO_SMALL
            next_begin_offset = self._next_offset_correction(offset, min_offset)
        elif offset == max_offset:
            status = GetMessageStatus.OFFSET_OVERFLOW_ONE
            next_begin_offset = self._next_offset_correction(offset, offset)
        elif offset > max_offset:
            status = GetMessageStatus.OFFSET_OVERFLOW_BADLY
            next_begin_offset = self._next_offset_correction(offset, min_offset if min_offset == 0 else max_offset)
        else:
            status, next_begin_offset = self._read_queue(cq, offset, max_msg_nums, message_filter, max_offset_py, result)
        result.status = status
        result.next_begin_offset = next_begin_offset
        result.min_offset = min_offset
        result.max_offset = max_offset
        return result

    def _read_queue(
        self,
        cq: ConsumeQueue,
        offset: int,
        max_msg_nums: int,
        message_filter: MessageFilter | None,
        max_offset_py: int,
        result: GetMessageResult,
    ) -> tuple[GetMessageStatus, int]:
        cl = self.commit_log
        assert cl is not None
        buf = cq.get_index_buffer(offset, max(16000, max_msg_nums * CQ_STORE_UNIT_SIZE))
        if buf is None:
            return GetMessageStatus.OFFSET_FOUND_NULL, self._next_offset_correction(offset, cq.roll_next_file(offset))
        status = GetMessageStatus.NO_MATCHED_MESSAGE
        next_phy_file_start_offset = _LONG_MIN
        max_phy_offset_pulling = 0
        memory = self._total_memory * self.config.access_message_in_memory_max_ratio // 100
        i = 0
        size = len(buf) - len(buf) % CQ_STORE_UNIT_SIZE
        while i < size:
            offset_py, size_py, tags_code = UNIT.unpack_from(buf, i)
            max_phy_offset_pulling = offset_py
            if next_phy_file_start_offset != _LONG_MIN and offset_py < next_phy_file_start_offset:
                i += CQ_STORE_UNIT_SIZE
                continue
            in_disk = max_offset_py - offset_py > memory
            if self._is_the_batch_full(size_py, max_msg_nums, result.buffer_total_size, result.message_count, in_disk):
                break
            if message_filter is not None and not message_filter.is_matched_by_consume_queue(tags_code):
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.NO_MATCHED_MESSAGE
                i += CQ_STORE_UNIT_SIZE
                continue
            data = cl.get_message(offset_py, size_py)
            if data is None:
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.MESSAGE_WAS_REMOVING
                next_phy_file_start_offset = cl.roll_next_file(offset_py)
                i += CQ_STORE_UNIT_SIZE
                continue
            if message_filter is not None and not message_filter.is_matched_by_commit_log(data):
                if result.buffer_total_size == 0:
                    status = GetMessageStatus.NO_MATCHED_MESSAGE
                i += CQ_STORE_UNIT_SIZE
                continue
            result.message_buffer_list.append(data)
            result.message_queue_offsets.append(offset + i // CQ_STORE_UNIT_SIZE)
            result.buffer_total_size += len(data)
            status = GetMessageStatus.FOUND
            next_phy_file_start_offset = _LONG_MIN
            i += CQ_STORE_UNIT_SIZE
        result.suggest_pulling_from_slave = max_offset_py - max_phy_offset_pulling > memory
        return status, offset + i // CQ_STORE_UNIT_SIZE

    def look_message_by_offset(self, commit_log_offset: int, size: int | None = None) -> MessageExt | None:
        """``lookMessageByOffset``: the message whose record starts at ``commit_log_offset``, or None."""
        cl = self.commit_log
        if cl is None:
            return None
        if size is None:
            head = cl.get_message(commit_log_offset, 4)
            if head is None:
                return None
            size = int.from_bytes(head, "big", signed=True)
            if size <= 0:
                return None
        data = cl.get_message(commit_log_offset, size)
        if data is None:
            return None
        try:
            return decode_message(data)
        except CodecError:
            return None

    def query_message(
        self, topic: str, key: str, max_num: int = 32, begin: int = 0, end: int = 2**63 - 1
    ) -> QueryMessageResult:
        """``queryMessage``: messages whose ``KEYS`` or ``UNIQ_KEY`` hash like ``key``, stored in
        ``[begin, end]`` (ms). Up to three passes, moving the end back to the oldest hit found."""
        result = QueryMessageResult()
        cl, index = self.commit_log, self.index_service
        if cl is None or index is None:
            return result
        last_query_msg_time = end
        for _ in range(3):
            found = index.query_offset(topic, key, max_num, begin, last_query_msg_time)
            if not found.phy_offsets:
                break
            found.phy_offsets.sort()
            result.index_last_update_phyoffset = found.index_last_update_phyoffset
            result.index_last_update_timestamp = found.index_last_update_timestamp
            for m, phy_offset in enumerate(found.phy_offsets):
                msg = self.look_message_by_offset(phy_offset)
                if msg is None:
                    continue
                if m == 0:
                    last_query_msg_time = msg.store_timestamp
                data = cl.get_message(phy_offset, msg.store_size)
                if data is not None:
                    result.message_buffer_list.append(data)
            if result.message_buffer_list or last_query_msg_time < begin:
                break
        return result

    # ------------------------------------------------------------------ offsets and timestamps ----
    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        return cq.get_max_offset_in_queue() if cq is not None else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        return cq.get_min_offset_in_queue() if cq is not None else -1

    def get_commit_log_offset_in_queue(self, topic: str, queue_id: int, consume_queue_offset: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        unit = cq.get_unit(consume_queue_offset) if cq is not None else None
        return unit[0] if unit is not None else 0

    def get_message_store_timestamp(self, topic: str, queue_id: int, consume_queue_offset: int) -> int:
        cq = self.get_consume_queue(topic, queue_id)
        unit = cq.get_unit(consume_queue_offset) if cq is not None else None
        if unit is None or self.commit_log is None:
            return -1
        return self.commit_log.pickup_store_timestamp(unit[0], unit[1])

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """``getOffsetInQueueByTime``: see :meth:`ConsumeQueue.get_offset_in_queue_by_time`; 0 for a
        missing queue."""
        cq = self.get_consume_queue(topic, queue_id)
        if cq is None or self.commit_log is None:
            return 0
        return cq.get_offset_in_queue_by_time(timestamp, self.commit_log)

    def get_max_phy_offset(self) -> int:
        return self.commit_log.get_max_offset() if self.commit_log is not None else 0

    def get_min_phy_offset(self) -> int:
        return self.commit_log.get_min_offset() if self.commit_log is not None else -1

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        return self.get_message_store_timestamp(topic, queue_id, self.get_min_offset_in_queue(topic, queue_id))
