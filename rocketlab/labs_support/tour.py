"""Helpers for ``labs/00_tour.ipynb`` and ``rocketlab demo``: the tour's stories
(:mod:`rocketlab.scenarios.tour`) and the lab's tables, importable from one place, and the demo's HTML
report of the three runs (:func:`run_demo`), drawn here because scenarios sit below the figures.

Java analogues: none - the kit's own scripted demo.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.i18n import _
from rocketlab.scenarios.tour import (
    LATENCY,
    TOPIC,
    Tour,
    dledger_failover,
    has_master,
    master_slave_crash,
    median_latency_ms,
    readable_bodies,
    run_tour,
    steady_puts,
)
from rocketlab.sim import Cluster
from rocketlab.trace.rundir import fresh_dir
from rocketlab.viz import role_timeline, write_report

__all__ = [
    "LATENCY", "TOPIC", "Demo", "dledger_failover", "failover_breakdown", "failover_lines", "first_push_refused",
    "first_roles", "failover_rounds", "fresh_dir", "has_master", "layer_events", "master_slave_crash", "median_latency_ms",
    "new_leader_lines", "node_table", "put_round_trips", "commit_lines", "readable_bodies", "role_lines", "role_timelines",
    "round_trip_lines", "run_demo", "run_tour", "spark_runs_summary", "steady_puts", "titled", "vote_rounds_line",
    "write_tour_report",
]

LAYERS = {"DLedger": frozenset({"LEADER", "FOLLOWER", "CANDIDATE"}), "broker": frozenset({"MASTER", "SLAVE"})}
"""The two layers of a broker on DLedger: its DLedger member's role (``DLedgerLeaderElector``) and the
role ``DLedgerRoleChangeHandler`` gives the broker. Both are traced as ``role`` events of the same node."""


def node_table(cluster: Cluster) -> list[dict[str, Any]]:
    """One row per broker: up or down, its broker role and id, and (on DLedger) its member's state."""
    rows = []
    for node_id in cluster.node_ids:
        core = cluster.node(node_id)
        row: dict[str, Any] = {"node": node_id, "up": cluster.alive(node_id)}
        if core is not None:
            row.update({k: v for k, v in core.describe().items() if k not in ("node", "pending_puts")
                        and not isinstance(v, dict)})
        rows.append(row)
    return rows


def layer_events(events: list[dict[str, Any]], layer: str) -> list[dict[str, Any]]:
    """The trace with only ``layer``'s role events (``"DLedger"`` or ``"broker"``, :data:`LAYERS`), every
    other event kept: one layer per figure, instead of each role event overwriting the other layer's."""
    roles = LAYERS[layer]
    return [e for e in events if e.get("kind") != "role" or e.get("role") in roles]


def titled(fig: Any, prefix: str) -> Any:
    """``fig`` with ``prefix`` before its title (the title keeps what the figure computed)."""
    title = fig.layout.title.text or ""
    return fig.update_layout(title_text=f"{prefix}: {title}" if title else prefix)


def role_timelines(events: list[dict[str, Any]], until_ms: int | None = None) -> list[Any]:
    """Two role timelines (:func:`rocketlab.viz.role_timeline`), the DLedger layer's then the broker's, drawn
    to ``until_ms`` (the cluster's clock; the last event's time when ``None``), so that a role taken just
    before a quiet stretch shows as a bar and not as a sliver at the figure's edge."""
    return [titled(role_timeline(layer_events(events, layer), until_ms=until_ms), _("{layer} layer").format(layer=layer))
            for layer in LAYERS]


def failover_breakdown(cluster: Cluster, old: str, crash_ms: int) -> dict[str, int]:
    """Where a DLedger group's failover time goes, from the trace: the last heartbeat a survivor received
    from ``old`` before the crash, when the first survivor became CANDIDATE (``maxHeartBeatLeak``
    heartbeat intervals after that heartbeat), when one became LEADER, and when its broker became MASTER
    (``DLedgerRoleChangeHandler``). Times in ms of the run."""
    events = cluster.events
    beats = [e["t"] for e in events if e["kind"] == "msg_recv" and e.get("msg") == "HeartBeatRequest"
             and e.get("src") == old and e["t"] <= crash_ms]
    after = [e for e in events if e["kind"] == "role" and e["t"] >= crash_ms and e["node"] != old]
    leader = next(e for e in after if e["role"] == "LEADER")
    return {"crash": crash_ms, "last_heartbeat": max(beats),
            "candidate": next(e["t"] for e in after if e["role"] == "CANDIDATE"), "leader": leader["t"],
            "master": next(e["t"] for e in after if e["role"] == "MASTER" and e["node"] == leader["node"])}


