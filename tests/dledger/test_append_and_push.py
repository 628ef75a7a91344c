"""DLedger's AppendAndPushTest, BatchPushTest and AppendAndGetTest (digest 7.1) on the harness, with roles
forced and the elector off as ServerTestHarness does, under the ``rocketmq-4.9.5`` profile (exact Java
index numbers); the ``raft`` profile's differences have their own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger.protocol import DLedgerResponseCode, PushEntryRequest, PushType

from .harness import Harness

Code = DLedgerResponseCode
JAVA = {"profile": "rocketmq-4.9.5", "enable_leader_elector": False}
BATCH = {"is_enable_batch_push": True, "max_batch_push_size": 300}


def pair(tmp_path: Path | None, start: tuple[str, ...] = ("n0", "n1"), **config) -> Harness:
    """n0 (forced leader, term 0) and n1 (forced follower), like launchServer(..., leaderId, storeType)."""
    h = Harness(["n0", "n1"], data_dir=tmp_path, config=JAVA | config)
    for node in start:
        h.start(node)
        h.force(node, "LEADER" if node == "n0" else "FOLLOWER", 0, "n0")
    return h


def done(h: Harness, futures, timeout_ms: int = 3000) -> list[Code]:
    h.run_until(lambda h: all(f.done for f in futures), timeout_ms)
    return [f.code for f in futures]


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_append_and_get_positions(tmp_path: Path, batch):
    """AppendAndGetTest: indexes 0..9, positions advance by 48 + body length, get(i) returns the body."""
    h = pair(tmp_path, **(BATCH if batch else {}))
    futures = [h.append(bytes(100), "n0") for _ in range(10)]
    assert done(h, futures) == [Code.SUCCESS] * 10
    assert [f.index for f in futures] == list(range(10))
    assert [f.pos for f in futures] == [148 * i for i in range(10)]
    h.run_for(200)
    for node in ("n0", "n1"):
        core = h.node(node)
        assert (core.ledger_end_index, core.committed_index) == (9, 9)
        assert [e.body for e in core.entries()] == [bytes(100)] * 10


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_committed_index(tmp_path: Path, batch):
    """AppendAndPushTest.testPushCommittedIndex: nothing commits until the follower comes."""
    h = pair(tmp_path, start=("n0",), **(BATCH if batch else {}))
    futures = [h.append(b"x" * 30, "n0") for _ in range(10)]
    h.run_for(300)
    assert (h.node("n0").ledger_end_index, h.node("n0").committed_index) == (9, -1)
    h.start("n1")
    h.force("n1", "FOLLOWER", 0, "n0")
    h.run_until(lambda h: h.node("n1").committed_index == 9 and h.node("n0").committed_index == 9, 3000)
    assert all(f.done for f in futures)


def test_push_network_offline_times_out_then_pending_full(tmp_path: Path):
    """AppendAndPushTest.testPushNetworkOffline: WAIT_QUORUM_ACK_TIMEOUT, then LEADER_PENDING_FULL."""
    h = pair(tmp_path, start=("n0",), max_pending_requests_num=20)
    first = [h.append(b"offline", "n0") for _ in range(10)]
    wait = h.node("n0").config.max_wait_ack_time_ms
    h.run_for(wait + 100)
    assert [f.code for f in first] == [Code.WAIT_QUORUM_ACK_TIMEOUT] * 10
    more = [h.append(b"more", "n0") for _ in range(15)]
    codes = [f.code for f in more]
    assert Code.LEADER_PENDING_FULL in codes and codes.index(Code.LEADER_PENDING_FULL) == 11
    refused = more[codes.index(Code.LEADER_PENDING_FULL)]
    assert refused.response.pos == -1 and refused.index == -1


def test_push_network_not_stable(tmp_path: Path):
    """AppendAndPushTest.testPushNetworkNotStable: the future completes only once the follower is back."""
    h = pair(tmp_path)
    assert done(h, [h.append(b"first", "n0")]) == [Code.SUCCESS]
    h.crash("n1")
    second = h.append(b"second", "n0")
    h.run_for(500)
    assert not second.done
    h.start("n1")
    h.force("n1", "FOLLOWER", 0, "n0")
    assert done(h, [second]) == [Code.SUCCESS]
    h.run_for(300)
    for node in ("n0", "n1"):
        assert (h.node(node).ledger_begin_index, h.node(node).ledger_end_index) == (0, 1)


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_missed(tmp_path: Path, batch):
    """AppendAndPushTest.testPushMissed: every third APPEND push is never answered; retries recover."""
    h = pair(tmp_path, **(BATCH if batch else {}))
    seen = {"n": 0}

    def drop_every_third(src, dst, msg) -> bool:
        if isinstance(msg, PushEntryRequest) and msg.type is PushType.APPEND:
            seen["n"] += 1
            return seen["n"] % 3 == 0
        return False

    h.drop = drop_every_third
    futures = []
    for _ in range(10):
        futures.append(h.append(b"y" * 20, "n0"))
        h.run_for(5)
    assert done(h, futures, 10_000) == [Code.SUCCESS] * 10
    assert h.node("n1").ledger_end_index == 9 and seen["n"] >= 4


@pytest.mark.parametrize("batch", [False, True], ids=["one-by-one", "batch-push"])
def test_push_truncate(tmp_path: Path, batch):
    """AppendAndPushTest.testPushTruncate: the new leader n1 (5 entries) cuts n0 (10 entries) back to 4."""
    h = pair(tmp_path, **(BATCH if batch else {}))
    assert done(h, [h.append(b"a%d" % i, "n0") for i in range(5)]) == [Code.SUCCESS] * 5
    h.crash("n1")
    for i in range(5):
        h.append(b"b%d" % i, "n0")
    h.run_for(50)
    assert h.node("n0").ledger_end_index == 9
    h.crash("n0")
    h.start("n1")
    h.force("n1", "LEADER", 1)
    h.start("n0")
    h.force("n0", "FOLLOWER", 1, "n1")
    h.run_until(lambda h: h.node("n0").ledger_end_index == 4, 3000)
    assert [e["index"] for e in h.kinds("truncate", "n0")] == [5]
    futures = [h.append(b"c%d" % i, "n1") for i in range(10)]
    assert done(h, futures) == [Code.SUCCESS] * 10 and [f.index for f in futures] == list(range(5, 15))
    h.run_for(300)
    assert h.node("n0").entries() == h.node("n1").entries()


def test_batch_append(tmp_path: Path):
    """AppendAndPushTest.testBatchAppend: positions 48*i + 128*i*(i+1)/2, one answer for the last entry."""
    h = pair(tmp_path, mapped_file_size_for_entry_data=64 * 1024)
    bodies = [bytes(128 * (i + 1)) for i in range(10)]
    future = h.append(bodies, "n0")
    assert done(h, [future]) == [Code.SUCCESS]
    assert future.response.index == 9
    assert list(future.response.positions) == [48 * i + 128 * i * (i + 1) // 2 for i in range(10)]
    h.run_for(300)
    assert [e.body for e in h.node("n1").entries()] == bodies


def test_empty_batch_and_refusals(tmp_path: Path):
    h = pair(tmp_path)
    assert h.append([], "n0").code is Code.REQUEST_WITH_EMPTY_BODYS
    assert h.append(b"to a follower", "n1").code is Code.NOT_LEADER
    h.node("n0").member_state.set_transferee("n1")
    assert h.append(b"while transferring", "n0").code is Code.LEADER_TRANSFERRING
