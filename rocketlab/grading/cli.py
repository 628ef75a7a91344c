"""``rocketlab grade``: grade a lab's exercises, one submission or a directory of them.

Exit codes: 0 every test passed (bulk mode: every submission was graded and the summary written);
1 some test failed (bulk mode: some entry had nothing gradable; the summary says why); 2 bad usage (unknown
lab or test, missing file), with one line on stderr; 3 the grader failed (its sandbox could not be set up;
bulk mode: for some entry, which then has no score and says so in ``note``): no score, one line on stderr.

``--stress N`` in bulk mode stresses every submission (each scenario test for seeds ``0..N-1``, to its first
failing seed), as it does one: what an instructor asks for when looking for the solutions that pass only on
the usual seeds; the summary's scores are then the stress run's, not the published grading's.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.cli_support import writable_dir, writable_file
from rocketlab.console import progress
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry
from rocketlab.grading.bundle import open_bundle, question_labs
from rocketlab.grading.collect import check_tests, grade_questions, source_notebook, write_questions_csv
from rocketlab.grading.collect import register as register_collect
from rocketlab.grading.questions import CheckResult
from rocketlab.grading.results import write_results, write_summary_csv, write_ungraded
from rocketlab.grading.runner import GradeReport, TestResult, grade
from rocketlab.grading.sandbox import SandboxSetupError
from rocketlab.grading.sandbox_static import similarity
from rocketlab.i18n import _


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "grade", help=_("grade a lab's exercises (Gradescope results.json with --json)"),
        description=_("Run a lab's graded tests on a submission (default: the repo's labs/exercises/ file), "
                    "the kit's own code (--reference), or every submission of a directory (--submissions)."))
    p.add_argument("lab", metavar="LAB", help=_("one of {labs}").format(labs=", ".join(registry.LABS)))
    p.add_argument("--submission", help=_("the learner's exercise file (default: labs/exercises/labNN_*.py)"))
    p.add_argument("--reference", action="store_true", help=_("grade the kit's own implementation"))
    p.add_argument("--only", action="append", metavar="TEST",
                   help=_("a test (lab03.handle_vote/decision_table) or exercise (lab03.handle_vote); repeatable"))
    p.add_argument("--seed", type=int, help=_("run scenario tests for this seed only (replay a failure)"))
    p.add_argument("--stress", type=int, metavar="N", help=_("run every scenario test for seeds 0..N-1, to the first "
                                                           "failing one (its replay line is printed; bulk mode: every submission)"))
    p.add_argument("--json", metavar="FILE", help=_("write Gradescope's results.json here"))
    p.add_argument("--tests", metavar="DIR", help=_("a directory of extra (hidden) tests, *.py using @graded"))
    p.add_argument("--time-limit", type=float, metavar="S", help=_("at most S seconds per test (default: each test's own)"))
    p.add_argument("--submissions", metavar="DIR", help=_("bulk mode: grade every submission in DIR"))
    p.add_argument("--out", metavar="DIR", help=_("bulk mode: one results.json per submission and summary.csv"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help=_("bulk mode: grade N submissions at once (default: this machine's cores)"))
    p.add_argument("--source", metavar="DIR", help=_("bulk mode: the course's source notebooks, whose questions "
                                                   "the learners' notebooks answer (default: the kit's labs)"))
    p.set_defaults(func=run_grade)
    register_collect(subparsers)  # `rocketlab collect`: the written questions of any lab, lab00's included


def _only(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _line(lab: str, t: TestResult) -> str:
    mark = _("PASS") if t.passed else _("FAIL")
    first = t.message.splitlines()[0] if t.message else ""
    return f"{mark} {t.score:>4g}/{t.max_score:<4g} {t.name} ({t.duration_s:.1f} s){'' if t.passed else ': ' + first}"


def _print_report(report: GradeReport) -> None:
    for t in report.tests:
        if not t.passed:
            print(f"\n--- {t.name}\n{t.output()}")
    passed = sum(t.passed for t in report.tests)
    print("\n" + _("{lab}: {score}/{max_score} points, {passed}/{tests} tests passed in {seconds} s ({submission})")
          .format(lab=report.lab, score=f"{report.score:g}", max_score=f"{report.max_score:g}", passed=passed,
                  tests=len(report.tests), seconds=f"{report.execution_time_s:.1f}", submission=report.submission))


def run_grade(args: argparse.Namespace) -> int:
    if args.time_limit is not None and args.time_limit <= 0:
        raise RocketlabError(_("--time-limit must be > 0, got {value}").format(value=args.time_limit))
    if args.stress is not None and args.stress < 1:
        raise RocketlabError(_("--stress must be at least 1 seed, got {value}").format(value=args.stress))
    if args.lab not in registry.LABS:
        if args.lab in question_labs():
            raise RocketlabError(_("{lab} has questions but no exercise to grade: collect its answers with "
                                   "`rocketlab collect {lab} --submissions DIR --out DIR`").format(lab=args.lab))
        raise RocketlabError(_("unknown lab {lab!r}; the graded labs are {labs}").format(
            lab=args.lab, labs=", ".join(registry.LABS)))
    if args.submissions or args.out:
        if not (args.submissions and args.out):
            raise RocketlabError(_("bulk mode needs both --submissions DIR and --out DIR"))
        if args.submission or args.reference or args.json:
            raise RocketlabError(_("--submissions cannot be combined with --submission, --reference or --json"))
        return _bulk(args)
    if args.source:
        raise RocketlabError(_("--source reads the learners' notebooks in bulk mode: add --submissions DIR --out DIR"))
    if args.reference and args.submission:
        raise RocketlabError(_("--reference grades the kit's own code: leave out --submission"))
    if args.submission:
        _check_submission(Path(args.submission))
        if Path(args.submission).suffix == ".zip":  # a bundle (`rocketlab submit`): grade its exercise file
            with tempfile.TemporaryDirectory(prefix="rocketlab-bundle-") as scratch:
                args.submission = str(open_bundle(Path(args.submission), args.lab, Path(scratch)).exercise)
                return _grade_single(args)
    return _grade_single(args)


def _grade_single(args: argparse.Namespace) -> int:
    if not args.submission and not args.reference:
        default = registry.exercise_file(args.lab)
        if not default.is_file():
            raise RocketlabError(_("no {name} here: run `rocketlab grade` inside a workspace (`rocketlab init "
                                   "DIR` makes one), or pass --submission FILE").format(name=default.name))
    if args.json:
        writable_file(Path(args.json), "--json")
    try:
        report = grade(args.lab, args.submission, reference=args.reference, only=_only(args.only), seed=args.seed,
                       tests_dir=args.tests, time_limit_s=args.time_limit, stress=args.stress,
                       progress=lambda lab, t: print(_line(lab, t), flush=True),
                       hide=[args.json, Path(args.json).resolve().parent] if args.json else None)
    except SandboxSetupError as e:  # the grader's failure: no score, not a 0
        print(f"rocketlab: {e}", file=sys.stderr)
        return 3
    _print_report(report)
    if args.json:
        print(_("results: {path}").format(path=write_results(report, args.json)))
    return 0 if report.all_passed else 1


def _check_submission(path: Path) -> None:
    """A submission is a Python file (the learner's copy of the lab's exercise module)."""
    if not path.exists():
        raise RocketlabError(_("--submission {path}: no such file").format(path=path))
    if not path.is_file():
        raise RocketlabError(_("--submission {path}: not a file (a directory of submissions goes to --submissions)")
                             .format(path=path))
    if path.suffix not in (".py", ".zip"):
        raise RocketlabError(_("--submission {path}: not a Python file (.py) or a bundle (.zip): submit your copy "
                               "of the lab's exercise module, e.g. labs/exercises/lab03_dledger_election.py")
                             .format(path=path))


@dataclass
class Entry:
    """One thing found in ``--submissions DIR``: a submission to grade (``path``) or why it cannot be."""

    name: str
    path: Path | None
    note: str = ""
    notebook: Path | None = None
    """The lab's notebook beside the exercise file (a folder's, a bundle's): its questions are collected."""
    checks: list[CheckResult] | None = None
    grader_failed: bool = False
    """Not graded for a failure of the grader's (its sandbox could not start, a crash), not the submission's."""
    questions_problem: str = ""
    """Why the notebook's questions were not collected (it could not be read), else empty."""


