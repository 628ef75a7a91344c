"""Every lost acknowledged message named after a mechanism only where the evidence shows it (rocketlab's own).

:func:`name_losses` looks, for each acknowledged put the consumer did not read back, at the surviving
replicas' stores, the merged trace and the history:

* ``consumer-side`` - the store of the broker the consumer read back holds it: it was kept, the read
  back missed it (a consumer's bug, or the checker's own: this always fails the run);
* ``figure-8`` (DLedger) - its entry was committed *by counting replicas in a later term* (a ``commit``
  at a member leading a term newer than the entry's, covering the entry's index, while the entry at the
  commit index was of an older term: DLedger 0.3.x's QuorumAckChecker, Raft's Figure 8) and the
  members' logs now hold another entry there or none;
* ``queue-offset-reused`` (controller mode) - not in any surviving store, and another acknowledged
  message holds its queue offset: the next master handed the offset out again;
* ``diverged`` - not in that broker's store but in another surviving replica's (a replica the master
  does not have: it will be truncated to the master's log);
* ``unreplicated`` - in no surviving replica's store (classic pairs and controller mode: the master that
  acknowledged it is gone or rejoined without it);
* ``unexplained`` - none of these: always a failure.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rocketlab.chaos.acks import DLEDGER_HEADER

Event = Mapping[str, Any]


def _entry_of(op: Mapping[str, Any], appends: list[tuple[int, str, int, int, int]]) -> tuple[int, int] | None:
    """(index, term) of the entry that carried an acknowledged DLedger put, from its broker's appends."""
    pos = op.get("phy_offset", -1) - DLEDGER_HEADER
    at = [(index, term) for t, node, index, term, p in appends if p == pos and t <= op["t"]
          and node == op.get("broker", node)]
    return at[-1] if at else None


def counting_commits(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Commits by counting in a later term: (node, t, term led, from index, to index, the commit index's
    entry term) where the node, leading ``term``, moved its commit index over entries and the entry at the
    new commit index was of an older term."""
    role: dict[str, tuple[str, int]] = {}
    log_terms: dict[str, dict[int, int]] = defaultdict(dict)
    committed: dict[str, int] = {}
    out = []
    for e in events:
        kind, node = e.get("kind"), e.get("node")
        if kind == "role" and e.get("term") is not None:
            role[node] = (e["role"], int(e["term"]))
        elif kind == "append" and e.get("term") is not None:
            log_terms[node][int(e["index"])] = int(e["term"])
        elif kind == "commit":
            before, now = committed.get(node, -1), int(e["index"])
            committed[node] = now
            state, term = role.get(node, ("", -1))
            entry_term = log_terms[node].get(now, -1)
            if state == "LEADER" and now > before and 0 <= entry_term < term:
                out.append({"node": node, "t": e["t"], "term": term, "from": before + 1, "to": now,
                            "entry_term": entry_term})
    return out


def _figure_8(op: Mapping[str, Any], entry: tuple[int, int] | None, counted: list[dict[str, Any]],
              final: Mapping[int, int]) -> str | None:
    if entry is None:
        return None
    index, term = entry
    if final.get(index) == term:
        return None
    proof = next((c for c in counted if c["from"] <= index <= c["to"] and c["term"] > term),
                 None)
    if proof is None:
        return None
    now = "truncated" if index not in final else f"replaced by term {final[index]}"
    return (f"figure-8: entry {index} of term {term} committed by counting at {proof['node']} in term "
            f"{proof['term']} (t={proof['t']}), then {now}")


def name_losses(lost: list[str], history: Iterable[Mapping[str, Any]], system: str, events: list[Event],
                logs: Mapping[str, list[tuple[int, int, str]]] | None,
                stores: Mapping[str, set[str]], read_from: str | None) -> dict[str, str]:
    """Each lost id -> its mechanism, from the evidence (module docstring); ``stores`` maps each surviving
    replica to the bodies its store holds, ``read_from`` is the broker the consumer read back."""
    if not lost:
        return {}
    ops = {op["id"]: op for op in history if op["type"] == "ok"}
    names: dict[str, str] = {}
    appends = [(e["t"], e["node"], int(e["index"]), int(e["term"]), e.get("pos")) for e in events
               if e.get("kind") == "append" and e.get("term") is not None]
    counted = counting_commits(events) if system == "dledger" else []
    final: dict[int, int] = {}
    for log in (logs or {}).values():
        for index, term, _ in log:
            final.setdefault(index, term)
    offsets = Counter((op.get("queue", op["process"]), op.get("queue_offset")) for op in ops.values())
    for op_id in lost:
        op = ops[op_id]
        others = sorted(n for n, bodies in stores.items() if op_id in bodies and n != read_from)
        diverged = f"diverged: only in the store of {', '.join(others)}, not of {read_from}, which was read back"
        if read_from is not None and op_id in stores.get(read_from, set()):
            names[op_id] = f"consumer-side: in the store of {read_from}, never read back"
        elif system == "dledger":
            names[op_id] = _figure_8(op, _entry_of(op, appends), counted, final) or \
                (diverged if others else "unexplained")
        elif system == "controller" and offsets[(op.get("queue", op["process"]), op.get("queue_offset"))] > 1:
            names[op_id] = "queue-offset-reused"
        elif others:
            names[op_id] = diverged
        elif system in ("sync-pair", "async-pair", "controller"):
            names[op_id] = "unreplicated"
        else:
            names[op_id] = "unexplained"
    return names
