"""Every figure of every lab (00-07) in JupyterLab's Light and Dark theme: the plotly figures the labs' cells
show (role timelines, commit progress, votes, vote graphs, latency, Figure 16 CDFs, epochs, Spark charts), kept
from the labs' fast runs (:mod:`tests.lab_figures`), rendered on one page per theme with that theme's variables
and :func:`rocketlab.viz.style.theme_css`. Measured in the page: every text at 4.5:1 on what it sits on; every
bar, line and marker at 3:1 on the plot (or its outline at 3:1), every pattern's stripes at 3:1 on the bar
they cross; and, simulated for protanopia, deuteranopia and tritanopia (Machado et al. 2009, the matrices of
``test_palette``) on the rendered colours, two series of one figure either stay apart (CIE76 >= 12) or differ
by a second cue (pattern, dash, marker symbol, a label of their own). A ``browser`` test: skipped without
Chromium, failed without it under CI. ``ROCKETLAB_SHOTS=dir`` saves each page's screenshot."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import plotly.io as pio
import pytest

from rocketlab.viz.cluster_view.gallery import FILMS, film_of
from rocketlab.viz.cluster_view.offline import viewer_assets, viewer_div
from rocketlab.viz.style import theme_css
from tests.lab_figures import LABS, lab_figures
from tests.test_lab_browser import _require_chromium
from tests.viz.test_palette import MACHADO, delta_e
from tests.viz.test_viewer_access_browser import CONTRAST_JS, FIGURE_CONTRAST_JS
from tests.viz.test_viewer_films_browser import offline_page

pytestmark = pytest.mark.browser
THEMES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"  # JupyterLab's own
NOTEBOOKS = ALL = sorted(p.name for p in LABS.glob("*.ipynb"))
VIEWERS = ("async-master-crash", "failover-dledger", "figure8")  # the runs labs 01, 03 and 04 show in a live viewer
APART = 12.0  # CIE76: two series this far apart under a deficiency are told apart by colour alone

GRAPHICS_JS = """root => {
  const parse = (s) => (String(s).match(/[\\d.]+/g) || []).map(Number);
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (c, a, bg) => c.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a));
  const page = parse(getComputedStyle(document.body).backgroundColor).slice(0, 3);
  const num = (v, d) => (v === '' || v === undefined || Number.isNaN(Number(v)) ? d : Number(v));
  const hex = (c) => '#' + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  const out = [];
  root.querySelectorAll('.js-plotly-plot').forEach((plot) => {
    const figure = plot.closest('[data-figure]').dataset.figure;
    const bgRect = plot.querySelector('.bglayer rect.bg');
    const pb = bgRect ? parse(getComputedStyle(bgRect).fill) : [];
    const bg = pb.length >= 3 ? over(pb, num(getComputedStyle(bgRect).fillOpacity, 1) * (pb.length > 3 ? pb[3] : 1), page) : page;
    plot.querySelectorAll('.cartesianlayer g.trace, .polarlayer g.trace').forEach((trace, t) => {
      const traceOpacity = num(getComputedStyle(trace).opacity, 1);
      const item = (el, kind, cue) => {
        const s = getComputedStyle(el);
        const fill = parse(s.fill), stroke = parse(s.stroke);
        const sw = parseFloat(s.strokeWidth) || 0;
        const so = num(s.strokeOpacity, 1) * traceOpacity * (stroke.length > 3 ? stroke[3] : 1);
        let color = null, r = 0, edge = 0, cueOf = cue;
        if (kind === 'line') { if (stroke.length < 3 || sw === 0) return; color = over(stroke, so, bg); r = ratio(color, bg); }
        else {
          if (String(s.fill).startsWith('url(')) {  // a patterned bar: its colour is the pattern's ground
            const pat = document.getElementById(String(s.fill).replace(/^url\\(["']?#?|["']?\\)$/g, ''));
            const rect = pat && pat.querySelector('rect'); const stripes = pat && pat.querySelector('path');
            if (!rect) return;
            fill.splice(0, fill.length, ...parse(getComputedStyle(rect).fill));
            cueOf = cue + 'pattern:' + (stripes ? (stripes.getAttribute('d') || '').slice(0, 16) : '');
          }
          if (fill.length < 3) return;
          const fo = num(s.fillOpacity, 1) * traceOpacity * (fill.length > 3 ? fill[3] : 1);
          if (fo === 0) return;
          color = over(fill, fo, bg); r = ratio(color, bg);
          if (stroke.length >= 3 && sw >= 1 && so > 0) edge = ratio(over(stroke, so, bg), bg);
        }
        out.push({ figure, trace: t, kind, color: hex(color), ratio: r, edge, cue: kind === 'line' ? cue : cueOf });
      };
      const text = trace.querySelectorAll('text').length > 0 ? 'label' : '';
      trace.querySelectorAll('path.js-line').forEach((el) => item(el, 'line', (getComputedStyle(el).strokeDasharray || '') + text));
      trace.querySelectorAll('.points path.point').forEach((el) => item(el, 'marker', (el.getAttribute('d') || '').slice(0, 12) + text));
      trace.querySelectorAll('.point > path, g.point path').forEach((el) => {
        if (!el.closest('.points') || el.closest('.bars')) item(el, 'bar', text);
      });
    });
    plot.querySelectorAll('defs pattern').forEach((pat) => {
      const rect = pat.querySelector('rect'); const path = pat.querySelector('path');
      if (!rect || !path) return;
      const base = parse(getComputedStyle(rect).fill); const ps = getComputedStyle(path);
      const stripe = parse(ps.stroke !== 'none' && parse(ps.stroke).length >= 3 ? ps.stroke : ps.fill);
      if (base.length < 3 || stripe.length < 3) return;
      const a = num(ps.strokeOpacity, 1) * num(ps.opacity, 1) * num(getComputedStyle(rect).opacity, 1);
      out.push({ figure, trace: -1, kind: 'pattern', color: hex(stripe), on: hex(base), ratio: ratio(over(stripe, a, base), base), edge: 0, cue: '' });
    });
  });
  return out;
}"""


def _figures() -> list[tuple[str, dict]]:
    return [(f"{name[:2]} cell {f['cell']}", f["figure"]) for name in NOTEBOOKS for f in lab_figures(name)]


def _viewers() -> str:
    rows = [row for row in FILMS if row.name in VIEWERS]
    return viewer_assets() + "<div id='viewers'>" + "".join(f"<section data-figure='viewer {row.name}'>{viewer_div(film_of(row), f'viewer-{i}')}"
                                     "</section>" for i, row in enumerate(rows)) + "</div>"


def _page(tmp_path: Path, theme: str, figures: list[tuple[str, dict]], viewers: str) -> Path:
    css = (THEMES / f"theme-{theme}-extension" / "index.css").read_text(encoding="utf-8")
    html = [pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False, validate=False, default_width="960px")
            for i, (_, fig) in enumerate(figures)]
    parts = [f"<section data-figure='{where}'><p style='color: var(--jp-content-font-color1)'>lab {where}</p>{h}</section>"
             for (where, _), h in zip(figures, html, strict=True)]
    page = tmp_path / f"lab-figures-{theme}.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style><style>{theme_css()}"
                    f"</style></head><body data-jp-theme-light='{str(theme == 'light').lower()}' style='background: "
                    f"var(--jp-layout-color0); margin: 0'>{''.join(parts)}{viewers}</body></html>", encoding="utf-8")
    return page


def _confusable(items: list[dict]) -> list[tuple]:
    """Series of one figure a deficiency merges (CIE76 < APART) that no second cue tells apart."""
    colors: dict[tuple[str, int], str] = {}
    cues: dict[tuple[str, int], set[str]] = {}
    for m in items:
        if m["kind"] != "pattern" and m["trace"] >= 0:
            colors.setdefault((m["figure"], m["trace"]), m["color"])
            cues.setdefault((m["figure"], m["trace"]), set()).add(m["kind"] + ":" + m["cue"])
    series = {key: (color, "|".join(sorted(cues[key]))) for key, color in colors.items()}
    poor = []
    for (fa, ta), (fb, tb) in itertools.combinations(series, 2):
        (ca, cue_a), (cb, cue_b) = series[fa, ta], series[fb, tb]
        if fa != fb or ca == cb or cue_a != cue_b:
            continue
        for deficiency in MACHADO:
            if delta_e(ca, cb, deficiency) < APART and delta_e(ca, cb) >= APART:
                poor.append((fa, ca, cb, deficiency, round(delta_e(ca, cb, deficiency), 1)))
    return poor


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_lab_figure_reads_in_both_themes(tmp_path, theme):
    _require_chromium()
    figures, viewers = _figures(), _viewers()
    labs = {where[:2] for where, _ in figures}
    assert {"00", "01", "03", "04", "06", "07"} <= labs or NOTEBOOKS != ALL, labs  # the labs that draw figures
    with offline_page(1000, 900, dark=theme == "dark") as browser:
        browser.goto(_page(tmp_path, theme, figures, viewers).as_uri())
        browser.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= "
                                  f"{len(figures)} && document.querySelectorAll('.rl-viewer .rl-node').length > 0",
                                  timeout=60_000)
        for i in range(len(VIEWERS)):  # each run at its end: faults, violations and the "test failed" marks shown
            browser.locator(".rl-viewer").nth(i).focus()
            browser.keyboard.press("End")
        browser.wait_for_timeout(500)
        texts = browser.locator("body").evaluate(FIGURE_CONTRAST_JS) + browser.locator("#viewers").evaluate(CONTRAST_JS)
        graphics = browser.locator("body").evaluate(GRAPHICS_JS)
        if os.environ.get("ROCKETLAB_SHOTS"):
            browser.screenshot(path=str(Path(os.environ["ROCKETLAB_SHOTS"]) / f"lab-figures-{theme}.png"), full_page=True)
    print(f"{len(figures)} figures, {len(texts)} texts ({sum(m['what'] != 'figure' for m in texts)} of the viewers), "
          f"{len(graphics)} marks on the {theme} page")
    assert len(texts) > 20 * len(figures) // 2 and len(graphics) > len(figures)
    viewer_marks = sum(m["what"] != "figure" for m in texts)
    assert viewer_marks > 10 * len(VIEWERS), f"the viewers' marks were not measured: {viewer_marks}"
    poor_text = sorted({(m["what"], m["text"], round(m["ratio"], 2)) for m in texts if m["ratio"] < 4.5})
    poor_marks = sorted({(m["figure"], m["kind"], m["color"], m.get("on", ""), round(m["ratio"], 2)) for m in graphics
                         if m["ratio"] < 3 and m["edge"] < 3})
    merged = sorted(set(_confusable(graphics)))
    assert not (poor_text or poor_marks or merged), (poor_text[:20], poor_marks[:20], merged[:20])
