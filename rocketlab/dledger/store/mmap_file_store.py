"""DLedgerMmapFileStore: the DLedger log on real files, byte-exact with DLedger 0.3.x.

Theory of operation
-------------------
Layout of a member's store directory (``storeBaseDir/dledger-<selfId>`` in Java)::

    data/00000000000000000000 ...   entries (48-byte header + body), blank-padded at file ends
    index/00000000000000000000 ...  one 32-byte slot per index at index*32
    currterm                        term and vote (MemberState)
    checkpoint                      endIndex / committedIndex, every checkPointInterval and on shutdown

* ``append_as_leader`` assigns index = end+1, term = currTerm and pos = where the data lands (after any
  blank padding), runs the append hooks on the encoded bytes, writes data then the index slot.
* ``append_as_follower`` requires index = end+1, the member's term and leader, and the leader's ``pos``.
* ``truncate`` keeps an equal local entry (cut after it) or cuts at its pos and writes the leader's entry;
  a position outside the existing files rebuilds the file list at that position (re-basing the log).
* Durability follows ``fsync_policy``: ``interval`` flushes (fsync) every ``flush_file_interval`` ms from
  :meth:`on_tick` (DLedger's FlushDataService), ``always`` after every write, ``never`` flushes on the
  same interval without the fsync system call (page cache only, for fast simulations). A crash
  (:meth:`close`, after :meth:`lose_unflushed` for a power loss) persists nothing more; a clean
  :meth:`shutdown` flushes and writes the checkpoint.
* In the TCP runtime :meth:`start_flush_service` moves the interval's fsyncs and the checkpoint to a
  thread (:mod:`.flush_data_service`), as Java runs them on FlushDataService's own thread; the
  simulator never starts it. ``always`` still fsyncs inline: the entry must be on disk before its ack.
* Recovery (:mod:`.mmap_recovery`) scans and validates every entry from the third-to-last file on and
  cuts the torn tail, reporting what it cut in :attr:`recovery_report`.

Never reads a clock: time arrives as ``now_ms``. Java file: ``store/file/DLedgerMmapFileStore.java``.
"""

from __future__ import annotations

from pathlib import Path

from rocketlab.dledger.config import DLedgerConfig, parse_properties
from rocketlab.dledger.entry import BODY_OFFSET, INDEX_UNIT_SIZE, DLedgerEntry
from rocketlab.dledger.entry_coder import decode, decode_index, encode, encode_index, set_index_term, set_pos
from rocketlab.dledger.member_state import MemberState, write_file_durably
from rocketlab.dledger.protocol import DLedgerException, DLedgerResponseCode, check
from rocketlab.dledger.store.clean_space_service import CleanRound, CleanSpaceService
from rocketlab.dledger.store.dledger_store import DLedgerStore
from rocketlab.dledger.store.flush_data_service import FlushDataService
from rocketlab.dledger.store.mmap_file_list import MmapFileList
from rocketlab.dledger.store.mmap_recovery import RecoveryReport, recover
from rocketlab.errors import CodecError, ConfigError, StoreError
from rocketlab.i18n import _

#: How many bytes of entries a leader keeps decoded after appending them (see :attr:`DLedgerMmapFileStore.recent`).
RECENT_ENTRY_BYTES = 16 * 2**20
CHECK_POINT_FILE = "checkpoint"
END_INDEX_KEY = "endIndex"
COMMITTED_INDEX_KEY = "committedIndex"


