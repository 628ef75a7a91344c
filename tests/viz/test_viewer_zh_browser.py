"""The cluster viewer in Simplified Chinese, in Debian's Chromium (issue 44): its controls show the words of
js/strings_zh_CN.js, drawn with real CJK glyphs (not the missing-glyph box), at a contrast of at least 4.5:1
in Light and Dark, and the keyboard reaches and drives it as in English. Two ways in: a recorded film's page
made in zh-CN (light and dark schemes: cheap), and lab 03's Chinese twin run in JupyterLab, whose kernel takes
the language from the twin's metadata (JPY_SESSION_NAME) with no setting anywhere (Dark, then Light).
``browser`` tests: skipped without Chromium or a CJK font, failed without them under CI."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from rocketlab import i18n
from rocketlab.viz import language
from rocketlab.viz.cluster_view.offline import viewer_page
from rocketlab.viz.cluster_view.widget import ClusterView
from rocketlab.viz.style import CJK_FONTS
from tests.test_i18n_fonts_browser import GLYPHS_JS
from tests.test_i18n_viz import table
from tests.test_lab_browser import _require_chromium
from tests.viz.test_viewer_access_browser import (
    assert_readable,
    dark_lab,
    switch_theme,
)
from tests.viz.test_viewer_films_browser import offline_page

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
ZH = table("strings_zh_CN.js", "STRINGS_ZH_CN")
EN = table("strings.js", "STRINGS")
HAN = re.compile(r"[\u4e00-\u9fff]")
CONTROLS = ("playLabel", "stepLabel", "backLabel", "speedLabel", "timeLabel")
"""The controls every viewer has (a live one has the network's too), by their ARIA label's key."""
LIVE_CONTROLS = ("networkLabel", "latencyLabel", "sidesLabel")


def _require_cjk_font() -> None:
    if shutil.which("fc-list") and any(f in os.popen("fc-list").read() for f in CJK_FONTS):
        return
    message = f"no CJK font of {CJK_FONTS} installed (apt-get install fonts-wqy-microhei)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def assert_chinese_controls(page, viewer, live: bool) -> None:
    """The play button, the head and every control's ARIA label in Chinese, the words drawn in a CJK font
    with real glyphs."""
    assert viewer.evaluate("e => e.closest('[lang]').lang") == "zh-CN"
    assert viewer.locator(".rl-play").inner_text().strip() in (ZH["play"], ZH["pause"])
    assert viewer.locator(".rl-step").inner_text().strip() == ZH["step"]
    labels = viewer.evaluate("e => [...e.querySelectorAll('[aria-label]')].map((x) => x.getAttribute('aria-label'))")
    for key in CONTROLS + (LIVE_CONTROLS if live else ()):
        assert ZH[key] in labels, (key, labels)
        assert EN[key] not in labels, (key, labels)
    english = [label for label in labels if label in EN.values() and re.search(r"[a-z]{3}", label)]
    assert english == [], english
    for selector in (".rl-play", ".rl-step", ".rl-head"):
        viewer.locator(selector).first.evaluate("(e) => { e.id = e.id || 'zh-' + e.className.split(' ')[0]; }")
        element_id = viewer.locator(selector).first.get_attribute("id")
        got = page.evaluate(GLYPHS_JS, f"#{element_id}")
        print(selector, got)
        assert HAN.search(got["text"]), (selector, got)
        assert any(f in got["font"] for f in CJK_FONTS), (selector, got)
        assert got["boxesAlike"] and got["inkOfBox"] > 0, (selector, got)  # the method: two missing glyphs alike
        assert got["ink"] > 20 and got["differsFromBox"] and got["differsFromOther"], (selector, got)


def assert_tab_reaches_the_chinese_controls(page, viewer, live: bool) -> None:
    """Tab alone, from the play button, reaches every control (by its Chinese ARIA label) and the nodes;
    Enter opens a node's menu (its items in Chinese, focus on the first), the arrows move in it, Escape
    closes it (as ``assert_tab_reaches_the_controls`` checks in English)."""
    viewer.locator(".rl-play").focus()
    reached = []
    for _step in range(70):
        reached.append(page.evaluate("() => document.activeElement.getAttribute('aria-label') || ''"))
        page.keyboard.press("Tab")
    for key in CONTROLS + (LIVE_CONTROLS if live else ()):
        assert any(r.startswith(ZH[key]) for r in reached), (key, reached)
    assert any(r.startswith("n0") for r in reached), reached
    if not live:
        return  # a recorded film has nothing to act on: no menus
    viewer.locator(".rl-node[data-node='n0']").focus()
    page.keyboard.press("Enter")  # a node's menu, in Chinese, keeps the arrow keys; Escape closes it
    menu = viewer.locator(".rl-menu")
    menu.wait_for(timeout=5_000)
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "menuitem"
    items = menu.locator("button").all_inner_texts()
    assert ZH["putVia"] in items and any(ZH["action:crash"] in item for item in items), items
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "menuitem"
    page.keyboard.press("Escape")
    assert menu.count() == 0


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setattr(language, "_settled", True)  # no notebook: the language set here
    i18n.set_language("zh-CN")
    yield
    i18n.set_language(None)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_chinese_film_reads_and_keeps_its_keys_in_light_and_dark(tmp_path, chinese, scheme):
    _require_chromium()
    _require_cjk_font()
    view = ClusterView.dledger(nodes=3, seed=1)
    view.run_for(3_000)
    leader = next(e["node"] for e in view.cluster.events if e["kind"] == "role" and e.get("role") == "LEADER")
    view.act("crash", node=leader)
    view.run_for(2_000)
    film = view.offline_film()
    assert film["lang"] == "zh-CN"
    path = tmp_path / "film.html"
    path.write_text(viewer_page(film, "集群查看器"), encoding="utf-8")
    with offline_page(dark=scheme == "dark") as page:
        page.goto(path.as_uri())
        page.wait_for_selector(".rl-viewer .rl-node")
        viewer = page.locator(".rl-viewer")
        assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
        viewer.focus()
        page.keyboard.press("End")
        assert_chinese_controls(page, viewer, live=False)
        viewer.locator("[data-kind='role'][data-index]").last.click()  # the why panel: Java's name, Chinese words
        why = viewer.locator(".rl-why-reason").inner_text()
        assert why.startswith("changeRoleTo") and HAN.search(why), why
        assert_readable(viewer)
        assert_tab_reaches_the_chinese_controls(page, viewer, live=False)
        assert_the_viewer_keeps_its_keys_offline(page, viewer)
        page.screenshot(path=str(tmp_path / f"zh-{scheme}.png"), full_page=True)


def assert_the_viewer_keeps_its_keys_offline(page, viewer) -> None:
    """Home, the arrows and the stop keys drive a recorded film as in English."""
    viewer.focus()
    page.keyboard.press("Home")
    start = viewer.get_attribute("data-t")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    stepped = viewer.get_attribute("data-selected")
    assert viewer.get_attribute("data-t") != start or stepped is not None
    page.keyboard.press("ArrowLeft")
    assert viewer.get_attribute("data-selected") != stepped
    page.keyboard.press("f")  # the next fault: the crash
    assert int(viewer.get_attribute("data-t")) > 0
    items = viewer.locator(".rl-event")
    assert items.count() > 0 and items.first.get_attribute("tabindex") == "0"


def lab03_twin_up_to_its_viewer(labs: Path) -> None:
    """Lab 03's Chinese twin as shipped, cut after its first viewer cell, and a role timeline of its cluster;
    its metadata says zh-CN."""
    nb = nbformat.read(ROOT / "labs" / "zh-CN" / "03_dledger_election.ipynb", as_version=4)
    assert i18n.notebook_language(nb) == "zh-CN"
    viewer = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "ClusterView.dledger(" in c.source
                  and c.source.strip().splitlines()[-1].isidentifier())
    name = nb.cells[viewer].source.strip().splitlines()[-1]
    nb.cells = [*nb.cells[:viewer + 1], nbformat.v4.new_code_cell(
        f"from rocketlab.viz import role_timeline\nrole_timeline({name}.cluster.events)")]
    nbformat.write(nb, labs / "03_dledger_election.ipynb")


def test_lab03s_chinese_twin_shows_a_chinese_viewer_in_jupyterlab_dark_and_light(tmp_path, monkeypatch):
    """Lab 03's twin run in JupyterLab with no language set anywhere (ROCKETLAB_LANG and the locale English):
    the kernel reads the twin's metadata, the viewer speaks Chinese, reads at 4.5:1 in Dark and in Light,
    and keeps its keys."""
    _require_chromium()
    _require_cjk_font()
    monkeypatch.setenv("ROCKETLAB_LANG", "en")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    labs = tmp_path / "labs"
    labs.mkdir()
    lab03_twin_up_to_its_viewer(labs)
    with dark_lab(tmp_path, labs, "03_dledger_election.ipynb") as page:
        page.wait_for_function("() => document.querySelectorAll('.rl-viewer .rl-ring').length === 1", timeout=60_000)
        page.wait_for_function("() => document.querySelector('.rl-viewer').dataset.t !== undefined", timeout=60_000)
        viewer = page.locator(".rl-viewer")
        assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        assert_chinese_controls(page, viewer, live=True)
        assert_readable(viewer)
        assert_tab_reaches_the_chinese_controls(page, viewer, live=True)
        page.wait_for_selector(".js-plotly-plot .gtitle", timeout=60_000)
        title = page.evaluate(GLYPHS_JS, ".js-plotly-plot .gtitle")
        print("figure title", title)
        assert title["text"].startswith("角色与任期") and title["differsFromBox"] and title["ink"] > 20, title
        axis = page.locator(".js-plotly-plot .xtitle").first.text_content()
        assert axis == "t（毫秒）", axis
        page.screenshot(path=str(tmp_path / "lab03-zh-dark.png"), full_page=True)
        switch_theme(page, "JupyterLab Light")
        assert_readable(viewer)
        assert_chinese_controls(page, viewer, live=True)
        page.screenshot(path=str(tmp_path / "lab03-zh-light.png"), full_page=True)
