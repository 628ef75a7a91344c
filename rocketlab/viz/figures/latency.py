"""Put latency: how long each put took, by PutMessageStatus (RocketMQ's ``PutMessageStatus``).

Rocketlab's own figure, from ``put`` events: every put over time and the distribution per status, so
that SYNC_MASTER's waits for a slave show as FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE tails.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.i18n import _
from rocketlab.viz.style import (
    GRANTED_COLOR,
    PALETTE,
    TIME_AXIS_TITLE,
    base_layout,
    empty_figure,
    mark_faults,
    note_figure,
    shade_partitions,
)
from rocketlab.viz.timeline import (
    Event,
    Events,
    as_records,
    of_kind,
    partition_spans,
    run_range,
)

STATUS_COLORS = {"PUT_OK": GRANTED_COLOR, "FLUSH_SLAVE_TIMEOUT": "#E69F00", "SLAVE_NOT_AVAILABLE": "#D55E00",
                 "FLUSH_DISK_TIMEOUT": "#CC79A7"}
STATUS_SYMBOLS = {"PUT_OK": "circle", "FLUSH_SLAVE_TIMEOUT": "triangle-up", "SLAVE_NOT_AVAILABLE": "x",
                  "FLUSH_DISK_TIMEOUT": "diamond"}  # the second cue: a failed put never looks like PUT_OK


def put_latency(events: Events) -> go.Figure:
    """Latency of every put over time coloured by PutMessageStatus (left) and its distribution per
    status (right): SYNC_MASTER waits show up as FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE tails."""
    records = as_records(events)
    puts = of_kind(records, "put")
    if not puts:
        return empty_figure(_("Put latency"), ["put"])
    timed = [e for e in puts if e.get("latency_ms") is not None]
    if not timed:
        return note_figure(_("Put latency"), _("{n} put events, none with a latency_ms").format(n=len(puts)))
    statuses = sorted({str(e.get("status")) for e in timed}, key=lambda s: (s != "PUT_OK", s))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.68, 0.32], shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=(_("each put over time"), _("distribution by status")))
    for i, status in enumerate(statuses):
        mine = [e for e in timed if str(e.get("status")) == status]
        color = STATUS_COLORS.get(status, PALETTE[(4 + i) % len(PALETTE)])
        _add_status_traces(fig, status, mine, color)
    fig.update_xaxes(title=_(TIME_AXIS_TITLE), range=run_range(records), row=1, col=1)
    fig.update_yaxes(title=_("latency (ms)"), row=1, col=1)
    latencies = [float(e["latency_ms"]) for e in timed]
    if min(latencies) > 0 and max(latencies) / min(latencies) >= 50:
        fig.update_yaxes(type="log")
        fig.update_yaxes(title=_("latency (ms, log scale)"), row=1, col=1)
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
        hovertemplate=_("{status} on {node}<br>t={t} ms, {latency} ms").format(
            status=status, node="%{customdata[0]}", t="%{x}", latency="%{y}")
        + "<br>phy_offset %{customdata[1]}<extra></extra>",
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
    return _("Put latency: {puts} puts, {ok} PUT_OK; p50 {p50} ms, p99 {p99} ms, max {max} ms").format(
        puts=len(puts), ok=ok, p50=f"{percentile(latencies, 50):g}", p99=f"{percentile(latencies, 99):g}",
        max=f"{max(latencies):g}")


__all__ = ["percentile", "put_latency"]