def _submissions(lab: str, root: Path) -> list[Entry]:
    """Every entry of ``DIR``: ``name.py`` files, ``name/<the lab's exercise file>`` directories and
    ``name.zip`` bundles are graded; anything else is listed with the reason it was not (a summary accounts
    for every learner)."""
    if not root.is_dir():
        raise RocketlabError(_("--submissions {path}: not a directory").format(path=root))
    wanted = registry.LABS[lab].exercise_file
    children = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    if not children:
        raise RocketlabError(_("--submissions {path}: empty (expected *.py files or */{wanted})").format(
            path=root, wanted=wanted))
    stems = [p.stem for p in children if p.is_file() and p.suffix == ".py"]
    dirs = {p.name for p in children if p.is_dir()}
    entries = []
    for p in children:
        if p.is_file() and p.suffix == ".py":
            clash = p.stem in dirs
            note = _("name clash: {file} and {folder}/ are both here; both graded").format(file=p.name, folder=p.stem)
            entries.append(Entry(p.name if clash else p.stem, p, note if clash else ""))
        elif p.is_file() and p.suffix == ".zip":
            entries.append(Entry(p.stem if p.stem not in dirs and p.stem not in stems else p.name, p))
        elif p.is_dir():
            clash = p.name in stems
            name = f"{p.name}/" if clash else p.name
            note = _("name clash: {file} and {folder}/ are both here; both graded").format(
                file=p.name + ".py", folder=p.name) if clash else ""
            if (p / wanted).is_file():
                notebook = p / registry.LABS[lab].notebook
                entries.append(Entry(name, p / wanted, note, notebook if notebook.is_file() else None))
            else:
                inside = sorted(q.name for q in p.iterdir())[:5]
                entries.append(Entry(name, None, _("not graded: no {wanted} in {folder}/ (it holds: {inside})").format(
                    wanted=wanted, folder=p.name, inside=", ".join(inside) or _("nothing")) + ("; " + note if note else "")))
        else:
            entries.append(Entry(p.name, None, _("not graded: {name} is not a Python file (.py), a bundle (.zip) or "
                                                 "a directory").format(name=p.name)))
    return entries


