"""DLedger's LeaderElectorTest, VoteRequestTest and HeartbeatRequestTest (digest 7.1) on the harness,
plus elector timing rules (failover, same-term step-down, restart in the persisted term)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.core import OutputBuilder, Reply
from rocketlab.dledger.protocol import DLedgerResponseCode, HeartBeatRequest, VoteRequest, VoteResult

from .harness import FAST, Harness

Code, R = DLedgerResponseCode, VoteResult
HB = FAST["heart_beat_time_interval_ms"]
LEAK = FAST["max_heart_beat_leak"] * HB


def ask(h: Harness, node_id: str, msg) -> object:
    """Deliver ``msg`` to ``node_id`` directly (from a test client) and return its immediate reply."""
    out = h.node(node_id).on_request("client", 999_999, msg, h.now)
    replies = [a.msg for a in out.actions if isinstance(a, Reply) and a.request_id == 999_999]
    h.apply(node_id, out.__class__(tuple(a for a in out.actions if not isinstance(a, Reply)), out.trace))
    assert len(replies) == 1, out
    return replies[0]


# ---------------------------------------------------------------------- LeaderElectorTest
@pytest.mark.parametrize("profile", ["rocketmq-4.9.5", "raft"])
def test_single_server_leads_and_comes_back_in_the_same_term(tmp_path: Path, profile):
    """LeaderElectorTest.testSingleServer: DLedger's restarted member votes in its stored term again; under
    ``raft`` it starts an election (term + 1, Raft's rule), and as the restarted leader, whose checkpoint
    did not survive the crash, appends a NOOP entry to commit its log."""
    h = Harness(["n0"], data_dir=tmp_path, config={"profile": profile}).start()
    h.run_until(lambda h: h.node("n0").role == "LEADER", 1000)
    term = h.node("n0").term
    futures = [h.append(b"m%d" % i) for i in range(10)]
    h.run_until(lambda h: all(f.done for f in futures), 1000)
    assert [f.code for f in futures] == [Code.SUCCESS] * 10 and [f.index for f in futures] == list(range(10))
    h.restart("n0")
    h.run_until(lambda h: h.node("n0").role == "LEADER", 1000)
    core = h.node("n0")
    assert core.term == (term if profile == "rocketmq-4.9.5" else term + 1)
    assert [e.body for e in core.entries(0, 9)] == [b"m%d" % i for i in range(10)]
    assert core.ledger_end_index == (9 if profile == "rocketmq-4.9.5" else 10)
    h.run_for(100)
    assert core.committed_index == core.ledger_end_index
    if profile == "raft":
        assert core.entries()[-1].is_noop


def test_three_servers_one_leader_and_forced_revotes(tmp_path: Path):
    """LeaderElectorTest.testThreeServer: one leader, two followers; testRevote moves leadership."""
    h = Harness(seed=3).start()
    leader = h.wait_stable()
    assert sorted(c.role for c in h.live().values()) == ["FOLLOWER", "FOLLOWER", "LEADER"]
    for k in range(10):
        target = h.ids[k % 3]
        for _attempt in range(3):  # a heartbeat of the current term landing within the next 10 ms tick
            max_term = max(c.term for c in h.live().values())  # turns the candidate back into a follower
            h.revote(target, max_term + 1)
            h.run_until(lambda h, t=target: h.leader() is not None and h.node(t).role != "CANDIDATE", 5000)
            if h.leader() == target:
                break
        assert h.leaders() == [target] and h.node(target).term == max_term + 1
    future = h.append(b"after revotes")
    h.run_until(lambda h: future.done, 2000)
    assert future.code is Code.SUCCESS and leader in h.ids


def test_restarting_followers_keeps_leader_and_term(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndRestartFollower."""
    h = Harness(seed=4, data_dir=tmp_path).start()
    leader = h.wait_leader()
    term = h.node(leader).term
    for follower in [i for i in h.ids if i != leader]:
        h.restart(follower)
        h.run_until(lambda h, f=follower: h.node(f).role == "FOLLOWER", 3000)
        assert h.leader() == leader and h.node(leader).term == term == h.node(follower).term


def test_killing_the_leader_elects_a_survivor(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndShutdownLeader: failover after the heartbeat leak."""
    h = Harness(seed=5).start()
    old = h.wait_leader()
    h.crash(old)
    crashed_at = h.now
    h.run_until(lambda h: h.leader() is not None, LEAK + 10 * HB)
    assert h.leader() != old and h.now - crashed_at > LEAK - HB


def test_leader_without_followers_steps_down_in_the_same_term():
    """LeaderElectorTest.testThreeServerAndShutdownFollowers: candidate within 4 intervals, term unchanged."""
    h = Harness(seed=6).start()
    leader = h.wait_leader()
    term = h.node(leader).term
    for f in [i for i in h.ids if i != leader]:
        h.crash(f)
    h.run_until(lambda h: h.node(leader).role == "CANDIDATE", 4 * HB + LEAK)
    h.run_for(20 * HB)
    assert h.node(leader).term == term and h.node(leader).role == "CANDIDATE"
    rounds = h.kinds("vote_round", leader)
    assert rounds and {r["result"] for r in rounds[-3:]} == {"WAIT_TO_REVOTE"}


def test_preferred_leader_takes_over_and_comes_back(tmp_path: Path):
    """LeaderElectorTest.testThreeServerAndPreferredLeader: leadership moves to n2 by transfer."""
    h = Harness(seed=7, data_dir=tmp_path, config={"preferred_leader_ids": "n2"}).start()
    h.run_until(lambda h: h.leader() == "n2", 5000)
    h.crash("n2")
    h.run_until(lambda h: h.leader() not in (None, "n2"), 5000)
    term = h.node(h.leader()).term
    h.start("n2")
    h.run_until(lambda h: h.leader() == "n2", 10_000)
    assert h.node("n2").term > term
    future = h.append(b"to the preferred leader")
    h.run_until(lambda h: future.done, 2000)
    assert future.code is Code.SUCCESS


# ---------------------------------------------------------------------- VoteRequestTest
def vote(h: Harness, voter: str, **fields) -> object:
    base = dict(group="default", remote_id=voter, local_id="client")
    return ask(h, voter, VoteRequest(**(base | fields)))


def test_vote_normal():
    """VoteRequestTest.testVoteNormal: every handleVote rejection a client can provoke."""
    h = Harness(seed=8, config={"profile": "rocketmq-4.9.5"}).start()
    leader = h.wait_stable()
    f = next(i for i in h.ids if i != leader and h.node(i).voted_for == leader)
    other = next(i for i in h.ids if i not in (leader, f))
    ms = h.node(f).member_state
    term, end, end_term = ms.curr_term, ms.ledger_end_index, ms.ledger_end_term
    same = dict(ledger_end_index=end, ledger_end_term=end_term)
    assert vote(h, f, leader_id="n9", term=term, **same).vote_result is R.REJECT_UNKNOWN_LEADER  # check 1
    assert vote(h, f, leader_id=leader, term=term, **same).vote_result is R.ACCEPT  # repeat vote: check 10
    assert vote(h, f, leader_id=f, term=term, **same).vote_result is R.REJECT_UNEXPECTED_LEADER  # check 2
    assert vote(h, f, leader_id=leader, term=term - 1, **same).vote_result is R.REJECT_EXPIRED_VOTE_TERM  # 5
    assert vote(h, f, leader_id=other, term=term, **same).vote_result is R.REJECT_ALREADY_HAS_LEADER  # check 6
    ms.ledger_end_term, ms.ledger_end_index = end_term + 1, 5
    assert vote(h, f, leader_id=leader, term=term, **same).vote_result is R.REJECT_EXPIRED_LEDGER_TERM  # check 3
    ms.ledger_end_term, ms.ledger_end_index = end_term, end + 1
    assert vote(h, f, leader_id=leader, term=term, **same).vote_result is R.REJECT_SMALL_LEDGER_END_INDEX  # 4
    ms.ledger_end_index = end
    response = vote(h, "n0", leader_id=leader, term=term, **same, remote_id="nX")
    assert response.code is Code.UNKNOWN_MEMBER and response.vote_result is R.UNKNOWN
    assert vote(h, f, leader_id=leader, term=term, **same, group="other").code is Code.UNKNOWN_GROUP


def test_vote_term_smaller_than_ledger():
    """VoteRequestTest.testVoteTermSmallThanLedger: check 8 answers with the ledger term."""
    h = Harness(["n0", "n1"], seed=9).start()
    leader = h.wait_leader()
    f = next(i for i in h.ids if i != leader)
    ms = h.node(f).member_state
    ms.ledger_end_term = ms.curr_term + 1
    r = vote(h, f, leader_id=leader, term=ms.curr_term, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_TERM_SMALL_THAN_LEDGER and r.term == ms.curr_term + 1


def test_vote_already_voted_then_node_still_elected():
    """VoteRequestTest.testVoteAlreadyVoted."""
    h = Harness(["n0", "n1", "n2"], seed=10).start()
    leader = h.wait_leader()
    f = next(i for i in h.ids if i != leader)
    other = next(i for i in h.ids if i not in (leader, f))
    ms = h.node(f).member_state
    h.node(f).elector.change_role_to_candidate(ms.curr_term + 1, h.now, OutputBuilder())
    ms.next_term()
    ms.set_curr_vote_for(other)
    r = vote(h, f, leader_id=leader, term=ms.curr_term, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_ALREADY_VOTED
    h.run_until(lambda h: h.leader() is not None and all(c.term >= ms.curr_term for c in h.live().values()), 5000)


def test_vote_higher_term_answers_not_ready_and_keeps_the_term():
    """handleVote, check 7: the voter becomes candidate but does not adopt the term yet."""
    h = Harness(seed=11).start()
    leader = h.wait_leader()
    f = next(i for i in h.ids if i != leader)
    ms = h.node(f).member_state
    term = ms.curr_term
    r = vote(h, f, leader_id=leader, term=term + 3, ledger_end_index=ms.ledger_end_index,
             ledger_end_term=ms.ledger_end_term)
    assert r.vote_result is R.REJECT_TERM_NOT_READY and ms.curr_term == term and ms.role.name == "CANDIDATE"
    assert ms.known_max_term_in_group == term + 3 and h.node(f).elector.need_increase_term_immediately


# ---------------------------------------------------------------------- HeartbeatRequestTest
def beat(h: Harness, node_id: str, leader: str, term: int) -> object:
    return ask(h, node_id, HeartBeatRequest(group="default", remote_id=node_id, local_id=leader, leader_id=leader,
                                            term=term))


def test_heartbeat_codes():
    """HeartbeatRequestTest.testHeartbeat (enable_leader_elector stays on)."""
    h = Harness(seed=12).start()
    leader = h.wait_stable()
    f = next(i for i in h.ids if i != leader)
    other = next(i for i in h.ids if i not in (leader, f))
    term = h.node(f).term
    assert beat(h, f, "n9", term).code is Code.UNKNOWN_MEMBER  # row 1
    assert beat(h, f, f, term).code is Code.UNEXPECTED_MEMBER  # row 2
    r = beat(h, f, leader, term - 1)
    assert (r.code, r.term) == (Code.EXPIRED_TERM, term)  # row 3
    assert beat(h, f, other, term).code is Code.INCONSISTENT_LEADER  # row 8
    assert beat(h, f, leader, term).code is Code.SUCCESS  # row 4
    assert beat(h, f, leader, term + 1).code is Code.TERM_NOT_READY  # row 9
    h.run_for(FAST["min_vote_interval_ms"] // 3)
    assert h.node(f).term == term + 1
    assert beat(h, f, leader, term + 1).code is Code.SUCCESS  # row 6: follower of the term+1 leader
    assert h.node(f).role == "FOLLOWER"


@pytest.mark.parametrize("profile", ["raft", "rocketmq-4.9.5"])
def test_restarted_node_votes_in_its_persisted_term_and_rejoins_without_bump(tmp_path: Path, profile):
    """Digest 3.4 'startup consequence': REJECT_ALREADY_HAS_LEADER, then the leader's heartbeat."""
    h = Harness(seed=13, data_dir=tmp_path, config={"profile": profile}).start()
    leader = h.wait_leader()
    term = h.node(leader).term
    f = next(i for i in h.ids if i != leader)
    h.restart(f)
    h.run_until(lambda h: h.node(f).role == "FOLLOWER", 3000)
    assert {c.term for c in h.live().values()} == {term} and h.leader() == leader


def test_taking_leadership_uses_the_short_vote_window():
    """isTakingLeadership (0.2.3+): preferred, and termToTakeLeadership == currTerm -> [30, 100) ms."""
    h = Harness(seed=14, config={"preferred_leader_ids": "n0", "min_take_leadership_vote_interval_ms": 3,
                                 "max_take_leadership_vote_interval_ms": 7}).start()
    elector = h.node("n0").elector
    ms = h.node("n0").member_state
    assert not elector.is_taking_leadership()
    ms.term_to_take_leadership = ms.curr_term
    assert elector.is_taking_leadership()
    assert all(3 <= elector.get_next_time_to_request_vote(1000) - 1000 < 7 for _ in range(50))
    h.node("n1").member_state.term_to_take_leadership = h.node("n1").term
    assert not h.node("n1").elector.is_taking_leadership()  # n1 is not a preferred leader


def test_a_cluster_runs_with_every_timer_at_a_few_milliseconds():
    tiny = {"heart_beat_time_interval_ms": 4, "min_vote_interval_ms": 1, "max_vote_interval_ms": 3,
            "vote_round_wait_base_ms": 2, "rpc_timeout_ms": 6, "max_push_time_out_ms": 3, "max_wait_ack_time_ms": 30,
            "push_commit_interval_ms": 2, "follower_push_timeout_ms": 2, "check_abnormal_future_interval_ms": 2,
            "dispatcher_error_backoff_ms": 1, "leak_check_interval_ms": 2, "state_maintainer_interval_ms": 1,
            "flush_file_interval": 1, "check_point_interval": 5}
    h = Harness(seed=15, config=tiny, delay_ms=(0, 1)).start()
    leader = h.wait_stable(500)
    futures = [h.append(b"tiny %d" % i) for i in range(5)]
    h.run_until(lambda h: all(f.done for f in futures), 200)
    assert [f.code for f in futures] == [Code.SUCCESS] * 5
    h.crash(leader)
    h.run_until(lambda h: h.leader() not in (None, leader), 500)
