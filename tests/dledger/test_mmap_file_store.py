"""DLedgerMmapFileStore on real files: checkpoint, flush policy, normal and abnormal recovery
(DLedgerMappedFileStoreTest: testCommittedIndex, testNormalRecovery, testAbnormalRecovery,
testReviseWherePosition) plus damaged tails, damaged index files and refused recoveries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.member_state import MemberState
from rocketlab.dledger.protocol import DLedgerException, DLedgerResponseCode
from rocketlab.dledger.store import DLedgerMmapFileStore
from rocketlab.dledger.store.clean_space_service import disk_partition_space_used_percent
from rocketlab.errors import StoreError

from .helpers import make_config
from .test_store import follower_with, leader_log, open_store, set_role

FILE = 1024  # data file size: six 148-byte entries per file, then a 136-byte blank


def fill(tmp_path: Path, n: int, body: int = 100, **overrides) -> DLedgerMmapFileStore:
    store = open_store(tmp_path, **overrides)
    for i in range(n):
        store.append_as_leader(DLedgerEntry(body=bytes([i % 251]) * body))
    assert isinstance(store, DLedgerMmapFileStore)
    return store


def reopen(tmp_path: Path, **overrides) -> DLedgerMmapFileStore:
    config = make_config(**overrides)
    store = DLedgerMmapFileStore(config, MemberState(config, tmp_path), tmp_path)
    store.startup()
    return store


def data_file(tmp_path: Path, k: int) -> Path:
    return tmp_path / "data" / f"{k * FILE:020d}"


def test_normal_recovery_restores_every_entry(tmp_path: Path):
    store = fill(tmp_path, 20)
    before = store.entries()
    store.shutdown()
    again = reopen(tmp_path)
    assert again.entries() == before
    assert (again.ledger_begin_index, again.ledger_end_index, again.ledger_end_term) == (0, 19, 0)
    report = again.recovery_report
    assert report is not None and not report.truncated and "index 19" in report.describe()
    set_role(again, "leader", 0)
    assert again.append_as_leader(DLedgerEntry(body=b"next")).index == 20


def test_committed_index_survives_restart_via_checkpoint(tmp_path: Path):
    store = fill(tmp_path, 100, body=10)
    store.update_committed_index(0, 90)
    store.shutdown()
    assert "committedIndex=90" in (tmp_path / "checkpoint").read_text()
    again = reopen(tmp_path)
    assert (again.committed_index, again.ledger_end_index) == (90, 99)
    assert again.committed_pos == again.get(90).pos + again.get(90).size


def test_checkpoint_is_written_periodically_not_on_crash(tmp_path: Path):
    store = fill(tmp_path, 5, body=10)
    store.update_committed_index(0, 3)
    store.on_tick(10_000)
    store.update_committed_index(0, 4)
    store.close()  # a crash: nothing more is persisted
    again = reopen(tmp_path)
    assert again.committed_index == 3 and again.ledger_end_index == 4


def test_flush_policy_interval_and_always(tmp_path: Path):
    store = fill(tmp_path / "a", 2, fsync_policy="interval")
    assert store.data_file_list.is_dirty and store.next_deadline_ms() == 10
    store.on_tick(10)
    assert not store.data_file_list.is_dirty and store.data_file_list.flushed_where == 296
    always = open_store(tmp_path / "b", fsync_policy="always")
    always.append_as_leader(DLedgerEntry(body=b"x"))
    assert not always.data_file_list.is_dirty


def test_abnormal_recovery_after_losing_the_last_files(tmp_path: Path):
    store = fill(tmp_path, 72)  # exactly 12 data files of 6 entries
    store.close()
    assert len(list((tmp_path / "data").iterdir())) == 12
    data_file(tmp_path, 11).unlink()
    data_file(tmp_path, 10).unlink()
    again = reopen(tmp_path)
    assert (again.ledger_begin_index, again.ledger_end_index) == (0, 59)
    assert again.get(59).pos == 9 * FILE + 5 * 148
    again.close()
    for p in (tmp_path / "data").iterdir():
        p.unlink()
    empty = reopen(tmp_path)
    assert (empty.ledger_begin_index, empty.ledger_end_index, empty.ledger_end_term) == (-1, -1, -1)


def test_corrupt_tail_is_cut_and_reported_earlier_entries_survive(tmp_path: Path):
    store = fill(tmp_path, 10)
    last_pos = store.get(9).pos
    store.close()
    with open(data_file(tmp_path, 1), "r+b") as f:
        f.seek(last_pos - FILE + 24)
        f.write(b"\x7f" * 8)  # the pos field of entry 9
    again = reopen(tmp_path)
    report = again.recovery_report
    assert report is not None and report.truncated and "pos" in (report.reason or "")
    assert again.ledger_end_index == 8 and [e.index for e in again.entries()] == list(range(9))
    events = [e for e in again.drain_events() if e.kind == "truncate"]
    assert events and events[0].fields["index"] == 9 and events[0].fields["reason"].startswith("recovery")
    set_role(again, "leader", 0)
    assert again.append_as_leader(DLedgerEntry(body=b"after")).pos == last_pos
    again.shutdown()
    assert reopen(tmp_path).ledger_end_index == 9


def test_torn_header_at_the_end_is_cut(tmp_path: Path):
    store = fill(tmp_path, 3)
    store.close()
    with open(data_file(tmp_path, 0), "r+b") as f:
        f.seek(296 + 30)
        f.write(bytes(18))  # half of entry 2's header is gone
    again = reopen(tmp_path)
    assert again.ledger_end_index == 1 and again.recovery_report.truncated


def test_damaged_index_slots_are_rebuilt_from_data(tmp_path: Path):
    store = fill(tmp_path, 10)
    before = store.entries()
    store.close()
    index = tmp_path / "index" / f"{0:020d}"
    raw = bytearray(index.read_bytes())
    raw[4 * 32:4 * 32 + 8] = b"\xff" * 8
    index.write_bytes(bytes(raw))
    again = reopen(tmp_path)
    assert again.entries() == before and again.recovery_report.index_rebuilt_from == 4
    assert not again.recovery_report.truncated


def test_missing_index_directory_is_rebuilt(tmp_path: Path):
    store = fill(tmp_path, 8)
    before = store.entries()
    store.close()
    for p in (tmp_path / "index").iterdir():
        p.unlink()
    again = reopen(tmp_path)
    assert again.entries() == before


def test_recovery_refuses_to_cut_more_than_one_file(tmp_path: Path):
    store = fill(tmp_path, 30)  # 5 files
    store.close()
    with open(data_file(tmp_path, 2), "r+b") as f:
        f.seek(8)
        f.write(b"\x01" * 8)  # index field of the first entry of file 2
    with pytest.raises(StoreError, match="more than one file"):
        reopen(tmp_path)


def test_wrong_file_size_and_gaps_are_clear_errors(tmp_path: Path):
    fill(tmp_path / "a", 8).close()
    with open(data_file(tmp_path / "a", 1), "r+b") as f:
        f.truncate(500)
    with pytest.raises(StoreError, match="file size 500 != configured size 1024"):
        reopen(tmp_path / "a")
    fill(tmp_path / "b", 20).close()
    data_file(tmp_path / "b", 1).unlink()
    with pytest.raises(StoreError, match="not contiguous"):
        reopen(tmp_path / "b")


def test_crash_keeps_what_was_written(tmp_path: Path):
    store = fill(tmp_path, 4)
    store.close()
    assert reopen(tmp_path).ledger_end_index == 3


def test_rebased_follower_log_survives_restart(tmp_path: Path):
    log = leader_log(12)
    store = follower_with(tmp_path, log[:3])
    store.truncate(log[9], 5, "n1")
    store.append_as_follower(log[10], 5, "n1")
    store.shutdown()
    again = reopen(tmp_path)
    assert (again.ledger_begin_index, again.ledger_end_index) == (9, 10)
    assert again.get(9) == log[9] and again.get(10) == log[10]


@pytest.mark.parametrize(("profile", "end_after_restart"), [("dledger-0.3.1.2", 7), ("dledger-0.3.2", 7), ("raft", 3)])
def test_truncate_moves_the_write_position_and_java_recovery_reads_stale_entries_back(
        tmp_path: Path, profile: str, end_after_restart: int):
    """Java's truncateOffset only moves the write positions: the cut entries stay on disk, and a restart's
    recovery, which walks data and index until the first mismatch, reads them back. The ``raft``
    profile's store zeroes the cut bytes, so they stay cut."""
    log = leader_log(8)
    store = follower_with(tmp_path, log, profile=profile)
    store.truncate(log[3], 5, "n1")
    assert store.ledger_end_index == 3
    stale = data_file(tmp_path, 0).read_bytes()[log[4].pos:log[4].pos + 4]
    assert (stale == bytes(4)) is (profile == "raft")
    store.close()
    again = reopen(tmp_path, profile=profile)
    assert again.ledger_end_index == end_after_restart
    assert os.path.getsize(data_file(tmp_path, 0)) == FILE


