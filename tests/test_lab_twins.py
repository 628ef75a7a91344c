"""The labs' Chinese twins stay twins: for every ``labs/zh-CN/NN_*.ipynb``, the English notebook of the same name
exists, the code cells are the same (by hash, in order), the sections are the same (the same ``## N.``
headings, by number), the notebook says it is Chinese (metadata ``{"rocketlab": {"lang": "zh-CN"}}``) and holds
no outputs; and its prose is Chinese: no run of four or more English words outside code, links, HTML and the
glossary's English terms (docs/zh-CN/glossary.md), and no two plain lowercase English words in a row either
("preferred leader", "torn write": the short phrases a four-word run misses). A change to a lab's code fails here until both languages
follow. With no twin yet the first test has nothing to compare; the checks themselves are tested on notebooks
made here from an English lab, so they are proven either way.

In CI one twin runs in full: lab 03's, headless (``ROCKETLAB_FAST`` unset, as a learner runs it; the executor
of tests/test_labs.py), with the values lab 03 pins (``VALUES``: numbers read from the run, the same for both
twins) all true; under ``ROCKETLAB_FULL=1`` every twin does."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest

from rocketlab import i18n
from rocketlab.errors import RocketlabError
from rocketlab.viz import language
from tests import test_labs

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
TWINS = LABS / "zh-CN"
GLOSSARY = ROOT / "docs" / "zh-CN" / "glossary.md"
SECTION = re.compile(r"^##\s+(\d+)\.", re.MULTILINE)
WORD = r"[A-Za-z][a-z]+(?:['’][a-z]+)?"
ENGLISH_RUN = re.compile(rf"(?<![\w.-]){WORD}(?:[ \t]+{WORD}){{3,}}(?![\w-])")
"""Four or more plain English words in a row, separated by spaces only. Identifiers (CommitLog, SYNC_MASTER,
DLedger, handle_vote), acronyms and numbers are not plain words, so they break a run."""
LOWER_RUN = re.compile(r"(?<![\w.'’-])[a-z]{2,}(?:[ \t]+[a-z]{2,})+(?![\w-])")
"""Two or more plain lowercase English words in a row: a phrase left in English, however short. A capitalised
name (Broker, Slave, Java) breaks it, so "Java Slave" and "Broker id" are not phrases."""
MASKS = (
    re.compile(r"```.*?```", re.DOTALL),  # fenced code
    re.compile(r"`[^`\n]*`"),  # code spans
    re.compile(r"!?\[[^\]]*\]\([^)]*\)"),  # links and images, their text included (a cited title stays as it is)
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r"https?://\S+"),  # bare addresses
    re.compile(r"\$[^$\n]+\$"),  # inline maths
)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def code_hashes(notebook: dict) -> list[str]:
    return [hashlib.sha256(_source(c).encode("utf-8")).hexdigest() for c in notebook["cells"]
            if c["cell_type"] == "code"]


def sections(notebook: dict) -> list[int]:
    return [int(n) for c in notebook["cells"] if c["cell_type"] == "markdown" for n in SECTION.findall(_source(c))]


def glossary_terms() -> list[str]:
    """The English side of the glossary's tables (each phrase, the parts of "a / b" and of "a (b)" too)."""
    terms = set()
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or set(cells[0]) <= set("- "):
            continue
        for part in re.split(r"\s*(?:/|、|，|\(|\)|（|）)\s*", cells[0]):
            if re.search(r"[A-Za-z]", part):
                terms.add(part.strip())
    return sorted(terms, key=len, reverse=True)


def english_runs(markdown: str, terms: list[str]) -> list[str]:
    """The runs of English words in ``markdown`` outside code, links, HTML and maths; a glossary term is not one."""
    text = markdown
    for mask in MASKS:
        text = mask.sub(" ", text)
    allowed = {t.lower() for t in terms}
    return [run for run in ENGLISH_RUN.findall(text) if run.lower() not in allowed]


def english_phrases(markdown: str, terms: list[str]) -> list[str]:
    """The runs of two or more lowercase English words in ``markdown`` outside what ``english_runs`` masks;
    a glossary term is not one."""
    text = markdown
    for mask in MASKS:
        text = mask.sub(" ", text)
    allowed = {t.lower() for t in terms}
    return [run for run in LOWER_RUN.findall(text) if run.lower() not in allowed]


