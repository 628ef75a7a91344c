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


def _theme_page(page: Path, theme: str, figures: list) -> Path:
    """``figures`` on one page styled as JupyterLab's ``theme`` (its CSS and the kit's), written to ``page``."""
    css = (THEMES / f"theme-{theme}-extension" / "index.css").read_text(encoding="utf-8")
    parts = [pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False) for i, fig in enumerate(figures)]
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style><style>{theme_css()}"
                    f"</style></head><body data-jp-theme-light='{str(theme == 'light').lower()}' style='background: "
                    f"var(--jp-layout-color0); margin: 0'>{''.join(parts)}</body></html>", encoding="utf-8")
    return page


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_figure_reads_in_both_themes(tmp_path, theme):
    _require_chromium()
    figures = kit_figures()
    page = _theme_page(tmp_path / f"figures-{theme}.html", theme, figures)
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


HOVER_JS = """async root => {
  const parse = (s) => (String(s).match(/[\\d.]+/g) || []).map(Number);
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (c, bg) => { const a = (c.length > 3 ? c[3] : 1); return c.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a)); };
  const opacity = (s) => (s === '' ? 1 : Number(s));
  const page = parse(getComputedStyle(document.body).backgroundColor).slice(0, 3);
  const out = [];
  const plots = [...root.querySelectorAll('.js-plotly-plot')];
  for (const [figure, gd] of plots.entries()) {
    for (const [curve, trace] of gd.data.entries()) {
      const xs = trace.x || trace.base || [];
      if (!xs.length || trace.hoverinfo === 'skip' || trace.visible === 'legendonly') continue;
      Plotly.Fx.hover(gd, [{curveNumber: curve, pointNumber: 0}], (trace.xaxis || 'x') + (trace.yaxis || 'y'));
      await new Promise((done) => setTimeout(done, 60));  // plotly throttles hover events
      gd.querySelectorAll('.hoverlayer .hovertext').forEach((label) => {
        const box = getComputedStyle(label.querySelector('path'));
        const fill = parse(box.fill);
        const boxColor = fill.length >= 3 ? over([...fill.slice(0, 3), (fill[3] ?? 1) * opacity(box.fillOpacity)], page) : page;
        const border = over(parse(box.stroke), page);
        out.push({ what: 'hover box', figure, curve, text: trace.name || '', ratio: Math.max(ratio(boxColor, page), ratio(border, page)) });
        label.querySelectorAll('text').forEach((t) => {
          if (!t.textContent.trim()) return;
          out.push({ what: 'hover text', figure, curve, text: t.textContent.slice(0, 40),
                     ratio: ratio(over(parse(getComputedStyle(t).fill), boxColor), boxColor) });
        });
      });
      Plotly.Fx.unhover(gd);
    }
  }
  return out;
}"""
"""Each trace's first point hovered in turn (``Plotly.Fx.hover``): the label's words against its box, and the box (its
fill or its outline) against the page: what a learner reads when pointing at a bar, a line or a marker."""

MODEBAR_JS = """plot => {
  const parse = (s) => (String(s).match(/[\\d.]+/g) || []).map(Number);
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (c, bg) => { const a = (c.length > 3 ? c[3] : 1); return c.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a)); };
  const page = parse(getComputedStyle(document.body).backgroundColor).slice(0, 3);
  const bar = plot.querySelector('.modebar');
  const shown = bar && Number(getComputedStyle(bar).opacity) > 0.5;
  return [...plot.querySelectorAll('.modebar-btn')].map((btn) => {
    let bg = page;
    const chain = [];
    for (let e = btn; e && e !== plot; e = e.parentElement) chain.unshift(e);
    chain.forEach((e) => { const c = parse(getComputedStyle(e).backgroundColor); if (c.length >= 3) bg = over(c, bg); });
    const tile = btn.querySelector('rect');  // plotly's logo: its bars on a tile of its own colour
    if (tile) bg = over(parse(getComputedStyle(tile).fill), bg);
    const s = getComputedStyle(btn.querySelector(tile ? 'rect ~ path, g path' : 'path'));
    const fill = parse(s.fill);
    const a = (fill.length > 3 ? fill[3] : 1) * (s.fillOpacity === '' ? 1 : Number(s.fillOpacity));
    return { what: 'toolbar', text: btn.getAttribute('data-title') || btn.getAttribute('data-attr') || '', shown,
             ratio: ratio(over([...fill.slice(0, 3), a], bg), bg) };
  });
}"""
"""A figure's toolbar (plotly's modebar), shown by pointing at the figure: each button's icon against what it sits
on (the button group's background over the page)."""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_hover_labels_and_toolbar_read_in_both_themes(tmp_path, theme):
    """Plotly's own parts of a figure in JupyterLab's themes: hover labels (text 4.5:1 on the label, the label 3:1
    on the page) and the toolbar's icons (3:1, graphics), on a bar chart, lines and markers, as a notebook shows
    them (plotly.js's default configuration: the toolbar appears while the pointer is on the figure)."""
    _require_chromium()
    classic = _events("ms-sync-crash")
    figures = [role_timeline(classic), put_latency(classic), commit_progress(classic)]
    page = _theme_page(tmp_path / f"hover-{theme}.html", theme, figures)
    with offline_page(1000, 900, dark=theme == "dark") as browser:
        browser.goto(page.as_uri())
        browser.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(figures)}",
                                  timeout=30_000)
        hovered = browser.locator("body").evaluate(HOVER_JS)
        toolbar = []
        for plot in browser.locator(".js-plotly-plot").all():
            plot.locator(".nsewdrag").first.hover()
            browser.wait_for_timeout(400)  # the toolbar fades in
            toolbar += plot.evaluate(MODEBAR_JS)
            if os.environ.get("ROCKETLAB_SHOTS"):
                plot.screenshot(path=str(Path(os.environ["ROCKETLAB_SHOTS"]) / f"toolbar-{theme}-{len(toolbar)}.png"))
    texts = [m for m in hovered if m["what"] == "hover text"]
    assert len({m["figure"] for m in texts}) == len(figures) and len(texts) >= 6, hovered[:5]
    assert len(toolbar) >= 3 * len(figures) and all(m["shown"] for m in toolbar), toolbar[:5]
    poor = sorted({(m["what"], m["text"], round(m["ratio"], 2)) for m in hovered + toolbar
                   if m["ratio"] < (4.5 if m["what"] == "hover text" else 3.0)})
    assert not poor, poor[:20]
