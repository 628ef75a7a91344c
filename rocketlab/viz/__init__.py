"""Every figure a learner sees, one call each, reading trace events only (docs/trace.md).

* :mod:`~rocketlab.viz.figures` — ``role_timeline``, ``votes_per_term``, ``commit_progress``,
  ``message_flow``, ``put_latency``, ``epochs_and_sync_state_set`` (plotly figures from a list of events
  or a ``load_events`` frame, one module each);
* :mod:`~rocketlab.viz.graphs` — ``vote_graph`` / ``cluster_graph`` (networkx) and their ``*_figure``;
* :mod:`~rocketlab.viz.report` — ``write_report``: one offline HTML file for several runs;
* :mod:`~rocketlab.viz.cluster_view` — ``ClusterView``: the RaftScope-style cluster viewer (a widget in
  JupyterLab, the same viewer offline in reports and ``rocketlab view``);
* :mod:`~rocketlab.viz.timeline` — the node histories (role segments, down / paused spans, partitions)
  the others are drawn from.

Figures and the viewer speak the kernel's language (:mod:`~rocketlab.viz.language`: a notebook twin's
metadata, else :mod:`rocketlab.i18n`'s choice), settled when this package is first imported.

The widget is imported lazily (``from rocketlab.viz import ClusterView`` works), so plotting in a script
does not load ipywidgets.
"""

from __future__ import annotations

from typing import Any

from rocketlab.viz.figures.controller import epochs_and_sync_state_set
from rocketlab.viz.figures.latency import put_latency
from rocketlab.viz.figures.messages import message_flow
from rocketlab.viz.figures.offsets import commit_progress
from rocketlab.viz.figures.roles import role_timeline
from rocketlab.viz.figures.votes import votes_per_term
from rocketlab.viz.graphs import cluster_graph, cluster_graph_figure, vote_graph, vote_graph_figure
from rocketlab.viz.language import kernel_language
from rocketlab.viz.report import write_report

kernel_language()  # in a notebook twin's kernel, figures speak the twin's language from the first one on

__all__ = [
    "ClusterView", "cluster_graph", "cluster_graph_figure", "commit_progress", "epochs_and_sync_state_set",
    "message_flow", "put_latency", "role_timeline", "vote_graph", "vote_graph_figure", "votes_per_term",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name == "ClusterView":
        from rocketlab.viz.cluster_view.widget import ClusterView  # lazy: anywidget, only in a notebook

        return ClusterView
    raise AttributeError(f"module 'rocketlab.viz' has no attribute {name!r}")
