"""MappedFile and MappedFileQueue (mirrors MappedFileTest and MappedFileQueueTest)."""

from __future__ import annotations

import os
import time

import pytest

from rocketlab.errors import StoreError
from rocketlab.store import mapped_file
from rocketlab.store.mapped_file import MappedFile, open_sized_file
from rocketlab.store.mapped_file_queue import MappedFileQueue

FIXED = b"0123456789abcdef"  # 16 bytes, 64 per 1024-byte file


def fill(mfq: MappedFileQueue, count: int) -> None:
    for _ in range(count):
        mf = mfq.get_last_mapped_file(0)
        assert mf is not None and mf.append_message(FIXED)


def test_append_then_select_returns_the_same_bytes(tmp_path):
    mf = MappedFile(str(tmp_path / "00000000000000000000"), 1024)
    assert mf.append_message(b"hello") and mf.append_message(b"world")
    assert mf.select_mapped_buffer(0, 5) == b"hello"
    assert mf.select_mapped_buffer(5) == b"world"
    assert mf.select_mapped_buffer(8, 5) is None  # past the read position
    assert not mf.append_message(bytes(1015))  # does not fit, nothing written
    assert mf.wrote_position == 10
    mf.close()
    assert os.path.getsize(tmp_path / "00000000000000000000") == 1024


