"""What the TCP runtime runs as Java runs it on threads (``DLedgerServer.enable_threads``): the store's
FlushDataService (fsyncs and the checkpoint leave the core's thread, coalesce on a slow disk, never undo a
cut, and a shutdown or crash waits for them) and the pusher once after the inputs that arrived together."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.store.flush_data_service import FlushDataService
from rocketlab.dledger.store.mmap_file_list import MmapFileList
from rocketlab.errors import StoreError

from .test_mmap_file_store import fill, reopen


class StuckDisk:
    """Replaces os.fsync: each call records its thread and blocks until :meth:`release` (or 10 s, so a
    test that got it wrong fails instead of hanging)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.threads: list[str] = []
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        if not self.gate.wait(10):
            raise AssertionError("the stuck fsync was never released")
        self.real(fd)

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def stuck(monkeypatch) -> StuckDisk:
    disk = StuckDisk()
    monkeypatch.setattr(os, "fsync", disk)
    return disk


def flushing_into_a_stuck_disk(tmp_path: Path, stuck: StuckDisk, entries: int):
    """A file store of ``entries`` entries with its flush thread, whose first tick's fsync now hangs. With
    an inline fsync the tick itself would block until the gate opens (10 s, then fail)."""
    store = fill(tmp_path, entries, flush_file_interval=10, fsync_policy="interval")
    service = store.start_flush_service()
    assert store.data_file_list.is_dirty
    store.on_tick(1_000)
    assert stuck.entered.wait(5), "the flush thread never called fsync"
    return store, service


def test_a_tick_returns_while_the_disk_is_stuck_and_the_flush_lands_later(tmp_path: Path, stuck: StuckDisk):
    store, service = flushing_into_a_stuck_disk(tmp_path, stuck, 10)
    assert stuck.threads and all(name.startswith("FlushDataService") for name in stuck.threads)
    assert store.data_file_list.is_dirty, "counted as flushed before the fsync returned"
    stuck.release()
    assert service.drain(10)
    assert not store.data_file_list.is_dirty and not store.index_file_list.is_dirty
    assert service.errors == []
    store.shutdown()


def test_flushes_coalesce_on_a_slow_disk(tmp_path: Path, stuck: StuckDisk):
    store, service = flushing_into_a_stuck_disk(tmp_path, stuck, 3)
    for k in range(1, 30):  # thirty rounds while the first fsync hangs: one more data job waits, not thirty
        store.append_as_leader(DLedgerEntry(body=b"more"))
        store.on_tick(1_000 + 10 * k)
    stuck.release()
    assert service.drain(10)
    # the first round's two files (data, index) + one coalesced round for each, + the checkpoint
    assert service.done <= 5, service.done
    assert not store.data_file_list.is_dirty
    store.shutdown()


def test_a_flush_asked_for_before_a_cut_does_not_count_the_rewritten_bytes(tmp_path: Path):
    files = MmapFileList(tmp_path / "data", 4096)
    files.append(b"x" * 1000)
    job = files.flush_job()  # the flush thread has not run it yet
    assert job is not None
    f = files.last()
    files.truncate_offset(400)  # a follower's log cut by the leader
    files.append(b"y" * 600)  # and rewritten up to the old end
    job()
    assert (f.wrote_position, f.flushed_position) == (1000, 0)  # its target belonged to the cut bytes
    again = files.flush_job()
    assert again is not None
    again()
    assert (f.wrote_position, f.flushed_position) == (1000, 1000)
    files.close()


def test_a_cut_waits_for_the_fsync_under_way(tmp_path: Path, stuck: StuckDisk):
    files = MmapFileList(tmp_path / "data", 4096)
    files.append(b"x" * 1000)
    job = files.flush_job()
    assert job is not None
    runner = threading.Thread(target=job, name="FlushDataService-test")
    runner.start()
    assert stuck.entered.wait(5)
    cutter = threading.Thread(target=files.truncate_offset, args=(400,))
    cutter.start()
    cutter.join(0.2)
    assert cutter.is_alive(), "the cut moved the positions under a running fsync"
    stuck.release()
    runner.join(10)
    cutter.join(10)
    f = files.last()
    assert (f.wrote_position, f.flushed_position) == (400, 400)
    files.close()


def test_shutdown_waits_for_the_flush_thread_and_recovery_finds_everything(tmp_path: Path):
    store = fill(tmp_path, 40, flush_file_interval=10, fsync_policy="interval")
    store.update_committed_index(0, 35)
    service = store.start_flush_service()
    for t in range(0, 5000, 10):
        store.on_tick(t)
    store.shutdown()
    assert service.idle and service.errors == []
    again = reopen(tmp_path)
    assert again.ledger_end_index == 39 and again.committed_index == 35
    again.close()


