"""Recovery: clean restarts, damaged records, torn tails, crashes (DefaultMessageStoreTest.testRecover and friends)."""

from __future__ import annotations

import os
import struct

import pytest

from rocketlab.errors import StoreError
from rocketlab.store import GetMessageStatus, Message, PutMessageStatus
from rocketlab.store.crash import simulate_crash
from tests.store.helpers import GOLDEN, golden_message

TOPIC = "recoverTopic"
FILE = 2048


def put_many(store, n: int, start: int = 0) -> list:
    results = []
    for i in range(start, start + n):
        r = store.put_message(Message(TOPIC, f"body-{i:05d}".encode() * 3, queue_id=0, keys=f"k{i}", tags="T"))
        assert r.status is PutMessageStatus.PUT_OK
        results.append(r)
    store.reput()
    return results


def damage_topic_length(root, offset: int, file_size: int = FILE) -> None:
    """``damageCommitlog``: zero 16 bytes from the topic length of the record at ``offset``."""
    path = os.path.join(root, "commitlog", f"{offset // file_size * file_size:020d}")
    pos = offset % file_size
    with open(path, "r+b") as f:
        f.seek(pos + 84)
        body_len = struct.unpack(">i", f.read(4))[0]
        f.seek(pos + 84 + 4 + body_len)
        f.write(bytes(16))


def all_bodies(store, queue_id: int = 0) -> list[bytes]:
    out, offset = [], store.get_min_offset_in_queue(TOPIC, queue_id)
    while True:
        got = store.get_message(TOPIC, queue_id, offset)
        if not got.message_buffer_list:
            return out
        out += [m.body for m in got.messages]
        offset = got.next_begin_offset


@pytest.mark.parametrize("abort", [False, True], ids=["normal", "abort-file"])
def test_recover(open_store, tmp_path, abort):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE)
    put_many(store, 100)
    max_phy, max_cq = store.get_max_phy_offset(), store.get_max_offset_in_queue(TOPIC, 0)
    store.shutdown()

    # 1. just reboot
    store = open_store(mapped_file_size_commit_log=FILE)
    assert store.recovery_report.normal and not store.recovery_report.truncated
    assert (store.get_max_phy_offset(), store.get_max_offset_in_queue(TOPIC, 0)) == (max_phy, max_cq)

    # 2./3. damage the last record and reboot (normally, or with the abort file as after a crash)
    put_many(store, 100, start=100)
    second_last_phy, second_last_cq = store.get_max_phy_offset(), store.get_max_offset_in_queue(TOPIC, 0)
    put_many(store, 1, start=200)
    store.shutdown()
    damage_topic_length(root, second_last_phy)
    if abort:
        (root / "abort").touch()
    store = open_store(mapped_file_size_commit_log=FILE)
    report = store.recovery_report
    assert report.normal is not abort and report.truncated and report.process_offset == second_last_phy
    assert "differs from the length" in report.stop_reason
    assert store.get_max_phy_offset() == second_last_phy
    assert store.get_max_offset_in_queue(TOPIC, 0) == second_last_cq
    assert report.consume_queue_units_removed == {f"{TOPIC}/0": 1}
    assert all_bodies(store) == [f"body-{i:05d}".encode() * 3 for i in range(200)]
    r = store.put_message(Message(TOPIC, b"after"))  # the offset table was rebuilt from the queue
    assert r.wrote_offset == second_last_phy and r.queue_offset == second_last_cq


def test_corrupt_record_in_the_middle_cuts_there_and_reports_what_it_cut(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE)
    results = put_many(store, 60)
    files_before = sorted(os.listdir(root / "commitlog"))
    store.shutdown()
    victim = next(r for r in results if r.wrote_offset >= FILE * (len(files_before) - 2))  # in the second-last file
    path = root / "commitlog" / f"{victim.wrote_offset // FILE * FILE:020d}"
    with open(path, "r+b") as f:  # flip one body byte: the CRC check catches it
        f.seek(victim.wrote_offset % FILE + 90)
        byte = f.read(1)
        f.seek(victim.wrote_offset % FILE + 90)
        f.write(bytes([byte[0] ^ 0x55]))
    store = open_store(mapped_file_size_commit_log=FILE)
    report = store.recovery_report
    assert report.truncated and report.process_offset == victim.wrote_offset and "CRC" in report.stop_reason
    assert report.removed_files == files_before[-1:]
    assert report.truncated_bytes > 0 and "cut" in report.summary()
    kept = results.index(victim)
    assert all_bodies(store) == [f"body-{i:05d}".encode() * 3 for i in range(kept)]  # nothing valid before is lost
    assert store.get_max_offset_in_queue(TOPIC, 0) == kept
    assert store.put_message(Message(TOPIC, b"next")).queue_offset == kept


