"""Every figure a learner sees, one call each, reading trace events only.

Each function takes one run's events (a list of event dicts, e.g. ``cluster.events``, or a pandas
DataFrame from :func:`rocketlab.trace.rundir.load_events`) and returns a plotly ``Figure``. A run that
lacks the kinds a figure needs gets a figure that says so ("no put events in this run"), never an
exception. Field names are the trace contract's (docs/trace.md).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.trace.recorder import describe
from rocketlab.viz.style import (
    GRANTED_COLOR,
    NO_ANSWER_COLOR,
    PAGE_TEXT,
    PALETTE,
    TIME_AXIS_TITLE,
    base_layout,
    empty_figure,
    mark_faults,
    nice_bin_ms,
    note_figure,
    role_color,
    series_colors,
    shade_partitions,
    text_color_on,
    whole_number_ticks,
)
from rocketlab.viz.timeline import (
    DOWN,
    UP,
    Event,
    Events,
    Segment,
    Span,
    as_records,
    end_ms,
    fault_line,
    node_ids,
    of_kind,
    partition_spans,
    paused_spans,
    role_segments,
    start_ms,
)

FAULT_ROW = "faults"
ROLE_ORDER = ("LEADER", "CANDIDATE", "FOLLOWER", "MASTER", "SLAVE")
STATE_NAMES = {UP: "up (role unknown)", DOWN: "down (crashed)"}
WRITTEN_STATUSES = ("PUT_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE")
ROUND_COLORS = {"PASSED": GRANTED_COLOR, "WAIT_TO_REVOTE": "#E69F00", "REVOTE_IMMEDIATELY": "#CC79A7",
                "WAIT_TO_VOTE_NEXT": "#D55E00"}
REJECTION_PALETTE = ("#D55E00", "#E69F00", "#CC79A7", "#0072B2", "#F0E442", "#56B4E9", "#7a7a7a", "#000000")
# the second cue beside the colour (Okabe-Ito alone is not enough for every eye): a hatch per role
ROLE_PATTERNS = {"LEADER": "/", "CANDIDATE": ".", "MASTER": "x", "SLAVE": "\\", "FOLLOWER": ""}
STATUS_COLORS = {"PUT_OK": GRANTED_COLOR, "FLUSH_SLAVE_TIMEOUT": "#E69F00", "SLAVE_NOT_AVAILABLE": "#D55E00",
                 "FLUSH_DISK_TIMEOUT": "#CC79A7"}
STATUS_SYMBOLS = {"PUT_OK": "circle", "FLUSH_SLAVE_TIMEOUT": "triangle-up", "SLAVE_NOT_AVAILABLE": "x",
                  "FLUSH_DISK_TIMEOUT": "diamond"}  # the second cue: a failed put never looks like PUT_OK


# --- roles and terms ------------------------------------------------------------------------------
def role_timeline(events: Events, *, until_ms: int | None = None) -> go.Figure:
    """Role and term of every node over time, one row per node, faults marked on the time axis.

    Bars are coloured by role (LEADER, FOLLOWER, CANDIDATE, MASTER, SLAVE; grey while crashed, pale
    green while up with no role known) and labelled ``T<term>``; hatching marks a paused node, red
    bands a partition, and the top row lists the faults (and any invariant violation) at their times.
    """
    records = as_records(events)
    nodes = node_ids(records)
    if not nodes:
        return empty_figure("Roles and terms", ["role", "term", "fault"])
    fig = go.Figure()
    _add_segment_bars(fig, role_segments(records, until_ms))
    _add_paused_bars(fig, paused_spans(records, until_ms))
    x_range = run_range(records, until_ms)
    lanes = _add_fault_marks(fig, records, x_range)
    _add_violation_marks(fig, records)
    shade_partitions(fig, partition_spans(records, until_ms), label=not lanes)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=nodes, autorange="reversed")
    fig.update_xaxes(title=TIME_AXIS_TITLE, range=x_range)
    fig.update_layout(barmode="overlay", bargap=0.25, uniformtext=dict(minsize=9, mode="hide"))
    nodes_px, lanes_px = 48 * len(nodes), FAULT_LANE_PX * lanes
    if lanes:  # the fault lanes: an axis of their own above the nodes' rows, each lane a short row
        rows = fault_lane_rows(lanes)
        split = nodes_px / (nodes_px + lanes_px)
        fig.update_layout(yaxis=dict(domain=[0, split]), yaxis2=dict(
            domain=[split, 1], anchor="x", type="category", categoryorder="array", categoryarray=rows,
            autorange="reversed", tickmode="array", tickvals=rows, ticktext=[FAULT_ROW] + [""] * (lanes - 1),
            showgrid=False))
    if not of_kind(records, "role"):
        fig.add_annotation(text="no role events in this run: bars show only up / down / paused", x=0.5,
                           y=-0.02, xref="paper", yref="paper", yanchor="top", yshift=-40, showarrow=False,
                           font=dict(color="#555"))
    return base_layout(fig, _timeline_title(records), 170 + nodes_px + lanes_px, legend="top")


def run_range(records: Sequence[Event], until_ms: int | None = None) -> list[int]:
    """The run's whole time span, so every time axis of a report lines up."""
    t0 = start_ms(records)
    t_end = end_ms(records) if until_ms is None else until_ms
    return [t0, max(t_end, t0 + 1)]


