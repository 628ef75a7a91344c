"""The summary of one CommitLog record that the reput hands to every dispatcher.

Models ``org.apache.rocketmq.store.DispatchRequest``.
"""

from __future__ import annotations


class DispatchRequest:
    """Models ``org.apache.rocketmq.store.DispatchRequest``, also the return value of
    ``CommitLog.checkMessageAndReturnSize``.

    How to read it (as in Java): ``success and msg_size > 0`` is a message; ``success and
    msg_size == 0`` is the end-of-file blank; ``not success and msg_size > 0`` is a complete record
    whose lengths disagree (skip ``msg_size`` bytes); ``not success and msg_size <= 0`` is a torn or
    garbage record (stop). ``reason`` is a kit addition: why a check failed, for recovery reports.
    """

    __slots__ = (
        "topic",
        "queue_id",
        "commit_log_offset",
        "msg_size",
        "tags_code",
        "store_timestamp",
        "consume_queue_offset",
        "keys",
        "success",
        "uniq_key",
        "sys_flag",
        "prepared_transaction_offset",
        "properties_map",
        "reason",
    )

    def __init__(
        self,
        topic: str = "",
        queue_id: int = 0,
        commit_log_offset: int = 0,
        msg_size: int = -1,
        tags_code: int = 0,
        store_timestamp: int = 0,
        consume_queue_offset: int = 0,
        keys: str = "",
        success: bool = False,
        uniq_key: str | None = None,
        sys_flag: int = 0,
        prepared_transaction_offset: int = 0,
        properties_map: dict[str, str] | None = None,
        reason: str = "",
    ) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.commit_log_offset = commit_log_offset
        self.msg_size = msg_size
        self.tags_code = tags_code
        self.store_timestamp = store_timestamp
        self.consume_queue_offset = consume_queue_offset
        self.keys = keys
        self.success = success
        self.uniq_key = uniq_key
        self.sys_flag = sys_flag
        self.prepared_transaction_offset = prepared_transaction_offset
        self.properties_map = properties_map
        self.reason = reason

    @classmethod
    def failure(cls, msg_size: int, reason: str) -> DispatchRequest:
        return cls(msg_size=msg_size, success=False, reason=reason)

    def __repr__(self) -> str:
        if not self.success:
            return f"DispatchRequest(success=False, msg_size={self.msg_size}, reason={self.reason!r})"
        return (
            f"DispatchRequest(topic={self.topic!r}, queue_id={self.queue_id}, "
            f"commit_log_offset={self.commit_log_offset}, msg_size={self.msg_size}, "
            f"consume_queue_offset={self.consume_queue_offset}, tags_code={self.tags_code})"
        )
