"""Filtering on the read path: by tags code in the ConsumeQueue, then (optionally) on the record.

Models ``org.apache.rocketmq.store.MessageFilter`` and the TAG case of ``ExpressionMessageFilter``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from rocketlab.store.message import tags_string_to_tags_code


class MessageFilter(Protocol):
    """Models ``MessageFilter``."""

    def is_matched_by_consume_queue(self, tags_code: int) -> bool: ...

    def is_matched_by_commit_log(self, msg_buffer: bytes) -> bool: ...


class TagsMessageFilter:
    """The TAG case of ``ExpressionMessageFilter``: a subscription expression such as ``"A || B"``
    (or ``"*"`` for everything) matched against the ConsumeQueue's tags code.

    As in RocketMQ the broker compares hash codes only; the consumer re-checks the tag strings.
    Simplified: no SQL92 filtering, no ConsumeQueueExt bitmap.
    """

    def __init__(self, expression: str | Iterable[str] = "*") -> None:
        tags = [t.strip() for t in expression.split("||")] if isinstance(expression, str) else list(expression)
        tags = [t for t in tags if t]
        self.match_all = not tags or "*" in tags
        self.tags_set = set(tags)
        self.code_set = {tags_string_to_tags_code(t) for t in tags}

    def is_matched_by_consume_queue(self, tags_code: int) -> bool:
        return self.match_all or tags_code in self.code_set

    def is_matched_by_commit_log(self, msg_buffer: bytes) -> bool:
        return True

    def __repr__(self) -> str:
        return "TagsMessageFilter(*)" if self.match_all else f"TagsMessageFilter({' || '.join(sorted(self.tags_set))})"
