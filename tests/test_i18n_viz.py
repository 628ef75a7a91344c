"""The cluster viewer's words in each language and the pages' one font stack (issue 44, deliverables 3-4).

The viewer's tables (js/strings.js: English, the source; js/strings_zh_CN.js: Simplified Chinese) hold the
same keys with the same {placeholders}; the language reaches the viewer from the kernel (a notebook twin's
metadata through JPY_SESSION_NAME, else rocketlab.i18n) as ClusterView.lang and as the film's "lang"; every
HTML page of rocketlab.viz and the grader's answer sheet name rocketlab.viz.style.FONT_FAMILY."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rocketlab import i18n
from rocketlab.trace.faults import viewer_faults
from rocketlab.trace.schema import VIEW_GROUPS, VIEW_STOPS
from rocketlab.viz import language
from rocketlab.viz.cluster_view.bundle import viewer_source
from rocketlab.viz.cluster_view.offline import viewer_page
from rocketlab.viz.cluster_view.widget import ClusterView
from rocketlab.viz.figures.latency import put_latency
from rocketlab.viz.figures.messages import message_flow
from rocketlab.viz.figures.offsets import commit_progress
from rocketlab.viz.figures.roles import role_timeline
from rocketlab.viz.figures.votes import votes_per_term
from rocketlab.viz.style import CJK_FONTS, FONT_FAMILY
from tests.viz.sample_traces import dledger_failover

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "rocketlab" / "viz" / "cluster_view" / "js"
TEMPLATES = [ROOT / "rocketlab" / "viz" / "templates" / name
             for name in ("films_index.html.j2", "report.html.j2", "viewer_page.html.j2")]
ANSWERS = ROOT / "rocketlab" / "grading" / "templates" / "answers.html.j2"
_PAIR = re.compile(r'(?:"([^"]+)"|(\w+)):\s*"((?:[^"\\]|\\.)*)"')
_HAN = re.compile(r"[\u4e00-\u9fff]")


def table(file: str, name: str) -> dict[str, str]:
    """The object literal ``export const NAME = {...};`` of a viewer module, as key -> value (escapes read)."""
    text = (JS / file).read_text(encoding="utf-8")
    body = re.search(r"export const " + name + r" = \{(.*?)\n\};", text, re.S).group(1)
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith("//"))
    return {quoted or bare: json.loads(f'"{value}"') for quoted, bare, value in _PAIR.findall(body)}  # JS escapes


@pytest.fixture
def fresh_language(monkeypatch):
    """The kernel's language settled anew, and the process's language restored afterwards."""
    monkeypatch.setattr(language, "_settled", False)
    monkeypatch.delenv(i18n.ENV, raising=False)
    yield
    i18n.set_language(None)


def test_the_chinese_table_has_every_key_and_placeholder_of_the_english_one():
    english, chinese = table("strings.js", "STRINGS"), table("strings_zh_CN.js", "STRINGS_ZH_CN")
    assert len(english) > 90
    assert sorted(k for k in chinese if not k.startswith("action:")) == sorted(english)  # actions: the fault table's
    for key, value in english.items():
        assert set(re.findall(r"\{\w+\}", chinese[key])) == set(re.findall(r"\{\w+\}", value)), key
    untranslated = [k for k, v in chinese.items() if v == english.get(k, k.partition(":")[2]) and re.search(r"[a-z]{3}", v)
                    and k not in ("latencyTitle", "withKey", "group:ha")]
    assert untranslated == []
    assert sum(bool(_HAN.search(v)) for v in chinese.values()) > 80
    assert "STRINGS_ZH_CN" in viewer_source() and "setLanguage" in viewer_source()


def _notebook(path: Path, lang: str | None) -> Path:
    meta = {"rocketlab": {"lang": lang}} if lang else {}
    path.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_the_kernel_speaks_its_notebook_twins_language(tmp_path, monkeypatch, fresh_language):
    monkeypatch.setenv(language.SESSION_ENV, str(_notebook(tmp_path / "03.ipynb", "zh-CN")))
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert language.kernel_language() == "zh-CN"
    assert i18n.language() == "zh-CN"  # _() in the figures follows the twin
    view = ClusterView.dledger(nodes=3, seed=1)
    assert view.lang == "zh-CN"
    film = view.offline_film()
    assert film["lang"] == "zh-CN"
    page = viewer_page(film, "选主")
    assert "<html lang='zh-CN'>" in page and '"lang":"zh-CN"' in page


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"metadata": {"rocketlab": {"lang": "klingon"}}}'])
def test_an_unreadable_or_odd_notebook_leaves_the_usual_resolution(tmp_path, monkeypatch, fresh_language, content):
    bad = tmp_path / "odd.ipynb"
    bad.write_text(content, encoding="utf-8")
    monkeypatch.setenv(language.SESSION_ENV, str(bad))
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert language.kernel_language() == "zh-CN"  # the locale's
    assert language.twin_language({language.SESSION_ENV: str(tmp_path / "gone.ipynb")}) is None
    assert language.twin_language({language.SESSION_ENV: "console-1"}) is None


def test_a_notebook_naming_no_language_follows_the_workspace_or_the_locale(tmp_path, monkeypatch, fresh_language):
    monkeypatch.setenv(language.SESSION_ENV, str(_notebook(tmp_path / "mine.ipynb", None)))
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert language.kernel_language() == "zh-CN"  # the locale's: an untagged notebook sets nothing
    monkeypatch.setattr(language, "_settled", False)
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert language.kernel_language() == "en"
    assert ClusterView.dledger(nodes=3, seed=1).offline_film()["lang"] == "en"
    monkeypatch.setattr(language, "_settled", False)
    monkeypatch.setenv(language.SESSION_ENV, str(_notebook(tmp_path / "en.ipynb", "en")))
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert language.kernel_language() == "en"  # a notebook that names English: English, whatever the locale


def test_every_page_names_the_one_font_stack():
    for template in TEMPLATES:
        text = template.read_text(encoding="utf-8")
        assert "font-family: {{ font_family }}" in text or "font-family:{{ font_family }}" in text, template.name
        assert "lang='{{ lang }}'" in text, template.name
    page = viewer_page(ClusterView.dledger(nodes=3, seed=1).offline_film(), "t")
    assert f"font-family:{FONT_FAMILY}'" in page  # double quotes inside a single-quoted attribute
    answers = re.search(r"body \{ font-family: ([^;]+);", ANSWERS.read_text(encoding="utf-8")).group(1)
    assert answers == FONT_FAMILY  # rocketlab.grading may not import rocketlab.viz: compared here
    assert all(f'"{font}"' in answers for font in CJK_FONTS)


def _figures(events):
    return {"roles": role_timeline(events), "votes": votes_per_term(events), "latency": put_latency(events),
            "messages": message_flow(events), "offsets": commit_progress(events)}


def test_the_figures_speak_chinese_in_zh_cn_and_the_same_english_as_before(fresh_language):
    events = dledger_failover()
    i18n.set_language("en")
    english = {name: fig.layout.title.text for name, fig in _figures(events).items()}
    assert english["roles"].startswith("Roles and terms (last term 3): ")
    assert english["votes"].startswith("Votes per term: ") and "rejected or unanswered" in english["votes"]
    i18n.set_language("zh-CN")
    chinese = _figures(events)
    for name, fig in chinese.items():
        print(name, fig.layout.title.text)
        assert _HAN.search(fig.layout.title.text), (name, fig.layout.title.text)
        assert fig.layout.title.text != english[name]
    roles = chinese["roles"]
    assert roles.layout.title.text.startswith("角色与任期（最后任期 3）：")
    assert roles.layout.xaxis.title.text == "t（毫秒）"
    assert chinese["votes"].layout.xaxis2.title.text == "任期" and chinese["votes"].layout.yaxis.title.text == "数量"
    legends = [t.name for fig in chinese.values() for t in fig.data if t.name and t.showlegend is not False]
    assert any(_HAN.search(name) for name in legends), legends


def test_every_fault_action_group_stop_and_network_mode_has_chinese_words():
    """The words the viewer gets as data (the fault menus' labels of rocketlab.trace.faults, the filter
    groups and stops of the trace vocabulary) and its network modes have a row in the Chinese table."""
    chinese = table("strings_zh_CN.js", "STRINGS_ZH_CN")
    faults = viewer_faults()
    labels = {item["label"] for menu in ("node_menu", "link_menu", "bar_menu") for item in faults[menu]}
    wanted = {f"action:{label}" for label in labels} | {f"group:{g}" for g in VIEW_GROUPS} | \
        {f"stop:{s}" for s in VIEW_STOPS}
    modes = re.search(r"const NETWORK_MODES = \[([^\]]*)\]", (JS / "viewer.js").read_text(encoding="utf-8")).group(1)
    wanted |= {f"network:{m}" for m in re.findall(r'"([^"]+)"', modes)}
    missing = sorted(wanted - set(chinese))
    assert missing == [], missing
    assert all(_HAN.search(chinese[key]) for key in wanted if key != "group:ha"), wanted


def test_the_viewers_messages_from_the_kernel_speak_chinese(fresh_language):
    i18n.set_language("zh-CN")
    view = ClusterView.dledger(nodes=3, seed=1)
    view.run_for(500)
    replies = view.intent({"type": "hello"})
    assert any(_HAN.search(r.get("say") or "") and "t = 500" in r["say"] for r in replies), replies
    view.intent({"type": "act", "action": "partition", "args": {"groups": "n0 | n0"}, "at": 500,
                 "generation": view.session.generation})
    said = [r["text"] for r in view.replies if r["type"] == "message"]
    assert said and said[0].startswith("网络分区："), said
    i18n.set_language("en")
    view.intent({"type": "act", "action": "partition", "args": {"groups": "n0 | n0"}, "at": 500,
                 "generation": view.session.generation})
    assert [r["text"] for r in view.replies if r["type"] == "message"] == ["partition: a node is on two sides"]
