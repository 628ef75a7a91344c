"""DLedgerRoleChangeHandler: turns DLedger role changes into broker roles (RocketMQ 4.9.5).

Theory of operation
-------------------
The elector calls :meth:`DLedgerRoleChangeHandler.handle` synchronously on every role change, under
DLedger's lock, so it must not block: like Java's single-thread executor it only *queues* a task. The
broker core runs the queue after each of its inputs (:meth:`run`), in order, one task at a time:

* ``CANDIDATE``: if the broker is not already SLAVE, ``changeToSlave(id)``;
* ``FOLLOWER``: ``changeToSlave(id)`` (the master is now the DLedger leader);
* ``LEADER``: wait - polling every ``poll_interval_ms`` (100 ms) of the core's clock - until this member
  is no longer leader (abort, the task ends) or its DLedger log is empty or (``ledgerEndIndex ==
  committedIndex`` and ``dispatchBehindBytes() == 0``); then ``recoverTopicQueueTable()`` (next queue
  offsets from the consume queues) and ``changeToMaster(SYNC_MASTER)``. Tasks queued meanwhile wait
  behind it, as on Java's executor.

``id`` is ``digits(selfId) + 1``: a member is SLAVE with brokerId 1, 2, 3 ... and MASTER with brokerId 0.
A new leader's entries may still be uncommitted: the wait makes sure the consume queues it serves
from - and the queue offsets it hands out next - cover every committed message first.

Never reads a clock or sleeps: time arrives as ``now_ms``; :meth:`next_deadline_ms` is the next poll.
Java file: ``broker/dledger/DLedgerRoleChangeHandler.java``. Simplified: no name-server registration,
no schedule/transaction "special services" to stop and start.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from rocketlab.core import OutputBuilder
from rocketlab.dledger.member_state import Role


class RoleChangeTarget(Protocol):
    """What the handler needs of the broker (BrokerController + its store + the DLedger server)."""

    broker_role: str
    server: Any
    store: Any

    def change_to_slave(self, now_ms: int, out: OutputBuilder) -> None: ...

    def change_to_master(self, role: str, now_ms: int, out: OutputBuilder) -> None: ...


class DLedgerRoleChangeHandler:
    """Models DLedgerRoleChangeHandler, RocketMQ 4.9.5 (see the module docstring)."""

    def __init__(self, broker: RoleChangeTarget, poll_interval_ms: int = 100) -> None:
        self.broker = broker
        self.poll_interval_ms = poll_interval_ms
        self.tasks: deque[tuple[int, Role]] = deque()
        self.next_poll_ms: int | None = None
        self.handled: list[tuple[int, str, str]] = []  # (term, DLedger role, outcome), for inspection

    def handle(self, term: int, role: Role) -> None:
        """``handle(term, role)``: queue the task (``executorService.submit``); never blocks."""
        self.tasks.append((term, role))

    def next_deadline_ms(self) -> int | None:
        return self.next_poll_ms if self.tasks else None

    def run(self, now_ms: int, out: OutputBuilder) -> None:
        """Run queued tasks in order until the queue is empty or a LEADER task must wait."""
        while self.tasks:
            term, role = self.tasks[0]
            if role is Role.LEADER:
                if self.next_poll_ms is not None and now_ms < self.next_poll_ms:
                    return
                ready = self.leader_ready()
                if ready is None:
                    self.next_poll_ms = now_ms + self.poll_interval_ms
                    return
                self.next_poll_ms = None
                self.tasks.popleft()
                if ready:
                    self.broker.store.recover_topic_queue_table()
                    self.broker.change_to_master("SYNC_MASTER", now_ms, out)
                self.handled.append((term, role.name, "MASTER" if ready else "aborted: no longer leader"))
                continue
            self.tasks.popleft()
            if role is Role.FOLLOWER or (role is Role.CANDIDATE and self.broker.broker_role != "SLAVE"):
                self.broker.change_to_slave(now_ms, out)
                self.handled.append((term, role.name, "SLAVE"))
            else:
                self.handled.append((term, role.name, "unchanged"))

    def leader_ready(self) -> bool | None:
        """One poll of the LEADER wait: False = no longer leader (abort), True = go, None = wait."""
        server, store = self.broker.server, self.broker.store
        if not server.is_leader:
            return False
        if server.ledger_end_index == -1:
            return True
        if server.ledger_end_index == server.committed_index and store.dispatch_behind_bytes() <= 0:
            return True
        return None


__all__ = ["DLedgerRoleChangeHandler", "RoleChangeTarget"]
