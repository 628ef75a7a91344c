"""Helpers shared by the store tests."""

from __future__ import annotations

from rocketlab.store import Message

SMALL = dict(
    mapped_file_size_commit_log=8 * 1024,
    mapped_file_size_consume_queue=20 * 64,
    max_hash_slot_num=64,
    max_index_num=256,
)

GOLDEN_BODY = b"Once, there was a chance for me!"


class FakeClock:
    """A settable millisecond clock for store timestamps (no wall time in assertions)."""

    def __init__(self, now_ms: int = 1_700_000_000_000) -> None:
        self.now = now_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


GOLDEN = 157
"""Bytes of :func:`golden_message`'s record as RocketMQ 4.9.5 (the store's default release) writes it; 5.3.3
writes 158 (the separator after the last property kept), and the real stores of both agree (tests/oracle)."""


def golden_message(keys: str = "1700000000000", queue_id: int = 0) -> Message:
    """The digest's worked example: 157 bytes with IPv4 hosts (158 in 5.3.3)."""
    return Message(
        topic="FooBar",
        body=GOLDEN_BODY,
        queue_id=queue_id,
        properties={"KEYS": keys, "TAGS": "TAG1"},
        born_timestamp=1_700_000_000_000,
        born_host=("127.0.0.1", 8123),
    )

