"""IndexFile and IndexService (IndexFileTest, IndexServiceTest) and the StoreCheckpoint (StoreCheckpointTest)."""

from __future__ import annotations

import os
import struct

import pytest

from rocketlab.errors import StoreError
from rocketlab.store import DispatchRequest, IndexFile, IndexService, Message, StoreCheckpoint
from rocketlab.store.index_file import INDEX_HEADER_SIZE, index_file_size, index_key_hash_method
from rocketlab.store.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageSysFlag
from tests.store.helpers import FakeClock

HASH_SLOT_NUM = 100
INDEX_NUM = 400


def test_index_file_capacity_is_index_num_minus_one(tmp_path):
    f = IndexFile(str(tmp_path / "20240101000000000"), HASH_SLOT_NUM, INDEX_NUM, 0, 0)
    for i in range(INDEX_NUM - 1):
        assert f.put_key(str(i), i, 1_700_000_000_000 + i)
    assert not f.put_key("400", 400, 1_700_000_000_400)  # the 400th of 400 fails
    assert f.is_write_full()
    assert os.path.getsize(f.file_name) == index_file_size(HASH_SLOT_NUM, INDEX_NUM) == 40 + 400 + 8000
    f.destroy()


def test_index_file_lookup_returns_exactly_one_offset(tmp_path):
    f = IndexFile(str(tmp_path / "20240101000000000"), HASH_SLOT_NUM, INDEX_NUM, 0, 0)
    for i in range(INDEX_NUM - 1):
        f.put_key(str(i), i, 1_700_000_000_000)
    found: list[int] = []
    f.select_phy_offset(found, "60", 10, 0, 2**63 - 1)
    assert found == [60]
    f.flush()
    f.close()
    again = IndexFile(f.file_name, HASH_SLOT_NUM, INDEX_NUM)  # reloaded from the header on disk
    assert again.index_header.index_count == INDEX_NUM and again.get_end_phy_offset() == 398
    found = []
    again.select_phy_offset(found, "60", 10, 0, 2**63 - 1)
    assert found == [60]
    again.close()


def test_index_file_layout_chains_and_time_ranges(tmp_path):
    f = IndexFile(str(tmp_path / "20240101000000000"), 1, 10, 0, 0)  # one slot: everything chains
    f.put_key("T#a", 100, 10_000)
    f.put_key("T#b", 200, 12_500)
    f.put_key("T#a", 300, 15_000)
    mm = f.mm
    assert struct.unpack_from(">qqqqii", mm, 0) == (10_000, 15_000, 100, 300, 1, 4)
    assert struct.unpack_from(">i", mm, INDEX_HEADER_SIZE)[0] == 3  # slot -> newest entry
    entry3 = struct.unpack_from(">iqii", mm, INDEX_HEADER_SIZE + 4 + 3 * 20)
    assert entry3 == (index_key_hash_method("T#a"), 300, 5, 2)  # time diff in seconds, prev index 2
    found: list[int] = []
    f.select_phy_offset(found, "T#a", 10, 0, 2**62)
    assert found == [300, 100]  # newest first
    found = []
    f.select_phy_offset(found, "T#a", 10, 11_000, 20_000)
    assert found == [300]
    assert f.is_time_matched(9_000, 10_500) and not f.is_time_matched(16_000, 20_000)
    f.destroy()


def test_key_hash_of_integer_min_value_is_zero():
    assert index_key_hash_method("polygenelubricants") == 0
    assert index_key_hash_method("hello") == 99162322


def test_index_file_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / "20240101000000000"
    path.write_bytes(bytes(100))
    with pytest.raises(StoreError, match="file is 100 bytes.*max_index_num=400"):
        IndexFile(str(path), HASH_SLOT_NUM, INDEX_NUM)


def _request(offset: int, keys: str = "", uniq: str | None = None, ts: int = 0, sys_flag: int = 0) -> DispatchRequest:
    return DispatchRequest(
        "T", 0, offset, 100, 0, ts, 0, keys, True, uniq, sys_flag, 0, {}
    )


