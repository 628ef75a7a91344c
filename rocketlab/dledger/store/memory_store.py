"""DLedgerMemoryStore: the log in a dict, for large simulation sweeps; same interface as the file store.

Theory of operation
-------------------
Entries live in a dict ``index -> DLedgerEntry``. Positions are assigned exactly as the file store
assigns them (the data-file size and the blank-padding rule are simulated), so memory and file replicas
agree on every ``pos`` and the follower's position check is the same. Truncation, commit and append
hooks behave as in the file store. Nothing survives :meth:`close`: a restarted member starts empty, so
use the file store for crash/restart scenarios.

Java file: ``store/DLedgerMemoryStore.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.entry import BODY_OFFSET, MIN_BLANK_LEN, DLedgerEntry
from rocketlab.dledger.entry_coder import decode, encode, set_index_term, set_pos
from rocketlab.dledger.member_state import MemberState
from rocketlab.dledger.protocol import DLedgerResponseCode, check
from rocketlab.dledger.store.dledger_store import DLedgerStore


class DLedgerMemoryStore(DLedgerStore):
    """Models DLedgerMemoryStore, DLedger 0.3.1.2.

    Deliberately *not* like Java's test-grade store, which sets ``committedIndex`` to every appended index
    and implements ``truncate`` as an append: here commit follows ``update_committed_index`` and
    ``truncate`` really removes entries, so sweeps on memory stores exercise the real protocol.
    Simplified: no persistence at all (volatile by design).
    """

    def __init__(self, config: DLedgerConfig, member_state: MemberState) -> None:
        super().__init__(member_state)
        self.file_size = config.mapped_file_size_for_entry_data
        self.cached_entries: dict[int, DLedgerEntry] = {}
        self.end_pos = 0

    def startup(self) -> None:
        self.update_ledger_end_index_and_term()

    # ------------------------------------------------------------------ positions
    def next_pos(self, size: int) -> int:
        """Where an entry of ``size`` bytes lands after ``end_pos``, blank padding included."""
        check(size + MIN_BLANK_LEN <= self.file_size, DLedgerResponseCode.DISK_ERROR,
              f"entry of {size} bytes cannot fit a data file of {self.file_size}")
        remaining = self.file_size - self.end_pos % self.file_size
        if size + MIN_BLANK_LEN > remaining:
            return self.end_pos + remaining
        return self.end_pos

    # ------------------------------------------------------------------ appends
    def append_as_leader(self, entry: DLedgerEntry) -> DLedgerEntry:
        self.check_leader_append()
        buf = encode(entry)
        index, term = self.ledger_end_index + 1, self.member_state.curr_term
        set_index_term(buf, index, term, entry.magic)
        pos = self.next_pos(len(buf))
        set_pos(buf, pos)
        placed = entry.with_(index=index, term=term, pos=pos, size=len(buf))
        for hook in self.append_hooks:
            hook(placed, buf, BODY_OFFSET)
        stored = decode(buf)
        self._put(stored)
        return stored

    def append_as_follower(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> DLedgerEntry:
        self.check_follower_append(entry, leader_term, leader_id)
        size = entry.compute_size_in_bytes()
        pos = self.next_pos(size)
        check(pos == entry.pos, DLedgerResponseCode.DISK_ERROR, f"{pos} != {entry.pos}")
        stored = entry if entry.size == size else entry.with_(size=size)
        self._put(stored)
        return stored

    def _put(self, entry: DLedgerEntry) -> None:
        self.cached_entries[entry.index] = entry
        self.ledger_end_index, self.ledger_end_term = entry.index, entry.term
        self.end_pos = entry.pos + entry.size
        if self.ledger_begin_index == -1:
            self.ledger_begin_index = entry.index
        self.update_ledger_end_index_and_term()
        self.trace("append", index=entry.index, term=entry.term, pos=entry.pos, size=entry.size)

    def truncate(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> int:
        self.check_follower_truncate(leader_term, leader_id)
        entry = entry.with_(size=entry.compute_size_in_bytes())
        existed = self.cached_entries.get(entry.index) == entry
        old_end = self.ledger_end_index
        first_removed = entry.index + 1 if existed else entry.index
        in_range = self.ledger_begin_index <= entry.index <= self.ledger_end_index + 1 and self.ledger_begin_index != -1
        doomed = range(first_removed, old_end + 1) if in_range else list(self.cached_entries)
        for i in doomed:
            self.cached_entries.pop(i, None)
        self.cached_entries[entry.index] = entry
        self.ledger_end_index, self.ledger_end_term = entry.index, entry.term
        self.end_pos = entry.pos + entry.size
        self.ledger_begin_index = min(self.cached_entries)
        self.update_ledger_end_index_and_term()
        if old_end >= first_removed:
            self.trace("truncate", index=first_removed)
        if not existed:
            self.trace("append", index=entry.index, term=entry.term, pos=entry.pos, size=entry.size)
        return entry.index

    # ------------------------------------------------------------------ reads
    def get(self, index: int) -> DLedgerEntry:
        self.check_get_range(index)
        entry = self.cached_entries.get(index)
        check(entry is not None, DLedgerResponseCode.DISK_ERROR, f"no entry {index}")
        assert entry is not None
        return entry

    def get_entry_pos_and_size(self, index: int) -> tuple[int, int]:
        entry = self.get(index)
        return entry.pos, entry.size

    def close(self) -> None:
        self.cached_entries.clear()