def _timeline_title(records: Sequence[Event]) -> str:
    terms = [e["term"] for e in of_kind(records, "role", "term") if e.get("term") is not None]
    faults = len(of_kind(records, "fault"))
    head = "Roles and terms" if of_kind(records, "role") else "Nodes over time"
    head += f" (last term {max(terms)})" if terms and max(terms) > 0 else ""
    return f"{head}: {faults} fault{'s' if faults != 1 else ''}"


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
            orientation="h", name=STATE_NAMES.get(state, state), y=[s.node for s in segs],
            base=[s.start_ms for s in segs], x=[s.end_ms - s.start_ms for s in segs],
            marker=dict(color=role_color(state), line=dict(width=0.5, color="white"),
                        pattern=dict(shape=ROLE_PATTERNS.get(state, ""), fgopacity=0.35)),
            text=[_term_label(s) for s in segs],
            textposition="inside", insidetextanchor="middle", textfont=dict(color=text_color_on(role_color(state))),
            customdata=[[s.end_ms, "-" if s.term is None else s.term, s.leader or "-"] for s in segs],
            hovertemplate=(f"%{{y}} {state}<br>term %{{customdata[1]}}, leader %{{customdata[2]}}"
                           "<br>%{base} → %{customdata[0]} ms<extra></extra>"),
        ))


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
        orientation="h", name="paused", y=[n for n, _ in pairs], base=[s.start_ms for _, s in pairs],
        x=[s.end_ms - s.start_ms for _, s in pairs],
        marker=dict(color="rgba(255,255,255,0.35)", line=dict(width=1, color="#333"),
                    pattern=dict(shape="/", fgcolor="#333", size=6)),
        hovertemplate="%{y} paused<br>%{base} ms for %{x} ms<extra></extra>",
    ))


# fault labels are laid out for a plot area at least this wide (plotly's default figure is 700 px wide,
# 600 between the margins; JupyterLab's cells are wider), in Open Sans / Arial at FAULT_FONT_PX
FAULT_LABEL_PLOT_PX = 600
FAULT_FONT_PX = 10
FAULT_CHAR_PX = 0.62 * FAULT_FONT_PX  # a generous average glyph width: boxes err on the wide side
FAULT_LABEL_GAP_PX = 8
FAULT_LANE_PX = 30  # a lane holds a marker (11 px) with its label above it
VIOLATION_COLOR = "#b00020"


@dataclass(frozen=True)
class LabelBox:
    """Where a fault label goes: its lane (0 = the top ``faults`` row), its text anchor and its extent in
    pixels from the plot area's left edge."""

    lane: int
    position: str
    left_px: float
    right_px: float


