"""Question cells: the labs' written questions and auto-graded checks, in nbgrader's cell metadata.

A lab notebook is the course's one source (docs/instructors.md, "A course from one source"). Its
questions are cells marked the way nbgrader marks them (``metadata.nbgrader``, schema version 3), so
an nbgrader user reads them as they would their own, and ``rocketlab assign`` makes the student version:

===================  =========  ===============================================  ==============================
cell                 type       ``metadata.nbgrader``                            in the student version
===================  =========  ===============================================  ==============================
prompt               markdown   ``locked: true``, grade/solution false,          kept
                                ``grade_id: "<id>-prompt"``
written answer       markdown   ``grade: true, solution: true, points: P``,      "YOUR ANSWER HERE" (or only the
(graded by hand)                ``grade_id: "<id>"``; source: the model answer   ``### BEGIN/END SOLUTION`` part)
check answer         code       ``solution: true, grade: false``,                ``name = ...`` (otter's
(auto-graded)                   ``grade_id: "<id>"``; ``name = 3  # SOLUTION``   ``# SOLUTION`` line)
check test           code       ``grade: true, solution: false, locked: true,    the ``### BEGIN/END HIDDEN
                                points: P``, ``grade_id: "<id>-test"``           TESTS`` part removed
===================  =========  ===============================================  ==============================

A check is graded without running the learner's notebook: each top-level assignment of the learner's
answer cells is read as a literal (numbers, strings, lists, arithmetic on numbers), and the instructor's
whole test cell (its hidden asserts included) runs on those values alone. Written answers are collected
for grading by hand (:mod:`rocketlab.grading.collect`). rocketlab's own addition: no Java class modelled.
"""

from __future__ import annotations

import ast
import copy
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.i18n import _

SCHEMA_VERSION = 3
"""nbgrader's cell-metadata schema version."""
ANSWER_STUB = "YOUR ANSWER HERE"
"""What replaces a written answer in the student version (nbgrader's ``text_stub``)."""
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
"""What replaces a ``### BEGIN SOLUTION`` region of code (nbgrader's ``code_stub``)."""
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
NOT_ANSWERED_IMPORT = "from rocketlab.labs_support.answers import not_answered"
"""The first visible line of a check's test cell: the line it prints while unanswered comes from the catalogue
(:func:`rocketlab.labs_support.answers.not_answered`), so a lab's Chinese twin, with the same cell, says it in
Chinese."""
SOLUTION_LINE = re.compile(r"^(?P<indent>\s*)(?P<target>[A-Za-z_]\w*)\s*=.*#\s*SOLUTION\s*$")
"""otter-grader's one-line solution: ``x = 3  # SOLUTION`` becomes ``x = ...``."""
ANSWERS_DETAILS = re.compile(r"\n*<details>\s*<summary>\s*(?:Answers?\b|答案).*?</details>\s*", re.S | re.I)
"""A folded block of answers in a markdown cell: ``<details>`` whose summary says "Answers" (a zh-CN twin's:
"答案")."""
MODEL_ANSWER_OPEN = "<details><summary>Answer</summary>"
MODEL_ANSWER_OPENS = (MODEL_ANSWER_OPEN, "<details><summary>答案</summary>")
"""How a model answer opens, in each language's twin."""
"""How a model answer opens in the source (folded: the kit's own notebooks are also read alone)."""
MAX_ANSWER_CHARS = 10_000
"""A check answer cell longer than this is not read (the values are meant to be short)."""


class NotebookError(RocketlabError):
    """A notebook that cannot be read (broken JSON, not a notebook) or whose question cells are malformed."""


@dataclass
class Question:
    """One graded question of a source notebook: a written answer or a check (its test cell)."""

    grade_id: str
    kind: str  # "written" | "check"
    points: float
    prompt: str
    answer: str  # the model answer (written) or the whole test source (check)


@dataclass
class CheckResult:
    """One check graded on a learner's notebook."""

    grade_id: str
    points: float
    score: float
    message: str


