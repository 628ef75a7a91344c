"""Exported notebooks keep their figures: an executed lab, converted by ``jupyter nbconvert --to html``,
shows every plotly figure offline, with plotly.js embedded once (``rocketlab.viz.style``'s renderer)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat

from rocketlab.viz.style import EXPORT_RENDERER, export_friendly_figures

LAB = Path(__file__).resolve().parents[2] / "labs" / "04_dledger_replication.ipynb"


def test_outside_a_kernel_the_renderer_is_left_alone():
    import plotly.io as pio

    assert export_friendly_figures() is False
    assert pio.renderers.default != EXPORT_RENDERER


def test_an_exported_lab_shows_its_figures_offline(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("ROCKETLAB_FAST", "1")
    nb = nbformat.read(LAB, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(LAB.parent)}}).execute()
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert figures, "lab 04 draws plotly figures"
    assert all("text/html" in o["data"] for o in figures), "every figure carries HTML for exports"
    executed = tmp_path / "lab04.ipynb"
    nbformat.write(nb, executed)
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", str(executed)], check=True,
                   capture_output=True, timeout=300)
    html = (tmp_path / "lab04.html").read_text(encoding="utf-8")
    assert len(re.findall(r"plotly\.js v\d", html)) == 1, "plotly.js embedded once per notebook"
    assert html.count('class="plotly-graph-div"') == len(figures)
    fetched = re.findall(r"<script[^>]*src=[\"']([^\"']+)", html)  # nbconvert's own: require.js, MathJax
    assert not [src for src in fetched if "plot" in src], "the figures fetch nothing from the network"