def label_width_px(text: str) -> float:
    return len(text) * FAULT_CHAR_PX


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
        labels.append(f"first violation: {', '.join(violated_invariants(violations[0]))}")
    order = sorted(range(len(times)), key=lambda i: times[i])
    boxes = dict(zip(order, fault_label_boxes([times[i] for i in order], [labels[i] for i in order], x_range),
                     strict=True))
    rows = fault_lane_rows(1 + max(b.lane for b in boxes.values()))
    faults = range(len(by_time))
    if by_time:
        fig.add_trace(go.Scatter(
            x=[times[i] for i in faults], y=[rows[boxes[i].lane] for i in faults], yaxis="y2",
            mode="markers+text", name="fault", cliponaxis=False, text=[labels[i] for i in faults],
            textposition=[boxes[i].position for i in faults], textfont=dict(size=FAULT_FONT_PX, color="#444"),
            marker=dict(symbol="triangle-down", size=11, color="#444"),
            hovertemplate="t=%{x} ms<br>%{text}<extra></extra>",
        ))
    if violations:
        last = len(times) - 1
        fig.add_trace(go.Scatter(
            x=[times[last]], y=[rows[boxes[last].lane]], yaxis="y2", mode="markers+text", name="first violation",
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
                mode="markers", name="violation", text=[describe(e) for e in group], legendgroup="violation",
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


# --- votes ----------------------------------------------------------------------------------------
def votes_per_term(events: Events) -> go.Figure:
    """Vote requests and answers per term (granted = ACCEPT, rejections by reason, lost answers) and,
    below, the candidates' vote-round verdicts (``vote_round`` ParseResult) per term."""
    records = as_records(events)
    requests = of_kind(records, "vote_request")
    responses = of_kind(records, "vote_response")
    rounds = of_kind(records, "vote_round")
    if not (requests or responses or rounds):
        return empty_figure("Votes per term", ["vote_request", "vote_response", "vote_round"])
    panels = [p for p, present in (("votes", requests or responses), ("rounds", rounds)) if present]
    titles = {"votes": "vote requests (◆) and answers by result", "rounds": "vote rounds by verdict"}
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=[titles[p] for p in panels])
    if "votes" in panels:
        _add_answer_bars(fig, responses, row=1)
        _add_request_marks(fig, requests, row=1)
    if "rounds" in panels:
        _add_round_bars(fig, rounds, row=len(panels))
    fig.update_xaxes(dtick=1, tickformat="d")
    fig.update_xaxes(title="term", row=len(panels), col=1)
    fig.update_yaxes(title="count", rangemode="tozero")
    per_term = Counter((e["kind"], e.get("term")) for e in [*requests, *responses, *rounds])
    whole_number_ticks(fig, max(per_term.values()))
    fig.update_layout(barmode="stack", bargap=0.3)
    granted = sum(1 for e in responses if e.get("result") == "ACCEPT")
    title = (f"Votes per term: {len(requests)} requests, {granted} granted, "
             f"{len(responses) - granted} rejected or unanswered")
    return base_layout(fig, title, 260 + 220 * len(panels))


def _result_label(result: str) -> str:
    if result == "ACCEPT":
        return "granted (ACCEPT)"
    if result in ("UNKNOWN", "None"):
        return "no answer (UNKNOWN)"
    return "rejected: " + result.removeprefix("REJECT_")


def _result_order(result: str) -> tuple[int, str]:
    return (0 if result == "ACCEPT" else 2 if result in ("UNKNOWN", "None") else 1), result


def _add_answer_bars(fig: go.Figure, responses: Sequence[Event], row: int) -> None:
    pairs: dict[tuple[int, str], list[str]] = defaultdict(list)
    for e in responses:
        pairs[(e.get("term"), str(e.get("result")))].append(f"{e.get('candidate')}→{e.get('voter')}")
    results = sorted({r for _, r in pairs}, key=_result_order)
    rejections = [r for r in results if _result_order(r)[0] == 1]
    colors = {"ACCEPT": GRANTED_COLOR,
              **{r: REJECTION_PALETTE[i % len(REJECTION_PALETTE)] for i, r in enumerate(rejections)}}
    for result in results:
        cells = sorted((t, who) for (t, r), who in pairs.items() if r == result and t is not None)
        color = colors.get(result, NO_ANSWER_COLOR)
        fig.add_trace(go.Bar(
            x=[t for t, _ in cells], y=[len(who) for _, who in cells], name=_result_label(result),
            marker=dict(color=color, pattern=dict(shape="" if result == "ACCEPT" else "/", fgopacity=0.4)),
            customdata=[", ".join(who) for _, who in cells],
            hovertemplate=f"term %{{x}}: %{{y}} × {result}<br>%{{customdata}}<extra></extra>",
        ), row=row, col=1)


def _add_request_marks(fig: go.Figure, requests: Sequence[Event], row: int) -> None:
    per_term: dict[int, list[str]] = defaultdict(list)
    for e in requests:
        if e.get("term") is not None:
            per_term[e["term"]].append(str(e.get("candidate")))
    terms = sorted(per_term)
    fig.add_trace(go.Scatter(
        x=terms, y=[len(per_term[t]) for t in terms], mode="markers", name="requests sent",
        marker=dict(symbol="diamond", size=10, color=PAGE_TEXT),
        customdata=[", ".join(sorted(set(per_term[t]))) for t in terms],
        hovertemplate="term %{x}: %{y} requests<br>candidates %{customdata}<extra></extra>",
    ), row=row, col=1)


def _add_round_bars(fig: go.Figure, rounds: Sequence[Event], row: int) -> None:
    cells: dict[tuple[int, str], list[str]] = defaultdict(list)
    for e in rounds:
        cells[(e.get("term"), str(e.get("result")))].append(
            f"{e.get('node')}: {e.get('accepted')}/{e.get('all')} accepted, {e.get('valid')} valid")
    verdicts = sorted({r for _, r in cells}, key=lambda r: (r != "PASSED", r))
    for verdict in verdicts:
        items = sorted((t, who) for (t, r), who in cells.items() if r == verdict and t is not None)
        fig.add_trace(go.Bar(
            x=[t for t, _ in items], y=[len(who) for _, who in items], name=f"round: {verdict}",
            marker=dict(color=ROUND_COLORS.get(verdict, NO_ANSWER_COLOR),
                        pattern=dict(shape="" if verdict == "PASSED" else "x", fgopacity=0.4)),
            customdata=["<br>".join(who) for _, who in items],
            hovertemplate=f"term %{{x}}: %{{y}} × {verdict}<br>%{{customdata}}<extra></extra>",
        ), row=row, col=1)


# --- log and offsets ------------------------------------------------------------------------------
def commit_progress(events: Events, *, highlight: str | None = None) -> go.Figure:
    """Replication progress: per node the DLedger append index (dashed) and commit index (solid), with
    truncations marked; for classic HA the master's max offset after each put and each slave's
    acknowledged offset (``ha_report``) and pushed offset (``ha_transfer``). One panel per system found.

    Every line is carried on to the end of the run at its last value, so a member that stopped
    appending (cut off, crashed) stays visible as a flat line. ``highlight`` names a node whose lines
    are drawn last, wide and with markers, on top of the others'."""
    records = as_records(events)
    log = of_kind(records, "append", "commit", "truncate")
    ha = of_kind(records, "put", "ha_report", "ha_transfer")
    if not (log or ha):
        return empty_figure("Log and offsets", ["commit", "append", "ha_report", "put"])
    panels = [p for p, present in (("log", log), ("ha", ha)) if present]
    titles = {"log": "DLedger log: append index (dashed), commit index (solid), truncations (×)",
              "ha": "CommitLog offsets: master max offset after puts, slave acks (ha_report)"}
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=[titles[p] for p in panels])
    colors = series_colors(node_ids(records))
    until = end_ms(records)
    if "log" in panels:
        _add_log_lines(fig, log, colors, row=1, until=until)
        fig.update_yaxes(title="entry index", row=1, col=1)
    if "ha" in panels:
        _add_offset_lines(fig, ha, colors, row=len(panels), until=until)
        fig.update_yaxes(title="byte offset", row=len(panels), col=1)
    shade_partitions(fig, partition_spans(records), row="all", col=1)
    mark_faults(fig, of_kind(records, "fault"), row="all", col=1)
    fig.update_xaxes(range=run_range(records))
    fig.update_xaxes(title=TIME_AXIS_TITLE, row=len(panels), col=1)
    if highlight is not None:
        _bring_to_front(fig, highlight)
    return base_layout(fig, _progress_title(log, ha), 200 + 260 * len(panels))


