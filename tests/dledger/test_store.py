"""Both stores behind one interface: positions with blank padding, reads, follower checks, truncate,
committed index (DLedgerMappedFileStoreTest: testAppendAsLeader, testAppendAsFollower, testTruncate,
testAppendHook; AppendAndGetTest positions)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rocketlab.dledger.entry import BODY_OFFSET, MAGIC_NOOP, DLedgerEntry
from rocketlab.dledger.member_state import MemberState
from rocketlab.dledger.protocol import DLedgerException, DLedgerResponseCode
from rocketlab.dledger.store import DLedgerMemoryStore, DLedgerMmapFileStore, DLedgerStore

from .helpers import make_config

Code = DLedgerResponseCode


def open_store(path: Path | None, role: str = "leader", term: int = 0, leader: str = "n1",
               **overrides) -> DLedgerStore:
    """A started store whose member is leader (or follower of ``leader``) in ``term``."""
    config = make_config(**overrides)
    ms = MemberState(config, path)
    store: DLedgerStore = DLedgerMmapFileStore(config, ms, path) if path is not None else DLedgerMemoryStore(config, ms)
    store.startup()
    set_role(store, role, term, leader)
    return store


def set_role(store: DLedgerStore, role: str, term: int, leader: str = "n1") -> None:
    ms = store.member_state
    ms.change_to_candidate(term)
    while ms.curr_term < term:
        ms.next_term()
    if role == "leader":
        ms.change_to_leader(term)
    elif role == "follower":
        ms.change_to_follower(term, leader)


@pytest.fixture(params=["file", "memory"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def path(kind: str, tmp_path: Path) -> Path | None:
    return tmp_path if kind == "file" else None


def test_positions_advance_by_48_plus_body_and_pad_at_file_end(path):
    store = open_store(path)
    placed = [store.append_as_leader(DLedgerEntry(body=bytes(100))) for _ in range(8)]
    assert [e.index for e in placed] == list(range(8))
    assert [e.pos for e in placed] == [0, 148, 296, 444, 592, 740, 888 - 888 + 1024, 1024 + 148]
    assert all(e.size == 148 and e.term == 0 for e in placed)
    assert [store.get(i) for i in range(8)] == placed
    assert (store.ledger_begin_index, store.ledger_end_index, store.ledger_end_term) == (0, 7, 0)
    assert store.member_state.ledger_end_index == 7


def test_blank_record_and_file_names_on_disk(tmp_path: Path):
    store = open_store(tmp_path)
    for _ in range(7):
        store.append_as_leader(DLedgerEntry(body=bytes(100)))
    files = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert files == ["00000000000000000000", "00000000000000001024"]
    raw = (tmp_path / "data" / files[0]).read_bytes()
    assert len(raw) == 1024 and struct.unpack(">ii", raw[888:896]) == (-1, 136)
    index = (tmp_path / "index" / "00000000000000000000").read_bytes()
    assert struct.unpack(">iqiqq", index[6 * 32:7 * 32]) == (1, 1024, 148, 6, 0)


def test_get_checks_range(path):
    store = open_store(path)
    with pytest.raises(DLedgerException) as info:
        store.get(0)
    assert info.value.code is Code.INDEX_OUT_OF_RANGE
    store.append_as_leader(DLedgerEntry(body=b"a"))
    for bad in (-1, 1):
        with pytest.raises(DLedgerException, match="INDEX_OUT_OF_RANGE"):
            store.get(bad)


def test_append_as_leader_preconditions(path):
    store = open_store(path, role="follower")
    with pytest.raises(DLedgerException, match="NOT_LEADER"):
        store.append_as_leader(DLedgerEntry(body=b"a"))
    set_role(store, "leader", 1)
    store.member_state.set_transferee("n2")
    with pytest.raises(DLedgerException, match="LEADER_TRANSFERRING"):
        store.append_as_leader(DLedgerEntry(body=b"a"))
    store.member_state.set_transferee(None)
    with pytest.raises(DLedgerException, match="DISK_ERROR"):
        store.append_as_leader(DLedgerEntry(body=bytes(1000)))
    assert store.append_as_leader(DLedgerEntry(magic=MAGIC_NOOP, body=b"")).is_noop


def test_append_hook_patches_the_body_before_it_is_written(path):
    store = open_store(path)

    def hook(entry: DLedgerEntry, buf: bytearray, body_offset: int) -> None:
        struct.pack_into(">q", buf, body_offset, entry.pos + BODY_OFFSET)

    store.add_append_hook(hook)
    store.add_append_hook(hook)
    assert len(store.append_hooks) == 1
    store.append_as_leader(DLedgerEntry(body=bytes(16)))
    e = store.append_as_leader(DLedgerEntry(body=bytes(16)))
    assert struct.unpack(">q", e.body[:8])[0] == 64 + 48
    assert store.get(1).body == e.body


def leader_log(n: int, term: int = 1, body: bytes = b"L") -> list[DLedgerEntry]:
    """``n`` entries as a leader of ``term`` would place them (memory store)."""
    store = open_store(None, term=term)
    return [store.append_as_leader(DLedgerEntry(body=body + bytes([i]))) for i in range(n)]


def test_append_as_follower_checks_index_term_leader_and_pos(path):
    log = leader_log(3, term=2)
    store = open_store(path, role="follower", term=2, leader="n1")
    assert store.append_as_follower(log[0], 2, "n1") == log[0]
    cases = [(log[2], 2, "n1", "INCONSISTENT_INDEX"), (log[1], 1, "n1", "INCONSISTENT_TERM"),
             (log[1], 2, "n2", "INCONSISTENT_LEADER"), (log[1].with_(pos=999), 2, "n1", "DISK_ERROR")]
    for entry, term, leader, code in cases:
        with pytest.raises(DLedgerException, match=code):
            store.append_as_follower(entry, term, leader)
    assert store.ledger_end_index == 0
    assert store.append_as_follower(log[1], 2, "n1").pos == log[1].pos
    assert (store.ledger_end_index, store.ledger_end_term) == (1, 2)
    set_role(store, "candidate", 3)
    with pytest.raises(DLedgerException, match="NOT_FOLLOWER"):
        store.append_as_follower(log[2], 3, "n1")


def follower_with(path: Path | None, entries: list[DLedgerEntry], term: int = 5, **overrides) -> DLedgerStore:
    store = open_store(path, role="follower", term=term, leader="n1", **overrides)
    for e in entries:
        store.append_as_follower(e, term, "n1")
    return store


def test_truncate_keeps_an_equal_entry_and_cuts_after_it(path):
    log = leader_log(10)
    store = follower_with(path, log)
    assert store.truncate(log[5], 5, "n1") == 5
    assert (store.ledger_end_index, store.ledger_end_term) == (5, 1)
    assert store.get(5) == log[5]
    assert [e.kind for e in store.drain_events()][-1] == "truncate"
    store.append_as_follower(log[6], 5, "n1")
    assert store.get(6) == log[6]


def test_truncate_replaces_a_different_entry(path):
    old, new = leader_log(10, term=1, body=b"old"), leader_log(4, term=2, body=b"new!")
    store = follower_with(path, old)
    store.drain_events()
    assert store.truncate(new[3], 5, "n1") == 3
    assert store.get(3) == new[3] and store.get(2) == old[2]
    assert (store.ledger_end_index, store.ledger_end_term) == (3, 2)
    kinds = [(e.kind, e.fields.get("index")) for e in store.drain_events()]
    assert kinds == [("truncate", 3), ("append", 3)]


def test_truncate_beyond_the_end_rebases_the_log(path):
    log = leader_log(12)
    store = follower_with(path, log[:4])
    assert store.truncate(log[9], 5, "n1") == 9
    assert (store.ledger_begin_index, store.ledger_end_index) == (9, 9)
    with pytest.raises(DLedgerException, match="INDEX_LESS_THAN_LOCAL_BEGIN"):
        store.get(3)
    store.append_as_follower(log[10], 5, "n1")
    assert store.get(10) == log[10] and store.get(9) == log[9]


def test_truncate_needs_follower_term_and_leader(path):
    log = leader_log(2)
    store = follower_with(path, log)
    for term, leader, code in [(4, "n1", "INCONSISTENT_TERM"), (5, "n2", "INCONSISTENT_LEADER")]:
        with pytest.raises(DLedgerException, match=code):
            store.truncate(log[0], term, leader)


def test_update_committed_index_rules(path):
    store = open_store(path, term=3)
    store.update_committed_index(3, 0)
    assert store.committed_index == -1  # empty store: ignored
    placed = [store.append_as_leader(DLedgerEntry(body=bytes(10))) for _ in range(5)]
    store.update_committed_index(3, 2)
    assert (store.committed_index, store.committed_pos) == (2, placed[2].pos + placed[2].size)
    store.update_committed_index(3, 1)
    store.update_committed_index(2, 4)
    store.update_committed_index(3, -1)
    assert store.committed_index == 2  # lower index, lower term and -1 are ignored
    store.update_committed_index(3, 99)
    assert store.committed_index == 4  # capped at the ledger end
    commits = [e.fields for e in store.drain_events() if e.kind == "commit"]
    assert commits == [{"index": 2, "pos": placed[2].pos + 58}, {"index": 4, "pos": placed[4].pos + 58}]
