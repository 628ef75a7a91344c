"""The campaign's acknowledgement checks, read from the merged trace (rocketlab's own; no Java class).

A loss shows a broken acknowledgement only when a node dies inside its window, which a campaign's few
kills rarely hit; the trace shows every early acknowledgement. Each check returns the offending puts
(or reports), first first, each with the trace events that prove it:

* :func:`pair_acks` - a SYNC_MASTER's ``PUT_OK`` before its slave reported (``ha_report`` at the master)
  an offset at or past the message's end (``phy_offset + size``); the reported offset counts from the
  master's last restart;
* :func:`slave_acks` - a classic slave whose store ends before the highest offset it reported to the
  master (``ha_report``): it acknowledged bytes it never wrote (a slave never truncates);
* :func:`dledger_acks` - a DLedger leader's ``PUT_OK`` (broker on DLedger) before a majority of the
  group had appended its entry (``append`` of the same index and term, not truncated since). The rule is
  the same under every release profile: a put's entry is always of the leader's term, and both
  DLedger 0.3.x's and Raft's QuorumAckChecker answer it only when a majority's watermarks in that term
  reach it; the profiles differ in committing *older* terms' entries by counting, which the loss
  naming checks (:mod:`rocketlab.chaos.losses`);
* :func:`all_ack_acks` - controller mode under ``allAckInSyncStateSet``: the committed master's ``PUT_OK``
  before every other member of the SyncStateSet the controllers last committed (``controller_apply``) had
  reported the message's end (``ha_report`` at the master, the member named by ``ha_handshake``); a
  deposed master's acknowledgements are left to the loss checks;
* :func:`elections_outside_sync_state_set` - a controller that elected a master outside the committed
  SyncStateSet (unclean election is off in every campaign);
* :func:`trace_gaps` - a DLedger member whose store holds an entry its trace never recorded appending
  (the trace lost events: a check on the checker's own evidence), and :func:`store_losses` - an entry a
  member traced appending, never truncated by the protocol, missing from its store at the end (a
  SIGKILL keeps the page cache: the store lost it).

Cross-node comparisons use ``t`` (ms, one monotonic clock on one machine) with ties allowed: an event
in the same millisecond counts as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

DLEDGER_HEADER = 48
"""A CommitLog offset on DLedger is the entry's ``pos`` plus the entry header."""

Event = Mapping[str, Any]


def _brief(e: Event) -> dict[str, Any]:
    return {k: v for k, v in e.items() if k not in ("topic", "latency_ms")}


def _ok_puts(events: Iterable[Event], nodes: Iterable[str] | None = None) -> list[Event]:
    wanted = set(nodes) if nodes is not None else None
    return [e for e in events if e.get("kind") == "put" and e.get("status") == "PUT_OK"
            and e.get("phy_offset") is not None and (wanted is None or e.get("node") in wanted)]


def pair_acks(events: list[Event], master: str = "n0") -> list[dict[str, Any]]:
    """SYNC_MASTER ``PUT_OK`` before the slave's report reached the message's end (module docstring)."""
    best: Event | None = None
    out = []
    for e in events:
        kind = e.get("kind")
        if kind == "fault" and e.get("action") == "crash" and master in (e.get("targets") or []):
            best = None
        elif e.get("node") != master:
            continue
        elif kind == "ha_report" and (best is None or e["offset"] >= best["offset"]):
            best = e
        elif kind == "put" and e.get("status") == "PUT_OK" and e.get("phy_offset") is not None:
            end = e["phy_offset"] + (e.get("size") or 0)
            if best is None or best["offset"] < end:
                out.append({"put": _brief(e), "end": end, "reported": best["offset"] if best else None,
                            "evidence": [_brief(best)] if best else [],
                            "why": f"PUT_OK at {master} for bytes up to {end} when its slave had reported "
                                   f"{best['offset'] if best else 'nothing'}"})
    return out


def slave_acks(events: list[Event], master: str, slave_end: int | None) -> list[dict[str, Any]]:
    """A slave whose store ends before the offset it reported to the master (module docstring)."""
    best = max((e for e in events if e.get("kind") == "ha_report" and e.get("node") == master),
               key=lambda e: e["offset"], default=None)
    if best is None or slave_end is None or best["offset"] <= slave_end:
        return []
    return [{"report": _brief(best), "store_end": slave_end, "evidence": [_brief(best)],
             "why": f"the slave reported offset {best['offset']} to {master} (t={best['t']}) but its CommitLog "
                    f"ends at {slave_end}: it acknowledged bytes it never wrote"}]