def _bring_to_front(fig: go.Figure, node: str) -> None:
    """``node``'s lines last (on top), wide and with markers, so they show over lines that coincide."""
    mine = [tr for tr in fig.data if tr.legendgroup == node and tr.mode == "lines"]
    for tr in mine:
        tr.mode, tr.line.width = "lines+markers", 4
    fig.data = tuple(tr for tr in fig.data if tr not in mine) + tuple(mine)


def _progress_title(log: Sequence[Event], ha: Sequence[Event]) -> str:
    parts = []
    commits = [e["index"] for e in of_kind(log, "commit") if e.get("index") is not None]
    if commits:
        parts.append(f"highest commit index {max(commits)}")
    ends = [end for end in map(_put_end, of_kind(ha, "put")) if end is not None]
    if ends:
        parts.append(f"master max offset {max(ends)}")
    acks = [e["offset"] for e in of_kind(ha, "ha_report") if e.get("offset") is not None]
    if acks:
        parts.append(f"highest slave ack {max(acks)}")
    return "Log and offsets" + (": " + ", ".join(parts) if parts else "")


def _step_line(fig: go.Figure, points: list[tuple[int, int]], name: str, color: str, row: int,
               dash: str = "solid", width: float = 2.0, group: str | None = None, until: int | None = None) -> None:
    """A step line through ``points``, carried on at its last value to ``until`` (the run's end)."""
    if until is not None and points and points[-1][0] < until:
        points = [*points, (until, points[-1][1])]
    fig.add_trace(go.Scatter(
        x=[t for t, _ in points], y=[v for _, v in points], mode="lines", name=name,
        line=dict(shape="hv", color=color, dash=dash, width=width),
        legendgroup=group or name, hovertemplate=f"{name}<br>t=%{{x}} ms: %{{y}}<extra></extra>",
    ), row=row, col=1)


