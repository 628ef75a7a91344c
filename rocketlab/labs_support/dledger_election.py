"""Helpers for ``labs/03_dledger_election.ipynb``: DLedger's leader election, step by step.

Every helper builds its own :class:`~rocketlab.sim.Cluster` from a seed (or reads a cluster's trace) and
returns plain data the notebook prints or plots, so a cell stays one line and the test suite can check
what the prose claims. The decision tables themselves live in
:mod:`rocketlab.dledger.elector_decisions`; the only decision logic here is
:func:`decide_vote_release_0_1`, DLedger 0.1's order of handleVote's checks, kept for the lab's
"what changed in 0.2.0" comparison.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from rocketlab.dledger.elector_decisions import (
    VOTE_CHECKS,
    VOTE_ROUND_RULES,
    VoteDecision,
    VoteEffect,
    VoteView,
)
from rocketlab.dledger.protocol import VoteRequest, VoteResult
from rocketlab.i18n import _
from rocketlab.scenarios import figure16
from rocketlab.scenarios.dledger_group import settled_leader, wait_settled
from rocketlab.sim import Cluster
from rocketlab.trace.recorder import describe
from rocketlab.viz.figures.figure16 import downtime_cdf, range_styles
from rocketlab.viz.graphs import NO_ANSWER, vote_graph, vote_terms
from rocketlab.viz.style import BAR_EDGE, base_layout, series_colors, series_pattern

Event = Mapping[str, Any]
LATENCY = "uniform:10:40"


def group(seed: int, *, nodes: int = 5, profile: str = "dledger-0.3.1.2", **kwargs: Any) -> Cluster:
    """A DLedger group with Java's default timers and the viewer's latency (memory stores)."""
    return Cluster.dledger(nodes=nodes, seed=seed, profile=profile, memory=True,
                           latency=kwargs.pop("latency", LATENCY), **kwargs)


# ---------------------------------------------------------------------- who leads, with whose votes
def votes_for(events: Iterable[Event], candidate: str, term: int) -> list[str]:
    """The members that answered ACCEPT to ``candidate`` in ``term`` (itself included)."""
    return sorted({e["voter"] for e in events if e["kind"] == "vote_response" and e["candidate"] == candidate
                   and e["term"] == term and e["result"] == "ACCEPT"})


def who_leads(c: Cluster) -> str:
    """One line: the settled leader, its term, since when, and the votes that made it."""
    leader = settled_leader(c)
    if leader is None:
        alive = c.live_nodes()
        return _("t={t} ms: no leader; alive {alive} ({n} of {of}), roles {roles}").format(
            t=c.now_ms, alive=", ".join(alive), n=len(alive), of=len(c.node_ids),
            roles=", ".join(f"{n} {c.node(n).role}" for n in alive))
    term = c.node(leader).term
    since = max(e["t"] for e in c.events if e["kind"] == "role" and e["node"] == leader and e["role"] == "LEADER")
    votes = votes_for(c.events, leader, term)
    need = len(c.node_ids) // 2 + 1
    return _("t={t} ms: {leader} leads term {term} since t={since} ms, elected by {voters} ({n} votes; a majority "
             "of {members} is {need})").format(t=c.now_ms, leader=leader, term=term, since=since,
                                               voters=", ".join(votes), n=len(votes), members=len(c.node_ids), need=need)


def story(events: Iterable[Event], since_ms: int = 0, until_ms: int | None = None,
          kinds: Sequence[str] = ("fault", "role", "term", "vote_round")) -> list[str]:
    """The trace lines of ``kinds`` in ``[since_ms, until_ms]``, one :func:`describe` line each."""
    return [describe(e) for e in events if e["kind"] in kinds and e["t"] >= since_ms
            and (until_ms is None or e["t"] <= until_ms)]


# ---------------------------------------------------------------------- the decision tables
def vote_checks_table() -> pd.DataFrame:
    """handleVote's checks in their 0.2.0+ order: number, answer, meaning."""
    rows = [{"check": n, "answer": result, "when": _(text)} for result, (n, text) in VOTE_CHECKS.items()]
    return pd.DataFrame(rows).sort_values("check", kind="stable").set_index("check")


