"""Message flow: what the network carried and what it lost, per time bin.

Rocketlab's own figure, from the simulator's and the real runtime's ``msg_send`` / ``msg_recv`` /
``msg_drop`` events: messages sent per type and delivered, and losses by reason (partition, peer down,
random loss, injected drops), with partitions shaded and faults marked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.i18n import N_, _
from rocketlab.viz.style import (
    NOTE_TEXT,
    TIME_AXIS_TITLE,
    base_layout,
    empty_figure,
    mark_faults,
    nice_bin_ms,
    series_colors,
    shade_partitions,
    whole_number_ticks,
)
from rocketlab.viz.timeline import (
    Event,
    Events,
    as_records,
    end_ms,
    of_kind,
    partition_spans,
    run_range,
    start_ms,
)

DROP_REASONS = {"partition": N_("partition"), "link cut": N_("link cut"), "peer down": N_("peer down"),
                "host down": N_("host down"), "fault: drop": N_("fault: drop")}
"""The simulator's reasons for a lost message (``msg_drop.reason``, rocketlab.sim.messages) in words to show."""


def drop_reason(reason: str) -> str:
    """A ``msg_drop`` reason as the reader sees it (an unknown one as it is)."""
    return _(DROP_REASONS[reason]) if reason in DROP_REASONS else reason


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
                        subplot_titles=(_("sent per message type (per {width} ms)").format(width=width),
                                        _("lost by reason (per {width} ms)").format(width=width)))
    _add_send_lines(fig, sends, recvs, t0, width)
    _add_drop_bars(fig, drops, t0, width)
    shade_partitions(fig, partition_spans(records), row="all", col=1)
    fig.update_layout(barmode="stack", bargap=0.05)
    fig.update_xaxes(range=run_range(records))
    mark_faults(fig, of_kind(records, "fault"), row="all", col=1)  # after the range: labels laid out over it
    fig.update_yaxes(title=_("messages"), rangemode="tozero")
    fig.update_xaxes(title=_(TIME_AXIS_TITLE), row=2, col=1)
    title = _("Messages: {sent} sent, {delivered} delivered, {lost} lost").format(
        sent=len(sends), delivered=len(recvs), lost=len(drops))
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
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=_("{msg} sent").format(msg=msg), line=dict(color=colors[msg]),
                                 hovertemplate=_("{msg}: {n} sent around t={t} ms").format(msg=msg, n="%{y}", t="%{x}")
                                 + "<extra></extra>"),
                      row=1, col=1)
    xs, ys = _binned(recvs, t0, width)
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=_("all delivered"),
                                 line=dict(color="#222", dash="dot", width=1.5),
                                 hovertemplate=_("{n} delivered around t={t} ms").format(n="%{y}", t="%{x}")
                                 + "<extra></extra>"), row=1, col=1)


def _add_drop_bars(fig: go.Figure, drops: Sequence[Event], t0: int, width: int) -> None:
    if not drops:
        fig.add_annotation(text=_("no msg_drop events: nothing was lost"), x=0.5, y=0.5, showarrow=False,
                           xref="x2 domain", yref="y2 domain", font=dict(color=NOTE_TEXT))
        return
    reasons = Counter(str(e.get("reason")) for e in drops)
    colors = series_colors(sorted(reasons))
    whole_number_ticks(fig, max(Counter((e["t"] - t0) // width for e in drops).values()), row=2, col=1)
    for reason in sorted(reasons):
        xs, ys = _binned([e for e in drops if str(e.get("reason")) == reason], t0, width)
        fig.add_trace(go.Bar(x=xs, y=ys, width=width * 0.9, name=_("lost: {reason} ({n})").format(reason=drop_reason(reason), n=reasons[reason]),
                             marker_color=colors[reason],
                             hovertemplate=_("{reason}: {n} lost around t={t} ms").format(reason=drop_reason(reason), n="%{y}", t="%{x}")
                             + "<extra></extra>"),
                      row=2, col=1)


__all__ = ["message_flow"]
