"""The ``raft`` and ``rocketmq-4.9.5`` profiles in whole-cluster scenarios: issue #247/#325 (leader keeps
quorum while a follower with a bigger term is stuck), issue #251 (REPEATED_PUSH livelock), and how a new
leader commits entries of earlier terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger.protocol import DLedgerResponseCode, PushEntryRequest, PushEntryResponse, PushType
from rocketlab.scenarios.dledger_group import wait_settled

from .helpers import group, why

Code = DLedgerResponseCode


@pytest.mark.parametrize("profile", ["rocketmq-4.9.5", "raft"])
def test_isolated_follower_with_a_bigger_term_issue_247(profile):
    """A follower isolated while the log grows comes back at a higher term with a stale log: its votes are
    rejected on log grounds and it answers the leader's heartbeats EXPIRED_TERM. 0.3.1.2's leader still
    has a quorum and never steps down, so the follower stays out forever (#325); 0.3.2 steps down."""
    c = group(seed=21, profile=profile)
    leader = wait_settled(c)
    lost = next(i for i in c.node_ids if i != leader)
    c.partition([lost], [i for i in c.node_ids if i != lost])
    futures = [c.put(b"while isolated %d" % i, wait=False, via=leader) for i in range(3)]
    assert c.run_until(lambda c: all(f.done for f in futures), 2000)
    term = c.node(leader).term
    c.revote(lost, term + 5)
    c.run_for(500)
    assert c.node(lost).role == "CANDIDATE"
    if profile == "raft":  # Raft's candidate starts a new election (term + 1) each time its timer fires
        assert c.node(lost).term > term + 5
    else:  # DLedger's candidate, its votes unanswered, stays in its term (WAIT_TO_REVOTE)
        assert c.node(lost).term == term + 5
    c.heal()
    c.run_for(3000)
    if profile == "rocketmq-4.9.5":
        assert c.node(leader).role == "LEADER" and c.node(leader).term == term
        assert c.node(lost).role == "CANDIDATE" and c.node(lost).ledger_end_index < c.node(leader).ledger_end_index
        assert any(e["code"] == "EXPIRED_TERM" for e in c.events_of("heartbeat", leader) if e["to"] == lost)
    else:
        new_leader = wait_settled(c)
        assert c.node(new_leader).term >= term + 5
        assert c.node(lost).ledger_end_index == c.node(new_leader).ledger_end_index


@pytest.mark.parametrize("profile", ["rocketmq-4.9.5", "raft"])
def test_stuck_buffered_push_livelock_issue_251(tmp_path: Path, profile):
    """A follower that lost its tail buffers the leader's later pushes; its INCONSISTENT_STATE answer is
    lost; the leader re-pushes watermark+1 every maxPushTimeOutMs. 0.3.1.2 answers REPEATED_PUSH forever;
    with the fix the stuck push is dropped, answered again, and the follower catches up."""
    c = group(2, seed=22, data_dir=tmp_path, profile=profile, enable_leader_elector=False)
    c.force_role("n0", "LEADER", 0)
    c.force_role("n1", "FOLLOWER", 0, "n0")
    first = [c.put(b"e%d" % i, wait=False, via="n0") for i in range(8)]
    assert c.run_until(lambda c: all(f.done for f in first), 2000)
    c.run_for(50)
    cut_at = c.node("n1").entries(4, 4)[0].pos
    c.crash("n1")
    data = tmp_path / "nodes" / "n1" / "data" / f"{0:020d}"
    raw = bytearray(data.read_bytes())
    raw[cut_at:cut_at + 48] = bytes(48)  # n1 loses entries 4..7 (an unflushed tail)
    data.write_bytes(bytes(raw))
    c.restart("n1")
    c.force_role("n1", "FOLLOWER", 0, "n0")
    assert c.node("n1").ledger_end_index == 3
    seen: list[tuple[str, Code]] = []
    dropped = {"n": 0}

    def spy(src, dst, msg) -> bool:
        if isinstance(msg, PushEntryResponse) and msg.index is not None:
            seen.append((src, msg.code))
            if msg.code is Code.INCONSISTENT_STATE and dropped["n"] == 0:
                dropped["n"] = 1
                return True  # the one answer that would have sent the leader back to COMPARE
        return False

    c.drop_if(spy)
    for i in range(2):
        c.put(b"later %d" % i, wait=False, via="n0")
    c.run_for(3000)
    if profile == "rocketmq-4.9.5":
        assert c.node("n1").ledger_end_index == 3
        assert seen.count(("n1", Code.REPEATED_PUSH)) >= 10
    else:
        assert c.node("n1").ledger_end_index == c.node("n0").ledger_end_index == 9
    assert dropped["n"] == 1


@pytest.mark.parametrize("profile", ["rocketmq-4.9.5", "raft"])
def test_new_leader_commits_earlier_terms(tmp_path: Path, profile):
    """Entries replicated but not known committed when the leader dies: 0.3.1.2's new leader commits them
    by counting replicas without a write (what RocketMQ's role change waits for); ``raft`` first appends
    a NOOP entry of its own term and commits through it."""
    c = group(seed=23, data_dir=tmp_path, profile=profile)
    leader = wait_settled(c)

    def no_commit_info(src, dst, msg) -> bool:
        return isinstance(msg, PushEntryRequest) and msg.type in (PushType.COMMIT, PushType.APPEND) \
            and msg.commit_index >= 0

    c.drop_if(no_commit_info)
    futures = [c.put(b"entry %d" % i, wait=False, via=leader) for i in range(3)]
    assert c.run_until(lambda c: all(f.done for f in futures), 2000)
    end = c.node(leader).ledger_end_index
    assert all(c.node(i).committed_index < end for i in c.node_ids if i != leader), why(c, "committed")
    c.drop_if(None)
    c.crash(leader)
    new = wait_settled(c)
    c.run_for(500)
    core = c.node(new)
    if profile == "rocketmq-4.9.5":
        assert core.ledger_end_index == end and core.committed_index == end
    else:
        assert core.ledger_end_index == end + 1 and core.entries()[-1].is_noop
        assert core.committed_index == end + 1 and core.entries()[-1].term == core.term