class DLedgerMmapFileStore(DLedgerStore):
    """Models DLedgerMmapFileStore, DLedger 0.3.1.2.

    Retention is :attr:`clean_space_service` (:mod:`.clean_space_service`), run by :meth:`clean_space`
    with a wall-clock time. Simplified: no multi-path data dirs, no 4 MiB thread-local buffer limit.
    As Java: ``truncate`` only moves the write positions (the cut entries stay on disk and a restart's
    recovery may read them back) and recovery accepts magic 1 only; the ``raft`` profile zeroes cut bytes (``truncate_zeroes_bytes``) and recovers its magic-2 NOOP
    entries (``recover_noop_entries``). Differences, each safer than Java and documented:
    ``append_as_follower`` checks the position *before* writing; recovery also finds the first entry of a
    re-based first file (Java would drop such a log), refuses a log whose next entry is a well-formed
    magic-2 NOOP when the profile does not recover them (Java would cut there and lose every later entry:
    the log was written under ``raft``), and raises :class:`~rocketlab.errors.StoreError` where Java calls
    ``System.exit(-1)``.

    Added for speed (issue #14): :attr:`recent` keeps the entries this member last appended as leader,
    decoded, up to :data:`RECENT_ENTRY_BYTES`: each follower's dispatcher reads every new entry back right
    after the append (Java reads it from the mapped file; a read here copies the index slot and the entry
    out of the mapped files and decodes them). :meth:`get` still checks the index against the log's range first, and every
    change of written bytes (truncate, a power loss, close) forgets them.
    """

    def __init__(self, config: DLedgerConfig, member_state: MemberState, store_dir: Path) -> None:
        super().__init__(member_state)
        self.config = config
        self.store_dir = Path(store_dir)
        fsync, zero = config.fsync_policy != "never", bool(config.truncate_zeroes_bytes)
        self.data_file_list = MmapFileList(self.store_dir / "data", config.mapped_file_size_for_entry_data, fsync,
                                           zero)
        self.index_file_list = MmapFileList(self.store_dir / "index", config.mapped_file_size_for_entry_index,
                                            fsync, zero)
        self.recovery_report: RecoveryReport | None = None
        self.last_flush_ms = 0
        self.last_check_point_ms = 0
        self.check_point_written: tuple[int, int] | None = None
        self.clean_space_service = CleanSpaceService(self)
        self.flush_service: FlushDataService | None = None
        self.recent: dict[int, DLedgerEntry] = {}
        """index -> the entry as written, for the entries last appended as leader (oldest first)."""
        self.recent_bytes = 0

    # ------------------------------------------------------------------ lifecycle
    def startup(self) -> None:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.data_file_list.load()
        self.index_file_list.load()
        self.recovery_report = recover(self)
        committed = self.load_check_point()
        if committed is not None:
            self.update_committed_index(self.member_state.curr_term, committed)
            self.recovery_report.committed_index = self.committed_index

    def start_flush_service(self) -> FlushDataService:
        """Flush and write the checkpoint on a thread of their own from now on (the TCP runtime)."""
        if self.flush_service is None:
            self.flush_service = FlushDataService(f"FlushDataService-{self.member_state.self_id}")
        return self.flush_service

    def shutdown(self) -> None:
        self.flush()
        self.persist_check_point()
        self.close()

    def close(self) -> None:
        self.forget_recent()
        if self.flush_service is not None:  # what it is doing finishes first; nothing new starts
            self.flush_service.stop()
            self.flush_service = None
        self.data_file_list.close()
        self.index_file_list.close()

    def lose_unflushed(self) -> int:
        """A power loss: zero what was written after the last flush, in data and index files; returns the
        data bytes lost. Call just before :meth:`close` when simulating a crash."""
        self.forget_recent()
        lost = 0
        for files in (self.data_file_list, self.index_file_list):
            for f in files.mapped_files:
                if f.wrote_position > f.flushed_position:
                    if files is self.data_file_list:
                        lost += f.wrote_position - f.flushed_position
                    f.zero(f.flushed_position, f.wrote_position)
        return lost

    # ------------------------------------------------------------------ appends
    def append_as_leader(self, entry: DLedgerEntry) -> DLedgerEntry:
        self.check_leader_append()
        ms = self.member_state
        buf = encode(entry)
        index, term = self.ledger_end_index + 1, ms.curr_term
        set_index_term(buf, index, term, entry.magic)
        pre_pos = self.data_file_list.pre_append(len(buf))
        check(pre_pos != -1, DLedgerResponseCode.DISK_ERROR,
              f"entry of {len(buf)} bytes cannot fit a data file of {self.data_file_list.mapped_file_size}")
        set_pos(buf, pre_pos)
        placed = entry.with_(index=index, term=term, pos=pre_pos, size=len(buf))
        for hook in self.append_hooks:
            hook(placed, buf, BODY_OFFSET)
        data_pos = self.data_file_list.append(buf)
        check(data_pos == pre_pos, DLedgerResponseCode.DISK_ERROR, f"data landed at {data_pos} != {pre_pos}")
        self._append_index(data_pos, len(buf), entry.magic, index, term)
        self.ledger_end_index, self.ledger_end_term = index, term
        if self.ledger_begin_index == -1:
            self.ledger_begin_index = index
        self.update_ledger_end_index_and_term()
        self._after_write()
        result = decode(buf)
        self._remember(result)
        self.trace("append", index=index, term=term, pos=data_pos, size=len(buf))
        return result

    def _remember(self, entry: DLedgerEntry) -> None:
        self.recent[entry.index] = entry
        self.recent_bytes += entry.size
        while self.recent_bytes > RECENT_ENTRY_BYTES:
            self.recent_bytes -= self.recent.pop(next(iter(self.recent))).size

    def forget_recent(self) -> None:
        """Drop the decoded entries (written bytes are about to change)."""
        self.recent.clear()
        self.recent_bytes = 0

    def append_as_follower(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> DLedgerEntry:
        self.check_follower_append(entry, leader_term, leader_id)
        buf = encode(entry)
        pre_pos = self.data_file_list.pre_append(len(buf))
        check(pre_pos == entry.pos, DLedgerResponseCode.DISK_ERROR, f"{pre_pos} != {entry.pos}")
        data_pos = self.data_file_list.append(buf)
        check(data_pos == entry.pos, DLedgerResponseCode.DISK_ERROR, f"{data_pos} != {entry.pos}")
        self._append_index(data_pos, len(buf), entry.magic, entry.index, entry.term)
        self.ledger_end_index, self.ledger_end_term = entry.index, entry.term
        if self.ledger_begin_index == -1:
            self.ledger_begin_index = entry.index
        self.update_ledger_end_index_and_term()
        self._after_write()
        self.trace("append", index=entry.index, term=entry.term, pos=data_pos, size=len(buf))
        return entry.with_(size=len(buf))

    def _append_index(self, pos: int, size: int, magic: int, index: int, term: int) -> None:
        index_pos = self.index_file_list.append(encode_index(pos, size, magic, index, term), use_blank=False)
        check(index_pos == index * INDEX_UNIT_SIZE, DLedgerResponseCode.DISK_ERROR,
              f"index slot landed at {index_pos} != {index * INDEX_UNIT_SIZE}")

    def _after_write(self) -> None:
        if self.config.fsync_policy == "always":
            self.flush()

    # ------------------------------------------------------------------ truncate
    def truncate(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> int:
        self.check_follower_truncate(leader_term, leader_id)
        self.forget_recent()
        buf = encode(entry)
        existed = self._has_equal_entry(entry.with_(size=len(buf)))
        truncate_pos = entry.pos + len(buf) if existed else entry.pos
        old_end = self.ledger_end_index
        data = self.data_file_list
        check(data.truncate_or_rebuild(truncate_pos), DLedgerResponseCode.DISK_ERROR,
              f"rebuild data truncatePos={truncate_pos}")
        if not existed:
            data_pos = data.append(buf)
            check(data_pos == entry.pos, DLedgerResponseCode.DISK_ERROR, f"{data_pos} != {entry.pos}")
        index_offset = entry.index * INDEX_UNIT_SIZE
        check(self.index_file_list.truncate_or_rebuild(index_offset), DLedgerResponseCode.DISK_ERROR,
              f"rebuild index truncatePos={index_offset}")
        self._append_index(entry.pos, len(buf), entry.magic, entry.index, entry.term)
        self.ledger_end_index, self.ledger_end_term = entry.index, entry.term
        self.ledger_begin_index = self.calculate_ledger_begin_index()
        self.update_ledger_end_index_and_term()
        self._after_write()
        first_removed = entry.index + 1 if existed else entry.index
        if old_end >= first_removed:
            self.trace("truncate", index=first_removed)
        if not existed:
            self.trace("append", index=entry.index, term=entry.term, pos=entry.pos, size=len(buf))
        return entry.index

    def _has_equal_entry(self, entry: DLedgerEntry) -> bool:
        try:
            return self.get(entry.index) == entry
        except (DLedgerException, StoreError, CodecError):  # Java: any failure means "not the same entry"
            return False

    def calculate_ledger_begin_index(self) -> int:
        """Index of the first entry of the first data file (at its start position), -1 if none."""
        first = self.data_file_list.first()
        if first is None or first.wrote_position <= first.start_position:
            return -1
        header = first.read(first.start_position, BODY_OFFSET)
        if len(header) < BODY_OFFSET:
            return -1
        return decode(header, read_body=False).index

    def revise_ledger_begin_index(self) -> None:
        self.ledger_begin_index = self.calculate_ledger_begin_index()
        if self.ledger_begin_index >= 0:
            self.index_file_list.reset_offset(self.ledger_begin_index * INDEX_UNIT_SIZE)

    # ------------------------------------------------------------------ reads
    def get_entry_pos_and_size(self, index: int) -> tuple[int, int]:
        self.check_get_range(index)
        entry = self.recent.get(index)
        return (entry.pos, entry.size) if entry is not None else self._read_index_slot(index)

    def _read_index_slot(self, index: int) -> tuple[int, int]:
        raw = self.index_file_list.get_data(index * INDEX_UNIT_SIZE, INDEX_UNIT_SIZE)
        check(raw is not None, DLedgerResponseCode.DISK_ERROR, f"get null index for {index}")
        slot = decode_index(raw)
        return slot.pos, slot.size

    def get(self, index: int) -> DLedgerEntry:
        self.check_get_range(index)
        entry = self.recent.get(index)
        if entry is not None:
            return entry
        pos, size = self._read_index_slot(index)
        raw = self.data_file_list.get_data(pos, size)
        check(raw is not None, DLedgerResponseCode.DISK_ERROR, f"get null data for {index} at {pos}+{size}")
        entry = decode(raw)
        check(entry.pos == pos, DLedgerResponseCode.DISK_ERROR, f"{pos} != {entry.pos}")
        return entry

    # ------------------------------------------------------------------ retention
    def clean_space(self, now_ms: int) -> CleanRound:
        """One round of DLedger's CleanSpaceService at wall-clock ``now_ms`` (epoch ms): may set the disk
        full, delete expired data files from the front and revise the ledger begin index."""
        return self.clean_space_service.do_work(now_ms)

    # ------------------------------------------------------------------ flush and checkpoint
    def flush(self) -> None:
        """Flush every file now, on the caller's thread (after what the flush thread has under way)."""
        if self.flush_service is not None:
            self.flush_service.drain()
        self.data_file_list.flush()
        self.index_file_list.flush()

    def on_tick(self, now_ms: int) -> None:
        service = self.flush_service
        if self.config.fsync_policy != "always" and now_ms - self.last_flush_ms >= self.config.flush_file_interval:
            if service is None:
                self.flush()
            else:
                for key, files in (("data", self.data_file_list), ("index", self.index_file_list)):
                    job = files.flush_job()
                    if job is not None:
                        service.submit(key, job)
            self.last_flush_ms = now_ms
        if now_ms - self.last_check_point_ms > self.config.check_point_interval:
            self.persist_check_point(background=service is not None)
            self.last_check_point_ms = now_ms

    def next_deadline_ms(self) -> int | None:
        deadlines = []
        if self.config.fsync_policy != "always" and (self.data_file_list.is_dirty or self.index_file_list.is_dirty):
            deadlines.append(self.last_flush_ms + self.config.flush_file_interval)
        if self.check_point_written != (self.ledger_end_index, self.committed_index):
            deadlines.append(self.last_check_point_ms + self.config.check_point_interval + 1)
        return min(deadlines) if deadlines else None

    def persist_check_point(self, background: bool = False) -> None:
        """Write ``checkpoint`` if the ends moved; ``background``: on the flush thread."""
        state = (self.ledger_end_index, self.committed_index)
        if state == self.check_point_written:
            return
        text = f"{END_INDEX_KEY}={state[0]}\n{COMMITTED_INDEX_KEY}={state[1]}\n".encode()
        path, fsync = self.store_dir / CHECK_POINT_FILE, self.config.fsync_policy != "never"
        if background and self.flush_service is not None:
            self.flush_service.submit("checkpoint", lambda: write_file_durably(path, text, fsync=fsync))
        else:
            if self.flush_service is not None:
                self.flush_service.drain()  # an older checkpoint still queued must not land after this one
            write_file_durably(path, text, fsync=fsync)
        self.check_point_written = state

    def load_check_point(self) -> int | None:
        path = self.store_dir / CHECK_POINT_FILE
        if not path.exists():
            return None
        try:
            props = parse_properties(path.read_text(encoding="utf-8"), source=str(path))
            value = props.get(COMMITTED_INDEX_KEY, "").strip()
            return int(value) if value else None
        except (OSError, UnicodeDecodeError, ConfigError, ValueError) as e:
            raise StoreError(_("{path}: unreadable checkpoint: {why}").format(path=path, why=e)) from e
