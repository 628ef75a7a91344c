"""The instructor's side of the written questions: one HTML answer sheet per learner, one CSV to fill in.

``rocketlab collect LAB --submissions DIR --out OUT`` collects the questions of any lab, lab 00's included (a
lab of questions and no exercise, which ``rocketlab grade`` does not take); bulk grading (``rocketlab grade LAB
--submissions DIR``) collects them too, beside the exercises' grade. For each learner whose submission holds
the lab's notebook (``name.ipynb``, ``name/NN_topic.ipynb`` or a bundle ``name.zip``) it writes
``OUT/<name>/answers.html`` and, for the class, ``OUT/questions.csv`` (a row per learner: a column per written
question, empty, for the points you give; a column per check, its score). The checks' points also join a
graded learner's ``results.json`` as tests named ``labNN.questions/<grade id>``.

An answer sheet is one self-contained page (``templates/answers.html.j2``): styles inline, no script, nothing
fetched (its Content-Security-Policy is ``default-src 'none'``, images ``data:`` only), so it opens offline
and prints as one document. Each question's prompt, the learner's answer, the model answer folded below it,
each check's result. Markdown is rendered by markdown-it-py; the learner's answers with their HTML escaped
(an answer is text, never markup that runs in the grader's browser) and an image other than a ``data:`` one
shown as its address. rocketlab's own addition: no Java class is modelled.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from rocketlab.cli_support import writable_dir
from rocketlab.errors import RocketlabError
from rocketlab.grading.bundle import BundleError, lab_files, open_bundle, question_labs
from rocketlab.grading.questions import (
    ANSWER_STUB,
    MODEL_ANSWER_OPENS,
    CheckResult,
    NotebookError,
    Question,
    grade_checks,
    questions,
    read_notebook,
    written_answers,
)
from rocketlab.grading.runner import TestResult
from rocketlab.i18n import _, language, ngettext
from rocketlab.templating import Markup, render
from rocketlab.workspace import kit_root


def source_notebook(lab: str, source_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The source notebook of ``lab`` (from ``source_dir``, default the kit's ``labs/``) when it has
    questions, else None."""
    where = Path(source_dir) if source_dir is not None else kit_root() / "labs"
    if source_dir is not None and not where.is_dir():
        raise RocketlabError(_("--source {path}: not a directory").format(path=where))
    name = lab_files(lab).notebook
    path = where / name
    if not path.is_file():
        if source_dir is not None:
            raise RocketlabError(_("--source {path}: no {name} in it").format(path=where, name=name))
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
        return None, _("questions not collected: {why}").format(why=str(e).replace(str(notebook.parent) + "/", ""))
    checks = grade_checks(source_nb, learner)
    write_answer_sheet(answer_sheet(lab, who, source_nb, learner, checks), sheet)
    return checks, ""


# --- the answer sheet ----------------------------------------------------------------------------------

def markdown_html(text: str, *, trusted: bool) -> Markup:
    """``text`` (Markdown) as HTML: ``trusted`` (the course's source) keeps its HTML, else it is escaped;
    an image is kept only as ``data:`` (nothing fetched), else shown as its address."""
    md = MarkdownIt("commonmark", {"html": trusted}).enable("table")

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        if src.startswith("data:image/"):
            return str(renderer.image(tokens, idx, options, env))
        alt = renderer.renderInlineAsText(token.children or [], options, env)
        return f"<code>[image: {_escape(alt)} ({_escape(src)})]</code>"

    md.add_render_rule("image", image)
    return Markup(md.render(text))  # markdown-it escaped what it did not render


def _escape(text: str) -> str:
    return str(Markup.escape(text))


def _model(answer: str) -> Markup:
    body = answer.strip()
    for opening in MODEL_ANSWER_OPENS:
        if body.startswith(opening):
            body = body.removeprefix(opening).removesuffix("</details>").strip()
    return markdown_html(body, trusted=True)


def answer_sheet(lab: str, who: str, source_nb: dict[str, Any], learner_nb: dict[str, Any],
                 checks: list[CheckResult]) -> str:
    """The answer sheet, one HTML page: each question with the learner's answer, or the check's result."""
    given = written_answers(learner_nb)
    by_id = {c.grade_id: c for c in checks}
    rows = []
    for q in questions(source_nb):
        row: dict[str, Any] = {"grade_id": q.grade_id, "kind": q.kind,
                               "points": ngettext("{n} point", "{n} points", 1 if q.points == 1 else 2).format(
                                   n=f"{q.points:g}"),
                               "prompt": markdown_html(q.prompt, trusted=True)}
        if q.kind == "written":
            answer = given.get(q.grade_id, "").strip()
            row["answer"] = markdown_html(answer, trusted=False) if answer and answer != ANSWER_STUB else None
            row["model"] = _model(q.answer)
        else:
            check = by_id.get(q.grade_id)
            row["result"] = f"{check.score:g}/{check.points:g}: {check.message}" if check else _("not graded")
            row["status"] = "passed" if check and check.score == check.points else "failed"
        rows.append(row)
    return render("rocketlab.grading", "answers.html.j2", lang=language(), lab=lab, who=who, questions=rows,
                  written=sum(q["kind"] == "written" for q in rows), checks=bool(checks),
                  check_score=f"{sum(c.score for c in checks):g}", check_points=f"{sum(c.points for c in checks):g}")


