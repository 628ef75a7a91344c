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
        done, waiting = [], []
        for request in self.requests:
            if request.ack_nums <= 1:
                ok = push2_slave_max_offset >= request.next_offset
            else:
                ok = 1 + sum(a >= request.next_offset for a in acks) >= request.ack_nums
            if ok or now_ms >= request.deadline_ms:
                done.append((request, ok))
            else:
                waiting.append(request)
        self.requests = waiting
        return done

    def next_deadline_ms(self) -> int | None:
        return min((r.deadline_ms for r in self.requests), default=None)