def _add_log_lines(fig: go.Figure, log: Sequence[Event], colors: dict[str, str], row: int, until: int) -> None:
    """Commit lines get thinner node by node, so nodes that agree show as stacked stripes."""
    nodes = node_ids(log)
    for i, node in enumerate(nodes):
        mine = [e for e in log if e.get("node") == node]
        appended = [(e["t"], e["index"]) for e in mine if e["kind"] == "append" and e.get("index") is not None]
        appended += [(e["t"], e["index"] - 1) for e in mine if e["kind"] == "truncate" and e.get("index") is not None]
        appended.sort(key=lambda p: p[0])
        committed = [(e["t"], e["index"]) for e in mine if e["kind"] == "commit" and e.get("index") is not None]
        if appended:
            _step_line(fig, appended, f"{node} append", colors[node], row, dash="dash", width=1.5, group=node,
                       until=until)
        if committed:
            width = 2 + 2.5 * (len(nodes) - 1 - i)
            _step_line(fig, committed, f"{node} commit", colors[node], row, width=width, group=node, until=until)
        cuts = [e for e in mine if e["kind"] == "truncate" and e.get("index") is not None]
        if cuts:
            fig.add_trace(go.Scatter(
                x=[e["t"] for e in cuts], y=[e["index"] for e in cuts], mode="markers", name=f"{node} truncate",
                marker=dict(symbol="x", size=11, color=colors[node]), legendgroup=node,
                hovertemplate=f"{node} truncated from index %{{y}} at t=%{{x}} ms<extra></extra>",
            ), row=row, col=1)


def _put_end(put: Event) -> int | None:
    """The commit log's end after a put that wrote its message (``phy_offset + size``), else None."""
    offset = put.get("phy_offset")
    if put.get("status") not in WRITTEN_STATUSES or offset is None or offset < 0:
        return None
    return offset + (put.get("size") or 0)