def write_answer_sheet(html: str, path: Path) -> Path:
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


# --- rocketlab collect ----------------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "collect", help=_("collect a class's written answers: one HTML answer sheet per learner and questions.csv"),
        description=_("Collect the questions of LAB (any lab, lab00 included) from every learner's notebook in "
                      "DIR: name.ipynb, name/NN_topic.ipynb or a bundle name.zip (docs: instructors.md)."))
    p.add_argument("lab", metavar="LAB", help=_("a lab with questions: lab00 to lab07"))
    p.add_argument("--submissions", metavar="DIR", required=True, help=_("the learners' notebooks or bundles"))
    p.add_argument("--out", metavar="DIR", required=True, help=_("OUT/<name>/answers.html and OUT/questions.csv"))
    p.add_argument("--source", metavar="DIR", help=_("the course's source notebooks (default: the kit's labs)"))
    p.set_defaults(func=cmd_collect)


@dataclass
class Handed:
    """One learner's entry in ``--submissions DIR``: their notebook, or why there is none."""

    name: str
    notebook: Path | None
    note: str = ""


def cmd_collect(args: argparse.Namespace) -> int:
    files = lab_files(args.lab)
    source = source_notebook(args.lab, args.source)
    if source is None:
        raise RocketlabError(_("{notebook} has no question cells to collect (labs with questions: {labs})").format(
            notebook=files.notebook, labs=", ".join(_labs_with_questions())))
    root = Path(args.submissions)
    out = writable_dir(Path(args.out), "--out")
    rows: list[tuple[str, list[CheckResult] | None, str]] = []
    with tempfile.TemporaryDirectory(prefix="rocketlab-collect-") as scratch:
        for entry in handed_in(args.lab, root, Path(scratch)):
            checks, why = None, entry.note
            if entry.notebook is not None:
                checks, why = grade_questions(args.lab, source, entry.notebook, entry.name,
                                              out / entry.name / "answers.html")
            rows.append((entry.name, checks, why))
            said = _("{score}/{points} in checks").format(score=f"{sum(c.score for c in checks):g}",
                                                           points=f"{sum(c.points for c in checks):g}") \
                if checks is not None else why
            print(f"{entry.name}: {said}")
    print(_("questions: {path} ({learners} learners, {sheets} answer sheets)").format(
        path=write_questions_csv(source, rows, out / "questions.csv"), learners=len(rows),
        sheets=sum(c is not None for _who, c, _why in rows)))
    return 0 if all(c is not None for _who, c, _why in rows) else 1


def _labs_with_questions() -> list[str]:
    return [lab for lab in question_labs() if source_notebook(lab) is not None]


def handed_in(lab: str, root: Path, scratch: Path) -> list[Handed]:
    """Every entry of ``root`` with the lab's notebook found in it (bundles opened into ``scratch``), or why not."""
    if not root.is_dir():
        raise RocketlabError(_("--submissions {path}: not a directory").format(path=root))
    name = lab_files(lab).notebook
    children = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    if not children:
        raise RocketlabError(_("--submissions {path}: empty (expected *.ipynb, */{name} or *.zip bundles)").format(
            path=root, name=name))
    stems = [p.stem for p in children]
    found = []
    for p in children:
        who = p.name if stems.count(p.stem) > 1 else p.stem  # alice.ipynb beside alice/: each kept, named apart
        found.append(_entry(lab, p, who, name, scratch))
    return found


def _entry(lab: str, p: Path, who: str, name: str, scratch: Path) -> Handed:
    if p.is_file() and p.suffix == ".ipynb":
        return Handed(who, p)
    if p.is_dir():
        nb = p / name
        return Handed(who, nb) if nb.is_file() else Handed(who, None, _("no {name} in {where}").format(
            name=name, where=p.name + "/"))
    if p.is_file() and p.suffix == ".zip":
        try:
            got = open_bundle(p, lab, scratch / p.name, need_exercise=False).notebook
        except BundleError as e:
            return Handed(who, None, _("not collected: {why}").format(why=e))
        return Handed(who, got) if got is not None else Handed(who, None, _("no {name} in {where}").format(
            name=name, where=p.name))
    return Handed(who, None, _("not collected: {name} is not a notebook (.ipynb), a folder or a bundle (.zip)").format(
        name=p.name))