def vote_round_rules_table() -> pd.DataFrame:
    """The ParseResult table: rule, result, next vote time, meaning (first matching rule wins)."""
    results = {1: "WAIT_TO_VOTE_NEXT", 2: "WAIT_TO_REVOTE", 3: "WAIT_TO_REVOTE", 4: "WAIT_TO_REVOTE",
               5: "PASSED", 6: "REVOTE_IMMEDIATELY", 7: "WAIT_TO_VOTE_NEXT"}
    next_vote = {1: "300-1000 ms", 2: "300-1000 ms + 6 s", 3: "300-1000 ms", 4: "300-1000 ms + 1 s",
                 5: "-", 6: _("now, same term"), 7: "300-1000 ms"}
    return pd.DataFrame([{"rule": n, "result": results[n], "next vote": next_vote[n], "when": _(text)}
                         for n, text in VOTE_ROUND_RULES.items()]).set_index("rule")


def decide_vote_release_0_1(view: VoteView, request: VoteRequest, is_self: bool) -> VoteDecision:
    """handleVote as DLedger **0.1** ordered it (``release-0.1``): the term checks (5-7) before the log
    checks (3-4), and no check 9 (take leadership came in 0.2.0). Check numbers are the 0.2.0 ones, so
    the two orders can be compared; a lab helper, not used by the kit's elector."""
    r, t = VoteResult, view.curr_term
    if request.leader_id not in view.peers:
        return VoteDecision(1, r.REJECT_UNKNOWN_LEADER, t)
    if not is_self and request.leader_id == view.self_id:
        return VoteDecision(2, r.REJECT_UNEXPECTED_LEADER, t)
    if request.term < view.curr_term:
        return VoteDecision(5, r.REJECT_EXPIRED_VOTE_TERM, t)
    if request.term == view.curr_term:
        if view.curr_vote_for is not None and view.curr_vote_for != request.leader_id:
            return VoteDecision(6, r.REJECT_ALREADY_HAS_LEADER if view.leader_id is not None
                                else r.REJECT_ALREADY_VOTED, t)
    else:
        return VoteDecision(7, r.REJECT_TERM_NOT_READY, t, VoteEffect.STEP_DOWN)
    if request.ledger_end_term < view.ledger_end_term:
        return VoteDecision(3, r.REJECT_EXPIRED_LEDGER_TERM, t)
    if request.ledger_end_term == view.ledger_end_term and request.ledger_end_index < view.ledger_end_index:
        return VoteDecision(4, r.REJECT_SMALL_LEDGER_END_INDEX, t)
    if request.term < view.ledger_end_term:
        return VoteDecision(8, r.REJECT_TERM_SMALL_THAN_LEDGER, view.ledger_end_term)
    return VoteDecision(10, r.ACCEPT, t, VoteEffect.GRANT)


def rules_seen(events: Iterable[Event]) -> pd.DataFrame:
    """How often each ParseResult rule decided a vote round in a trace."""
    counts = Counter((e["rule"], e["result"]) for e in events if e["kind"] == "vote_round")
    rows = [{"rule": rule, "result": result, "rounds": n, "when": _(VOTE_ROUND_RULES[rule])}
            for (rule, result), n in sorted(counts.items())]
    return pd.DataFrame(rows, columns=["rule", "result", "rounds", "when"])


def answers_seen(events: Iterable[Event]) -> pd.DataFrame:
    """How often each handleVote answer was given (the candidate's own vote included)."""
    counts = Counter(e["result"] for e in events if e["kind"] == "vote_response")
    rows = [{"check": VOTE_CHECKS[r][0] if r in VOTE_CHECKS else None, "answer": r, "answers": n}
            for r, n in counts.items()]
    table = pd.DataFrame(rows, columns=["check", "answer", "answers"]).astype({"check": "Int64"})
    return table.sort_values(["check", "answer"]).reset_index(drop=True)  # check numbers as integers, <NA> for none


