"""The kit's language and its message catalogue (rocketlab.i18n): where the language comes from, that the
catalogue holds every sentence the code marks and translates each one, and that the commands speak it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from rocketlab import cli, i18n, workspace
from rocketlab.errors import RocketlabError
from tests.i18n_support import CJK, no_language_set  # noqa: F401  (the fixture)
from tests.test_lab_twins import english_runs, glossary_terms

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "rocketlab" / "locale" / "zh_CN" / "LC_MESSAGES" / "rocketlab.po"
FIELD = re.compile(r"\{[^{}]*\}")


pytestmark = pytest.mark.usefixtures("no_language_set")


@pytest.mark.parametrize("tag, lang", [("zh-CN", "zh-CN"), ("zh_CN.UTF-8", "zh-CN"), ("zh_CN.utf8@x", "zh-CN"),
                                       ("zh", "zh-CN"), ("zh-Hans", "zh-CN"), ("en_US.UTF-8", "en"), ("C", "en"),
                                       ("POSIX", "en"), ("zh_TW.UTF-8", None), ("fr_FR", None), ("", None)])
def test_tags_and_locale_names_normalize_to_the_kits_languages(tag, lang):
    assert i18n.normalize(tag) == lang


def test_the_order_is_the_variable_then_the_workspace_then_the_locale_then_english():
    assert i18n.resolve_language(None, {}) == "en"
    assert i18n.resolve_language(None, {"LANG": "zh_CN.UTF-8"}) == "zh-CN"
    assert i18n.resolve_language(None, {"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"  # POSIX order
    assert i18n.resolve_language(None, {"LC_MESSAGES": "zh_CN", "LANG": "en_US"}) == "zh-CN"
    assert i18n.resolve_language(None, {"LANG": "de_DE.UTF-8"}) == "en"  # a locale the kit does not speak
    assert i18n.resolve_language("zh-CN", {"LANG": "en_US"}) == "zh-CN"
    assert i18n.resolve_language("zh-CN", {i18n.ENV: "en"}) == "en"
    assert i18n.resolve_language(None, {i18n.ENV: "zh-CN", "LANG": "en_US"}) == "zh-CN"
    with pytest.raises(RocketlabError, match="ROCKETLAB_LANG 'fr': not a language the kit speaks"):
        i18n.resolve_language(None, {i18n.ENV: "fr"})


def test_init_lang_is_stored_in_the_workspace_and_kept_by_a_later_init(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws, lang="zh_CN")
    marker = json.loads((ws / workspace.MARKER).read_text(encoding="utf-8"))
    assert marker["lang"] == "zh-CN"
    workspace.init_workspace(ws)  # again, without --lang: the setting stays
    assert json.loads((ws / workspace.MARKER).read_text(encoding="utf-8"))["lang"] == "zh-CN"
    monkeypatch.chdir(ws / "labs")
    assert workspace.stored_language() == "zh-CN" and i18n.language() == "zh-CN"
    assert i18n._("workspace") == "工作区"
    assert i18n.ngettext("{n} file", "{n} files", 3).format(n=3) == "3 个文件"
    monkeypatch.setenv(i18n.ENV, "en")  # one command in English
    assert i18n.language() == "en" and i18n._("workspace") == "workspace"
    with pytest.raises(RocketlabError, match="--lang 'klingon'"):
        workspace.init_workspace(ws, lang="klingon")
    assert json.loads((ws / workspace.MARKER).read_text(encoding="utf-8"))["lang"] == "zh-CN"


def test_a_notebooks_language_is_its_metadata():
    assert i18n.notebook_language({"metadata": {"rocketlab": {"lang": "zh-CN"}}}) == "zh-CN"
    assert i18n.notebook_language({"metadata": {"kernelspec": {}}}) == "en"
    with pytest.raises(RocketlabError):
        i18n.notebook_language({"metadata": {"rocketlab": {"lang": "xx"}}})


def _catalogue():
    with open(PO, "rb") as f:
        return read_po(f, locale="zh_CN")


def test_the_catalogue_holds_exactly_what_the_code_marks():
    marked = {message for _file, _line, message, _comments, _context in extract_from_dir(
        ROOT / "rocketlab", method_map=[("**.py", "python"), ("**/templates/**.j2", "jinja2")],
        options_map={"**/templates/**.j2": {"trim_blocks": "true", "lstrip_blocks": "true"}})}
    marked = {m if isinstance(m, str) else m[0] for m in marked}
    have = {m.id if isinstance(m.id, str) else m.id[0] for m in _catalogue() if m.id}
    assert not marked - have, f"marked _() but not in {PO.name} (pybabel extract, then translate): {sorted(marked - have)}"
    assert not have - marked, f"in {PO.name} but no longer in the code: {sorted(have - marked)}"


def test_every_entry_is_translated_with_the_same_placeholders():
    problems = []
    for m in _catalogue():
        if not m.id:
            continue
        source = m.id if isinstance(m.id, str) else m.id[-1]  # a plural: its plural form
        forms = [m.string] if isinstance(m.string, str) else list(m.string)  # Chinese has one form
        if not all(forms) or m.fuzzy:
            problems.append(f"untranslated or fuzzy: {m.id!r}")
        elif any(sorted(FIELD.findall(source)) != sorted(FIELD.findall(form)) for form in forms):
            problems.append(f"placeholders differ: {m.id!r} -> {m.string!r}")
        elif not all(CJK.search(form) for form in forms):
            problems.append(f"no Chinese in the translation of {m.id!r}")
    assert not problems, "\n".join(problems)


def test_no_english_is_left_in_the_translations():
    """A translation holds no run of four English words outside code spans and the glossary's terms: the
    check the lab twins' prose passes, applied to every sentence the kit says (``english_runs``)."""
    terms = glossary_terms()
    left = {m.id: runs for m in _catalogue() if m.id
            for runs in [[r for form in ([m.string] if isinstance(m.string, str) else m.string)
                          for r in english_runs(form, terms)]] if runs}
    assert not left, "\n".join(f"{k!r}: {v}" for k, v in left.items())


