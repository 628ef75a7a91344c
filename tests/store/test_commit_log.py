"""CommitLog: append callback, rolling, batches, flushing, HA reads and slave appends."""

from __future__ import annotations

import struct
import threading
import time

import pytest

from rocketlab.errors import StoreError
from rocketlab.store import (
    AppendMessageStatus,
    CommitLog,
    FlushDiskType,
    Message,
    MessageStoreConfig,
    MessageSysFlag,
    PutMessageStatus,
)
from rocketlab.store.commit_log import DefaultAppendMessageCallback
from rocketlab.store.mapped_file import MappedFile
from rocketlab.store.message import pack_host
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.message_codec import check_message_and_return_size, decode_message, decode_messages
from rocketlab.store.message_ext_encoder import MessageExtEncoder
from rocketlab.store.record_layout import BLANK_MAGIC_CODE
from tests.store.helpers import GOLDEN, FakeClock, golden_message


def make_commit_log(tmp_path, clock=None, threads=False, **options) -> CommitLog:
    config = MessageStoreConfig(store_path_root_dir=str(tmp_path), **options).validate()
    cl = CommitLog(config, clock=clock or FakeClock(), threads=threads)
    cl.load()
    return cl


def records(cl: CommitLog):
    """Every message record as (phy offset, MessageExt), walking files and jumping over blanks."""
    out = []
    for mf in cl.mapped_file_queue.mapped_files:
        data = mf.mm[: mf.get_read_position()]
        pos = 0
        for m in decode_messages(data):
            out.append((mf.file_from_offset + pos, m))
            pos += m.store_size
    return out


# --------------------------------------------------------------------- AppendCallbackTest ----
def _batch(n: int, born_host=("127.0.0.1", 8123)) -> MessageExtBatch:
    msgs = [Message("T", f"body-{i}".encode(), tags="A", born_host=born_host, born_timestamp=1) for i in range(n)]
    return MessageExtBatch.from_messages(msgs)


def test_append_callback_end_of_file_when_the_batch_does_not_fit(tmp_path):
    mf = MappedFile(str(tmp_path / "00000000000000000000"), 10 * 1024)
    mf.wrote_position = mf.file_size - 1000
    table: dict = {}
    callback = DefaultAppendMessageCallback(table, pack_host(("127.0.0.1", 10911)))
    encoded, starts = MessageExtEncoder(4 << 20, ("127.0.0.1", 10911)).encode_batch(_batch(20), 1)
    assert len(encoded) > 1000
    result = callback.do_append_batch(mf, encoded, starts, ("T", 0), 99)
    assert result.status is AppendMessageStatus.END_OF_FILE and result.wrote_bytes == 1000
    assert mf.is_full()
    assert struct.unpack_from(">ii", mf.mm, mf.file_size - 1000) == (1000, BLANK_MAGIC_CODE)
    assert mf.mm[mf.file_size - 992 :] == bytes(992)  # only the 8-byte blank header is written
    assert table == {}  # no queue offset consumed
    mf.close()


@pytest.mark.parametrize("born_host", [("127.0.0.1", 8123), ("::1", 8123)])
def test_append_callback_batch_success_stamps_every_record(tmp_path, born_host):
    mf = MappedFile(str(tmp_path / "00000000000000004096"), 10 * 1024)
    mf.append_message(bytes(100))
    table = {("T", 0): 7}
    callback = DefaultAppendMessageCallback(table, pack_host(("::1", 10911)))
    encoded, starts = MessageExtEncoder(4 << 20, ("::1", 10911)).encode_batch(_batch(10, born_host), 1)
    result = callback.do_append_batch(mf, encoded, starts, ("T", 0), 12345)
    assert result.status is AppendMessageStatus.PUT_OK and result.msg_num == 10
    assert (result.wrote_offset, result.logics_offset) == (4096 + 100, 7) and table[("T", 0)] == 17
    msgs = list(decode_messages(mf.mm[100 : mf.wrote_position]))
    assert [m.queue_offset for m in msgs] == list(range(7, 17))
    assert [m.commit_log_offset for m in msgs] == [4196 + s for s in starts]
    assert {m.store_timestamp for m in msgs} == {12345} and msgs[0].born_host == born_host
    assert len(result.msg_id.split(",")) == 10 and result.msg_id.split(",")[1] == msgs[1].msg_id
    mf.close()