def _add_offset_lines(fig: go.Figure, ha: Sequence[Event], colors: dict[str, str], row: int, until: int) -> None:
    masters = node_ids([e for e in ha if e.get("node")])
    prefix = (lambda node: f"{node} ") if len(masters) > 1 else (lambda node: "")
    for node in masters:
        mine = [e for e in ha if e.get("node") == node]
        ends = [(e["t"], _put_end(e)) for e in mine if e["kind"] == "put" and _put_end(e) is not None]
        if ends:
            _step_line(fig, ends, f"{prefix(node)}master max offset ({node})", colors[node], row, width=2.5,
                       group=node, until=until)
        slaves = sorted({str(e.get("slave")) for e in mine if e["kind"] in ("ha_report", "ha_transfer")})
        for i, slave in enumerate(slaves):
            color = colors.get(slave, PALETTE[(len(colors) + i) % len(PALETTE)])
            acked = [(e["t"], e["offset"]) for e in mine if e["kind"] == "ha_report"
                     and str(e.get("slave")) == slave and e.get("offset") is not None]
            pushed = [(e["t"], e["offset"] + (e.get("size") or 0)) for e in mine if e["kind"] == "ha_transfer"
                      and str(e.get("slave")) == slave and e.get("offset") is not None]
            if pushed:
                _step_line(fig, pushed, f"{prefix(node)}pushed to {slave}", color, row, dash="dot", width=1.5,
                           group=slave, until=until)
            if acked:
                _step_line(fig, acked, f"{prefix(node)}acked by {slave}", color, row, width=2, group=slave,
                           until=until)


# --- messages ----------------------------------------------------------------------------------------
def message_flow(events: Events, *, bin_ms: int | None = None) -> go.Figure:
    """Network traffic: messages sent per type per time bin (top) and messages lost by reason (bottom:
    partition, peer down, random loss, injected drops), with partitions shaded."""
    records = as_records(events)
    sends, recvs = of_kind(records, "msg_send"), of_kind(records, "msg_recv")
    drops = of_kind(records, "msg_drop")
    if not (sends or recvs or drops):
        return empty_figure("Messages", ["msg_send", "msg_recv", "msg_drop"])
    t0 = start_ms(records)
    width = bin_ms or nice_bin_ms(end_ms(records) - t0)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16, row_heights=[0.6, 0.4],
                        subplot_titles=(f"sent per message type (per {width} ms)",
                                        f"lost by reason (per {width} ms)"))
    _add_send_lines(fig, sends, recvs, t0, width)
    _add_drop_bars(fig, drops, t0, width)
    shade_partitions(fig, partition_spans(records), row="all", col=1)
    mark_faults(fig, of_kind(records, "fault"), row="all", col=1)
    fig.update_layout(barmode="stack", bargap=0.05)
    fig.update_xaxes(range=run_range(records))
    fig.update_yaxes(title="messages", rangemode="tozero")
    fig.update_xaxes(title=TIME_AXIS_TITLE, row=2, col=1)
    title = f"Messages: {len(sends)} sent, {len(recvs)} delivered, {len(drops)} lost"
    return base_layout(fig, title, 560)


def _binned(events: Sequence[Event], t0: int, width: int) -> tuple[list[float], list[int]]:
    counts = Counter((e["t"] - t0) // width for e in events)
    if not counts:
        return [], []
    bins = range(0, max(counts) + 1)
    return [t0 + b * width + width / 2 for b in bins], [counts.get(b, 0) for b in bins]


def _add_send_lines(fig: go.Figure, sends: Sequence[Event], recvs: Sequence[Event], t0: int, width: int) -> None:
    types = sorted({str(e.get("msg")) for e in sends})
    colors = series_colors(types)
    for msg in types:
        xs, ys = _binned([e for e in sends if str(e.get("msg")) == msg], t0, width)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{msg} sent", line=dict(color=colors[msg]),
                                 hovertemplate=f"{msg}: %{{y}} sent around t=%{{x}} ms<extra></extra>"),
                      row=1, col=1)
    xs, ys = _binned(recvs, t0, width)
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="all delivered",
                                 line=dict(color="#222", dash="dot", width=1.5),
                                 hovertemplate="%{y} delivered around t=%{x} ms<extra></extra>"), row=1, col=1)


