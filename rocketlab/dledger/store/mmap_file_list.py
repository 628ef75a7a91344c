"""MmapFileList: a contiguous byte address space made of equal-sized files named by their start offset.

Theory of operation
-------------------
File *k* is named by its absolute start offset as 20 zero-padded digits (``00000000000000065536``);
``file = pos // file_size``. Appends go to the last file at its write position; with ``use_blank`` an
append that would leave fewer than ``MIN_BLANK_LEN`` (8) bytes fills the rest of the file with a blank
record (int ``-1``, int remaining) and goes to offset 0 of a new file. ``truncate_offset`` cuts the space
at an offset (deleting whole files beyond it) and ``rebuild_with_pos`` drops everything and restarts the
space at an arbitrary offset (the first file then begins with zeros up to it).

Files are preallocated to ``file_size`` (sparse) and memory-mapped, as Java's MappedByteBuffer.
Java file: ``store/file/MmapFileList.java`` + ``DefaultMmapFile.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from rocketlab.dledger.entry import BLANK_MAGIC_CODE, MIN_BLANK_LEN
from rocketlab.errors import StoreError

_BLANK = struct.Struct(">ii")
DELETE_FILES_BATCH_MAX = 10  # files deleted by one deleteExpiredFileByTime call


class MmapFile:
    """Models DefaultMmapFile: one fixed-size file with write/flush positions.

    Reads and writes go through a shared memory map (``mm``), as Java's; the descriptor stays open for
    ``fsync``, which also writes back the pages dirtied through the map. Simplified: no reference counting.
    ``start_position`` is the first readable byte (non-zero only in the first file after a rebuild).

    :meth:`sync_to` is what a :class:`~.flush_data_service.FlushDataService` thread runs: it holds
    :attr:`lock` around the fsync, and so do :meth:`close` and :meth:`lower_positions` (a close never
    pulls the descriptor from under an fsync; a cut made while an fsync was under way is not undone by it:
    ``generation`` counts the cuts).
    """

    def __init__(self, path: Path, file_from_offset: int, file_size: int, create: bool) -> None:
        self.path = path
        self.file_from_offset = file_from_offset
        self.file_size = file_size
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        try:
            self.fd = os.open(path, flags, 0o644)
        except OSError as e:
            raise StoreError(f"{path}: cannot open: {e.strerror}") from e
        # an MmapFile dropped without close() (a simulated cluster nobody closed) gives its descriptor
        # back when collected; close() detaches this first, so a reused descriptor number is never closed
        self._closer = weakref.finalize(self, os.close, self.fd)
        actual = os.fstat(self.fd).st_size
        if create and actual == 0:
            os.ftruncate(self.fd, file_size)
        elif actual != file_size:
            self._closer.detach()
            os.close(self.fd)
            raise StoreError(f"{path}: file size {actual} != configured size {file_size}; every file of a "
                             f"DLedger store must have exactly mapped_file_size")
        try:
            self.mm = mmap.mmap(self.fd, file_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError) as e:
            self._closer.detach()
            os.close(self.fd)
            raise StoreError(f"{path}: cannot map {file_size} bytes: {e}") from e
        self.wrote_position = 0
        self.flushed_position = 0
        self.start_position = 0
        self.lock = threading.Lock()
        self.generation = 0

    @property
    def is_full(self) -> bool:
        return self.wrote_position == self.file_size

    def append(self, data: bytes | bytearray | memoryview) -> bool:
        if self.wrote_position + len(data) > self.file_size:
            return False
        end = self.wrote_position + len(data)
        self.mm[self.wrote_position:end] = data
        self.wrote_position = end
        return True

    def read(self, in_file: int, size: int) -> bytes:
        return self.mm[in_file:in_file + size]

    def zero(self, start: int, end: int) -> None:
        """Overwrite ``[start, end)`` with zeros (used when truncating written bytes)."""
        step = 1 << 20
        for pos in range(start, end, step):
            n = min(step, end - pos)
            self.mm[pos:pos + n] = bytes(n)

    def zero_tail(self, start: int, chunk: int = 65536) -> None:
        """Zero from ``start`` until the first all-zero chunk (a torn tail cut by recovery)."""
        pos = start
        while pos < self.file_size:
            size = min(chunk, self.file_size - pos)
            data = self.mm[pos:pos + size]
            if not any(data):
                return
            self.mm[pos:pos + size] = bytes(size)
            pos += size

    def flush(self, fsync: bool) -> None:
        if self.flushed_position < self.wrote_position:
            if fsync:
                os.fsync(self.fd)
            self.flushed_position = self.wrote_position

    def sync_to(self, position: int, generation: int) -> None:
        """fsync (on a flush thread), then count the file flushed up to ``position``: the write position
        when the flush was asked for, unless the file was cut or closed since."""
        with self.lock:
            if self.fd < 0:
                return
            os.fsync(self.fd)
            if self.generation == generation and position > self.flushed_position:
                self.flushed_position = min(position, self.wrote_position)

    def lower_positions(self, wrote_position: int) -> None:
        """A cut: the write position moves back to ``wrote_position`` and the flushed one with it."""
        with self.lock:
            self.generation += 1
            self.wrote_position = wrote_position
            self.flushed_position = min(self.flushed_position, wrote_position)

    def close(self) -> None:
        with self.lock:
            if self.fd >= 0:
                self._closer.detach()
                self.mm.close()
                os.close(self.fd)
                self.fd = -1

    def destroy(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def get_last_modified_timestamp(self) -> int:
        """``getLastModifiedTimestamp``: the file's modification time on disk, in epoch ms."""
        try:
            return os.stat(self.path).st_mtime_ns // 1_000_000
        except OSError:
            return 0