# ------------------------------------------------------------------------------- put path ----
def test_records_never_straddle_files_and_files_end_with_a_blank(tmp_path):
    clock = FakeClock()
    cl = make_commit_log(tmp_path, clock, mapped_file_size_commit_log=1024)
    results = [cl.put_message(golden_message(queue_id=i % 2)) for i in range(20)]
    assert all(r.status is PutMessageStatus.PUT_OK for r in results)
    for r in results:
        assert r.wrote_offset // 1024 == (r.wrote_offset + r.wrote_bytes - 1) // 1024
    first = cl.mapped_file_queue.mapped_files[0]
    # 6 records of 157 bytes = 942; 942 + 157 + 8 > 1024, so an 82-byte blank closes the file
    assert struct.unpack_from(">ii", first.mm, 6 * GOLDEN) == (1024 - 6 * GOLDEN, BLANK_MAGIC_CODE)
    assert results[6].wrote_offset == 1024
    assert [r.queue_offset for r in results[:6]] == [0, 0, 1, 1, 2, 2]
    got = records(cl)
    assert [p for p, _ in got] == [r.wrote_offset for r in results]
    assert all(m.commit_log_offset == p for p, m in got)
    cl.shutdown()


def test_store_timestamp_and_born_default_come_from_the_clock(tmp_path):
    clock = FakeClock(5_000)
    cl = make_commit_log(tmp_path, clock)
    r = cl.put_message(Message("T", b"x"))
    m = decode_message(cl.get_message(r.wrote_offset, r.wrote_bytes))
    assert m.store_timestamp == 5_000 and m.born_timestamp == 5_000 and r.store_timestamp == 5_000
    assert cl.get_data(r.wrote_offset + r.wrote_bytes) is None  # nothing written there yet
    clock.advance(10)
    r2 = cl.put_message(Message("T", b"y", born_timestamp=7))
    m2 = decode_message(cl.get_data(r.wrote_offset + r.wrote_bytes))
    assert (m2.store_timestamp, m2.born_timestamp, m2.queue_offset) == (5_010, 7, 1) and r2.queue_offset == 1
    cl.shutdown()


