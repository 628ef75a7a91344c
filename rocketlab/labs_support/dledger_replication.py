"""Helpers for ``labs/04_dledger_replication.ipynb``: one entry's journey through a DLedger group, the
leader's per-follower push states, the QuorumAckChecker's median, an entry's bytes on disk, and the
profile comparisons (a diverged follower, Raft's Figure 8, DLedger issues #247 and #251).

Everything here reads the trace or the cores; the stories themselves are the schedules of
:mod:`rocketlab.scenarios.dledger_schedules`, the same code ``rocketlab sim dledger-figure8`` /
``dledger-247`` / ``dledger-251`` runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab import plugs
from rocketlab.dledger.config import PROFILES, DLedgerConfig
from rocketlab.dledger.entry import BODY_OFFSET
from rocketlab.dledger.entry_dispatcher import decide_compare
from rocketlab.i18n import N_, _
from rocketlab.scenarios.dledger_group import (
    DEFAULT_LATENCY,
    SHORT_TIMERS,
    DLedgerViolations,
    append_nowait,
    commit,
    wait_settled,
)
from rocketlab.scenarios.dledger_schedules import (
    figure8_cluster,
    issue247_cluster,
    issue251_cluster,
    run_figure8,
    run_issue247,
    run_issue251,
)
from rocketlab.sim import Cluster
from rocketlab.trace.rundir import fresh_dir
from rocketlab.workspace import resource

__all__ = [
    "ENTRY_HEADER", "SCHEDULE_COMMENTS", "schedule_comments", "schedule_text", "compare_profiles", "recorded_sweep", "cut_off_and_append", "cut_off_progress", "cut_off_progress_lines", "film_outcome", "diverged_follower", "entry_bytes", "fresh_dir", "journey",
    "median_commit_index", "new_group", "push_states", "water_marks",
]

ENTRY_HEADER = (("magic", 4), ("size", 4), ("index", 8), ("term", 8), ("pos", 8), ("channel", 4),
                ("chain_crc", 4), ("body_crc", 4), ("body_size", 4))
"""The 48-byte header of a DLedger entry (DLedgerEntryCoder, 0.3.x): field name and width in bytes."""


def new_group(run_dir: str | Path, *, nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2",
              latency: str = DEFAULT_LATENCY) -> Cluster:
    """A DLedger group with SHORT_TIMERS (heartbeats every 100 ms) and file stores under ``run_dir``,
    every invariant checked after every event (recorded, not raised), a leader already elected."""
    c = Cluster.dledger(nodes=nodes, seed=seed, profile=profile, data_dir=fresh_dir(run_dir), config=SHORT_TIMERS,
                        checkers=[DLedgerViolations()], raise_on_violation=False, latency=latency)
    wait_settled(c)
    return c


_JOURNEY_KINDS = ("append", "commit", "truncate", "push_state")


def journey(c: Cluster, body: bytes, settle_ms: int = 300) -> list[str]:
    """Append ``body`` at the leader, run ``settle_ms``, and tell what happened, one line per event:
    the leader's append, each push and its answer, each follower's append, every commit index move."""
    start = len(c.events)
    future = append_nowait(c, c.leader() or wait_settled(c), body)
    c.run_until(lambda c: future.done, 5000)
    c.run_for(settle_ms)
    lines = []
    for e in c.events[start:]:
        kind = e["kind"]
        if kind in _JOURNEY_KINDS:
            detail = " ".join(f"{k}={e[k]}" for k in ("peer", "state", "index", "term", "pos", "size") if k in e)
            lines.append(f"t={e['t']:>5} {e['node']:>3} {kind:<10} {detail}")
        elif kind == "msg_send" and e["msg"].startswith("PushEntry"):
            lines.append(f"t={e['t']:>5} {e['src']:>3} {'send':<10} {e['msg']} -> {e['dst']}")
    if future.response is not None:
        lines.append(_("answer to the client: {code} at index {index}").format(
            code=future.response.code.name, index=future.response.index))
    return lines


def cut_off_and_append(c: Cluster, count: int, settle_ms: int = 50) -> tuple[int, int]:
    """Cut the leader off from every other member, append ``count`` entries at it without waiting for
    answers, run ``settle_ms``: returns the leader's ``(ledger_end_index, committed_index)``."""
    leader = c.leader() or wait_settled(c)
    c.partition([leader], [n for n in c.node_ids if n != leader])
    for i in range(count):
        append_nowait(c, leader, b"uncommitted %d" % i)
    c.run_for(settle_ms)
    core = c.node(leader)
    return core.ledger_end_index, core.committed_index


