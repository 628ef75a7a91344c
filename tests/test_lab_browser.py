"""``rocketlab lab``: the launcher's checks (fast), and JupyterLab driven in headless Chromium (``browser``).

The browser test starts the real CLI (``rocketlab lab``, a subprocess of this venv) on a free port with a
token and a temporary notebook directory, opens a generated notebook in Debian's Chromium through
Playwright, runs all cells and checks that a plotly figure, an ipywidgets button and a pandas load of a
run directory render and respond; it leaves a screenshot in pytest's tmp dir. Needs ``/usr/bin/chromium``
(``apt-get install chromium``): skipped without it, except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rocketlab import cli, lab
from rocketlab.trace import write_run

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROCKETLAB = Path(sys.executable).with_name("rocketlab")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------------------------------------------------
# The launcher (no browser, no server)


def test_prepare_builds_the_jupyter_command(tmp_path, monkeypatch):
    labs = tmp_path / "labs"
    labs.mkdir()
    monkeypatch.setenv("JUPYTERLAB_DIR", str(tmp_path / "app"))
    port = free_port()
    launch = lab.prepare(port=port, token="t0k", labs_dir=labs)
    assert launch.argv[:3] == [sys.executable, "-m", "jupyterlab"]
    for arg in (f"--ServerApp.root_dir={labs}", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0", "--IdentityProvider.token=t0k",
                "--ServerApp.open_browser=False"):
        assert arg in launch.argv
    assert ("--allow-root" in launch.argv) == (os.geteuid() == 0)
    assert launch.url == f"http://127.0.0.1:{port}/lab?token=t0k"
    state = tmp_path / ".jupyter"
    assert launch.state_dir == state
    for key, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")):
        assert launch.env[key] == str(state / sub) and (state / sub).is_dir()
    overrides = json.loads((tmp_path / "app" / "settings" / "overrides.json").read_text())
    assert overrides[lab.NOTIFICATION_PLUGIN] == {"checkForUpdates": False, "fetchNews": "false"}
    assert len(lab.prepare(port=port, labs_dir=labs).url.split("token=")[1]) == 48  # random token


def test_no_news_overrides_keep_other_settings(tmp_path, capsys):
    settings = tmp_path / "settings"
    settings.mkdir()
    path = settings / "overrides.json"
    path.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                                lab.NOTIFICATION_PLUGIN: {"doNotDisturbMode": True}}))
    assert lab.write_no_news_overrides(settings)
    data = json.loads(path.read_text())
    assert data["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    assert data[lab.NOTIFICATION_PLUGIN] == {"doNotDisturbMode": True, "checkForUpdates": False,
                                             "fetchNews": "false"}
    path.write_text("{not json")
    assert not lab.write_no_news_overrides(settings)
    assert path.read_text() == "{not json"
    assert "leaving" in capsys.readouterr().err


def test_lab_port_in_use_exits_2_with_one_line(tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli.main(["lab", "--dir", str(tmp_path), "--port", str(port), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err == (f"rocketlab: port {port} on 127.0.0.1 is already in use (another Jupyter?); "
                   "choose another with --port\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--dir", "/no/such/labs"], "rocketlab: --dir /no/such/labs: no such directory\n"),
    (["--port", "0"], "rocketlab: --port must be between 1 and 65535, got 0\n"),
    (["--token", ""], "rocketlab: --token must be non-empty and contain no spaces\n"),
])
def test_lab_bad_arguments_exit_2(argv, message, capsys):
    assert cli.main(["lab", "--no-browser", *argv]) == 2
    assert capsys.readouterr().err == message


def test_labs_dir_defaults_to_the_repo(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert lab.find_labs_dir() == Path(lab.__file__).resolve().parent.parent / "labs"


def test_lab_url_hosts():
    assert lab.lab_url("0.0.0.0", 9000, "a b") == "http://127.0.0.1:9000/lab?token=a%20b"
    assert lab.lab_url("::1", 9000, "t") == "http://[::1]:9000/lab?token=t"


# ---------------------------------------------------------------------------------------------------------
# JupyterLab in headless Chromium


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    reason = f"{CHROMIUM} not found (apt-get install chromium); the browser test needs Debian's Chromium"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} and CI=true: install it in the CI image")
    pytest.skip(reason)


def viz_figure_available() -> bool:
    """Whether ``rocketlab.viz.cluster_graph_figure`` (networkx + plotly) exists to draw the cluster."""
    try:
        from rocketlab.viz import cluster_graph_figure  # noqa: F401
    except ImportError:
        return False
    return True


def test_missing_chromium_skips_locally_but_fails_in_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-chromium not found"):
        _require_chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: install it in the CI image"):
        _require_chromium()


def make_notebook(path: Path, run_dir: Path, *, use_viz: bool) -> None:
    """A small notebook: pandas loads a run directory, a networkx + plotly cluster figure (rocketlab.viz's
    when it exists, else drawn here), an ipywidgets button with an output."""
    import nbformat

    if use_viz:
        figure = ("from rocketlab.viz import cluster_graph_figure\n"
                  "fig = cluster_graph_figure(events)\n")
    else:
        figure = ("import networkx as nx\n"
                  "import plotly.graph_objects as go\n"
                  "g = nx.Graph([('n0', 'n1'), ('n1', 'n2'), ('n2', 'n0')])\n"
                  "pos = nx.spring_layout(g, seed=1)\n"
                  "edges = [c for a, b in g.edges for c in (pos[a], pos[b], (None, None))]\n"
                  "fig = go.Figure([\n"
                  "    go.Scatter(x=[e[0] for e in edges], y=[e[1] for e in edges], mode='lines',\n"
                  "               name='links'),\n"
                  "    go.Scatter(x=[pos[n][0] for n in g], y=[pos[n][1] for n in g], mode='markers+text',\n"
                  "               text=list(g), name='nodes', marker={'size': 24}),\n"
                  "])\n"
                  "fig.update_layout(title='rocketlab cluster', width=500, height=350)\n")
    cells = [
        nbformat.v4.new_markdown_cell("# browser smoke test"),
        nbformat.v4.new_code_cell(
            "from rocketlab.trace import load_events\n"
            f"events = load_events({str(run_dir)!r})\n"
            "print(f'loaded {len(events)} events of kinds {sorted(events.kind.unique())}')"),
        nbformat.v4.new_code_cell(figure + "fig.show()"),
        nbformat.v4.new_code_cell(
            "import ipywidgets as widgets\n"
            "button = widgets.Button(description='Crash n1')\n"
            "out = widgets.Output()\n"
            "def on_click(_):\n"
            "    with out:\n"
            "        print('clicked: crash n1')\n"
            "button.on_click(on_click)\n"
            "widgets.VBox([button, out])"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, path)


def _wait_for_server(proc: subprocess.Popen, url: str, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"rocketlab lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer {url} within {timeout} s:\n{log.read_text()[-3000:]}")


def _wait_for_kernel(base: str, token: str, notebook: str, timeout: float = 90) -> None:
    """Until the server has a session for ``notebook`` whose kernel is idle (the page opened it)."""
    deadline = time.monotonic() + timeout
    sessions: list = []
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=5) as response:
            sessions = json.loads(response.read())
        if any(s["path"].endswith(notebook) and (s.get("kernel") or {}).get("execution_state") == "idle"
               for s in sessions):
            return
        time.sleep(0.3)
    pytest.fail(f"no idle kernel for {notebook} within {timeout} s; sessions: {sessions}")


def _run_all_cells(page) -> None:
    """Run > Run All Cells, retried until an execution prompt ([*] or [n]) shows that it really started.

    If Lab asks which kernel to use (it can, when the kernel was slow to connect), accept its preferred
    choice, the notebook's python3 kernel, as a learner would.
    """
    started = ("() => [...document.querySelectorAll('.jp-InputPrompt')]"
               ".some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))")
    for _ in range(3):
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('Run All Cells'))").click()
        try:
            page.wait_for_function(started, timeout=10_000)
            return
        except Exception:  # playwright's TimeoutError: see why, then click again
            dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
            if dialog.count():
                dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            else:
                page.keyboard.press("Escape")
    pytest.fail("Run All Cells did not start execution after 3 tries")


def _check_notebook(page, events: list[dict], title: str, shot: Path) -> None:
    """After Run All: the run loads, the plot and the button render and respond; then a screenshot."""
    loaded = f"loaded {len(events)} events of kinds {sorted({e['kind'] for e in events})}"
    page.wait_for_selector(f".jp-OutputArea-output:has-text(\"{loaded}\")", timeout=60_000)

    page.wait_for_selector(".plotly .main-svg", timeout=60_000)
    assert page.locator(".plotly .gtitle").first.text_content().startswith(title)
    box = page.locator(".plotly .scatterlayer .trace .points path").first.bounding_box()
    assert box is not None
    # plotly's drag layer lies on top of the points: move the mouse there and plotly shows a hover label
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(".plotly .hoverlayer .hovertext", timeout=10_000)

    button = page.locator(".widget-button", has_text="Crash n1")
    button.wait_for(timeout=60_000)
    button.click()
    output = page.locator(".widget-output", has_text="clicked: crash n1")
    output.wait_for(timeout=60_000)
    output.scroll_into_view_if_needed()
    page.screenshot(path=str(shot))  # shows the button with its output


@pytest.mark.browser
def test_lab_in_headless_chromium(tmp_path):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    assert ROCKETLAB.exists(), f"{ROCKETLAB} missing: install the project (pip install -e .[test])"

    labs = tmp_path / "labs"
    labs.mkdir()
    events = [
        {"t": 0, "seq": 0, "node": "n0", "kind": "role", "term": 1, "role": "LEADER", "leader": "n0"},
        {"t": 5, "seq": 1, "node": "n1", "kind": "role", "term": 1, "role": "FOLLOWER", "leader": "n0"},
        {"t": 6, "seq": 2, "node": "n2", "kind": "role", "term": 1, "role": "FOLLOWER", "leader": "n0"},
        {"t": 10, "seq": 3, "node": "n0", "kind": "append", "index": 0, "term": 1, "pos": 0, "size": 64},
        {"t": 12, "seq": 4, "node": "n0", "kind": "commit", "index": 0, "pos": 0},
        {"t": 50, "seq": 5, "node": None, "kind": "fault", "action": "crash", "targets": ["n1"]},
    ]
    run = write_run(tmp_path / "tiny-run", {"seed": 1}, events)
    use_viz = viz_figure_available()
    make_notebook(labs / "smoke.ipynb", run, use_viz=use_viz)
    title = "Cluster at t=50 ms" if use_viz else "rocketlab cluster"
    port, token = free_port(), secrets.token_hex(16)
    out_log, err_log = tmp_path / "lab.out", tmp_path / "lab.err"
    with open(out_log, "w") as out, open(err_log, "w") as err:
        proc = subprocess.Popen(
            [str(ROCKETLAB), "lab", "--dir", str(labs), "--port", str(port), "--token", token,
             "--no-browser"],
            stdout=out, stderr=err, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_for_server(proc, f"http://127.0.0.1:{port}/api/status?token={token}", err_log)
        assert f"rocketlab lab: open http://127.0.0.1:{port}/lab?token={token}" in out_log.read_text()
        assert (tmp_path / ".jupyter" / "runtime").is_dir()  # Jupyter's state stays beside the labs dir
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{port}/lab/tree/smoke.ipynb?token={token}")
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
                _wait_for_kernel(f"http://127.0.0.1:{port}", token, "smoke.ipynb")
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
                _run_all_cells(page)
                try:
                    _check_notebook(page, events, title, tmp_path / "lab.png")
                except Exception as e:
                    page.screenshot(path=str(tmp_path / "failure.png"))
                    dialogs = [d.inner_text() for d in page.locator(".jp-Dialog").all()]
                    pytest.fail(f"{e}\nopen dialogs: {dialogs}\nscreenshot: {tmp_path / 'failure.png'}\n"
                                f"server log:\n{err_log.read_text()[-2000:]}")
                assert (tmp_path / "lab.png").stat().st_size > 10_000
                assert errors == []
            finally:
                browser.close()
    finally:
        proc.terminate()  # `rocketlab lab` exec'd into the server: this PID is the server
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