def failover_rounds(events: list[dict[str, Any]], crash_ms: int) -> dict[str, Any]:
    """The vote rounds after a crash, ``(t, candidate, term, result)`` in order, and the random wait that decided
    them: the first survivor to move to a new term (``mover``), from the end of its failed round to the move
    (``waited_ms``, DLedger's ``[minVoteIntervalMs, maxVoteIntervalMs)``)."""
    rounds = [(e["t"], e["node"], e["term"], e["result"]) for e in events
              if e["kind"] == "vote_round" and e["t"] >= crash_ms]
    move = next(e for e in events if e["kind"] == "term" and e["t"] >= crash_ms)
    failed = max(t for t, node, _term, result in rounds if node == move["node"] and t <= move["t"]
                 and result == "WAIT_TO_VOTE_NEXT")
    return {"rounds": rounds, "mover": move["node"], "new_term": move["term"], "waited_ms": move["t"] - failed}


def first_roles(events: list[dict[str, Any]], layer: str = "DLedger") -> dict[str, tuple[int, str]]:
    """Per node, when the trace first gives it a role of ``layer`` (:data:`LAYERS`) and which one. A DLedger
    member is a CANDIDATE from its start (``MemberState``), but its ``role`` event is traced at its elector's
    first step, so the timelines show it "up (role unknown)" until then."""
    first: dict[str, tuple[int, str]] = {}
    for e in layer_events(events, layer):
        if e.get("kind") == "role" and e.get("role") in LAYERS[layer]:
            first.setdefault(e["node"], (e["t"], e["role"]))
    return first


def put_round_trips(handles: list[Any]) -> dict[str, Any]:
    """The puts' latencies (ms): when the first one started, how long it took, the mean and the longest."""
    done = [h for h in handles if h.latency_ms is not None]
    lat = [h.latency_ms for h in done]
    return {"puts": len(done), "first_start": min(h.start_ms for h in done), "first": lat[0],
            "mean": round(sum(lat) / len(lat), 1), "max": max(lat)}


def first_push_refused(events: list[dict[str, Any]], leader: str, since_ms: int) -> dict[str, Any] | None:
    """The first push of ``leader`` (elected at or after ``since_ms``) that reached a follower before the
    heartbeat that made it the leader's FOLLOWER: that follower refuses it, and DLedger 0.3.1.2's
    ``EntryDispatcher`` sleeps 500 ms after a failed push before it pushes again. ``None`` if every push came
    after the follower knew its leader."""
    learned: dict[str, int] = {}
    pushes: dict[str, list[int]] = {}
    for e in events:
        if e["t"] < since_ms or e.get("node") == leader:
            continue
        if e["kind"] == "role" and e.get("role") == "FOLLOWER" and e.get("leader") == leader:
            learned.setdefault(e["node"], e["t"])
        elif e["kind"] == "msg_recv" and e.get("msg") == "PushEntryRequest" and e.get("src") == leader:
            pushes.setdefault(e["node"], []).append(e["t"])
    early = [(times[0], node) for node, times in pushes.items()
             if node in learned and times[0] < learned[node] and len(times) > 1]
    if not early:
        return None
    push_ms, node = min(early)
    again = next(t for t in pushes[node] if t > learned[node])
    return {"follower": node, "push": push_ms, "follower_since": learned[node], "next_push": again,
            "pause": again - push_ms}


# ---------------------------------------------------------------------- rocketlab demo
def write_tour_report(tour: Tour) -> Path:
    """``report.html`` beside the tour's three run directories: one self-contained HTML file with each
    run's summary, the cluster viewer and every figure (:func:`rocketlab.viz.write_report`)."""
    runs = {story.run_dir.name: story.run_dir for story in tour.stories}
    return write_report(tour.out / "report.html", runs, _(
        "rocketlab demo (seed {seed}): failover on DLedger vs classic master-slave").format(seed=tour.dledger.seed))


@dataclass
class Demo:
    """What ``rocketlab demo`` prints: the tour, its HTML report and the seconds both took."""

    tour: Tour
    report: Path
    seconds: float


def run_demo(out: str | Path, *, seed: int = 1, puts: int = 60) -> Demo:
    """``rocketlab demo``: the tour's three runs under ``out`` (:func:`run_tour`), then their report."""
    start = time.perf_counter()
    tour = run_tour(out, seed=seed, puts=puts)
    return Demo(tour, write_tour_report(tour), time.perf_counter() - start)


def spark_runs_summary(votes: Any, puts: Any) -> list[str]:
    """What section 6's two Spark tables say (as pandas, ``by_run=True``): which runs hold vote responses,
    and the put statuses each run shows."""
    statuses = {run: sorted(set(part["status"])) for run, part in puts.groupby("run")}
    return [_("runs with votes: {runs}").format(runs=sorted(set(votes["run"]))),
            _("put statuses per run: {statuses}").format(statuses=dict(sorted(statuses.items())))]


