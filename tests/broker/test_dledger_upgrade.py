"""Smooth upgrade: a broker with a classic commit log restarts in DLedger mode (RocketMQ's
MixCommitlogTest: testPutAndGet, testFallBehindCQ, testDeleteExpiredFiles), a corrupted old tail at upgrade,
and retention: the old files first, then DLedger's CleanSpaceService.

Reference: the digest's section 6.2, "Smooth upgrade from an old commit log".
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

from rocketlab.scenarios.broker_on_dledger import FAST, FILE, bodies, write_classic_store
from rocketlab.sim import Cluster


def _group(root: Path) -> Cluster:
    return Cluster.dledger_brokers(3, seed=3, data_dir=root, dledger=FAST, latency="uniform:1:3")


def test_put_and_get_across_the_divide_and_after_a_restart(tmp_path):
    """MixCommitlogTest.testPutAndGet."""
    old_max = write_classic_store(tmp_path, 150)  # about 105 KB: two old files
    c = _group(tmp_path)
    divided = (old_max // FILE + 1) * FILE
    for node in c.node_ids:
        core = c.node(node)
        assert core.commit_log.divided_commitlog_offset == divided
        assert core.store.get_max_phy_offset() == divided  # before the first DLedger write
        report = core.store.recovery_report
        assert report.upgraded and report.blank_written_at == old_max and not report.truncated
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    new = [c.put(f"new-{i}".encode() * 20) for i in range(40)]
    assert {h.status for h in new} == {"PUT_OK"}
    assert new[0].wrote_offset == divided + 48 and new[0].queue_offset == 150
    expected = [f"old-{i:03d}".encode() * 100 for i in range(150)] + [f"new-{i}".encode() * 20 for i in range(40)]
    assert bodies(c) == expected
    nodes = c.node_ids
    c.crash(*nodes)
    c.restart(*nodes)
    for node in nodes:
        core = c.node(node)
        assert core.commit_log.divided_commitlog_offset == divided and not core.store.recovery_report.upgraded
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert bodies(c) == expected
    assert c.put(b"one more").queue_offset == 190
    c.close()


def test_consume_queues_rebuilt_from_both_formats_after_they_fall_behind(tmp_path):
    """MixCommitlogTest.testFallBehindCQ: the consume queues are deleted; the reput rebuilds them
    from the old records and the DLedger entries alike."""
    write_classic_store(tmp_path, 60)
    c = _group(tmp_path)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    for i in range(30):
        c.put(f"n{i}".encode() * 10)
    c.run_for(500)
    nodes = c.node_ids
    for node in nodes:
        c.runtime.stop(node)
    for node in nodes:
        shutil.rmtree(tmp_path / "nodes" / node / "store" / "consumequeue")
    c.restart(*nodes)
    # followers learn the last commit index with the leader's next push (a COMMIT push within 1 s)
    assert c.run_until(lambda c: all(c.node(n).store.get_max_offset_in_queue("TopicTest", 0) == 90
                                     for n in nodes), timeout_ms=5_000)
    assert len(bodies(c)) == 90
    c.close()


def test_a_corrupted_old_tail_is_cut_and_reported_at_upgrade_and_nothing_valid_is_lost(tmp_path):
    old_max = write_classic_store(tmp_path, 20)
    for node in ("n0", "n1", "n2"):
        path = tmp_path / "nodes" / node / "store" / "commitlog" / f"{0:020d}"
        with open(path, "r+b") as f:  # a torn last write: a header that promises more than is there
            f.seek(old_max)
            f.write(b"\x00\x00\x04\x00\xda\xa3\x20\xa7" + b"\x17" * 40)
    c = _group(tmp_path)
    for node in c.node_ids:
        report = c.node(node).store.recovery_report
        assert report.truncated and report.old_recovery.records == 20
        assert "invalid record" in report.old_recovery.stop_reason and report.blank_written_at == old_max
        assert report.old_recovery.process_offset == old_max and "cut" in report.summary()
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    c.put(b"fresh")
    got = bodies(c)
    assert len(got) == 21 and got[-1] == b"fresh"
    c.close()


def test_a_broker_without_an_old_commit_log_starts_its_dledger_log_at_offset_zero(tmp_path):
    c = _group(tmp_path)
    assert all(c.node(n).commit_log.divided_commitlog_offset == -1 for n in c.node_ids)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert c.put(b"first").wrote_offset == 48
    c.close()


def test_the_old_files_are_untouched_apart_from_the_closing_blank(tmp_path):
    old_max = write_classic_store(tmp_path, 10)
    path = tmp_path / "nodes" / "n0" / "store" / "commitlog" / f"{0:020d}"
    before = path.read_bytes()
    c = _group(tmp_path)
    c.close()
    after = path.read_bytes()
    assert after[:old_max] == before[:old_max] and after[old_max + 8:] == before[old_max + 8:]
    assert hashlib.md5(after[old_max:old_max + 8]).hexdigest() != hashlib.md5(before[old_max:old_max + 8]).hexdigest()
    assert int.from_bytes(after[old_max + 4:old_max + 8], "big", signed=True) == -875286124  # BLANK_MAGIC_CODE


# ---------------------------------------------------------------------- retention after the upgrade
HOUR_MS = 3600 * 1000


def _wall_ms() -> int:
    return int(time.time() * 1000)


def test_old_files_expire_first_and_dledger_keeps_everything_until_they_are_gone(tmp_path):
    """MixCommitlogTest.testDeleteExpiredFiles: while old files remain DLedger's reserve is ten years and
    force-clean is off; deleteExpiredFile removes the old files, the last one included; then it answers
    Integer.MAX_VALUE and DLedger deletes by the broker's rules again (fileReservedTime + 1 hours,
    cleanFileForciblyEnable)."""
    old_max = write_classic_store(tmp_path, 150)
    c = _group(tmp_path)
    divided = (old_max // FILE + 1) * FILE
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert {c.put(f"new-{i}".encode() * 20).status for i in range(40)} == {"PUT_OK"}
    c.run_for(500)
    for node in c.node_ids:
        store = c.node(node).store
        cl = store.commit_log
        service = cl.dledger_store.clean_space_service
        assert store.config.clean_file_forcibly_enable and not service.enable_disk_force_clean  # set at upgrade
        assert store.get_min_phy_offset() == 0 and store.get_min_offset_in_queue("TopicTest", 0) == 0
        max_phy = store.get_max_phy_offset()
        counts = [cl.delete_expired_file(_wall_ms(), _wall_ms(), True) for _ in range(5)]
        assert counts[:3] == [1, 1, 2**31 - 1] and not cl.mapped_file_queue.mapped_files  # first, then the last
        assert store.get_min_phy_offset() == divided and store.get_max_phy_offset() == max_phy
        assert service.file_reserved_hours == 72 + 1 and service.enable_disk_force_clean
        store.update_config(clean_file_forcibly_enable=False)
        assert cl.delete_expired_file(_wall_ms(), _wall_ms(), True) == 2**31 - 1
        assert not service.enable_disk_force_clean
        store.delete_expired_files(_wall_ms())  # the consume queues follow the new min offset
        assert store.get_min_offset_in_queue("TopicTest", 0) == 150
    assert bodies(c, 150) == [f"new-{i}".encode() * 20 for i in range(40)]
    assert c.pull("TopicTest", 0, 0, 32).status == "OFFSET_TOO_SMALL"
    c.close()


def test_while_old_files_remain_dledger_deletes_nothing_even_when_expired(tmp_path):
    write_classic_store(tmp_path, 150)
    c = _group(tmp_path)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    for i in range(120):  # about 86 KB of entries: two DLedger files
        c.put(f"new-{i:03d}".encode() * 70)
    c.run_for(500)
    store = c.node(c.leader()).store
    cl = store.commit_log
    assert len(cl.data_file_list.mapped_files) == 2
    cl.delete_expired_file(_wall_ms(), _wall_ms() + 10 * HOUR_MS, False)  # not expired: nothing goes
    assert len(cl.mapped_file_queue.mapped_files) == 2 and cl.dledger_store.clean_space_service.file_reserved_hours == 87600
    cl.dledger_store.clean_space_service.disk_ratio = lambda path: 0.80  # above check-expired (0.70)
    later = _wall_ms() + 100 * 24 * HOUR_MS
    assert cl.clean_space(later).count == 0 and cl.dledger_store.ledger_begin_index == 0
    c.close()


def _fill_two_dledger_files(c: Cluster) -> None:
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    for i in range(120):  # about 86 KB of entries: two DLedger files
        assert c.put(f"new-{i:03d}".encode() * 70).status == "PUT_OK"
    c.run_for(500)


def test_once_the_old_files_are_gone_dledger_deletes_its_expired_files_and_revises_the_begin_index(tmp_path):
    write_classic_store(tmp_path, 150)
    c = _group(tmp_path)
    _fill_two_dledger_files(c)
    later = _wall_ms() + 100 * HOUR_MS
    for node in c.node_ids:
        store = c.node(node).store
        cl = store.commit_log
        dstore = cl.dledger_store
        while cl.delete_expired_file(73 * HOUR_MS, later, False) != 2**31 - 1:
            pass
        first, second = cl.data_file_list.mapped_files
        dstore.clean_space_service.disk_ratio = lambda path: 0.50  # below every threshold, not 04 o'clock
        assert cl.clean_space(later - later % (24 * HOUR_MS) + 12 * HOUR_MS).count == 0
        done = cl.clean_space(later - later % (24 * HOUR_MS) + 4 * HOUR_MS)  # deleteWhen=04
        assert done.time_up and done.count == 1 and cl.data_file_list.mapped_files == [second]
        begin = dstore.ledger_begin_index
        assert begin > 0 and dstore.get(begin).pos == second.file_from_offset
        assert store.get_min_phy_offset() == second.file_from_offset
        store.delete_expired_files(_wall_ms())
        assert store.get_min_offset_in_queue("TopicTest", 0) == 150 + begin
    got = bodies(c, 150 + c.node(c.leader()).commit_log.dledger_store.ledger_begin_index)
    assert got[-1] == b"new-119" * 70
    nodes = c.node_ids
    c.crash(*nodes)
    c.restart(*nodes)
    for node in nodes:
        dstore = c.node(node).commit_log.dledger_store
        assert dstore.ledger_begin_index == begin and dstore.ledger_end_index == 119
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert c.put(b"after").queue_offset == 270
    c.close()


def test_a_full_disk_refuses_appends_and_force_clean_deletes_unexpired_files(tmp_path):
    c = _group(tmp_path)
    _fill_two_dledger_files(c)
    leader = c.leader()
    cl = c.node(leader).commit_log
    service = cl.dledger_store.clean_space_service
    assert cl.delete_expired_file(0, _wall_ms(), False) == 2**31 - 1  # no old files: refresh
    service.disk_ratio = lambda path: 0.91  # above diskFullRatio (0.85 + 0.05)
    done = cl.clean_space(_wall_ms())
    assert done.disk_full and done.force_clean and done.count == 1  # young files go when forced
    end = cl.dledger_store.ledger_end_index
    assert c.put(b"refused").status == "OS_PAGE_CACHE_BUSY"  # Java: pos -1 (DISK_FULL) -> OS_PAGECACHE_BUSY
    assert cl.dledger_store.ledger_end_index == end
    service.disk_ratio = lambda path: 0.40
    assert not cl.clean_space(_wall_ms()).disk_full
    assert c.put(b"accepted").status == "PUT_OK"
    c.close()