def push_states(events: Iterable[Mapping[str, Any]], leader: str | None = None) -> list[tuple[int, str, str, str, int]]:
    """Every ``push_state`` event (of ``leader`` only, if given): ``(t, leader, peer, state, index)``."""
    return [(e["t"], e["node"], e["peer"], e["state"], e["index"]) for e in events
            if e["kind"] == "push_state" and (leader is None or e["node"] == leader)]


def cut_off_progress(events: Sequence[Mapping[str, Any]], leader: str, cut: str) -> dict[str, Any]:
    """What the commit-progress figure shows of the last partition in ``events``: where the cut-off
    follower's append and commit lines stay (``append``, ``commit``; ``moved``: whether either moved after the
    cut), how soon the leader commits each entry once the connected follower (``other``) has appended it
    (``delays``, ms, for entries ``first``-``last``), and whether that follower commits each entry with the next
    push (``with_next``). :func:`cut_off_progress_lines` says it."""
    since_ms = max(e["t"] for e in events if e["kind"] == "fault" and e.get("action") == "partition")

    def indexes(node: str, kind: str, after: bool) -> dict[int, int]:
        return {e["index"]: e["t"] for e in events if e["node"] == node and e["kind"] == kind
                and (e["t"] >= since_ms) == after}
    other = next(e["node"] for e in events if e["kind"] == "append" and e["node"] not in (leader, cut))
    appended, committed = indexes(other, "append", True), indexes(other, "commit", True)
    leader_commits = indexes(leader, "commit", True)
    return {"cut": cut, "append": max(indexes(cut, "append", False)), "commit": max(indexes(cut, "commit", False)),
            "moved": bool(indexes(cut, "append", True) or indexes(cut, "commit", True)), "leader": leader,
            "other": other, "first": min(appended), "last": max(appended),
            "delays": [leader_commits[i] - appended[i] for i in sorted(appended) if i in leader_commits],
            "with_next": all(committed[i] == appended.get(i + 1) for i in committed)}


def cut_off_progress_lines(p: Mapping[str, Any]) -> str:
    """:func:`cut_off_progress` as three lines."""
    return "\n".join([
        _("cut off {node}: append index {append}, commit index {commit}; appends or commits after the cut: "
          "{moved}").format(node=p["cut"], append=p["append"], commit=p["commit"], moved=p["moved"]),
        _("leader {leader} commits entries {first}-{last} each this many ms after {other} appended it: {delays}")
        .format(leader=p["leader"], first=p["first"], last=p["last"], other=p["other"], delays=p["delays"]),
        _("{other} commits each entry when the push of the next one arrives: {with_next}").format(
            other=p["other"], with_next=p["with_next"])])


def film_outcome(c: Cluster) -> str:
    """How a schedule's film ends: the leader, every member's ledger end, how many heartbeats a member
    answered EXPIRED_TERM (#247) and whether the leader stepped down after the first such answer."""
    expired = [e for e in c.events if e["kind"] == "heartbeat" and e.get("code") == "EXPIRED_TERM"]
    leader = c.leader()
    stepped_down = bool(expired) and any(e["kind"] == "role" and e["node"] == expired[0]["leader"]
                                         and e["t"] >= expired[0]["t"] and e["role"] != "LEADER" for e in c.events)
    ends = {n: c.node(n).ledger_end_index for n in c.node_ids}
    return _("t = {t} ms: leader {leader}, ledger ends {ends}; heartbeats answered EXPIRED_TERM: {expired}, the leader "
             "stepped down after the first: {stepped_down}").format(t=c.now_ms, leader=leader, ends=ends,
                                                                    expired=len(expired), stepped_down=stepped_down)


def water_marks(c: Cluster) -> dict[str, int]:
    """The leader's water mark for every member of its term (itself: its ledger end)."""
    leader = c.leader()
    if leader is None:
        return {}
    core = c.node(leader)
    return dict(sorted(core.pusher.peer_water_marks_by_term.get(core.term, {}).items()))


