"""Colours and small plotly helpers shared by every figure: one look across figures, report and widget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from rocketlab.viz.timeline import DOWN, UP, Event, Span, fault_line

ROLE_COLORS: dict[str, str] = {
    "LEADER": "#d62728", "FOLLOWER": "#1f77b4", "CANDIDATE": "#ff7f0e",
    "MASTER": "#8c1c13", "SLAVE": "#17becf", UP: "#b8dcb0", DOWN: "#8c8c8c",
}
OTHER_ROLE_COLOR = "#9467bd"
GRANTED_COLOR = "#2ca02c"
REJECTED_COLOR = "#d62728"
NO_ANSWER_COLOR = "#9e9e9e"
PARTITION_FILL = "rgba(214, 39, 40, 0.08)"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=12)
TIME_AXIS_TITLE = "t (ms)"


def role_color(role: str | None) -> str:
    return ROLE_COLORS.get(str(role), OTHER_ROLE_COLOR)


def series_colors(names: Sequence[str]) -> dict[str, str]:
    """A stable colour per name, in the given order."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def base_layout(fig: go.Figure, title: str, height: int, legend: str = "right") -> go.Figure:
    """Title, size, font and legend placement every figure shares (``legend``: right, top or bottom)."""
    if legend == "top":
        place = dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0)
    elif legend == "bottom":
        place = dict(orientation="h", yanchor="top", y=-0.02, xanchor="center", x=0.5)
    else:
        place = dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.01)
    fig.update_layout(
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=15)),
        height=height, template="plotly_white", font=FONT, margin=dict(l=70, r=30, t=80, b=50),
        legend=dict(traceorder="normal", **place),
    )
    return fig


def note_figure(title: str, text: str) -> go.Figure:
    """A figure holding only a centred note (no axes)."""
    fig = go.Figure()
    fig.add_annotation(text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=15, color="#555"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return base_layout(fig, title, 230)


def empty_figure(title: str, kinds: Sequence[str]) -> go.Figure:
    """A figure that says which event kinds the run lacks, instead of raising or drawing blank axes."""
    names = ", ".join(kinds[:-1]) + (" or " if len(kinds) > 1 else "") + kinds[-1]
    return note_figure(title, f"no {names} events in this run")


def is_empty_figure(fig: go.Figure) -> bool:
    """True for a figure made by :func:`note_figure` or :func:`empty_figure`: a note, no traces."""
    return not fig.data and len(fig.layout.annotations) > 0


def shade_partitions(fig: go.Figure, spans: Sequence[Span], label: bool = True, **where: Any) -> None:
    """A light red band over every partition, labelled with its groups (``where``: row/col of subplots)."""
    for span in spans:
        text = dict(annotation_text=f"partition {span.label}", annotation_position="top left",
                    annotation_font=dict(size=10, color="#a33")) if label else {}
        fig.add_vrect(x0=span.start_ms, x1=span.end_ms, fillcolor=PARTITION_FILL, line_width=0, layer="below",
                      **text, **where)


def nice_bin_ms(span_ms: int, target_bins: int = 50) -> int:
    """A round bin width (1, 2, 5 × 10^k ms) giving about ``target_bins`` bins over ``span_ms``."""
    raw = max(span_ms / target_bins, 1)
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= raw:
                return step * scale
        scale *= 10


def mark_faults(fig: go.Figure, faults: Sequence[Event], limit: int = 40, **where: Any) -> None:
    """A dotted line at each crash / restart / pause / resume / drop, labelled at the top of the first
    panel (partitions are shaded instead; see :func:`shade_partitions`). ``where``: row/col of subplots."""
    by_time: dict[int, list[str]] = {}
    for e in faults:
        if e.get("action") not in ("partition", "heal"):
            by_time.setdefault(e["t"], []).append(fault_line(e))
    for i, t in enumerate(sorted(by_time)[:limit]):
        fig.add_vline(x=t, line=dict(color="#777", width=1, dash="dot"), **where)
        fig.add_annotation(x=t, y=1.0, xref="x", yref="y domain", yanchor="top", xanchor="left", xshift=2,
                           yshift=-14 * (1 + i % 2), showarrow=False, text="; ".join(by_time[t]),
                           font=dict(size=10, color="#555"), bgcolor="rgba(255,255,255,0.7)")


def whole_number_ticks(fig: go.Figure, highest: int, **where: Any) -> None:
    """Counts are whole: tick every 1 while bars are short (plotly would show 0.5 steps)."""
    if highest <= 8:
        fig.update_yaxes(dtick=1, **where)


def text_color_on(fill: str) -> str:
    """White text on the strong role colours, dark text on the pale ones."""
    return "#222" if fill in (ROLE_COLORS[UP], NO_ANSWER_COLOR) else "white"
