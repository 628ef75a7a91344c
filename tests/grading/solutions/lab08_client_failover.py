"""Lab 08: a learner's complete solution (written from the exercise's docstrings and the 4.9.5 sources, not
the kit's code), graded to full marks by tests/grading/test_grader.py.
"""

from __future__ import annotations

from rocketlab.client.message import MessageQueue
from rocketlab.client.route import LatencyView, QueueChoice

MASK = 0x7FFFFFFF


def allocate(consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
             cid_all: list[str]) -> list[MessageQueue]:
    if not current_cid or not mq_all or not cid_all:
        raise ValueError("currentCID, mqAll and cidAll must not be empty")
    if current_cid not in cid_all:
        return []
    me, queues, members = cid_all.index(current_cid), len(mq_all), len(cid_all)
    base, extra = divmod(queues, members)
    if queues <= members:
        return [mq_all[me]] if me < queues else []
    size = base + 1 if me < extra else base
    first = me * size if me < extra else me * size + extra
    return list(mq_all[first:first + size])


def position(counter: int, n: int) -> int:
    """Java's ``Math.abs(counter) % n`` on an int (``abs(MIN_VALUE)`` stays negative: then 0)."""
    value = counter & 0xFFFFFFFF
    if value >= 1 << 31:
        value -= 1 << 32
    if value == -(1 << 31):
        return 0
    return abs(value) % n


def select_one_message_queue(queues: list[MessageQueue], index: int, last_broker_name: str | None,
                             latency: LatencyView | None) -> QueueChoice:
    n = len(queues)

    def next_in_turn() -> int:
        nonlocal index
        index += 1
        return position(index & MASK, n)

    if latency is None:
        if last_broker_name is not None:
            for _ in range(n):
                pos = next_in_turn()
                if queues[pos].broker_name != last_broker_name:
                    return QueueChoice(pos, queues[pos], index)
        pos = next_in_turn()
        return QueueChoice(pos, queues[pos], index)
    index += 1
    walk = index & MASK
    for step in range(n):
        pos = position(walk + step, n)
        if queues[pos].broker_name not in latency.unavailable:
            return QueueChoice(pos, queues[pos], index)
    broker = latency.least_bad
    writable = latency.write_queue_nums.get(broker, -1) if broker is not None else -1
    pos = next_in_turn()
    if writable <= 0:
        return QueueChoice(pos, queues[pos], index)
    index += 1
    return QueueChoice(pos, MessageQueue(queues[pos].topic, broker, (index & MASK) % writable), index)
