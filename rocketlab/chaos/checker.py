"""The campaign's checker: a history, the queues read back after the heal, the stores and the merged trace.

Per queue (each producer writes its own):

* **lost** - acknowledged (``ok``) puts whose body is not in the queue read back;
* **duplicates** - a body the queue holds more than once (a producer never retries: any duplicate is
  the system's);
* **gaps** - queue offsets that do not run on by one;
* **order** - a producer's acknowledged bodies out of the order it put them (an ``unknown`` put may land
  after later ones: its connection, given up on, was still read later);
* **refused but stored** - a put the broker definitely refused (``fail``) that the queue holds.

From the trace (every node's events, merged): DLedger's election safety (one LEADER per term), and in
controller mode one MASTER per master epoch. From the stores: the DLedger members' logs match (two logs
holding an entry with the same index and term are equal up to it).

A lost acknowledged message is **named** from the evidence (:mod:`rocketlab.chaos.losses`:
``consumer-side``, ``figure-8``, ``queue-offset-reused``, ``unreplicated``, else ``unexplained``), and
the acknowledgements themselves are checked from the trace (:mod:`rocketlab.chaos.acks`: ``early-ack``,
``slave-ack-before-write``, ``election-outside-sync-state-set``, ``trace-lost``, ``store-lost-entries``).
A finding of any check, an ``unexplained`` loss or a ``consumer-side`` one fails every system.

:func:`check_queues` returns the per-queue part of a verdict (JSON-able); :func:`expectation` says what each
system must show.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rocketlab.dledger.config import PROFILES, commits_only_current_term


def _seq(body: str) -> tuple[int, int] | None:
    if not body.startswith("p") or "-" not in body:
        return None
    head, _, tail = body[1:].partition("-")
    return (int(head), int(tail)) if head.isdigit() and tail.isdigit() else None


def check_queues(history: Iterable[Mapping[str, Any]], queues: Mapping[int, list[tuple[int, str]]]) -> dict[str, Any]:
    """Lost, duplicates, gaps, order (see the module docstring); counts of every outcome."""
    history = list(history)
    outcome = {op["id"]: op for op in history if op["type"] != "invoke"}
    counts = Counter(op["type"] for op in history)
    read = {body for msgs in queues.values() for _, body in msgs}
    acked = [op for op in outcome.values() if op["type"] == "ok"]
    lost = sorted((op["id"] for op in acked if op["id"] not in read), key=lambda i: _seq(i) or (0, 0))
    duplicates, gaps, order = [], [], []
    for queue, msgs in sorted(queues.items()):
        bodies = Counter(body for _, body in msgs)
        duplicates += sorted(b for b, n in bodies.items() if n > 1)
        offsets = [o for o, _ in msgs]
        gaps += [{"queue": queue, "after": a, "next": b} for a, b in zip(offsets, offsets[1:], strict=False) if b != a + 1]
        last: dict[int, int] = {}
        for _, body in msgs:
            s = _seq(body)
            if s is None or outcome.get(body, {}).get("type") != "ok":
                continue  # a put that timed out may land after later ones (its connection was read later)
            proc, n = s
            if proc in last and n < last[proc]:
                order.append({"queue": queue, "body": body, "after": f"p{proc}-{last[proc]}"})
            last[proc] = max(last.get(proc, -1), n)
    unknown_kept = sum(1 for op in outcome.values() if op["type"] == "unknown" and op["id"] in read)
    refused_stored = sorted(op["id"] for op in outcome.values() if op["type"] == "fail" and op["id"] in read)
    return {"invoked": counts["invoke"], "ok": counts["ok"], "fail": counts["fail"], "unknown": counts["unknown"],
            "unknown_survived": unknown_kept, "read": sum(len(m) for m in queues.values()), "lost": lost,
            "duplicates": duplicates, "gaps": gaps, "order": order, "refused_but_stored": refused_stored}


def election_safety(events: Iterable[Mapping[str, Any]], role: str = "LEADER") -> list[dict[str, Any]]:
    """Terms (or master epochs) in which more than one node took ``role``."""
    holders: dict[int, set[str]] = defaultdict(set)
    for e in events:
        if e.get("kind") == "role" and e.get("role") == role and e.get("term") is not None:
            holders[int(e["term"])].add(e["node"])
    return [{"term": t, "nodes": sorted(n)} for t, n in sorted(holders.items()) if len(n) > 1]


def log_matching(logs: Mapping[str, list[tuple[int, int, str]]]) -> list[dict[str, Any]]:
    """Pairs of members whose logs hold the same (index, term) but differ before it."""
    out = []
    names = sorted(logs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            la, lb = {e[0]: e for e in logs[a]}, {e[0]: e for e in logs[b]}
            common = sorted(set(la) & set(lb))
            last_same = max((x for x in common if la[x][1] == lb[x][1]), default=None)
            if last_same is None:
                continue
            differ = [x for x in common if x <= last_same and la[x] != lb[x]]
            if differ:
                out.append({"members": [a, b], "index": differ[0], "up_to": last_same})
    return out


EXPECTED: dict[tuple[str, str], tuple[bool, str]] = {
    ("sync-pair", ""): (True, "no acknowledged message lost (SYNC_MASTER answers only after its slave has it)"),
    ("async-pair", ""): (False, "loses what the master acknowledged before its slave had it, when the master is "
                                "lost: counted"),
    **{("dledger", profile): (True, "no acknowledged message lost") if commits_only_current_term(profile) else
       (False, "a loss only through the Figure 8 mechanism, named") for profile in PROFILES},
    ("controller", "all-ack"): (True, "no acknowledged message lost"),
    ("controller", "defaults"): (False, "may lose what the master acknowledged alone (allAckInSyncStateSet=false): "
                                        "counted"),
}
"""(system, variant) -> (no acknowledged message may be lost, what a run must show). DLedger's rows follow
each release profile's commit rule (:func:`rocketlab.dledger.config.commits_only_current_term`): a profile
that commits entries of an older term by counting may lose them through Raft's Figure 8."""


def expectation(system: str, variant: str, verdict: Mapping[str, Any]) -> tuple[bool, str]:
    """(met, what was expected) for a run's verdict."""
    lost, names = verdict["lost"], verdict.get("lost_named", {})
    safety = not verdict.get("election_safety") and not verdict.get("log_matching") and \
        not verdict.get("master_safety") and not verdict["duplicates"] and not verdict["gaps"] and \
        not verdict["order"] and not verdict["refused_but_stored"] and not verdict.get("checks") and \
        not any(n == "unexplained" or n.startswith("consumer-side") for n in names.values())
    strict, text = EXPECTED[(system, variant)]
    if strict:
        return safety and not lost, text
    if system == "dledger":
        return safety and all(n.startswith("figure-8") for n in names.values()), text
    if system == "async-pair":
        return safety and all(n == "unreplicated" for n in names.values()), text
    return safety, text