def median_commit_index(marks: Mapping[str, int]) -> int:
    """QuorumAckChecker's rule: sort the water marks from high to low and take the one in the middle
    (``sorted desc [n // 2]``): the highest index that a majority holds."""
    ordered = sorted(marks.values(), reverse=True)
    return ordered[len(ordered) // 2]


def entry_bytes(c: Cluster, node: str, index: int) -> dict[str, Any]:
    """The entry at ``index`` as its bytes in the member's data file: the path, the position, the header
    fields decoded from the raw bytes, and a hex dump (header, then body)."""
    core = c.node(node)
    entry = core.entries(index, index)[0]
    data_dir = Path(core.store.data_file_list.store_path)
    files = sorted(p for p in data_dir.iterdir() if p.name.isdigit())
    path = max((p for p in files if int(p.name) <= entry.pos), key=lambda p: int(p.name))
    with path.open("rb") as f:
        f.seek(entry.pos - int(path.name))
        raw = f.read(entry.size)
    fields, at = {}, 0
    for name, width in ENTRY_HEADER:
        fields[name] = int.from_bytes(raw[at:at + width], "big", signed=True)
        at += width
    assert at == BODY_OFFSET
    return {"file": f"{path.parent.name}/{path.name}", "pos": entry.pos, "fields": fields,
            "header_hex": _hex(raw[:BODY_OFFSET]), "body_hex": _hex(raw[BODY_OFFSET:]),
            "body": raw[BODY_OFFSET:]}


def _hex(data: bytes, width: int = 16) -> str:
    return "\n".join(data[i:i + width].hex(" ") for i in range(0, len(data), width))


def diverged_follower(run_dir: str | Path, seed: int = 1, profile: str = "dledger-0.3.1.2") -> dict[str, Any]:
    """A leader takes two entries no one else gets (it is cut off), a new leader is elected, commits two
    more and hands over to the third member (whose dispatchers start comparing at its last entry), the
    old leader rejoins: its dispatcher state and log show the TRUNCATE that removes its two
    uncommitted entries. Returns the cluster, the names, the rejoined member's events, its log (body,
    term) before the heal and after, the entries cut, and ``walk``: every COMPARE answer the new leader's
    EntryDispatcher decided on after the heal (``decide_compare``, watched through its plug point; the
    trace only records changes of state, so the steps within COMPARE show only here)."""
    c = new_group(run_dir, seed=seed, profile=profile)
    commit(c, b"shared")
    old = c.leader()
    assert old is not None
    others = [n for n in c.node_ids if n != old]
    c.partition([old], others)
    for body in (b"lonely-1", b"lonely-2"):
        append_nowait(c, old, body)
    new = wait_settled(c, others)
    for body in (b"after-1", b"after-2"):
        commit(c, body)
    third = next(n for n in others if n != new)  # a leader that takes office now starts comparing at 2
    c.transfer_leadership(third)
    c.run_until(lambda c: c.leader() == third, 10_000)
    new = wait_settled(c, others)
    c.run_for(1_000)  # the connected follower's dispatcher is in APPEND: after the heal, only the old leader's compares
    before = [(e.body, e.term) for e in c.node(old).entries()]
    walk: list[dict[str, Any]] = []

    def watched(compare_index: int, code: Any, f_begin: int, f_end: int, l_begin: int, l_end: int) -> Any:
        d = decide_compare(compare_index, code, f_begin, f_end, l_begin, l_end)
        walk.append({"t": c.now_ms, "sent": compare_index, "answer": code.name,
                     "follower log": f"{f_begin}..{f_end}", "leader log": f"{l_begin}..{l_end}",
                     "rule": d.rule, "next": f"{d.action} {d.index}"})
        return d

    t_heal = c.now_ms
    c.heal()
    with plugs.plugged({"lab04.decide_compare": watched}):
        c.run_until(lambda c: c.node(old).ledger_end_index == c.node(new).ledger_end_index
                    and c.node(old).role == "FOLLOWER", 10_000)
        c.run_for(300)
    events = [e for e in c.events if e["t"] >= t_heal and (e["node"] == old and e["kind"] in ("truncate", "append")
                                                          or e["kind"] == "push_state" and e.get("peer") == old)]
    after = [(e.body, e.term) for e in c.node(old).entries()]
    kept = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before), len(after)))
    return {"cluster": c, "old_leader": old, "new_leader": new, "events": events, "walk": walk,
            "old_log_before": before, "cut": before[kept:],
            "old_log": [e.body for e in c.node(old).entries()], "new_log": [e.body for e in c.node(new).entries()],
            "new_log_terms": [(e.body, e.term) for e in c.node(new).entries()]}


