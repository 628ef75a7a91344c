"""DLedger's AppendAndPushTest, BatchPushTest and AppendAndGetTest (digest 7.1) on the simulator, with roles
forced and the elector off as ServerTestHarness does, under the ``rocketmq-4.9.5`` profile (exact Java
index numbers); the ``raft`` profile's differences have their own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger.protocol import DLedgerResponseCode, PushEntryRequest, PushType
from rocketlab.sim import Cluster

from .helpers import group, why

Code = DLedgerResponseCode
JAVA = {"profile": "rocketmq-4.9.5", "enable_leader_elector": False}
BATCH = {"is_enable_batch_push": True, "max_batch_push_size": 300}


def pair(tmp_path: Path | None, start: tuple[str, ...] = ("n0", "n1"), **config) -> Cluster:
    """n0 (forced leader, term 0) and n1 (forced follower), like launchServer(..., leaderId, storeType); a
    member not in ``start`` is down from the start (crashed at time 0, before any message)."""
    c = group(2, data_dir=tmp_path, **(JAVA | config))
    for node in c.node_ids:
        if node in start:
            c.force_role(node, "LEADER" if node == "n0" else "FOLLOWER", 0, None if node == "n0" else "n0")
        else:
            c.crash(node)
    return c


def done(c: Cluster, futures, timeout_ms: int = 3000) -> list[Code]:
    assert c.run_until(lambda c: all(f.done for f in futures), timeout_ms), why(c, "appends not answered")
    return [f.code for f in futures]


def append(c: Cluster, body: bytes | list[bytes], node: str = "n0"):
    """A client's append at ``node``, answered in a later event (or at once: a refusal)."""
    return c.put(body, wait=False, via=node)


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_append_and_get_positions(tmp_path: Path, batch):
    """AppendAndGetTest: indexes 0..9, positions advance by 48 + body length, get(i) returns the body."""
    c = pair(tmp_path, **(BATCH if batch else {}))
    futures = [append(c, bytes(100)) for _ in range(10)]
    assert done(c, futures) == [Code.SUCCESS] * 10
    assert [f.index for f in futures] == list(range(10))
    assert [f.pos for f in futures] == [148 * i for i in range(10)]
    c.run_for(200)
    for node in ("n0", "n1"):
        core = c.node(node)
        assert (core.ledger_end_index, core.committed_index) == (9, 9)
        assert [e.body for e in core.entries()] == [bytes(100)] * 10


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_committed_index(tmp_path: Path, batch):
    """AppendAndPushTest.testPushCommittedIndex: nothing commits until the follower comes."""
    c = pair(tmp_path, start=("n0",), **(BATCH if batch else {}))
    futures = [append(c, b"x" * 30) for _ in range(10)]
    c.run_for(300)
    assert (c.node("n0").ledger_end_index, c.node("n0").committed_index) == (9, -1)
    c.restart("n1")
    c.force_role("n1", "FOLLOWER", 0, "n0")
    assert c.run_until(lambda c: c.node("n1").committed_index == 9 and c.node("n0").committed_index == 9, 3000)
    assert all(f.done for f in futures)


def test_push_network_offline_times_out_then_pending_full(tmp_path: Path):
    """AppendAndPushTest.testPushNetworkOffline: WAIT_QUORUM_ACK_TIMEOUT, then LEADER_PENDING_FULL."""
    c = pair(tmp_path, start=("n0",), max_pending_requests_num=20)
    first = [append(c, b"offline") for _ in range(10)]
    wait = c.node("n0").config.max_wait_ack_time_ms
    c.run_for(wait + 100)
    assert [f.code for f in first] == [Code.WAIT_QUORUM_ACK_TIMEOUT] * 10
    more = [append(c, b"more") for _ in range(15)]
    codes = [f.code for f in more]
    assert Code.LEADER_PENDING_FULL in codes and codes.index(Code.LEADER_PENDING_FULL) == 11
    refused = more[codes.index(Code.LEADER_PENDING_FULL)]
    assert refused.response.pos == -1 and refused.index == -1


