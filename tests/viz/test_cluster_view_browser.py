"""The cluster viewer in Debian's Chromium (Playwright): the offline page (no kernel) and ClusterView inside
JupyterLab (the kernel owns the simulator). Both are ``browser`` tests: skipped without Chromium, failed
without it under CI."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from rocketlab.viz.cluster_view import ClusterView
from tests.test_lab_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROCKETLAB,
    _require_chromium,
    _run_all_cells,
    _wait_for_kernel,
    _wait_for_server,
    free_port,
)

pytestmark = pytest.mark.browser


def failover_view(seed: int = 3) -> tuple[ClusterView, str, int, str]:
    """A 5-member group: elected, two puts, the leader crashed at ``crash_ms``, a new leader elected."""
    view = ClusterView.dledger(nodes=5, seed=seed)
    while not view.cluster.leader():
        view.run_for(100)
    view.act("put")
    view.act("put")
    view.run_for(1000)
    old = view.cluster.leader()
    crash_ms = view.session.now_ms
    view.act("crash", node=old)
    while not view.cluster.leader():
        view.run_for(100)
    view.run_for(300)
    return view, old, crash_ms, view.cluster.leader()


@contextlib.contextmanager
def opened(target: Path | str, width: int = 1300, height: int = 1000):
    """Chromium showing a file or a URL: yields the page; no page error may have happened at the end."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(target.as_uri() if isinstance(target, Path) else target)
            yield page
            assert errors == []
        finally:
            browser.close()


def _scrub(page, ms: int) -> None:
    page.evaluate("""ms => { const s = document.querySelector('.rl-slider');
        s.value = String(ms); s.dispatchEvent(new Event('input')); }""", ms)


def _shown(page) -> dict:
    return page.evaluate("() => ({...document.querySelector('.rl-viewer').dataset})")


def test_the_offline_page_plays_and_scrubs_without_a_kernel(tmp_path):
    view, old, crash_ms, new = failover_view()
    page_path = view.save_html(tmp_path / "view.html", "failover")
    end = view.session.now_ms
    with opened(page_path) as page:
        page.wait_for_selector(".rl-node", timeout=10_000)
        assert page.locator(".rl-node").count() == 5
        assert not page.locator(".rl-live").is_visible()  # no kernel: no actions offered
        assert _shown(page)["end"] == str(end)
        _scrub(page, crash_ms - 1)
        shown = _shown(page)
        assert (shown["leader"], shown["t"]) == (old, str(crash_ms - 1))
        term_before = int(shown["term"])
        _scrub(page, crash_ms)
        assert page.locator(f".rl-node[data-node='{old}']").get_attribute("data-role") == "DOWN"
        assert _shown(page)["leader"] == ""
        _scrub(page, end)
        shown = _shown(page)
        assert shown["leader"] == new and int(shown["term"]) > term_before
        leader_node = page.locator(f".rl-node[data-node='{new}']")
        assert leader_node.get_attribute("data-term") == str(view.cluster.node(new).term)
        assert page.locator(".rl-log tr[data-node] td").count() > 0
        # the "why" panel explains the selected event; play moves the clock
        assert page.locator(".rl-why-reason").inner_text() != ""
        _scrub(page, 0)
        page.select_option(".rl-speed", "10")
        page.click(".rl-play")
        page.wait_for_function("() => Number(document.querySelector('.rl-viewer').dataset.t) > 500",
                               timeout=10_000)
        page.click(".rl-play")
        page.click(".rl-step")
        stepped = int(_shown(page)["t"])
        assert any(e["t"] == stepped for e in view.cluster.events)
        page.screenshot(path=str(tmp_path / "offline.png"))


def test_the_demo_report_replays_every_run_in_a_viewer(tmp_path):
    from rocketlab import cli

    assert cli.main(["demo", "--out", str(tmp_path / "demo")]) == 0
    report = tmp_path / "demo" / "report.html"
    runs = [json.loads((d / "meta.json").read_text()) for d in sorted((tmp_path / "demo").iterdir()) if d.is_dir()]
    with opened(report) as page:
        page.wait_for_function(f"() => document.querySelectorAll('.rl-viewer .rl-ring').length === {len(runs)}",
                               timeout=20_000)
        ends = page.evaluate("() => [...document.querySelectorAll('.rl-viewer')].map(v => Number(v.dataset.end))")
        assert sorted(ends) == sorted(m["end_ms"] for m in runs)
        counts = page.evaluate("() => [...document.querySelectorAll('.rl-viewer')]"
                               ".map(v => v.querySelectorAll('.rl-node').length)")
        assert sorted(counts) == sorted(len(m["nodes"]) for m in runs)


