"""The broker's answers to offset, lookup and lock requests: one function per request, as Java answers it.

Models, from RocketMQ 4.9.5: ``ConsumerManageProcessor.queryConsumerOffset`` (a group with no offset
gets 0 while the queue starts at 0 and its first message is in memory -
``DefaultMessageStore.checkInDiskByConsumeOffset`` against ``accessMessageInMemoryMaxRatio`` of the
machine's RAM - else QUERY_NOT_FOUND) and ``getConsumerListByGroup``; ``AdminBrokerProcessor``'s
``getMaxOffset``, ``getMinOffset``, ``getEarliestMsgStoretime``, ``searchOffsetByTimestamp``,
``lockBatchMQ`` and ``unlockBatchMQ``; ``QueryMessageProcessor.queryMessage`` and ``viewMessageById``.
"""

from __future__ import annotations

from typing import Any

from rocketlab.broker import client_messages as m
from rocketlab.broker.client_manager import ConsumerManager
from rocketlab.broker.client_messages import ClientResponseCode as R
from rocketlab.broker.config_manager import ConsumerOffsetManager
from rocketlab.broker.rebalance_lock_manager import RebalanceLockManager
from rocketlab.store.consume_queue import UNIT

DEFAULT_QUERY_MAX_NUM = 32
"""``MessageStoreConfig.defaultQueryMaxNum``: a query by unique key returns up to this many."""


def check_in_disk_by_consume_offset(store: Any, topic: str, queue_id: int, consume_offset: int,
                                    total_memory: int) -> bool:
    """``checkInDiskByConsumeOffset``: the unit at ``consume_offset`` points further back in the commit
    log than ``accessMessageInMemoryMaxRatio`` % of ``total_memory``; False when there is no such unit."""
    cq = store.get_consume_queue(topic, queue_id)
    if cq is None:
        return False
    buf = cq.get_index_buffer(consume_offset, UNIT.size)
    if not buf or len(buf) < UNIT.size:
        return False
    offset_py = UNIT.unpack_from(buf, 0)[0]
    memory = int(total_memory * (store.config.access_message_in_memory_max_ratio / 100.0))
    return store.get_max_phy_offset() - offset_py > memory


def query_consumer_offset(store: Any, offsets: ConsumerOffsetManager, req: m.QueryConsumerOffsetRequest,
                          total_memory: int) -> Any:
    offset = offsets.query_offset(req.consumer_group, req.topic, req.queue_id)
    if offset >= 0:
        return m.OffsetResponse(offset)
    if store.get_min_offset_in_queue(req.topic, req.queue_id) <= 0 and not check_in_disk_by_consume_offset(
            store, req.topic, req.queue_id, 0, total_memory):
        return m.OffsetResponse(0)
    return m.ClientAnswer(R.QUERY_NOT_FOUND, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")


def get_consumer_list_by_group(consumers: ConsumerManager, req: m.GetConsumerListByGroupRequest) -> Any:
    info = consumers.get_consumer_group_info(req.consumer_group)
    ids = info.all_client_ids() if info is not None else []
    if ids:
        return m.ConsumerListResponse(tuple(ids))
    return m.ClientAnswer(R.SYSTEM_ERROR, "no consumer for this group, " + req.consumer_group)


def view_message_by_id(store: Any, req: m.ViewMessageRequest) -> Any:
    """``selectOneMessageByOffset``: the record at the offset (its size read from its first 4 bytes)."""
    record = None
    head = store.commit_log.get_message(req.offset, 4) if req.offset >= 0 else None
    if head is not None:
        size = int.from_bytes(head, "big", signed=True)
        if size > 0:
            record = store.commit_log.get_message(req.offset, size)
    if record is None:
        return m.ClientAnswer(R.SYSTEM_ERROR, f"can not find message by the offset, {req.offset}")
    return m.MessageRecordsResponse(record)


def query_message(store: Any, req: m.QueryMessageRequest) -> Any:
    max_num = DEFAULT_QUERY_MAX_NUM if req.unique_key else req.max_num
    found = store.query_message(req.topic, req.key, max_num, req.begin_timestamp, req.end_timestamp)
    if not found.message_buffer_list:
        return m.ClientAnswer(R.QUERY_NOT_FOUND, "can not find message, maybe time range not correct")
    return m.MessageRecordsResponse(b"".join(found.message_buffer_list), found.index_last_update_timestamp,
                                    found.index_last_update_phyoffset)


def answer_store_query(store: Any, msg: Any) -> Any:
    """GET_MAX_OFFSET, GET_MIN_OFFSET, GET_EARLIEST_MSG_STORETIME, SEARCH_OFFSET_BY_TIMESTAMP,
    VIEW_MESSAGE_BY_ID, QUERY_MESSAGE; None if ``msg`` is none of them."""
    t = type(msg)
    if t is m.GetMaxOffsetRequest:
        return m.OffsetResponse(store.get_max_offset_in_queue(msg.topic, msg.queue_id))
    if t is m.GetMinOffsetRequest:  # Java's findConsumeQueue makes a missing queue: min offset 0
        missing = store.get_consume_queue(msg.topic, msg.queue_id) is None
        return m.OffsetResponse(0 if missing else store.get_min_offset_in_queue(msg.topic, msg.queue_id))
    if t is m.GetEarliestMsgStoretimeRequest:
        return m.TimestampResponse(store.get_earliest_message_time(msg.topic, msg.queue_id))
    if t is m.SearchOffsetRequest:
        return m.OffsetResponse(store.get_offset_in_queue_by_time(msg.topic, msg.queue_id, msg.timestamp))
    if t is m.ViewMessageRequest:
        return view_message_by_id(store, msg)
    if t is m.QueryMessageRequest:
        return query_message(store, msg)
    return None


def answer_lock(locks: RebalanceLockManager, msg: Any, now_ms: int) -> Any:
    """LOCK_BATCH_MQ / UNLOCK_BATCH_MQ; None if ``msg`` is neither."""
    if isinstance(msg, m.LockBatchRequest):
        return m.LockBatchResponse(locks.try_lock_batch(msg.consumer_group, msg.mq_set, msg.client_id, now_ms))
    if isinstance(msg, m.UnlockBatchRequest):
        locks.unlock_batch(msg.consumer_group, msg.mq_set, msg.client_id)
        return m.ClientAnswer()
    return None
