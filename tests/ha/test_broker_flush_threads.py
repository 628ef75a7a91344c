"""In the TCP runtime (``NodeContext.threads``) a classic broker's store flushes on threads of its own, as
Java's FlushRealTimeService / GroupCommitService and FlushConsumeQueueService do: a stuck disk holds up no
ASYNC_FLUSH put and no tick, the flush lands once the disk answers, shutdown waits for it, a crash starts
none; SYNC_FLUSH puts wait for one group commit together (or time out). The simulator's brokers keep
flushing on their ticks, with no thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from rocketlab.broker.broker import BrokerConfig, BrokerCore
from rocketlab.core import NodeContext
from rocketlab.errors import StoreError
from rocketlab.store import Message, MessageStore, mapped_file
from tests.dledger.test_flush_data_service import StuckDisk


@pytest.fixture
def stuck(monkeypatch) -> StuckDisk:
    disk = StuckDisk()
    disk.real = mapped_file._fdatasync
    monkeypatch.setattr(mapped_file, "_fdatasync", disk)
    return disk


def broker(tmp_path: Path, threads: bool, flush: str = "ASYNC_FLUSH") -> BrokerCore:
    ctx = NodeContext("n0", ("n0",), 1, tmp_path, threads=threads)
    config = BrokerConfig(broker_role="ASYNC_MASTER", flush_disk_type=flush,
                          store_options={"flush_commit_log_thorough_interval": 0})
    core = BrokerCore(ctx, config, wall_clock=True)
    core.on_start(0)
    return core


def put(core: BrokerCore, count: int, now_ms: int) -> None:
    for i in range(count):
        handle, _ = core.put_message(Message("T", b"x" * 1024, 0, keys=f"k{i}"), now_ms)
        assert handle.status == "PUT_OK"


FLUSH_SERVICES = {"FlushRealTimeService", "GroupCommitService", "FlushConsumeQueueService"}


def flush_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name in FLUSH_SERVICES)


def test_puts_and_ticks_go_on_while_the_flush_thread_waits_for_a_stuck_disk(tmp_path: Path, stuck: StuckDisk):
    core = broker(tmp_path, threads=True)
    assert core.flush_on_threads and flush_threads() == ["FlushConsumeQueueService", "FlushRealTimeService"]
    put(core, 40, 1)
    assert stuck.entered.wait(5), "no flush thread called fdatasync"
    assert set(stuck.threads) <= FLUSH_SERVICES, stuck.threads
    # the disk hangs: with the flush on the core's thread these would wait for it (10 s, then fail)
    start = time.monotonic()
    for k in range(20):
        put(core, 5, 2 + k)
        core.on_tick(600 * (k + 1))
    assert time.monotonic() - start < 5
    assert core.next_deadline_ms() is None  # no flush timer on the core: nothing else is due on a lone master
    cl = core.store.commit_log
    assert cl.flushed_where < cl.get_max_offset()
    stuck.release()
    deadline = time.monotonic() + 10
    while cl.flushed_where < cl.get_max_offset() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cl.flushed_where == cl.get_max_offset(), "the flush thread never caught up"
    core.on_stop()
    assert flush_threads() == []


def test_shutdown_flushes_everything_and_a_reopened_store_finds_it(tmp_path: Path):
    core = broker(tmp_path, threads=True)
    put(core, 30, 1)
    end = core.store.get_max_phy_offset()
    cl = core.store.commit_log
    core.on_stop()
    assert flush_threads() == [] and cl.flushed_where == end
    with MessageStore.open(tmp_path / "store", threads=False, mapped_file_size_commit_log=1024 * 1024) as store:
        assert store.get_max_phy_offset() == end


def test_a_crash_stops_the_threads_without_their_last_flush(tmp_path: Path):
    core = broker(tmp_path, threads=True)
    put(core, 30, 1)
    core.on_crash(lose_unflushed=True)
    assert flush_threads() == []


def test_halt_runs_no_shutdown_step_and_shutdown_does():
    from rocketlab.store.service_thread import ServiceThread

    calls: list[str] = []
    halted = ServiceThread("t1", lambda: None, 10.0, lambda: calls.append("halted"))
    stopped = ServiceThread("t2", lambda: None, 10.0, lambda: calls.append("stopped"))
    for service in (halted, stopped):
        service.start()
    halted.halt()
    stopped.shutdown()
    assert calls == ["stopped"]


def test_the_simulator_flushes_on_the_core(tmp_path: Path):
    sim = broker(tmp_path / "sim", threads=False)
    assert not sim.flush_on_threads and flush_threads() == []
    assert sim.next_deadline_ms() == sim.next_flush_ms
    sim.on_stop()


def test_sync_flush_puts_wait_for_one_group_commit_on_the_flush_thread(tmp_path: Path, stuck: StuckDisk):
    core = broker(tmp_path, threads=True, flush="SYNC_FLUSH")
    assert flush_threads() == ["FlushConsumeQueueService", "GroupCommitService"]
    first, _ = core.put_message(Message("T", b"a" * 100, 0), 1)
    assert stuck.entered.wait(5), "the group commit thread never called fdatasync"
    handles = [core.put_message(Message("T", b"b" * 100, 0), 2)[0] for _ in range(20)]  # while it hangs
    assert not first.done and not any(h.done for h in handles)
    assert core.next_deadline_ms() == core.now_ms + 1  # the core looks for completed flushes
    gcs = core.store.commit_log.group_commit_service
    stuck.release()
    deadline = time.monotonic() + 10
    while core.flushing and time.monotonic() < deadline:
        time.sleep(0.005)
        core.on_tick(3)
    assert first.status == "PUT_OK" and all(h.status == "PUT_OK" for h in handles)
    assert [h.queue_offset for h in handles] == list(range(1, 21))
    assert gcs.flush_count <= 3, gcs.flush_count  # the first put's flush, then one for the twenty
    core.on_stop()


def test_a_sync_flush_put_past_its_deadline_is_flush_disk_timeout(tmp_path: Path, stuck: StuckDisk):
    ctx = NodeContext("n0", ("n0",), 1, tmp_path, threads=True)
    core = BrokerCore(ctx, BrokerConfig(broker_role="ASYNC_MASTER", flush_disk_type="SYNC_FLUSH",
                                        store_options={"sync_flush_timeout": 100}), wall_clock=True)
    core.on_start(0)
    handle, _ = core.put_message(Message("T", b"x" * 100, 0), 1)
    assert stuck.entered.wait(5)
    time.sleep(0.2)
    core.on_tick(2)  # FlushDiskWatcher: the message stays stored, the answer is a timeout
    assert handle.status == "FLUSH_DISK_TIMEOUT" and core.store.get_max_phy_offset() > 0
    stuck.release()
    core.on_stop()


def test_flush_services_need_an_open_store(tmp_path: Path):
    store = MessageStore.open(tmp_path / "s", threads=False)
    store.shutdown()
    with pytest.raises(StoreError, match="open store"):
        store.start_flush_services()


# ---------------------------------------------------------------------- controller mode's broker
def auto_switch_broker(tmp_path: Path, threads: bool):
    from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
    from rocketlab.store.config import BrokerRole

    ctx = NodeContext("a1", ("a1",), 1, tmp_path, threads=threads)
    core = AutoSwitchBrokerCore(ctx, AutoSwitchBrokerConfig(
        mapped_file_size_commit_log=1024 * 1024,
        store_options={"flush_interval_commit_log": 10, "flush_commit_log_thorough_interval": 0}))
    core.on_start(0)
    core.store.update_config(broker_role=BrokerRole.ASYNC_MASTER)  # take puts without a controller
    return core


def test_controller_mode_broker_flushes_on_threads_and_a_cut_waits_for_the_flush(tmp_path: Path, stuck: StuckDisk):
    core = auto_switch_broker(tmp_path, threads=True)
    assert core.flush_on_threads and flush_threads() == ["FlushConsumeQueueService", "FlushRealTimeService"]
    offsets = [core.store.put_message(Message("T", b"x" * 1024, 0)).append_message_result.wrote_offset
               for _ in range(40)]
    assert stuck.entered.wait(5), "the flush thread never called fdatasync"
    core.on_tick(1_000)  # returns: the core's tick does not flush on the TCP runtime
    cut = threading.Thread(target=core.store.truncate_files, args=(offsets[10],))
    cut.start()
    cut.join(0.3)
    assert cut.is_alive(), "the cut went ahead while a flush of the same files was under way"
    stuck.release()
    cut.join(10)
    assert not cut.is_alive() and core.store.get_max_phy_offset() == offsets[10]
    cl = core.store.commit_log
    put = [core.store.put_message(Message("T", b"y" * 1024, 0)) for _ in range(20)]
    assert put[0].append_message_result.wrote_offset == offsets[10]
    deadline = time.monotonic() + 10
    while cl.flushed_where != cl.get_max_offset() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cl.flushed_where == cl.get_max_offset()
    core.on_stop()
    assert flush_threads() == []


def test_controller_mode_broker_in_the_simulator_flushes_on_its_ticks(tmp_path: Path):
    core = auto_switch_broker(tmp_path, threads=False)
    assert not core.flush_on_threads and flush_threads() == []
    assert core.next_deadline_ms() <= core.next_flush_ms
    core.on_stop()