def compare_profiles(run_dir: str | Path, seeds: Sequence[int] = (1,),
                     profiles: Sequence[str] = tuple(PROFILES)) -> list[dict[str, Any]]:
    """Figure 8, #247 (the bigger-term member last, constant latency) and #251 under each profile and
    seed: one row each with what the learner should look at."""
    rows = []
    root = Path(run_dir)
    for profile in profiles:
        for seed in seeds:
            f8 = run_figure8(figure8_cluster(seed, profile, fresh_dir(root / f"figure8-{profile}-{seed}")))
            c247 = issue247_cluster(seed, profile, latency="constant:2")
            i247 = run_issue247(c247, follower_last=True)
            i251 = run_issue251(issue251_cluster(seed, profile, fresh_dir(root / f"251-{profile}-{seed}")))
            rows.append({"profile": profile, "seed": seed,
                         "figure8_committed_entry_lost": f8.x_lost,
                         "figure8_violations": ", ".join(sorted(f8.violations)) or "-",
                         "247_follower_rejoined": i247.rejoined,
                         "247_expired_term_answers": i247.expired_term_answers,
                         "251_follower_caught_up": i251.caught_up,
                         "251_stuck_buffered": i251.stuck_buffered})
    return rows


SWEEP_RESULTS = "benchmarks/results/profiles.json"
"""Where ``python benchmarks/bench_profiles.py`` records its sweep, relative to the workspace (or the
checkout); the installed kit's recorded figure when the workspace has none (:func:`rocketlab.workspace.resource`)."""


def recorded_sweep(path: str | Path | None = None) -> dict[str, Any] | None:
    """The seed sweep recorded by ``benchmarks/bench_profiles.py`` (``dledger-churn`` under each profile):
    when and how it ran, and per profile the runs with a violation, an acknowledged write lost or a group
    that did not converge, per 1000 seeds, with the seeds concerned. None when nothing is recorded."""

    path = resource(SWEEP_RESULTS) if path is None else Path(path)
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    results = data["results"]
    rows = []
    for profile, figure in results["profiles"].items():
        rows.append({"profile": profile, "violation_per_1000": figure["runs_with_violation_per_1000"],
                     "by_invariant": figure["by_invariant_per_1000"],
                     "acked_write_lost_per_1000": figure["acked_write_lost_per_1000"],
                     "not_converged_per_1000": figure["not_converged_per_1000"],
                     "seeds_not_converged": figure.get("seeds_not_converged", [])})
    return {"seeds": results["seeds"], "churn_ms": results["duration_ms"], "recorded": data["timestamp"],
            "command": data.get("command", ""), "rows": rows}


# ---------------------------------------------------------------------- the lines the lab prints
def journey_lines(c: Cluster, leader: str, steps: Sequence[str]) -> str:
    """The leader and its term, then :func:`journey`'s lines."""
    return "\n".join([_("leader {leader} in term {term}").format(leader=leader, term=c.node(leader).term), *steps])


def push_commit_interval_line() -> str:
    """How often the leader pushes its commit index here (the lab's short timers) and in Java."""
    return _("push_commit_interval_ms here: {here} (Java: {java})").format(
        here=SHORT_TIMERS["push_commit_interval_ms"], java=DLedgerConfig().push_commit_interval_ms)


def backoff_line() -> str:
    """How long an EntryDispatcher sleeps after an error."""
    return _("back-off after an error: {ms} ms (Java's sleep(500))").format(ms=DLedgerConfig().dispatcher_error_backoff_ms)


def water_mark_lines(marks: Mapping[str, int], leader_committed: int) -> str:
    """The members' water marks, their median (:func:`median_commit_index`) and the leader's commit index."""
    return "\n".join([_("water marks: {marks}").format(marks=dict(marks)),
                      _("median: {median}  leader's commit index: {committed}").format(
                          median=median_commit_index(marks), committed=leader_committed)])


def cut_off_line(leader: str, follower: str) -> str:
    """Who leads and who is cut off (the graph below highlights it)."""
    return _("leader {leader} - cut off: {follower}").format(leader=leader, follower=follower)


def uncommitted_line(end: int, committed: int) -> str:
    """:func:`cut_off_and_append`'s ledger end and commit index, and the entries between them."""
    return _("ledger end {end}, committed {committed}: {n} entries a consumer must not see yet").format(
        end=end, committed=committed, n=end - committed)


