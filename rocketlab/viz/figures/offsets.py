"""Log and offsets: how far each member got, over time.

Rocketlab's own figure: per DLedger member its append and commit index (DLedgerMemberState's
ledgerEndIndex and committedIndex, from ``append`` / ``commit`` / ``truncate`` events); for classic HA
the master's CommitLog max offset after each put and each slave's pushed and acknowledged offset
(HAConnection's ``ha_transfer``, the slave's ``ha_report``).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.i18n import _
from rocketlab.viz.style import (
    PALETTE,
    TIME_AXIS_TITLE,
    base_layout,
    empty_figure,
    mark_faults,
    series_colors,
    shade_partitions,
)
from rocketlab.viz.timeline import (
    Event,
    Events,
    as_records,
    end_ms,
    node_ids,
    of_kind,
    partition_spans,
    run_range,
)

WRITTEN_STATUSES = ("PUT_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE")


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
        return empty_figure(_("Log and offsets"), ["commit", "append", "ha_report", "put"])
    panels = [p for p, present in (("log", log), ("ha", ha)) if present]
    titles = {"log": _("DLedger log: append index (dashed), commit index (solid), truncations (×)"),
              "ha": _("CommitLog offsets: master max offset after puts, slave acks (ha_report)")}
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=[titles[p] for p in panels])
    colors = series_colors(node_ids(records))
    until = end_ms(records)
    if "log" in panels:
        _add_log_lines(fig, log, colors, row=1, until=until)
        fig.update_yaxes(title=_("entry index"), row=1, col=1)
    if "ha" in panels:
        _add_offset_lines(fig, ha, colors, row=len(panels), until=until)
        fig.update_yaxes(title=_("byte offset"), row=len(panels), col=1)
    shade_partitions(fig, partition_spans(records), row="all", col=1)
    fig.update_xaxes(range=run_range(records))
    mark_faults(fig, of_kind(records, "fault"), row="all", col=1)  # after the range: labels laid out over it
    fig.update_xaxes(title=_(TIME_AXIS_TITLE), row=len(panels), col=1)
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
        parts.append(_("highest commit index {index}").format(index=max(commits)))
    ends = [end for end in map(_put_end, of_kind(ha, "put")) if end is not None]
    if ends:
        parts.append(_("master max offset {offset}").format(offset=max(ends)))
    acks = [e["offset"] for e in of_kind(ha, "ha_report") if e.get("offset") is not None]
    if acks:
        parts.append(_("highest slave ack {offset}").format(offset=max(acks)))
    if not parts:
        return _("Log and offsets")
    return _("Log and offsets: {parts}").format(parts=_(", ").join(parts))


def _step_line(fig: go.Figure, points: list[tuple[int, int]], name: str, color: str, row: int,
               dash: str = "solid", width: float = 2.0, group: str | None = None, until: int | None = None) -> None:
    """A step line through ``points``, carried on at its last value to ``until`` (the run's end)."""
    if until is not None and points and points[-1][0] < until:
        points = [*points, (until, points[-1][1])]
    fig.add_trace(go.Scatter(
        x=[t for t, _ in points], y=[v for _, v in points], mode="lines", name=name,
        line=dict(shape="hv", color=color, dash=dash, width=width),
        legendgroup=group or name,
        hovertemplate=_("{name}<br>t={t} ms: {value}").format(name=name, t="%{x}", value="%{y}") + "<extra></extra>",
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
            _step_line(fig, appended, _("{node} append").format(node=node), colors[node], row, dash="dash", width=1.5, group=node,
                       until=until)
        if committed:
            width = 2 + 2.5 * (len(nodes) - 1 - i)
            _step_line(fig, committed, _("{node} commit").format(node=node), colors[node], row, width=width, group=node, until=until)
        cuts = [e for e in mine if e["kind"] == "truncate" and e.get("index") is not None]
        if cuts:
            fig.add_trace(go.Scatter(
                x=[e["t"] for e in cuts], y=[e["index"] for e in cuts], mode="markers", name=_("{node} truncate").format(node=node),
                marker=dict(symbol="x", size=11, color=colors[node]), legendgroup=node,
                hovertemplate=_("{node} truncated from index {index} at t={t} ms").format(node=node, index="%{y}", t="%{x}")
                + "<extra></extra>",
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
            _step_line(fig, ends, prefix(node) + _("master max offset ({node})").format(node=node), colors[node], row, width=2.5,
                       group=node, until=until)
        slaves = sorted({str(e.get("slave")) for e in mine if e["kind"] in ("ha_report", "ha_transfer")})
        for i, slave in enumerate(slaves):
            color = colors.get(slave, PALETTE[(len(colors) + i) % len(PALETTE)])
            acked = [(e["t"], e["offset"]) for e in mine if e["kind"] == "ha_report"
                     and str(e.get("slave")) == slave and e.get("offset") is not None]
            pushed = [(e["t"], e["offset"] + (e.get("size") or 0)) for e in mine if e["kind"] == "ha_transfer"
                      and str(e.get("slave")) == slave and e.get("offset") is not None]
            if pushed:
                _step_line(fig, pushed, prefix(node) + _("pushed to {slave}").format(slave=slave), color, row, dash="dot", width=1.5,
                           group=slave, until=until)
            if acked:
                _step_line(fig, acked, prefix(node) + _("acked by {slave}").format(slave=slave), color, row, width=2, group=slave,
                           until=until)


__all__ = ["WRITTEN_STATUSES", "commit_progress"]
