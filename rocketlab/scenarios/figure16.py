"""Raft's Figure 16 (Ongaro & Ousterhout, extended paper section 9.3) in the simulator.

The paper measures how long a 5-server cluster is without a leader after the leader crashes, against the
range the election timeouts are drawn from. Its set-up, which :func:`figure16_trial` follows:

* **5 servers**, broadcast time ("network round trip plus disk write") about **15 ms** on a LAN. Where those
  milliseconds go follows LogCabin, the paper's implementation (``RaftConsensus.cc`` as of December 2013):
  ``startNewElection`` writes the candidate's new term and vote to disk while holding the server's lock, so its
  RequestVote RPCs leave only after that write (:data:`CANDIDATE_PERSIST_MS`, 2-4 ms); a request crosses the
  gigabit LAN in well under the simulator's 1 ms resolution (:data:`REQUEST_LATENCY`, 0 ms); ``handleRequestVote``
  writes the voter's new term and its vote before it answers, so the reply carries the voter's disk time
  (:data:`REPLY_LATENCY`, 7-9 ms). A vote round therefore takes 9-13 ms, a little under the stated total, and
  a heartbeat reaches a follower at once. The split is ours: the paper and the thesis give only the 15 ms
  total. We chose it on a grid (candidate write 0-8 ms x reply 3-16 ms, 300 trials per range, then 1,000) as
  the one whose results land on the numbers the paper states (:data:`PAPER_STATED`; measured values and
  tolerances in ``tests/analysis/test_sweep.py``).
  What the grid shows is itself the lesson: with replies of 7-9 ms, the 150-155 median is set by the
  candidate's own write (none: 128 ms, 2-4 ms: 288 ms, 3-5 ms: 446 ms; the write is the window in which a
  second timer fires and splits the vote), and the 12-24 mean by the length of the whole round (with the
  2-4 ms write, replies of 7-9 ms: 34 ms, of 13-15 ms: 105 ms and a 530 ms worst case, because timers of 12-24
  ms fire before the votes come back);
* the group elects its first leader with the ``time out now`` control on ``n0`` (with 150-150 and
  identical start times no leader would ever be elected: that is the figure's point, but the trial
  needs a leader to crash);
* **different log lengths**: two of the four survivors cannot win (the thesis's set-up). Here the leader's
  pushes to two seed-chosen followers are dropped while it commits a few entries with the other two, so
  those two are behind by the leader's no-op and the entries and every voter rejects them
  (``REJECT_SMALL_LEDGER_END_INDEX``); their heartbeats still arrive, so they stay quiet followers;
* the leader **crashes at a uniformly random instant of its heartbeat interval**, right after a heartbeat
  broadcast (which synchronises the followers' timers and invites split votes); the heartbeat interval is
  half the minimum election timeout (the ``raft`` profile's ``leader_heart_beat_interval_ms``);
* measured: from the crash until **every survivor follows the new leader** (has received its first
  heartbeat: the thesis's definition), ``downtime_ms``; also until the winner becomes leader
  (``elected_ms``) and how many terms it took (``terms``; more than 1 means split or wasted votes).

The same trial runs on DLedger's own elector (``dledger-0.3.1.2`` / ``dledger-0.3.2``) for contrast: there
the "range" is not an election timeout; a follower gives up on its leader after ``maxHeartBeatLeak`` ×
``heartBeatTimeIntervalMs`` and then waits ``[minVoteIntervalMs, maxVoteIntervalMs)`` between rounds, so
:func:`dledger_trial` takes those timers as config instead.

Numbers the paper states (:data:`PAPER_STATED`) are the only exact ones; everything else in its figure is a
plotted CDF. rocketlab's addition: the whole experiment is deterministic per seed (a row names its seed).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.scenarios.dledger_group import settled_leader, wait_settled
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.network import Latency, NetworkModel

#: The paper's ranges (ms): the top graph (randomness) and the bottom graph (scale).
RANGES_TOP: tuple[tuple[int, int], ...] = ((150, 150), (150, 151), (150, 155), (150, 175), (150, 200), (150, 300))
RANGES_BOTTOM: tuple[tuple[int, int], ...] = ((12, 24), (25, 50), (50, 100), (100, 200), (150, 300))
#: A request crosses the LAN in well under the simulator's 1 ms resolution...
REQUEST_LATENCY = "constant:0"
#: ...a reply carries the responder's disk write (7-9 ms: ``uniform`` draws whole ms below its upper bound)...
REPLY_LATENCY = "uniform:7:10"
#: ...and a candidate writes its term and vote (2-4 ms) before it asks: a vote round of 9-13 ms.
CANDIDATE_PERSIST_MS: tuple[int, int] = (2, 4)
#: Trials per curve in the paper (100 for 150-150).
PAPER_TRIALS = 1000


@dataclass(frozen=True)
class StatedNumber:
    """One number the paper's text states (teaching-anchors section 5.3)."""

    lo: int
    hi: int
    statistic: str  # "median", "max", "mean" or "min" (150-150: "consistently > 10 s")
    value_ms: int
    says: str


