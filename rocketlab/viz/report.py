"""One self-contained HTML report for one or several runs: summary tables, the cluster viewer replaying
each run (``rocketlab.viz.cluster_view``: play, pause and scrub in the browser, no kernel) and every
figure that the run's events can feed. plotly.js and the viewer are embedded once, so the file opens
offline; it holds no timestamps or random ids, so the same runs give the same bytes.

    write_report("report.html", {"dledger": cluster.events, "sync-master": "runs/sync"}, "Failover")
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from rocketlab.trace.recorder import describe
from rocketlab.trace.rundir import iter_events, read_meta
from rocketlab.trace.schema import KINDS
from rocketlab.viz.cluster_view.film import make_film
from rocketlab.viz.cluster_view.offline import viewer_assets, viewer_div
from rocketlab.viz.figures import commit_progress, message_flow, put_latency, role_timeline, votes_per_term
from rocketlab.viz.graphs import cluster_graph_figure, vote_graph_figure, vote_terms
from rocketlab.viz.timeline import Event, as_records, end_ms, node_ids, of_kind, partition_spans, states_at

MAX_VIEWER_EVENTS = 200_000  # runs longer than this are not embedded in the viewer (the page would be huge)
MAX_LISTED = 25  # faults / violations listed per run before "… N more"
VOTE_GRAPHS = 3  # vote graphs per run: the last terms with votes

FigureFn = Callable[[list[Event]], go.Figure]
FIGURE_PLAN: tuple[tuple[str, str, FigureFn, tuple[str, ...]], ...] = (
    ("roles", "Roles and terms", role_timeline, ("role", "term", "fault", "violation")),
    ("votes", "Votes per term", votes_per_term, ("vote_request", "vote_response", "vote_round")),
    ("progress", "Log and offsets", commit_progress,
     ("append", "commit", "truncate", "put", "ha_report", "ha_transfer")),
    ("messages", "Messages", message_flow, ("msg_send", "msg_recv", "msg_drop")),
    ("latency", "Put latency", put_latency, ("put",)),
)

CSS = """
body { font-family: Inter, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1320px;
       color: #222; padding: 0 16px; }
h1 { font-size: 26px; margin-bottom: 4px; } h2 { font-size: 21px; margin-top: 40px;
       border-bottom: 2px solid #ddd; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 12px; }
th, td { border: 1px solid #ddd; padding: 3px 9px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; font-size: 13px; } .note { color: #666; font-size: 13px; font-style: italic; }
.tables { display: flex; gap: 28px; flex-wrap: wrap; align-items: flex-start; }
.row { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 8px; }
.row.two { grid-template-columns: repeat(2, minmax(0, 1fr)); }
.bad { color: #b00020; font-weight: 600; } .ok { color: #2c7a2c; }
code { font-size: 12px; }
"""


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
                 title: str = "rocketlab report") -> Path:
    """Write one HTML file: an overview of every run, then per run its summary and figures."""
    views = load_runs(runs)
    figure_html = _FigureWriter()
    body = [f"<h1>{_esc(title)}</h1>", _overview(views)]
    body += [_run_section(i, view, figure_html) for i, view in enumerate(views)]
    if any(_viewable(view) for view in views):
        body.append(viewer_assets())
    page = ("<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
            f"<title>{_esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _anchor(index: int) -> str:
    return f"run-{index}"


def leaders_at_end(records: list[Event]) -> list[str]:
    """Live nodes whose last role is LEADER or MASTER when the trace ends."""
    states = states_at(records, end_ms(records))
    return [n for n, s in states.items() if s.alive and s.state in ("LEADER", "MASTER")]


def _overview(views: list[RunView]) -> str:
    head = "<tr><th>run</th><th>events</th><th>time (ms)</th><th>nodes</th><th>faults</th>" \
           "<th>violations</th><th>leader / master at end</th></tr>"
    rows = []
    for i, v in enumerate(views):
        violations = len(of_kind(v.records, "violation"))
        rows.append(
            f"<tr><td><a href='#{_anchor(i)}'>{_esc(v.name)}</a></td><td class='num'>{len(v.records)}</td>"
            f"<td class='num'>{end_ms(v.records)}</td><td>{_esc(', '.join(node_ids(v.records)))}</td>"
            f"<td class='num'>{len(of_kind(v.records, 'fault'))}</td>"
            f"<td class='num {'bad' if violations else 'ok'}'>{violations}</td>"
            f"<td>{_esc(', '.join(leaders_at_end(v.records)) or '-')}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _short(value: Any) -> str:
    """A meta value in a few words: a dict as ``mode (key value, ...)`` without its false entries."""
    if not isinstance(value, dict):
        return str(value)
    rest = ", ".join(f"{k} {v}" for k, v in value.items() if k != "mode" and v not in (False, None, 0, ""))
    return f"{value.get('mode', '')} ({rest})".strip() if rest else str(value.get("mode", value))


def _meta_line(meta: dict[str, Any]) -> str:
    keys = ("seed", "scenario", "system", "profile", "network", "end_ms")
    parts = [f"{k} <code>{_esc(_short(meta[k]))}</code>" for k in keys if meta.get(k) not in (None, "", {})]
    return f"<p class='meta'>{' · '.join(parts)}</p>" if parts else ""


def _kind_table(records: list[Event]) -> str:
    counts = Counter(str(e.get("kind")) for e in records)
    order = [k for k in KINDS if k in counts] + sorted(k for k in counts if k not in KINDS)
    rows = "".join(f"<tr><td>{_esc(k)}</td><td class='num'>{counts[k]}</td></tr>" for k in order)
    return f"<div><h3>Events per kind</h3><table><tr><th>kind</th><th>count</th></tr>{rows}</table></div>"


def _event_list(heading: str, events: list[Event], empty: str, css: str = "") -> str:
    if not events:
        return f"<div><h3>{heading}</h3><p class='note'>{empty}</p></div>"
    items = "".join(f"<tr><td><code>{_esc(describe(e))}</code></td></tr>" for e in events[:MAX_LISTED])
    more = f"<p class='note'>… {len(events) - MAX_LISTED} more</p>" if len(events) > MAX_LISTED else ""
    return (f"<div><h3 class='{css}'>{heading} ({len(events)})</h3><table><tr><th>event</th></tr>"
            f"{items}</table>{more}</div>")


def _summary(records: list[Event]) -> str:
    violations = of_kind(records, "violation")
    return ("<div class='tables'>" + _kind_table(records)
            + _event_list("Faults", of_kind(records, "fault"), "no faults injected")
            + _event_list("Invariant violations", violations, "none: every checked invariant held",
                          "bad" if violations else "")
            + "</div>")


def _run_section(index: int, view: RunView, figure_html: _FigureWriter) -> str:
    parts = [f"<h2 id='{_anchor(index)}'>{_esc(view.name)}</h2>", _meta_line(view.meta), _summary(view.records)]
    if _viewable(view):
        film = make_film(view.records, view.meta, end_ms=view.meta.get("end_ms"))
        parts.append("<h3>Replay the run (play, step, or drag the slider; click an event for why it happened)</h3>"
                     + viewer_div(film, f"{_anchor(index)}-viewer"))
    kinds = {e.get("kind") for e in view.records}
    skipped = []
    for key, heading, make, needs in FIGURE_PLAN:
        if kinds & set(needs):
            parts.append(figure_html(make(view.records), f"{_anchor(index)}-{key}"))
        else:
            skipped.append(f"{heading.lower()} ({', '.join(needs)})")
    parts.append(_vote_graphs(index, view.records, figure_html))
    parts.append(_partition_graph(index, view.records, figure_html))
    if skipped:
        parts.append(f"<p class='note'>Not drawn, this run has no events for: {_esc('; '.join(skipped))}.</p>")
    return "\n".join(p for p in parts if p)


def _viewable(view: RunView) -> bool:
    return 0 < len(view.records) <= MAX_VIEWER_EVENTS


def _vote_graphs(index: int, records: list[Event], figure_html: _FigureWriter) -> str:
    terms = vote_terms(records)[-VOTE_GRAPHS:]
    if not terms:
        return ""
    divs = "".join(f"<div>{figure_html(vote_graph_figure(records, term), f'{_anchor(index)}-votes-t{term}')}</div>"
                   for term in terms)
    return f"<h3>Who voted for whom (last {len(terms)} term{'s' if len(terms) > 1 else ''} with votes)</h3>" \
           f"<div class='row'>{divs}</div>"


def _partition_graph(index: int, records: list[Event], figure_html: _FigureWriter) -> str:
    spans = partition_spans(records)
    if not spans:
        return ""
    first = spans[0]
    middle = first.start_ms + (first.end_ms - first.start_ms) // 2
    fig = cluster_graph_figure(records, at_ms=middle)
    return (f"<h3>The cluster halfway through the first partition ({_esc(first.label)})</h3>"
            f"<div class='row two'><div>{figure_html(fig, f'{_anchor(index)}-cluster')}</div></div>")
