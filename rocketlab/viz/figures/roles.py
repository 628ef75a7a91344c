"""The role timeline: role and term of every node over time, with the faults and violations above.

Rocketlab's own figure (no Java class): one row per node, bars coloured by the role the ``role`` events
give (DLedgerLeaderElector's LEADER / CANDIDATE / FOLLOWER, a broker's MASTER / SLAVE), hatching while
paused, red bands during a partition; above the rows, fault labels laid out in lanes so that none
overlaps another, and the first invariant violation named.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from rocketlab.i18n import N_, _, ngettext
from rocketlab.trace.recorder import describe
from rocketlab.viz.style import (
    BAR_EDGE,
    FAULT_MARK,
    NOTE_TEXT,
    TIME_AXIS_TITLE,
    VIOLATION_COLOR,
    base_layout,
    empty_figure,
    label_halo,
    overlay_pattern,
    role_color,
    shade_partitions,
    text_color_on,
    text_px,
)
from rocketlab.viz.timeline import (
    DOWN,
    UP,
    Event,
    Events,
    Segment,
    Span,
    as_records,
    fault_line,
    node_ids,
    of_kind,
    partition_spans,
    paused_spans,
    role_segments,
    run_range,
)

FAULT_ROW = N_("faults")  # the top row's category; its tick label is translated
ROLE_ORDER = ("LEADER", "CANDIDATE", "FOLLOWER", "MASTER", "SLAVE")
STATE_NAMES = {UP: N_("up (role unknown)"), DOWN: N_("down (crashed)")}
# the second cue beside the colour (Okabe-Ito alone is not enough for every eye): a hatch per role
ROLE_PATTERNS = {"LEADER": "/", "CANDIDATE": ".", "MASTER": "x", "SLAVE": "\\", "FOLLOWER": ""}


def role_timeline(events: Events, *, until_ms: int | None = None) -> go.Figure:
    """Role and term of every node over time, one row per node, faults marked on the time axis.

    Bars are coloured by role (LEADER, FOLLOWER, CANDIDATE, MASTER, SLAVE; grey while crashed, pale
    green while up with no role known) and labelled ``T<term>``; hatching marks a paused node, red
    bands a partition, and the top row lists the faults (and any invariant violation) at their times.
    """
    records = as_records(events)
    nodes = node_ids(records)
    if not nodes:
        return empty_figure(_("Roles and terms"), ["role", "term", "fault"])
    fig = go.Figure()
    _add_segment_bars(fig, role_segments(records, until_ms))
    _add_paused_bars(fig, paused_spans(records, until_ms))
    x_range = run_range(records, until_ms)
    lanes = _add_fault_marks(fig, records, x_range)
    _add_violation_marks(fig, records)
    shade_partitions(fig, partition_spans(records, until_ms), label=not lanes)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=nodes, autorange="reversed")
    fig.update_xaxes(title=_(TIME_AXIS_TITLE), range=x_range)
    fig.update_layout(barmode="overlay", bargap=0.25, uniformtext=dict(minsize=9, mode="hide"))
    nodes_px, lanes_px = 48 * len(nodes), FAULT_LANE_PX * lanes
    if lanes:  # the fault lanes: an axis of their own above the nodes' rows, each lane a short row
        rows = fault_lane_rows(lanes)
        split = nodes_px / (nodes_px + lanes_px)
        fig.update_layout(yaxis=dict(domain=[0, split]), yaxis2=dict(
            domain=[split, 1], anchor="x", type="category", categoryorder="array", categoryarray=rows,
            autorange="reversed", tickmode="array", tickvals=rows, ticktext=[_(FAULT_ROW)] + [""] * (lanes - 1),
            showgrid=False))
    if not of_kind(records, "role"):
        fig.add_annotation(text=_("no role events in this run: bars show only up / down / paused"), x=0.5,
                           y=-0.02, xref="paper", yref="paper", yanchor="top", yshift=-40, showarrow=False,
                           font=dict(color=NOTE_TEXT))
    return base_layout(fig, _timeline_title(records), 170 + nodes_px + lanes_px, legend="top")


def _timeline_title(records: Sequence[Event]) -> str:
    terms = [e["term"] for e in of_kind(records, "role", "term") if e.get("term") is not None]
    faults = len(of_kind(records, "fault"))
    head = _("Roles and terms") if of_kind(records, "role") else _("Nodes over time")
    head += _(" (last term {term})").format(term=max(terms)) if terms and max(terms) > 0 else ""
    return ngettext("{head}: {n} fault", "{head}: {n} faults", faults).format(head=head, n=faults)


def _state_order(state: str) -> tuple[int, str]:
    if state in ROLE_ORDER:
        return ROLE_ORDER.index(state), state
    return (len(ROLE_ORDER) + (1 if state == UP else 2 if state == DOWN else 0)), state


def _add_segment_bars(fig: go.Figure, segments: Sequence[Segment]) -> None:
    by_state: dict[str, list[Segment]] = defaultdict(list)
    for seg in segments:
        by_state[seg.state].append(seg)
    for state in sorted(by_state, key=_state_order):
        segs = by_state[state]
        fig.add_trace(go.Bar(
            orientation="h", name=_(STATE_NAMES[state]) if state in STATE_NAMES else state, y=[s.node for s in segs],
            base=[s.start_ms for s in segs], x=[s.end_ms - s.start_ms for s in segs],
            marker=dict(color=role_color(state), line=BAR_EDGE,
                        pattern=role_pattern(state)),
            text=[_term_label(s) for s in segs],
            textposition="inside", insidetextanchor="middle",
            textfont=dict(color=text_color_on(role_color(state)), shadow=label_halo(role_color(state))),
            customdata=[[s.end_ms, "-" if s.term is None else s.term, s.leader or "-"] for s in segs],
            hovertemplate=_("{node} {state}<br>term {term}, leader {leader}<br>{start} → {end} ms").format(
                node="%{y}", state=state, term="%{customdata[1]}", leader="%{customdata[2]}", start="%{base}",
                end="%{customdata[0]}") + "<extra></extra>",
        ))


def role_pattern(state: str) -> dict[str, Any]:
    """A role's second cue: light stripes over the role's solid colour (``overlay``: plotly's default
    ``replace`` draws the stripes alone, which on a dark page shows near-black bars under black labels)."""
    return overlay_pattern(ROLE_PATTERNS.get(state, ""), role_color(state))


def _term_label(seg: Segment) -> str:
    """``T3`` on a role bar; nothing while down, nor for classic HA's MASTER / SLAVE at term 0."""
    if seg.term is None or seg.state == DOWN or (seg.term == 0 and seg.state in ("MASTER", "SLAVE")):
        return ""
    return f"T{seg.term}"