def twin_problems(zh: dict, en: dict, name: str, terms: list[str]) -> list[str]:
    """What keeps the Chinese notebook ``zh`` from being the twin of ``en`` (empty: they are twins)."""
    problems = []
    ours, theirs = code_hashes(zh), code_hashes(en)
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
        problems.append(f"{name}: code cells differ from the English twin's ({len(ours)} vs {len(theirs)} cells; "
                        f"first difference at code cell {first + 1})")
    if sections(zh) != sections(en):
        problems.append(f"{name}: sections {sections(zh)} but the English twin has {sections(en)}")
    try:
        lang = i18n.notebook_language(zh)
    except RocketlabError as e:
        lang = str(e)
    if lang != "zh-CN":
        problems.append(f"{name}: metadata rocketlab.lang is {lang!r}, not 'zh-CN'")
    stored = [i + 1 for i, c in enumerate(zh["cells"]) if c["cell_type"] == "code" and (
        c.get("outputs") or c.get("execution_count") is not None)]
    if stored:
        problems.append(f"{name}: stored outputs in cells {stored} (clear them before committing)")
    for i, cell in enumerate(zh["cells"]):
        if cell["cell_type"] == "markdown":
            runs = english_runs(_source(cell), terms)
            runs += [p for p in english_phrases(_source(cell), terms) if not any(p in run for run in runs)]
            problems += [f"{name}: cell {i + 1}: English left in the prose: {run!r}" for run in runs]
    return problems


def _twins() -> list[Path]:
    return sorted(TWINS.glob("*.ipynb")) if TWINS.is_dir() else []


def test_every_chinese_lab_is_the_twin_of_its_english_lab():
    terms = glossary_terms()
    problems = []
    for path in _twins():
        english = LABS / path.name
        if not english.is_file():
            problems.append(f"{path.name}: no English twin {english.relative_to(ROOT)}")
            continue
        problems += twin_problems(json.loads(path.read_text(encoding="utf-8")),
                                  json.loads(english.read_text(encoding="utf-8")), path.name, terms)
    print(f"{len(_twins())} twins checked")
    assert not problems, "\n".join(problems)


def _english(name: str = "03_dledger_election.ipynb") -> dict:
    return json.loads((LABS / name).read_text(encoding="utf-8"))


def _translated(en: dict) -> dict:
    """``en`` as a well-made twin: the same code, each markdown cell in Chinese with its section heading kept."""
    zh = copy.deepcopy(en)
    zh["metadata"]["rocketlab"] = {"lang": "zh-CN"}
    for cell in zh["cells"]:
        if cell["cell_type"] == "markdown":
            heads = SECTION.findall(_source(cell))
            cell["source"] = "".join(f"## {n}. 选主\n\n" for n in heads) + (
                "本节用 `handle_vote` 观察 Broker 的选主过程：任期（term）与投票（vote request），"
                "参见 [In Search of an Understandable Consensus Algorithm](https://raft.github.io/raft.pdf)。")
        else:
            cell["outputs"], cell["execution_count"] = [], None
    return zh


def test_the_checks_catch_what_breaks_a_twin():
    terms = glossary_terms()
    en = _english()
    assert len(code_hashes(en)) > 5 and len(sections(en)) > 5
    good = _translated(en)
    assert twin_problems(good, en, "good", terms) == []

    changed = copy.deepcopy(good)
    next(c for c in changed["cells"] if c["cell_type"] == "code")["source"] += "\nprint(1)"
    moved = copy.deepcopy(good)
    codes = [i for i, c in enumerate(moved["cells"]) if c["cell_type"] == "code"]
    moved["cells"][codes[0]], moved["cells"][codes[1]] = moved["cells"][codes[1]], moved["cells"][codes[0]]
    dropped = copy.deepcopy(good)
    heading = next(c for c in dropped["cells"] if c["cell_type"] == "markdown" and SECTION.search(_source(c)))
    heading["source"] = SECTION.sub("## 练习", _source(heading), count=1)
    untagged = copy.deepcopy(good)
    del untagged["metadata"]["rocketlab"]
    ran = copy.deepcopy(good)
    ran["cells"][codes[0]]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    english_left = copy.deepcopy(good)
    english_left["cells"][0]["source"] += "\n\nThe leader sends heartbeats to every follower."
    for broken, says in ((changed, "code cells differ"), (moved, "first difference at code cell 1"),
                         (dropped, "sections"), (untagged, "metadata rocketlab.lang is 'en'"),
                         (ran, "stored outputs"), (english_left, "'The leader sends heartbeats to every follower'")):
        found = twin_problems(broken, en, "broken", terms)
        assert len(found) == 1 and says in found[0], found