def test_the_english_check_of_the_catalogue_sees_a_sentence_left_in_english():
    terms = glossary_terms()
    assert english_runs("副本 {n} 个：the slave has not caught up", terms) == ["the slave has not caught up"]
    assert english_runs("运行 `rocketlab grade lab03 --json` 查看", terms) == []

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_doctor_speaks_chinese_with_rocketlab_lang_and_keeps_its_json_names():
    env = {**os.environ, i18n.ENV: "zh-CN"}
    port = str(_free_port())
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "doctor", "--no-spark", "--port", port],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    print(proc.stdout)
    assert "rocketlab doctor：本机为套件准备的环境" in proc.stdout
    assert f"端口 {port}" in proc.stdout and "工作区" in proc.stdout and "正常" in proc.stdout
    assert "what this machine has" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "doctor", "--no-spark", "--port", port, "--json"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    names = {json.loads(line)["name"] for line in proc.stdout.splitlines()}
    assert {"workspace", "sandbox", f"port {port}"} <= names  # a machine reads --json: names stay


def test_help_and_one_line_errors_follow_the_language(monkeypatch, capsys):
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    with pytest.raises(SystemExit):
        cli.main(["view", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("用法：rocketlab view") and "显示此帮助信息后退出" in out and "位置参数" in out
    assert cli.main(["sim"]) == 2
    assert capsys.readouterr().err == "rocketlab: sim 需要一个场景名 SCENARIO（或 --list）\n"
    monkeypatch.setenv(i18n.ENV, "fr")
    assert cli.main(["sim"]) == 2
    assert capsys.readouterr().err.startswith("rocketlab: ROCKETLAB_LANG 'fr': not a language")
    monkeypatch.setenv(i18n.ENV, "en")
    assert cli.main(["sim"]) == 2
    assert capsys.readouterr().err == "rocketlab: sim needs a SCENARIO name (or --list)\n"


def test_the_twins_travel_to_the_workspace_and_the_chinese_tour_is_the_one_to_open(tmp_path, monkeypatch):
    from rocketlab.kitfiles import kit_files

    kit = tmp_path / "kit"
    for rel in ("labs/00_tour.ipynb", "labs/zh-CN/00_tour.ipynb", "labs/zh-CN/runs/x/meta.json"):
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        (kit / rel).write_text("{}", encoding="utf-8")
    assert kit_files(kit) == ["labs/00_tour.ipynb", "labs/zh-CN/00_tour.ipynb"]
    assert workspace.tour_notebook(kit) == "labs/00_tour.ipynb"
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    assert workspace.tour_notebook(kit) == "labs/zh-CN/00_tour.ipynb"
    assert workspace.tour_notebook(tmp_path) == "labs/00_tour.ipynb"  # no twin there: the English tour


def test_the_chinese_docs_are_in_the_site_and_the_readme_links_them():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    toctrees = "".join(re.findall(r"```\{toctree\}(.*?)```", index, re.DOTALL))
    assert "zh-CN/index" in toctrees.split()
    zh = (ROOT / "docs" / "zh-CN" / "index.md").read_text(encoding="utf-8")
    assert "glossary" in re.search(r"```\{toctree\}(.*?)```", zh, re.DOTALL).group(1).split()
    assert "rocketlab init my-rocketlab --lang zh-CN" in zh and "ROCKETLAB_LANG" in zh
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/zh-CN/index.md" in readme and "fonts-wqy-microhei" in readme and "4.6" in readme
