"""Raft's Figure 16 trial (rocketlab.scenarios.figure16): its set-up holds on every seed, it is
deterministic, censoring and bad input behave, and the paper's numbers sit beside ours."""

from __future__ import annotations

import random

import pytest

from rocketlab.errors import ConfigError
from rocketlab.scenarios import figure16
from rocketlab.sim.network import Latency, NetworkModel

SEEDS = range(1, 13)


@pytest.mark.parametrize("lo,hi", [(150, 300), (150, 155), (12, 24)])
def test_every_trial_follows_the_papers_set_up(lo: int, hi: int):
    for seed in SEEDS:
        row = figure16.figure16_trial(lo, hi, seed)
        where = f"seed {seed}, {lo}-{hi}: {row}"
        assert row["elected"], where
        assert row["heart_beat_interval_ms"] == lo // 2, where           # heartbeat = half the minimum timeout
        assert 0 <= row["crash_offset_ms"] < row["heart_beat_interval_ms"], where
        assert len(row["ineligible"].split(",")) == 2, where              # two survivors cannot win...
        assert not row["new_leader_was_behind"], where                    # ...and never do
        assert row["new_leader"] != row["old_leader"] and row["terms"] >= 1, where
        # a follower times out no sooner than lo after the last heartbeat, which came `offset` before the crash
        assert row["elected_ms"] >= lo - row["crash_offset_ms"], where
        assert row["downtime_ms"] >= row["elected_ms"], where


def test_a_trial_is_deterministic_per_seed():
    assert figure16.figure16_trial(150, 200, 5) == figure16.figure16_trial(150, 200, 5)
    assert figure16.dledger_trial("scaled to 150-300", 3) == figure16.dledger_trial("scaled to 150-300", 3)


def test_no_randomness_is_censored_at_the_timeout_not_raised():
    rows = figure16.figure16_sweep([(150, 150)], 5, timeout_ms=3_000)
    stuck = [r for r in rows if not r["elected"]]
    assert stuck, "with 150-150 some seed should stay in step for 3 s (the figure's point)"
    for r in stuck:
        assert r["downtime_ms"] == 3_000 and r["new_leader"] is None and r["terms"] > 5
    summary = figure16.summarize_trials(rows)["150-150"]
    assert summary["no_leader"] == len(stuck) and summary["max"] == 3_000


def test_dledger_defaults_wait_for_three_missed_heartbeats():
    for seed in (1, 2, 3):
        row = figure16.dledger_trial("java defaults", seed)
        # a follower gives up 6 s after the last heartbeat, which came at most 2 s before the crash
        assert row["elected_ms"] >= 6_000 - 2_000, row
        assert not row["new_leader_was_behind"], row


def test_summary_and_the_papers_numbers():
    rows = [{"range": "150-155", "downtime_ms": d, "terms": t, "elected": True}
            for d, t in [(100, 1), (200, 2), (300, 1), (400, 3)]]
    s = figure16.summarize_trials(rows)["150-155"]
    assert (s["trials"], s["mean"], s["median"], s["max"], s["min"]) == (4, 250, 250, 400, 100)
    assert s["more_than_one_term"] == 0.5 and s["no_leader"] == 0
    beside = {(b["range"], b["statistic"]): b for b in figure16.stated_beside_ours({"150-155": s})}
    assert beside[("150-155", "median")]["paper_ms"] == 287 and beside[("150-155", "median")]["ours_ms"] == 250
    assert beside[("12-24", "mean")]["paper_ms"] == 35 and beside[("12-24", "mean")]["ours_ms"] is None
    assert beside[("150-200", "max")]["paper_ms"] == 513


