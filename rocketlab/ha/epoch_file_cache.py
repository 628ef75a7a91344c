"""EpochFileCache, RocketMQ 5.3.3 (``store/.../ha/autoswitch/EpochFileCache.java``): which master epoch wrote
which range of a broker's commit log, and where two brokers' logs stop agreeing.

Entries ``(epoch, startOffset)``, kept by epoch; an entry's ``end_offset`` is the next entry's start, the
last one's is ``Long.MAX_VALUE`` until :meth:`set_last_epoch_entry_end_offset` sets it (to the broker's
max offset). :meth:`append_entry` refuses an entry unless **both** its epoch and its start are strictly
greater than the last entry's (a new epoch at the same offset is refused). :meth:`find_consistent_point`
walks the local epochs from the newest: at the first epoch the other cache has with the same start, the
logs agree up to ``min(local end, other end)``; none -> -1 (no common point: the slave cannot resync).

The file (``CheckpointFile``): line 1 the number of entries, line 2 the CRC32 of the entry lines (masked to
31 bits as ``UtilAll.crc32``; 0 = not checked), then ``"<epoch>-<startOffset>"`` per line; every write
first copies the previous file to ``<path>.bak``, and reading falls back to the ``.bak`` when the file is
missing, empty or fails its count or CRC check. When neither is usable, ``initCacheFromFile`` logs the error
and the broker goes on with an empty cache, as Java does (the reason is kept in ``load_error``).

Faithful to two details of the Java code:

* truncating the suffix does **not** reset the new last entry's end offset to ``Long.MAX_VALUE`` (Java sets
  it on the copy ``lastEntry()`` returns), so it keeps the start of the entry that was removed;
* writing an empty list writes nothing (``CheckpointFile.write`` returns early): after every entry is
  truncated the file still holds the old entries, which a restart reads back.

Simplified: the file is written atomically with fsync (``.tmp`` then rename; Java writes in place without
fsync, so a crash mid-write could tear it - the ``.bak`` fallback is for that); a count line that is not a
number falls back to the ``.bak`` like other damage (Java lets that NumberFormatException escape); so do
entries whose epochs or start offsets do not strictly increase (kit addition: Java's TreeMap would sort
them by epoch and compute nonsense end offsets; no valid file has them, since appends refuse them).
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from rocketlab import plugs
from rocketlab.dledger.member_state import write_file_durably
from rocketlab.errors import StoreError
from rocketlab.i18n import _

FIND_CONSISTENT_POINT_PLUG = plugs.point("lab06.find_consistent_point")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

LONG_MAX = 2**63 - 1
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpochEntry:
    """Models EpochEntry: ``[start_offset, end_offset)`` of the log written under ``epoch``."""

    epoch: int
    start_offset: int
    end_offset: int = LONG_MAX


def crc32_masked(data: bytes) -> int:
    """``UtilAll.crc32``: CRC32 & 0x7FFFFFFF."""
    return zlib.crc32(data) & 0x7FFFFFFF


class EpochFileCache:
    """Models EpochFileCache (see the module docstring); ``path`` None keeps it in memory only."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.epoch_map: dict[int, EpochEntry] = {}  # insertion order is epoch order (appends only grow)
        self.load_error: str | None = None
        """Why :meth:`init_cache_from_file` found neither the file nor its ``.bak`` usable (None: it did)."""

    # ------------------------------------------------------------------ file
    def init_cache_from_file(self) -> bool:
        """``initCacheFromFile``: read the file (or its ``.bak``); False if neither can be read."""
        try:
            entries = self._read()
        except StoreError as e:
            self.load_error = str(e)
            log.error("Error happen when init epoch entries from epochFile: %s", e)  # Java logs and goes on
            return False
        self._init_entries(entries)
        return True

    def init_cache_from_entries(self, entries: list[EpochEntry]) -> None:
        self._init_entries(entries)
        self._flush()

    def _init_entries(self, entries: list[EpochEntry]) -> None:
        self.epoch_map = {}
        previous: EpochEntry | None = None
        for entry in entries:
            if previous is not None:
                self.epoch_map[previous.epoch] = replace(previous, end_offset=entry.start_offset)
            self.epoch_map[entry.epoch] = entry
            previous = entry

    def _flush(self) -> None:
        if self.path is None or not self.epoch_map:
            return  # CheckpointFile.write of no entries writes nothing
        lines = "".join(f"{e.epoch}-{e.start_offset}\n" for e in self.epoch_map.values())
        content = f"{len(self.epoch_map)}\n{crc32_masked(lines.encode())}\n{lines}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_file_durably(self.path, content.encode())

    def _read(self) -> list[EpochEntry]:
        assert self.path is not None
        bak = self.path.with_name(self.path.name + ".bak")
        try:
            entries = _read_checkpoint(self.path)
            return entries if entries else _read_checkpoint(bak)
        except StoreError:
            return _read_checkpoint(bak)

    # ------------------------------------------------------------------ entries
    def get_entry_size(self) -> int:
        return len(self.epoch_map)

    def append_entry(self, entry: EpochEntry) -> bool:
        """False (nothing changes) unless epoch and start are both above the last entry's."""
        if self.epoch_map:
            last = self.last_entry()
            assert last is not None
            if last.epoch >= entry.epoch or last.start_offset >= entry.start_offset:
                return False
            self.epoch_map[last.epoch] = replace(last, end_offset=entry.start_offset)
        self.epoch_map[entry.epoch] = EpochEntry(entry.epoch, entry.start_offset, entry.end_offset)
        self._flush()
        return True

    def set_last_epoch_entry_end_offset(self, end_offset: int) -> None:
        last = self.last_entry()
        if last is not None and last.start_offset <= end_offset:
            self.epoch_map[last.epoch] = replace(last, end_offset=end_offset)

    def first_entry(self) -> EpochEntry | None:
        return next(iter(self.epoch_map.values()), None)

    def last_entry(self) -> EpochEntry | None:
        return next(reversed(self.epoch_map.values()), None) if self.epoch_map else None

    def last_epoch(self) -> int:
        last = self.last_entry()
        return -1 if last is None else last.epoch

    def get_entry(self, epoch: int) -> EpochEntry | None:
        return self.epoch_map.get(epoch)

    def find_epoch_entry_by_offset(self, offset: int) -> EpochEntry | None:
        return next((e for e in self.epoch_map.values() if e.start_offset <= offset < e.end_offset), None)

    def next_entry(self, epoch: int) -> EpochEntry | None:
        """The entry with the smallest epoch above ``epoch`` (``ceilingEntry(epoch + 1)``)."""
        return next((e for e in self.epoch_map.values() if e.epoch >= epoch + 1), None)

    def get_all_entries(self) -> list[EpochEntry]:
        return list(self.epoch_map.values())

    def find_consistent_point(self, other: EpochFileCache) -> int:
        """Where this log and ``other``'s stop agreeing (:func:`find_consistent_point`; lab 06's exercise
        ``lab06.find_consistent_point`` when one is plugged in)."""
        decide = plugs.resolve(FIND_CONSISTENT_POINT_PLUG, find_consistent_point)
        return decide(self.get_all_entries(), other.get_all_entries())

    def truncate_suffix_by_epoch(self, truncate_epoch: int) -> None:
        self._truncate_suffix(lambda e: e.epoch >= truncate_epoch)

    def truncate_suffix_by_offset(self, truncate_offset: int) -> None:
        self._truncate_suffix(lambda e: e.start_offset >= truncate_offset)

    def _truncate_suffix(self, drop) -> None:  # type: ignore[no-untyped-def]
        self.epoch_map = {k: e for k, e in self.epoch_map.items() if not drop(e)}
        # Java resets the end offset of a *copy* of the last entry here: the map keeps the old end
        self._flush()

    def truncate_prefix_by_offset(self, truncate_offset: int) -> None:
        """Drop entries that end at or before ``truncate_offset`` (commit-log files deleted below it)."""
        self.epoch_map = {k: e for k, e in self.epoch_map.items() if not e.end_offset <= truncate_offset}
        self._flush()


