"""The cluster viewer without a kernel: a recorded film embedded in an HTML page (or a report section).

The page carries the viewer's modules (``js/``, joined by ``bundle.py``; as text, imported from a blob URL), ``viewer.css`` and the film as JSON,
so it opens from a file with no network; play, pause, step and scrubbing run in the browser. Election
timers are drawn only when the run has timer samples (``timers.jsonl``, written by
``ClusterView.save``): the trace itself does not carry them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab.i18n import _
from rocketlab.templating import Markup, render
from rocketlab.trace.rundir import RunDirError, iter_events, read_meta
from rocketlab.viz.cluster_view.bundle import viewer_source
from rocketlab.viz.cluster_view.film import make_film
from rocketlab.viz.language import page_context

HERE = Path(__file__).parent
TIMERS_FILE = "timers.jsonl"

def viewer_assets() -> str:
    """The viewer's CSS and JavaScript source, once per page (``templates/viewer_assets.html.j2``)."""
    css = (HERE / "viewer.css").read_text(encoding="utf-8")
    return render("rocketlab.viz", "viewer_assets.html.j2", js=Markup(viewer_source()), css=Markup(css)).rstrip("\n")


def viewer_div(film: Mapping[str, Any], element_id: str) -> str:
    """A viewer holder and its film (JSON with ``</`` escaped, so no string in it can end the script)."""
    data = json.dumps(film, separators=(",", ":")).replace("</", "<\\/")
    return render("rocketlab.viz", "viewer_div.html.j2", element_id=element_id, film_json=Markup(data)).rstrip("\n")


def viewer_page(film: Mapping[str, Any], title: str) -> str:
    """A whole HTML page holding one viewer (``templates/viewer_page.html.j2``)."""
    return render("rocketlab.viz", "viewer_page.html.j2", **page_context(), title=title,
                  viewer=Markup(viewer_div(film, "viewer-0")), assets=Markup(viewer_assets()))


def read_timers(run_dir: str | Path) -> list[dict[str, Any]]:
    """The timer samples saved beside a run's events, or [] when the run has none."""
    path = Path(run_dir) / TIMERS_FILE
    if not path.exists():
        return []
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise RunDirError(f"{path}: corrupt timer sample at line {lineno}: {e.msg}") from None
    return out


def write_timers(run_dir: str | Path, timers: Sequence[Mapping[str, Any]]) -> Path:
    path = Path(run_dir) / TIMERS_FILE
    path.write_text("".join(json.dumps(dict(t), separators=(",", ":")) + "\n" for t in timers), encoding="utf-8")
    return path


def run_film(run_dir: str | Path) -> dict[str, Any]:
    """The film of a run directory (events, meta and any timer samples); RunDirError when it has no events."""
    meta = read_meta(run_dir)
    events = list(iter_events(run_dir))
    if not events:
        raise RunDirError(f"{run_dir}: the run has no events to show")
    events.sort(key=lambda e: (e["t"], e.get("seq", 0)))
    return make_film(events, meta, read_timers(run_dir), end_ms=meta.get("end_ms"))


def write_viewer(run_dir: str | Path, out: str | Path) -> Path:
    """``rocketlab view RUN_DIR --html OUT``: one page with the run in the viewer."""
    film = run_film(run_dir)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    title = _("rocketlab run {name}").format(name=Path(run_dir).resolve().name)
    path.write_text(viewer_page(film, title), encoding="utf-8")
    return path
