"""Every figure of the kit in JupyterLab's Light and Dark theme, without running the labs: the figures the
labs draw, from the same runs (Figure 8, a controller failover, a classic SYNC_MASTER crash), rendered on
one page per theme with that theme's variables and the kit's theme rules (``rocketlab.viz.style.theme_css``),
every text measured against what it sits on (4.5:1, WCAG AA). A ``browser`` test: skipped without
Chromium, failed without it under CI."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import plotly.io as pio
import pytest

from rocketlab.scenarios.registry import SCENARIOS, ScenarioArgs
from rocketlab.viz import (
    cluster_graph_figure,
    commit_progress,
    epochs_and_sync_state_set,
    message_flow,
    put_latency,
    role_timeline,
    vote_graph_figure,
    votes_per_term,
)
from rocketlab.viz.style import theme_css
from tests.test_lab_browser import _require_chromium
from tests.viz.test_viewer_access_browser import FIGURE_CONTRAST_JS
from tests.viz.test_viewer_films_browser import offline_page

pytestmark = pytest.mark.browser
THEMES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"  # JupyterLab's own


def _events(name: str) -> list:
    with tempfile.TemporaryDirectory(prefix="rocketlab-fig-") as tmp:
        c = SCENARIOS[name].run(ScenarioArgs(data_dir=Path(tmp))).cluster
        try:
            return list(c.events)
        finally:
            c.close()


def kit_figures() -> list:
    figure8, controller, classic = _events("dledger-figure8"), _events("controller-failover"), _events("ms-sync-crash")
    return [role_timeline(figure8), commit_progress(figure8), votes_per_term(figure8), message_flow(figure8),
            vote_graph_figure(figure8, 4), cluster_graph_figure(figure8, 4_000), epochs_and_sync_state_set(controller),
            role_timeline(classic), put_latency(classic)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_figure_reads_in_both_themes(tmp_path, theme):
    _require_chromium()
    css = (THEMES / f"theme-{theme}-extension" / "index.css").read_text(encoding="utf-8")
    figures = kit_figures()
    parts = [pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False) for i, fig in enumerate(figures)]
    page = tmp_path / f"figures-{theme}.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style><style>{theme_css()}"
                    f"</style></head><body data-jp-theme-light='{str(theme == 'light').lower()}' style='background: "
                    f"var(--jp-layout-color0); margin: 0'>{''.join(parts)}</body></html>", encoding="utf-8")
    with offline_page(1000, 900, dark=theme == "dark") as browser:
        browser.goto(page.as_uri())
        browser.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(figures)}",
                                  timeout=30_000)
        browser.wait_for_timeout(500)
        measured = browser.locator("body").evaluate(FIGURE_CONTRAST_JS)
        if os.environ.get("ROCKETLAB_SHOTS"):
            browser.screenshot(path=str(Path(os.environ["ROCKETLAB_SHOTS"]) / f"figures-{theme}.png"), full_page=True)
    assert len(measured) > 100
    poor = sorted({(m["text"], round(m["ratio"], 2)) for m in measured if m["ratio"] < 4.5})
    assert not poor, poor[:20]