def find_consistent_point(local: list[EpochEntry], other: list[EpochEntry]) -> int:
    """``EpochFileCache.findConsistentPoint`` on two caches' entries (oldest first, end offsets set): walk
    ``local`` from its newest epoch; at the first epoch ``other`` has with the same start offset, both logs
    were written by that epoch's master from the same point, so they agree up to the smaller end offset.
    No such epoch: -1."""
    by_epoch = {e.epoch: e for e in other}
    for entry in reversed(local):
        theirs = by_epoch.get(entry.epoch)
        if theirs is not None and theirs.start_offset == entry.start_offset:
            return min(entry.end_offset, theirs.end_offset)
    return -1


def _read_checkpoint(path: Path) -> list[EpochEntry]:
    """``CheckpointFile.read(path)``: [] for a missing file; StoreError naming the problem otherwise."""
    if not path.exists():
        return []
    try:
        text = path.read_bytes().decode()
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(_("{path}: unreadable epoch file: {why}").format(path=path, why=e)) from None
    lines = text.split("\n")
    if len(lines) < 2:
        raise StoreError(_("{path}: epoch file lacks its count and CRC lines").format(path=path))
    try:
        expected_lines, expected_crc = int(lines[0]), int(lines[1])
    except ValueError:
        raise StoreError(_("{path}: epoch file count/CRC lines are not numbers: {lines!r}").format(
            path=path, lines=lines[:2])) from None
    body = [line for line in lines[2:]]
    if body and body[-1] == "":
        body.pop()  # the newline after the last entry
    entries = []
    for line in body:
        parts = line.split("-")
        if len(parts) == 2:
            try:
                entries.append(EpochEntry(int(parts[0]), int(parts[1])))
            except ValueError:
                raise StoreError(_("{path}: bad epoch entry line {line!r}").format(path=path, line=line)) from None
    for before, after in zip(entries, entries[1:], strict=False):
        if after.epoch <= before.epoch or after.start_offset <= before.start_offset:
            raise StoreError(_("{path}: epoch entries do not strictly increase: {before} then {after}").format(
                path=path, before=f"{before.epoch}-{before.start_offset}", after=f"{after.epoch}-{after.start_offset}"))
    if len(entries) != expected_lines:
        raise StoreError(f"{path}: Expect {expected_lines} entries, only found {len(entries)} entries")
    truth = crc32_masked("".join(line + "\n" for line in body).encode())
    if expected_crc != 0 and truth != expected_crc:
        raise StoreError(f"{path}: Entries crc32 not match, file={expected_crc}, truth={truth}")
    return entries