LAB_03 = Path(__file__).resolve().parents[2] / "labs" / "03_dledger_election.ipynb"


def _notebook(path: Path) -> None:
    """Lab 03 as shipped, then what its text invites a learner to do with ``view`` (run 2 s, crash the
    leader, 12 s more: the lab itself runs its numbers on a group of its own), then one empty code cell
    where the test types its questions."""
    import nbformat

    nb = nbformat.read(LAB_03, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('view.run_for(2_000)\nview.act("crash", node=view.cluster.leader())\n'
                                              "view.run_for(12_000)"))
    nb.cells.append(nbformat.v4.new_code_cell(""))
    nbformat.write(nb, path)


def _wait_until_idle(base: str, token: str, notebook: str, quiet_s: float = 3, timeout: float = 180) -> None:
    """Until the notebook's kernel has been idle for ``quiet_s`` seconds in a row (Run All finished)."""
    deadline, idle_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=5) as response:
            states = [(s.get("kernel") or {}).get("execution_state") for s in json.loads(response.read())
                      if s["path"].endswith(notebook)]
        if states == ["idle"]:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= quiet_s:
                return
        else:
            idle_since = None
        time.sleep(0.3)
    pytest.fail(f"the kernel of {notebook} did not settle within {timeout} s")


def _kernel_says(page, code: str) -> dict:
    """Type ``code`` into the notebook's last cell, run it and return the JSON it prints."""
    cell = page.locator(".jp-Notebook .jp-Cell").last
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(code)
    page.keyboard.press("Control+Enter")
    output = cell.locator(".jp-OutputArea-output")
    output.wait_for(timeout=30_000)
    page.wait_for_function("() => document.querySelector('.jp-Notebook-ExecutionIndicator')"
                           "?.dataset.status === 'idle'", timeout=30_000)
    return json.loads(output.last.inner_text().strip().splitlines()[-1])