def votes_by_term(events: Sequence[Event]) -> pd.DataFrame:
    """Per term and candidate, from :func:`rocketlab.viz.vote_graph`: when it first asked, how many rounds
    it ran in that term, who granted the vote, who refused (with the last answer), who answered
    REJECT_TERM_NOT_READY first (and was asked again: section 4's round), who never answered, and
    whether it was elected. One term can hold several elections (DLedger re-votes in its term): the
    ``first asked at`` column tells them apart."""
    rows = []
    asked: dict[tuple[int, str], list[int]] = {}
    for e in events:
        if e.get("kind") == "vote_request":
            asked.setdefault((e.get("term"), str(e.get("candidate"))), []).append(e["t"])
    for term in vote_terms(events):
        graph = vote_graph(events, term)
        for candidate, attrs in sorted(graph.nodes(data=True)):
            if not attrs["candidate"]:
                continue
            out = graph.out_edges(candidate, data=True)
            times = asked.get((term, candidate), [0])
            rows.append({"term": term, "candidate": candidate, "first asked at (ms)": min(times),
                         "rounds": max((d["requests"] for _, _, d in out), default=0),
                         "granted by": ", ".join(sorted(v for _, v, d in out if d["granted"])),
                         "refused by": ", ".join(sorted(f"{v} ({d['result']})" for _, v, d in out
                                                        if not d["granted"] and d["result"] != NO_ANSWER)),
                         "NOT_READY first": ", ".join(sorted(v for _, v, d in out if d["results"][:1]
                                                             == [VoteResult.REJECT_TERM_NOT_READY.name])),
                         "no answer": ", ".join(sorted(v for _, v, d in out if d["result"] == NO_ANSWER)),
                         "elected": attrs["elected"]})
    return pd.DataFrame(rows, columns=["term", "candidate", "first asked at (ms)", "rounds", "granted by",
                                       "refused by", "NOT_READY first", "no answer", "elected"])


# ---------------------------------------------------------------------- terms
def no_majority(seed: int, *, profile: str = "dledger-0.3.1.2", nodes: int = 5, crashed: int = 3,
                for_ms: int = 30_000) -> dict[str, Any]:
    """Crash the leader and ``crashed - 1`` followers; what the survivors' terms and vote rounds do."""
    c = group(seed, nodes=nodes, profile=profile)
    try:
        leader = wait_settled(c, timeout_ms=30_000)
        victims = [leader, *[n for n in c.node_ids if n != leader][:crashed - 1]]
        survivors = [n for n in c.node_ids if n not in victims]
        before = {n: c.node(n).term for n in survivors}
        c.crash(*victims)
        t0 = c.now_ms
        c.run_for(for_ms)
        rounds = Counter(e["rule"] for e in c.events if e["kind"] == "vote_round" and e["t"] >= t0)
        return {"profile": profile, "crashed": victims, "survivors": survivors, "terms_before": before,
                "terms_after": {n: c.node(n).term for n in survivors}, "leader": c.leader(),
                "rounds_by_rule": dict(sorted(rounds.items())), "for_ms": for_ms}
    finally:
        c.close()


def isolated_member(seed: int, *, profile: str = "dledger-0.3.1.2", isolate_ms: int = 20_000,
                    after_ms: int = 10_000) -> dict[str, Any]:
    """Cut a follower off for ``isolate_ms``, heal, and see whether the group's leader survives it."""
    c = group(seed, nodes=3, profile=profile, config={"election_timeout_min_ms": 150,
                                                       "election_timeout_max_ms": 300}
              if profile == "raft" else None)
    try:
        leader = wait_settled(c, timeout_ms=30_000)
        lonely = next(n for n in c.node_ids if n != leader)
        term_before = c.node(lonely).term
        c.isolate(lonely)
        c.run_for(isolate_ms)
        term_isolated = c.node(lonely).term
        heal_ms = c.now_ms
        c.heal()
        c.run_for(after_ms)
        after = settled_leader(c)
        changes = [e for e in c.events if e["kind"] == "role" and e["t"] >= heal_ms and e["role"] == "LEADER"]
        return {"profile": profile, "leader": leader, "isolated": lonely, "term_before": term_before,
                "term_while_isolated": term_isolated, "isolated_ms": isolate_ms, "leader_after_heal": after,
                "term_after_heal": c.node(after).term if after else None, "elections_after_heal": len(changes)}
    finally:
        c.close()