# --- reading -------------------------------------------------------------------------------------------

def read_notebook(path: Path) -> dict[str, Any]:
    """The notebook at ``path`` as JSON (nbformat 4), or a one-line :class:`NotebookError`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise NotebookError(_("{path}: cannot read: {why}").format(path=path, why=e.strerror or e)) from None
    except UnicodeDecodeError:
        raise NotebookError(_("{path}: not a Jupyter notebook (not UTF-8 text)").format(path=path)) from None
    except ValueError as e:
        raise NotebookError(_("{path}: not a Jupyter notebook (broken JSON: {why})").format(path=path, why=e)) from None
    if not (isinstance(data, dict) and isinstance(data.get("cells"), list) and data.get("nbformat") == 4):
        raise NotebookError(_("{path}: not a Jupyter notebook (no nbformat 4 cells list)").format(path=path))
    for i, cell in enumerate(data["cells"]):
        if not (isinstance(cell, dict) and cell.get("cell_type") in ("markdown", "code", "raw")):
            raise NotebookError(_("{path}: cell {i} is not a notebook cell").format(path=path, i=i))
    return data


def dumps_notebook(nb: dict[str, Any]) -> str:
    """A notebook as nbformat writes it (one-space indent, UTF-8 kept)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def source(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def _set_source(cell: dict[str, Any], text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)


def meta(cell: dict[str, Any]) -> dict[str, Any]:
    found = cell.get("metadata", {}).get("nbgrader")
    return found if isinstance(found, dict) else {}


def kind(cell: dict[str, Any]) -> str | None:
    """``prompt``, ``written``, ``answer`` (a check's answer), ``test`` (a check's test) or None."""
    m = meta(cell)
    if not m:
        return None
    grade, solution, code = bool(m.get("grade")), bool(m.get("solution")), cell["cell_type"] == "code"
    if solution and grade and not code:
        return "written"
    if solution and not grade and code:
        return "answer"
    if grade and not solution and code:
        return "test"
    if m.get("locked") and not grade and not solution:
        return "prompt"
    return None


def questions(nb: dict[str, Any], where: str = "notebook") -> list[Question]:
    """The graded questions of a source notebook, in order; each prompt is the locked cell ``<id>-prompt``
    (else the markdown cell just before). Duplicate grade ids and missing points are errors."""
    cells = nb["cells"]
    prompts = {meta(c).get("grade_id"): source(c) for c in cells if kind(c) == "prompt"}
    found: list[Question] = []
    seen: set[str] = set()
    for i, cell in enumerate(cells):
        k = kind(cell)
        if k not in ("written", "test"):
            continue
        m = meta(cell)
        gid = m.get("grade_id")
        points = m.get("points")
        if not isinstance(gid, str) or not gid:
            raise NotebookError(f"{where}: cell {i} is graded but has no nbgrader grade_id")
        if gid in seen:
            raise NotebookError(f"{where}: grade_id {gid!r} is used twice")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or points < 0:
            raise NotebookError(f"{where}: {gid}: points must be a number >= 0, got {points!r}")
        seen.add(gid)
        base = gid.removesuffix("-test")
        before = next((source(c) for c in reversed(cells[:i]) if c["cell_type"] == "markdown"), "")
        prompt = prompts.get(f"{base}-prompt", before)
        found.append(Question(base if k == "test" else gid, "check" if k == "test" else "written", float(points),
                              prompt, source(cell)))
    return found


# --- the student version -------------------------------------------------------------------------------

def _regions(text: str, begin: str, end: str, stub: Callable[[str], str | None], where: str) -> str:
    """``text`` with every ``begin``..``end`` region replaced by ``stub(indent)`` (None: removed)."""
    out: list[str] = []
    inside: str | None = None
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if bare == begin:
            if inside is not None:
                raise NotebookError(f"{where}: {begin} inside another {begin}")
            inside = line[:len(line) - len(line.lstrip())]
            continue
        if bare == end:
            if inside is None:
                raise NotebookError(f"{where}: {end} without {begin}")
            replacement = stub(inside)
            if replacement is not None:
                out.append(replacement)
            inside = None
            continue
        if inside is None:
            out.append(line)
    if inside is not None:
        raise NotebookError(f"{where}: {begin} without {end}")
    return "".join(out)


def strip_code(text: str, where: str = "code") -> str:
    """Code without its solutions and hidden tests (nbgrader's and otter's markers)."""
    def code_stub(indent: str) -> str:
        return "".join(f"{indent}{line}\n" for line in CODE_STUB.splitlines())

    text = _regions(text, BEGIN_SOLUTION, END_SOLUTION, code_stub, where)
    text = _regions(text, BEGIN_HIDDEN, END_HIDDEN, lambda _: None, where)
    lines = []
    for line in text.splitlines(keepends=True):
        m = SOLUTION_LINE.match(line.rstrip("\n"))
        lines.append(f"{m['indent']}{m['target']} = ...\n" if m else line)
    return "".join(lines)


def strip_markdown(text: str, where: str = "markdown") -> str:
    """Markdown without its ``<details>`` answers and ``### BEGIN/END SOLUTION`` parts."""
    text = _regions(text, BEGIN_SOLUTION, END_SOLUTION, lambda _: ANSWER_STUB + "\n", where)
    return ANSWERS_DETAILS.sub("\n", text).rstrip("\n")


def student_notebook(nb: dict[str, Any], where: str = "notebook") -> dict[str, Any]:
    """The student version of a source notebook: written answers become the stub, check answers ``x = ...``,
    hidden tests and ``<details>`` answers go, outputs are cleared; the cells keep their nbgrader metadata."""
    questions(nb, where)  # the question cells are well formed
    out = copy.deepcopy(nb)
    for i, cell in enumerate(out["cells"]):
        text, k, at = source(cell), kind(cell), f"{where}: cell {i}"
        if k == "written":
            text = strip_markdown(text, at) if BEGIN_SOLUTION in text else ANSWER_STUB
        elif cell["cell_type"] == "markdown":
            text = strip_markdown(text, at)
        elif cell["cell_type"] == "code":
            text = strip_code(text, at)
            cell["outputs"], cell["execution_count"] = [], None
        _set_source(cell, text)
    return out


# --- a learner's notebook ------------------------------------------------------------------------------

def written_answers(nb: dict[str, Any]) -> dict[str, str]:
    """The learner's written answers by grade id."""
    return {meta(c)["grade_id"]: source(c) for c in nb["cells"]
            if kind(c) == "written" and isinstance(meta(c).get("grade_id"), str)}


_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def literal(node: ast.expr) -> Any:
    """The value of a literal expression: ``ast.literal_eval``'s, plus + - * / // % on numbers."""
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = literal(node.left), literal(node.right)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            raise ValueError("arithmetic on numbers only")
        if isinstance(node.op, ast.Mult) and (abs(left) > 1e12 or abs(right) > 1e12):
            raise ValueError("numbers too big")
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        value = literal(node.operand)
        if not isinstance(value, (int, float)):
            raise ValueError("arithmetic on numbers only")
        return _OPERATORS[type(node.op)](value)
    return ast.literal_eval(node)


def answer_values(nb: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The values the learner's check answers assign (``name = literal``), and, per grade id, why an
    answer cell could not be read. The learner's code is parsed, never run."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for cell in nb["cells"]:
        if kind(cell) != "answer":
            continue
        gid, text = str(meta(cell).get("grade_id", "?")), source(cell)
        if len(text) > MAX_ANSWER_CHARS:
            problems[gid] = f"the answer cell holds {len(text):,} characters (at most {MAX_ANSWER_CHARS:,})"
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            problems[gid] = f"the answer cell is not valid Python (line {e.lineno}: {e.msg})"
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    values[stmt.targets[0].id] = literal(stmt.value)
                except (ValueError, TypeError, SyntaxError, ZeroDivisionError, OverflowError, RecursionError,
                        MemoryError):
                    problems[gid] = (f"{stmt.targets[0].id} is not a plain value (write a number, a string or "
                                     "a list, e.g. answer = 3)")
    return values, problems


def grade_checks(source_nb: dict[str, Any], learner_nb: dict[str, Any]) -> list[CheckResult]:
    """Each check of the source graded on the learner's answers: the instructor's whole test cell runs on
    the values the learner's answer cells assign (nothing of the learner's runs)."""
    values, problems = answer_values(learner_nb)
    results = []
    for q in questions(source_nb):
        if q.kind != "check":
            continue
        if q.grade_id in problems:
            results.append(CheckResult(q.grade_id, q.points, 0.0, problems[q.grade_id]))
            continue
        namespace = {**copy.deepcopy(values), "print": _quiet}
        try:
            exec(compile(q.answer, f"<{q.grade_id}-test>", "exec"), namespace)  # noqa: S102 - the instructor's test
        except AssertionError as e:
            results.append(CheckResult(q.grade_id, q.points, 0.0, str(e) or "not the expected answer"))
        except NameError as e:
            results.append(CheckResult(q.grade_id, q.points, 0.0, f"no answer ({e})"))
        except Exception as e:  # noqa: BLE001 - the learner's value broke the test (a wrong type): wrong
            results.append(CheckResult(q.grade_id, q.points, 0.0, f"{type(e).__name__}: {e}"))
        else:
            results.append(CheckResult(q.grade_id, q.points, q.points, "correct"))
    return results


def _quiet(*_args: Any, **_kwargs: Any) -> None:
    """``print`` while a test cell is graded: its hints are for the learner's notebook, not the grader's log."""


# --- writing question cells (for authors) --------------------------------------------------------------

def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
                         "solution": solution, "task": False}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _markdown(text: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": metadata["nbgrader"]["grade_id"], "metadata": metadata,
            "source": text.splitlines(keepends=True)}


def _code(text: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "id": metadata["nbgrader"]["grade_id"],
            "metadata": metadata, "outputs": [], "source": text.splitlines(keepends=True)}


def written_question(grade_id: str, prompt: str, answer: str, points: float = 1) -> list[dict[str, Any]]:
    """The two cells of a question graded by hand: the locked prompt and the answer: the model answer in the
    source, folded (``<details>``) for whoever reads the source to study alone; the learner writes theirs in
    its place in the student version."""
    answer = f"{MODEL_ANSWER_OPEN}\n\n{answer.strip()}\n\n</details>"
    return [_markdown(prompt, _nbgrader(f"{grade_id}-prompt", grade=False, solution=False, locked=True)),
            _markdown(answer, _nbgrader(grade_id, grade=True, solution=True, locked=False, points=points))]


def check_question(grade_id: str, prompt: str, name: str, answer: Any, test: str,
                   points: float = 1) -> list[dict[str, Any]]:
    """The three cells of an auto-graded check: the locked prompt, the answer cell
    (``name = answer  # SOLUTION``) and the test cell, whose ``test`` is hidden from learners
    (``### BEGIN/END HIDDEN TESTS``) after three visible lines that say, in the reader's language, when no
    answer was given yet (they print, never raise: the student version runs top to bottom)."""
    if not name.isidentifier():
        raise ValueError(f"check {grade_id}: {name!r} is not a Python name")
    test_source = f"{NOT_ANSWERED_IMPORT}\nif {name} is ...:\n    print(not_answered({grade_id!r}))\n" \
                  f"{BEGIN_HIDDEN}\n{test.strip()}\n{END_HIDDEN}"
    return [_markdown(prompt, _nbgrader(f"{grade_id}-prompt", grade=False, solution=False, locked=True)),
            _code(f"{name} = {answer!r}  # SOLUTION", _nbgrader(grade_id, grade=False, solution=True, locked=False)),
            _code(test_source, _nbgrader(f"{grade_id}-test", grade=True, solution=False, locked=True, points=points))]
