"""The films without a kernel, in Debian's Chromium with the network off: every published page
(:data:`rocketlab.viz.cluster_view.gallery.FILMS`) opens from ``file://`` and shows its events; Figure 8 is
reached in at most 10 key presses, stop by stop; an nbconvert HTML export of lab 04, run by a kernel
first, shows the film where the lab shows its viewer. ``browser`` tests: skipped without Chromium,
failed without it under CI."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from rocketlab.viz.cluster_view.gallery import FILMS, write_films
from tests.test_lab_browser import CHROMIUM, CHROMIUM_ARGS, _require_chromium
from tests.viz.test_viewer_access_browser import assert_readable

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("ROCKETLAB_SHOTS", "")) if os.environ.get("ROCKETLAB_SHOTS") else None
MAX_PRESSES = 10


@contextlib.contextmanager
def offline_page(width: int = 1300, height: int = 1000, dark: bool = False, tolerate: tuple[str, ...] = ()):
    """A Chromium page with no network: the context is offline and any request that is not for a file,
    a blob or inline data is refused; none may be asked for (but those of ``tolerate``: the exporter's own
    scripts), and no page error may happen."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--no-proxy-server"])
        try:
            context = browser.new_context(offline=True, viewport={"width": width, "height": height},
                                          color_scheme="dark" if dark else "light")
            refused: list[str] = []

            def guard(route) -> None:
                url = route.request.url
                if url.split(":", 1)[0] in ("file", "blob", "data"):
                    route.continue_()
                else:
                    if not any(name in url for name in tolerate):
                        refused.append(url)
                    route.abort()

            context.route("**/*", guard)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.refused = refused
            yield page
            assert errors == [] and refused == []
        finally:
            browser.close()


def _shot(page, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)


def _state(viewer) -> dict:
    return viewer.evaluate("e => ({...e.dataset})")


def test_every_published_film_opens_from_a_file_with_the_network_off(tmp_path):
    _require_chromium()
    pages = write_films(tmp_path / "films")
    assert [p.name for p in pages] == [f"{row.name}.html" for row in FILMS] + ["index.html"]
    with offline_page() as page:
        page.goto((tmp_path / "films" / "index.html").as_uri())
        assert page.locator("a").count() == len(FILMS)
        for row in FILMS:
            page.goto((tmp_path / "films" / f"{row.name}.html").as_uri())
            page.wait_for_selector(".rl-viewer .rl-node", timeout=20_000)
            viewer = page.locator(".rl-viewer")
            assert _state(viewer)["end"] != "0", row.name
            viewer.focus()
            page.keyboard.press("End")
            assert page.locator(".rl-event").count() > 0, row.name
            assert page.locator(".rl-node").count() == len(json.loads(
                page.locator("script[type='application/json']").text_content())["nodes"]), row.name


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_film_reads_in_the_readers_light_or_dark_scheme(tmp_path, scheme):
    """A film page follows the reader's system scheme; its text and buttons at 4.5:1 or more either way."""
    _require_chromium()
    row = next(r for r in FILMS if r.name == "failover-controller")
    from rocketlab.viz.cluster_view.gallery import film_of
    from rocketlab.viz.cluster_view.offline import viewer_page

    path = tmp_path / "film.html"
    path.write_text(viewer_page(film_of(row), row.title), encoding="utf-8")
    with offline_page(dark=scheme == "dark") as page:
        page.goto(path.as_uri())
        page.wait_for_selector(".rl-viewer .rl-node")
        viewer = page.locator(".rl-viewer")
        viewer.focus()
        page.keyboard.press("l")  # the first leader change
        background = viewer.evaluate("e => getComputedStyle(e).backgroundColor")
        assert (background == "rgb(17, 17, 17)") == (scheme == "dark"), background
        assert_readable(viewer)
        _shot(page, f"films-controller-{scheme}.png")


def walk_figure8(page, viewer) -> list[dict]:
    """From the start, the down arrow until the first violation: the states passed, one per press."""
    viewer.focus()
    page.keyboard.press("Home")
    seen = [_state(viewer)]
    while seen[-1]["violations"] == "0" and len(seen) <= MAX_PRESSES:
        page.keyboard.press("ArrowDown")
        seen.append(_state(viewer))
    return seen


