"""What a Chinese reader sees in the figures, the cluster viewer's "why" lines and the HTML reports (issue 44,
deliverable 3): built in zh-CN from the runs labs 03 and 06 draw (and the tour's report of ``rocketlab demo``),
every string plotly shows (titles, axes, legends, hover texts, annotations and notes, tick labels) and every
text of the report page holds no English words outside Java/RocketMQ names, identifiers, units and the
glossary's terms; and the English figures still say what they said before (their hover texts pinned here).

"English" here is stricter than in the labs' prose (tests/test_lab_twins.py: four words): two plain words in a
row. Identifiers (handleVote, SYNC_MASTER, dledger-0.3.1.2), numbers and plotly's ``%{...}`` fields are not
plain words, so they break a run."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from rocketlab import i18n
from rocketlab.labs_support import dledger_election as lab
from rocketlab.labs_support.controller_mode import failover_with_in_flight, new_cluster, wait_for_full_set
from rocketlab.labs_support.spark_lab import LOST_TITLE
from rocketlab.labs_support.tour import role_timelines
from rocketlab.sim import Cluster
from rocketlab.templating import render
from rocketlab.trace.schema import FAULT_ACTIONS
from rocketlab.viz import (
    cluster_graph_figure,
    commit_progress,
    epochs_and_sync_state_set,
    message_flow,
    put_latency,
    role_timeline,
    vote_graph_figure,
    votes_per_term,
    write_report,
)
from rocketlab.viz.cluster_view.film import make_film
from rocketlab.viz.cluster_view.widget import ClusterView
from rocketlab.viz.figures.figure16 import LAB_TITLES, downtime_cdf
from rocketlab.viz.graphs import vote_terms
from rocketlab.viz.offset_space import LAB_LANES, offset_space
from rocketlab.viz.timeline import FAULT_WORDS
from tests.i18n_support import IDEOGRAPH, no_language_set  # noqa: F401  (the fixture)
from tests.test_lab_twins import WORD, glossary_terms

pytestmark = pytest.mark.usefixtures("no_language_set")
ROOT = Path(__file__).resolve().parents[1]

ENGLISH = re.compile(rf"(?<![\w.%-]){WORD}(?:[ \t]+{WORD})+(?![\w-])")
"""Two or more plain English words in a row."""
NOT_WORDS = re.compile(r"<[^>]+>|%\{[^}]*\}")  # markup and plotly's fields
ALLOWED = {"name server", "master max offset"}  # RocketMQ's own words, kept in Chinese prose by the glossary
VISIBLE_KEYS = {"text", "name", "hovertemplate", "hovertext", "ticktext"}
"""A trace's or an annotation's keys whose strings plotly shows (``title.text`` of the layout and its axes
included, via the ``text`` key)."""


def visible_strings(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (path, string) of a plotly figure's JSON that the reader sees."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in VISIBLE_KEYS and isinstance(value, str):
                found.append((f"{path}.{key}", value))
            elif key in VISIBLE_KEYS and isinstance(value, list):
                found += [(f"{path}.{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str)]
            elif key not in ("customdata", "meta", "template") and isinstance(value, (dict, list)):
                found += visible_strings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += visible_strings(value, f"{path}[{i}]")
    return found


def english_left(texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The runs of English in ``texts`` that are neither a glossary term nor an allowed name."""
    allowed = {t.lower() for t in glossary_terms()} | ALLOWED
    left = []
    for where, text in texts:
        for run in ENGLISH.findall(NOT_WORDS.sub(" ", text)):
            if run.lower() not in allowed:
                left.append((where, run))
    return left


def figure_english(figures: dict[str, Any]) -> list[tuple[str, str]]:
    return english_left([(f"{name}{where}", text) for name, fig in figures.items()
                         for where, text in visible_strings(fig.to_plotly_json())])


