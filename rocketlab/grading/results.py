"""Results files: Gradescope's ``results.json`` shape, its schema check, and the bulk CSV summary.

Gradescope's autograder reads ``/autograder/results/results.json``: a top-level ``score`` and
``execution_time``, and ``tests[]`` each with ``name``, ``score``, ``max_score``, ``status``, ``output``
and ``visibility``. Built-in tests are ``visible``; an instructor's hidden tests (``--tests DIR``) are
``after_published``, so learners see them only once grades are published and never see their code.
With hidden tests, what a learner sees at once says nothing of them: the summary line and
``extra_data`` count the public tests only, and the top-level ``score`` is left out (Gradescope then
totals the tests). Nothing of the grader's paths is written: the submission is named by its file name.
A submission that could not be graded (bulk mode's entry with nothing gradable, or the grader's failure) gets
a results file with no score at all (``extra_data.graded`` false and why), never a 0 that reads as a grade.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from rocketlab.grading.runner import GradeReport
from rocketlab.i18n import _

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Gradescope autograder results (the fields rocketlab writes)",
    "type": "object",
    "required": ["execution_time", "output", "visibility", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": {"enum": list(VISIBILITIES)},
        "stdout_visibility": {"enum": list(VISIBILITIES)},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "score", "max_score", "status", "output", "visibility"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "number": {"type": "string"},
                "score": {"type": "number", "minimum": 0},
                "max_score": {"type": "number", "minimum": 0},
                "status": {"enum": ["passed", "failed"]},
                "output": {"type": "string"},
                "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
                "visibility": {"enum": list(VISIBILITIES)},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra_data": {"type": "object"},
            },
        }},
    },
}


def gradescope(report: GradeReport) -> dict[str, Any]:
    """``report`` as Gradescope's results.json."""
    tests = []
    for i, t in enumerate(report.tests, 1):
        tests.append({"name": t.name, "number": f"{report.lab[3:].lstrip('0') or '0'}.{i}", "score": t.score,
                      "max_score": t.max_score, "status": "passed" if t.passed else "failed",
                      "output": t.output(), "output_format": "text",
                      "visibility": "after_published" if t.hidden else "visible",
                      "tags": [t.exercise, t.kind],
                      "extra_data": {"seed": t.seed, "seeds_run": t.seeds_run, "duration_s": t.duration_s}})
    public = [t for t in report.tests if not t.hidden]
    score = round(sum(t.score for t in public), 6)
    max_score = round(sum(t.max_score for t in public), 6)
    passed = sum(t.passed for t in public)
    name = Path(report.submission).name if report.submission != "reference" else "reference"
    what = _("public tests: ") if len(public) < len(report.tests) else ""
    summary = _("{lab}: {what}{score}/{max_score} points, {passed}/{tests} tests passed ({name})").format(
        lab=report.lab, what=what, score=f"{score:g}", max_score=f"{max_score:g}", passed=passed, tests=len(public),
        name=name)
    data: dict[str, Any] = {"execution_time": report.execution_time_s, "output": summary,
                            "output_format": "text", "visibility": "visible", "stdout_visibility": "hidden",
                            "extra_data": {"lab": report.lab, "max_score": max_score}, "tests": tests}
    if len(public) == len(report.tests):
        data = {"score": report.score, **data}
    return data


def ungraded(lab: str, why: str) -> dict[str, Any]:
    """The results.json of a submission that could not be graded: no score (not 0), saying why."""
    why = why.removeprefix("not graded").lstrip(":, ")
    return {"execution_time": 0, "output": f"{lab}: not graded: {why}", "output_format": "text",
            "visibility": "visible", "stdout_visibility": "hidden",
            "extra_data": {"lab": lab, "graded": False, "why": why}, "tests": []}


def write_ungraded(lab: str, why: str, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(ungraded(lab, why), indent=2) + "\n")
    return out


def validate(results: dict[str, Any]) -> list[str]:
    """Problems of ``results`` against :data:`SCHEMA` (empty when it is valid), checked by ``jsonschema``;
    each names where it is (``results.tests[0].score: -1 is less than the minimum of 0``)."""
    import jsonschema  # lazy: 0.9 s to import, and every rocketlab command would pay it

    validator = jsonschema.Draft202012Validator(SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(results), key=lambda e: list(map(str, e.absolute_path))):
        where = "results" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append(f"{where}: {error.message}")
    return problems


def write_results(report: GradeReport, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = gradescope(report)
    problems = validate(data)
    if problems:  # a bug of ours, never the learner's
        raise AssertionError(f"results.json does not match the schema: {problems}")
    out.write_text(json.dumps(data, indent=2) + "\n")
    return out


def write_summary_csv(rows: list[tuple[str, GradeReport | None, str]] | list[tuple[str, GradeReport]],
                      path: str | Path) -> Path:
    """One row per submission (the instructor's file: hidden tests included): its name, score, max score,
    tests passed, then one column per test, then ``note`` (why it was not graded, a name clash). An entry that
    could not be graded has every score empty, not 0."""
    out = Path(path)
    full = [(r[0], r[1], r[2] if len(r) > 2 else "") for r in rows]  # type: ignore[misc]
    names: list[str] = []
    for _name, report, _note in full:
        for t in (report.tests if report else []):
            if t.name not in names:
                names.append(t.name)
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "score", "max_score", "passed", "tests", *names, "note"])
        for who, report, note in full:
            if report is None:  # not graded: no score at all, never a 0 that reads as a graded zero
                w.writerow([who, "", "", "", "", *("" for _ in names), note])
                continue
            scores = {t.name: t.score for t in report.tests}
            w.writerow([who, f"{report.score:g}", f"{report.max_score:g}", sum(t.passed for t in report.tests),
                        len(report.tests), *(f"{scores[n]:g}" if n in scores else "" for n in names), note])
    return out
