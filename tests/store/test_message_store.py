"""DefaultMessageStore: the Python API contract, put/get statuses, lookups, limits (DefaultMessageStoreTest)."""

from __future__ import annotations

import os
import time

import pytest

from rocketlab.errors import ConfigError, StoreError
from rocketlab.store import (
    GetMessageStatus,
    Message,
    MessageStore,
    MessageStoreConfig,
    PutMessageStatus,
    TagsMessageFilter,
)
from rocketlab.store.message_batch import MessageExtBatch
from tests.store.helpers import GOLDEN, golden_message


def test_design_api_example(tmp_path):
    with MessageStore.open(tmp_path / "s", mapped_file_size_commit_log=64 * 1024) as store:
        r = store.put_message(Message(topic="T", body=b"hi", queue_id=0, tags="A", keys="k1", properties={"p": "v"}))
        assert r.status is PutMessageStatus.PUT_OK
        assert (r.wrote_offset, r.queue_offset) == (0, 0) and r.wrote_bytes > 0 and len(r.msg_id) == 32
        deadline = time.monotonic() + 5
        got = store.get_message("T", 0, offset=0, max_msg_nums=32)
        while got.status is not GetMessageStatus.FOUND and time.monotonic() < deadline:  # the reput thread
            time.sleep(0.005)
            got = store.get_message("T", 0, offset=0, max_msg_nums=32)
        assert got.status is GetMessageStatus.FOUND
        assert (got.next_begin_offset, got.min_offset, got.max_offset) == (1, 0, 1)
        m = got.messages[0]
        assert (m.body, m.tags, m.keys, m.properties["p"], m.msg_id) == (b"hi", "A", "k1", "v", r.msg_id)
    assert not os.path.exists(tmp_path / "s" / "abort")  # clean shutdown


def test_get_message_statuses_and_next_begin_offset(open_store):
    store = open_store()
    assert store.get_message("T", 0, 0).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
    for i in range(10):
        store.put_message(Message("T", f"m{i}".encode(), tags="A" if i % 2 else "B"))
    assert store.get_max_offset_in_queue("T", 0) == 0  # not dispatched yet: put and dispatch are apart
    assert store.get_message("T", 0, 0).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
    store.reput()
    found = store.get_message("T", 0, 3, max_msg_nums=4)
    assert found.status is GetMessageStatus.FOUND
    assert [m.body for m in found.messages] == [b"m3", b"m4", b"m5", b"m6"] and found.next_begin_offset == 7
    assert found.message_queue_offsets == [3, 4, 5, 6]
    one = store.get_message("T", 0, 10)
    assert one.status is GetMessageStatus.OFFSET_OVERFLOW_ONE and one.next_begin_offset == 10
    badly = store.get_message("T", 0, 25)
    assert badly.status is GetMessageStatus.OFFSET_OVERFLOW_BADLY and badly.next_begin_offset == 0
    tagged = store.get_message("T", 0, 0, message_filter=TagsMessageFilter("A"))
    assert [m.body for m in tagged.messages] == [b"m1", b"m3", b"m5", b"m7", b"m9"]
    none = store.get_message("T", 0, 0, message_filter=TagsMessageFilter("C || D"))
    assert none.status is GetMessageStatus.NO_MATCHED_MESSAGE and none.next_begin_offset == 10
    assert (none.min_offset, none.max_offset) == (0, 10)


def test_get_message_respects_transfer_limits(open_store):
    store = open_store(mapped_file_size_commit_log=1 << 20, max_transfer_count_on_message_in_memory=5)
    for _i in range(12):
        store.put_message(Message("T", bytes(10)))
    store.reput()
    got = store.get_message("T", 0, 0, max_msg_nums=32)
    assert got.message_count == 5 and got.next_begin_offset == 5
    assert store.get_message("T", 0, 0, max_msg_nums=3).message_count == 3


def test_offset_too_small_after_old_files_expire(open_store, clock):
    store = open_store(mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=20 * 4, file_reserved_time=0)
    for _i in range(30):
        store.put_message(golden_message())
    store.reput()
    store.execute_delete_files_manually()
    deleted = store.delete_expired_files(now_ms=int(time.time() * 1000) + 1000)
    assert deleted == 4  # 6 records per file, 5 files: all but the last
    assert store.get_min_phy_offset() == 4 * 1024
    assert store.get_min_offset_in_queue("FooBar", 0) == 24
    low = store.get_message("FooBar", 0, 0)
    assert low.status is GetMessageStatus.OFFSET_TOO_SMALL and low.next_begin_offset == 24
    assert store.get_message("FooBar", 0, 24).messages[0].commit_log_offset == 4 * 1024
    assert len(store.get_consume_queue("FooBar", 0).mapped_file_queue.mapped_files) == 2


def test_look_message_by_offset(open_store):
    store = open_store()
    results = [store.put_message(golden_message(keys=str(i))) for i in range(5)]
    first = store.look_message_by_offset(results[0].wrote_offset)
    last = store.look_message_by_offset(results[-1].wrote_offset)
    assert first.keys == "0" and last.keys == "4" and last.commit_log_offset == results[-1].wrote_offset
    assert store.look_message_by_offset(results[-1].wrote_offset + results[-1].wrote_bytes) is None
    assert store.look_message_by_offset(10**9) is None
    assert store.look_message_by_offset(5) is None  # not the start of a record


