"""DLedger's LeaderElectorTest, VoteRequestTest and HeartbeatRequestTest (digest 7.1) on the simulator,
plus elector timing rules (failover, same-term step-down, restart in the persisted term).

A test client's request (a vote, a heartbeat) goes straight to a member (``Cluster.request``): request
in, the member's answer out."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.core import OutputBuilder
from rocketlab.dledger.protocol import DLedgerResponseCode, HeartBeatRequest, VoteRequest, VoteResult
from rocketlab.scenarios.dledger_group import wait_settled
from rocketlab.sim import Cluster

from .helpers import FAST, group, leaders, quorum_leader, wait_leader, why

Code, R = DLedgerResponseCode, VoteResult
HB = FAST["heart_beat_time_interval_ms"]
LEAK = FAST["max_heart_beat_leak"] * HB


def ask(c: Cluster, node_id: str, msg) -> object:
    """Deliver ``msg`` to ``node_id`` directly (from a test client) and return its immediate reply."""
    replies = c.request(node_id, msg)
    assert len(replies) == 1, replies
    return replies[0]


# ---------------------------------------------------------------------- LeaderElectorTest
@pytest.mark.parametrize("profile", ["rocketmq-4.9.5", "raft"])
def test_single_server_leads_and_comes_back_in_the_same_term(tmp_path: Path, profile):
    """LeaderElectorTest.testSingleServer: DLedger's restarted member votes in its stored term again; under
    ``raft`` it starts an election (term + 1, Raft's rule), and as the restarted leader, whose checkpoint
    did not survive the crash, appends a NOOP entry to commit its log."""
    c = group(1, data_dir=tmp_path, profile=profile)
    assert c.run_until(lambda c: c.node("n0").role == "LEADER", 1000)
    term = c.node("n0").term
    futures = [c.put(b"m%d" % i, wait=False, via="n0") for i in range(10)]
    assert c.run_until(lambda c: all(f.done for f in futures), 1000)
    assert [f.code for f in futures] == [Code.SUCCESS] * 10 and [f.index for f in futures] == list(range(10))
    c.crash("n0")
    c.restart("n0")
    assert c.run_until(lambda c: c.node("n0").role == "LEADER", 1000)
    core = c.node("n0")
    assert core.term == (term if profile == "rocketmq-4.9.5" else term + 1)
    assert [e.body for e in core.entries(0, 9)] == [b"m%d" % i for i in range(10)]
    assert core.ledger_end_index == (9 if profile == "rocketmq-4.9.5" else 10)
    c.run_for(100)
    assert core.committed_index == core.ledger_end_index
    if profile == "raft":
        assert core.entries()[-1].is_noop


def test_three_servers_one_leader_and_forced_revotes(tmp_path: Path):
    """LeaderElectorTest.testThreeServer: one leader, two followers; testRevote moves leadership."""
    c = group(seed=3)
    leader = wait_settled(c)
    assert sorted(core.role for core in c.live_cores().values()) == ["FOLLOWER", "FOLLOWER", "LEADER"]
    for k in range(10):
        target = c.node_ids[k % 3]
        for _attempt in range(3):  # a heartbeat of the current term landing within the next 10 ms tick
            max_term = max(core.term for core in c.live_cores().values())  # turns the candidate back into
            c.revote(target, max_term + 1)  # a follower
            assert c.run_until(lambda c, t=target: quorum_leader(c) is not None and c.node(t).role != "CANDIDATE",
                               5000), why(c, f"no leader after {target}'s revote")
            if quorum_leader(c) == target:
                break
        assert leaders(c) == [target] and c.node(target).term == max_term + 1
    future = c.put(b"after revotes", wait=False, via=target)
    assert c.run_until(lambda c: future.done, 2000)
    assert future.code is Code.SUCCESS and leader in c.node_ids


def test_restarting_followers_keeps_leader_and_term(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndRestartFollower."""
    c = group(seed=4, data_dir=tmp_path)
    leader = wait_leader(c)
    term = c.node(leader).term
    for follower in [i for i in c.node_ids if i != leader]:
        c.crash(follower)
        c.restart(follower)
        assert c.run_until(lambda c, f=follower: c.node(f).role == "FOLLOWER", 3000)
        assert quorum_leader(c) == leader and c.node(leader).term == term == c.node(follower).term


def test_killing_the_leader_elects_a_survivor(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndShutdownLeader: failover after the heartbeat leak."""
    c = group(seed=5)
    old = wait_leader(c)
    c.crash(old)
    crashed_at = c.now_ms
    assert c.run_until(lambda c: quorum_leader(c) is not None, LEAK + 10 * HB)
    assert quorum_leader(c) != old and c.now_ms - crashed_at > LEAK - HB


def test_leader_without_followers_steps_down_in_the_same_term():
    """LeaderElectorTest.testThreeServerAndShutdownFollowers: candidate within 4 intervals, term unchanged."""
    c = group(seed=6)
    leader = wait_leader(c)
    term = c.node(leader).term
    for f in [i for i in c.node_ids if i != leader]:
        c.crash(f)
    assert c.run_until(lambda c: c.node(leader).role == "CANDIDATE", 4 * HB + LEAK)
    c.run_for(20 * HB)
    assert c.node(leader).term == term and c.node(leader).role == "CANDIDATE"
    rounds = c.events_of("vote_round", leader)
    assert rounds and {r["result"] for r in rounds[-3:]} == {"WAIT_TO_REVOTE"}


def test_preferred_leader_takes_over_and_comes_back(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndPreferredLeader: leadership moves to n2 by transfer."""
    c = group(seed=7, data_dir=tmp_path, preferred_leader_ids="n2")
    assert c.run_until(lambda c: quorum_leader(c) == "n2", 5000)
    c.crash("n2")
    assert c.run_until(lambda c: quorum_leader(c) not in (None, "n2"), 5000)
    term = c.node(quorum_leader(c)).term
    c.restart("n2")
    assert c.run_until(lambda c: quorum_leader(c) == "n2", 10_000)
    assert c.node("n2").term > term
    future = c.put(b"to the preferred leader", wait=False, via="n2")
    assert c.run_until(lambda c: future.done, 2000)
    assert future.code is Code.SUCCESS


# ---------------------------------------------------------------------- VoteRequestTest
def vote(c: Cluster, voter: str, **fields) -> object:
    base = dict(group="default", remote_id=voter, local_id="client")
    return ask(c, voter, VoteRequest(**(base | fields)))


def test_vote_normal():
    """VoteRequestTest.testVoteNormal: every handleVote rejection a client can provoke."""
    c = group(seed=8, profile="rocketmq-4.9.5")
    leader = wait_settled(c)
    f = next(i for i in c.node_ids if i != leader and c.node(i).voted_for == leader)
    other = next(i for i in c.node_ids if i not in (leader, f))
    ms = c.node(f).member_state
    term, end, end_term = ms.curr_term, ms.ledger_end_index, ms.ledger_end_term
    same = dict(ledger_end_index=end, ledger_end_term=end_term)
    assert vote(c, f, leader_id="n9", term=term, **same).vote_result is R.REJECT_UNKNOWN_LEADER  # check 1
    assert vote(c, f, leader_id=leader, term=term, **same).vote_result is R.ACCEPT  # repeat vote: check 10
    assert vote(c, f, leader_id=f, term=term, **same).vote_result is R.REJECT_UNEXPECTED_LEADER  # check 2
    assert vote(c, f, leader_id=leader, term=term - 1, **same).vote_result is R.REJECT_EXPIRED_VOTE_TERM  # 5
    assert vote(c, f, leader_id=other, term=term, **same).vote_result is R.REJECT_ALREADY_HAS_LEADER  # check 6
    ms.ledger_end_term, ms.ledger_end_index = end_term + 1, 5
    assert vote(c, f, leader_id=leader, term=term, **same).vote_result is R.REJECT_EXPIRED_LEDGER_TERM  # check 3
    ms.ledger_end_term, ms.ledger_end_index = end_term, end + 1
    assert vote(c, f, leader_id=leader, term=term, **same).vote_result is R.REJECT_SMALL_LEDGER_END_INDEX  # 4
    ms.ledger_end_index = end
    response = vote(c, "n0", leader_id=leader, term=term, **same, remote_id="nX")
    assert response.code is Code.UNKNOWN_MEMBER and response.vote_result is R.UNKNOWN
    assert vote(c, f, leader_id=leader, term=term, **same, group="other").code is Code.UNKNOWN_GROUP


def test_vote_term_smaller_than_ledger():
    """VoteRequestTest.testVoteTermSmallThanLedger: check 8 answers with the ledger term."""
    c = group(2, seed=9)
    leader = wait_leader(c)
    f = next(i for i in c.node_ids if i != leader)
    ms = c.node(f).member_state
    ms.ledger_end_term = ms.curr_term + 1
    r = vote(c, f, leader_id=leader, term=ms.curr_term, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_TERM_SMALL_THAN_LEDGER and r.term == ms.curr_term + 1


def test_vote_already_voted_then_node_still_elected():
    """VoteRequestTest.testVoteAlreadyVoted."""
    c = group(3, seed=10)
    leader = wait_leader(c)
    f = next(i for i in c.node_ids if i != leader)
    other = next(i for i in c.node_ids if i not in (leader, f))
    ms = c.node(f).member_state
    c.node(f).elector.change_role_to_candidate(ms.curr_term + 1, c.now_ms, OutputBuilder())
    ms.next_term()
    ms.set_curr_vote_for(other)
    r = vote(c, f, leader_id=leader, term=ms.curr_term, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_ALREADY_VOTED
    assert c.run_until(lambda c: quorum_leader(c) is not None
                       and all(core.term >= ms.curr_term for core in c.live_cores().values()), 5000)


def test_vote_higher_term_answers_not_ready_and_keeps_the_term():
    """handleVote, check 7: the voter becomes candidate but does not adopt the term yet."""
    c = group(seed=11)
    leader = wait_leader(c)
    f = next(i for i in c.node_ids if i != leader)
    ms = c.node(f).member_state
    term = ms.curr_term
    r = vote(c, f, leader_id=leader, term=term + 3, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_TERM_NOT_READY and ms.curr_term == term and ms.role.name == "CANDIDATE"
    assert ms.known_max_term_in_group == term + 3 and c.node(f).elector.need_increase_term_immediately


# ---------------------------------------------------------------------- HeartbeatRequestTest
def beat(c: Cluster, node_id: str, leader: str, term: int) -> object:
    return ask(c, node_id, HeartBeatRequest(group="default", remote_id=node_id, local_id=leader, leader_id=leader,
                                            term=term))


def test_heartbeat_codes():
    """HeartbeatRequestTest.testHeartbeat (enable_leader_elector stays on)."""
    c = group(seed=12)
    leader = wait_settled(c)
    f = next(i for i in c.node_ids if i != leader)
    other = next(i for i in c.node_ids if i not in (leader, f))
    term = c.node(f).term
    assert beat(c, f, "n9", term).code is Code.UNKNOWN_MEMBER  # row 1
    assert beat(c, f, f, term).code is Code.UNEXPECTED_MEMBER  # row 2
    r = beat(c, f, leader, term - 1)
    assert (r.code, r.term) == (Code.EXPIRED_TERM, term)  # row 3
    assert beat(c, f, other, term).code is Code.INCONSISTENT_LEADER  # row 8
    assert beat(c, f, leader, term).code is Code.SUCCESS  # row 4
    assert beat(c, f, leader, term + 1).code is Code.TERM_NOT_READY  # row 9
    c.run_for(FAST["min_vote_interval_ms"] // 3)
    assert c.node(f).term == term + 1
    assert beat(c, f, leader, term + 1).code is Code.SUCCESS  # row 6: follower of the term+1 leader
    assert c.node(f).role == "FOLLOWER"


@pytest.mark.parametrize("profile", ["raft", "rocketmq-4.9.5"])
def test_restarted_node_votes_in_its_persisted_term_and_rejoins_without_bump(tmp_path: Path, profile):
    """Digest 3.4 'startup consequence': REJECT_ALREADY_HAS_LEADER, then the leader's heartbeat."""
    c = group(seed=13, data_dir=tmp_path, profile=profile)
    leader = wait_leader(c)
    term = c.node(leader).term
    f = next(i for i in c.node_ids if i != leader)
    c.crash(f)
    c.restart(f)
    assert c.run_until(lambda c: c.node(f).role == "FOLLOWER", 3000)
    assert {core.term for core in c.live_cores().values()} == {term} and quorum_leader(c) == leader


def test_taking_leadership_uses_the_short_vote_window():
    """isTakingLeadership (0.2.3+): preferred, and termToTakeLeadership == currTerm -> [30, 100) ms."""
    c = group(seed=14, preferred_leader_ids="n0", min_take_leadership_vote_interval_ms=3,
              max_take_leadership_vote_interval_ms=7)
    elector = c.node("n0").elector
    ms = c.node("n0").member_state
    assert not elector.is_taking_leadership()
    ms.term_to_take_leadership = ms.curr_term
    assert elector.is_taking_leadership()
    assert all(3 <= elector.get_next_time_to_request_vote(1000) - 1000 < 7 for _ in range(50))
    c.node("n1").member_state.term_to_take_leadership = c.node("n1").term
    assert not c.node("n1").elector.is_taking_leadership()  # n1 is not a preferred leader


def test_a_cluster_runs_with_every_timer_at_a_few_milliseconds():
    tiny = {"heart_beat_time_interval_ms": 4, "min_vote_interval_ms": 1, "max_vote_interval_ms": 3,
            "vote_round_wait_base_ms": 2, "rpc_timeout_ms": 6, "max_push_time_out_ms": 3, "max_wait_ack_time_ms": 30,
            "push_commit_interval_ms": 2, "follower_push_timeout_ms": 2, "check_abnormal_future_interval_ms": 2,
            "dispatcher_error_backoff_ms": 1, "leak_check_interval_ms": 2, "state_maintainer_interval_ms": 1,
            "flush_file_interval": 1, "check_point_interval": 5}
    c = group(seed=15, delay_ms=(0, 1), **tiny)
    leader = wait_settled(c, timeout_ms=500)
    futures = [c.put(b"tiny %d" % i, wait=False, via=leader) for i in range(5)]
    assert c.run_until(lambda c: all(f.done for f in futures), 200)
    assert [f.code for f in futures] == [Code.SUCCESS] * 5
    c.crash(leader)
    assert c.run_until(lambda c: quorum_leader(c) not in (None, leader), 500)
