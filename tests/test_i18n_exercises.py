"""The Chinese exercise templates (labs/exercises/zh-CN/): twins of the English ones with the same code
(compared as syntax trees without docstrings; comments are not in the tree), their prose in Chinese, and
``rocketlab init --lang zh-CN`` putting them where the grader and ``check()`` look."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from rocketlab import workspace
from rocketlab.kitfiles import exercise_twin
from tests.i18n_support import IDEOGRAPH as CJK
from tests.i18n_support import no_language_set  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "labs" / "exercises"
TEMPLATES = sorted(p.name for p in EXERCISES.glob("lab0[1-8]_*.py"))


pytestmark = pytest.mark.usefixtures("no_language_set")


def _code_only(source: str) -> str:
    """The module's syntax tree with every docstring removed (comments never reach the tree)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def _docstrings(source: str) -> list[str]:
    tree = ast.parse(source)
    return [d for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (d := ast.get_docstring(node)) is not None]


def test_every_template_has_a_chinese_twin_and_no_twin_is_an_orphan():
    twins = sorted(p.name for p in (EXERCISES / "zh-CN").glob("*.py"))
    assert twins == TEMPLATES


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_twin_has_the_same_code_and_chinese_prose(name):
    english = (EXERCISES / name).read_text(encoding="utf-8")
    chinese = (EXERCISES / "zh-CN" / name).read_text(encoding="utf-8")
    assert _code_only(chinese) == _code_only(english), f"{name}: the twins' code differs (docstrings aside)"
    docs_en, docs_zh = _docstrings(english), _docstrings(chinese)
    assert len(docs_zh) == len(docs_en), f"{name}: a docstring is missing on one side"
    untranslated = [d.splitlines()[0] for d in docs_zh if not CJK.search(d)]
    assert not untranslated, f"{name}: docstrings with no Chinese: {untranslated}"


def test_the_twin_paths_map_to_the_english_ones():
    rel = "labs/exercises/lab03_dledger_election.py"
    assert exercise_twin(rel, "en") == rel
    assert exercise_twin(rel, "zh-CN") == "labs/exercises/zh-CN/lab03_dledger_election.py"
    assert exercise_twin("labs/exercises/zh-CN/lab03_dledger_election.py", "zh-CN") is None
    assert exercise_twin("labs/03_dledger_election.ipynb", "zh-CN") == "labs/03_dledger_election.ipynb"


def test_init_lang_zh_cn_puts_the_chinese_templates_where_the_grader_looks(tmp_path):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws, lang="zh-CN")
    for name in TEMPLATES:
        assert (ws / "labs" / "exercises" / name).read_bytes() == (EXERCISES / "zh-CN" / name).read_bytes()
    assert not (ws / "labs" / "exercises" / "zh-CN").exists()
    # a learner's edit is kept when the language changes; an untouched template follows the language
    mine = ws / "labs" / "exercises" / TEMPLATES[0]
    mine.write_text(mine.read_text(encoding="utf-8") + "\n# 我的笔记\n", encoding="utf-8")
    report = workspace.init_workspace(ws, lang="en")
    assert f"labs/exercises/{TEMPLATES[0]}" in report.kept
    for name in TEMPLATES[1:]:
        assert (ws / "labs" / "exercises" / name).read_bytes() == (EXERCISES / name).read_bytes()
    assert json.loads((ws / workspace.MARKER).read_text(encoding="utf-8"))["lang"] == "en"


def test_an_english_workspace_gets_the_english_templates(tmp_path):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws)
    for name in TEMPLATES:
        assert (ws / "labs" / "exercises" / name).read_bytes() == (EXERCISES / name).read_bytes()
    assert not (ws / "labs" / "exercises" / "zh-CN").exists()
