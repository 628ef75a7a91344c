"""The campaign's checker: a history, the queues read back after the heal, the stores and the merged trace.

Over the history (what the applications saw, :mod:`rocketlab.chaos.history`) and the queues read back:

* **lost** - acknowledged (``ok``) sends whose body is in no queue read back;
* **duplicates** - a body the queues hold more often than the client's attempts of that send that may
  have stored it: the system's own (the application sends every body once; a send the client tried again
  after a timeout may be stored once per such attempt - RocketMQ is at-least-once - and those copies are
  counted apart, **retried_duplicates**, and fail nothing);
* **gaps** - queue offsets that do not run on by one;
* **order** - a producer's acknowledged messages in one queue out of the order it sent them, judged on
  the acknowledged copy (the one in the queue the SendResult named, at its queue offset when a copy is
  there): an ``unknown`` send, or an earlier attempt of a retried one, may land after later ones;
* **refused but stored** - a send that failed with every attempt refused or never connected (``fail``)
  that a queue holds.

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


def stored_attempts(op: Mapping[str, Any]) -> int:
    """How many of a send's attempts may have stored it (an old history without ``attempts``: one)."""
    attempts = op.get("attempts")
    return 1 if attempts is None else sum(1 for a in attempts if a.get("stored", True))


def _acknowledged_order(queue: int, msgs: list[tuple[int, str]], outcome: Mapping[str, Mapping[str, Any]]
                        ) -> list[dict[str, Any]]:
    """A producer's acknowledged copies in ``queue`` out of the order it sent them (module docstring)."""
    seen: set[str] = set()
    held = {(o, b) for o, b in msgs}
    last: dict[int, int] = {}
    out = []
    for offset, body in msgs:
        op = outcome.get(body, {})
        s = _seq(body)
        if s is None or op.get("type") != "ok" or op.get("queue", queue) != queue or body in seen:
            continue
        if op.get("queue_offset") not in (None, offset) and (op["queue_offset"], body) in held:
            continue  # another copy of it sits where the broker acknowledged it: that one counts
        seen.add(body)
        proc, n = s
        if proc in last and n < last[proc]:
            out.append({"queue": queue, "body": body, "after": f"p{proc}-{last[proc]}"})
        last[proc] = max(last.get(proc, -1), n)
    return out


def check_queues(history: Iterable[Mapping[str, Any]], queues: Mapping[int, list[tuple[int, str]]]) -> dict[str, Any]:
    """Lost, duplicates (the system's, and those the client's retries explain), gaps, order (see the module
    docstring); counts of every outcome."""
    history = list(history)
    outcome = {op["id"]: op for op in history if op["type"] != "invoke"}
    counts = Counter(op["type"] for op in history)
    copies = Counter(body for msgs in queues.values() for _, body in msgs)
    acked = [op for op in outcome.values() if op["type"] == "ok"]
    lost = sorted((op["id"] for op in acked if op["id"] not in copies), key=lambda i: _seq(i) or (0, 0))
    duplicates = sorted(b for b, n in copies.items() if n > 1 and n > stored_attempts(outcome.get(b, {})))
    retried = sorted(b for b, n in copies.items() if 1 < n <= stored_attempts(outcome.get(b, {})))
    gaps, order = [], []
    for queue, msgs in sorted(queues.items()):
        offsets = [o for o, _ in msgs]
        gaps += [{"queue": queue, "after": a, "next": b} for a, b in zip(offsets, offsets[1:], strict=False) if b != a + 1]
        order += _acknowledged_order(queue, msgs, outcome)
    unknown_kept = sum(1 for op in outcome.values() if op["type"] == "unknown" and op["id"] in copies)
    refused_stored = sorted(op["id"] for op in outcome.values() if op["type"] == "fail" and op["id"] in copies)
    return {"invoked": counts["invoke"], "ok": counts["ok"], "fail": counts["fail"], "unknown": counts["unknown"],
            "unknown_survived": unknown_kept, "read": sum(len(m) for m in queues.values()), "lost": lost,
            "duplicates": duplicates, "retried_duplicates": retried, "gaps": gaps, "order": order,
            "refused_but_stored": refused_stored}


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