def test_a_crash_stops_the_thread_before_the_files_close(tmp_path: Path, stuck: StuckDisk):
    store, service = flushing_into_a_stuck_disk(tmp_path, stuck, 5)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive(), "the files were closed under a running fsync"
    stuck.release()
    closer.join(10)
    assert not closer.is_alive() and service.errors == []
    assert all(f.fd == -1 for f in store.data_file_list.mapped_files)
    with pytest.raises(StoreError, match="stopped"):
        service.submit("data", lambda: None)


def test_a_failed_job_is_logged_and_the_thread_carries_on(caplog):
    service = FlushDataService("FlushDataService-t")
    ran = []

    def broken() -> None:
        raise OSError(5, "Input/output error")

    service.submit("data", broken)
    service.submit("index", lambda: ran.append("index"))
    assert service.drain(10)
    assert ran == ["index"] and len(service.errors) == 1 and "Input/output error" in service.errors[0]
    assert "data job failed" in caplog.text
    service.stop()


def test_the_tcp_runtime_enables_threads_and_the_simulator_does_not(tmp_path: Path):
    from rocketlab.broker.node import build_broker
    from rocketlab.net.node import build_runtime
    from rocketlab.sim.cluster import Cluster

    c = Cluster.dledger(nodes=3, seed=1, data_dir=tmp_path / "sim")
    assert all(c.runtime.get(n).core.store.flush_service is None for n in c.node_ids)
    assert not any(c.runtime.get(n).core.pump_batched for n in c.node_ids)
    brokers = Cluster.dledger_brokers(nodes=3, seed=1, data_dir=tmp_path / "sim-brokers")
    assert all(brokers.runtime.get(n).core.server.store.flush_service is None for n in brokers.node_ids)
    assert not any(brokers.runtime.get(n).core.server.pump_batched for n in brokers.node_ids)

    props = {"nodeKind": "dledger", "selfId": "n0", "peers": "n0-127.0.0.1:1", "group": "g",
             "runDir": str(tmp_path / "run")}
    runtime = build_runtime(props)
    member = runtime.factory(runtime.ctx)
    assert member.store.flush_service is not None and member.pump_batched
    member.shutdown()
    broker_props = {"nodeKind": "broker", "enableDLegerCommitLog": "true", "selfId": "n0",
                    "peers": "n0-127.0.0.1:1", "storePathRootDir": str(tmp_path / "broker")}
    broker = build_broker(broker_props).factory(runtime.ctx)
    assert broker.server.store.flush_service is not None and broker.server.pump_batched
    broker.on_stop()


def test_the_core_factory_enables_threads_for_a_tcp_context_only(tmp_path: Path):
    from rocketlab.core import NodeContext
    from rocketlab.dledger.server import make_dledger_server

    peers = ("n0", "n1", "n2")
    for threads in (False, True):
        ctx = NodeContext("n0", peers, 1, tmp_path / str(threads), threads=threads)
        server = make_dledger_server(ctx)  # also what a controller builds its DLedger member with
        assert (server.store.flush_service is not None) is threads and server.pump_batched is threads
        server.shutdown()


def one_member_leader(threads: bool):
    """A one-member group (memory store) that has elected itself."""
    import random

    from rocketlab.dledger.config import DLedgerConfig
    from rocketlab.dledger.server import DLedgerServer

    server = DLedgerServer(DLedgerConfig(group="g", self_id="n0", peers="n0-127.0.0.1:1", store_type="MEMORY"),
                           None, random.Random(1))
    if threads:
        server.enable_threads()
    server.on_start(0)
    now = 0
    while not server.member_state.is_leader():
        deadline = server.next_deadline_ms()
        assert deadline is not None and now < 60_000
        now = max(now + 1, deadline)
        server.on_tick(now)
    return server, now


@pytest.mark.parametrize("threads", [False, True])
def test_with_threads_the_pusher_runs_at_the_next_tick_not_after_each_input(threads: bool):
    server, now = one_member_leader(threads)
    now += 1
    futures = [server.append(body, now)[0] for body in (b"a", b"b", b"c")]
    if not threads:  # the simulator's order: the ack checker ran after each append
        assert all(f.done for f in futures)
        return
    assert not any(f.done for f in futures), "the pusher ran inside an input"
    assert server.next_deadline_ms() == now  # due at once: the runtime ticks right after the inputs read
    server.on_tick(now)
    assert all(f.done and f.code.name == "SUCCESS" for f in futures)
    assert [f.index for f in futures] == [0, 1, 2]
    assert server.next_deadline_ms() != now
