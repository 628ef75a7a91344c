"""What distinguishes the releases the profiles model (issue-by-issue, against the Java tags):

* #247 (0.3.2: wait for the heartbeat latch, 10 ms more, then a bigger term first) with constant latency
  and the bigger-term member *last* in the leader's send order as well as with random latency;
* #251 (0.3.2: checkAbnormalFuture removes the stuck push) as the ``ISSUE_251`` schedule;
* ``updateCommittedIndex`` caps at the ledger end, so a truncation below the committed index lowers it;
* recovery accepts magic 1 only under the DLedger profiles and refuses a directory with no-op entries;
* ``currterm`` is written like ``IOUtils.string2File`` (no fsync): a power loss can lose a vote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.member_state import TERM_PERSIST_FILE, MemberState
from rocketlab.errors import StoreError
from rocketlab.scenarios.dledger_schedules import (
    issue247_cluster,
    issue251_cluster,
    run_issue247,
    run_issue251,
)

from .helpers import make_config
from .test_mmap_file_store import reopen
from .test_store import follower_with, leader_log, open_store

PROFILES = ("dledger-0.3.1.2", "dledger-0.3.2", "raft")


@pytest.mark.parametrize("latency", ["constant:0", "constant:2", "uniform:1:3"])
@pytest.mark.parametrize("profile", PROFILES)
def test_issue_247_sticks_only_under_0_3_1_2_whatever_the_timing(profile, latency):
    """With equal latencies the stale member's EXPIRED_TERM answer arrives right after the SUCCESS
    answers that open the heartbeat latch: 0.3.1.2 ignores it (a quorum said SUCCESS), 0.3.2 counts it
    during its 10 ms wait and steps down."""
    c = issue247_cluster(seed=1, profile=profile, nodes=3, latency=latency)
    report = run_issue247(c, follower_last=True)
    if profile != "raft":  # (under raft the last member in id order may not have voted for L)
        assert report.names["F"] == max(c.node_ids), f"{report.names}: F must sort last"
    assert report.rejoined is (profile != "dledger-0.3.1.2"), f"{profile} {latency}: {report.as_dict()}"
    if profile == "dledger-0.3.1.2":
        assert report.follower_role == "CANDIDATE" and report.expired_term_answers >= 10


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("profile", PROFILES)
def test_issue_251_a_follower_that_lost_acknowledged_entries_stays_behind_only_under_0_3_1_2(
        profile, seed, tmp_path: Path):
    report = run_issue251(issue251_cluster(seed=seed, profile=profile, data_dir=tmp_path))
    if profile == "dledger-0.3.1.2":
        assert not report.caught_up and report.stuck_buffered, f"seed {seed}: {report.as_dict()}"
        assert report.follower_end < min(report.stuck_buffered) - 1  # the gap that never fills
    else:
        assert report.caught_up and not report.stuck_buffered, f"seed {seed}: {report.as_dict()}"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_truncation_below_the_committed_index_lowers_it(profile):
    """Java's updateCommittedIndex ignores a smaller index but caps a larger one at the ledger end; after
    a truncation that cap can be below the old committed index."""
    log = leader_log(8)
    store = follower_with(None, log, profile=profile)
    store.update_committed_index(5, 7)
    assert store.committed_index == 7
    store.truncate(log[3], 5, "n1")
    store.update_committed_index(5, 6)  # smaller than 7: ignored, as Java does
    assert store.committed_index == 7 > store.ledger_end_index == 3
    store.update_committed_index(5, 7)  # equal to the current one: ignored
    assert store.committed_index == 7
    store.update_committed_index(5, 8)  # the leader's commit moved on: capped at the new end
    assert store.committed_index == 3 and store.committed_pos == log[3].pos + log[3].size


def _noop_directory(tmp_path: Path) -> bytes:
    store = open_store(tmp_path, profile="raft")
    store.append_as_leader(DLedgerEntry(body=b"first"))
    store.append_as_leader(DLedgerEntry(body=b"", magic=2))
    store.append_as_leader(DLedgerEntry(body=b"third"))
    store.shutdown()
    return b"".join(p.read_bytes() for p in sorted((tmp_path / "data").iterdir()))


@pytest.mark.parametrize("profile", ["dledger-0.3.1.2", "dledger-0.3.2"])
def test_recovery_under_a_dledger_profile_refuses_no_op_entries_and_cuts_nothing(profile, tmp_path: Path):
    before = _noop_directory(tmp_path)
    with pytest.raises(StoreError, match=r"magic.*2.*profile=raft \(no data was cut\)"):
        reopen(tmp_path, profile=profile)
    assert b"".join(p.read_bytes() for p in sorted((tmp_path / "data").iterdir())) == before
    again = reopen(tmp_path, profile="raft")
    assert again.ledger_end_index == 2 and again.get(1).is_noop


def _member(tmp_path: Path, profile: str) -> MemberState:
    return MemberState(make_config(profile=profile), tmp_path)


@pytest.mark.parametrize(("profile", "term_after_power_loss"), [("dledger-0.3.1.2", 0), ("raft", 1)])
def test_a_power_loss_soon_after_a_vote_loses_it_unless_currterm_is_fsynced(profile, term_after_power_loss,
                                                                            tmp_path: Path):
    ms = _member(tmp_path, profile)
    ms.clock_ms = 1000
    ms.change_to_candidate(0)
    ms.next_term()
    ms.set_curr_vote_for("n0")
    assert (tmp_path / TERM_PERSIST_FILE).read_text().startswith("currTerm=1")
    lost = ms.lose_unsynced(1000 + 5_000)  # 5 s later: still in the page cache
    assert lost is (profile != "raft")
    again = _member(tmp_path, profile)
    assert again.curr_term == term_after_power_loss
    assert again.curr_vote_for == (None if lost else "n0")


def test_a_vote_older_than_the_writeback_delay_survives_a_power_loss(tmp_path: Path):
    ms = _member(tmp_path, "dledger-0.3.1.2")
    ms.clock_ms = 1000
    ms.change_to_candidate(0)
    ms.next_term()
    ms.set_curr_vote_for("n0")
    assert ms.lose_unsynced(1000 + 31_000) is False
    again = _member(tmp_path, "dledger-0.3.1.2")
    assert (again.curr_term, again.curr_vote_for) == (1, "n0")
    assert (tmp_path / (TERM_PERSIST_FILE + ".bak")).exists()  # string2File keeps the previous content


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_raft_profile_elects_by_raft_rules_timer_range_and_heartbeat_period(seed):
    """Raft's election (the ``raft`` profile): the first vote round starts inside the election-timeout
    range, the winner heartbeats every min // 2 ms without waiting, a bigger term is adopted at once
    (every member ends in the leader's term with it as leader)."""
    from rocketlab.sim import Cluster

    c = Cluster.dledger(nodes=5, seed=seed, profile="raft", memory=True)
    config = c.node("n0").config
    assert c.run_until(lambda c: c.leader() is not None, 2000), f"seed {seed}: no leader"
    first = min(e["t"] for e in c.events if e["kind"] == "vote_request")
    assert config.election_timeout_min_ms <= first <= config.election_timeout_max_ms, f"seed {seed}: {first}"
    leader = c.leader()
    c.run_for(1000)
    sent = sorted({e["t"] for e in c.events if e["kind"] == "msg_send" and e["src"] == leader
                   and e["msg"] == "HeartBeatRequest"})
    gaps = {b - a for a, b in zip(sent[-6:-1], sent[-5:], strict=True)}
    assert gaps == {config.election_timeout_min_ms // 2}, f"seed {seed}: heartbeat gaps {gaps}"
    term = c.node(leader).term
    assert all(c.node(n).term == term and c.node(n).leader_id == leader for n in c.node_ids), f"seed {seed}"
