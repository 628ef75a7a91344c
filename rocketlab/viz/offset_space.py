"""The physical offset space of a broker on DLedger: which files hold which offsets, drawn as bars.

Unlike the other figures this one reads a store's file list, not a trace: rows come from
:func:`rocketlab.labs_support.rocketmq_on_dledger.file_layout` (one dict per file: ``log``, ``start``,
``end``, ``written`` and ``name``), one snapshot per moment to compare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from rocketlab.i18n import N_, _
from rocketlab.viz.style import BAR_EDGE, FAULT_MARK, OKABE_ITO, base_layout, overlay_pattern

LOG_COLORS = {"old commit log": OKABE_ITO["vermillion"], "DLedger log": OKABE_ITO["blue"]}
LOG_PATTERNS = {"old commit log": "/", "DLedger log": ""}  # the second cue beside the colour
LOG_NAMES = {"old commit log": N_("old commit log"), "DLedger log": N_("DLedger log")}
"""The logs' names as shown (the rows name them in English, as the lab's helpers return them)."""
LAB_LANES = (N_("after the upgrade and 120 puts"), N_("after retention"))
"""The lanes lab 05's code cell names, the same in both languages: in the catalogue, so that the Chinese twin
shows them in Chinese (:func:`offset_space` translates a lane it finds there)."""


def offset_space(snapshots: Mapping[str, Sequence[Mapping[str, Any]]], *, divided: int | None = None) -> go.Figure:
    """One horizontal lane per snapshot (e.g. "after the upgrade", "after retention"); each file is a
    pale bar over the offsets it spans with a solid bar over the bytes written in it, coloured by the log
    it belongs to; a dashed line marks ``divided`` (``dividedCommitlogOffset``)."""
    fig = go.Figure()
    shown: set[str] = set()
    lanes = list(snapshots)
    for key in lanes:
        lane = _(key) if key else key  # one of LAB_LANES in the kit's language, any other as given
        for row in snapshots[key]:
            color = LOG_COLORS.get(row["log"], "#7f7f7f")
            log = _(LOG_NAMES[row["log"]]) if row["log"] in LOG_NAMES else row["log"]
            hover = _("{log} file {name}<br>offsets {start}-{end}<br>written up to {written}").format(
                log=log, name=row["name"], start=f"{row['start']:,}", end=f"{row['end']:,}",
                written=f"{row['start'] + row['written']:,}")
            fig.add_trace(go.Bar(y=[lane], x=[row["end"] - row["start"]], base=[row["start"]], orientation="h",
                                 marker={"color": color, "opacity": 0.25, "line": BAR_EDGE},
                                 showlegend=False, hovertext=hover, hoverinfo="text", width=0.6))
            fig.add_trace(go.Bar(y=[lane], x=[row["written"]], base=[row["start"]], orientation="h",
                                 marker={"color": color, "line": BAR_EDGE,
                                         "pattern": overlay_pattern(LOG_PATTERNS.get(row["log"], ""), color)}, name=_("{log} (written bytes)").format(log=log),
                                 legendgroup=row["log"], showlegend=row["log"] not in shown, hovertext=hover,
                                 hoverinfo="text", width=0.3))
            shown.add(row["log"])
    if divided is not None and divided >= 0:
        fig.add_vline(x=divided, line={"dash": "dash", "color": FAULT_MARK},
                      annotation_text=f"dividedCommitlogOffset {divided:,}", annotation_position="top")
    base_layout(fig, _("Physical offset space: files per log"), 160 + 70 * len(lanes))
    fig.update_yaxes(automargin=True)  # the lanes' names in full
    fig.update_layout(barmode="overlay", xaxis_title=_("physical offset (bytes)"), yaxis={"autorange": "reversed"},
                      legend={"orientation": "h", "y": -0.35}, margin={"t": 70})
    return fig


__all__ = ["LOG_COLORS", "offset_space"]