def test_power_loss_forgets_what_was_not_flushed(tmp_path: Path):
    store = fill(tmp_path, 3)
    store.on_tick(100)  # fsync_policy "never" still flushes (without fsync) on the interval
    assert not store.data_file_list.is_dirty
    store.append_as_leader(DLedgerEntry(body=b"unflushed"))
    assert store.lose_unflushed() == 48 + 9
    store.close()
    again = reopen(tmp_path)
    assert again.ledger_end_index == 2 and not again.recovery_report.truncated


# ---------------------------------------------------------------------- CleanSpaceService
HOUR_MS = 3600 * 1000


def _at_hour(hour: int, days_later: int = 10) -> int:
    """A wall-clock time ``days_later`` days from now, at ``hour`` o'clock UTC."""
    import time

    day = (int(time.time() * 1000) // (24 * HOUR_MS) + days_later) * 24 * HOUR_MS
    return day + hour * HOUR_MS + 60_000


def test_clean_space_deletes_expired_files_from_the_front_and_revises_the_begin_index(tmp_path: Path):
    store = fill(tmp_path, 20)  # entries 0-5, 6-11, 12-17, 18-19 in four files
    store.clean_space_service.disk_ratio = lambda path: 0.30
    assert store.clean_space(_at_hour(12)).count == 0  # neither 04 o'clock nor a full disk
    done = store.clean_space(_at_hour(4))
    assert (done.count, done.time_up, done.ledger_begin_index) == (3, True, 18)
    assert [f.file_from_offset for f in store.data_file_list.mapped_files] == [3 * FILE]
    assert not data_file(tmp_path, 0).exists() and data_file(tmp_path, 3).exists()  # the last one stays
    assert store.get(18).body == bytes([18]) * 100
    with pytest.raises(DLedgerException) as e:
        store.get(17)
    assert e.value.code is DLedgerResponseCode.INDEX_LESS_THAN_LOCAL_BEGIN
    store.shutdown()
    again = reopen(tmp_path)
    assert (again.ledger_begin_index, again.ledger_end_index) == (18, 19) and again.get(19).index == 19


def test_young_files_stay_unless_the_disk_forces_a_clean(tmp_path: Path):
    store = fill(tmp_path, 20, file_reserved_hours=1000)
    store.clean_space_service.disk_ratio = lambda path: 0.75  # above check-expired (0.70): look, keep
    assert store.clean_space(_at_hour(4)).count == 0 and not store.is_disk_full
    store.clean_space_service.disk_ratio = lambda path: 0.86  # above force-clean (0.85)
    store.clean_space_service.enable_disk_force_clean = False
    assert store.clean_space(_at_hour(4)).count == 0
    store.clean_space_service.enable_disk_force_clean = True
    assert store.clean_space(_at_hour(4)).count == 3 and not store.is_disk_full  # full only above 0.90


def test_a_full_disk_fails_appends_with_disk_full(tmp_path: Path):
    store = fill(tmp_path, 2)
    store.clean_space_service.disk_ratio = lambda path: 0.91
    assert store.clean_space(_at_hour(12)).disk_full
    with pytest.raises(DLedgerException) as e:
        store.append_as_leader(DLedgerEntry(body=b"x"))
    assert e.value.code is DLedgerResponseCode.DISK_FULL and store.ledger_end_index == 1


def test_disk_usage_is_rounded_up_to_a_whole_percent(tmp_path: Path):
    ratio = disk_partition_space_used_percent(tmp_path)
    assert 0 < ratio <= 1 and round(ratio * 100, 9) == int(round(ratio * 100, 9))
    assert disk_partition_space_used_percent(tmp_path / "missing" / "dir") == -1


# ---------------------------------------------------------------------- entries kept after a leader's append
def test_a_leader_reads_back_its_last_entries_without_the_disk_and_they_are_what_the_disk_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = fill(tmp_path, 20)
    from rocketlab.dledger.store import mmap_file_list

    with monkeypatch.context() as m:
        m.setattr(mmap_file_list.MmapFile, "read", lambda *a: pytest.fail("read the disk for a kept entry"))
        kept = [store.get(i) for i in range(20)]
        assert [store.get_entry_pos_and_size(i) for i in range(20)] == [(e.pos, e.size) for e in kept]
    with pytest.raises(DLedgerException) as e:
        store.get(20)  # the range is checked before the kept entries
    assert e.value.code is DLedgerResponseCode.INDEX_OUT_OF_RANGE
    store.shutdown()
    assert store.recent == {} and store.recent_bytes == 0
    again = reopen(tmp_path)
    assert [again.get(i) for i in range(20)] == kept
    again.close()


def test_kept_entries_are_forgotten_when_written_bytes_change(tmp_path: Path):
    store = fill(tmp_path, 5)  # led term 0
    other = leader_log(5, term=3, body=bytes(99))  # the same sizes, so the same positions
    set_role(store, "follower", 5)
    store.truncate(other[2], 5, "n1")
    assert store.get(2) == other[2] and store.ledger_end_index == 2
    set_role(store, "leader", 6)
    store.append_as_leader(DLedgerEntry(body=b"unflushed"))
    assert 3 in store.recent
    store.lose_unflushed()
    assert store.recent == {}
    store.close()


def test_kept_entries_stay_within_their_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from rocketlab.dledger.store import mmap_file_store

    monkeypatch.setattr(mmap_file_store, "RECENT_ENTRY_BYTES", 1000)
    store = fill(tmp_path, 20)  # 148 bytes each: the last six fit
    assert sorted(store.recent) == list(range(14, 20)) and store.recent_bytes == 6 * 148
    assert [e.body for e in store.entries()] == [bytes([i]) * 100 for i in range(20)]
    store.close()


def test_a_store_dropped_without_close_gives_its_descriptors_back_when_collected(tmp_path: Path):
    """A simulated cluster nobody closed must not keep its files open (a notebook building clusters in a
    loop would run out of descriptors); an explicit close never closes a reused descriptor number."""
    import gc

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    gc.collect()
    before = open_fds()
    store = fill(tmp_path / "dropped", 20)
    assert open_fds() > before
    del store
    gc.collect()
    assert open_fds() == before
    closed = fill(tmp_path / "closed", 20)
    closed.close()
    reused = os.open(os.devnull, os.O_RDONLY)  # likely takes one of the numbers close() gave back
    try:
        del closed
        gc.collect()
        os.fstat(reused)  # still open: the finalizers were detached by close()
    finally:
        os.close(reused)