def test_push_network_not_stable(tmp_path: Path):
    """AppendAndPushTest.testPushNetworkNotStable: the future completes only once the follower is back."""
    c = pair(tmp_path)
    assert done(c, [append(c, b"first")]) == [Code.SUCCESS]
    c.crash("n1")
    second = append(c, b"second")
    c.run_for(500)
    assert not second.done
    c.restart("n1")
    c.force_role("n1", "FOLLOWER", 0, "n0")
    assert done(c, [second]) == [Code.SUCCESS]
    c.run_for(300)
    for node in ("n0", "n1"):
        assert (c.node(node).ledger_begin_index, c.node(node).ledger_end_index) == (0, 1)


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_missed(tmp_path: Path, batch):
    """AppendAndPushTest.testPushMissed: every third APPEND push is never answered; retries recover."""
    c = pair(tmp_path, **(BATCH if batch else {}))
    seen = {"n": 0}

    def drop_every_third(src, dst, msg) -> bool:
        if isinstance(msg, PushEntryRequest) and msg.type is PushType.APPEND:
            seen["n"] += 1
            return seen["n"] % 3 == 0
        return False

    c.drop_if(drop_every_third)
    futures = []
    for _ in range(10):
        futures.append(append(c, b"y" * 20))
        c.run_for(5)
    assert done(c, futures, 10_000) == [Code.SUCCESS] * 10
    assert c.node("n1").ledger_end_index == 9 and seen["n"] >= 4


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_truncate(tmp_path: Path, batch):
    """AppendAndPushTest.testPushTruncate: the new leader n1 (5 entries) cuts n0 (10 entries) back to 4."""
    c = pair(tmp_path, **(BATCH if batch else {}))
    assert done(c, [append(c, b"a%d" % i) for i in range(5)]) == [Code.SUCCESS] * 5
    c.crash("n1")
    for i in range(5):
        append(c, b"b%d" % i)
    c.run_for(50)
    assert c.node("n0").ledger_end_index == 9
    c.crash("n0")
    c.restart("n1")
    c.force_role("n1", "LEADER", 1)
    c.restart("n0")
    c.force_role("n0", "FOLLOWER", 1, "n1")
    assert c.run_until(lambda c: c.node("n0").ledger_end_index == 4, 3000)
    assert [e["index"] for e in c.events_of("truncate", "n0")] == [5]
    futures = [append(c, b"c%d" % i, "n1") for i in range(10)]
    assert done(c, futures) == [Code.SUCCESS] * 10 and [f.index for f in futures] == list(range(5, 15))
    c.run_for(300)
    assert c.node("n0").entries() == c.node("n1").entries()


def test_batch_append(tmp_path: Path):
    """AppendAndPushTest.testBatchAppend: positions 48*i + 128*i*(i+1)/2, one answer for the last entry."""
    c = pair(tmp_path, mapped_file_size_for_entry_data=64 * 1024)
    bodies = [bytes(128 * (i + 1)) for i in range(10)]
    future = append(c, bodies)
    assert done(c, [future]) == [Code.SUCCESS]
    assert future.response.index == 9
    assert list(future.response.positions) == [48 * i + 128 * i * (i + 1) // 2 for i in range(10)]
    c.run_for(300)
    assert [e.body for e in c.node("n1").entries()] == bodies


def test_empty_batch_and_refusals(tmp_path: Path):
    c = pair(tmp_path)
    assert append(c, []).code is Code.REQUEST_WITH_EMPTY_BODYS
    assert append(c, b"to a follower", "n1").code is Code.NOT_LEADER
    c.node("n0").member_state.set_transferee("n1")
    assert append(c, b"while transferring").code is Code.LEADER_TRANSFERRING
