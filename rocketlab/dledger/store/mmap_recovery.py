"""Recovery of a DLedgerMmapFileStore after a clean or an abnormal stop (DLedger 0.3.1.2 ``recover()``).

Steps, as the digest (section 4.5) describes them:

1. Both file lists must be contiguous (checked on load).
2. No data files: reset the index to 0; the log is empty.
3. Start at the third-to-last data file and walk backwards to a file whose first entry passes every
   check (valid magic, ``size > 44``, ``pos == file start``, ``bodySize + 48 == size``, index slot agrees).
4. Scan forward entry by entry: a ``-1`` magic is a blank (next file); an all-zero header is the clean
   end; each entry must have ``pos`` = its absolute position, ``bodySize + 48 == size``, a valid magic,
   index = previous + 1, term >= previous term, ``size > 44``. While index slots agree keep verifying
   them; at the first disagreement cut the index there and rewrite slots from the data from then on.
   Anything else ends the scan: that is the torn or corrupt tail, and it is *reported*.
5. Refuse (``StoreError``) to cut more than one file's worth beyond the last good byte.
6. Set end index/term, begin index, write positions; cut data and index after the last good entry.

rocketlab additions: the first file of a re-based log (``rebuild_with_pos``) starts with zeros up to its
first entry, which recovery finds instead of dropping the log; the cut bytes are zeroed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketlab.dledger.entry import (
    BLANK_MAGIC_CODE,
    BODY_OFFSET,
    HEADER_SIZE,
    INDEX_UNIT_SIZE,
    MAGIC_1,
    MAGIC_NOOP,
)
from rocketlab.dledger.entry_coder import decode_header, decode_index, encode_index
from rocketlab.dledger.store.mmap_file_list import MmapFile, MmapFileList
from rocketlab.errors import StoreError

if TYPE_CHECKING:
    from rocketlab.dledger.store.mmap_file_store import DLedgerMmapFileStore

_INT = struct.Struct(">i")


@dataclass
class RecoveryReport:
    """What recovery found and what it cut; ``reason`` is None when the log ended cleanly."""

    start_file: str | None = None
    end_index: int = -1
    end_term: int = -1
    process_offset: int = 0
    reason: str | None = None
    dropped_files: list[str] = field(default_factory=list)
    index_rebuilt_from: int | None = None
    committed_index: int = -1

    @property
    def truncated(self) -> bool:
        return self.reason is not None

    def describe(self) -> str:
        head = f"recovered entries up to index {self.end_index} (term {self.end_term}), data end {self.process_offset}"
        if self.reason is None:
            return head
        dropped = f"; dropped files {self.dropped_files}" if self.dropped_files else ""
        return f"{head}; cut the tail at {self.process_offset}: {self.reason}{dropped}"


def recover(store: DLedgerMmapFileStore) -> RecoveryReport:
    """Recover ``store`` in place (see the module docstring) and return the report."""
    data, index = store.data_file_list, store.index_file_list
    magics = (MAGIC_1, MAGIC_NOOP) if store.config.recover_noop_entries else (MAGIC_1,)
    report = RecoveryReport()
    if not data.mapped_files:
        _cut(index, 0)
        store.ledger_begin_index = store.ledger_end_index = store.ledger_end_term = -1
        store.update_ledger_end_index_and_term()
        return report
    start, rel = _starting_point(data, index, magics)
    report.start_file = data.mapped_files[start].path.name
    _scan(data, index, start, rel, report, magics, store.config.profile)
    last_file = data.mapped_files[-1]
    if last_file.file_from_offset - report.process_offset > data.mapped_file_size:
        raise StoreError(f"{data.store_path}: recovery would cut {last_file.file_from_offset - report.process_offset}"
                         f" bytes (more than one file) after offset {report.process_offset}: {report.reason}; "
                         f"check the files manually before truncating")
    report.dropped_files = [f.path.name for f in data.mapped_files if f.file_from_offset > report.process_offset]
    _cut(data, report.process_offset)
    _cut(index, (report.end_index + 1) * INDEX_UNIT_SIZE)
    store.ledger_end_index, store.ledger_end_term = report.end_index, report.end_term
    store.revise_ledger_begin_index()
    if report.end_index != -1:
        entry = store.get(report.end_index)
        if entry.index != report.end_index:
            raise StoreError(f"{data.store_path}: recheck of entry {report.end_index} read index {entry.index}")
    store.update_ledger_end_index_and_term()
    data.check_self()
    index.check_self()
    if report.reason is not None:
        store.trace("truncate", index=report.end_index + 1, pos=report.process_offset,
                    reason=f"recovery: {report.reason}")
    return report


def _cut(files: MmapFileList, offset: int) -> None:
    """Set write positions for ``offset``, drop later files (and, with ``zero_on_truncate``, zero the cut
    tail of its file)."""
    files.update_where_position(offset)
    holder = files.find_file(offset)
    if files.zero_on_truncate and holder is not None and offset < holder.file_from_offset + holder.file_size:
        holder.zero_tail(offset - holder.file_from_offset)
    files.truncate_offset(offset)


def _starting_point(data: MmapFileList, index: MmapFileList, magics: tuple[int, ...]) -> tuple[int, int]:
    """(file number, offset in it) to scan from: step 3, plus the re-based first file."""
    files = data.mapped_files
    start = max(len(files) - 3, 0)
    for i in range(start, -1, -1):
        rel = _first_entry_offset(files[i]) if i == 0 else 0
        if rel is not None and _first_entry_ok(data, index, files[i], rel, magics) is None:
            files[i].start_position = rel
            return i, rel
    return 0, 0


def _first_entry_offset(f: MmapFile, chunk: int = 65536) -> int | None:
    """Offset of the first entry of the first file: 0, or after the leading zeros of a re-based file."""
    head = f.read(0, 4)
    if len(head) == 4 and _INT.unpack(head)[0] != 0:
        return 0
    pos = 0
    while pos < f.file_size:
        data = f.read(pos, min(chunk, f.file_size - pos))
        stripped = data.lstrip(b"\x00")
        if stripped:
            return max(pos + len(data) - len(stripped) - 3, 0)
        pos += len(data)
    return None


def _first_entry_ok(data: MmapFileList, index: MmapFileList, f: MmapFile, rel: int,
                    magics: tuple[int, ...]) -> str | None:
    head = data.read_raw(f, rel, BODY_OFFSET)
    if len(head) < BODY_OFFSET:
        return "no room for a header"
    magic, size, entry_index, term, pos, body_size = decode_header(head)
    if magic == BLANK_MAGIC_CODE or magic not in magics:
        return f"unknown magic={magic}"
    if size <= HEADER_SIZE:
        return f"size {size} should be > {HEADER_SIZE}"
    if pos != f.file_from_offset + rel:
        return f"pos {pos} != {f.file_from_offset + rel}"
    if body_size + BODY_OFFSET != size:
        return f"size {size} != {body_size} + {BODY_OFFSET}"
    return _index_disagrees(index, magic, size, entry_index, term, pos)


def _index_disagrees(index: MmapFileList, magic: int, size: int, entry_index: int, term: int,
                     pos: int) -> str | None:
    raw = index.get_data(entry_index * INDEX_UNIT_SIZE, INDEX_UNIT_SIZE) if entry_index >= 0 else None
    if raw is None:
        return f"no index slot for index {entry_index}"
    slot = decode_index(raw)
    if (slot.magic, slot.size, slot.index, slot.term, slot.pos) != (magic, size, entry_index, term, pos):
        return f"index slot {slot} disagrees with the data"
    return None


def _check_entry(head: bytes, absolute: int, last_index: int, last_term: int,
                 magics: tuple[int, ...] = (MAGIC_1, MAGIC_NOOP)) -> str | None:
    """The per-entry checks of step 4, in Java's order; returns what failed, or None."""
    magic, size, entry_index, term, pos, body_size = decode_header(head)
    if pos != absolute:
        return f"entry at {absolute}: pos {pos} != {absolute}"
    if body_size + BODY_OFFSET != size:
        return f"entry at {absolute}: size {size} != bodySize {body_size} + {BODY_OFFSET}"
    if magic not in magics:
        return f"entry at {absolute}: unknown magic {magic}"
    if last_index != -1 and entry_index != last_index + 1:
        return f"entry at {absolute}: index {entry_index} != {last_index} + 1"
    if term < last_term:
        return f"entry at {absolute}: term {term} < previous term {last_term}"
    if size <= HEADER_SIZE:
        return f"entry at {absolute}: size {size} should be > {HEADER_SIZE}"
    return None