def test_index_service_builds_rolls_and_queries(tmp_path):
    checkpoint = StoreCheckpoint(str(tmp_path / "checkpoint"))
    clock = FakeClock(1_000_000)
    service = IndexService(str(tmp_path / "index"), 16, 5, checkpoint, clock)  # 4 entries per file
    for i in range(10):
        service.build_index(_request(i * 100, keys=f"k{i} shared", uniq=f"U{i}", ts=1_000_000 + i * 1000))
    service.build_index(_request(800, keys="k8 shared", uniq="U8", ts=1_008_000))  # below the end: skipped
    service.build_index(_request(900, keys="k9 shared", uniq="U9", ts=1_009_000))  # the end: indexed again
    service.build_index(_request(1000, keys="gone", ts=1_010_000, sys_flag=MessageSysFlag.TRANSACTION_ROLLBACK_TYPE))
    assert len(service.index_file_list) == 9  # 33 entries, 4 per file
    assert len({f.file_name for f in service.index_file_list}) == 9  # names bumped by 1 ms when they collide
    assert checkpoint.index_msg_timestamp > 0  # a full file was flushed and recorded
    assert service.query_offset("T", "k3", 10, 0, 2**62).phy_offsets == [300]
    assert service.query_offset("T", "U8", 10, 0, 2**62).phy_offsets == [800]
    assert service.query_offset("T", "U9", 10, 0, 2**62).phy_offsets == [900, 900]  # Java skips only < end
    assert sorted(service.query_offset("T", "shared", 64, 0, 2**62).phy_offsets) == [i * 100 for i in range(10)] + [900]
    assert sorted(service.query_offset("T", "shared", 64, 1_004_000, 1_006_000).phy_offsets) == [400, 500, 600]
    assert service.query_offset("T", "shared", 3, 0, 2**62).phy_offsets == [900, 900, 800]
    assert service.query_offset("T", "gone", 10, 0, 2**62).phy_offsets == []
    assert service.query_offset("U", "k3", 10, 0, 2**62).phy_offsets == []
    service.shutdown()
    checkpoint.shutdown()


def test_index_service_load_after_a_crash_drops_files_newer_than_the_checkpoint(tmp_path):
    checkpoint = StoreCheckpoint(str(tmp_path / "checkpoint"))
    service = IndexService(str(tmp_path / "index"), 16, 3, checkpoint, FakeClock(1_000_000))
    for i in range(5):
        service.build_index(_request(i * 100, keys=f"k{i}", ts=1_000_000 + i * 1000))
    names = [os.path.basename(f.file_name) for f in service.index_file_list]
    assert checkpoint.index_msg_timestamp == 1_003_000  # end of the second full file
    service.shutdown()
    clean = IndexService(str(tmp_path / "index"), 16, 3, checkpoint, FakeClock())
    assert clean.load(last_exit_ok=True) == [] and len(clean.index_file_list) == 3
    clean.shutdown()
    crashed = IndexService(str(tmp_path / "index"), 16, 3, checkpoint, FakeClock())
    assert crashed.load(last_exit_ok=False) == names[2:]
    crashed.shutdown()
    checkpoint.shutdown()


def test_query_message_through_the_store(open_store, clock):
    store = open_store()
    for i in range(20):
        clock.advance(1000)
        props = {PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: f"UNIQ{i:04d}"}
        store.put_message(Message("Q", f"m{i}".encode(), keys=[f"order-{i % 5}", "all"], properties=props))
    store.reput()
    got = store.query_message("Q", "order-2")
    assert sorted(m.body for m in got.messages) == [b"m12", b"m17", b"m2", b"m7"]
    assert [m.body for m in store.query_message("Q", "UNIQ0013").messages] == [b"m13"]
    begin = 1_700_000_000_000 + 5_000
    timed = store.query_message("Q", "all", max_num=64, begin=begin, end=begin + 3_000)
    assert sorted(m.body for m in timed.messages) == [b"m4", b"m5", b"m6", b"m7"]
    assert store.query_message("Q", "nothing").messages == []
    assert store.query_message("Other", "all").messages == []


# --------------------------------------------------------------------------- checkpoint ----
def test_checkpoint_write_flush_read(tmp_path):
    path = str(tmp_path / "checkpoint")
    cp = StoreCheckpoint(path)
    cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp = 10_000, 8_000, 5_000
    cp.master_flushed_offset, cp.confirm_phy_offset = 777, 555
    cp.shutdown()
    assert os.path.getsize(path) == 4096
    again = StoreCheckpoint(path)
    assert (again.physic_msg_timestamp, again.logics_msg_timestamp, again.index_msg_timestamp) == (10_000, 8_000, 5_000)
    assert (again.master_flushed_offset, again.confirm_phy_offset) == (777, 555)
    assert again.get_min_timestamp() == 5_000 and again.get_min_timestamp_index() == 5_000
    again.logics_msg_timestamp = 1_000
    assert again.get_min_timestamp() == 0  # never negative
    again.shutdown()
    with open(path, "ab") as f:
        f.write(b"x")
    with pytest.raises(StoreError, match="checkpoint is 4097 bytes"):
        StoreCheckpoint(path)