def test_transaction_types_and_queue_offsets(tmp_path):
    cl = make_commit_log(tmp_path)
    prepared = Message("T", b"p", sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE)
    rollback = Message("T", b"r", sys_flag=MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
    commit = Message("T", b"c", sys_flag=MessageSysFlag.TRANSACTION_COMMIT_TYPE)
    offsets = [cl.put_message(m).queue_offset for m in (Message("T", b"n"), prepared, rollback, commit, prepared)]
    assert offsets == [0, 0, 0, 1, 0]
    assert cl.topic_queue_table[("T", 0)] == 2
    cl.shutdown()


def test_a_record_too_big_for_any_file_is_illegal_and_writes_nothing(tmp_path):
    cl = make_commit_log(tmp_path, mapped_file_size_commit_log=1024)
    r = cl.put_message(Message("T", bytes(2000)))
    assert r.status is PutMessageStatus.MESSAGE_ILLEGAL and "can never fit" in r.detail
    assert not r.is_ok() and cl.get_max_offset() == 0
    r = cl.put_messages([Message("T", bytes(400)) for _ in range(3)])
    assert r.status is PutMessageStatus.MESSAGE_ILLEGAL and "batch" in r.detail
    cl.shutdown()


def test_batch_put_goes_whole_into_the_next_file(tmp_path):
    cl = make_commit_log(tmp_path, mapped_file_size_commit_log=2048)
    cl.put_message(Message("T", bytes(1500)))
    r = cl.put_messages([Message("T", f"m{i}".encode(), tags="A") for i in range(8)])
    assert r.status is PutMessageStatus.PUT_OK and r.msg_num == 8
    assert r.wrote_offset == 2048 and r.queue_offset == 1
    got = records(cl)
    assert [m.queue_offset for _, m in got] == list(range(9))
    bad = cl.put_messages([Message("T", b"x", properties={"DELAY": "3"})])
    assert bad.status is PutMessageStatus.MESSAGE_ILLEGAL
    bad = cl.put_messages([Message("T", b"x"), Message("U", b"y")])
    assert bad.status is PutMessageStatus.MESSAGE_ILLEGAL
    cl.shutdown()


# -------------------------------------------------------------------------------- flushing ----
def test_sync_flush_without_threads_flushes_inline(tmp_path):
    clock = FakeClock()
    cl = make_commit_log(tmp_path, clock, flush_disk_type=FlushDiskType.SYNC_FLUSH)
    r = cl.put_message(golden_message())
    assert r.status is PutMessageStatus.PUT_OK
    assert cl.flushed_where == r.wrote_offset + r.wrote_bytes
    cl.shutdown()


def test_group_commit_one_flush_serves_every_pending_request(tmp_path):
    clock = FakeClock()
    cl = make_commit_log(tmp_path, clock, flush_disk_type="SYNC_FLUSH", mapped_file_size_commit_log=64 * 1024)
    futures = [cl.async_put_message(golden_message()) for _ in range(10)]
    assert not any(f.done() for f in futures) and cl.flushed_where == 0
    gcs = cl.group_commit_service
    assert gcs.pending() == 10
    gcs.do_commit()
    assert gcs.flush_count == 1
    assert [f.result().status for f in futures] == [PutMessageStatus.PUT_OK] * 10
    assert cl.flushed_where == 10 * GOLDEN


def test_flush_disk_timeout_keeps_the_message_and_first_completion_wins(tmp_path):
    clock = FakeClock()
    cl = make_commit_log(tmp_path, clock, flush_disk_type="SYNC_FLUSH", sync_flush_timeout=100)
    future = cl.async_put_message(golden_message())
    clock.advance(101)
    assert cl.group_commit_service.check_timeouts(clock()) == 1
    cl.group_commit_service.do_commit()  # the flush happens but cannot turn the answer into PUT_OK
    result = future.result()
    assert result.status is PutMessageStatus.FLUSH_DISK_TIMEOUT and result.is_ok()
    assert decode_message(cl.get_message(result.wrote_offset, result.wrote_bytes)).body == golden_message().body


def test_flush_disk_timeout_with_threads_when_the_disk_is_slow(tmp_path):
    cl = make_commit_log(tmp_path, flush_disk_type="SYNC_FLUSH", sync_flush_timeout=50, threads=True)
    real_flush = cl.mapped_file_queue.flush
    release = threading.Event()

    def slow_flush(least_pages):
        release.wait(2)
        return real_flush(least_pages)

    cl.mapped_file_queue.flush = slow_flush
    gcs = cl.group_commit_service
    stop = threading.Event()

    def flusher():
        while not stop.is_set():
            gcs.do_commit()
            time.sleep(0.001)

    t = threading.Thread(target=flusher, daemon=True)
    t.start()
    r = cl.put_message(golden_message())
    release.set()
    stop.set()
    t.join()
    assert r.status is PutMessageStatus.FLUSH_DISK_TIMEOUT and r.is_ok()
    assert cl.get_max_offset() == GOLDEN


def test_group_commit_with_concurrent_producers_shares_fsyncs(tmp_path):
    cl = make_commit_log(tmp_path, flush_disk_type="SYNC_FLUSH", threads=True, mapped_file_size_commit_log=1 << 20)
    gcs = cl.group_commit_service
    stop = threading.Event()

    def flusher():
        while not stop.is_set():
            gcs.do_commit()
            time.sleep(0.002)

    t = threading.Thread(target=flusher, daemon=True)
    t.start()
    statuses = []

    def producer():
        for _ in range(25):
            statuses.append(cl.put_message(golden_message()).status)

    producers = [threading.Thread(target=producer) for _ in range(8)]
    for p in producers:
        p.start()
    for p in producers:
        p.join()
    stop.set()
    t.join()
    assert statuses == [PutMessageStatus.PUT_OK] * 200
    assert cl.flushed_where == 200 * GOLDEN
    assert gcs.flush_count < 200  # fsyncs were shared


def test_async_flush_is_page_gated_with_a_thorough_interval(tmp_path):
    clock = FakeClock()
    cl = make_commit_log(tmp_path, clock, mapped_file_size_commit_log=1 << 20, flush_commit_log_least_pages=4)
    service = cl.flush_real_time_service
    service.last_flush_timestamp = clock()
    for _ in range(20):
        cl.put_message(golden_message())  # 3140 bytes: less than 4 pages
    service.do_flush()
    assert cl.flushed_where == 0
    clock.advance(10_000)
    service.do_flush()  # thorough: flush everything
    assert cl.flushed_where == 20 * GOLDEN
    cl.shutdown()


# ------------------------------------------------------------------------------------ HA side ----
def test_get_data_stops_at_the_end_of_a_file(tmp_path):
    cl = make_commit_log(tmp_path, mapped_file_size_commit_log=1024)
    for _ in range(8):
        cl.put_message(golden_message())
    first = cl.get_data(0)
    assert len(first) == 1024 and struct.unpack_from(">ii", first, 6 * GOLDEN) == (1024 - 6 * GOLDEN, BLANK_MAGIC_CODE)
    assert cl.get_data(GOLDEN, max_size=100) == first[GOLDEN:GOLDEN + 100]
    assert cl.get_data(1024) == cl.get_message(1024, GOLDEN * 2)
    assert cl.get_data(1024 + 2 * GOLDEN) is None and cl.get_data(999_999) is None
    cl.shutdown()


def test_a_slave_mirrors_the_master_from_raw_chunks(tmp_path):
    master = make_commit_log(tmp_path / "m", mapped_file_size_commit_log=1024)
    for i in range(15):
        master.put_message(golden_message(keys=str(i)))
    slave = make_commit_log(tmp_path / "s", mapped_file_size_commit_log=1024)
    offset = 0
    while True:
        chunk = master.get_data(offset, max_size=100)  # 100-byte chunks cut records in half
        if chunk is None:
            break
        assert slave.append_data(offset, chunk)
        offset += len(chunk)
    assert slave.get_max_offset() == master.get_max_offset()
    for m_file, s_file in zip(master.mapped_file_queue.mapped_files, slave.mapped_file_queue.mapped_files, strict=True):
        assert m_file.mm[:] == s_file.mm[:]
    master.shutdown()
    slave.shutdown()


def test_append_data_refuses_non_contiguous_offsets(tmp_path):
    cl = make_commit_log(tmp_path, mapped_file_size_commit_log=1024)
    with pytest.raises(StoreError, match="file boundary"):
        cl.append_data(100, b"x")
    assert cl.append_data(2048, b"abc")  # an empty slave starts at a file boundary
    assert cl.get_min_offset() == 2048 and cl.get_max_offset() == 2051
    with pytest.raises(StoreError, match="not the commit log's max offset"):
        cl.append_data(2050, b"y")
    with pytest.raises(StoreError, match="cross the end of file"):
        cl.append_data(2051, bytes(1022))
    assert cl.get_max_offset() == 2051
    cl.shutdown()


def test_check_message_and_return_size_on_live_file(tmp_path):
    cl = make_commit_log(tmp_path)
    r = cl.put_message(golden_message())
    mf = cl.mapped_file_queue.mapped_files[0]
    req = check_message_and_return_size(mf.mm, 0, mf.get_read_position(), expected_offset=0)
    assert req.success and req.msg_size == r.wrote_bytes and req.commit_log_offset == 0
    assert cl.pickup_store_timestamp(0, r.wrote_bytes) == r.store_timestamp
    cl.shutdown()
