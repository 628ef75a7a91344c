"""The figures the labs display, kept from their fast runs (``tests/test_labs.py``) for the browser contrast test
of ``tests/viz/test_lab_figures_theme_browser.py``: every plotly figure a lab's cells show, as the JSON the
notebook stores (``application/vnd.plotly.v1+json``), in the order shown. A lab the session has not run yet is run
here (``ROCKETLAB_FAST=1``, its own kernel), so the contrast test also stands alone."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat

LABS = Path(__file__).resolve().parent.parent / "labs"
PLOTLY = "application/vnd.plotly.v1+json"
FIGURES: dict[str, list[dict[str, Any]]] = {}
"""Lab notebook name -> its figures: ``{"cell": index, "figure": plotly JSON}`` in display order."""


def keep(name: str, nb: Any) -> None:
    """Keep the plotly figures an executed notebook shows."""
    FIGURES[name] = [{"cell": i, "figure": out["data"][PLOTLY]} for i, cell in enumerate(nb.cells)
                     for out in cell.get("outputs", []) if PLOTLY in out.get("data", {})]


def run_fast(path: Path) -> Any:
    """Execute a lab as ``test_notebook_runs_headless_in_fast_mode`` does; the executed notebook."""
    from nbclient import NotebookClient  # lazy: a Jupyter client, only where a lab runs

    before = os.environ.get("ROCKETLAB_FAST")
    os.environ["ROCKETLAB_FAST"] = "1"  # the kernel inherits the environment it starts with
    try:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(LABS)}}).execute()
    finally:
        if before is None:
            del os.environ["ROCKETLAB_FAST"]
        else:
            os.environ["ROCKETLAB_FAST"] = before
    return nb


def lab_figures(name: str) -> list[dict[str, Any]]:
    """The figures lab ``name`` shows, from this session's fast run (run now if there was none)."""
    if name not in FIGURES:
        keep(name, run_fast(LABS / name))
    return FIGURES[name]