def test_offsets_per_queue_and_time_lookup(open_store, clock):
    store = open_store()
    times = []
    for i in range(12):
        clock.advance(100 if i != 6 else 1000)
        times.append(clock())
        store.put_message(Message("T", f"m{i}".encode(), queue_id=1))
    store.put_message(Message("T", b"other", queue_id=2))
    store.reput()
    assert (store.get_min_offset_in_queue("T", 1), store.get_max_offset_in_queue("T", 1)) == (0, 12)
    assert store.get_max_offset_in_queue("T", 2) == 1 and store.get_max_offset_in_queue("T", 9) == 0
    for i, t in enumerate(times):
        assert store.get_offset_in_queue_by_time("T", 1, t) == i
        assert store.get_message_store_timestamp("T", 1, i) == t
    assert store.get_offset_in_queue_by_time("T", 1, times[0] - 10_000) == 0
    assert store.get_offset_in_queue_by_time("T", 1, times[-1] + 10_000) == 11
    assert store.get_offset_in_queue_by_time("T", 1, times[6] - 100) == 6  # closer to 6 than to 5
    assert store.get_offset_in_queue_by_time("T", 1, times[5] + 10) == 5
    assert store.get_offset_in_queue_by_time("missing", 0, times[0]) == 0
    unit = store.get_commit_log_offset_in_queue("T", 1, 3)
    assert store.look_message_by_offset(unit).body == b"m3"
    assert store.get_earliest_message_time("T", 1) == times[0]


# ----------------------------------------------------------------------------- bad input ----
def test_size_rejections_write_nothing(open_store):
    store = open_store(mapped_file_size_commit_log=8 << 20, max_message_size=4 * 1024 * 1024)
    before = store.get_max_phy_offset()
    big = store.put_message(Message("T", bytes(4 * 1024 * 1024 + 1)))
    assert big.status is PutMessageStatus.MESSAGE_ILLEGAL and "max_message_size" in big.detail
    assert store.put_message(Message("T", bytes(4 * 1024 * 1024))).status is PutMessageStatus.PUT_OK
    before = store.get_max_phy_offset()
    topic = store.put_message(Message("t" * 128, b"x"))
    assert topic.status is PutMessageStatus.MESSAGE_ILLEGAL and "127" in topic.detail
    props = store.put_message(Message("T", b"x", properties={"big": "v" * 32767}))
    assert props.status is PutMessageStatus.MESSAGE_ILLEGAL and "chars" in props.detail  # 4.x checkMessage
    props = store.put_message(Message("T", b"x", properties={"big": "é" * 16383}))  # 16387 chars, 32770 bytes
    assert props.status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
    assert store.get_max_phy_offset() == before


def test_long_topic_uses_v2_records_when_enabled(open_store):
    store = open_store(auto_message_version_on_topic_len=True)
    topic = "t" * 200
    r = store.put_message(Message(topic, b"x"))
    assert r.status is PutMessageStatus.PUT_OK
    store.reput()
    m = store.get_message(topic, 0, 0).messages[0]
    assert m.topic == topic and m.version == 2
    too_long = store.put_message(Message("t" * 256, b"x"))  # no directory name can hold its queue
    assert too_long.status is PutMessageStatus.MESSAGE_ILLEGAL and "255" in too_long.detail


@pytest.mark.parametrize("topic", ["", "a/b", "..", "topic with space", "t\x00"])
def test_topics_the_broker_would_refuse_are_illegal(open_store, topic):
    store = open_store()
    r = store.put_message(Message(topic, b"x"))
    assert r.status is PutMessageStatus.MESSAGE_ILLEGAL and "topic" in r.detail
    assert store.get_max_phy_offset() == 0


def test_config_validation_names_the_field(tmp_path):
    with pytest.raises(ConfigError, match="unknown MessageStoreConfig option"):
        MessageStore.open(tmp_path / "a", mapped_file_size_commitlog=1024)
    with pytest.raises(ConfigError, match="mapped_file_size_commit_log"):
        MessageStore.open(tmp_path / "a", mapped_file_size_commit_log=64)
    with pytest.raises(ConfigError, match="flush_disk_type"):
        MessageStore.open(tmp_path / "a", flush_disk_type="SOMETIMES")
    with pytest.raises(ConfigError, match="max_message_size"):
        MessageStoreConfig(max_message_size=0).validate()
    with pytest.raises(ConfigError, match="broker_ip1"):
        MessageStoreConfig(broker_ip1="localhost").validate()
    assert MessageStoreConfig(flush_disk_type="sync_flush").validate().is_sync_flush()


def test_a_store_cannot_be_opened_twice(open_store, tmp_path):
    open_store()
    with pytest.raises(StoreError, match="already open"):
        MessageStore.open(tmp_path / "store", threads=False)


