"""Chinese that renders: the figures' and the cluster viewer's font stacks name fonts with Simplified Chinese,
and in headless Chromium a Chinese label of a figure and of the viewer is drawn with real glyphs, not the
missing-glyph box. A ``browser`` test: skipped without Chromium, failed without it (or without a CJK font)
under CI, whose .ci/run installs fonts-wqy-microhei.

How a glyph is told from a box: the label's own computed font is used on a canvas to draw a Chinese character,
another Chinese character and two unassigned code points (U+0378, U+0379). The two unassigned ones are the same
box (that is what a missing glyph looks like); a Chinese character drawn with a font that has it differs from the
box and from the other character."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from rocketlab.viz.style import CJK_FONTS, FONT_FAMILY, base_layout
from tests.test_lab_browser import _require_chromium

ROOT = Path(__file__).resolve().parents[1]
VIEWER_CSS = ROOT / "rocketlab" / "viz" / "cluster_view" / "viewer.css"
TITLE = "选主：任期与投票"
GLYPHS_JS = """(selector) => {
  const el = document.querySelector(selector);
  const style = getComputedStyle(el);
  const font = `32px ${style.fontFamily}`;
  const draw = (text) => {
    const canvas = document.createElement('canvas');
    canvas.width = 64; canvas.height = 48;
    const ctx = canvas.getContext('2d');
    ctx.font = font; ctx.fillStyle = '#000'; ctx.textBaseline = 'top';
    ctx.fillText(text, 4, 4);
    return Array.from(ctx.getImageData(0, 0, 64, 48).data.filter((_, i) => i % 4 === 3)).join(',');
  };
  const ink = (pixels) => pixels.split(',').filter(v => v !== '0').length;
  const main = draw('主'), other = draw('复'), box = draw('\\u0378');
  return {font: style.fontFamily, text: el.textContent, ink: ink(main), inkOfBox: ink(box),
          boxesAlike: box === draw('\\u0379'), differsFromBox: main !== box, differsFromOther: main !== other};
}"""


def test_the_figures_and_the_viewer_name_the_same_cjk_fallbacks():
    css = re.sub(r"\s+", " ", VIEWER_CSS.read_text(encoding="utf-8"))
    viewer_stack = re.search(r"\.rl-viewer \{[^}]*?font: 12px ([^;]+);", css).group(1)
    def names(stack: str) -> list[str]:
        return [name.strip().strip("'\"") for name in stack.split(",")]

    assert names(viewer_stack) == names(FONT_FAMILY)
    for font in CJK_FONTS:
        assert f'"{font}"' in FONT_FAMILY
    assert FONT_FAMILY.endswith("sans-serif")


@pytest.mark.browser
def test_a_chinese_figure_title_and_viewer_label_render_real_glyphs(tmp_path):
    _require_chromium()
    if not shutil.which("fc-list") or not any(f in os.popen("fc-list").read() for f in CJK_FONTS):
        message = f"no CJK font of {CJK_FONTS} installed (apt-get install fonts-wqy-microhei)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright  # lazy: the browser driver

    fig = base_layout(go.Figure(go.Scatter(x=[0, 1], y=[1, 2], name="已提交")), TITLE, 300)
    figure = pio.to_html(fig, include_plotlyjs=True, full_html=False)
    page_file = tmp_path / "cjk.html"
    page_file.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<style>{VIEWER_CSS.read_text(encoding='utf-8')}</style></head><body>"
        f"<div class='rl-viewer'><div class='rl-head' id='viewer-label'>集群查看器：主从切换</div></div>"
        f"{figure}</body></html>", encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(page_file.as_uri())
        page.wait_for_selector(".plotly .gtitle")
        results = {name: page.evaluate(GLYPHS_JS, selector)
                   for name, selector in (("figure title", ".plotly .gtitle"), ("viewer label", "#viewer-label"))}
        page.screenshot(path=str(tmp_path / "cjk.png"))
        browser.close()
    for name, got in results.items():
        print(name, got)
        assert any(f in got["font"] for f in CJK_FONTS), (name, got)
        assert got["boxesAlike"] and got["inkOfBox"] > 0, (name, got)  # the method: two missing glyphs look alike
        assert got["ink"] > 20 and got["differsFromBox"] and got["differsFromOther"], (name, got)
    assert results["figure title"]["text"] == TITLE
