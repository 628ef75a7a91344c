"""A master's write loop pauses with MAX_UNACKED_TRANSFER_BYTES sent and not acknowledged, and the ack that
opens the window starts it again (4.x HAService and 5.x AutoSwitchHAService): without the bound the TCP
runtime queued a slave's whole catch-up in the master's memory."""

from __future__ import annotations

from pathlib import Path

from rocketlab.core import OutputBuilder, StreamWrite
from rocketlab.ha.config import HAConfig
from rocketlab.ha.ha_connection import MAX_UNACKED_TRANSFER_BYTES
from rocketlab.ha.ha_service import HAService
from rocketlab.ha.wire import HEADER, encode_report
from rocketlab.sim import Cluster
from rocketlab.store import Message, MessageStore

FILE = 64 * 1024 * 1024


def sent(out: OutputBuilder) -> int:
    """Log bytes in the StreamWrites of ``out`` (headers and heartbeats not counted)."""
    return sum(len(a.data) - HEADER.size for a in out.build().actions if isinstance(a, StreamWrite))


def test_the_master_pauses_at_the_bound_and_the_ack_resumes_it(tmp_path: Path):
    with MessageStore.open(tmp_path / "master", mapped_file_size_commit_log=FILE) as store:
        batch = [Message(topic="T", body=b"x" * 1024, queue_id=0) for _ in range(64)]
        while store.get_max_phy_offset() < 3 * MAX_UNACKED_TRANSFER_BYTES:
            store.put_messages(batch)
        config = HAConfig()
        service = HAService(config, store.commit_log, FILE)
        service.accept("s1", "slave", 0)
        service.on_stream_data("s1", encode_report(0), 0, OutputBuilder())  # an empty slave asks from 0
        conn = service.connections["s1"]
        total, now = 0, 0
        for _ in range(1000):  # the write loop's turns, each due at once while it has work
            out = OutputBuilder()
            service.on_tick(now, out)
            total += sent(out)
            if conn.next_poll_ms > now:
                break
        assert conn.window_blocked
        batch = config.ha_transfer_batch_size
        assert MAX_UNACKED_TRANSFER_BYTES - batch <= total < MAX_UNACKED_TRANSFER_BYTES + batch
        assert conn.next_poll_ms == now + config.ha_write_poll_interval  # waits: no busy loop on a full window
        out = OutputBuilder()
        service.on_tick(conn.next_poll_ms, out)  # the poll comes round: still nothing while nothing is acked
        assert sent(out) == 0

        now = conn.next_poll_ms + 1
        service.on_stream_data("s1", encode_report(1024 * 1024), now, OutputBuilder())  # the slave acks 1 MiB
        assert conn.next_poll_ms == now and not conn.window_blocked
        more = 0
        while conn.next_poll_ms <= now:
            out = OutputBuilder()
            service.on_tick(now, out)
            more += sent(out)
        assert 1024 * 1024 - config.ha_transfer_batch_size <= more <= 1024 * 1024 + config.ha_transfer_batch_size
        assert conn.next_transfer_from_where - 1024 * 1024 < MAX_UNACKED_TRANSFER_BYTES + batch


def test_a_slave_catches_up_a_log_many_windows_long(tmp_path: Path):
    """End to end in the simulator: 3 windows of log replicate to an empty slave, byte for byte, over a
    link slow enough (5-10 ms each way, 1 MiB per write-loop turn) for the bound to be reached."""
    c = Cluster.master_slave(role="ASYNC_MASTER", seed=1, data_dir=tmp_path, latency="uniform:5:10",
                             broker={"mapped_file_size_commit_log": FILE})
    master = c.node("n0").store
    batch = [Message(topic="T", body=b"y" * 1024, queue_id=0) for _ in range(64)]
    while master.get_max_phy_offset() < 3 * MAX_UNACKED_TRANSFER_BYTES:
        master.put_messages(batch)
    end = master.get_max_phy_offset()
    slave = c.node("n1").store
    paused = []

    def caught_up(c: Cluster) -> bool:
        paused.extend(conn for conn in c.node("n0").ha_service.connections.values() if conn.window_blocked)
        return slave.get_max_phy_offset() >= end

    assert c.run_until(caught_up, timeout_ms=120_000), slave.get_max_phy_offset()
    assert paused, "the write loop never reached the bound"
    assert slave.commit_log.get_data(0, 4096) == master.commit_log.get_data(0, 4096)
    assert slave.commit_log.get_data(end - 4096, 4096) == master.commit_log.get_data(end - 4096, 4096)


def test_controller_mode_slaves_catch_up_a_log_many_windows_long(tmp_path: Path):
    """The same bound in 5.x's AutoSwitchHAService: slaves of a controller-mode master copy 3 windows."""
    from rocketlab.scenarios.controller_mode import running

    c = Cluster.controller_mode(seed=1, data_dir=tmp_path, broker={"mappedFileSizeCommitLog": FILE})
    assert c.run_until(running, timeout_ms=60_000)
    master = c.leader()
    store = c.node(master).store
    batch = [Message(topic="T", body=b"z" * 1024, queue_id=0) for _ in range(64)]
    while store.get_max_phy_offset() < 3 * MAX_UNACKED_TRANSFER_BYTES:
        store.put_messages(batch)
    end = store.get_max_phy_offset()
    slaves = [n for n in ("n0", "n1", "n2") if n != master]
    paused = []

    def caught_up(c: Cluster) -> bool:
        paused.extend(conn for conn in c.node(master).ha_service.connections.values() if conn.window_blocked)
        return all(c.node(n).max_offset >= end for n in slaves)

    assert c.run_until(caught_up, timeout_ms=120_000), [c.node(n).max_offset for n in slaves]
    assert paused, "the write loops never reached the bound"
    for n in slaves:
        assert c.node(n).store.commit_log.get_data(end - 4096, 4096) == store.commit_log.get_data(end - 4096, 4096)
