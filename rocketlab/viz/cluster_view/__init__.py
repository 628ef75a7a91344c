"""The cluster viewer: a RaftScope-style widget in JupyterLab and the same viewer, read-only, in HTML.

* :class:`ClusterView` (``widget.py``) - the anywidget; the Python side owns the simulator.
* :class:`ViewSession` (``session.py``) - intents, forks and replay code, without any widget.
* ``film.py`` - what is drawn, as data; ``offline.py`` - the viewer in a page with no kernel.
* ``viewer.js`` / ``viewer.css`` - the one renderer both use.
"""

from rocketlab.viz.cluster_view.film import election_timer, make_film, why
from rocketlab.viz.cluster_view.offline import run_film, viewer_page, write_viewer
from rocketlab.viz.cluster_view.session import ACTIONS, Intent, ViewSession
from rocketlab.viz.cluster_view.widget import ClusterView

__all__ = ["ACTIONS", "ClusterView", "Intent", "ViewSession", "election_timer", "make_film", "run_film",
           "viewer_page", "why", "write_viewer"]
