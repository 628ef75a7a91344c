"""Raft's Figure 16 drawn: time without a leader after the leader crashes, one cumulative curve per set-up.

The same figure serves the labs' cells (``rocketlab.labs_support.dledger_election.figure16_cdf``) and the
sweep's ``figure16.html`` (:mod:`rocketlab.analysis.figure16_report`). rocketlab's own figure of the Raft
paper's (Ongaro and Ousterhout, Figure 16); the trials come from :mod:`rocketlab.scenarios.figure16`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from rocketlab.i18n import N_, _
from rocketlab.scenarios import figure16
from rocketlab.viz.style import base_layout

CURVE_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#7F7F7F", "#A6661A")  # 3:1 on white and #111
LAB_TITLES = (
    N_("Randomness: time without leader, timeouts from 150 ms up to 150-300 ms"),
    N_("Scale: time without leader, timeout ranges from 12-24 ms to 150-300 ms"),
    N_("Raft Figure 16 (top): time without a leader, by election timeout range"),
    N_("Raft Figure 16 (bottom): time without a leader, by scaled timeout range"),
    N_("Time without a leader: Raft's election against DLedger's, same trial"),
)
"""The titles labs 03 and 07 pass from their code cells, which are the same in both languages: in the catalogue,
so that the Chinese twins show them in Chinese (:func:`downtime_cdf` translates a title it finds there)."""
RANGE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#A6661A",
                "#8866CC", "#9A8700")  # Okabe-Ito's seven (yellow darkened) and three more, each 3:1 on white and #111
RANGE_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star", "pentagon",
                 "hexagon")


def range_styles(ranges: Sequence[tuple[int, int]] = (*figure16.RANGES_TOP, *figure16.RANGES_BOTTOM)
                 ) -> dict[str, tuple[str, str]]:
    """One (colour, marker symbol) per timeout range, the same in every graph that shows the range (150-300 ms
    is in both of Figure 16's): keyed by the curve label ``"lo-hi ms"``. The symbol is a second cue beside
    the colour."""
    order = list(dict.fromkeys(ranges))
    return {f"{lo}-{hi} ms": (RANGE_COLORS[i % len(RANGE_COLORS)], RANGE_SYMBOLS[i % len(RANGE_SYMBOLS)])
            for i, (lo, hi) in enumerate(order)}


def downtime_cdf(curves: Sequence[tuple[str, pd.DataFrame]], *, log_x: bool, title: str,
                 floor_ms: float | None = None, styles: Mapping[str, tuple[str, str]] | None = None) -> go.Figure:
    """One cumulative curve per ``(name, trials)``: the share of trials with ``downtime_ms`` <= x. Trials
    that had no leader when they gave up (``elected`` false) keep the curve flat below 1 up to the give-up
    time, drawn dotted; a curve with no elected trial at all starts at ``floor_ms`` (default: half its
    give-up time). Empty groups are left out. ``styles`` maps a label to its (colour, marker symbol)
    (:func:`range_styles`); labels not in it take the next of :data:`CURVE_COLORS` and of the symbols."""
    fig = go.Figure()
    for i, (label, trials) in enumerate(curves):
        color, symbol = (styles or {}).get(label, (CURVE_COLORS[i % len(CURVE_COLORS)],
                                                   RANGE_SYMBOLS[i % len(RANGE_SYMBOLS)]))
        if trials.empty:
            continue
        total = len(trials)
        values = sorted(trials.loc[trials["elected"], "downtime_ms"])
        xs = [values[0], *values] if values else []
        ys = [0.0, *((i + 1) / total for i in range(len(values)))] if values else []
        name = f"{_(label)} ({total})"  # a curve name of spark_lines.CURVE_NAMES in the kit's language
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", line_shape="hv", name=name,
                                 line={"color": color}, marker={"size": 6, "symbol": symbol}, legendgroup=name))
        censored = trials.loc[~trials["elected"], "downtime_ms"]
        if len(censored):
            start = xs[-1] if xs else floor_ms if floor_ms is not None else int(censored.min()) / 2
            fig.add_trace(go.Scatter(x=[start, int(censored.max())], y=[ys[-1] if ys else 0.0] * 2,
                                     mode="lines+markers", line={"dash": "dot", "color": color}, legendgroup=name,
                                     name=_("{label}: {n} without a leader").format(label=_(label), n=len(censored)),
                                     marker={"size": 6, "symbol": symbol}))
    base_layout(fig, _(title), 420)  # a title of LAB_TITLES in the kit's language, any other as given
    fig.update_layout(xaxis_title=_("time without leader (ms)"), yaxis_title=_("cumulative share of trials"),
                      yaxis_range=[-0.02, 1.02])
    if log_x:
        fig.update_xaxes(type="log")
    return fig
