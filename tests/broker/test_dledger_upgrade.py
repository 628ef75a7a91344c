"""Smooth upgrade: a broker with a classic commit log restarts in DLedger mode (RocketMQ's
MixCommitlogTest: testPutAndGet, testFallBehindCQ), plus a corrupted old tail at upgrade.

Reference: the digest's section 6.2, "Smooth upgrade from an old commit log".
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from rocketlab.sim import Cluster
from rocketlab.store import Message, MessageStore

FILE = 64 * 1024
FAST = {"heart_beat_time_interval_ms": 200, "max_vote_interval_ms": 300, "min_vote_interval_ms": 100,
        "vote_round_wait_base_ms": 200, "dispatcher_error_backoff_ms": 50}


def _old_store(root: Path, count: int, size: int = 700) -> int:
    """A classic (pre-DLedger) store with ``count`` messages on n0, copied to n1 and n2 as the upgrade
    guide asks (identical commit logs); returns its max offset."""
    src = root / "nodes" / "n0" / "store"
    with MessageStore.open(src, mapped_file_size_commit_log=FILE, threads=False) as store:
        for i in range(count):
            assert store.put_message(Message(topic="TopicTest", body=f"old-{i:03d}".encode() * (size // 7))).is_ok()
        store.reput()
        max_offset = store.get_max_phy_offset()
    for node in ("n1", "n2"):
        shutil.copytree(src, root / "nodes" / node / "store")
    return max_offset


def _group(root: Path) -> Cluster:
    return Cluster.dledger_brokers(3, seed=3, data_dir=root, dledger=FAST, latency="uniform:1:3")


def _bodies(c: Cluster) -> list[bytes]:
    got, offset = [], 0
    while (r := c.pull("TopicTest", 0, offset, 32)).status == "FOUND":
        got += [m["body"] for m in r.messages]
        offset = r.next_begin_offset
    return got


def test_put_and_get_across_the_divide_and_after_a_restart(tmp_path):
    """MixCommitlogTest.testPutAndGet."""
    old_max = _old_store(tmp_path, 150)  # about 105 KB: two old files
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
    assert _bodies(c) == expected
    nodes = c.node_ids
    c.crash(*nodes)
    c.restart(*nodes)
    for node in nodes:
        core = c.node(node)
        assert core.commit_log.divided_commitlog_offset == divided and not core.store.recovery_report.upgraded
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert _bodies(c) == expected
    assert c.put(b"one more").queue_offset == 190
    c.close()


def test_consume_queues_rebuilt_from_both_formats_after_they_fall_behind(tmp_path):
    """MixCommitlogTest.testFallBehindCQ: the consume queues are deleted; the reput rebuilds them
    from the old records and the DLedger entries alike."""
    _old_store(tmp_path, 60)
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
    assert len(_bodies(c)) == 90
    c.close()


def test_a_corrupted_old_tail_is_cut_and_reported_at_upgrade_and_nothing_valid_is_lost(tmp_path):
    old_max = _old_store(tmp_path, 20)
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
    bodies = _bodies(c)
    assert len(bodies) == 21 and bodies[-1] == b"fresh"
    c.close()


def test_a_broker_without_an_old_commit_log_starts_its_dledger_log_at_offset_zero(tmp_path):
    c = _group(tmp_path)
    assert all(c.node(n).commit_log.divided_commitlog_offset == -1 for n in c.node_ids)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert c.put(b"first").wrote_offset == 48
    c.close()


def test_the_old_files_are_untouched_apart_from_the_closing_blank(tmp_path):
    old_max = _old_store(tmp_path, 10)
    path = tmp_path / "nodes" / "n0" / "store" / "commitlog" / f"{0:020d}"
    before = path.read_bytes()
    c = _group(tmp_path)
    c.close()
    after = path.read_bytes()
    assert after[:old_max] == before[:old_max] and after[old_max + 8:] == before[old_max + 8:]
    assert hashlib.md5(after[old_max:old_max + 8]).hexdigest() != hashlib.md5(before[old_max:old_max + 8]).hexdigest()
    assert int.from_bytes(after[old_max + 4:old_max + 8], "big", signed=True) == -875286124  # BLANK_MAGIC_CODE
