"""The instructor's side of the written questions: one HTML answer sheet per learner, one CSV to fill in.

For each learner whose submission holds the lab's notebook, bulk mode writes ``OUT/<name>/answers.html``
(nbconvert's HTML of a small notebook: each written question's prompt, the learner's answer, the model
answer folded below it, and each check's result) and ``OUT/questions.csv`` (a row per learner: a column per
written question, empty, for the points you give; a column per check, its score). The checks' points also
join the learner's ``results.json`` as tests named ``labNN.questions/<grade id>``.
rocketlab's own addition: no Java class is modelled.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.grading.questions import (
    ANSWER_STUB,
    MODEL_ANSWER_OPEN,
    CheckResult,
    NotebookError,
    Question,
    grade_checks,
    questions,
    read_notebook,
    written_answers,
)
from rocketlab.grading.registry import LABS
from rocketlab.grading.runner import TestResult
from rocketlab.workspace import kit_root


def source_notebook(lab: str, source_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The source notebook of ``lab`` (from ``source_dir``, default the kit's ``labs/``) when it has
    questions, else None."""
    where = Path(source_dir) if source_dir is not None else kit_root() / "labs"
    if source_dir is not None and not where.is_dir():
        raise RocketlabError(f"--source {where}: not a directory")
    path = where / LABS[lab].notebook
    if not path.is_file():
        if source_dir is not None:
            raise RocketlabError(f"--source {where}: no {LABS[lab].notebook} in it")
        return None
    nb = read_notebook(path)
    return nb if questions(nb, str(path)) else None


def grade_questions(lab: str, source_nb: dict[str, Any], notebook: Path, who: str,
                    sheet: Path) -> tuple[list[CheckResult] | None, str]:
    """Grade the checks of a learner's notebook and write their answer sheet; (None, why) when the
    notebook cannot be read (the exercise's grade stands)."""
    try:
        learner = read_notebook(notebook)
    except NotebookError as e:
        return None, f"questions not collected: {str(e).replace(str(notebook.parent) + '/', '')}"
    checks = grade_checks(source_nb, learner)
    write_answer_sheet(answer_sheet(lab, who, source_nb, learner, checks), sheet)
    return checks, ""


def _cell(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _model(answer: str) -> str:
    body = answer.strip()
    if body.startswith(MODEL_ANSWER_OPEN):
        body = body.removeprefix(MODEL_ANSWER_OPEN).removesuffix("</details>").strip()
    return f"<details><summary>Model answer</summary>\n\n{body}\n\n</details>"


def answer_sheet(lab: str, who: str, source_nb: dict[str, Any], learner_nb: dict[str, Any],
                 checks: list[CheckResult]) -> dict[str, Any]:
    """The answer sheet as a notebook: a title, then each question with the learner's answer."""
    given = written_answers(learner_nb)
    cells = [_cell(f"# {lab}: {who}\n\nWritten answers to grade by hand; the checks were graded automatically.")]
    by_id = {c.grade_id: c for c in checks}
    for q in questions(source_nb):
        points = f"{q.points:g} point{'s' if q.points != 1 else ''}"
        cells.append(_cell(f"## {q.grade_id} ({points})\n\n{q.prompt}"))
        if q.kind == "written":
            answer = given.get(q.grade_id, "").strip()
            shown = answer if answer and answer != ANSWER_STUB else "*(no answer)*"
            cells.append(_cell(f"**{who}'s answer:**\n\n{shown}"))
            cells.append(_cell(_model(q.answer)))
        else:
            check = by_id.get(q.grade_id)
            said = f"{check.score:g}/{check.points:g}: {check.message}" if check else "not graded"
            cells.append(_cell(f"**Check:** {said}"))
    for i, cell in enumerate(cells):
        cell["id"] = f"sheet-{i}"
    return {"cells": cells, "metadata": {"title": f"{lab} {who}"}, "nbformat": 4, "nbformat_minor": 5}


def write_answer_sheet(sheet: dict[str, Any], path: Path) -> Path:
    """The sheet as one HTML file (nbconvert's classic template: styles inline)."""
    import nbformat  # lazy: the notebook libraries take a second to import
    from nbconvert import HTMLExporter  # lazy: as above

    node = nbformat.from_dict(sheet)
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(node)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def check_tests(lab: str, checks: list[CheckResult]) -> list[TestResult]:
    """The checks as graded tests of the learner's report (``labNN.questions/<grade id>``)."""
    return [TestResult(name=f"{lab}.questions/{c.grade_id}", exercise=f"{lab}.questions", kind="question",
                       max_score=c.points, score=c.score, passed=c.score == c.points, message=c.message)
            for c in checks]


def write_questions_csv(source_nb: dict[str, Any], rows: list[tuple[str, list[CheckResult] | None, str]],
                        path: Path) -> Path:
    """A row per learner: each written question's column empty (yours to fill), each check's score; a
    learner whose notebook is missing or unreadable has every column empty and the reason (``rows``: name,
    checks or None, why not)."""
    qs: list[Question] = questions(source_nb)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", *(f"{q.grade_id} ({q.points:g})" for q in qs), "note"])
        for who, checks, why in rows:
            if checks is None:
                w.writerow([who, *("" for _ in qs), why])
                continue
            scores = {c.grade_id: f"{c.score:g}" for c in checks}
            w.writerow([who, *(scores.get(q.grade_id, "") for q in qs), ""])
    return path
