"""MemberState: role, term, vote and leader of one DLedger member, with the term/vote made durable.

Theory of operation
-------------------
* Roles: ``CANDIDATE`` at start, then ``LEADER``/``FOLLOWER``/``CANDIDATE`` through the three
  ``change_to_*`` methods, which the elector calls. ``change_to_candidate`` never touches the term or
  the vote: it only remembers a larger term in ``known_max_term_in_group``; :meth:`next_term` later
  jumps to it (or adds one). This is how DLedger adopts a higher term.
* Durability: ``currTerm`` and ``voteLeader`` live in the properties file ``currterm`` in the member's
  store directory, written by :meth:`next_term` and :meth:`set_curr_vote_for` only, *before* they return
  (so before any message that depends on them leaves). Write protocol as Java's ``IOUtils.string2File``
  (DLedger 0.3.x): ``currterm.tmp``, the old content copied to ``currterm.bak``, ``currterm`` deleted,
  ``.tmp`` renamed to ``currterm``, and never an fsync. So a power loss can lose a vote: the simulated
  power loss (:meth:`lose_unsynced`) models the kernel's writeback - what was written in the last
  :data:`DIRTY_EXPIRE_MS` (Linux's ``dirty_expire_centisecs``, 30 s) is lost and the file holds the newest
  older content, or is gone. The ``raft`` profile's ``durable_currterm`` writes ``.tmp`` with fsync and
  renames it over ``currterm`` atomically, then fsyncs the directory (Raft's persistent state).
* ``ledger_end_index``/``ledger_end_term`` are copies pushed in by the store after every append,
  truncate and recovery, so elections read them without touching the store.

Never reads a clock, never sends. Java file: ``MemberState.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

from rocketlab.dledger.config import DLedgerConfig, parse_properties
from rocketlab.dledger.protocol import DLedgerResponseCode, check
from rocketlab.errors import ConfigError, StoreError
from rocketlab.i18n import _

DIRTY_EXPIRE_MS = 30_000
"""Linux's default ``vm.dirty_expire_centisecs``: dirty page-cache data older than this has been written
back; younger data dies with a power loss (the model of an un-fsynced ``currterm`` write)."""
TERM_PERSIST_FILE = "currterm"
TERM_PERSIST_KEY_TERM = "currTerm"
TERM_PERSIST_KEY_VOTE_FOR = "voteLeader"


class Role(enum.Enum):
    """Models MemberState.Role."""

    UNKNOWN = 0
    CANDIDATE = 1
    LEADER = 2
    FOLLOWER = 3


class MemberState:
    """Models MemberState, DLedger 0.3.1.2.

    Simplified: no monitor (the sans-IO core is single-threaded, which is what Java's one big lock
    provides); a malformed ``currterm`` file raises :class:`~rocketlab.errors.StoreError` instead of being
    logged and ignored, and write errors propagate (losing a vote record is a safety bug). With
    ``store_dir=None`` the term and vote live in memory only (the MEMORY store type).
    """

    def __init__(self, config: DLedgerConfig, store_dir: Path | None = None) -> None:
        self.config = config
        self.group = config.group
        self.self_id = config.self_id
        self.peer_map = dict(config.peer_map)
        self.store_dir = Path(store_dir) if store_dir is not None else None
        self.fsync = config.fsync_policy != "never"
        self.role = Role.CANDIDATE
        self.curr_term = 0
        self.curr_vote_for: str | None = None
        self.leader_id: str | None = None
        self.ledger_end_index = -1
        self.ledger_end_term = -1
        self.known_max_term_in_group = -1
        self.peers_live_table: dict[str, bool] = {}
        self.transferee: str | None = None
        self.term_to_take_leadership = -1
        self.clock_ms = 0
        """The time of the input being handled (the server sets it): when an un-fsynced write happened."""
        self.on_disk: bytes | None = None
        """``currterm`` as written back to disk (at start: what was there), for :meth:`lose_unsynced`."""
        self.unsynced_writes: list[tuple[int, bytes]] = []
        self.load_term()

    # ------------------------------------------------------------------ persistence
    @property
    def term_file(self) -> Path | None:
        return self.store_dir / TERM_PERSIST_FILE if self.store_dir is not None else None

    def load_term(self) -> None:
        """Read ``currterm`` if it exists; a fresh member starts at term 0 with no vote."""
        path = self.term_file
        if path is None or not path.exists():
            return
        try:
            self.on_disk = path.read_bytes()
            props = parse_properties(self.on_disk.decode("utf-8"), source=str(path))
        except (OSError, UnicodeDecodeError, ConfigError) as e:
            raise StoreError(_("{path}: unreadable term file: {why}").format(path=path, why=e)) from e
        try:
            self.curr_term = int(props.get(TERM_PERSIST_KEY_TERM, "0"))
        except ValueError:
            raise StoreError(_("{path}: {key} is not an integer: {value!r}").format(
                path=path, key=TERM_PERSIST_KEY_TERM, value=props.get(TERM_PERSIST_KEY_TERM))) from None
        if self.curr_term < 0:
            raise StoreError(_("{path}: negative {key} {value}").format(path=path, key=TERM_PERSIST_KEY_TERM,
                                                                       value=self.curr_term))
        self.curr_vote_for = props.get(TERM_PERSIST_KEY_VOTE_FOR) or None

    def persist_term(self) -> None:
        """Write term and vote: as Java (no fsync), or durably with ``durable_currterm``."""
        path = self.term_file
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"{TERM_PERSIST_KEY_TERM}={self.curr_term}\n{TERM_PERSIST_KEY_VOTE_FOR}={self.curr_vote_for or ''}\n"
        data = text.encode("utf-8")
        if self.config.durable_currterm:
            write_file_durably(path, data, fsync=self.fsync)
            return
        write_file_like_java(path, data)
        self.unsynced_writes.append((self.clock_ms, data))
        self._write_back(self.clock_ms)

    def _write_back(self, now_ms: int) -> None:
        """Writes older than DIRTY_EXPIRE_MS have reached the disk."""
        while self.unsynced_writes and self.unsynced_writes[0][0] <= now_ms - DIRTY_EXPIRE_MS:
            self.on_disk = self.unsynced_writes.pop(0)[1]

    def lose_unsynced(self, now_ms: int) -> bool:
        """A power loss at ``now_ms``: ``currterm`` falls back to what the kernel had written back (see the
        module docstring); returns True if a term or vote was lost. Durable writes lose nothing."""
        path = self.term_file
        if path is None or self.config.durable_currterm:
            return False
        self._write_back(now_ms)
        lost = bool(self.unsynced_writes)
        self.unsynced_writes.clear()
        if lost:
            for leftover in (path.with_name(path.name + ".tmp"),):
                leftover.unlink(missing_ok=True)
            if self.on_disk is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(self.on_disk)
        return lost

    # ------------------------------------------------------------------ queries
    @property
    def peer_size(self) -> int:
        return len(self.peer_map)

    def is_quorum(self, num: int) -> bool:
        """``num >= peerSize/2 + 1`` (integer division; peerSize includes self)."""
        return num >= self.peer_size // 2 + 1

    def is_peer_member(self, member_id: str | None) -> bool:
        return member_id is not None and member_id in self.peer_map

    def is_leader(self) -> bool:
        return self.role is Role.LEADER

    def is_follower(self) -> bool:
        return self.role is Role.FOLLOWER

    def is_candidate(self) -> bool:
        return self.role is Role.CANDIDATE

    def other_peer_ids(self) -> list[str]:
        """Every member but self, sorted (the order broadcasts go out in)."""
        return sorted(p for p in self.peer_map if p != self.self_id)

    # ------------------------------------------------------------------ transitions
    def next_term(self) -> int:
        """Jump to ``known_max_term_in_group`` if larger, else add one; clear the vote; persist."""
        check(self.role is Role.CANDIDATE, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"{self.role.name} != CANDIDATE")
        if self.known_max_term_in_group > self.curr_term:
            self.curr_term = self.known_max_term_in_group
        else:
            self.curr_term += 1
        self.curr_vote_for = None
        self.persist_term()
        return self.curr_term

    def change_to_leader(self, term: int) -> None:
        check(self.curr_term == term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE, f"{self.curr_term} != {term}")
        self.role = Role.LEADER
        self.leader_id = self.self_id
        self.peers_live_table.clear()

    def change_to_follower(self, term: int, leader_id: str | None) -> None:
        check(self.curr_term == term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE, f"{self.curr_term} != {term}")
        self.role = Role.FOLLOWER
        self.leader_id = leader_id
        self.transferee = None

    def change_to_candidate(self, term: int) -> None:
        """Become candidate; remember ``term`` if it is the largest seen. Term and vote are untouched."""
        check(term >= self.curr_term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"should {term} >= {self.curr_term}")
        if term > self.known_max_term_in_group:
            self.known_max_term_in_group = term
        self.role = Role.CANDIDATE
        self.leader_id = None
        self.transferee = None

    def adopt_term(self, term: int) -> None:
        """Raft (the ``raft`` profile's ``raft_election``): a bigger term seen in any message becomes the
        current term at once and the vote is cleared, persisted before anything else happens. DLedger
        never does this: it only remembers the term in ``known_max_term_in_group``."""
        check(term > self.curr_term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE, f"adopt {term} <= {self.curr_term}")
        self.curr_term = term
        self.curr_vote_for = None
        self.known_max_term_in_group = max(self.known_max_term_in_group, term)
        self.persist_term()

    def set_curr_vote_for(self, vote_for: str | None) -> None:
        """Record the vote durably before anything else happens."""
        self.curr_vote_for = vote_for
        self.persist_term()

    def set_transferee(self, transferee: str | None) -> None:
        check(self.role is Role.LEADER, DLedgerResponseCode.ILLEGAL_MEMBER_STATE, "only a leader transfers")
        self.transferee = transferee

    def update_ledger_index_and_term(self, index: int, term: int) -> None:
        self.ledger_end_index = index
        self.ledger_end_term = term


def write_file_like_java(path: Path, data: bytes) -> None:
    """IOUtils.string2File (DLedger 0.3.x): ``path.tmp``, old content to ``path.bak``, delete ``path``,
    rename ``.tmp`` to ``path``; no fsync anywhere (a crash between delete and rename leaves no file)."""
    tmp = path.with_name(path.name + ".tmp")
    bak = path.with_name(path.name + ".bak")
    tmp.write_bytes(data)
    if path.exists():
        bak.write_bytes(path.read_bytes())
    path.unlink(missing_ok=True)
    os.rename(tmp, path)


def write_file_durably(path: Path, data: bytes, fsync: bool = True) -> None:
    """``path.tmp`` (+ fsync), previous content to ``path.bak``, rename over ``path``, fsync the directory."""
    tmp = path.with_name(path.name + ".tmp")
    bak = path.with_name(path.name + ".bak")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if path.exists():
        bak.write_bytes(path.read_bytes())
    os.replace(tmp, path)
    if fsync:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
