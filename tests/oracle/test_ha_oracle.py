"""Classic HA across languages over real TCP on 127.0.0.1: a real RocketMQ 4.9.5 store replicates from a
rocketlab master (``brokerRole=SLAVE``, ``haMasterAddress``) and a rocketlab slave from a real 4.9.5 master
(SYNC_MASTER and ASYNC_MASTER), each side in its own process, on RocketMQ's HA wire: the slave reports its
offset (8 bytes), the master sends what it has (a 12-byte header and the data). This is the wire of the seed
article ``master-slave-replication.zh.txt``, proven against the real one.

* every put is PUT_OK once the slave has reported, and a SYNC put is acknowledged only after the other side's
  report: with the slave paused (SIGSTOP) it waits ``slaveTimeout`` and answers FLUSH_SLAVE_TIMEOUT, an ASYNC
  put answers at once; right after a SYNC PUT_OK the slave already holds the record;
* at the end the two commit logs are byte-identical, file for file;
* a SYNC master killed mid-stream (SIGKILL): the slave, shut down and recovered, holds every message the master
  acknowledged, and its log is a byte-for-byte prefix of the master's.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rocketlab.oracle.ha import CrossPair, commit_log_bytes
from rocketlab.oracle.store import JavaStore, open_ours, read_back
from rocketlab.store.message import Message

pytestmark = pytest.mark.realnet


def messages(n: int, start: int = 0, size: int = 500) -> list[Message]:
    return [Message("TopicTest", b"%06d-" % i + b"x" * size, i % 4, tags="T", keys=[f"k{i}"],
                    born_timestamp=1_700_000_000_000 + i) for i in range(start, start + n)]


def files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / "commitlog").iterdir())}


@pytest.mark.parametrize("role", ["SYNC_MASTER", "ASYNC_MASTER"])
@pytest.mark.parametrize("java", ["slave", "master"])
def test_classic_ha_across_languages(oracle4, tmp_path, java, role):
    with CrossPair(oracle4, tmp_path, java=java, role=role) as pair:
        pair.wait_connected()
        for m in messages(10):  # acknowledged after the slave's report: the slave holds the record already
            (result,) = pair.put_all([m])
            assert result["status"] == "PUT_OK"
            if role == "SYNC_MASTER":
                assert pair.slave_max_offset() > result["wroteOffset"]
        results = pair.put_all(messages(300, 10))  # about 160 KB: the 64 KiB files roll on both sides
        assert {r["status"] for r in results} == {"PUT_OK"}
        pair.pause("slave")
        (held,) = pair.put_all(messages(1, 310))
        assert held["status"] == ("FLUSH_SLAVE_TIMEOUT" if role == "SYNC_MASTER" else "PUT_OK")
        pair.resume("slave")
        assert [r["status"] for r in pair.put_all(messages(5, 311))] == ["PUT_OK"] * 5
        end = pair.wait_caught_up()
        pair.stop("slave")
        pair.stop("master")
    master, slave = files(pair.master_dir), files(pair.slave_dir)
    assert end > 2 * 64 * 1024 and len(master) >= 3
    assert slave.keys() == master.keys() and all(slave[name] == master[name] for name in master)


@pytest.mark.parametrize("java", ["slave", "master"])
def test_a_sync_master_killed_mid_stream(oracle4, tmp_path, java):
    with CrossPair(oracle4, tmp_path, java=java, role="SYNC_MASTER") as pair:
        pair.wait_connected()
        acked: list[dict] = []
        producer = threading.Thread(target=pair.stream, args=(messages(2000), acked), daemon=True)
        producer.start()
        while len(acked) < 150 and producer.is_alive():
            producer.join(0.02)
        pair.kill("master")
        producer.join(60)
        master_end = pair.master_max_offset()
        pair.stop("slave")
    ok = [r["wroteOffset"] for r in acked if r["status"] == "PUT_OK"]
    assert len(ok) >= 150
    if java == "slave":  # the slave restarts and recovers: Java's store, then ours read it back
        with JavaStore.start(oracle4, tmp_path, pair.slave_dir, mapped_file_size_commit_log=pair.file_size,
                             broker_role="SLAVE") as store:
            back = store.read_back()
    else:
        store = open_ours(pair.slave_dir, mapped_file_size_commit_log=pair.file_size, broker_role="SLAVE")
        back = read_back(store)
        store.shutdown()
    assert set(ok) <= {r["phy_offset"] for r in back["records"]}  # no acknowledged message lost
    slave_end = back["max_phy_offset"]
    assert ok[-1] < slave_end <= master_end
    assert commit_log_bytes(pair.slave_dir, slave_end) == commit_log_bytes(pair.master_dir, slave_end)