@pytest.mark.parametrize("text, runs", [
    ("Broker 把消息写进 CommitLog，再由 ReputMessageService 构建 ConsumeQueue。", []),
    ("SYNC_MASTER 与 ASYNC_MASTER 的区别在于同步双写。", []),
    ("选主（leader election）之后，任期（term）加一。", []),  # glossary terms in brackets
    ("代码：`for entry in the log of the leader`。", []),
    ("延伸阅读：[DLedger commit log source code walkthrough](https://example.org)。", []),
    ("这一句还有 the leader of the term 没译。", ["the leader of the term"]),
    ("MIT 6.5840 labrpc modes", []),
])
def test_the_english_heuristic(text, runs):
    assert english_runs(text, glossary_terms()) == runs


@pytest.mark.parametrize("text, phrases", [
    ("注册一个追加钩子（append hook）。", ["append hook"]),
    ("坏扇区或写了一半的页（torn write）都可能造成。", ["torn write"]),
    ("Java Slave 报告之后，Broker id 为 0。", []),  # capitalised names break a phrase
    ("覆盖这条消息的 Slave ack。", []),
    ("写进 `master max offset` 与 [mapped file](x.md)。", []),  # code and links are masked
    ("选主（leader election）之后，任期（term）加一。", []),  # glossary terms
])
def test_the_short_phrase_heuristic(text, phrases):
    assert english_phrases(text, glossary_terms()) == phrases


def test_the_glossary_gives_its_english_terms():
    terms = glossary_terms()
    assert {"leader election", "term", "heartbeat", "log replication", "consumer group"} <= set(terms)


RUN_TWIN = TWINS / "03_dledger_election.ipynb"
"""The twin CI runs (in full: about 40 s; a fast run would save only 15 s)."""


def _run_twin_in_full(path: Path, monkeypatch) -> None:
    """``path`` in its own kernel, in full as a learner runs it (in Chinese: the kernel knows its notebook, as
    Jupyter Server tells it), from its own directory (its runs land in
    ``labs/zh-CN/runs``), by the executor of tests/test_labs.py with its English lab's ``VALUES`` appended: no cell
    raises, every value is true (lab 08 has no values: it only runs), and every line its English lab pins on
    text shows in its Chinese form (``test_labs.SAID``)."""
    monkeypatch.delenv("ROCKETLAB_FAST", raising=False)  # the kernel inherits the environment it starts with
    monkeypatch.setenv(language.SESSION_ENV, str(path))  # as Jupyter Server names it: the twin speaks Chinese
    monkeypatch.setattr(test_labs, "LABS", path.parent)  # the kernel's working directory
    nb, values = test_labs._execute(path, timeout=3600)
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]
    assert all(v == "True" for v in values.values()), f"{path.name}: values untrue: {test_labs._untrue(values)}"
    text = test_labs._text_outputs(nb)
    missing = [zh for _, zh in test_labs.SAID.get(path.name, []) if not re.search(zh, text)]
    assert not missing, f"{path.name}: outputs do not show {missing}"


def test_lab03s_twin_runs_in_full(monkeypatch):
    assert test_labs.VALUES[RUN_TWIN.name]
    _run_twin_in_full(RUN_TWIN, monkeypatch)


OTHER_TWINS = [p for p in _twins() if p != RUN_TWIN]


@pytest.mark.slow
@pytest.mark.parametrize("path", OTHER_TWINS, ids=[p.name for p in OTHER_TWINS])
def test_every_twin_runs_in_full(path, monkeypatch):
    """Under ``ROCKETLAB_FULL=1`` every other twin too (lab 07's, with its Spark sweeps, takes the longest)."""
    _run_twin_in_full(path, monkeypatch)