PAPER_STATED: tuple[StatedNumber, ...] = (
    StatedNumber(150, 150, "min", 10_000, N_("election time consistently over 10 s (many split votes)")),
    StatedNumber(150, 155, "median", 287, N_("median downtime 287 ms")),
    StatedNumber(150, 200, "max", 513, N_("worst case over 1000 trials 513 ms")),
    StatedNumber(12, 24, "mean", 35, N_("mean 35 ms")),
    StatedNumber(12, 24, "max", 152, N_("longest trial 152 ms")),
)


def figure16_network(latency: str = REQUEST_LATENCY, reply_latency: str | None = REPLY_LATENCY) -> NetworkModel:
    """A reliable network whose replies may take longer than requests (see the module docstring)."""
    model = NetworkModel.named("reliable", latency)
    return replace(model, reply_latency=Latency.parse(reply_latency)) if reply_latency is not None else model


def _figure16_cluster(seed: int, profile: str, config: Mapping[str, Any], nodes: int, latency: str,
                      reply_latency: str | None) -> Cluster:
    if nodes < 3:
        raise ConfigError(f"Figure 16 needs at least 3 servers (two of them ineligible survivors), not {nodes}")
    c = Cluster.dledger(nodes=nodes, seed=seed, profile=profile, memory=True, config=dict(config),
                        network=figure16_network(latency, reply_latency), scenario="figure16")
    if c.node(c.node_ids[0]).config.raft_election:
        c.time_out(c.node_ids[0])
    return c


def _next_heart_beat_ms(c: Cluster, leader: str) -> int:
    """When ``leader`` broadcasts its next heartbeats (Raft's timer, or DLedger's lastSendHeartBeatTime)."""
    elector = c.node(leader).elector
    if hasattr(elector, "next_heart_beat_ms"):
        return elector.next_heart_beat_ms
    return elector.last_send_heart_beat_time + elector.config.heart_beat_time_interval_ms + 1


def run_trial(c: Cluster, *, writes: int = 3, stale: int = 2, timeout_ms: int = 60_000) -> dict[str, Any]:
    """Figure 16's trial on a fresh cluster ``c`` (see the module docstring); returns the metrics row.

    A trial whose survivors do not settle on a leader within ``timeout_ms`` of the crash is *censored*:
    ``downtime_ms`` is then ``timeout_ms`` (a lower bound) and ``elected`` False.
    """
    rng = random.Random(f"{c.seed}/figure16")
    leader = wait_settled(c, timeout_ms=60_000)
    followers = [n for n in c.node_ids if n != leader]
    behind = sorted(rng.sample(followers, min(stale, len(followers) - 1)))
    for n in behind:
        c.drop_next(leader, n, "PushEntryRequest", count=10**9)
    for i in range(writes):
        c.put(b"figure16 %d" % i)
    interval = c.node(leader).config.leader_heart_beat_interval_ms
    due = _next_heart_beat_ms(c, leader)
    c.run_for(max(0, due - c.now_ms))  # the broadcast happens at `due`
    offset = rng.randrange(max(interval, 1))
    c.run_for(offset)
    old_term = c.node(leader).term
    crash_ms = c.now_ms
    c.crash(leader)  # the drop rules name it as the sender: the new leader's pushes go through
    elected = c.run_until(lambda c: settled_leader(c) is not None, timeout_ms=timeout_ms)
    row = {"seed": c.seed, "sim_events": c.scheduler.events_run, "crash_offset_ms": offset,
           "heart_beat_interval_ms": interval, "old_leader": leader, "ineligible": ",".join(behind),
           "elected": elected}
    if not elected:
        top = max(c.node(n).term for n in c.live_nodes())
        return {**row, "new_leader": None, "new_leader_was_behind": False, "terms": top - old_term,
                "elected_ms": None, "downtime_ms": timeout_ms}
    new = settled_leader(c)
    won = next(e["t"] for e in reversed(c.events) if e["kind"] == "role" and e["node"] == new
               and e["role"] == "LEADER")
    return {**row, "new_leader": new, "new_leader_was_behind": new in behind,
            "terms": c.node(new).term - old_term, "elected_ms": won - crash_ms, "downtime_ms": c.now_ms - crash_ms}


def figure16_trial(lo: int, hi: int, seed: int, *, profile: str = "raft", nodes: int = 5,
                   latency: str = REQUEST_LATENCY, reply_latency: str | None = REPLY_LATENCY,
                   candidate_persist: tuple[int, int] = CANDIDATE_PERSIST_MS,
                   config: Mapping[str, Any] | None = None, timeout_ms: int = 60_000) -> dict[str, Any]:
    """One Figure 16 trial with election timeouts uniform in ``[lo, hi]`` ms under the ``raft`` profile; the
    candidate's disk write takes ``candidate_persist`` ms (``(0, 0)``: none; ``config`` may override)."""
    c = trial_cluster(lo, hi, seed, profile=profile, nodes=nodes, latency=latency, reply_latency=reply_latency,
                      candidate_persist=candidate_persist, config=config)
    try:
        return {"profile": profile, "range": f"{lo}-{hi}", "lo": lo, "hi": hi, **run_trial(c, timeout_ms=timeout_ms)}
    finally:
        c.close()


