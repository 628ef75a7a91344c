"""Exported notebooks keep their figures: an executed lab, converted by ``jupyter nbconvert --to html``,
shows every plotly figure offline, with plotly.js embedded once (``rocketlab.viz.style``'s renderer). The
same run of lab 04 pins what its viewer walkthrough (Figure 8, #247, #251) says."""

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
    walkthrough = [c for c in nb.cells if "viewer-walkthrough" in c.metadata.get("tags", [])]
    text = "".join(o.get("text", "") for c in walkthrough for o in c.get("outputs", []))
    # the loss the walkthrough tells the learner to step to, and #251's power failure drawn as lost entries
    assert re.search(r"first violation at t = \d+ ms: leader_completeness: leader n\d \(term \d+\) lacks committed index \d+", text), text
    assert re.search(r"t = \d+ ms: n\d restarted without entries \d+\.\.\d+", text), text
    views = [o for c in walkthrough for o in c.get("outputs", [])
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 3, "Figure 8, #247 and #251 each open in the viewer"
    executed = tmp_path / "lab04.ipynb"
    nbformat.write(nb, executed)
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", str(executed)], check=True,
                   capture_output=True, timeout=300)
    html = (tmp_path / "lab04.html").read_text(encoding="utf-8")
    assert len(re.findall(r"plotly\.js v\d", html)) == 1, "plotly.js embedded once per notebook"
    assert html.count('class="plotly-graph-div"') == len(figures)
    fetched = re.findall(r"<script[^>]*src=[\"']([^\"']+)", html)  # nbconvert's own: require.js, MathJax
    assert not [src for src in fetched if "plot" in src], "the figures fetch nothing from the network"