def test_a_torn_tail_after_a_crash_is_cut(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE)
    put_many(store, 10)
    end = store.get_max_phy_offset()
    record = store.commit_log.get_data(0)[: store.commit_log.get_message(0, 4)[3]]  # a whole record's bytes
    simulate_crash(store)
    with open(root / "commitlog" / f"{end // FILE * FILE:020d}", "r+b") as f:
        f.seek(end % FILE)
        f.write(record[:60])  # the first 60 bytes of a record: the copy was interrupted
    store = open_store(mapped_file_size_commit_log=FILE)
    report = store.recovery_report
    assert not report.normal and report.truncated and report.truncated_bytes == 60
    assert report.process_offset == end and "60 bytes are there" not in report.stop_reason
    assert store.get_max_phy_offset() == end and store.get_max_offset_in_queue(TOPIC, 0) == 10
    assert store.commit_log.get_data(end) is None
    mf = store.commit_log.mapped_file_queue.mapped_files[-1]
    assert mf.mm[end % FILE : end % FILE + 60] == bytes(60)  # the torn bytes are gone from the file


def test_crash_recovery_redispatches_lost_consume_queues(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE, message_index_safe=True)
    put_many(store, 40)
    simulate_crash(store)
    for name in os.listdir(root / "consumequeue" / TOPIC / "0"):
        os.unlink(root / "consumequeue" / TOPIC / "0" / name)
    store = open_store(mapped_file_size_commit_log=FILE, message_index_safe=True)
    report = store.recovery_report
    assert not report.normal and report.redispatched == 40 and not report.truncated
    assert report.index_files_dropped  # the active index file is newer than the checkpoint: rebuilt
    assert all_bodies(store) == [f"body-{i:05d}".encode() * 3 for i in range(40)]
    assert [m.keys for m in store.query_message(TOPIC, "k17").messages] == ["k17"]


def test_a_power_loss_keeps_only_flushed_messages(open_store):
    store = open_store(mapped_file_size_commit_log=FILE)
    put_many(store, 10)
    store.flush()
    flushed = store.get_max_phy_offset()
    put_many(store, 5, start=10)
    end = store.get_max_phy_offset()
    assert simulate_crash(store, lose_unflushed=True) == end - flushed
    store = open_store(mapped_file_size_commit_log=FILE)
    report = store.recovery_report
    assert not report.normal and report.process_offset == flushed and report.stop_reason == "end of data"
    assert report.truncated_bytes == 0 and report.removed_files == [f"{FILE:020d}"]  # the emptied second file
    assert all_bodies(store) == [f"body-{i:05d}".encode() * 3 for i in range(10)]  # the queue was trimmed too
    assert report.consume_queue_units_removed == {f"{TOPIC}/0": 5}


def test_consume_queue_pointing_past_the_commit_log_is_trimmed(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE)
    results = put_many(store, 40)
    store.shutdown()
    files = sorted(os.listdir(root / "commitlog"))
    os.unlink(root / "commitlog" / files[-1])  # the newest file is lost
    store = open_store(mapped_file_size_commit_log=FILE)
    survivors = [r for r in results if r.wrote_offset < int(files[-1])]
    assert store.get_max_offset_in_queue(TOPIC, 0) == len(survivors)
    assert store.recovery_report.consume_queue_units_removed == {f"{TOPIC}/0": 40 - len(survivors)}
    assert store.put_message(Message(TOPIC, b"x")).queue_offset == len(survivors)