def _add_drop_bars(fig: go.Figure, drops: Sequence[Event], t0: int, width: int) -> None:
    if not drops:
        fig.add_annotation(text="no msg_drop events: nothing was lost", x=0.5, y=0.5, showarrow=False,
                           xref="x2 domain", yref="y2 domain", font=dict(color="#555"))
        return
    reasons = Counter(str(e.get("reason")) for e in drops)
    colors = series_colors(sorted(reasons))
    whole_number_ticks(fig, max(Counter((e["t"] - t0) // width for e in drops).values()), row=2, col=1)
    for reason in sorted(reasons):
        xs, ys = _binned([e for e in drops if str(e.get("reason")) == reason], t0, width)
        fig.add_trace(go.Bar(x=xs, y=ys, width=width * 0.9, name=f"lost: {reason} ({reasons[reason]})",
                             marker_color=colors[reason],
                             hovertemplate=f"{reason}: %{{y}} lost around t=%{{x}} ms<extra></extra>"),
                      row=2, col=1)


# --- put latency ------------------------------------------------------------------------------------
def put_latency(events: Events) -> go.Figure:
    """Latency of every put over time coloured by PutMessageStatus (left) and its distribution per
    status (right): SYNC_MASTER waits show up as FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE tails."""
    records = as_records(events)
    puts = of_kind(records, "put")
    if not puts:
        return empty_figure("Put latency", ["put"])
    timed = [e for e in puts if e.get("latency_ms") is not None]
    if not timed:
        return note_figure("Put latency", f"{len(puts)} put events, none with a latency_ms")
    statuses = sorted({str(e.get("status")) for e in timed}, key=lambda s: (s != "PUT_OK", s))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.68, 0.32], shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=("each put over time", "distribution by status"))
    for i, status in enumerate(statuses):
        mine = [e for e in timed if str(e.get("status")) == status]
        color = STATUS_COLORS.get(status, PALETTE[(4 + i) % len(PALETTE)])
        _add_status_traces(fig, status, mine, color)
    fig.update_xaxes(title=TIME_AXIS_TITLE, range=run_range(records), row=1, col=1)
    fig.update_yaxes(title="latency (ms)", row=1, col=1)
    latencies = [float(e["latency_ms"]) for e in timed]
    if min(latencies) > 0 and max(latencies) / min(latencies) >= 50:
        fig.update_yaxes(type="log")
        fig.update_yaxes(title="latency (ms, log scale)", row=1, col=1)
    shade_partitions(fig, partition_spans(records), label=False, row=1, col=1)
    mark_faults(fig, of_kind(records, "fault"), row=1, col=1)
    return base_layout(fig, _latency_title(puts, timed), 460)


def _add_status_traces(fig: go.Figure, status: str, puts: Sequence[Event], color: str) -> None:
    latencies = [float(e["latency_ms"]) for e in puts]
    fig.add_trace(go.Scatter(
        x=[e["t"] for e in puts], y=latencies, mode="markers", name=f"{status} ({len(puts)})",
        legendgroup=status, cliponaxis=False,
        marker=dict(color=color, size=6 if status == "PUT_OK" else 8, opacity=0.75,
                    symbol=STATUS_SYMBOLS.get(status, "square")),
        customdata=[[e.get("node") or "-", e.get("phy_offset", "-")] for e in puts],
        hovertemplate=(f"{status} on %{{customdata[0]}}<br>t=%{{x}} ms, %{{y}} ms"
                       "<br>phy_offset %{customdata[1]}<extra></extra>"),
    ), row=1, col=1)
    fig.add_trace(go.Box(y=latencies, name=status, legendgroup=status, showlegend=False, marker_color=color,
                         boxpoints="outliers"), row=1, col=2)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[min(int(rank), len(ordered)) - 1]


def _latency_title(puts: Sequence[Event], timed: Sequence[Event]) -> str:
    latencies = [float(e["latency_ms"]) for e in timed]
    ok = sum(1 for e in puts if e.get("status") == "PUT_OK")
    return (f"Put latency: {len(puts)} puts, {ok} PUT_OK; p50 {percentile(latencies, 50):g} ms, "
            f"p99 {percentile(latencies, 99):g} ms, max {max(latencies):g} ms")


__all__ = ["commit_progress", "message_flow", "percentile", "put_latency", "role_timeline", "votes_per_term"]



def epochs_and_sync_state_set(events: Events) -> go.Figure:
    """Controller mode over time: the master epoch each broker acts under (a line per broker and role, cut
    where it crashes), and the SyncStateSet the controllers committed (a bar per broker id while it is a
    member), from the brokers' ``role`` events, ``fault`` events and the controllers' ``controller_apply``
    events."""
    records = as_records(events)
    applied = {}
    for e in of_kind(records, "controller_apply"):
        applied.setdefault(e.get("index"), e)  # every controller applies the same entry: keep the first
    roles = [e for e in of_kind(records, "role") if e.get("role") in ("MASTER", "SLAVE", "FENCED")]
    if not applied and not roles:
        return empty_figure("Epochs and SyncStateSet", ["role", "controller_apply"])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16,
                        subplot_titles=["master epoch each broker acts under (MASTER solid, SLAVE dashed; "
                                        "brokers drawn slightly apart)",
                                        "SyncStateSet committed by the controllers (a bar while a member)"])
    brokers = node_ids(roles)
    colors = series_colors(brokers)
    end = run_range(records)[1]
    crashes = [(e["t"], target) for e in of_kind(records, "fault") if e.get("action") == "crash"
               for target in (e.get("targets") or ())]
    for k, node in enumerate(brokers):
        lift = 0.08 * (k - (len(brokers) - 1) / 2)  # brokers at the same epoch stay visible side by side
        mine = sorted([e for e in roles if e.get("node") == node]
                      + [{"t": t, "role": "DOWN", "node": node} for t, target in crashes if target == node],
                      key=lambda e: e["t"])
        for role, dash in (("MASTER", "solid"), ("SLAVE", "dash")):
            xs: list[int | None] = []
            ys: list[int | None] = []
            for i, e in enumerate(mine):
                if e["role"] == role:
                    stop = mine[i + 1]["t"] if i + 1 < len(mine) else end
                    xs += [e["t"], stop, None]
                    ys += [e.get("term", 0) + lift, e.get("term", 0) + lift, None]
            if xs:
                fig.add_trace(go.Scatter(
                    x=xs, y=ys, mode="lines", name=f"{node} {role.lower()}", legendgroup=node,
                    line=dict(color=colors[node], dash=dash, width=3),
                    hovertemplate=f"{node} {role} at epoch %{{y:.0f}}<extra></extra>"), row=1, col=1)
    changes = []
    current: set[int] = set()
    for e in sorted(applied.values(), key=lambda e: e["t"]):
        if e.get("event") == "ALTER_SYNC_STATE_SET_EVENT" and e.get("members") is not None:
            current = set(e["members"])
        elif e.get("event") == "ELECT_MASTER_EVENT" and e.get("master") is not None:
            current = {e["master"]}
        else:
            continue
        changes.append((e["t"], set(current)))
    members = sorted({m for _, s in changes for m in s})
    node_of = {e.get("broker_id"): e.get("node") for e in of_kind(records, "replicas_state")}
    for member in members:
        owner = node_of.get(member)
        xs: list[int | None] = []
        ys: list[int | None] = []
        for i, (t, s) in enumerate(changes):
            if member in s:
                stop = changes[i + 1][0] if i + 1 < len(changes) else end
                xs += [t, stop, None]
                ys += [member, member, None]
        label = f"broker id {member}" + (f" ({owner})" if owner else "")
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{label} in sync", legendgroup=owner or label,
                                 line=dict(color=colors.get(owner, "#888888"), width=10),
                                 hovertemplate=f"{label} in the SyncStateSet<extra></extra>"), row=2, col=1)
    fig.update_yaxes(title="master epoch", dtick=1, row=1, col=1)
    fig.update_yaxes(title="broker id", row=2, col=1)
    if members:
        whole_number_ticks(fig, max(members), row=2, col=1)
    mark_faults(fig, of_kind(records, "fault"), row="all", col=1)
    fig.update_xaxes(range=run_range(records))
    fig.update_xaxes(title=TIME_AXIS_TITLE, row=2, col=1)
    top = max((e.get("term") or 0 for e in roles), default=0)
    return base_layout(fig, f"Epochs and SyncStateSet: highest master epoch {top}, "
                            f"{len(changes)} SyncStateSet changes", 620)
