"""``rocketlab lab`` in the workspace's language: the setting JupyterLab's translation extension reads, written
into the workspace's Lab settings, and the real server (and, with Chromium, the page) in Chinese."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rocketlab import i18n, lab, workspace
from tests.test_lab_browser import _wait_for_server as wait_for_server

ROOT = Path(__file__).resolve().parents[1]
ROCKETLAB = [sys.executable, "-m", "rocketlab.cli"]
CHROMIUM = "/usr/bin/chromium"
SETTINGS = "@jupyterlab/translation-extension/plugin.jupyterlab-settings"


@pytest.fixture(autouse=True)
def _no_language_set(monkeypatch):
    for name in (i18n.ENV, "LC_ALL", "LC_MESSAGES", "LANG", workspace.ENV):
        monkeypatch.delenv(name, raising=False)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_prepare_writes_the_workspaces_language_into_labs_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTERLAB_DIR", str(tmp_path / "app"))
    ws = tmp_path / "ws"
    workspace.init_workspace(ws, lang="zh-CN")
    monkeypatch.chdir(ws)
    launch = lab.prepare(port=_free_port(), token="t0k")
    path = Path(launch.env["JUPYTERLAB_SETTINGS_DIR"]) / SETTINGS
    assert path.parent.parent.parent == ws / ".jupyter" / "settings"
    assert json.loads(path.read_text(encoding="utf-8")) == {"locale": "zh_CN"}
    path.write_text(json.dumps({"locale": "zh_CN", "other": 1}), encoding="utf-8")
    monkeypatch.setenv(i18n.ENV, "en")  # this start in English: the setting follows, the rest stays
    lab.prepare(port=_free_port(), token="t0k")
    assert json.loads(path.read_text(encoding="utf-8")) == {"locale": "en", "other": 1}


def test_a_settings_file_lab_cannot_read_as_json_is_left_alone(tmp_path, capsys):
    path = tmp_path / SETTINGS
    path.parent.mkdir(parents=True)
    path.write_text("// Lab's JSON5, with a comment\n{}", encoding="utf-8")
    assert not lab.write_language_setting(tmp_path, "zh-CN")
    assert path.read_text(encoding="utf-8").startswith("// Lab's JSON5")
    assert "leaving" in capsys.readouterr().err


def test_the_language_pack_is_installed_and_jupyterlab_offers_it():
    from jupyterlab_server.translation_utils import get_language_packs  # lazy: Jupyter's server package

    packs, message = get_language_packs("zh_CN")
    assert "zh_CN" in packs, message


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_rocketlab_lab_in_a_zh_cn_workspace_serves_jupyterlab_in_chinese(tmp_path):
    """The real command in a workspace made with ``rocketlab init --lang zh-CN``: Lab's settings API says
    zh_CN, its translations API serves the pack's strings; with Chromium the menu bar reads 文件."""
    ws = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if k not in (i18n.ENV, workspace.ENV)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])  # this checkout's kit
    subprocess.run([*ROCKETLAB, "init", str(ws), "--lang", "zh-CN"], check=True, capture_output=True, env=env)
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([*ROCKETLAB, "lab", "--no-browser", "--port", str(port), "--token", token],
                                cwd=ws, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(proc, f"{base}/lab/api/settings?token={token}", log)
        plugin = _get(f"{base}/lab/api/settings/@jupyterlab/translation-extension:plugin?token={token}")
        assert plugin["settings"]["locale"] == "zh_CN", plugin
        strings = _get(f"{base}/lab/api/translations/zh_CN?token={token}")["data"]["jupyterlab"]
        assert strings["menu\x04File"] == ["文件"]  # the menu bar's File, in its gettext context
        if not os.path.exists(CHROMIUM):
            if os.environ.get("CI") == "true":
                pytest.fail(f"{CHROMIUM} is missing: CI installs it (.ci/run)")
            return
        from playwright.sync_api import sync_playwright  # lazy: the browser driver

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"{base}/lab?token={token}")
            page.locator(".lm-MenuBar-itemLabel", has_text="文件").first.wait_for(timeout=60_000)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