def entry_lines(raw: Mapping[str, Any]) -> str:
    """:func:`entry_bytes` shown: the file and position, the header's fields, the header's and body's hex."""
    return "\n".join([_("{file} at {pos}").format(file=raw["file"], pos=raw["pos"]), str(raw["fields"]),
                      raw["header_hex"], _("body: {hex} {body}").format(hex=raw["body_hex"], body=raw["body"])])


def diverged_lines(d: Mapping[str, Any]) -> str:
    """:func:`diverged_follower`'s logs before the heal, then each COMPARE answer the new leader decided on."""
    lines = [_("old leader {old} new leader {new}").format(old=d["old_leader"], new=d["new_leader"]),
             _("old leader's log before the heal (body, term): {log}").format(log=d["old_log_before"]),
             _("new leader's log (body, term): {log}").format(log=d["new_log_terms"])]
    lines += [_("t={t} COMPARE at {sent}: {answer} (follower holds {held}) -> {rule}: {next}").format(
        t=w["t"], sent=w["sent"], answer=w["answer"], held=w["follower log"], rule=w["rule"], next=w["next"])
        for w in d["walk"]]
    return "\n".join(lines)


def truncation_lines(d: Mapping[str, Any]) -> str:
    """:func:`diverged_follower`'s events after the heal (the TRUNCATE, then the appends), the entries cut and
    the old leader's log now."""
    lines = [f"{e['t']} {e['node']} {e['kind']} {({k: e[k] for k in ('peer', 'state', 'index', 'term') if k in e})}"
             for e in d["events"]]
    lines += [_("entries cut (body, term): {cut}").format(cut=d["cut"]),
              _("old leader's log now: {log}").format(log=d["old_log"])]
    return "\n".join(lines)


def figure8_lines(report: Any) -> str:
    """A :class:`~rocketlab.scenarios.dledger_schedules` Figure 8 report: the schedule's names on the timeline's
    rows, and the violations by invariant."""
    names = ", ".join(f"{s} = {n}" for s, n in report.names.items())
    return "\n".join([_("the schedule's names on the timeline's rows: {names}").format(names=names),
                      _("violations, by invariant: {violations}").format(violations=report.violations)])


def film_stops_lines(loss: Mapping[str, Any], stops: Sequence[Mapping[str, Any]]) -> str:
    """The first violation of a schedule's film, then each of its stops (bookmarks)."""
    return "\n".join([_("first violation at t = {t} ms: {detail}").format(t=loss["t"], detail=loss["detail"]),
                      *(_("{name} t = {t} ms: {text}").format(name=s["name"], t=s["t"], text=s["text"]) for s in stops)])


