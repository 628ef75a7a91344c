"""The viewer for every learner, in JupyterLab Dark (Playwright + Debian's Chromium): a grader's replay
opened at the failing moment and scrubbed, Figure 8 stepped to the loss, the contrast of the viewer's
text and buttons measured in the page (WCAG, at least 4.5:1), and the controls reached with Tab alone.
``browser`` tests: skipped without Chromium, failed without it under CI."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from tests.test_lab_browser import (
    ROCKETLAB,
    _require_chromium,
    _run_all_cells,
    _wait_for_kernel,
    _wait_for_server,
    free_port,
)
from tests.viz.test_cluster_view_browser import _wait_until_idle, opened

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

BROKEN = "\n\ndef decide_compare(*args, **kwargs):\n    raise ValueError('not yet')\n"

CONTRAST_JS = """root => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0.5) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const out = [];
  const pick = (sel, colorOf) => root.querySelectorAll(sel).forEach((el) => {
    if (!el.getClientRects().length) return;
    const bg = background(el);
    const c = parse(colorOf(getComputedStyle(el)));
    const a = c.length > 3 ? c[3] : 1;  // a translucent colour is seen blended with what is behind it
    const fg = [0, 1, 2].map((i) => a * c[i] + (1 - a) * bg[i]);
    out.push({ what: sel, text: (el.textContent || '').slice(0, 30), ratio: ratio(fg, bg) });
  });
  pick('.rl-head, .rl-clock, .rl-label, .rl-message, .rl-why-text, .rl-why-reason, .rl-event, .rl-log th', (s) => s.color);
  pick('button, select, input.rl-latency, input.rl-sides', (s) => s.color);
  pick('.rl-node-info, .rl-network, .rl-violation', (s) => s.fill);
  return out;
}"""


# a plotly figure's texts on the page (the term labels inside bars excluded: tests/viz/test_palette.py
# holds them to their fill)
FIGURE_TEXT = "root => [...root.querySelectorAll('.js-plotly-plot .main-svg text')].filter((t) => " \
    "t.textContent.trim() && !t.closest('.bartext, .hovertext'))"
FIGURE_CONTRAST_JS = CONTRAST_JS.replace("const out = [];", "const out = []; const texts = (" + FIGURE_TEXT + ")(root);") \
    .split("  pick(")[0] + """  texts.forEach((el) => {  // an annotation's words sit in its box when the box is opaque enough
    const box = el.closest('.annotation') && el.closest('.annotation').querySelector('rect.bg');
    const boxFill = box ? parse(getComputedStyle(box).fill) : null;
    const boxed = boxFill && Number(getComputedStyle(box).fillOpacity) > 0.5 && boxFill.length >= 3;
    const r = el.getBoundingClientRect(); const cx = r.left + r.width / 2; const cy = r.top + r.height / 2;
    const under = [...el.closest('.js-plotly-plot').querySelectorAll('path.point')].find((p) => {
      const b = p.getBoundingClientRect(); return b.width > r.height && cx > b.left && cx < b.right && cy > b.top && cy < b.bottom; });
    const marker = under ? parse(getComputedStyle(under).fill) : null;  // words on a marker: on its fill
    const bg = boxed ? boxFill.slice(0, 3) : marker && marker.length >= 3 ? marker.slice(0, 3) : background(el);
    const c = parse(getComputedStyle(el).fill);
    out.push({ what: 'figure', text: el.textContent.slice(0, 30), ratio: ratio(c.slice(0, 3), bg) });
  });
  return out;
}"""


def assert_figure_text_readable(page) -> None:
    """Every text of the notebook's plotly figures (axes, titles, legend, fault and violation labels) at
    4.5:1 or more on the page, measured in the page."""
    measured = page.locator(".jp-Notebook").evaluate(FIGURE_CONTRAST_JS)
    assert len(measured) > 10 and any(m["text"].startswith("first violation") for m in measured), measured[:5]
    assert any(m["text"].startswith(("ACCEPT", "r1 ", "REJECT", "no answer")) for m in measured), measured  # votes
    poor = [m for m in measured if m["ratio"] < 4.5]
    assert not poor, poor[:6]


def _dark_settings(state: Path) -> None:
    """User settings that open JupyterLab in its Dark theme (as a learner who chose it)."""
    themes = state / "settings" / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    themes.parent.mkdir(parents=True, exist_ok=True)
    themes.write_text(json.dumps({"theme": "JupyterLab Dark"}))


def _notebook(labs: Path) -> None:
    source = (ROOT / "labs" / "exercises" / "lab04_dledger_replication.py").read_text(encoding="utf-8")
    (labs / "broken_lab04.py").write_text(source + BROKEN, encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [  # Figure 8 first: replay() leaves the learner's (broken) decide_compare plugged in
        nbformat.v4.new_code_cell("from rocketlab.viz.cluster_view import ClusterView\n"
                                  "figure8 = ClusterView.schedule('figure8', profile='dledger-0.3.1.2')\nfigure8"),
        nbformat.v4.new_code_cell("from rocketlab.grading import replay\nfrom rocketlab.viz import ClusterView\n"
                                  "graded = ClusterView(replay('lab04.decide_compare/backup', seed=0, "
                                  "submission='broken_lab04.py'))\ngraded"),
        nbformat.v4.new_code_cell("import json\nfrom rocketlab import plugs\nplugs.clear()  # the kit's decide_compare again\n"
                                  "loss = next(e for e in figure8.cluster.events if e['kind'] == 'violation')\n"
                                  "print(json.dumps({'failed_at': graded.cluster.failure['t'], 'loss': loss['t'], "
                                  "'latency': str(figure8.cluster.model.latency)}))"),
        nbformat.v4.new_code_cell("from rocketlab.viz import role_timeline\nrole_timeline(figure8.cluster.events)"),
        nbformat.v4.new_code_cell("from rocketlab.viz import vote_graph_figure\nvote_graph_figure(figure8.cluster.events, 4)"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, labs / "viewer.ipynb")


@contextmanager
def dark_lab(tmp_path: Path, labs: Path, notebook: str):
    """JupyterLab Dark serving ``labs`` (``rocketlab lab``), ``notebook`` opened and Run All done: yields
    the page; a failure inside saves a screenshot and shows the server's log."""
    _require_chromium()
    _dark_settings(tmp_path / ".jupyter")
    port, token = free_port(), secrets.token_hex(16)
    err_log = tmp_path / "lab.err"
    with open(tmp_path / "lab.out", "w") as out, open(err_log, "w") as err:
        proc = subprocess.Popen([str(ROCKETLAB), "lab", "--dir", str(labs), "--port", str(port), "--token", token,
                                 "--no-browser"], stdout=out, stderr=err,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=labs)
    try:
        _wait_for_server(proc, f"http://127.0.0.1:{port}/api/status?token={token}", err_log)
        with opened(f"http://127.0.0.1:{port}/lab/tree/{notebook}?token={token}", 1400, 1400) as page:
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            _wait_for_kernel(f"http://127.0.0.1:{port}", token, notebook)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            _run_all_cells(page)
            _wait_until_idle(f"http://127.0.0.1:{port}", token, notebook, timeout=300)
            try:
                yield page
            except Exception as e:
                page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
                pytest.fail(f"{e}\nscreenshot: {tmp_path / 'failure.png'}\nserver log:\n{err_log.read_text()[-2000:]}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_the_viewer_in_jupyterlab_dark_for_every_learner(tmp_path):
    _require_chromium()
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs)
    with dark_lab(tmp_path, labs, "viewer.ipynb") as page:
        _check(page, tmp_path)