def _grade_one(args: argparse.Namespace, entry: Entry, out: Path) -> tuple[Entry, GradeReport | None]:
    if entry.path is None:
        return entry, None
    with tempfile.TemporaryDirectory(prefix="rocketlab-bundle-") as scratch:
        try:
            path = entry.path
            if path.suffix == ".zip":
                unpacked = open_bundle(path, args.lab, Path(scratch))
                path, entry.notebook = unpacked.exercise, unpacked.notebook
            report = grade(args.lab, path, only=_only(args.only), seed=args.seed, tests_dir=args.tests,
                           time_limit_s=args.time_limit, stress=args.stress, hide=[out, Path(args.submissions)])
        except SandboxSetupError as e:  # the grader's failure: marked so, no score
            entry.note, entry.grader_failed = _("not graded, the grader's failure: {why}").format(why=e), True
            return entry, None
        except RocketlabError as e:
            entry.note = _("not graded: {why}").format(why=e)
            return entry, None
        except Exception as e:  # noqa: BLE001 - one submission's trouble never stops the class's grading
            entry.note = _("not graded, the grader's failure: {why}").format(why=f"{type(e).__name__}: {str(e)[:300]}")
            entry.grader_failed = True
            return entry, None
        if entry.notebook is not None and args.question_source is not None:
            entry.checks, problem = grade_questions(args.lab, args.question_source, entry.notebook, entry.name,
                                                    out / _folder(entry.name) / "answers.html")
            report.tests.extend(check_tests(args.lab, entry.checks or []))
            entry.note = "; ".join(n for n in (entry.note, problem) if n)
            entry.questions_problem = problem
    return entry, report


def _bulk(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise RocketlabError(_("--jobs must be >= 1, got {value}").format(value=args.jobs))
    entries = _submissions(args.lab, Path(args.submissions))
    out = writable_dir(Path(args.out), "--out")
    args.question_source = source_notebook(args.lab, args.source)
    done: dict[str, tuple[Entry, GradeReport | None]] = {}
    with progress(_("grading {lab}").format(lab=args.lab), len(entries)) as bar, \
            ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in as_completed([pool.submit(_grade_one, args, e, out) for e in entries]):
            entry, report = future.result()
            done[entry.name] = (entry, report)
            folder = out / _folder(entry.name)
            if report is not None:
                write_results(report, folder / "results.json")
            else:
                write_ungraded(args.lab, entry.note, folder / "results.json")
            bar.advance()
    rows = [done[e.name] for e in entries]
    summary = write_summary_csv([(e.name, r, e.note) for e, r in rows], out / "summary.csv")
    _similarity_csv(args.lab, [e for e, r in rows if r is not None], out / "similarity.csv")
    if args.question_source is not None:
        write_questions_csv(args.question_source, [(e.name, e.checks, _no_questions(e, r)) for e, r in rows],
                            out / "questions.csv")
    for entry, report in rows:
        print(f"{entry.name}: " + (f"{report.score:g}/{report.max_score:g}" if report else "-")
              + (f" ({entry.note})" if entry.note else ""))
    print(_("summary: {path}").format(path=summary))
    failed = [e.name for e, _ in rows if e.grader_failed]
    if failed:
        print("rocketlab: " + _("the grader failed for {n} submission(s) ({names}): not graded, no score; fix the "
                                "cause (see note in summary.csv) and grade them again").format(
                                    n=len(failed), names=", ".join(failed[:5])), file=sys.stderr)
        return 3
    return 0 if all(r is not None for _, r in rows) else 1


def _similarity_csv(lab: str, entries: list[Entry], path: Path) -> None:
    """The instructor's plagiarism pointer: each graded submission's exercises against the kit's references
    (normalised AST similarity, 0..1; see docs/grading-trust.md)."""

    exercises = [e for e in registry.EXERCISES if e.startswith(lab + ".")]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", *exercises])
        for entry in entries:
            assert entry.path is not None
            source = entry.path.read_text(errors="replace")
            w.writerow([entry.name, *("" if (v := similarity(source, e)) is None else f"{v:.3f}" for e in exercises)])


def _no_questions(entry: Entry, report: GradeReport | None) -> str:
    """Why an entry's questions were not collected (empty when they were)."""
    if entry.checks is not None:
        return ""
    if entry.path is None or report is None:
        return _("not graded")
    if entry.notebook is None:
        return _("no notebook in the submission")
    return entry.questions_problem


def _folder(name: str) -> str:
    return name.rstrip("/")
