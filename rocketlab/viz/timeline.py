"""What the trace says about each node over time: role segments, down and paused spans, partitions.

Every figure, graph and widget of :mod:`rocketlab.viz` reads trace events only (docs/trace.md),
through the helpers here: :func:`as_records` accepts a list of event dicts or one run's pandas
DataFrame from :func:`rocketlab.trace.rundir.load_events`; the rest rebuild the cluster's history from
``role``, ``term`` and ``fault`` events. Nothing here draws.

Fault semantics follow :class:`rocketlab.sim.Cluster`: a crash ends a pause, a restart brings a node up
with its role unknown until its next ``role`` event, and each ``partition`` replaces the previous one
(its ``targets`` are groups joined by commas; nodes not named form one more group) until ``heal``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rocketlab.i18n import N_, _
from rocketlab.trace.schema import FIELD_TYPES

Event = dict[str, Any]
Events = Any  # a sequence of event dicts, or a pandas DataFrame of one run

UP = "UP"  # a live node whose role the trace has not told yet (pingpong nodes have no roles)
DOWN = "DOWN"  # crashed, not yet restarted


def natural_key(node_id: str) -> tuple:
    """Sort ``n2`` before ``n10``."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(node_id)))


def _clean(value: Any, type_name: str | None) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if type_name == "long" and isinstance(value, float):
        return int(value)
    if type_name == "strings" and value is not None and not isinstance(value, (list, tuple)):
        return list(value)  # numpy arrays from Parquet
    return value


def _frame_records(frame: Any) -> list[Event]:
    if "run" in frame.columns and frame["run"].nunique() > 1:
        names = ", ".join(sorted(str(r) for r in frame["run"].unique()))
        raise ValueError(f"these events hold several runs ({names}); pass one: frame[frame.run == NAME]")
    types = {"t": "long", "seq": "long", **FIELD_TYPES}
    records = []
    for row in frame.to_dict("records"):
        event = {k: _clean(v, types.get(k)) for k, v in row.items() if k != "run"}
        records.append({k: v for k, v in event.items() if v is not None or k == "node"})
    return records


def as_records(events: Events) -> list[Event]:
    """One run's events as plain dicts ordered by ``(t, seq)``; NaN from a DataFrame becomes absent."""
    if events is None:
        return []
    if hasattr(events, "to_dict") and hasattr(events, "columns"):
        records = _frame_records(events)
    else:
        records = [dict(e) for e in events]
    return sorted(records, key=lambda e: (e.get("t", 0), e.get("seq", 0)))


def of_kind(records: Iterable[Event], *kinds: str) -> list[Event]:
    return [e for e in records if e.get("kind") in kinds]


def end_ms(records: Sequence[Event]) -> int:
    """The time of the last event (0 for an empty trace)."""
    return max((e["t"] for e in records), default=0)


def start_ms(records: Sequence[Event]) -> int:
    return min((e["t"] for e in records), default=0)


def run_range(records: Sequence[Event], until_ms: int | None = None) -> list[int]:
    """The run's whole time span, so every time axis of a report lines up."""
    t0 = start_ms(records)
    t_end = end_ms(records) if until_ms is None else until_ms
    return [t0, max(t_end, t0 + 1)]


def _group_members(target: str) -> list[str]:
    return [n for n in str(target).split(",") if n]


def node_ids(records: Iterable[Event]) -> list[str]:
    """Every node the trace mentions (emitters, message ends, voters, fault targets), naturally sorted."""
    found: set[str] = set()
    for e in records:
        for name in ("node", "src", "dst", "candidate", "voter"):
            if e.get(name):
                found.add(str(e[name]))
        if e.get("kind") == "fault" and e.get("action") not in ("drop", "network"):
            for target in e.get("targets") or ():
                found.update(_group_members(target))
    return sorted(found, key=natural_key)


@dataclass(frozen=True)
class Segment:
    """A node in one state from ``start_ms`` to ``end_ms``: a role name, :data:`UP` or :data:`DOWN`."""

    node: str
    state: str
    start_ms: int
    end_ms: int
    term: int | None = None
    leader: str | None = None


@dataclass
class _Open:
    state: str
    start_ms: int
    term: int | None = None
    leader: str | None = None


class _SegmentBuilder:
    """Walks the events once, closing a node's open segment whenever its state changes."""

    def __init__(self, nodes: Sequence[str], t0: int) -> None:
        self.open = {n: _Open(UP, t0) for n in nodes}
        self.done: list[Segment] = []

    def switch(self, node: str, t: int, state: str, term: int | None, leader: str | None) -> None:
        current = self.open.get(node)
        if current is not None:
            if (current.state, current.term, current.leader) == (state, term, leader):
                return
            if t > current.start_ms:
                self.done.append(Segment(node, current.state, current.start_ms, t, current.term,
                                         current.leader))
        self.open[node] = _Open(state, t, term, leader)

    def on_event(self, e: Event) -> None:
        node, t = e.get("node"), e["t"]
        current = self.open.get(node) if node else None
        if e["kind"] == "role" and node:
            self.switch(node, t, str(e.get("role")), e.get("term"), e.get("leader"))
        elif e["kind"] == "term" and current is not None and current.state != DOWN:
            self.switch(node, t, current.state, e.get("term"), current.leader)
        elif e["kind"] == "fault" and e.get("action") in ("crash", "restart"):
            for target in e.get("targets") or ():
                last = self.open.get(target)
                term = last.term if last is not None else None
                self.switch(target, t, DOWN if e["action"] == "crash" else UP, term, None)

    def finish(self, t_end: int) -> list[Segment]:
        for node, current in self.open.items():
            if t_end > current.start_ms:
                self.done.append(Segment(node, current.state, current.start_ms, t_end, current.term,
                                         current.leader))
        return sorted(self.done, key=lambda s: (natural_key(s.node), s.start_ms))