def lab03_up_to_its_viewer(labs: Path) -> int:
    """Lab 03 as shipped, cut after its first viewer cell (the one that shows ``ClusterView.dledger(...)``):
    written to ``labs``; returns how many cells were kept."""
    nb = nbformat.read(ROOT / "labs" / "03_dledger_election.ipynb", as_version=4)
    viewer = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "ClusterView.dledger(" in c.source
                  and c.source.strip().splitlines()[-1].isidentifier())
    nb.cells = nb.cells[:viewer + 1]
    nbformat.write(nb, labs / "03_dledger_election.ipynb")
    return len(nb.cells)


def test_lab03s_viewer_in_jupyterlab_dark_reads_and_tabs(tmp_path):
    """Lab 03 itself, its cells up to and including the viewer run in JupyterLab Dark: the viewer's text
    and buttons have a contrast of at least 4.5:1, and Tab alone reaches its controls, nodes and links."""
    _require_chromium()
    labs = tmp_path / "labs"
    labs.mkdir()
    kept = lab03_up_to_its_viewer(labs)
    assert kept >= 3
    with dark_lab(tmp_path, labs, "03_dledger_election.ipynb") as page:
        assert page.evaluate("() => document.body.dataset.jpThemeLight") == "false", "JupyterLab Dark is on"
        page.wait_for_function("() => document.querySelectorAll('.rl-viewer .rl-ring').length === 1", timeout=60_000)
        viewer = page.locator(".rl-viewer")
        assert viewer.count() == 1
        assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        assert_readable(viewer)
        assert_tab_reaches_the_controls(page, viewer)
        page.screenshot(path=str(tmp_path / "lab03-dark.png"), full_page=True)