def profile_lines(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`compare_profiles`'s rows as sentences: one per profile and seed."""
    return "\n".join(_("{profile} seed {seed}: figure 8 loses a committed entry: {lost}; #247 member rejoins: "
                       "{rejoined}; #251 follower catches up: {caught_up}").format(
        profile=r["profile"], seed=r["seed"], lost=r["figure8_committed_entry_lost"],
        rejoined=r["247_follower_rejoined"], caught_up=r["251_follower_caught_up"]) for r in rows)


def lost_line(lost: Mapping[str, Any]) -> str:
    """A ``fault`` event whose action is ``lost``: the member restarted without a range of its entries."""
    member, first, last = lost["targets"][:3]
    return _("t = {t} ms: {member} restarted without entries {first}..{last}").format(
        t=lost["t"], member=member, first=first, last=last)


def sweep_lines(sweep: Mapping[str, Any] | None) -> str:
    """:func:`recorded_sweep` as lines (per profile, per 1000 runs), or how to record one."""
    if sweep is None:
        return _("no sweep recorded in this checkout: run python benchmarks/bench_profiles.py")
    lines = [_("dledger-churn, {seeds} seeds per profile, {churn} ms of churn each (recorded {recorded})").format(
        seeds=sweep["seeds"], churn=sweep["churn_ms"], recorded=sweep["recorded"][:10])]
    for r in sweep["rows"]:
        stuck = _(" (seeds {seeds})").format(seeds=r["seeds_not_converged"]) if r["seeds_not_converged"] else ""
        lines.append(_("  {profile:16} runs with a violation {violation:6.1f} per 1000, acknowledged write lost "
                       "{lost:6.1f} per 1000, did not converge {stuck_runs:6.1f} per 1000{seeds}").format(
            profile=r["profile"], violation=r["violation_per_1000"], lost=r["acked_write_lost_per_1000"],
            stuck_runs=r["not_converged_per_1000"], seeds=stuck))
    return "\n".join(lines)


SCHEDULE_COMMENTS = (
    N_("Raft's Figure 8 (Ongaro & Ousterhout, section 5.4.2) on five DLedger members, SHORT_TIMERS."),
    N_('S1 is the first leader; S2..S5 are the other members in id order; entry "first" is committed on all.'),
    N_("The story as dledger-0.3.1.2 (and 0.3.2) plays it:"),
    N_("(a) S1 leads. Entry W reaches S2 and S5 and commits; then entry X reaches S2 only; S1 crashes."),
    N_("(b) S3, S4, S5 elect S5 (only S5 holds W, so S3 and S4 cannot win) in a new term. S5 copies W to S3 and S4, "
       "takes entry Y at X's index, and is cut off before sending it; then S5 crashes."),
    N_("(c) S1 restarts and, with S3 and S4, is elected in a newer term (its log is the longest); it copies X to S3 "
       "and S4. X, of an older term, is now on a majority: 0.3.1.2 commits it by counting replicas (DLedger issue "
       "#4), and S1 crashes."),
    N_("(d) S5 restarts; S2 and S3 vote for it, because its last entry Y has a newer term than X, and it overwrites X "
       "with Y: a committed entry is lost."),
    N_("Under the kit's \"raft\" profile the same schedule loses nothing: the elections of (c) or (d) end "
       "differently, or X is never counted committed. Play both profiles in the viewer and compare where they part; "
       "which rule makes the difference is lab 04's design exercise."),
    N_("DLedger issue #251 (fixed in 0.3.2 by 888883a), SHORT_TIMERS, three members, file stores."),
    N_("L leads, F is a follower (the first in id order), the third member keeps L's quorum."),
    N_("(1) L takes three entries; F appends them and acknowledges, and loses them in a power failure 9 ms later "
       "(its files were not flushed yet): L's water mark for F is past F's log end."),
    N_("(2) F comes back with a shorter log. L, still in APPEND state for F, pushes the entries after its water mark; "
       "F buffers them (they do not follow its log end) and after checkAbnormalFuture's second answers the smallest "
       "one INCONSISTENT_STATE, which is lost on the way."),
    N_("(3) L's push times out and it pushes that index again. dledger-0.3.1.2 kept the stuck push in "
       "writeRequestMap, so F answers REPEATED_PUSH, every time, forever: F never catches up. dledger-0.3.2 removed "
       "it when it answered, so F buffers the push again, answers it INCONSISTENT_STATE a second later, L goes back "
       "to COMPARE, truncates and re-sends: F catches up."),
)
"""The comments of the schedules lab 04 prints (:data:`~rocketlab.scenarios.dledger_schedules.FIGURE_8` and
``ISSUE_251``), one paragraph each as :func:`schedule_comments` reads it, marked for the catalogue: the schedules
stay English (``rocketlab sim`` reads them), :func:`schedule_text` shows them in the kernel's language."""


def _paragraphs(script: str) -> list[list[str]]:
    """``script``'s lines in blocks: one block per comment paragraph (a ``#`` line, then the lines that go on
    with it: indented after ``#`` or starting in lower case), one block per step line."""
    blocks: list[list[str]] = []
    for line in script.splitlines():
        goes_on = line.startswith("#  ") or (line.startswith("# ") and line[2:3].islower())
        if goes_on and blocks and blocks[-1][0].startswith("#"):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


def _joined(block: Sequence[str]) -> str:
    return " ".join(line.lstrip("#").strip() for line in block)


def schedule_comments(script: str) -> list[str]:
    """The comment paragraphs of a schedule, each on one line without its ``#``."""
    return [_joined(block) for block in _paragraphs(script) if block[0].startswith("#")]


def schedule_text(script: str) -> str:
    """A schedule as the lab prints it: its steps as written, each comment paragraph in the kernel's language
    (one ``#`` line; as written where the catalogue gives no other words for it, as in English)."""
    out = []
    for block in _paragraphs(script):
        said = _(_joined(block)) if block[0].startswith("#") else None
        out += block if said is None or said == _joined(block) else [f"# {said}"]
    return "\n".join(out) + "\n"