def _scan(data: MmapFileList, index: MmapFileList, start: int, rel: int, report: RecoveryReport,
          magics: tuple[int, ...], profile: str) -> None:
    """Step 4: walk the entries, verify or rewrite index slots, stop at the first bad byte."""
    files = data.mapped_files
    k, f = start, files[start]
    report.process_offset = f.file_from_offset + rel
    rewrite = False
    while True:
        absolute = f.file_from_offset + rel
        head = data.read_raw(f, rel, BODY_OFFSET)
        if len(head) >= 4 and _INT.unpack_from(head)[0] == BLANK_MAGIC_CODE:
            k += 1
            report.process_offset = f.file_from_offset + f.file_size
            if k >= len(files):
                return
            f, rel = files[k], 0
            report.process_offset = f.file_from_offset
            continue
        if len(head) < BODY_OFFSET:
            report.reason = f"entry at {absolute}: only {len(head)} bytes left in file {f.path.name}"
            return
        magic, size, entry_index, term, pos, _ = decode_header(head)
        if magic == 0 and size == 0:
            return
        problem = _check_entry(head, absolute, report.end_index, report.end_term, magics)
        if (problem is not None and magic == MAGIC_NOOP and MAGIC_NOOP not in magics
                and _check_entry(head, absolute, report.end_index, report.end_term) is None):
            raise StoreError(f"{data.store_path}: the entry at {absolute} (index {entry_index}, term {term}) is a "
                             f"magic-2 NOOP, which only the raft profile writes; profile {profile} recovers "
                             f"magic 1 only and would cut the log there, losing it and every later entry. "
                             f"Open this directory with profile=raft (no data was cut)")
        if problem is None and rel + size > f.file_size:
            problem = f"entry at {absolute}: size {size} runs past the end of file {f.path.name}"
        if problem is not None:
            report.reason = problem
            return
        if not rewrite and _index_disagrees(index, magic, size, entry_index, term, pos) is not None:
            rewrite = True
            report.index_rebuilt_from = entry_index
            _cut(index, entry_index * INDEX_UNIT_SIZE)
            if index.max_wrote_position != entry_index * INDEX_UNIT_SIZE:
                index.rebuild_with_pos(entry_index * INDEX_UNIT_SIZE)
        if rewrite:
            slot_pos = index.append(encode_index(pos, size, magic, entry_index, term), use_blank=False)
            if slot_pos != entry_index * INDEX_UNIT_SIZE:
                raise StoreError(f"{index.store_path}: rewriting index slot {entry_index} landed at {slot_pos}")
        report.end_index, report.end_term = entry_index, term
        report.process_offset = absolute + size
        rel += size