def _add_paused_bars(fig: go.Figure, spans: dict[str, list[Span]]) -> None:
    pairs = [(node, s) for node, node_spans in spans.items() for s in node_spans]
    if not pairs:
        return
    fig.add_trace(go.Bar(
        orientation="h", name=_("paused"), y=[n for n, _ in pairs], base=[s.start_ms for _, s in pairs],
        x=[s.end_ms - s.start_ms for _, s in pairs],
        marker=dict(color="rgba(255,255,255,0.35)", line=dict(width=1, color="#333"),
                    pattern=dict(shape="/", fgcolor="#333", size=6)),
        hovertemplate=_("{node} paused<br>{start} ms for {length} ms").format(node="%{y}", start="%{base}", length="%{x}")
        + "<extra></extra>",
    ))


# fault labels are laid out for a plot area at least this wide (plotly's default figure is 700 px wide,
# 600 between the margins; JupyterLab's cells are wider), in Open Sans / Arial at FAULT_FONT_PX
FAULT_LABEL_PLOT_PX = 600
FAULT_FONT_PX = 10
FAULT_CHAR_PX = 0.62 * FAULT_FONT_PX  # a generous average glyph width: boxes err on the wide side
FAULT_LABEL_GAP_PX = 8
FAULT_LANE_PX = 30  # a lane holds a marker (11 px) with its label above it


@dataclass(frozen=True)
class LabelBox:
    """Where a fault label goes: its lane (0 = the top ``faults`` row), its text anchor and its extent in
    pixels from the plot area's left edge."""

    lane: int
    position: str
    left_px: float
    right_px: float


def label_width_px(text: str) -> float:
    return text_px(text, FAULT_FONT_PX, FAULT_CHAR_PX)


