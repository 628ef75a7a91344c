"""GroupTransferService: completes a SYNC_MASTER put once a slave has acknowledged it, sans-IO.

Models ``org.apache.rocketmq.store.ha.HAService.GroupTransferService`` (4.x) and, with
``in_sync_replicas`` set, 5.x's ack counting (RIP-34). A request is ``(next_offset, deadline)``: the
put's ``wroteOffset + wroteBytes``. 4.x completes it with PUT_OK once ``push2SlaveMaxOffset >=
next_offset``; 5.x once ``needAckNums`` replicas (the master counts as one) have acked that far. A
request still waiting at its deadline completes with FLUSH_SLAVE_TIMEOUT (the message stays stored).
Simplified: requests are checked when acks arrive and at deadlines, not by a 10 ms polling thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rocketlab import plugs

DECIDE_WAIT_TRANSFER_PLUG = plugs.point("lab01.decide_wait_transfer")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""


def decide_wait_transfer(next_offset: int, ack_nums: int, deadline_ms: int, push2_slave_max_offset: int,
                         slave_acks: list[int], now_ms: int) -> bool | None:
    """One waiting put in ``doWaitTransfer``: True = replicated (PUT_OK), False = its deadline passed
    first (FLUSH_SLAVE_TIMEOUT), None = keep waiting. ``ack_nums`` <= 1 is 4.x (any slave's
    ``push2SlaveMaxOffset`` reached ``next_offset``); more is 5.x's count, the master being one."""
    if ack_nums <= 1:
        ok = push2_slave_max_offset >= next_offset
    else:
        ok = 1 + sum(a >= next_offset for a in slave_acks) >= ack_nums
    if ok:
        return True
    return False if now_ms >= deadline_ms else None


@dataclass(eq=False)
class GroupCommitRequest:
    """Models ``GroupCommitRequest``: a put waiting for replication up to ``next_offset``."""

    next_offset: int
    deadline_ms: int
    token: Any
    ack_nums: int = 1


class GroupTransferService:
    def __init__(self) -> None:
        self.requests: list[GroupCommitRequest] = []

    def put_request(self, request: GroupCommitRequest) -> None:
        self.requests.append(request)

    def do_wait_transfer(self, push2_slave_max_offset: int, slave_acks: Iterable[int],
                         now_ms: int) -> list[tuple[GroupCommitRequest, bool]]:
        """Requests done now: ``(request, transfer_ok)``; the rest keep waiting."""
        acks = list(slave_acks)
        decide = plugs.resolve(DECIDE_WAIT_TRANSFER_PLUG, decide_wait_transfer)
        done, waiting = [], []
        for request in self.requests:
            ok = decide(request.next_offset, request.ack_nums, request.deadline_ms, push2_slave_max_offset,
                        acks, now_ms)
            if ok is None:
                waiting.append(request)
            else:
                done.append((request, bool(ok)))
        self.requests = waiting
        return done

    def next_deadline_ms(self) -> int | None:
        return min((r.deadline_ms for r in self.requests), default=None)