def test_the_detector_finds_english_and_passes_names_and_glossary_terms():
    assert english_left([("a", "no answer (UNKNOWN)"), ("b", "handleVote 第 4 项检查"), ("c", "%{y} 暂停"),
                         ("d", "term %{x}: 3"), ("e", "Leader n1<br>任期 3"), ("f", "dledger-0.3.1.2 n0")]) == \
        [("a", "no answer")]


@pytest.fixture(scope="module")
def lab03_group():
    """Lab 03's group (seed 7, five members): elected, its leader crashed, elected again, as sections 1-2 run it."""
    c = lab.group(7)
    c.run_for(2_000)
    c.crash(c.leader())
    c.run_for(12_000)
    yield c
    c.close()


def test_lab03s_figures_speak_chinese(lab03_group):
    i18n.set_language("zh-CN")
    events = lab03_group.events
    figures = {"roles": role_timeline(events), "votes": votes_per_term(events), "messages": message_flow(events),
               "progress": commit_progress(events), "latency": put_latency(events),
               "waits": lab.waits_histogram(lab.revote_waits(events)),
               **{f"vote graph T{t}": vote_graph_figure(events, t) for t in vote_terms(events)}}
    assert (left := figure_english(figures)) == [], left
    titles = [fig.layout.title.text for fig in figures.values()]
    assert all(IDEOGRAPH.search(t) for t in titles), titles
    hover = {t.hovertemplate for t in figures["votes"].data}
    assert any(h.startswith("任期 %{x}：%{y} × ACCEPT") for h in hover), hover


def test_lab06s_figures_speak_chinese(tmp_path):
    i18n.set_language("zh-CN")
    c = new_cluster(tmp_path / "cluster", seed=2)
    try:
        failover_with_in_flight(c)
        wait_for_full_set(c)
        c.run_for(2_000)
        figures = {"epochs": epochs_and_sync_state_set(c.events), "roles": role_timeline(c.events)}
        assert (left := figure_english(figures)) == [], left
        names = [t.name for t in figures["epochs"].data if t.name]
        assert any("纪元" in (t.hovertemplate or "") for t in figures["epochs"].data)
        assert all(IDEOGRAPH.search(n) or re.fullmatch(r"n\d \w+", n) for n in names), names
    finally:
        c.close()


def _partitioned_run() -> Cluster:
    """Three members: elected, the leader partitioned off and healed, a follower crashed and restarted, puts."""
    c = Cluster.dledger(nodes=3, seed=3, memory=True, latency="uniform:10:40")
    c.run_for(3_000)
    leader = c.leader()
    c.partition([leader], [n for n in c.node_ids if n != leader])
    c.run_for(6_000)
    c.heal()
    c.run_for(3_000)
    return c


def test_the_viewers_why_lines_speak_chinese_and_english_as_before():
    c = _partitioned_run()
    try:
        i18n.set_language("zh-CN")
        film = make_film(c.events, c.describe())
        whys = [e["why"] for e in film["events"] if e.get("why")]
        kinds = {e["kind"] for e in film["events"] if e.get("why")}
        assert {"vote_response", "vote_round", "role", "term", "fault", "heartbeat"} <= kinds, kinds
        bare = [w for w in whys if not IDEOGRAPH.search(w) and not re.fullmatch(r"handleHeartBeat: \w+", w)]
        assert bare == []
        assert english_left([("why", w) for w in whys]) == []
        assert any(re.match(r"handleVote 第 \d+ 项检查：\w+ —— ", w) for w in whys)
        i18n.set_language("en")
        english = [e["why"] for e in make_film(c.events, c.describe())["events"] if e.get("why")]
        assert len(english) == len(whys)
        assert any(re.fullmatch(r"handleVote check \d+: \w+ - [a-z].*", w) for w in english)
        assert any(w.startswith("parseVoteResult rule ") and " accepted, " in w for w in english)
        assert not any(IDEOGRAPH.search(w) for w in english)
    finally:
        c.close()


