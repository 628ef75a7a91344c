"""A RocketMQ broker group whose CommitLog is a DLedger log (``enableDLegerCommitLog``), built in the simulator:
a classic store to upgrade from, the group with short DLedger timers and 64 KiB files, its master, a
producer's put without waiting and a consumer's pull to the end.

Shared by lab 05's helpers (:mod:`rocketlab.labs_support.rocketmq_on_dledger`), its graded tests and the
``smooth-upgrade`` sample run. Models RocketMQ's ``DLedgerCommitLog`` deployment (``BrokerController`` with
``enableDLegerCommitLog=true``); rocketlab's own builder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from rocketlab.sim import Cluster
from rocketlab.store import Message, MessageStore
from rocketlab.trace.rundir import fresh_dir

FILE = 64 * 1024
"""Data file size of the lab's stores (CommitLog and DLedger alike): small, so files roll and expire."""
TOPIC = "TopicTest"
FAST = {"heart_beat_time_interval_ms": 200, "max_vote_interval_ms": 300, "min_vote_interval_ms": 100,
        "vote_round_wait_base_ms": 200, "dispatcher_error_backoff_ms": 50}
"""DLedger timers shortened tenfold (heartbeat 200 ms, failover after three missed ones)."""


def write_classic_store(root: str | Path, count: int, size: int = 700, nodes: int = 3,
                        store_options: dict[str, Any] | None = None, clock: Any = None, keys: bool = False) -> int:
    """A classic (pre-DLedger) broker store with ``count`` messages of about ``size`` bytes in
    ``root/nodes/n0/store``, copied to the other members as RocketMQ's upgrade guide asks (identical
    commit logs everywhere); returns the old log's max physical offset. ``store_options``: more
    MessageStoreConfig fields (the brokers must then be started with the same); ``clock``: the store's
    clock (ms; default the wall clock), for byte-identical stores; ``keys``: give message ``i`` the key
    ``old-<i>`` (KEYS), so that the store's index files have entries."""
    src = Path(root) / "nodes" / "n0" / "store"
    with MessageStore.open(src, mapped_file_size_commit_log=FILE, threads=False, clock=clock,
                           **(store_options or {})) as store:
        for i in range(count):
            body = f"old-{i:03d}".encode() * (size // 7)
            if not store.put_message(Message(topic=TOPIC, body=body, keys=f"old-{i:03d}" if keys else None)).is_ok():
                raise RuntimeError(f"the classic store refused message {i}")
        store.reput()
        max_offset = store.get_max_phy_offset()
    for k in range(1, nodes):
        shutil.copytree(src, Path(root) / "nodes" / f"n{k}" / "store")
    return max_offset


def new_broker_group(run_dir: str | Path, *, seed: int = 3, nodes: int = 3, profile: str = "dledger-0.3.1.2",
                     old_messages: int = 0, fresh: bool = True, **broker: Any) -> Cluster:
    """A DLedger broker group (``n0``..) under ``run_dir`` with :data:`FAST` timers and 64 KiB files, a
    master already in place. With ``old_messages``, first a classic store with that many messages,
    so the group starts as a smooth upgrade."""
    root = fresh_dir(run_dir) if fresh else Path(run_dir)
    if old_messages:
        write_classic_store(root, old_messages, nodes=nodes, store_options=broker.get("store_options"))
    c = Cluster.dledger_brokers(nodes, seed=seed, profile=profile, data_dir=root, dledger=FAST,
                                latency="uniform:1:3", broker={"mapped_file_size_commit_log": FILE, **broker})
    wait_for_master(c)
    return c


def wait_for_master(c: Cluster, timeout_ms: int = 10_000) -> str:
    """Run until one live broker is MASTER (the role change handler finished); its id."""
    if not c.run_until(lambda c: _master(c) is not None, timeout_ms=timeout_ms):
        raise RuntimeError(f"no broker became MASTER within {timeout_ms} ms")
    master = _master(c)
    assert master is not None
    return master


def _master(c: Cluster) -> str | None:
    return next((n for n in c.live_nodes() if c.node(n).role == "MASTER"), None)


def bodies(c: Cluster, start: int = 0, topic: str = TOPIC) -> list[bytes]:
    """Every message body a consumer pulls from the master, queue 0, from queue offset ``start``."""
    got, offset = [], start
    while (r := c.pull(topic, 0, offset, 32)).status == "FOUND":
        got += [m["body"] for m in r.messages]
        offset = r.next_begin_offset
    return got


def put_nowait(c: Cluster, node: str, body: bytes, topic: str = TOPIC) -> Any:
    """A producer's put sent to broker ``node`` without running the simulation: the PutHandle, answered
    in a later event."""
    handles: list[Any] = []

    def put(core: Any, now_ms: int) -> Any:
        handle, out = core.put_message(Message(topic=topic, body=body), now_ms)
        handles.append(handle)
        return out

    c.runtime.call(node, put)
    return handles[0]


__all__ = ["FAST", "FILE", "TOPIC", "bodies", "new_broker_group", "put_nowait", "wait_for_master", "write_classic_store"]