def test_lab_03_in_jupyterlab_crashes_forks_and_agrees_with_the_kernel(tmp_path):
    """Open lab 03 in JupyterLab, run it (fast mode), then drive its cluster viewer with clicks."""
    _require_chromium()
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs / "view.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    err_log = tmp_path / "lab.err"
    with open(tmp_path / "lab.out", "w") as out, open(err_log, "w") as err:
        proc = subprocess.Popen([str(ROCKETLAB), "lab", "--dir", str(labs), "--port", str(port), "--token", token,
                                 "--no-browser"], stdout=out, stderr=err,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", "ROCKETLAB_FAST": "1"})
    try:
        _wait_for_server(proc, f"http://127.0.0.1:{port}/api/status?token={token}", err_log)
        with opened(f"http://127.0.0.1:{port}/lab/tree/view.ipynb?token={token}", 1400, 1100) as page:
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            _wait_for_kernel(f"http://127.0.0.1:{port}", token, "view.ipynb")
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            _run_all_cells(page)
            _wait_until_idle(f"http://127.0.0.1:{port}", token, "view.ipynb")
            try:
                _drive_the_widget(page, tmp_path)
            except Exception as e:
                page.screenshot(path=str(tmp_path / "failure.png"))
                pytest.fail(f"{e}\nscreenshot: {tmp_path / 'failure.png'}\nserver log:\n"
                            f"{err_log.read_text()[-2000:]}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _drive_the_widget(page, tmp_path: Path) -> None:
    """Lab 03's viewer: the learner ran 14 s with one crash (n0 at 2 s); crash the new leader by clicking,
    play until a third leader shows, compare with the kernel, then fork before the lab's crash."""
    page.wait_for_selector(".rl-viewer .rl-node", timeout=60_000)
    page.wait_for_function("() => document.querySelector('.rl-viewer').dataset.end === '14000'", timeout=30_000)
    _scrub(page, 14000)
    old = _shown(page)["leader"]
    assert old, "a leader is drawn after the lab's failover"
    old_term = int(_shown(page)["term"])
    # click the leader, crash it, play at 10x until another leader is drawn
    page.locator(f".rl-node[data-node='{old}'] .rl-node-body").click()
    page.locator(".rl-menu button[data-action='crash']").click()
    page.wait_for_function(f"() => document.querySelector(\".rl-node[data-node='{old}']\").dataset.role === 'DOWN'",
                           timeout=30_000)
    page.select_option(".rl-speed", "10")
    page.click(".rl-play")
    page.wait_for_function(f"""() => {{ const d = document.querySelector('.rl-viewer').dataset;
        return d.leader && d.leader !== '{old}'; }}""", timeout=60_000)
    page.click(".rl-play")
    new = _shown(page)["leader"]
    page.wait_for_function("() => !document.querySelector('.rl-viewer').dataset.waiting", timeout=10_000)
    end = int(_shown(page)["end"])
    _scrub(page, end)
    shown = _shown(page)
    kernel = _kernel_says(page, "import json; print(json.dumps({'leader': view.cluster.leader(), "
                                "'term': view.cluster.node(view.cluster.leader()).term, 'now': view.cluster.now_ms}))")
    assert (shown["leader"], int(shown["term"]), int(shown["end"])) == (kernel["leader"], kernel["term"], kernel["now"])
    assert new == kernel["leader"] and kernel["term"] > old_term
    # scrub back before the lab's crash and fork by timing out a follower there
    _scrub(page, 1500)
    leading = _shown(page)["leader"]
    follower = next(n for n in ("n0", "n1", "n2", "n3", "n4") if n not in (old, leading))
    page.locator(f".rl-node[data-node='{follower}'] .rl-node-body").click()
    page.locator(".rl-menu button[data-action='time out now']").click()
    page.wait_for_function("() => document.querySelector('.rl-viewer').dataset.generation === '1'", timeout=30_000)
    assert "forked history at t = 1500 ms" in page.locator(".rl-message").inner_text()
    assert page.locator(f".rl-node[data-node='{old}']").get_attribute("data-role") != "DOWN"
    code = ("print(json.dumps({'intents': [[i.at_ms, i.action, i.args] for i in view.session.intents], "
            f"'generation': view.session.generation, 'alive': view.cluster.alive({old!r})}}))")
    kernel = _kernel_says(page, code)
    assert kernel == {"intents": [[1500, "time_out", {"node": follower}]], "generation": 1, "alive": True}
    page.screenshot(path=str(tmp_path / "widget.png"))


def _log_row(page, node: str) -> dict:
    """What the log grid shows for ``node``: its tail text and, per index, the crossed-out term beside an entry."""
    return page.evaluate("""node => { const row = document.querySelector(`.rl-log tr[data-node='${node}']`);
        const heads = [...document.querySelectorAll('.rl-log tr:first-child th')].map(th => th.textContent);
        const beside = {};
        [...row.querySelectorAll('td')].forEach((td, i) => { const s = td.querySelector('span.rl-crossed');
            if (s) beside[heads[i + 1]] = s.textContent; });
        return {tail: row.querySelector('.rl-log-tail').textContent, beside}; }""", node)


def test_a_power_failure_resets_the_end_and_an_overwritten_entry_stays_crossed_out(tmp_path):
    """#251: after F's power failure its row says where its log now ends (the start of the first lost entry),
    not the end it had before. Figure 8: X (term 1 at index 2), overwritten by Y, stays crossed out beside Y
    from its truncation to the end of the film, not only the milliseconds between the cut and the append."""
    view = ClusterView.schedule("issue251", profile="dledger-0.3.1.2")
    events = view.cluster.events
    lost = next(e for e in events if e["kind"] == "fault" and e["action"] == "lost")
    node, first = lost["targets"][0], int(lost["targets"][1])
    start = next(e["pos"] for e in events if e["kind"] == "append" and e["node"] == node and e["index"] == first)
    before = max(e["pos"] + e["size"] for e in events if e["kind"] == "append" and e["node"] == node
                 and e["t"] < lost["t"])
    assert start < before
    fig8 = ClusterView.schedule("figure8", profile="dledger-0.3.1.2")
    cut = next(e for e in fig8.cluster.events if e["kind"] == "truncate")
    old_term = next(e["term"] for e in fig8.cluster.events if e["kind"] == "append" and e["node"] == cut["node"]
                    and e["index"] == cut["index"])
    with opened(view.save_html(tmp_path / "251.html", "issue251")) as page:
        page.wait_for_selector(".rl-node")
        _scrub(page, lost["t"])
        assert f"end pos {start}" in _log_row(page, node)["tail"], _log_row(page, node)
    with opened(fig8.save_html(tmp_path / "fig8.html", "figure8")) as page:
        page.wait_for_selector(".rl-node")
        for t in (cut["t"] + 20, fig8.session.now_ms):
            _scrub(page, t)
            assert _log_row(page, cut["node"])["beside"].get(str(cut["index"])) == str(old_term), t
        page.screenshot(path=str(tmp_path / "fig8-crossed.png"))
