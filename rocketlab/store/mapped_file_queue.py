"""A directory of equal-size MappedFiles forming one contiguous address space.

Models ``org.apache.rocketmq.store.MappedFileQueue``. The CommitLog and every ConsumeQueue are one.
"""

from __future__ import annotations

import logging
import os
import struct

from rocketlab.errors import StoreError
from rocketlab.i18n import _
from rocketlab.store.mapped_file import FILE_NAME_RE, MappedFile, offset_to_file_name

log = logging.getLogger(__name__)

DELETE_FILES_BATCH_MAX = 10
_I64 = struct.Struct(">q")


class MappedFileQueue:
    """Models ``MappedFileQueue``: files named by their 20-digit start offsets, each exactly
    ``mapped_file_size`` bytes, the address of byte ``b`` of file ``f`` being ``f.file_from_offset + b``.

    ``mapped_files`` is replaced, never mutated, when files come and go, so a reader that took the
    list can walk it without a lock. ``flushed_where`` is the global offset known to be on disk.

    Simplified: files are created synchronously (no ``AllocateMappedFileService``), deletion is
    immediate (no 120 s forced-destroy grace) and there is no TransientStorePool, so
    ``committed_where`` is kept equal to ``flushed_where`` and ``commit`` does nothing.
    """

    def __init__(self, store_path: str, mapped_file_size: int) -> None:
        self.store_path = store_path
        self.mapped_file_size = mapped_file_size
        self.mapped_files: list[MappedFile] = []
        self.flushed_where = 0
        self.committed_where = 0
        self.store_timestamp = 0
        self.removed_at_load: list[str] = []

    # ---- load ----
    def load(self) -> None:
        """Map every file of the directory (created if missing), oldest first; all positions are set
        to the file size and recovery moves the tail back.

        Raises :class:`StoreError` for an unreadable directory, a file that is not named by a
        20-digit offset, a file of the wrong size, or a gap between two files.
        """
        try:
            os.makedirs(self.store_path, exist_ok=True)
            names = sorted(os.listdir(self.store_path))
        except (NotADirectoryError, FileExistsError) as exc:
            raise StoreError(_("{path}: not a directory").format(path=self.store_path)) from exc
        except OSError as exc:
            raise StoreError(_("{path}: cannot read store directory: {why}").format(
                path=self.store_path, why=exc.strerror)) from exc
        files = []
        self.removed_at_load = []
        try:
            for i, name in enumerate(names):
                path = os.path.join(self.store_path, name)
                if name.startswith("."):
                    continue
                if name.endswith(".tmp") or (i == len(names) - 1 and os.path.getsize(path) == 0):
                    # a file whose creation a crash interrupted (5.x also drops an empty last file)
                    log.warning("%s: removing a file left half-created by a crash", path)
                    os.unlink(path)
                    self.removed_at_load.append(name)
                    continue
                if not os.path.isfile(path) or not FILE_NAME_RE.match(name):
                    raise StoreError(_("{path}: unexpected entry in a store directory (files are named by 20 digits)").format(
                        path=path))
                mf = MappedFile(path, self.mapped_file_size, create=False)
                mf.set_positions(self.mapped_file_size)
                files.append(mf)
            self.mapped_files = files
            self.check_self()
        except BaseException:
            for mf in files:
                mf.close()
            self.mapped_files = []
            raise

    def check_self(self) -> None:
        """``checkSelf``: adjacent files must be exactly one file size apart (Java only logs this)."""
        mfs = self.mapped_files
        for prev, cur in zip(mfs, mfs[1:], strict=False):
            if cur.file_from_offset - prev.file_from_offset != self.mapped_file_size:
                raise StoreError(
                    f"{self.store_path}: files {os.path.basename(prev.file_name)} and "
                    f"{os.path.basename(cur.file_name)} are not {self.mapped_file_size} bytes apart "
                    "(a file is missing or misnamed)"
                )
        for mf in mfs:
            if mf.file_from_offset % self.mapped_file_size:
                raise StoreError(_("{path}: start offset is not a multiple of the file size {size}").format(
                    path=mf.file_name, size=self.mapped_file_size))

    # ---- lookup ----
    def get_first_mapped_file(self) -> MappedFile | None:
        mfs = self.mapped_files
        return mfs[0] if mfs else None

    def get_last_mapped_file(self, start_offset: int = 0, need_create: bool = True) -> MappedFile | None:
        """``getLastMappedFile``: the last file, creating the first one (at ``start_offset`` rounded down
        to a file boundary) or the next one (when the last is full) if ``need_create``."""
        mfs = self.mapped_files
        last = mfs[-1] if mfs else None
        if last is None:
            create_offset = start_offset - start_offset % self.mapped_file_size
        elif last.is_full():
            create_offset = last.file_from_offset + self.mapped_file_size
        else:
            return last
        if not need_create:
            return last
        return self._create_mapped_file(create_offset)

    def _create_mapped_file(self, offset: int) -> MappedFile:
        path = os.path.join(self.store_path, offset_to_file_name(offset))
        os.makedirs(self.store_path, exist_ok=True)
        mf = MappedFile(path, self.mapped_file_size, create=True)
        if not self.mapped_files:
            mf.first_create_in_queue = True
        self.mapped_files = [*self.mapped_files, mf]
        return mf

    def find_mapped_file_by_offset(self, offset: int, return_first_on_not_found: bool = False) -> MappedFile | None:
        """``findMappedFileByOffset``: the file holding ``offset`` (by index, then by a linear scan)."""
        mfs = self.mapped_files
        if not mfs:
            return None
        first, last = mfs[0], mfs[-1]
        size = self.mapped_file_size
        if offset < first.file_from_offset or offset >= last.file_from_offset + size:
            return first if return_first_on_not_found else None
        index = offset // size - first.file_from_offset // size
        if 0 <= index < len(mfs):
            target = mfs[index]
            if target.file_from_offset <= offset < target.file_from_offset + size:
                return target
        for mf in mfs:
            if mf.file_from_offset <= offset < mf.file_from_offset + size:
                return mf
        return first if return_first_on_not_found else None

    def get_min_offset(self) -> int:
        mfs = self.mapped_files
        return mfs[0].file_from_offset if mfs else -1

    def get_max_offset(self) -> int:
        """The end of the readable data: last file's start + read position (0 when empty)."""
        mfs = self.mapped_files
        if not mfs:
            return 0
        last = mfs[-1]
        return last.file_from_offset + last.get_read_position()

    def get_max_wrote_position(self) -> int:
        return self.get_max_offset()

    def remain_how_many_data_to_flush(self) -> int:
        return self.get_max_offset() - self.flushed_where

    def get_mapped_memory_size(self) -> int:
        return len(self.mapped_files) * self.mapped_file_size

    # ---- flush ----
    def flush(self, flush_least_pages: int) -> bool:
        """``flush``: flush the one file holding ``flushed_where``. Returns True when nothing moved."""
        where = self.flushed_where
        mf = self.find_mapped_file_by_offset(where, where == 0)
        if mf is None:
            return True
        tmp_timestamp = mf.store_timestamp
        new_where = mf.file_from_offset + mf.flush(flush_least_pages)
        result = new_where == where
        self.flushed_where = new_where
        self.committed_where = new_where
        if flush_least_pages == 0:
            self.store_timestamp = tmp_timestamp
        return result

    def commit(self, commit_least_pages: int) -> bool:
        """No TransientStorePool here: committing is a no-op and reports that nothing moved."""
        return True

    # ---- truncation and deletion ----
    def truncate_dirty_files(self, offset: int) -> list[str]:
        """``truncateDirtyFiles``: cut the file holding ``offset`` there and delete every later file.

        Returns the names of the deleted files.
        """
        removed = []
        keep = []
        for mf in self.mapped_files:
            tail = mf.file_from_offset + self.mapped_file_size
            if tail > offset and offset < mf.file_from_offset:
                removed.append(mf)
                continue
            if tail > offset:
                mf.truncate_to(offset % self.mapped_file_size)
            keep.append(mf)
        self.mapped_files = keep
        for mf in removed:
            mf.destroy()
        if self.flushed_where > offset:
            self.flushed_where = offset
            self.committed_where = offset
        return [os.path.basename(mf.file_name) for mf in removed]

    def reset_offset(self, offset: int) -> bool:
        """``resetOffset`` (HA/controller truncation): refuses to move back more than two files."""
        mfs = self.mapped_files
        if not mfs:
            return False
        last = mfs[-1]
        last_offset = last.file_from_offset + last.wrote_position
        if last_offset - offset > self.mapped_file_size * 2:
            return False
        self.truncate_dirty_files(offset)
        return True

    def delete_last_mapped_file(self) -> None:
        mfs = self.mapped_files
        if mfs:
            last = mfs[-1]
            self.mapped_files = mfs[:-1]
            last.destroy()

    def delete_mapped_files(self, files: list[MappedFile]) -> None:
        gone = {id(f) for f in files}
        self.mapped_files = [mf for mf in self.mapped_files if id(mf) not in gone]
        for mf in files:
            mf.destroy()

    def delete_expired_file_by_time(self, expired_time_ms: int, now_ms: int, clean_immediately: bool = False) -> int:
        """``deleteExpiredFileByTime``: delete the oldest files last modified more than
        ``expired_time_ms`` ago (or all but the last when ``clean_immediately``), at most 10 per call,
        stopping at the first file that must stay. The last file is always kept.
        """
        mfs = self.mapped_files
        files = []
        for mf in mfs[:-1]:
            if now_ms >= mf.get_last_modified_timestamp() + expired_time_ms or clean_immediately:
                files.append(mf)
                if len(files) >= DELETE_FILES_BATCH_MAX:
                    break
            else:
                break
        self.delete_mapped_files(files)
        return len(files)

    def delete_expired_file_by_offset(self, offset: int, unit_size: int) -> int:
        """``deleteExpiredFileByOffset`` (ConsumeQueue): delete leading files whose last unit points
        below ``offset`` (the CommitLog's min offset). The last file is always kept."""
        files = []
        for mf in self.mapped_files[:-1]:
            last_unit = mf.select_mapped_buffer(self.mapped_file_size - unit_size, unit_size)
            if last_unit is None or _I64.unpack_from(last_unit)[0] >= offset:
                break
            files.append(mf)
        self.delete_mapped_files(files)
        return len(files)

    # ---- lifecycle ----
    def shutdown(self) -> None:
        for mf in self.mapped_files:
            mf.close()

    def destroy(self) -> None:
        """Delete every file and the directory if it is left empty."""
        mfs, self.mapped_files = self.mapped_files, []
        for mf in mfs:
            mf.destroy()
        self.flushed_where = self.committed_where = 0
        try:
            os.rmdir(self.store_path)
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"MappedFileQueue({self.store_path!r}, files={len(self.mapped_files)}, max_offset={self.get_max_offset()})"