def fault_label_boxes(times: Sequence[int], labels: Sequence[str], x_range: Sequence[int],
                      plot_px: int = FAULT_LABEL_PLOT_PX) -> list[LabelBox]:
    """Lanes for the labels so that no two in a lane overlap: each label, in time order, takes the first
    lane whose last label ends (plus a gap) before it starts. A label is centred on its time, or starts
    (ends) there when centring would push it past the plot's left (right) edge."""
    x0, x1 = x_range
    scale = plot_px / max(x1 - x0, 1)
    lane_ends: list[float] = []
    boxes = []
    for t, text in zip(times, labels, strict=True):
        at, width = (t - x0) * scale, label_width_px(text)
        if at - width / 2 < 0:
            position, left = "top right", at
        elif at + width / 2 > plot_px:
            position, left = "top left", at - width
        else:
            position, left = "top center", at - width / 2
        lane = next((i for i, end in enumerate(lane_ends) if end + FAULT_LABEL_GAP_PX <= left), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(left + width)
        else:
            lane_ends[lane] = left + width
        boxes.append(LabelBox(lane, position, left, left + width))
    return boxes


def fault_lane_rows(lanes: int) -> list[str]:
    """The y categories of the fault lanes: ``faults``, then ``faults 2``, ``faults 3`` ... (unlabelled)."""
    return [FAULT_ROW] + [f"{FAULT_ROW} {k}" for k in range(2, lanes + 1)]


def _add_fault_marks(fig: go.Figure, records: Sequence[Event], x_range: Sequence[int]) -> int:
    """The fault lanes: one marker per fault time (simultaneous faults share a label) and a dotted line,
    and the first invariant violation's name; the labels laid out in as many lanes as it takes for none
    to overlap. Returns the number of lanes (0: no faults, no violation)."""
    by_time: dict[int, list[str]] = defaultdict(list)
    for e in of_kind(records, "fault"):
        by_time[e["t"]].append(fault_line(e))
    violations = of_kind(records, "violation")
    if not by_time and not violations:
        return 0
    times = sorted(by_time)
    labels = ["; ".join(by_time[t]) for t in times]
    if violations:  # laid out with the faults, so it never covers one
        times.append(violations[0]["t"])
        labels.append(_("first violation: {invariants}").format(invariants=", ".join(violated_invariants(violations[0]))))
    order = sorted(range(len(times)), key=lambda i: times[i])
    boxes = dict(zip(order, fault_label_boxes([times[i] for i in order], [labels[i] for i in order], x_range),
                     strict=True))
    rows = fault_lane_rows(1 + max(b.lane for b in boxes.values()))
    faults = range(len(by_time))
    if by_time:
        fig.add_trace(go.Scatter(
            x=[times[i] for i in faults], y=[rows[boxes[i].lane] for i in faults], yaxis="y2",
            mode="markers+text", name=_("fault"), cliponaxis=False, text=[labels[i] for i in faults],
            textposition=[boxes[i].position for i in faults], textfont=dict(size=FAULT_FONT_PX, color=FAULT_MARK),
            marker=dict(symbol="triangle-down", size=11, color=FAULT_MARK),
            hovertemplate="t=%{x} ms<br>%{text}<extra></extra>",
        ))
    if violations:
        last = len(times) - 1
        fig.add_trace(go.Scatter(
            x=[times[last]], y=[rows[boxes[last].lane]], yaxis="y2", mode="markers+text", name=_("first violation"),
            cliponaxis=False, text=[labels[last]], textposition=[boxes[last].position],
            textfont=dict(size=FAULT_FONT_PX, color=VIOLATION_COLOR),
            marker=dict(symbol="x-thin", size=11, color=VIOLATION_COLOR, line=dict(width=2, color=VIOLATION_COLOR)),
            showlegend=False, hovertemplate="%{text}<extra></extra>",
        ))
    for t in sorted(by_time)[:60]:
        fig.add_vline(x=t, line=dict(color="#999", width=1, dash="dot"), layer="below")
    return len(rows)


def _add_violation_marks(fig: go.Figure, records: Sequence[Event]) -> None:
    """A cross on the node's row (or in the top fault lane) at each violation, a red line at the first."""
    violations = of_kind(records, "violation")
    if not violations:
        return
    on_node = [e for e in violations if e.get("node")]
    elsewhere = [e for e in violations if not e.get("node")]
    for group, axis in ((on_node, "y"), (elsewhere, "y2")):
        if group:
            fig.add_trace(go.Scatter(
                x=[e["t"] for e in group], y=[e.get("node") or FAULT_ROW for e in group], yaxis=axis,
                mode="markers", name=_("violation"), text=[describe(e) for e in group], legendgroup="violation",
                showlegend=group is (on_node or elsewhere),
                marker=dict(symbol="x", size=14, color=VIOLATION_COLOR, line=dict(width=2, color=VIOLATION_COLOR)),
                hovertemplate="%{text}<extra></extra>",
            ))
    fig.add_vline(x=violations[0]["t"], line=dict(color=VIOLATION_COLOR, width=2))


def violated_invariants(event: Event) -> list[str]:
    """The invariants a ``violation`` event reports broken, by name.

    A checker that watches several invariants (``DLedgerChecker``, named ``dledger``) records itself as
    the ``invariant`` and each broken one in the detail as ``name: what was seen``, joined by ``; ``:
    those names (snake_case, so a node id like ``n1:`` is not one) are returned, in order; otherwise the
    ``invariant`` field itself."""
    named = re.findall(r"(?:^|; )([a-z][a-z0-9]*(?:_[a-z0-9]+)+): ", str(event.get("detail") or ""))
    unique = list(dict.fromkeys(named))
    return unique or [str(event.get("invariant"))]


__all__ = ["FAULT_LABEL_PLOT_PX", "FAULT_FONT_PX", "LabelBox", "fault_label_boxes", "fault_lane_rows", "role_timeline",
           "violated_invariants"]