@pytest.mark.parametrize("call,message", [
    (lambda: figure16.figure16_trial(200, 150, 1), "need 0 < lo <= hi"),
    (lambda: figure16.figure16_trial(0, 10, 1), "need 0 < lo <= hi"),
    (lambda: figure16.figure16_trial(150, 300, 1, nodes=2), "at least 3 servers"),
    (lambda: figure16.dledger_trial("fast please", 1), "unknown DLedger timers"),
    (lambda: figure16.dledger_trial("java defaults", 1, profile="raft"), "DLedger's elector"),
    (lambda: figure16.figure16_sweep([(150, 300)], 0), "trials must be at least 1"),
    (lambda: figure16.figure16_trial(150, 300, 1, candidate_persist=(5, 2)), "candidate disk write 5-2 ms"),
    (lambda: figure16.figure16_trial(150, 300, 1, candidate_persist=(-1, 2)), "need 0 <= low <= high"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


def test_replies_can_take_their_own_latency():
    model = figure16.figure16_network()
    rng = random.Random(1)
    requests = {model.request_delay(rng) for _ in range(200)}
    replies = {model.reply_delay(rng) for _ in range(200)}
    assert requests == {0} and replies == {7, 8, 9}
    assert model.describe()["reply_latency"] == "uniform:7:10"
    assert "reply_latency" not in NetworkModel.named("reliable", "uniform:1:3").describe()  # old traces unchanged
    same = NetworkModel.named("reliable", Latency.parse("constant:4"))
    assert same.reply_delay(rng) == same.request_delay(rng) == 4


@pytest.mark.slow
@pytest.mark.parametrize("lo,hi", figure16.RANGES_TOP[1:] + figure16.RANGES_BOTTOM)
def test_every_trial_follows_the_papers_set_up_sweep(lo: int, hi: int):
    for row in figure16.figure16_sweep([(lo, hi)], 200):
        assert row["elected"] and not row["new_leader_was_behind"], row
        assert row["elected_ms"] >= lo - row["crash_offset_ms"], row


def test_a_candidate_can_write_its_vote_to_disk_before_asking():
    """``candidate_persist_*``: the vote requests leave that many ms after the candidate's new term."""
    from rocketlab.sim.cluster import Cluster

    c = Cluster.dledger(nodes=3, seed=2, profile="raft", memory=True,
                        config={"candidate_persist_min_ms": 7, "candidate_persist_max_ms": 7})
    c.time_out("n0")
    c.run_for(100)
    term = next(e for e in c.events if e["kind"] == "term" and e["node"] == "n0")
    asked = next(e for e in c.events if e["kind"] == "vote_request" and e["candidate"] == "n0")
    assert asked["t"] - term["t"] == 7 and asked["term"] == term["term"]
    assert c.leader() == "n0"
    plain = Cluster.dledger(nodes=3, seed=2, profile="raft", memory=True)
    plain.time_out("n0")
    plain.run_for(100)
    first = next(e for e in plain.events if e["kind"] == "vote_request")
    assert first["t"] == next(e for e in plain.events if e["kind"] == "term")["t"]  # default: at once


def test_the_trials_candidates_write_their_vote_before_asking():
    """LogCabin's startNewElection persists term and vote before its RequestVote RPCs leave: 2-4 ms here."""
    waits = set()
    for seed in (1, 2, 3, 4):
        c = figure16._figure16_cluster(seed, "raft", {"election_timeout_min_ms": 150, "election_timeout_max_ms": 155,
                                                      "candidate_persist_min_ms": 2, "candidate_persist_max_ms": 4},
                                       5, figure16.REQUEST_LATENCY, figure16.REPLY_LATENCY)
        try:
            figure16.run_trial(c)
            started = {(e["node"], e["term"]): e["t"] for e in c.events if e["kind"] == "term" and "prev" in e}
            for e in c.events:
                if e["kind"] == "vote_request" and (e["candidate"], e["term"]) in started:
                    waits.add(e["t"] - started[(e["candidate"], e["term"])])
        finally:
            c.close()
    assert waits and waits <= {2, 3, 4}, waits
    plain = figure16.figure16_trial(150, 155, 1, candidate_persist=(0, 0))
    assert plain != figure16.figure16_trial(150, 155, 1)


@pytest.mark.parametrize("lo,hi,statistic,paper", [(150, 155, "median", 287), (12, 24, "mean", 35)])
def test_the_papers_central_numbers_on_300_trials(lo: int, hi: int, statistic: str, paper: int):
    """The two stated numbers that are not extremes, within 10 % on 300 seeds (about 3 s each). Ours over
    1,000 trials: 289 ms and 34.3 ms; without the candidate's disk write 150-155 falls to ~128 ms, with replies
    of 13-15 ms 12-24 rises to ~105 ms, so the tolerance separates the model from its neighbours. The full
    sweep (slow) checks all five numbers."""
    rows = figure16.figure16_sweep([(lo, hi)], 300)
    ours = figure16.summarize_trials(rows)[f"{lo}-{hi}"][statistic]
    assert abs(ours - paper) <= 0.10 * paper, f"{lo}-{hi} {statistic}: ours {ours} ms, paper {paper} ms"