def role_segments(records: Sequence[Event], until_ms: int | None = None) -> list[Segment]:
    """Each node's history as segments: UP (role unknown), a role with its term, or DOWN."""
    builder = _SegmentBuilder(node_ids(records), start_ms(records))
    for e in records:
        builder.on_event(e)
    return builder.finish(end_ms(records) if until_ms is None else until_ms)


@dataclass(frozen=True)
class Span:
    """A stretch of time with a label: a pause, or a partition and its groups."""

    start_ms: int
    end_ms: int
    label: str
    groups: tuple[tuple[str, ...], ...] = ()


def paused_spans(records: Sequence[Event], until_ms: int | None = None) -> dict[str, list[Span]]:
    """Per node, the spans between ``pause`` and ``resume`` (or a crash, or the end)."""
    t_end = end_ms(records) if until_ms is None else until_ms
    since: dict[str, int] = {}
    spans: dict[str, list[Span]] = {}
    for e in of_kind(records, "fault"):
        for target in e.get("targets") or ():
            if e.get("action") == "pause":
                since.setdefault(target, e["t"])
            elif e.get("action") in ("resume", "crash") and target in since:
                spans.setdefault(target, []).append(Span(since.pop(target), e["t"], "paused"))
    for target, t in since.items():
        spans.setdefault(target, []).append(Span(t, t_end, "paused"))
    return spans


def partition_groups(targets: Sequence[str], nodes: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The groups of a ``partition`` fault: the named ones, then the unnamed nodes together."""
    groups = [tuple(_group_members(t)) for t in targets]
    named = {n for g in groups for n in g}
    rest = tuple(n for n in nodes if n not in named)
    return tuple(g for g in [*groups, rest] if g)


def partition_spans(records: Sequence[Event], until_ms: int | None = None) -> list[Span]:
    """Each partition from its ``partition`` fault to the next partition, ``heal``, or the end."""
    nodes = node_ids(records)
    t_end = end_ms(records) if until_ms is None else until_ms
    spans: list[Span] = []
    current: tuple[int, tuple[tuple[str, ...], ...]] | None = None
    for e in of_kind(records, "fault"):
        if e.get("action") not in ("partition", "heal"):
            continue
        if current is not None:
            spans.append(Span(current[0], e["t"], _partition_label(current[1]), current[1]))
            current = None
        if e["action"] == "partition":
            current = (e["t"], partition_groups(e.get("targets") or (), nodes))
    if current is not None:
        spans.append(Span(current[0], t_end, _partition_label(current[1]), current[1]))
    return spans


def _partition_label(groups: Sequence[Sequence[str]]) -> str:
    return " | ".join(",".join(g) for g in groups)


@dataclass(frozen=True)
class NodeState:
    """A node at one instant, as the trace tells it."""

    node: str
    state: str
    term: int | None
    leader: str | None
    paused: bool

    @property
    def alive(self) -> bool:
        return self.state != DOWN


def states_at(records: Sequence[Event], at_ms: int) -> dict[str, NodeState]:
    """Every node's state at ``at_ms`` (events at exactly ``at_ms`` count as done)."""
    upto = [e for e in records if e["t"] <= at_ms]
    nodes = node_ids(records)
    builder = _SegmentBuilder(nodes, start_ms(records))
    for e in upto:
        builder.on_event(e)
    paused = paused_spans(upto, at_ms + 1)
    states = {}
    for node in nodes:
        cur = builder.open[node]
        is_paused = any(s.start_ms <= at_ms < s.end_ms for s in paused.get(node, ()))
        states[node] = NodeState(node, cur.state, cur.term, cur.leader, is_paused)
    return states


def groups_at(records: Sequence[Event], at_ms: int) -> tuple[tuple[str, ...], ...] | None:
    """The partition in force at ``at_ms`` (its groups), or None when the network is whole."""
    for span in partition_spans([e for e in records if e["t"] <= at_ms], at_ms + 1):
        if span.start_ms <= at_ms < span.end_ms:
            return span.groups
    return None


FAULT_WORDS = {action: action for action in (
    N_("crash"), N_("host_down"), N_("restart"), N_("pause"), N_("resume"), N_("timeout"), N_("isolate"),
    N_("transfer"), N_("heal"), N_("partition"), N_("cut_link"), N_("heal_link"), N_("drop"), N_("network"),
    N_("disk"), N_("lost"))}
"""The trace's fault actions (rocketlab.trace.schema.FAULT_ACTIONS) as figures and why lines name them: English
keeps the action's own name, the catalogue gives each its words (the viewer's menus have theirs in js/)."""


def fault_line(event: Mapping[str, Any]) -> str:
    """A fault in a few words: ``crash n1``, ``partition n0 | n1,n2``, ``heal`` (the action in the kit's language)."""
    targets = event.get("targets") or ()
    action = event.get("action")
    if action == "lost" and len(targets) == 3:
        return _("{node} lost entries {first}..{last} (unflushed at the crash)").format(
            node=targets[0], first=targets[1], last=targets[2])
    joiner = " | " if action == "partition" else " -> " if action in ("cut_link", "heal_link", "transfer") else ","
    word = _(FAULT_WORDS[action]) if action in FAULT_WORDS else action
    return f"{word} {joiner.join(str(t) for t in targets)}".strip()