def test_get_last_mapped_file_rolls_over_and_find_by_offset(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    fill(mfq, 1024)
    assert len(mfq.mapped_files) == 16
    assert [os.path.basename(m.file_name) for m in mfq.mapped_files][:2] == [
        "00000000000000000000",
        "00000000000000001024",
    ]
    for offset in (0, 100, 1024, 1024 + 100, 2048, 2048 + 100, 4096, 4096 + 100, 1024 * 15 + 1023):
        mf = mfq.find_mapped_file_by_offset(offset)
        assert mf is not None and mf.file_from_offset == offset // 1024 * 1024
    assert mfq.find_mapped_file_by_offset(1024 * 16) is None
    assert mfq.get_max_offset() == 1024 * 16 and mfq.get_min_offset() == 0
    assert mfq.get_mapped_memory_size() == 1024 * 16
    mfq.shutdown()


def test_non_zero_start_offset(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    mf = mfq.get_last_mapped_file(1024 * 3 + 17)
    assert mf is not None and mf.file_from_offset == 1024 * 3 and mf.first_create_in_queue
    assert mfq.find_mapped_file_by_offset(0) is None
    assert mfq.find_mapped_file_by_offset(0, return_first_on_not_found=True) is mf
    mfq.shutdown()


def test_find_mapped_file_by_iteration_when_the_index_misses(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    fill(mfq, 64 * 6)
    # Leave a hole in the in-memory list: the index arithmetic points at the wrong file and the
    # linear scan must find the right one.
    mfq.mapped_files = mfq.mapped_files[:1] + mfq.mapped_files[3:]
    mf = mfq.find_mapped_file_by_offset(1024 * 4 + 5)
    assert mf is not None and mf.file_from_offset == 1024 * 4
    mfq.shutdown()


def test_flush_moves_one_file_per_call_and_returns_false_while_progressing(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    fill(mfq, 64 * 2 + 10)
    assert mfq.flush(0) is False and mfq.flushed_where == 1024
    assert mfq.flush(0) is False and mfq.flushed_where == 2048
    assert mfq.flush(0) is False and mfq.flushed_where == 2048 + 160
    assert mfq.flush(0) is True  # nothing moved
    mfq.shutdown()


def test_flush_least_pages_waits_for_enough_dirty_pages(tmp_path):
    mf = MappedFile(str(tmp_path / "00000000000000000000"), 64 * 1024)
    mf.append_message(bytes(4096 * 3))
    assert mf.flush(4) == 0  # only 3 pages dirty
    mf.append_message(bytes(4096))
    assert mf.flush(4) == 4096 * 4
    mf.append_message(b"x")
    assert mf.flush(0) == 4096 * 4 + 1
    mf.close()


def test_load_checks_sizes_names_and_gaps(tmp_path):
    d = tmp_path / "cl"
    mfq = MappedFileQueue(str(d), 1024)
    fill(mfq, 64 * 3)
    mfq.shutdown()
    loaded = MappedFileQueue(str(d), 1024)
    loaded.load()
    assert len(loaded.mapped_files) == 3 and all(m.wrote_position == 1024 for m in loaded.mapped_files)
    loaded.shutdown()

    with pytest.raises(StoreError, match="configured size is 2048"):
        MappedFileQueue(str(d), 2048).load()

    os.rename(d / "00000000000000001024", d / "00000000000000009216")
    with pytest.raises(StoreError, match="not 1024 bytes apart"):
        MappedFileQueue(str(d), 1024).load()
    os.rename(d / "00000000000000009216", d / "00000000000000001024")

    (d / "notes.txt").write_text("hi")
    with pytest.raises(StoreError, match="unexpected entry"):
        MappedFileQueue(str(d), 1024).load()
    os.unlink(d / "notes.txt")

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="not a directory"):
        MappedFileQueue(str(blocker), 1024).load()


def test_load_reports_an_unreadable_directory(tmp_path, monkeypatch):
    def denied(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "listdir", denied)
    with pytest.raises(StoreError, match="Permission denied"):
        MappedFileQueue(str(tmp_path / "x"), 1024).load()


def test_truncate_dirty_files_zeroes_the_tail_and_deletes_later_files(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 8192)
    for _ in range(3):
        mf = mfq.get_last_mapped_file(0)
        assert mf is not None
        mf.append_message(b"\xab" * 8192)
    removed = mfq.truncate_dirty_files(8192 + 100)
    assert removed == ["00000000000000016384"]
    assert len(mfq.mapped_files) == 2 and mfq.get_max_offset() == 8192 + 100
    second = mfq.mapped_files[1]
    assert second.mm[:100] == b"\xab" * 100 and second.mm[100:8192] == bytes(8092)
    assert not os.path.exists(tmp_path / "a" / "00000000000000016384")
    mfq.shutdown()


def test_reset_offset_refuses_to_go_back_more_than_two_files(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    fill(mfq, 64 * 5)
    assert not mfq.reset_offset(1024)
    assert mfq.reset_offset(1024 * 3 + 16)
    assert mfq.get_max_offset() == 1024 * 3 + 16
    mfq.shutdown()


def test_delete_expired_files_by_time_and_by_offset(tmp_path):
    mfq = MappedFileQueue(str(tmp_path / "a"), 1024)
    fill(mfq, 64 * 4)
    old = time.time() - 3600
    for mf in mfq.mapped_files[:2]:
        os.utime(mf.file_name, (old, old))
    now_ms = int(time.time() * 1000)
    assert mfq.delete_expired_file_by_time(60_000, now_ms) == 2
    assert mfq.get_min_offset() == 2048
    assert mfq.delete_expired_file_by_time(0, now_ms, clean_immediately=True) == 1  # the last file stays
    assert len(mfq.mapped_files) == 1
    mfq.shutdown()

    cq = MappedFileQueue(str(tmp_path / "cq"), 20 * 4)
    for phy in range(0, 12):
        mf = cq.get_last_mapped_file(0)
        assert mf is not None
        mf.append_message(phy.to_bytes(8, "big") + (1).to_bytes(4, "big") + bytes(8))
    # files hold phys 0-3, 4-7, 8-11: the first two end below 8
    assert cq.delete_expired_file_by_offset(8, 20) == 2
    assert cq.get_min_offset() == 160
    cq.shutdown()


def test_a_mapped_file_dropped_without_close_gives_its_descriptor_back(tmp_path):
    import gc

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    gc.collect()
    before = open_fds()
    dropped = MappedFile(str(tmp_path / f"{0:020d}"), 4096)
    dropped.append_message(b"x" * 10)
    assert open_fds() > before
    del dropped
    gc.collect()
    assert open_fds() == before
    closed = MappedFile(str(tmp_path / f"{4096:020d}"), 4096)
    closed.close()
    reused = os.open(os.devnull, os.O_RDONLY)
    try:
        del closed
        gc.collect()
        os.fstat(reused)  # close() detached the finalizer: the reused number stays open
    finally:
        os.close(reused)


def test_a_new_store_file_appears_only_whole(tmp_path, monkeypatch):
    """A crash between creating a file and sizing it must not leave a short file under a store name: the
    real store refuses to load one (DefaultMessageStore.load() returns false). On Linux the file is made
    unnamed and linked once sized; a 'crash' at the sizing leaves no name at all."""
    real_ftruncate = os.ftruncate

    def crash(fd, size):
        raise KeyboardInterrupt  # the process dies here

    monkeypatch.setattr(os, "ftruncate", crash)
    name = tmp_path / "00000000000000000000"
    with pytest.raises(KeyboardInterrupt):
        open_sized_file(str(name), 4096, create=True)
    assert not name.exists() and list(tmp_path.iterdir()) == []
    monkeypatch.setattr(os, "ftruncate", real_ftruncate)
    fd = open_sized_file(str(name), 4096, create=True)
    os.close(fd)
    assert name.stat().st_size == 4096
    with pytest.raises(FileExistsError):  # the name exists: as O_EXCL
        mapped_file._create_sized(str(name), 4096)


def test_a_new_store_file_without_proc_is_created_and_sized(tmp_path, monkeypatch):
    real_isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: False if p == "/proc/self/fd" else real_isdir(p))
    name = tmp_path / "00000000000000004096"
    os.close(open_sized_file(str(name), 8192, create=True))
    assert name.stat().st_size == 8192