def assert_readable(viewer, marks: bool = False) -> None:
    """Every text and button of ``viewer`` at a contrast of at least 4.5:1 (WCAG AA), measured in the page
    (``marks``: its violation and failure marks are shown, and measured too)."""
    measured = viewer.evaluate(CONTRAST_JS)
    assert len(measured) > 20
    assert not marks or any(m["what"].endswith(".rl-violation") for m in measured)
    poor = [m for m in measured if m["ratio"] < 4.5]
    assert not poor, poor[:5]


def assert_tab_reaches_the_controls(page, viewer) -> None:
    """Tab alone, from the play button, reaches every control, the nodes and the links; Enter opens a
    node's menu (focus on its first item), Escape closes it."""
    viewer.locator(".rl-play").focus()
    reached = []
    for _ in range(70):
        reached.append(page.evaluate("() => { const e = document.activeElement; return (e.getAttribute('aria-label') "
                                     "|| e.className.baseVal || e.className || e.tagName) + ''; }"))
        page.keyboard.press("Tab")
    joined = " / ".join(reached)
    for label in ("play or pause", "step to the next event", "playback speed", "virtual time (ms)", "partition sides",
                  "network mode", "latency"):
        assert label in joined, joined
    assert any(r.startswith("n0, ") for r in reached) and any(r.startswith("link n0 to n1") for r in reached), joined
    last_node = max(i for i, r in enumerate(reached) if r.startswith("n") and ", " in r and not r.startswith("network"))
    assert last_node < min(i for i, r in enumerate(reached) if r.startswith("link ")), joined  # every node first
    viewer.locator(".rl-node[data-node='n0']").focus()
    page.keyboard.press("Enter")
    menu = viewer.locator(".rl-menu")
    menu.wait_for(timeout=5_000)
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "menuitem"
    page.keyboard.press("Escape")
    assert menu.count() == 0


def _shot(page, viewer, name: str) -> None:
    """A screenshot of ``viewer`` into $ROCKETLAB_SHOTS, when set (to look at what the tests saw)."""
    if os.environ.get("ROCKETLAB_SHOTS"):
        Path(os.environ["ROCKETLAB_SHOTS"]).mkdir(parents=True, exist_ok=True)
        viewer.screenshot(path=str(Path(os.environ["ROCKETLAB_SHOTS"]) / name))