class _Text(HTMLParser):
    """The prose a browser shows of a page: no script or style, and no ``<code>`` (trace lines and settings, data
    as the trace spells it)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip += tag in ("script", "style", "code")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style", "code")

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def test_the_report_speaks_chinese(tmp_path):
    c = _partitioned_run()
    ha = Cluster.master_slave("SYNC_MASTER", seed=1)
    try:
        ha.run_for(1_000)
        i18n.set_language("zh-CN")
        page = write_report(tmp_path / "report.html", {"dledger": c, "sync-master": ha}).read_text(encoding="utf-8")
        parser = _Text()
        parser.feed(page)
        assert (left := english_left([("report", text) for text in parser.parts])) == [], left
        assert "<html lang='zh-CN'>" in page and "<title>rocketlab 报告</title>" in page
        assert "回放本次运行" in page and "各类事件数" in page and "第一次网络分区进行到一半时的集群" in page
        figures = {"graph": cluster_graph_figure(c.events, at_ms=6_000),
                   **{f"layer {i}": fig for i, fig in enumerate(role_timelines(c.events))}}
        assert (left := figure_english(figures)) == [], left
    finally:
        c.close()
        ha.close()


def test_the_english_figures_keep_their_words(lab03_group):
    """English stays as it was: the hover texts and notes the catalogue now carries, byte for byte."""
    i18n.set_language("en")
    events = lab03_group.events
    votes = {t.hovertemplate for t in votes_per_term(events).data}
    assert "term %{x}: %{y} × ACCEPT<br>%{customdata}<extra></extra>" in votes
    assert "term %{x}: %{y} requests<br>candidates %{customdata}<extra></extra>" in votes
    roles = role_timeline(events)
    assert ("%{y} LEADER<br>term %{customdata[1]}, leader %{customdata[2]}<br>%{base} → %{customdata[0]} ms"
            "<extra></extra>") in {t.hovertemplate for t in roles.data}
    progress = commit_progress(events)
    assert progress.layout.annotations[0].text == "no commit, append, ha_report or put events in this run"
    graph = vote_graph_figure(events, vote_terms(events)[-1])
    assert {"granted (arrow labelled)", "no answer (arrow labelled)"} <= {t.name for t in graph.data}


def twin_code(name: str) -> list[str]:
    """The code cells of lab ``name`` (its Chinese twin's are the same: tests/test_lab_twins.py)."""
    notebook = json.loads((ROOT / "labs" / name).read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in notebook["cells"] if c["cell_type"] == "code"]


def _grader_pages() -> tuple[str, str]:
    """The grader's check() table and an answer sheet, rendered from their templates with one passed and one
    failed test, one written answer and one check."""
    tests = [{"passed": True, "name": "elects", "score": "2", "max_score": "2", "message": "", "replay": None},
             {"passed": False, "name": "churn", "score": "0", "max_score": "3", "message": "x", "replay": None}]
    table = render("rocketlab.grading", "check.html.j2", exercise="lab03.election", submission="mine.py",
                   java="DLedgerLeaderElector", score="2", max_score="5", tests=tests)
    questions = [{"grade_id": "lab03-why", "kind": "written", "points": "3", "prompt": "p", "answer": None,
                  "model": "m"},
                 {"grade_id": "lab03-term", "kind": "check", "points": "1", "prompt": "p", "result": "1/1: ok",
                  "status": "passed"}]
    sheet = render("rocketlab.grading", "answers.html.j2", lang=i18n.language(), lab="lab03", who="alice",
                   questions=questions, written=1, checks=True, check_score="1", check_points="1")
    return table, sheet


def test_the_graders_pages_speak_chinese_and_english_as_before():
    i18n.set_language("zh-CN")
    for page in _grader_pages():
        parser = _Text()
        parser.feed(page)
        assert (left := english_left([("grader", text) for text in parser.parts])) == [], left
        assert IDEOGRAPH.search(page)
    table, sheet = _grader_pages()
    assert "2/5 分" in table and "✔ 已通过" in table and "✘ 未通过" in table
    assert '<html lang="zh-CN">' in sheet and "参考答案" in sheet
    i18n.set_language("en")
    table, sheet = _grader_pages()
    assert "2/5 points <span" in table and "<th>test</th><th>points</th>" in table and "✘ failed" in table
    assert ("<p>Written answers to grade by hand (1 question); the checks were graded automatically (1/1 points).</p>"
            in sheet) and '<html lang="en">' in sheet and "<summary>Model answer</summary>" in sheet


def test_the_viewers_refusals_speak_chinese():
    i18n.set_language("zh-CN")
    view = ClusterView.dledger(nodes=3, seed=1)
    for action, args, words in (("crash", {"node": "n9"}, "crash：未知节点 'n9'（本集群有 n0, n1, n2）"),
                                ("crash", {}, "crash 需要 node"), ("explode", {}, "未知操作 'explode'")):
        view.intent({"type": "act", "action": action, "args": args, "at": 0, "generation": view.session.generation})
        said = [r["text"] for r in view.replies if r["type"] == "message"]
        assert any(words in s for s in said), said


def test_the_titles_labs_pass_to_figures_are_in_the_catalogue():
    """Labs 03 and 07 pass literal English titles from their code cells (the same in both languages): each is a
    catalogue entry, still what a lab passes, and the figure shows its Chinese."""
    code = "".join(cell for name in ("03_dledger_election.ipynb", "07_spark.ipynb")
                   for cell in twin_code(name))
    for title in (*LAB_TITLES, LOST_TITLE):
        assert title in code, f"no lab passes {title!r} any more"
    i18n.set_language("zh-CN")
    trials = pd.DataFrame({"elected": [True, True, False], "downtime_ms": [150, 300, 1000]})
    fig = downtime_cdf([("150-300 ms", trials)], log_x=False, title=LAB_TITLES[0])
    assert fig.layout.title.text.startswith("随机性：无 Leader 的时长")
    assert (left := figure_english({"cdf": fig})) == [], left


def test_every_fault_action_has_words_and_a_chinese_timeline_names_it():
    assert set(FAULT_WORDS) == set(FAULT_ACTIONS)
    assert all(word == action for action, word in FAULT_WORDS.items())  # English: the action's own name
    events = [{"t": 0, "node": "n0", "kind": "role", "term": 1, "role": "LEADER", "leader": "n0"},
              {"t": 10, "node": None, "kind": "fault", "action": "crash", "targets": ["n0"]},
              {"t": 20, "node": None, "kind": "fault", "action": "partition", "targets": ["n1", "n2"]}]
    i18n.set_language("en")
    assert list(role_timeline(events).data[-1].text) == ["crash n0", "partition n1 | n2"]
    i18n.set_language("zh-CN")
    assert list(role_timeline(events).data[-1].text) == ["宕机 n0", "网络分区 n1 | n2"]


def test_the_lanes_lab05_passes_to_the_offset_space_are_in_the_catalogue():
    """Lab 05 names the offset-space figure's two lanes in its code cell (the same in both languages): each is a
    catalogue entry, still what the lab passes, and the Chinese figure names the lanes, and everything else,
    in Chinese."""
    code = "".join(twin_code("05_rocketmq_on_dledger.ipynb"))
    for lane in LAB_LANES:
        assert f'"{lane}"' in code, f"lab 05 does not pass {lane!r} any more"
    rows = [{"log": "old commit log", "name": "00000000000000000000", "start": 0, "end": 65536, "written": 65536},
            {"log": "DLedger log", "name": "00000000000000065536", "start": 65536, "end": 131072, "written": 512}]
    i18n.set_language("zh-CN")
    fig = offset_space({lane: rows for lane in LAB_LANES}, divided=65536)
    assert {y for trace in fig.data for y in trace.y} == {"升级并写入 120 条消息之后", "文件保留清理之后"}
    assert (left := figure_english({"offset space": fig})) == [], left
    i18n.set_language("en")
    assert {y for trace in offset_space({lane: rows for lane in LAB_LANES}).data for y in trace.y} == set(LAB_LANES)