def _appends(events: list[Event]) -> dict[tuple[int, int], list[tuple[str, int, int]]]:
    """(index, term) -> [(node, t appended, t truncated or a huge number)]."""
    held: dict[tuple[int, int], list[tuple[str, int, int]]] = defaultdict(list)
    live: dict[str, dict[int, tuple[int, int, int]]] = defaultdict(dict)  # node -> index -> (term, t, slot)
    for e in events:
        kind, node = e.get("kind"), e.get("node")
        if kind == "append" and e.get("term") is not None:
            key = (int(e["index"]), int(e["term"]))
            held[key].append((node, e["t"], 1 << 62))
            live[node][key[0]] = (key[1], e["t"], len(held[key]) - 1)
        elif kind == "truncate":
            for index in [i for i in live[node] if i >= e["index"]]:
                term, t_app, slot = live[node].pop(index)
                held[(index, term)][slot] = (node, t_app, e["t"])
    return held


def dledger_acks(events: list[Event], members: int) -> list[dict[str, Any]]:
    """DLedger ``PUT_OK`` before a majority appended the entry in the leader's term (module docstring)."""
    majority = members // 2 + 1
    held = _appends(events)
    pos_of: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
    for e in events:
        if e.get("kind") == "append" and e.get("term") is not None:
            pos_of.setdefault((e["node"], e["pos"]), []).append((e["t"], int(e["index"]), int(e["term"])))
    out = []
    for put in _ok_puts(events):
        at = [x for x in pos_of.get((put["node"], put["phy_offset"] - DLEDGER_HEADER), []) if x[0] <= put["t"]]
        if not at:
            out.append({"put": _brief(put), "evidence": [],
                        "why": f"PUT_OK at {put['node']} for an entry its trace never appended"})
            continue
        _, index, term = at[-1]
        had = sorted({node for node, t_app, t_cut in held[(index, term)] if t_app <= put["t"] < t_cut})
        if len(had) < majority:
            out.append({"put": _brief(put), "index": index, "term": term, "appended_by": had,
                        "evidence": [{"node": n, "t": t, "kind": "append", "index": index, "term": term}
                                     for n, t, _ in held[(index, term)]],
                        "why": f"PUT_OK at {put['node']} for entry {index} of term {term} appended by "
                               f"{', '.join(had) or 'nobody'} (a majority is {majority} of {members})"})
    return out


def _sync_state_sets(events: list[Event]) -> list[tuple[int, int | None, frozenset[int]]]:
    """(t, committed master, committed SyncStateSet) from the controllers' applied log, each entry once."""
    seen: set[int] = set()
    out = []
    master: int | None = None
    current: frozenset[int] = frozenset()
    for e in events:
        if e.get("kind") != "controller_apply" or e["index"] in seen:
            continue
        seen.add(e["index"])
        if e.get("event") == "ALTER_SYNC_STATE_SET_EVENT" and e.get("members") is not None:
            current = frozenset(e["members"])
        elif e.get("event") == "ELECT_MASTER_EVENT":
            master = e.get("master")
            current = frozenset([master]) if master is not None else current
        else:
            continue
        out.append((e["t"], master, current))
    return out


def elections_outside_sync_state_set(events: list[Event]) -> list[dict[str, Any]]:
    """A master elected outside the committed SyncStateSet (module docstring)."""
    seen: set[int] = set()
    current: dict[str, frozenset[int]] = {}
    source: dict[str, Event] = {}
    out = []
    for e in events:
        if e.get("kind") != "controller_apply" or e["index"] in seen:
            continue
        seen.add(e["index"])
        name = e.get("broker_name", "")
        if e.get("event") == "ALTER_SYNC_STATE_SET_EVENT" and e.get("members") is not None:
            current[name], source[name] = frozenset(e["members"]), e
        elif e.get("event") == "ELECT_MASTER_EVENT" and e.get("master") is not None:
            if current.get(name) and e["master"] not in current[name]:
                out.append({"election": dict(e), "sync_state_set": sorted(current[name]),
                            "evidence": [dict(source[name]), dict(e)],
                            "why": f"broker {e['master']} elected master of {name} outside its SyncStateSet "
                                   f"{sorted(current[name])}"})
            current[name], source[name] = frozenset([e["master"]]), e
    return out


def _broker_ids(events: list[Event]) -> dict[str, int]:
    ids: dict[str, int] = {}
    for e in events:
        if e.get("kind") == "replicas_state" and e.get("broker_id") is not None and e["broker_id"] >= 0:
            ids[e["node"]] = int(e["broker_id"])
    return ids