def test_figure8_in_at_most_ten_presses_each_stop_a_moment_of_the_story(tmp_path):
    _require_chromium()
    row = next(r for r in FILMS if r.name == "figure8")
    write_films_one = tmp_path / "figure8.html"
    from rocketlab.viz.cluster_view.gallery import film_of
    from rocketlab.viz.cluster_view.offline import viewer_page

    film = film_of(row)
    write_films_one.write_text(viewer_page(film, row.title), encoding="utf-8")
    first_violation = next(e for e in film["events"] if e["kind"] == "violation")
    with offline_page() as page:
        page.goto(write_films_one.as_uri())
        page.wait_for_selector(".rl-viewer .rl-node")
        viewer = page.locator(".rl-viewer")
        seen = walk_figure8(page, viewer)
        presses = len(seen)  # Home and each down arrow
        print(f"figure 8: {presses} key presses from the start to the first violation")
        assert presses <= MAX_PRESSES
        assert seen[0]["t"] == "0"
        assert [s["bookmark"] for s in seen[1:]] == ["(a)", "(b)", "(c)", "(d)"]
        assert seen[-1]["t"] == str(first_violation["t"]) and seen[-1]["violations"] == "1"
        assert "(d)" in page.locator(".rl-message").inner_text()
        assert page.locator(".rl-bookmark.rl-selected").inner_text() == "(d)"
        _shot(page, "films-figure8-d.png")
        # the letter keys: the next violation from the start in two presses, the previous commit back
        page.keyboard.press("Home")
        page.keyboard.press("x")
        assert _state(viewer)["t"] == str(first_violation["t"])
        assert "INVARIANT VIOLATED" in page.locator(".rl-why").inner_text()
        page.keyboard.press("Shift+C")
        commit = film["events"][int(_state(viewer)["selected"])]
        assert commit["kind"] == "commit" and commit["t"] < first_violation["t"]
        # step back and forth one listed event; heartbeats are not listed until their box is ticked
        at = int(_state(viewer)["selected"])
        page.keyboard.press("ArrowRight")
        after = int(_state(viewer)["selected"])
        assert after > at and film["events"][after]["kind"] != "heartbeat"
        page.keyboard.press("ArrowLeft")
        assert int(_state(viewer)["selected"]) == at
        assert page.locator(".rl-event[data-kind='heartbeat']").count() == 0
        page.locator("input[data-group='heartbeats']").check()
        page.keyboard.press("End")
        assert page.locator(".rl-event[data-kind='heartbeat']").count() > 0
        _shot(page, "films-figure8-heartbeats.png")


def _lab04_to_its_figure8_viewer(path: Path) -> None:
    nb = nbformat.read(ROOT / "labs" / "04_dledger_replication.ipynb", as_version=4)
    viewer = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "ClusterView.schedule(\"figure8\"" in c.source)
    nb.cells = [c for i, c in enumerate(nb.cells[:viewer + 1]) if c.cell_type == "markdown" or i == viewer]
    nbformat.write(nb, path)


def test_an_html_export_of_lab04_shows_the_film_where_the_lab_shows_its_viewer(tmp_path):
    _require_chromium()
    notebook = tmp_path / "lab04.ipynb"
    _lab04_to_its_figure8_viewer(notebook)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROCKETLAB_FAST": "1"}
    # run by a kernel and saved as JupyterLab saves it (no widget state: JupyterLab's default), then the
    # HTML export, with no kernel
    steps = (["--execute", "--to", "notebook", "--inplace", "--ExecutePreprocessor.timeout=300",
              "--ExecutePreprocessor.store_widget_state=False"], ["--to", "html", "--output-dir", str(tmp_path)])
    for args in steps:
        proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", *args, str(notebook)],
                              capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
    exported = tmp_path / "lab04.html"
    body = exported.read_text(encoding="utf-8")
    assert body.count("data-rocketlab-film=") == 1 and "Step through Figure 8" in body
    # nbconvert's own template asks for require.js and MathJax from a CDN: refused, and the film needs neither
    with offline_page(tolerate=("/require.js/", "/mathjax/")) as page:
        page.goto(exported.as_uri())
        page.wait_for_selector(".rl-viewer .rl-node", timeout=20_000)
        viewer = page.locator(".rl-viewer")
        assert _state(viewer)["t"] == _state(viewer)["end"]  # opens where the live view opens: the present
        seen = walk_figure8(page, viewer)
        assert len(seen) <= MAX_PRESSES and seen[-1]["violations"] == "1"
        _shot(page, "nbconvert-lab04.png")