class MmapFileList:
    """Models MmapFileList, DLedger 0.3.1.2.

    Simplified: no multi-path variant, no reference counting or warm-up. ``truncate_offset`` moves the
    write position and leaves the cut bytes where they are, as Java does (a restart's recovery may scan
    them again); with ``zero_on_truncate`` (the ``raft`` profile's ``truncate_zeroes_bytes``) it also
    zeroes them.
    """

    def __init__(self, store_path: Path, mapped_file_size: int, fsync: bool = True,
                 zero_on_truncate: bool = False) -> None:
        self.store_path = Path(store_path)
        self.mapped_file_size = mapped_file_size
        self.fsync = fsync
        self.zero_on_truncate = zero_on_truncate
        self.mapped_files: list[MmapFile] = []

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Open every existing file (names must be 20-digit offsets, sizes exactly ``mapped_file_size``)."""
        self.store_path.mkdir(parents=True, exist_ok=True)
        names = sorted(p.name for p in self.store_path.iterdir() if p.is_file() and len(p.name) == 20
                       and p.name.isdigit())
        for name in names:
            f = MmapFile(self.store_path / name, int(name), self.mapped_file_size, create=False)
            f.wrote_position = f.flushed_position = self.mapped_file_size
            self.mapped_files.append(f)
        self.check_self()

    def check_self(self) -> None:
        """Consecutive files must differ by exactly one file size (``checkSelf``)."""
        for a, b in zip(self.mapped_files, self.mapped_files[1:], strict=False):
            if b.file_from_offset - a.file_from_offset != self.mapped_file_size:
                raise StoreError(f"{self.store_path}: files {a.path.name} and {b.path.name} are not contiguous "
                                 f"(file size {self.mapped_file_size})")
        for f in self.mapped_files:
            if f.file_from_offset % self.mapped_file_size:
                raise StoreError(f"{f.path}: start offset is not a multiple of the file size")

    # ------------------------------------------------------------------ positions
    def first(self) -> MmapFile | None:
        return self.mapped_files[0] if self.mapped_files else None

    def last(self) -> MmapFile | None:
        return self.mapped_files[-1] if self.mapped_files else None

    @property
    def min_offset(self) -> int:
        f = self.first()
        return f.file_from_offset + f.start_position if f else -1

    @property
    def max_wrote_position(self) -> int:
        f = self.last()
        return f.file_from_offset + f.wrote_position if f else 0

    @property
    def flushed_where(self) -> int:
        f = self.last()
        if f is None:
            return 0
        for g in self.mapped_files:
            if g.flushed_position < g.wrote_position:
                return g.file_from_offset + g.flushed_position
        return f.file_from_offset + f.flushed_position

    def find_file(self, offset: int) -> MmapFile | None:
        first = self.first()
        if first is None or offset < first.file_from_offset:
            return None
        k = (offset - first.file_from_offset) // self.mapped_file_size
        return self.mapped_files[k] if k < len(self.mapped_files) else None

    # ------------------------------------------------------------------ appending
    def get_last_mapped_file(self, start_offset: int = 0, create: bool = True) -> MmapFile | None:
        last = self.last()
        if last is not None and not last.is_full:
            return last
        if not create:
            return None
        if last is None:
            create_offset = start_offset - start_offset % self.mapped_file_size
        else:
            create_offset = last.file_from_offset + self.mapped_file_size
        self.store_path.mkdir(parents=True, exist_ok=True)
        f = MmapFile(self.store_path / f"{create_offset:020d}", create_offset, self.mapped_file_size, create=True)
        self.mapped_files.append(f)
        return f

    def pre_append(self, length: int, use_blank: bool = True) -> int:
        """Where ``length`` bytes would go, padding the current file with a blank record if needed."""
        if length + (MIN_BLANK_LEN if use_blank else 0) > self.mapped_file_size:
            return -1
        f = self.get_last_mapped_file()
        assert f is not None
        blank = MIN_BLANK_LEN if use_blank else 0
        remaining = f.file_size - f.wrote_position
        if length + blank > remaining:
            if not use_blank:
                return -1
            pad = bytearray(remaining)
            _BLANK.pack_into(pad, 0, BLANK_MAGIC_CODE, remaining)
            f.append(pad)
            f = self.get_last_mapped_file()
            assert f is not None
        return f.file_from_offset + f.wrote_position

    def append(self, data: bytes | bytearray | memoryview, use_blank: bool = True) -> int:
        """Append ``data``; returns its absolute position, or -1 if it cannot fit a file."""
        if self.pre_append(len(data), use_blank) == -1:
            return -1
        f = self.last()
        assert f is not None
        pos = f.file_from_offset + f.wrote_position
        return pos if f.append(data) else -1

    # ------------------------------------------------------------------ reading
    def get_data(self, pos: int, size: int) -> bytes | None:
        """``size`` bytes at ``pos`` if they are inside one file and below its write position."""
        f = self.find_file(pos)
        if f is None:
            return None
        in_file = pos - f.file_from_offset
        if in_file < f.start_position or in_file + size > f.wrote_position:
            return None
        return f.read(in_file, size)

    def read_raw(self, f: MmapFile, in_file: int, size: int) -> bytes:
        """Bytes of ``f`` regardless of the write position (recovery scans whole files)."""
        return f.read(in_file, max(0, min(size, f.file_size - in_file)))

    # ------------------------------------------------------------------ cutting
    def truncate_offset(self, offset: int) -> None:
        """Cut the space at ``offset``: the file holding it keeps ``[0, offset)``, later files go."""
        doomed = []
        for f in self.mapped_files:
            tail = f.file_from_offset + self.mapped_file_size
            if tail > offset:
                if offset >= f.file_from_offset:
                    cut = offset - f.file_from_offset
                    if self.zero_on_truncate:
                        f.zero(cut, f.wrote_position)
                    f.lower_positions(cut)
                else:
                    doomed.append(f)
        for f in doomed:
            f.destroy()
            self.mapped_files.remove(f)

    def reset_offset(self, offset: int) -> None:
        """Make ``offset`` the first readable byte: drop files wholly before it, set ``start_position``."""
        while self.mapped_files and self.mapped_files[0].file_from_offset + self.mapped_file_size <= offset:
            self.mapped_files.pop(0).destroy()
        first = self.first()
        if first is not None and offset > first.file_from_offset:
            first.start_position = offset - first.file_from_offset

    def delete_expired_file_by_time(self, expired_time_ms: int, now_ms: int, clean_immediately: bool = False) -> int:
        """``deleteExpiredFileByTime``: from the first file on, delete files last modified more than
        ``expired_time_ms`` before ``now_ms`` (any file when ``clean_immediately``), at most
        :data:`DELETE_FILES_BATCH_MAX`, stopping at the first that must stay ("avoid deleting files in the
        middle"). The last file is always kept. Returns how many were deleted.

        Simplified: no pause between deletions and no 120 s grace for files still referenced.
        """
        doomed = []
        for f in self.mapped_files[:-1]:
            if not (now_ms >= f.get_last_modified_timestamp() + expired_time_ms or clean_immediately):
                break
            doomed.append(f)
            if len(doomed) >= DELETE_FILES_BATCH_MAX:
                break
        for f in doomed:
            f.destroy()
            self.mapped_files.remove(f)
        return len(doomed)

    def truncate_or_rebuild(self, offset: int) -> bool:
        """Cut at ``offset`` if it lies within the written space, else rebuild the space at it."""
        if self.mapped_files and self.min_offset <= offset <= self.max_wrote_position:
            self.truncate_offset(offset)
            return self.max_wrote_position == offset
        if not self.mapped_files and offset == 0:
            return True
        return self.rebuild_with_pos(offset)

    def rebuild_with_pos(self, pos: int) -> bool:
        """Drop every file and restart the space so that the next byte written lands at ``pos``."""
        for f in self.mapped_files:
            f.destroy()
        self.mapped_files.clear()
        f = self.get_last_mapped_file(pos)
        assert f is not None
        f.wrote_position = f.flushed_position = f.start_position = pos - f.file_from_offset
        return self.max_wrote_position == pos

    def update_where_position(self, offset: int) -> None:
        """After recovery: files before ``offset`` are full, the one holding it is written up to it."""
        for f in self.mapped_files:
            if f.file_from_offset + self.mapped_file_size <= offset:
                f.wrote_position = f.flushed_position = self.mapped_file_size
            elif f.file_from_offset <= offset:
                f.wrote_position = f.flushed_position = offset - f.file_from_offset

    # ------------------------------------------------------------------ durability
    def flush(self) -> bool:
        """Flush every file with unflushed bytes; True if anything was flushed."""
        dirty = False
        for f in self.mapped_files:
            if f.flushed_position < f.wrote_position:
                f.flush(self.fsync)
                dirty = True
        return dirty

    def flush_job(self) -> Callable[[], None] | None:
        """The flush of every file with unflushed bytes as a job for a flush thread (None: nothing to
        flush, or no fsync to do, in which case the positions move here and now)."""
        if not self.fsync:
            self.flush()
            return None
        todo = [(f, f.wrote_position, f.generation) for f in self.mapped_files
                if f.flushed_position < f.wrote_position]
        if not todo:
            return None

        def job() -> None:
            for f, position, generation in todo:
                f.sync_to(position, generation)

        return job

    @property
    def is_dirty(self) -> bool:
        return any(f.flushed_position < f.wrote_position for f in self.mapped_files)

    def close(self) -> None:
        for f in self.mapped_files:
            f.close()

    def destroy(self) -> None:
        for f in self.mapped_files:
            f.destroy()
        self.mapped_files.clear()