def all_ack_acks(events: list[Event], brokers: Iterable[str]) -> list[dict[str, Any]]:
    """allAckInSyncStateSet: ``PUT_OK`` before every SyncStateSet member reported it (module docstring)."""
    ids = _broker_ids(events)
    sets = _sync_state_sets(events)
    member_of: dict[tuple[str, str], int] = {}  # (master node, slave address) -> broker id
    reported: dict[tuple[str, int], Event] = {}  # (master node, broker id) -> best report
    out = []
    for e in events:
        kind, node = e.get("kind"), e.get("node")
        if kind == "fault" and e.get("action") == "crash":
            for target in e.get("targets") or []:
                for key in [k for k in reported if k[0] == target]:
                    del reported[key]
        elif kind == "ha_handshake" and e.get("slave_id") is not None:
            member_of[(node, e["slave"])] = int(e["slave_id"])
        elif kind == "ha_report" and (node, e["slave"]) in member_of:
            key = (node, member_of[(node, e["slave"])])
            if key not in reported or e["offset"] >= reported[key]["offset"]:
                reported[key] = e
        elif kind == "put" and e.get("status") == "PUT_OK" and e.get("phy_offset") is not None \
                and node in brokers and node in ids:
            committed = [(master, members) for t, master, members in sets if t <= e["t"]]
            if not committed or committed[-1][0] != ids[node]:
                continue  # a deposed master's acknowledgements: the loss checks judge what became of them
            members = committed[-1][1]
            end = e["phy_offset"] + (e.get("size") or 0)
            short = sorted(m for m in members if m != ids[node]
                           and ((node, m) not in reported or reported[(node, m)]["offset"] < end))
            if short:
                out.append({"put": _brief(e), "end": end, "sync_state_set": sorted(members), "missing": short,
                            "evidence": [_brief(reported[(node, m)]) for m in sorted(members)
                                         if (node, m) in reported],
                            "why": f"PUT_OK at {node} for bytes up to {end} before SyncStateSet member(s) "
                                   f"{short} reported them"})
    return out


def trace_gaps(events: list[Event], logs: Mapping[str, list[tuple[int, int, str]]]) -> list[dict[str, Any]]:
    """Entries a member's store holds that its trace never appended: the trace lost events."""
    traced: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for e in events:
        if e.get("kind") == "append" and e.get("term") is not None:
            traced[e["node"]].add((int(e["index"]), int(e["term"])))
    out = []
    for node, log in sorted(logs.items()):
        missing = [(i, t) for i, t, _ in log if (i, t) not in traced[node]]
        if missing:
            out.append({"node": node, "entries": len(missing), "first": list(missing[0]), "last": list(missing[-1]),
                        "why": f"{node}'s store holds {len(missing)} entries its trace never appended "
                               f"(first {missing[0][0]} of term {missing[0][1]}): its trace lost events"})
    return out


def store_losses(events: list[Event], logs: Mapping[str, list[tuple[int, int, str]]]) -> list[dict[str, Any]]:
    """Entries a member traced appending, never truncated by the protocol, absent from its store at the
    end - or appended by it a second time (a restart had lost them and the leader sent them again)."""
    have: dict[str, dict[int, int]] = defaultdict(dict)  # node -> index -> term, what the trace says it holds
    again: dict[str, list[int]] = defaultdict(list)  # appended a second time: the store had lost it
    for e in events:
        kind, node = e.get("kind"), e.get("node")
        if kind == "append" and e.get("term") is not None:
            index, term = int(e["index"]), int(e["term"])
            if have[node].get(index) == term:
                again[node].append(index)
            have[node][index] = term
        elif kind == "truncate":
            for index in [i for i in have[node] if i >= e["index"]]:
                del have[node][index]
    out = []
    for node, log in sorted(logs.items()):
        stored = {i: t for i, t, _ in log}
        gone = sorted({i for i, t in have.get(node, {}).items() if stored.get(i) != t} | set(again.get(node, [])))
        if gone:
            out.append({"node": node, "entries": len(gone), "first": gone[0], "last": gone[-1],
                        "why": f"{node} appended entries {gone[0]}..{gone[-1]} ({len(gone)}) that its store no "
                               f"longer held (absent at the end or appended again), with no truncation in its trace: the store "
                               f"lost them"})
    return out


def run_checks(system: str, variant: str, brokers: tuple[str, ...], events: list[Event],
               logs: Mapping[str, list[tuple[int, int, str]]], slave_end: int | None = None) -> dict[str, dict[str, Any]]:
    """The checks that apply to a system, by the name a verdict gives a finding: ``{name: {"count": n,
    "first": the first finding}}``, only the names with findings (empty: every check held). ``slave_end``:
    where a classic pair's slave's CommitLog ends."""
    found: dict[str, list[dict[str, Any]]] = {}
    if system == "sync-pair":
        found["early-ack"] = pair_acks(events, brokers[0])
    if system in ("sync-pair", "async-pair"):
        found["slave-ack-before-write"] = slave_acks(events, brokers[0], slave_end)
    if system == "dledger":
        found["early-ack"] = dledger_acks(events, len(brokers))
        found["trace-lost"] = trace_gaps(events, logs)
        found["store-lost-entries"] = store_losses(events, logs)
    if system == "controller":
        found["election-outside-sync-state-set"] = elections_outside_sync_state_set(events)
        if variant == "all-ack":
            found["early-ack"] = all_ack_acks(events, brokers)
    return {name: {"count": len(items), "first": items[0]} for name, items in found.items() if items}
