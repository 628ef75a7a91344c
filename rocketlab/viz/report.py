"""One self-contained HTML report for one or several runs: summary tables, the cluster viewer replaying
each run (``rocketlab.viz.cluster_view``: play, pause and scrub in the browser, no kernel) and every
figure that the run's events can feed. plotly.js and the viewer are embedded once, so the file opens
offline; it holds no timestamps or random ids, so the same runs give the same bytes.

    write_report("report.html", {"dledger": cluster.events, "sync-master": "runs/sync"}, "Failover")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from rocketlab.i18n import N_, _
from rocketlab.templating import Markup, render
from rocketlab.trace.recorder import describe
from rocketlab.trace.rundir import iter_events, read_meta
from rocketlab.trace.schema import KINDS
from rocketlab.viz.cluster_view.film import make_film
from rocketlab.viz.cluster_view.offline import viewer_assets, viewer_div
from rocketlab.viz.figures.latency import put_latency
from rocketlab.viz.figures.messages import message_flow
from rocketlab.viz.figures.offsets import commit_progress
from rocketlab.viz.figures.roles import role_timeline
from rocketlab.viz.figures.votes import votes_per_term
from rocketlab.viz.graphs import cluster_graph_figure, vote_graph_figure, vote_terms
from rocketlab.viz.language import page_context
from rocketlab.viz.timeline import Event, as_records, end_ms, node_ids, of_kind, partition_spans, states_at

MAX_VIEWER_EVENTS = 200_000  # runs longer than this are not embedded in the viewer (the page would be huge)
MAX_LISTED = 25  # faults / violations listed per run before "… N more"
VOTE_GRAPHS = 3  # vote graphs per run: the last terms with votes

FigureFn = Callable[[list[Event]], go.Figure]
FIGURE_PLAN: tuple[tuple[str, str, FigureFn, tuple[str, ...]], ...] = (
    ("roles", N_("Roles and terms"), role_timeline, ("role", "term", "fault", "violation")),
    ("votes", N_("Votes per term"), votes_per_term, ("vote_request", "vote_response", "vote_round")),
    ("progress", N_("Log and offsets"), commit_progress,
     ("append", "commit", "truncate", "put", "ha_report", "ha_transfer")),
    ("messages", N_("Messages"), message_flow, ("msg_send", "msg_recv", "msg_drop")),
    ("latency", N_("Put latency"), put_latency, ("put",)),
)


@dataclass
class RunView:
    """One run to report: its name, meta (from meta.json or ``describe()``) and ordered events."""

    name: str
    records: list[Event]
    meta: dict[str, Any] = field(default_factory=dict)


class _FigureWriter:
    """Turns figures into HTML divs; only the first carries the plotly.js bundle."""

    def __init__(self) -> None:
        self.bundled = False
        self.count = 0

    def __call__(self, fig: go.Figure, div_id: str) -> str:
        self.count += 1
        out = fig.to_html(full_html=False, include_plotlyjs=not self.bundled, div_id=div_id,
                          config={"displaylogo": False, "responsive": True})
        self.bundled = True
        return out


def load_run(name: str, source: Any) -> RunView:
    """A run from a run directory, a Cluster (anything with ``.events``), a DataFrame or an event list."""
    if isinstance(source, (str, Path)):
        return RunView(name, as_records(iter_events(source)), read_meta(source))
    if hasattr(source, "events") and not hasattr(source, "columns"):
        meta = source.describe() if callable(getattr(source, "describe", None)) else {}
        return RunView(name, as_records(source.events), dict(meta))
    return RunView(name, as_records(source))


def load_runs(runs: Mapping[str, Any] | Iterable[str | Path] | str | Path) -> list[RunView]:
    """``{name: events | DataFrame | run dir | Cluster}``, or run directories named after their folder."""
    if isinstance(runs, (str, Path)):
        runs = [runs]
    if isinstance(runs, Mapping):
        return [load_run(str(name), source) for name, source in runs.items()]
    return [load_run(Path(p).name, p) for p in runs]


def write_report(path: str | Path, runs: Mapping[str, Any] | Iterable[str | Path] | str | Path,
                 title: str | None = None) -> Path:
    """Write one HTML file (``templates/report.html.j2``): an overview of every run, then per run its
    summary and figures, in the kernel's language (``title`` defaults to "rocketlab report" in it)."""
    title = _("rocketlab report") if title is None else title
    views = load_runs(runs)
    figure_html = _FigureWriter()
    sections = [_run_section(i, view, figure_html) for i, view in enumerate(views)]
    page = render("rocketlab.viz", "report.html.j2", **page_context(), title=str(title), runs=sections, max_listed=MAX_LISTED,
                  viewer_assets=Markup(viewer_assets()) if any(_viewable(v) for v in views) else "")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