def switch_theme(page, theme: str) -> None:
    """Settings > Theme > ``theme``, as a learner does; until the page says it is on."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('Theme'))").hover()
    page.locator(f".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('{theme}'))").click()
    light = "true" if "Light" in theme else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    page.wait_for_timeout(500)  # the theme's CSS applied


ACTIVE_CELL = ("() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
               ".findIndex((c) => c.classList.contains('jp-mod-active'))")
FOCUS = """() => { const e = document.activeElement;
  return { viewer: !!e.closest('.rl-viewer'), menu: !!e.closest('.rl-menu'), role: e.getAttribute('role'),
           node: e.getAttribute('data-node'), cls: (e.className.baseVal !== undefined ? e.className.baseVal : e.className) }; }"""


def assert_the_viewer_keeps_its_keys(page, viewer, loss_ms: int | None) -> None:
    """Clicked, the viewer takes its keys (JupyterLab's active cell stays): Home and the down arrow reach
    the first violation (``loss_ms``) in at most 10 presses; left / right step; a node's menu keeps the
    arrow keys and Escape closes it; every event of the list is focusable and Enter selects it."""
    viewer.locator(".rl-head").click()
    assert page.evaluate(FOCUS)["viewer"], page.evaluate(FOCUS)
    cell = page.evaluate(ACTIVE_CELL)
    page.keyboard.press("Home")
    presses = 1
    if loss_ms is not None:
        while viewer.get_attribute("data-violations") == "0" and presses <= 10:
            page.keyboard.press("ArrowDown")
            presses += 1
        assert presses <= 10 and viewer.get_attribute("data-t") == str(loss_ms), presses
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    stepped = viewer.get_attribute("data-selected")
    page.keyboard.press("ArrowLeft")
    assert viewer.get_attribute("data-selected") != stepped
    assert page.evaluate(ACTIVE_CELL) == cell and page.evaluate(FOCUS)["viewer"], "an arrow key left the viewer"
    viewer.locator(".rl-node[data-node='n0']").focus()
    page.keyboard.press("Enter")
    viewer.locator(".rl-menu").wait_for(timeout=5_000)
    for key in ("ArrowDown", "ArrowDown", "ArrowDown", "ArrowUp"):
        page.keyboard.press(key)
        where = page.evaluate(FOCUS)
        assert where["menu"] and where["role"] == "menuitem", (key, where)
    page.keyboard.press("Escape")
    assert viewer.locator(".rl-menu").count() == 0
    assert page.evaluate(FOCUS)["node"] == "n0" and page.evaluate(ACTIVE_CELL) == cell
    items = viewer.locator(".rl-event")
    assert items.count() > 0 and all(items.nth(i).get_attribute("tabindex") == "0" for i in range(items.count()))
    items.first.focus()
    index = items.first.get_attribute("data-index")
    page.keyboard.press("Enter")
    assert viewer.get_attribute("data-selected") == index and page.evaluate(ACTIVE_CELL) == cell


def _check(page, tmp_path: Path) -> None:
    assert page.evaluate("() => document.body.dataset.jpThemeLight") == "false", "JupyterLab Dark is on"
    page.wait_for_function("() => document.querySelectorAll('.rl-viewer .rl-ring').length === 2", timeout=60_000)
    page.wait_for_function("() => [...document.querySelectorAll('.rl-viewer')].every((v) => v.dataset.t !== undefined)",
                           timeout=60_000)  # each has its film
    said = json.loads(page.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output").last.inner_text()
                      .strip().splitlines()[-1])
    figure8, graded = page.locator(".rl-viewer").nth(0), page.locator(".rl-viewer").nth(1)
    # the grader's replay opens where the test failed, the failure marked; scrubbing works
    assert graded.get_attribute("data-t") == str(said["failed_at"])
    assert "where the test failed" in graded.locator(".rl-message").inner_text()
    assert graded.locator(".rl-mark").count() == 1
    graded.locator(".rl-slider").evaluate("(s, ms) => { s.value = String(ms); s.dispatchEvent(new Event('input')); }",
                                          said["failed_at"] // 2)
    assert graded.get_attribute("data-t") == str(said["failed_at"] // 2) and graded.locator(".rl-mark").count() == 0
    # Figure 8: from just before the loss, step until the violation is the selected event
    figure8.locator(".rl-slider").evaluate("(s, ms) => { s.value = String(ms); s.dispatchEvent(new Event('input')); }",
                                           said["loss"] - 30)
    for _ in range(300):
        if figure8.locator(".rl-event.rl-selected.rl-bad").count():
            break
        figure8.locator(".rl-step").click()
    else:
        raise AssertionError("stepping never reached the violation")
    assert figure8.get_attribute("data-t") == str(said["loss"])
    why = figure8.locator(".rl-why").inner_text()
    assert "INVARIANT VIOLATED" in why and "leader_completeness" in why, why
    # contrast of the viewer's text, buttons and marks (the failure, the violations), measured in the page
    graded.locator(".rl-slider").evaluate("(s, ms) => { s.value = String(ms); s.dispatchEvent(new Event('input')); }",
                                          said["failed_at"])
    assert graded.locator(".rl-mark").count() == 1 and figure8.locator(".rl-violation").count() == 1
    for viewer in (graded, figure8):
        assert_readable(viewer, marks=True)
    assert_tab_reaches_the_controls(page, figure8)
    # the latency field shows the network's own; the replay code panel follows a fork
    assert_the_viewer_keeps_its_keys(page, figure8, said["loss"])
    assert_figure_text_readable(page)
    assert figure8.locator(".rl-latency").input_value() == said["latency"]
    figure8.locator(".rl-code-btn").click()
    code = figure8.locator(".rl-code")
    page.wait_for_function("el => el.textContent.includes('run_to(figure8_cluster(')", arg=code.element_handle(),
                           timeout=30_000)
    alive = figure8.locator(".rl-node[data-alive='1']").first.get_attribute("data-node")
    figure8.locator(f".rl-node[data-node='{alive}'] .rl-node-body").click()
    figure8.locator(".rl-menu button[data-action='crash']").click()
    page.wait_for_function(f"el => el.textContent.includes(\"cluster.crash('{alive}')\")", arg=code.element_handle(),
                           timeout=60_000)
    assert figure8.get_attribute("data-generation") == "1"
    page.screenshot(path=str(tmp_path / "dark.png"), full_page=True)
    _shot(page, figure8, "lab-dark-figure8.png")
    _shot(page, page.locator(".js-plotly-plot").first, "lab-dark-roles.png")
    # the same learner switches to JupyterLab Light: the viewers read, and keep their keys
    switch_theme(page, "JupyterLab Light")
    for viewer in (graded, figure8):
        assert_readable(viewer)
    assert_figure_text_readable(page)
    assert_the_viewer_keeps_its_keys(page, graded, None)
    _shot(page, graded, "lab-light-graded.png")
    _shot(page, figure8, "lab-light-figure8.png")
    _shot(page, page.locator(".js-plotly-plot").first, "lab-light-roles.png")
