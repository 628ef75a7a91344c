"""DLedgerStore: the interface both stores implement, and what they share.

Theory of operation
-------------------
A store holds the log and its committed index. Every mutation checks the member's role, term and
leader (the preconditions DLedger checks under the MemberState lock) and raises
:class:`~rocketlab.dledger.protocol.DLedgerException` with the response code the caller is answered.
After each append, truncate and recovery the store pushes its end index/term into MemberState.

Stores never send and never read a clock; they record trace events (``append``, ``truncate``,
``commit``) in :attr:`DLedgerStore.events`, which the hosting core drains into its Output.

Java file: ``store/DLedgerStore.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from rocketlab.core import Trace
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.member_state import MemberState, Role
from rocketlab.dledger.protocol import DLedgerResponseCode, check

AppendHook = Callable[[DLedgerEntry, bytearray, int], None]
"""Models DLedgerMmapFileStore.AppendHook: ``hook(entry, encoded_bytes, BODY_OFFSET)`` may patch the body
bytes before they are written (RocketMQ writes the physical offset this way)."""


class DLedgerStore(abc.ABC):
    """Models DLedgerStore, DLedger 0.3.1.2: the log, its end, its committed index.

    Simplified: no ``getMemberState``/``startup`` boilerplate; recovery happens in :meth:`startup`.
    """

    def __init__(self, member_state: MemberState) -> None:
        self.member_state = member_state
        self.ledger_begin_index = -1
        self.ledger_end_index = -1
        self.ledger_end_term = -1
        self.committed_index = -1
        self.committed_pos = -1
        self.append_hooks: list[AppendHook] = []
        self.events: list[Trace] = []
        self.version = 0
        self.is_disk_full = False  # set by a file store's CleanSpaceService; appends then fail DISK_FULL

    # ------------------------------------------------------------------ the interface
    @abc.abstractmethod
    def startup(self) -> None:
        """Load and recover whatever was persisted."""

    @abc.abstractmethod
    def append_as_leader(self, entry: DLedgerEntry) -> DLedgerEntry:
        """Assign index, term and pos to ``entry`` (its body and magic are kept) and append it."""

    @abc.abstractmethod
    def append_as_follower(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> DLedgerEntry:
        """Append the leader's entry, which must be ``end+1`` and land at its ``pos``."""

    @abc.abstractmethod
    def truncate(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> int:
        """Make ``entry`` the last entry (keeping an equal local one); returns the new end index."""

    @abc.abstractmethod
    def get(self, index: int) -> DLedgerEntry:
        """The entry at ``index``; DLedgerException(INDEX_OUT_OF_RANGE / INDEX_LESS_THAN_LOCAL_BEGIN)."""

    @abc.abstractmethod
    def get_entry_pos_and_size(self, index: int) -> tuple[int, int]:
        """``(pos, size)`` of the entry at ``index`` without reading its body."""

    def on_tick(self, now_ms: int) -> None:  # noqa: B027 - optional hook, the memory store has no periodic work
        """Periodic work (flush, checkpoint); the memory store has none."""
        return None

    def next_deadline_ms(self) -> int | None:
        return None

    def shutdown(self) -> None:
        """Clean shutdown: persist what a clean stop persists, then release files."""
        self.close()

    @abc.abstractmethod
    def close(self) -> None:
        """Release resources without persisting anything (a crash)."""

    def lose_unflushed(self) -> int:
        """Simulate a power loss before a crash: forget unflushed writes; returns the data bytes lost.
        The memory store keeps nothing across a crash anyway."""
        return 0

    # ------------------------------------------------------------------ shared logic
    def add_append_hook(self, hook: AppendHook) -> None:
        if hook not in self.append_hooks:
            self.append_hooks.append(hook)

    def update_ledger_end_index_and_term(self) -> None:
        self.member_state.update_ledger_index_and_term(self.ledger_end_index, self.ledger_end_term)

    # The checks below build their messages only when one fails (they run on every entry read and append).
    def check_get_range(self, index: int) -> None:
        if 0 <= index and self.ledger_begin_index <= index <= self.ledger_end_index:
            return
        check(index >= 0, DLedgerResponseCode.INDEX_OUT_OF_RANGE, f"{index} should be >= 0")
        check(index >= self.ledger_begin_index, DLedgerResponseCode.INDEX_LESS_THAN_LOCAL_BEGIN,
              f"{index} should be >= {self.ledger_begin_index}, ledgerBeginIndex may be revised")
        check(index <= self.ledger_end_index, DLedgerResponseCode.INDEX_OUT_OF_RANGE,
              f"{index} should be between {self.ledger_begin_index}-{self.ledger_end_index}")

    def check_follower_append(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> None:
        ms = self.member_state
        if (ms.role is Role.FOLLOWER and not self.is_disk_full and entry.index == self.ledger_end_index + 1
                and leader_term == ms.curr_term and leader_id == ms.leader_id):
            return
        check(ms.is_follower(), DLedgerResponseCode.NOT_FOLLOWER, f"role={ms.role.name}")
        check(not self.is_disk_full, DLedgerResponseCode.DISK_FULL, "the disk is full")
        check(entry.index == self.ledger_end_index + 1, DLedgerResponseCode.INCONSISTENT_INDEX,
              f"{entry.index} != {self.ledger_end_index + 1}")
        check(leader_term == ms.curr_term, DLedgerResponseCode.INCONSISTENT_TERM, f"{leader_term} != {ms.curr_term}")
        check(leader_id == ms.leader_id, DLedgerResponseCode.INCONSISTENT_LEADER, f"{leader_id} != {ms.leader_id}")

    def check_follower_truncate(self, leader_term: int, leader_id: str) -> None:
        ms = self.member_state
        check(ms.is_follower(), DLedgerResponseCode.NOT_FOLLOWER, f"role={ms.role.name}")
        check(leader_term == ms.curr_term, DLedgerResponseCode.INCONSISTENT_TERM, f"{leader_term} != {ms.curr_term}")
        check(leader_id == ms.leader_id, DLedgerResponseCode.INCONSISTENT_LEADER, f"{leader_id} != {ms.leader_id}")

    def check_leader_append(self) -> None:
        ms = self.member_state
        if ms.role is Role.LEADER and not self.is_disk_full and ms.transferee is None:
            return
        check(ms.is_leader(), DLedgerResponseCode.NOT_LEADER, f"role={ms.role.name}")
        check(not self.is_disk_full, DLedgerResponseCode.DISK_FULL, "the disk is full")
        check(ms.transferee is None, DLedgerResponseCode.LEADER_TRANSFERRING, f"transferee={ms.transferee}")

    def update_committed_index(self, term: int, new_committed_index: int) -> None:
        """Models updateCommittedIndex (0.3.x): ignored for an older term, an unchanged, smaller or
        below-begin index; otherwise capped at the ledger end. Not monotone: when a truncation has cut the
        log below the committed index (only possible once a committed entry is lost, Raft's Figure 8),
        the cap *lowers* the committed index, as Java's does."""
        if (new_committed_index == -1 or self.ledger_end_index == -1 or term < self.member_state.curr_term
                or new_committed_index == self.committed_index):
            return
        if new_committed_index < self.committed_index or new_committed_index < self.ledger_begin_index:
            return
        new_committed_index = min(new_committed_index, self.ledger_end_index)
        pos, size = self.get_entry_pos_and_size(new_committed_index)
        changed = new_committed_index != self.committed_index
        self.committed_index = new_committed_index
        self.committed_pos = pos + size
        if changed:
            self.trace("commit", index=self.committed_index, pos=self.committed_pos)

    def trace(self, kind: str, **fields: Any) -> None:
        """Record a trace event; ``append``/``truncate``/``clean_space`` also bump :attr:`version` (the log
        changed)."""
        if kind in ("append", "truncate", "clean_space"):
            self.version += 1
        self.events.append(Trace(kind, fields))

    def drain_events(self) -> list[Trace]:
        events, self.events = self.events, []
        return events

    def entries(self, first: int | None = None, last: int | None = None) -> list[DLedgerEntry]:
        """Entries ``[first, last]`` (defaults: the whole log), for inspection and invariant checks."""
        lo = self.ledger_begin_index if first is None else first
        hi = self.ledger_end_index if last is None else last
        if lo < 0 or hi < lo:
            return []
        return [self.get(i) for i in range(lo, hi + 1)]