# ---------------------------------------------------------------------- split votes and waits
def revote_waits(events: Sequence[Event]) -> pd.DataFrame:
    """After every vote round that did not pass: how long the candidate waited before its next round,
    with the rule that decided the round (rule 6 re-votes at once, rules 1/3/7 wait 300-1000 ms...)."""
    requests: dict[str, list[int]] = {}
    for e in events:
        if e["kind"] == "vote_request" and e["voter"] == e["candidate"]:
            requests.setdefault(e["candidate"], []).append(e["t"])
    rows = []
    for e in events:
        if e["kind"] != "vote_round" or e["result"] == "PASSED":
            continue
        later = [t for t in requests.get(e["node"], []) if t > e["t"]]
        if later:
            rows.append({"node": e["node"], "t": e["t"], "term": e["term"], "rule": e["rule"],
                         "result": e["result"], "wait_ms": later[0] - e["t"]})
    return pd.DataFrame(rows, columns=["node", "t", "term", "rule", "result", "wait_ms"])


def first_elections(seeds: Iterable[int], *, nodes: int = 5, profile: str = "dledger-0.3.1.2"
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Start a group per seed until it settles: (one row per seed, every re-vote wait of every seed)."""
    rows, waits = [], []
    for seed in seeds:
        c = group(seed, nodes=nodes, profile=profile)
        try:
            leader = wait_settled(c, timeout_ms=60_000)
            rounds = [e for e in c.events if e["kind"] == "vote_round"]
            rows.append({"seed": seed, "leader": leader, "term": c.node(leader).term,
                         "elected_ms": next(e["t"] for e in c.events if e["kind"] == "role"
                                            and e["role"] == "LEADER"),
                         "vote_rounds": len(rounds), "split_rounds": sum(e["rule"] == 7 for e in rounds)})
            w = revote_waits(c.events)
            waits.append(w.assign(seed=seed))
        finally:
            c.close()
    return pd.DataFrame(rows), pd.concat(waits, ignore_index=True) if waits else pd.DataFrame()


def waits_histogram(waits: pd.DataFrame) -> go.Figure:
    """Histogram of the re-vote waits by rule: each rule its colour of the kit's palette and its pattern
    (the second cue), not plotly's default colours."""
    fig = go.Figure()
    groups = list(waits.groupby("rule"))
    colors = series_colors([str(rule) for rule, _ in groups])
    for i, (rule, part) in enumerate(groups):
        fig.add_trace(go.Histogram(x=part["wait_ms"], name=_("rule {rule}: {result}").format(rule=rule, result=part["result"].iloc[0]),
                                   xbins={"start": 0, "end": 1100, "size": 50},
                                   marker=dict(color=colors[str(rule)], line=BAR_EDGE,
                                               pattern=series_pattern(i))))
    base_layout(fig, _("Waits before the next vote round ({n} rounds)").format(n=len(waits)), 380)
    fig.update_layout(barmode="stack", xaxis_title=_("wait after a failed round (ms)"), yaxis_title=_("rounds"))
    return fig


def waits_by_rule(waits: pd.DataFrame, *, bin_ms: int = 50) -> list[str]:
    """What the waits histogram shows, per rule: how many waits, the busiest ``bin_ms`` bin (the
    histogram's mode) and the shortest and longest wait."""
    lines = []
    for rule, part in waits.groupby("rule"):
        busiest = int((part["wait_ms"] // bin_ms * bin_ms).value_counts().idxmax())
        lines.append(_("rule {rule} ({result}): {n} waits, busiest {bin} ms bin {lo}-{hi} ms, shortest {shortest} ms, "
                       "longest {longest} ms").format(
            rule=rule, result=part["result"].iloc[0], n=len(part), bin=bin_ms, lo=busiest, hi=busiest + bin_ms,
            shortest=part["wait_ms"].min(), longest=part["wait_ms"].max()))
    return lines


# ---------------------------------------------------------------------- heartbeats
def heart_beat_leak(seed: int, *, into_interval_ms: int = 1_000) -> dict[str, Any]:
    """Crash the leader ``into_interval_ms`` after one of its heartbeats; when did each follower last
    hear it, and when did it give up (maxHeartBeatLeak x heartBeatTimeIntervalMs later)?"""
    c = group(seed)
    try:
        leader = wait_settled(c, timeout_ms=30_000)
        c.run_for(c.node(leader).config.heart_beat_time_interval_ms)
        sent = max(e["t"] for e in c.events if e["kind"] == "msg_send" and e["src"] == leader
                   and e["msg"] == "HeartBeatRequest")
        c.run_for(max(0, sent + into_interval_ms - c.now_ms))
        crash_ms = c.now_ms
        c.crash(leader)
        new = wait_settled(c, timeout_ms=30_000)
        rows = []
        for n in c.node_ids:
            if n == leader:
                continue
            gave_up = next(e["t"] for e in c.events if e["kind"] == "role" and e["node"] == n
                           and e["t"] > crash_ms and e["role"] == "CANDIDATE")
            heard = max(e["t"] for e in c.events if e["kind"] == "msg_recv" and e["src"] == leader
                        and e["dst"] == n and e["msg"] == "HeartBeatRequest" and e["t"] < gave_up)
            rows.append({"follower": n, "last_heartbeat_ms": heard, "candidate_at_ms": gave_up,
                         "silence_ms": gave_up - heard})
        elected = next(e["t"] for e in c.events if e["kind"] == "role" and e["node"] == new and e["role"] == "LEADER"
                       and e["t"] > crash_ms)
        cfg = c.node(new).config
        return {"leader": leader, "crash_ms": crash_ms, "followers": pd.DataFrame(rows), "new_leader": new,
                "elected_ms": elected, "failover_ms": elected - crash_ms,
                "leak_ms": cfg.max_heart_beat_leak * cfg.heart_beat_time_interval_ms}
    finally:
        c.close()


def leader_cut_off(seed: int, *, lead_for_ms: int = 3_000) -> dict[str, Any]:
    """Isolate the leader ``lead_for_ms`` after it was elected: it keeps leading until no quorum has
    answered its heartbeats for the leak time, then steps down - to candidate, in the same term.

    With ``lead_for_ms=0`` it has never had a successful heartbeat round: ``lastSuccHeartBeatTime`` is
    still -1, which against Java's epoch clock is decades ago, so its first failed round steps it down."""
    c = group(seed)
    try:
        leader = wait_settled(c, timeout_ms=30_000)
        c.run_for(lead_for_ms)
        term = c.node(leader).term
        t0 = c.now_ms
        c.isolate(leader)
        c.run_until(lambda c: c.node(leader).role != "LEADER", timeout_ms=30_000)
        return {"leader": leader, "isolated_at_ms": t0, "stepped_down_after_ms": c.now_ms - t0,
                "role_now": c.node(leader).role, "term_before": term, "term_now": c.node(leader).term,
                "others": story(c.events, t0, kinds=("role",))}
    finally:
        c.close()


# ---------------------------------------------------------------------- leadership transfer
def transfer(seed: int, *, to_last: bool = True) -> dict[str, Any]:
    """Ask the leader to hand over to another member (LeadershipTransferRequest) and time it."""
    c = group(seed)
    try:
        leader = wait_settled(c, timeout_ms=30_000)
        c.put(b"before the transfer")
        target = [n for n in c.node_ids if n != leader][-1 if to_last else 0]
        term = c.node(leader).term
        t0 = c.now_ms
        c.transfer_leadership(target)
        c.run_until(lambda c: settled_leader(c) == target, timeout_ms=10_000)
        new_term = c.node(target).term
        moved = next(e["t"] for e in c.events if e["kind"] == "term" and e["node"] == target and e["term"] == new_term)
        asked = next(e["t"] for e in c.events if e["kind"] == "vote_request" and e["candidate"] == target
                     and e["voter"] == target and e["term"] == new_term)
        return {"from": leader, "to": target, "term_before": term, "moved_after_ms": moved - t0,
                "first_round_after_ms": asked - moved,
                "leader_now": settled_leader(c), "term_now": new_term, "took_ms": c.now_ms - t0,
                "lines": story(c.events, t0, kinds=("fault", "role", "term", "vote_round"))}
    finally:
        c.close()


def preferred_leader(seed: int, preferred: str, *, for_ms: int = 10_000) -> dict[str, Any]:
    """A group configured with ``preferredLeaderIds``: who is elected first, and who leads after."""
    c = group(seed, config={"preferred_leader_ids": preferred})
    try:
        first = wait_settled(c, timeout_ms=30_000)
        c.run_for(for_ms)
        leaders = [(e["t"], e["node"], e["term"]) for e in c.events if e["kind"] == "role" and e["role"] == "LEADER"]
        return {"preferred": preferred, "first_leader": first, "leader_now": settled_leader(c),
                "leaders": leaders}
    finally:
        c.close()


# ---------------------------------------------------------------------- Raft's Figure 16
def figure16_runs(trials: int, *, ranges: Sequence[tuple[int, int]] = figure16.RANGES_TOP + figure16.RANGES_BOTTOM,
                  no_randomness_trials: int | None = None, timeout_ms: int = 20_000) -> pd.DataFrame:
    """A small Figure 16 sweep on the ``raft`` profile (``trials`` seeds per range; the 150-150 range
    gets ``no_randomness_trials``, default a tenth, as the paper ran 100 instead of 1000)."""
    flat_trials = no_randomness_trials if no_randomness_trials is not None else max(2, trials // 10)
    rows = []
    for lo, hi in dict.fromkeys(ranges):
        rows += figure16.figure16_sweep([(lo, hi)], flat_trials if lo == hi else trials, timeout_ms=timeout_ms)
    return pd.DataFrame(rows)


#: One detail of the Figure 16 set-up changed at a time (``figure16_trial`` keyword arguments).
FIGURE16_WHAT_IF: dict[str, dict[str, Any]] = {
    "the kit's set-up": {},
    "no candidate disk write": {"candidate_persist": (0, 0)},
    "replies of 13-15 ms": {"reply_latency": "uniform:13:16"},
}


def figure16_what_if(trials: int = 100) -> pd.DataFrame:
    """150-155's median and 12-24's mean downtime (the paper's 287 ms and 35 ms) under the kit's Figure 16
    set-up and with one detail of it changed (:data:`FIGURE16_WHAT_IF`), ``trials`` seeds each."""
    rows = []
    for name, kwargs in FIGURE16_WHAT_IF.items():
        narrow = [figure16.figure16_trial(150, 155, s, **kwargs)["downtime_ms"] for s in range(1, trials + 1)]
        short = [figure16.figure16_trial(12, 24, s, **kwargs)["downtime_ms"] for s in range(1, trials + 1)]
        rows.append({"set-up": name, "150-155 median ms": statistics.median(narrow),
                     "12-24 mean ms": round(statistics.fmean(short), 1), "trials": trials})
    return pd.DataFrame(rows).set_index("set-up")


def dledger_contrast(trials: int, *, profile: str = "dledger-0.3.2") -> pd.DataFrame:
    """The same trial on DLedger's elector with its own timers (Java defaults, and scaled down)."""
    return pd.DataFrame([figure16.dledger_trial(timers, seed, profile=profile)
                         for timers in figure16.DLEDGER_TIMERS for seed in range(1, trials + 1)])


def figure16_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per range: trials, mean, median, p95, max, min downtime (ms), trials without a leader in time,
    share of trials that needed more than one term."""
    summary = figure16.summarize_trials(rows.to_dict("records"))
    return pd.DataFrame.from_dict(summary, orient="index").round(1)


def figure16_scale(rows: pd.DataFrame) -> pd.DataFrame:
    """Figure 16's bottom graph in numbers, per range of ``RANGES_BOTTOM`` that ``rows`` has (shortest first): the
    mean downtime, that mean as a multiple of the range's shortest timeout, and the share of trials that took more
    than one term. A vote round takes 9-13 ms (:data:`~rocketlab.scenarios.figure16.CANDIDATE_PERSIST_MS` plus
    :data:`~rocketlab.scenarios.figure16.REPLY_LATENCY`): the nearer a range comes to it, the bigger the multiple."""
    summary = figure16.summarize_trials(rows.to_dict("records"))
    table = [{"range": f"{lo}-{hi}", "mean (ms)": round(s["mean"]), "mean / shortest timeout": round(s["mean"] / lo, 1),
              "more than one term": s["more_than_one_term"]}
             for lo, hi in figure16.RANGES_BOTTOM if (s := summary.get(f"{lo}-{hi}"))]
    return pd.DataFrame(table).set_index("range")


def paper_beside_ours(rows: pd.DataFrame) -> pd.DataFrame:
    """The numbers the paper states, next to ours for the same range and statistic."""
    return pd.DataFrame(figure16.stated_beside_ours(figure16.summarize_trials(rows.to_dict("records"))))


def figure16_cdf(rows: pd.DataFrame, ranges: Sequence[tuple[int, int]], *, log_x: bool, title: str) -> go.Figure:
    """Figure 16's plot: per timeout range, the share of trials with downtime <= x (see :func:`downtime_cdf`)."""
    curves = [(f"{lo}-{hi} ms", rows[(rows["lo"] == lo) & (rows["hi"] == hi)]) for lo, hi in ranges]
    return downtime_cdf(curves, log_x=log_x, title=title, floor_ms=min(lo for lo, _ in ranges) / 2,
                        styles=range_styles())


# ---------------------------------------------------------------------- the lines the lab prints
def no_majority_lines(nm: Mapping[str, Any]) -> str:
    """What :func:`no_majority` found: who crashed, the survivors' terms, their vote rounds by rule."""
    return "\n".join([
        _("crashed {crashed}; leader after {s} s: {leader}").format(crashed=nm["crashed"], s=nm["for_ms"] // 1000,
                                                                    leader=nm["leader"]),
        _("survivors' terms before {before}, after {after}").format(before=nm["terms_before"], after=nm["terms_after"]),
        _("their vote rounds, by ParseResult rule: {rounds}").format(rounds=nm["rounds_by_rule"])])


def releases_lines(now: VoteDecision, then: VoteDecision) -> str:
    """One vote request decided by DLedger 0.2.0 and later (``now``) and by 0.1 (``then``)."""
    return "\n".join([_("0.2.0 and later: {decision}").format(decision=now),
                      _("0.1:             {decision}").format(decision=then)])


def isolated_lines(isolated: Mapping[str, Mapping[str, Any]]) -> str:
    """Per profile, what :func:`isolated_member` saw: the cut-off member's term, the elections after the heal."""
    return "\n".join(_("{profile:>15}: {member} cut off for {s} s: term {before} -> {during}; after the heal {n} new "
                       "election(s), {leader} leads term {term}").format(
        profile=profile, member=r["isolated"], s=r["isolated_ms"] // 1000, before=r["term_before"],
        during=r["term_while_isolated"], n=r["elections_after_heal"], leader=r["leader_after_heal"],
        term=r["term_after_heal"]) for profile, r in isolated.items())


def first_elections_lines(starts: pd.DataFrame, winner_waits: pd.Series) -> str:
    """How soon :func:`first_elections`'s groups elected, and the wait before each winning round beside the
    expected smallest of five uniform [300, 1000) draws."""
    return "\n".join([
        _("{n} group starts: first leader after {median:.0f} ms (median), {split:.1f} split rounds per start").format(
            n=len(starts), median=starts.elected_ms.median(), split=starts.split_rounds.mean()),
        _("wait before the winning round: mean {mean:.0f} ms, smallest of five uniform [300, 1000) draws: "
          "300 + 700/6 = {expected:.0f} ms expected").format(mean=winner_waits.mean(), expected=300 + 700 / 6)])


def heart_beat_leak_lines(leak: Mapping[str, Any]) -> str:
    """What :func:`heart_beat_leak` found: the crash, each follower's silence (a table), the failover."""
    return "\n".join([
        _("leader {leader} crashed at t={t} ms; maxHeartBeatLeak x interval = {leak} ms").format(
            leader=leak["leader"], t=leak["crash_ms"], leak=leak["leak_ms"]),
        leak["followers"].to_string(index=False),
        _("{leader} leads at t={t} ms: {without} ms without a leader").format(
            leader=leak["new_leader"], t=leak["elected_ms"], without=leak["failover_ms"])])


def cut_off_lines(cut: Mapping[str, Any], fresh: Mapping[str, Any]) -> str:
    """Two :func:`leader_cut_off` runs: a leader that had led a while (``cut``), one just elected (``fresh``)."""
    return "\n".join([
        _("{leader} isolated at t={t} ms: {role} after {after} ms, term {before} -> {now}").format(
            leader=cut["leader"], t=cut["isolated_at_ms"], role=cut["role_now"], after=cut["stepped_down_after_ms"],
            before=cut["term_before"], now=cut["term_now"]),
        _("a leader isolated right after its election: {role} after {after} ms").format(
            role=fresh["role_now"], after=fresh["stepped_down_after_ms"])])


def transfer_lines(tr: Mapping[str, Any]) -> str:
    """What :func:`transfer` timed, then its trace lines."""
    return "\n".join([
        _("{source} -> {target}: {leader} leads term {term} (was {before}) after {took} ms").format(
            source=tr["from"], target=tr["to"], leader=tr["leader_now"], term=tr["term_now"], before=tr["term_before"],
            took=tr["took_ms"]),
        _("{target} moved to term {term} {moved} ms after the request; its first vote round came {first} ms "
          "later").format(target=tr["to"], term=tr["term_now"], moved=tr["moved_after_ms"],
                          first=tr["first_round_after_ms"]),
        *tr["lines"]])


def preferred_lines(pref: Mapping[str, Any]) -> str:
    """What :func:`preferred_leader` saw: who was elected first, who leads now, every leader change."""
    return "\n".join([
        _("preferredLeaderIds={preferred}: first elected {first}, leading now {now}").format(
            preferred=pref["preferred"], first=pref["first_leader"], now=pref["leader_now"]),
        _("leaders (t ms, member, term): {leaders}").format(leaders=pref["leaders"])])


def vote_terms_line(terms: Sequence[int]) -> str:
    """The terms a trace has votes in (one vote graph each follows)."""
    return _("terms with votes: {terms}").format(terms=terms)


def beside_lines(beside: pd.DataFrame, rows: pd.DataFrame) -> str:
    """:func:`paper_beside_ours` as lines, and how many 150-150 trials (no randomness) elected a leader in time."""
    lines = [_("{range:>8} {statistic:>6}: paper {paper:>6} ms ({says}); ours {ours:>7.0f} ms over {trials} "
               "trials").format(range=r.range, statistic=r.statistic, paper=r.paper_ms, says=r.paper_says,
                                ours=r.ours_ms, trials=r.trials) for r in beside.itertuples()]
    flat = rows[rows.range == "150-150"]
    lines.append(_("150-150: {elected} of {n} trials elected a leader within 20 s").format(
        elected=int(flat.elected.sum()), n=len(flat)))
    return "\n".join(lines)


def what_if_lines(kit: pd.Series, no_write: pd.Series, slow: pd.Series) -> str:
    """:func:`figure16_what_if`'s rows read: 150-155's median without the candidate's disk write, and 12-24's
    mean with slower replies, beside the kit's set-up."""
    narrow, short = "150-155 median ms", "12-24 mean ms"
    lower = (_("without the candidate's disk write, 150-155's median is lower: {ours:.0f} ms instead of {kit:.0f} ms")
             if no_write[narrow] < kit[narrow] else
             _("without the candidate's disk write, 150-155's median is not lower: {ours:.0f} ms instead of "
               "{kit:.0f} ms"))
    return "\n".join([
        lower.format(ours=no_write[narrow], kit=kit[narrow]),
        _("with replies of 13-15 ms, 12-24's mean is {times:.1f} times the kit's: {mean:.0f} ms").format(
            times=slow[short] / kit[short], mean=slow[short])])