def commit_lines(events: list[dict[str, Any]], leader: str, since_ms: int) -> list[str]:
    """What the log-and-commit figure shows from ``since_ms`` on: how soon the leader commits each entry after
    appending it, and whether each follower commits an entry when the push of the next one arrives (the
    last entry's commit reaches the followers only with a later push)."""
    def at(node: str, kind: str) -> dict[int, int]:
        return {e["index"]: e["t"] for e in events if e["kind"] == kind and e["node"] == node and e["t"] >= since_ms}
    appended, committed = at(leader, "append"), at(leader, "commit")
    lags = [committed[i] - t for i, t in appended.items() if i in committed]
    lines = [_("leader {leader} commits each of its {n} entries {lo}-{hi} ms after appending it").format(
        leader=leader, n=len(lags), lo=min(lags), hi=max(lags))]
    for node in sorted({e["node"] for e in events if e["kind"] == "append"} - {leader}):
        mine, pushes = at(node, "commit"), at(node, "append")
        with_next = all(t == pushes.get(i + 1) for i, t in mine.items())
        lines.append(_("{node} commits entries {first}-{last}, each when the next entry's push arrives: {with_next}; "
                       "the last entry, {final}, not yet").format(node=node, first=min(mine), last=max(mine),
                                                                  with_next=with_next, final=max(pushes)))
    return lines


# ---------------------------------------------------------------------- the lab's printed lines
def role_lines(events: list[dict[str, Any]]) -> str:
    """Section 1's two lines: the DLedger role the trace first gives each member and when, and since when each
    FOLLOWER follows."""
    first = {n: _("{role} at {t} ms").format(role=role, t=t) for n, (t, role) in sorted(first_roles(events).items())}
    since = {e["node"]: e["t"] for e in events if e["kind"] == "role" and e["role"] == "FOLLOWER"}
    return "\n".join([_("first DLedger role in the trace: {roles}").format(roles=first),
                      _("FOLLOWER since: {since}").format(since=since)])


def vote_rounds_line(events: list[dict[str, Any]]) -> str:
    """Every vote round of the trace as ``(t ms, candidate, term, result)``."""
    rounds = [(e["t"], e["node"], e["term"], e["result"]) for e in events if e["kind"] == "vote_round"]
    return _("vote rounds (t ms, candidate, term, result): {rounds}").format(rounds=rounds)


def round_trip_lines(rt: dict[str, Any], known_ms: int, refused: dict[str, Any] | None) -> str:
    """Section 2's lines: when the first put started and since when the followers knew their leader, the puts'
    latencies (:func:`put_round_trips`), and the push refused before the leader's heartbeat (None: none was)."""
    return "\n".join([
        _("first put at {start} ms; both followers knew their leader since {known} ms").format(
            start=rt["first_start"], known=known_ms),
        _("put latency: first {first} ms, mean {mean} ms, longest {longest} ms ({n} puts)").format(
            first=f"{rt['first']:.0f}", mean=rt["mean"], longest=f"{rt['max']:.0f}", n=rt["puts"]),
        _("a push refused because it came before the leader's heartbeat: {refused}").format(refused=refused)])


def failover_lines(old: str, b: dict[str, int], fr: dict[str, Any]) -> str:
    """Section 3's lines: where the failover's time went (:func:`failover_breakdown`) and the vote rounds that
    decided it (:func:`failover_rounds`)."""
    return "\n".join([
        _("last heartbeat from {old} at {beat} ms, {before} ms before the crash at {crash}").format(
            old=old, beat=b["last_heartbeat"], before=b["crash"] - b["last_heartbeat"], crash=b["crash"]),
        _("first CANDIDATE at {t}: {after_beat} ms after that heartbeat, {after_crash} ms after the crash").format(
            t=b["candidate"], after_beat=b["candidate"] - b["last_heartbeat"], after_crash=b["candidate"] - b["crash"]),
        _("LEADER at {leader}: +{voting} ms of voting; MASTER at {master}: +{handler} ms for the role change "
          "handler").format(leader=b["leader"], voting=b["leader"] - b["candidate"], master=b["master"],
                            handler=b["master"] - b["leader"]),
        _("without a master: {candidate} + {voting} + {handler} = {total} ms").format(
            candidate=b["candidate"] - b["crash"], voting=b["leader"] - b["candidate"],
            handler=b["master"] - b["leader"], total=b["master"] - b["crash"]),
        _("vote rounds after the crash (t ms, candidate, term, result): {rounds}").format(rounds=fr["rounds"]),
        _("{node} moved to term {term} {waited} ms after its failed round").format(
            node=fr["mover"], term=fr["new_term"], waited=fr["waited_ms"])])


def new_leader_lines(new_roles: dict[str, int], p: dict[str, Any] | None) -> str:
    """Section 3's last lines: when the new leader became LEADER and MASTER, and its first push that a follower
    refused (:func:`first_push_refused`; None: every push came after the follower's heartbeat)."""
    lines = [_("LEADER at {leader} ms, MASTER at {master} ms: {later} ms later").format(
        leader=new_roles["LEADER"], master=new_roles["MASTER"], later=new_roles["MASTER"] - new_roles["LEADER"])]
    if p is None:
        lines.append(_("no push of the new leader came before its heartbeat"))
    else:
        lines.append(_("its first push reached {follower} at {push} ms, before its heartbeat did ({follower} FOLLOWER "
                       "at {since} ms): refused; the next push at {next} ms, {pause} ms later").format(
            follower=p["follower"], push=p["push"], since=p["follower_since"], next=p["next_push"], pause=p["pause"]))
    return "\n".join(lines)
