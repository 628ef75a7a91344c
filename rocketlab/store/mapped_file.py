"""One fixed-size, memory-mapped store file with its write and flush positions.

Models ``org.apache.rocketmq.store.logfile.DefaultMappedFile`` (5.x) / ``MappedFile`` (4.x).
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import re
import weakref

from rocketlab.errors import StoreError
from rocketlab.i18n import _

log = logging.getLogger(__name__)

OS_PAGE_SIZE = 4096
FILE_NAME_RE = re.compile(r"^\d{20}$")
_fdatasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync


def offset_to_file_name(offset: int) -> str:
    """``UtilAll.offset2FileName``: 20 digits, zero-padded."""
    return f"{offset:020d}"


def open_sized_file(file_name: str, file_size: int, create: bool) -> int:
    """Open a store file that must be exactly ``file_size`` bytes. A new file is created under its own
    name and sized at once, as Java's ``FileChannel.map`` does: no temporary file is ever left in a store
    directory, which RocketMQ's loaders list whole (a stray name there makes the real store refuse to
    start). On Linux it is made unnamed (``O_TMPFILE``), sized, then linked under its name, so a crash
    never leaves it short; elsewhere (or on a file system without ``O_TMPFILE``) a crash between the
    create and the sizing leaves a short last file, which Java refuses while loading here removes it
    (nothing was ever written to it). A deliberate difference: in Java that window is a few microseconds,
    here another Python thread may run inside it for milliseconds, so a crash found such files often."""
    if create and not os.path.exists(file_name):
        try:
            return _create_sized(file_name, file_size)
        except OSError as exc:
            raise StoreError(_("{path}: cannot create store file: {why}").format(path=file_name, why=exc.strerror)) from exc
    try:
        fd = os.open(file_name, os.O_RDWR)
    except OSError as exc:
        raise StoreError(_("{path}: cannot open store file: {why}").format(path=file_name, why=exc.strerror)) from exc
    actual = os.fstat(fd).st_size
    if actual != file_size:
        os.close(fd)
        raise StoreError(
            f"{file_name}: file is {actual} bytes but the configured size is {file_size} bytes "
            "(was the store created with another file size?)"
        )
    return fd


def _create_sized(file_name: str, file_size: int) -> int:
    """A new file of ``file_size`` bytes (sparse) named ``file_name``, whole or not at all where the
    platform can: see :func:`open_sized_file`."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    directory, name = os.path.split(file_name)
    if tmpfile and os.path.isdir("/proc/self/fd"):
        try:
            fd = os.open(directory or ".", os.O_RDWR | tmpfile, 0o644)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
        else:
            try:
                os.ftruncate(fd, file_size)
                dir_fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY)
                try:  # a directory fd makes os.link use linkat(AT_SYMLINK_FOLLOW), which names the open file
                    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
                finally:  # (link fails if the name exists, as O_EXCL would)
                    os.close(dir_fd)
            except OSError as exc:  # e.g. a /proc of another PID namespace cannot name it: then as below
                os.close(fd)  # the unnamed file goes with it
                if exc.errno == errno.EEXIST:
                    raise
            except BaseException:
                os.close(fd)
                raise
            else:
                return fd
    fd = os.open(file_name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.ftruncate(fd, file_size)
    except BaseException:
        os.close(fd)
        raise
    return fd


class MappedFile:
    """Models ``DefaultMappedFile``: a file of ``file_size`` bytes named by the offset of its first
    byte, mapped with ``mmap``, written at ``wrote_position`` and forced to disk up to
    ``flushed_position``.

    Simplified: no TransientStorePool (``committed_position`` always equals ``wrote_position``), no
    reference counting, no warm-up. ``mm`` is the mapping; readers must stay below
    :meth:`get_read_position`. A new file is created sparse (``ftruncate``); nothing is ever read
    whole into memory. :meth:`truncate_to` zeroes what lies past the cut (Java leaves the stale
    bytes in place), so a later recovery cannot mistake them for records.
    """

    __slots__ = (
        "file_name",
        "file_size",
        "file_from_offset",
        "wrote_position",
        "flushed_position",
        "store_timestamp",
        "first_create_in_queue",
        "mm",
        "_fd",
        "_closer",
        "__weakref__",
    )

    def __init__(self, file_name: str, file_size: int, *, create: bool = True) -> None:
        base = os.path.basename(file_name)
        if not FILE_NAME_RE.match(base):
            raise StoreError(_("{path}: a store file name must be 20 digits (its start offset)").format(path=file_name))
        self.file_name = file_name
        self.file_size = file_size
        self.file_from_offset = int(base)
        self.wrote_position = 0
        self.flushed_position = 0
        self.store_timestamp = 0
        self.first_create_in_queue = False
        self._fd = open_sized_file(file_name, file_size, create)
        try:
            self.mm = mmap.mmap(self._fd, file_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(self._fd)
            raise
        # a file dropped without close() gives its descriptor back when collected (the mapping closes
        # itself); close() detaches this first, so a reused descriptor number is never closed
        self._closer = weakref.finalize(self, os.close, self._fd)

    # ---- positions ----
    def get_read_position(self) -> int:
        """How far readers may read (``wrotePosition`` without a write buffer)."""
        return self.wrote_position

    @property
    def committed_position(self) -> int:
        return self.wrote_position

    def is_full(self) -> bool:
        return self.wrote_position == self.file_size

    def set_positions(self, position: int) -> None:
        """Set wrote, committed and flushed positions at once (load and truncation)."""
        self.wrote_position = position
        self.flushed_position = position

    # ---- writing ----
    def append_message(self, data: bytes | bytearray | memoryview) -> bool:
        """``appendMessage(byte[])``: the raw append used by a slave and by the ConsumeQueue.

        Returns False, writing nothing, when the data does not fit.
        """
        pos = self.wrote_position
        end = pos + len(data)
        if end > self.file_size:
            return False
        self.mm[pos:end] = data
        self.wrote_position = end
        return True

    def flush(self, flush_least_pages: int) -> int:
        """``flush``: force the file to disk when :meth:`is_able_to_flush`; returns the flushed position."""
        if self.is_able_to_flush(flush_least_pages):
            value = self.wrote_position
            # fdatasync covers pages dirtied through the shared mapping (Linux tracks them in the page
            # cache) and, unlike mmap.flush (msync), releases the GIL while the disk works.
            _fdatasync(self._fd)
            self.flushed_position = value
        return self.flushed_position

    def is_able_to_flush(self, flush_least_pages: int) -> bool:
        flush, write = self.flushed_position, self.wrote_position
        if write <= flush:
            return False
        if self.is_full():
            return True
        if flush_least_pages > 0:
            return (write // OS_PAGE_SIZE) - (flush // OS_PAGE_SIZE) >= flush_least_pages
        return True

    def truncate_to(self, position: int) -> None:
        """Cut the file's content at ``position``: positions move there and the bytes after it become
        zeros (the partial page in place, whole pages by shrinking and re-growing the sparse file)."""
        page_end = min(-(-position // OS_PAGE_SIZE) * OS_PAGE_SIZE, self.file_size)
        if page_end > position:
            self.mm[position:page_end] = bytes(page_end - position)
        if page_end < self.file_size:
            os.ftruncate(self._fd, page_end)
            os.ftruncate(self._fd, self.file_size)
        self.set_positions(position)

    # ---- reading ----
    def select_mapped_buffer(self, pos: int, size: int | None = None) -> bytes | None:
        """``selectMappedBuffer``: a copy of ``[pos, pos+size)`` (to the read position when size is
        None), or None when that range is not readable yet."""
        read_position = self.wrote_position
        if size is None:
            if pos < 0 or pos >= read_position:
                return None
            return self.mm[pos:read_position]
        if pos < 0 or size < 0 or pos + size > read_position:
            return None
        return self.mm[pos : pos + size]

    # ---- lifecycle ----
    def get_last_modified_timestamp(self) -> int:
        try:
            return int(os.stat(self.file_name).st_mtime * 1000)
        except OSError:
            return 0

    def close(self) -> None:
        """Unmap and close (the file stays on disk)."""
        if self._fd >= 0:
            try:
                self.mm.close()
            except BufferError:  # a reader still holds a view; let GC reclaim the mapping
                log.warning("%s: mapping still exported at close", self.file_name)
            self._closer.detach()
            os.close(self._fd)
            self._fd = -1

    def destroy(self) -> None:
        """Close and delete the file."""
        self.close()
        try:
            os.unlink(self.file_name)
        except FileNotFoundError:
            pass

    @property
    def available(self) -> bool:
        return self._fd >= 0

    def __repr__(self) -> str:
        return (
            f"MappedFile({os.path.basename(self.file_name)}, wrote={self.wrote_position}, "
            f"flushed={self.flushed_position}, size={self.file_size})"
        )
