"""The cluster viewer: a RaftScope-style widget in JupyterLab and the same viewer, read-only, in HTML.

* :class:`ClusterView` (``widget.py``) - the anywidget; the Python side owns the simulator. It opens any
  run: a fresh or a run cluster (``ClusterView(cluster)``, at the present), ``ClusterView.schedule(name)``
  (Figure 8, #247, #251), ``ClusterView.open_run(run_dir)``, a grader's ``replay(...)`` (at the failure).
* :class:`ViewSession` (``session.py``) - intents, forks and replay code, without any widget.
* ``film.py`` - what is drawn, as data; ``offline.py`` - the viewer in a page with no kernel;
  ``gallery.py`` - the films the docs site publishes (:data:`~rocketlab.viz.cluster_view.gallery.FILMS`).
* ``js/`` (ES modules joined by ``bundle.py``) and ``viewer.css`` - the one renderer both use: scrub, step
  and step back, filters and "next fault / vote round / leader change / commit / violation" from the trace
  vocabulary, a lab's bookmarks, its own keys while it has focus; its words in ``js/strings.js`` (English)
  and one table per language beside it (``js/strings_zh_CN.js``), chosen by ``ClusterView.lang`` / the
  film's ``lang``.

``ClusterView`` is imported lazily, so the report and ``rocketlab view`` do not load ipywidgets.
"""

from typing import Any

from rocketlab.viz.cluster_view.film import election_timer, make_film, why
from rocketlab.viz.cluster_view.offline import run_film, viewer_page, write_viewer
from rocketlab.viz.cluster_view.session import ACTIONS, Intent, ViewSession

__all__ = ["ACTIONS", "ClusterView", "Intent", "ViewSession", "election_timer", "make_film", "run_film",
           "viewer_page", "why", "write_viewer"]


def __getattr__(name: str) -> Any:
    if name == "ClusterView":
        from rocketlab.viz.cluster_view.widget import ClusterView  # lazy: anywidget, only in a notebook

        return ClusterView
    raise AttributeError(f"module 'rocketlab.viz.cluster_view' has no attribute {name!r}")