def test_dispatch_behind_at_shutdown_keeps_the_abort_file(open_store, tmp_path):
    master = open_store(root=tmp_path / "m", mapped_file_size_commit_log=FILE)
    put_many(master, 5)
    slave = open_store(root=tmp_path / "s", broker_role="SLAVE", mapped_file_size_commit_log=FILE)
    data = master.get_commit_log_data(0)
    # The last record is incomplete: its properties length and beyond have not arrived. (A cut inside
    # the properties bytes themselves would pass recovery's checks, as in RocketMQ without 5.2's
    # whole-record CRC: the body CRC and the recomputed length cannot see it.)
    slave.append_to_commit_log(0, data[: len(data) - 40])
    slave.reput()
    slave.shutdown()
    assert os.path.exists(tmp_path / "s" / "abort")
    slave = open_store(root=tmp_path / "s", broker_role="SLAVE", mapped_file_size_commit_log=FILE)
    report = slave.recovery_report
    assert not report.normal and report.truncated and slave.get_max_offset_in_queue(TOPIC, 0) == 4
    slave.append_to_commit_log(slave.get_max_phy_offset(), data[slave.get_max_phy_offset() :])
    slave.reput()
    assert slave.get_max_offset_in_queue(TOPIC, 0) == 5
    slave.shutdown()
    assert not os.path.exists(tmp_path / "s" / "abort")


def test_repeat_restart_keeps_offsets(open_store):
    store = open_store()
    for _ in range(5):
        put_many(store, 7)
        phy, cq = store.get_max_phy_offset(), store.get_max_offset_in_queue(TOPIC, 0)
        store.shutdown()
        store = open_store()
        assert store.recovery_report.normal and not store.recovery_report.truncated
        assert (store.get_max_phy_offset(), store.get_max_offset_in_queue(TOPIC, 0)) == (phy, cq)
    assert store.get_max_offset_in_queue(TOPIC, 0) == 35


def test_files_of_the_wrong_size_are_refused(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=FILE)
    put_many(store, 30)
    store.shutdown()
    path = root / "commitlog" / sorted(os.listdir(root / "commitlog"))[-1]
    os.truncate(path, FILE // 2)
    with pytest.raises(StoreError, match="1024 bytes but the configured size is 2048"):
        open_store(mapped_file_size_commit_log=FILE)
    assert os.path.getsize(path) == FILE // 2  # nothing was changed by the failed open
    with pytest.raises(StoreError, match="configured size"):
        open_store(mapped_file_size_commit_log=4096)


def test_an_empty_commit_log_drops_the_consume_queues(open_store, tmp_path):
    root = tmp_path / "store"
    store = open_store()
    put_many(store, 3)
    store.shutdown()
    for name in os.listdir(root / "commitlog"):
        os.unlink(root / "commitlog" / name)
    store = open_store()
    assert store.get_max_offset_in_queue(TOPIC, 0) == 0
    assert store.get_message(TOPIC, 0, 0).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
    assert store.put_message(golden_message()).wrote_offset == 0


def test_a_blank_at_the_end_of_the_last_file_is_recovered(open_store, tmp_path):
    """A crash between padding a file and creating the next one leaves a blank at the very end."""
    root = tmp_path / "store"
    store = open_store(mapped_file_size_commit_log=1024)
    for _ in range(6):
        store.put_message(golden_message())
    store.commit_log.append_message_callback._end_of_file(
        store.commit_log.mapped_file_queue.mapped_files[-1], 6 * GOLDEN, 1024 - 6 * GOLDEN, 0
    )
    store.shutdown()
    store = open_store(mapped_file_size_commit_log=1024)
    assert store.get_max_phy_offset() == 6 * GOLDEN
    r = store.put_message(golden_message())
    assert r.wrote_offset == 1024 and r.queue_offset == 6
    assert len(os.listdir(root / "commitlog")) == 2


def test_abnormal_recovery_ignores_the_index_timestamp_when_the_index_is_disabled(open_store, clock):
    """CommitLog.isMappedFileMatchedRecover (4.9.5): the index's timestamp joins the minimum only with
    messageIndexEnable *and* messageIndexSafe; a disabled index never advances it, so counting it would
    send recovery back to the first file."""
    store = open_store(mapped_file_size_commit_log=FILE, message_index_enable=False, message_index_safe=True)
    for k in range(6):  # ten seconds between batches: the files start well apart in time
        put_many(store, 10, start=10 * k)
        clock.advance(10_000)
    store.flush()
    store.flush_consume_queue()
    files = [mf.file_name for mf in store.commit_log.mapped_file_queue.mapped_files]
    assert len(files) >= 3 and store.store_checkpoint.index_msg_timestamp == 0
    simulate_crash(store)
    store = open_store(mapped_file_size_commit_log=FILE, message_index_enable=False, message_index_safe=True)
    report = store.recovery_report
    assert not report.normal and report.start_file not in (None, os.path.basename(files[0]))
    assert all_bodies(store) == [f"body-{i:05d}".encode() * 3 for i in range(60)]