def _anchor(index: int) -> str:
    return f"run-{index}"


def leaders_at_end(records: list[Event]) -> list[str]:
    """Live nodes whose last role is LEADER or MASTER when the trace ends."""
    states = states_at(records, end_ms(records))
    return [n for n, s in states.items() if s.alive and s.state in ("LEADER", "MASTER")]


def _short(value: Any) -> str:
    """A meta value in a few words: a dict as ``mode (key value, ...)`` without its false entries."""
    if not isinstance(value, dict):
        return str(value)
    rest = ", ".join(f"{k} {v}" for k, v in value.items() if k != "mode" and v not in (False, None, 0, ""))
    return f"{value.get('mode', '')} ({rest})".strip() if rest else str(value.get("mode", value))


def _meta(meta: dict[str, Any]) -> list[tuple[str, str]]:
    keys = ("seed", "scenario", "system", "profile", "network", "end_ms")
    return [(k, _short(meta[k])) for k in keys if meta.get(k) not in (None, "", {})]


def _kinds(records: list[Event]) -> list[tuple[str, int]]:
    counts = Counter(str(e.get("kind")) for e in records)
    order = [k for k in KINDS if k in counts] + sorted(k for k in counts if k not in KINDS)
    return [(k, counts[k]) for k in order]


def _run_section(index: int, view: RunView, figure_html: _FigureWriter) -> dict[str, Any]:
    """What the template shows of one run; figures are rendered here, in page order (the first carries
    plotly.js)."""
    anchor = _anchor(index)
    records = view.records
    viewer = None
    if _viewable(view):
        film = make_film(records, view.meta, end_ms=view.meta.get("end_ms"))
        viewer = Markup(viewer_div(film, f"{anchor}-viewer"))
    kinds = {e.get("kind") for e in records}
    figures, skipped = [], []
    for key, heading, make, needs in FIGURE_PLAN:
        if kinds & set(needs):
            figures.append(Markup(figure_html(make(records), f"{anchor}-{key}")))
        else:
            skipped.append(f"{_(heading).lower()} ({', '.join(needs)})")
    votes = [Markup(figure_html(vote_graph_figure(records, term), f"{anchor}-votes-t{term}"))
             for term in vote_terms(records)[-VOTE_GRAPHS:]]
    return {
        "anchor": anchor, "name": view.name, "events": len(records), "end_ms": end_ms(records),
        "nodes": ", ".join(node_ids(records)), "leaders": ", ".join(leaders_at_end(records)),
        "meta": _meta(view.meta), "kinds": _kinds(records),
        "faults": [describe(e) for e in of_kind(records, "fault")],
        "violations": [describe(e) for e in of_kind(records, "violation")],
        "viewer": viewer, "figures": figures, "vote_graphs": votes,
        "partition": _partition_graph(index, records, figure_html), "skipped": skipped,
    }


def _viewable(view: RunView) -> bool:
    return 0 < len(view.records) <= MAX_VIEWER_EVENTS


def _partition_graph(index: int, records: list[Event], figure_html: _FigureWriter) -> dict[str, Any] | None:
    spans = partition_spans(records)
    if not spans:
        return None
    first = spans[0]
    middle = first.start_ms + (first.end_ms - first.start_ms) // 2
    fig = cluster_graph_figure(records, at_ms=middle)
    return {"label": first.label, "figure": Markup(figure_html(fig, f"{_anchor(index)}-cluster"))}