def trial_cluster(lo: int, hi: int, seed: int, *, profile: str = "raft", nodes: int = 5,
                  latency: str = REQUEST_LATENCY, reply_latency: str | None = REPLY_LATENCY,
                  candidate_persist: tuple[int, int] = CANDIDATE_PERSIST_MS,
                  config: Mapping[str, Any] | None = None) -> Cluster:
    """The fresh group a :func:`figure16_trial` runs on (same arguments), before :func:`run_trial`."""
    if not 0 < lo <= hi:
        raise ConfigError(f"election timeout range {lo}-{hi} ms: need 0 < lo <= hi")
    low, high = candidate_persist
    if not 0 <= low <= high:
        raise ConfigError(f"candidate disk write {low}-{high} ms: need 0 <= low <= high")
    cfg = {"election_timeout_min_ms": lo, "election_timeout_max_ms": hi,
           "candidate_persist_min_ms": low, "candidate_persist_max_ms": high, **(config or {})}
    return _figure16_cluster(seed, profile, cfg, nodes, latency, reply_latency)


#: DLedger's own timers (Java defaults) and the same shape scaled to Raft's 150-300 ms range.
DLEDGER_TIMERS: dict[str, dict[str, int]] = {
    "java defaults": {"heart_beat_time_interval_ms": 2000, "max_heart_beat_leak": 3,
                      "min_vote_interval_ms": 300, "max_vote_interval_ms": 1000},
    "scaled to 150-300": {"heart_beat_time_interval_ms": 50, "max_heart_beat_leak": 3,
                          "min_vote_interval_ms": 150, "max_vote_interval_ms": 300,
                          "vote_round_wait_base_ms": 150},
}


def dledger_trial(timers: str, seed: int, *, profile: str = "dledger-0.3.2", nodes: int = 5,
                  latency: str = REQUEST_LATENCY, reply_latency: str | None = REPLY_LATENCY) -> dict[str, Any]:
    """The same trial on DLedger's elector with the named :data:`DLEDGER_TIMERS`."""
    if timers not in DLEDGER_TIMERS:
        raise ConfigError(f"unknown DLedger timers {timers!r}; choose one of {sorted(DLEDGER_TIMERS)}")
    if profile == "raft":
        raise ConfigError("dledger_trial runs DLedger's elector; use figure16_trial for the raft profile")
    c = _figure16_cluster(seed, profile, DLEDGER_TIMERS[timers], nodes, latency, reply_latency)
    try:
        return {"profile": profile, "range": timers, "lo": None, "hi": None, **run_trial(c)}
    finally:
        c.close()


def figure16_sweep(ranges: Iterable[tuple[int, int]], trials: int, *, first_seed: int = 1,
                   profile: str = "raft", **kwargs: Any) -> list[dict[str, Any]]:
    """``trials`` seeds (``first_seed``..) per range, one row each (what a Spark sweep distributes)."""
    if trials < 1:
        raise ConfigError(f"trials must be at least 1, not {trials}")
    rows = []
    for lo, hi in ranges:
        for seed in range(first_seed, first_seed + trials):
            try:
                rows.append(figure16_trial(lo, hi, seed, profile=profile, **kwargs))
            except RocketlabError as e:
                raise RocketlabError(f"figure 16 trial {lo}-{hi} ms seed {seed}: {e}") from e
    return rows


def summarize_trials(rows: Iterable[Mapping[str, Any]], key: str = "downtime_ms") -> dict[str, dict[str, float]]:
    """Per range: trials, mean, median, 95th percentile, max and min of ``key`` (a censored trial counts
    with its lower bound), how many trials elected no leader in time, and the share that took more than
    one term (split votes, or an ineligible survivor's wasted term)."""
    by_range: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_range.setdefault(row["range"], []).append(row)
    out = {}
    for name, group in by_range.items():
        values = sorted(r[key] for r in group)
        p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
        out[name] = {"trials": len(values), "mean": statistics.fmean(values), "median": statistics.median(values),
                     "p95": p95, "max": values[-1], "min": values[0],
                     "no_leader": sum(not r["elected"] for r in group),
                     "more_than_one_term": sum(r["terms"] > 1 for r in group) / len(group)}
    return out


def stated_beside_ours(summary: Mapping[str, Mapping[str, float]]) -> list[dict[str, Any]]:
    """The paper's stated numbers next to the same statistic of ``summary`` (None where that range was not run)."""
    rows = []
    for s in PAPER_STATED:
        ours = summary.get(f"{s.lo}-{s.hi}")
        rows.append({"range": f"{s.lo}-{s.hi}", "statistic": s.statistic, "paper_ms": s.value_ms,
                     "paper_says": _(s.says), "ours_ms": None if ours is None else ours[s.statistic],
                     "trials": None if ours is None else ours["trials"]})
    return rows