def test_unusable_root_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="not a directory|cannot create"):
        MessageStore.open(blocker, threads=False)


def test_unreadable_root_directory(tmp_path, monkeypatch):
    (tmp_path / "locked").mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root ignores permission bits; fake them
    with pytest.raises(StoreError, match="not readable and writable"):
        MessageStore.open(tmp_path / "locked", threads=False)


def test_a_slave_refuses_puts_but_accepts_replicated_bytes(open_store, tmp_path):
    master = open_store(root=tmp_path / "m")
    for i in range(7):
        master.put_message(golden_message(keys=str(i)))
    slave = open_store(root=tmp_path / "s", broker_role="SLAVE")
    r = slave.put_message(golden_message())
    assert r.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and not r.is_ok()
    data = master.get_commit_log_data(0)
    half = len(data) // 2 + 7  # cut a record in half: the slave's reput waits for the rest
    assert slave.append_to_commit_log(0, data[:half])
    slave.reput()
    dispatched = slave.get_max_offset_in_queue("FooBar", 0)
    assert 0 < dispatched < 7 and slave.reput_message_service.stalled_reason is not None
    assert slave.append_to_commit_log(half, data[half:])
    slave.reput()
    assert slave.get_max_offset_in_queue("FooBar", 0) == 7
    assert [m.keys for m in slave.get_message("FooBar", 0, 0).messages] == [str(i) for i in range(7)]


def test_batch_put_through_the_store(open_store):
    store = open_store()
    batch = MessageExtBatch.from_messages([Message("B", f"b{i}".encode(), tags="X", keys=f"k{i}") for i in range(10)])
    r = store.put_messages(batch)
    assert r.status is PutMessageStatus.PUT_OK and r.msg_num == 10 and r.queue_offset == 0
    assert store.put_message(Message("B", b"after")).queue_offset == 10
    store.reput()
    assert [m.body for m in store.get_message("B", 0, 0).messages] == [f"b{i}".encode() for i in range(10)] + [b"after"]
    assert [m.body for m in store.query_message("B", "k4").messages] == [b"b4"]


def test_sync_flush_visibility_bound_reput_message_service(open_store):
    """ReputMessageServiceTest: with the 5.3 bound, SYNC_FLUSH messages reach the CQ only once flushed."""
    store = open_store(
        flush_disk_type="SYNC_FLUSH",
        read_uncommitted=False,
        broker_ip1="127.0.0.1",
        listen_port=8123,
        mapped_file_size_commit_log=64 * 1024,
    )
    futures = [store.async_put_message(golden_message()) for _ in range(10)]  # the flusher is "mocked": not run
    assert store.get_max_phy_offset() == 10 * GOLDEN
    store.reput()
    assert store.get_max_offset_in_queue("FooBar", 0) == 0
    assert store.get_message("FooBar", 0, 0).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
    store.flush()
    assert all(f.done() and f.result().status is PutMessageStatus.PUT_OK for f in futures)
    store.reput()
    assert store.get_message("FooBar", 0, 0).message_count == 10


def test_async_flush_dispatches_up_to_the_max_offset(open_store):
    store = open_store(mapped_file_size_commit_log=64 * 1024)
    for _ in range(10):
        store.put_message(golden_message())
    assert store.commit_log.flushed_where == 0
    store.reput()
    assert store.get_max_offset_in_queue("FooBar", 0) == 10  # visible before durable (4.x)


def test_put_events_reach_the_listener(tmp_path, clock):
    events = []
    with MessageStore.open(tmp_path / "s", threads=False, clock=clock, event_listener=lambda k, f: events.append((k, f))) as s:
        s.put_message(Message("T", b"x", queue_id=2))
        s.put_message(Message("T", b"x" * (5 << 20)))
    kinds = [k for k, _ in events]
    assert kinds == ["recover", "put", "put"]
    put = events[1][1]
    assert put == {
        "topic": "T", "queue_id": 2, "queue_offset": 0, "phy_offset": 0, "size": put["size"], "status": "PUT_OK",
        "latency_ms": 0,
    }  # fmt: skip
    assert events[2][1]["status"] == "MESSAGE_ILLEGAL"


def test_threaded_store_flushes_and_dispatches_in_the_background(tmp_path):
    with MessageStore.open(
        tmp_path / "s", threads=True, flush_disk_type="SYNC_FLUSH", mapped_file_size_commit_log=64 * 1024
    ) as store:
        results = [store.put_message(golden_message(keys=str(i))) for i in range(20)]
        assert all(r.status is PutMessageStatus.PUT_OK for r in results)
        assert store.commit_log.flushed_where == store.get_max_phy_offset() == results[-1].wrote_offset + results[-1].wrote_bytes
        deadline = time.monotonic() + 5
        while store.dispatch_behind_bytes() > 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert store.get_message("FooBar", 0, 0).message_count == 20
    with MessageStore.open(tmp_path / "s", threads=False, mapped_file_size_commit_log=64 * 1024) as store:
        assert store.recovery_report.normal and store.get_max_offset_in_queue("FooBar", 0) == 20
