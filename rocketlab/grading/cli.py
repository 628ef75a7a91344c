"""``rocketlab grade``: grade a lab's exercises, one submission or a directory of them.

Exit codes: 0 every test passed (bulk mode: every submission was graded and the summary written);
1 some test failed; 2 bad usage (unknown lab or test, missing file), with one line on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rocketlab.cli import writable_dir, writable_file
from rocketlab.console import progress
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry
from rocketlab.grading.results import write_results, write_summary_csv
from rocketlab.grading.runner import GradeReport, TestResult, grade


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "grade", help="grade a lab's exercises (Gradescope results.json with --json)",
        description="Run a lab's graded tests on a submission (default: the repo's labs/exercises/ file), "
                    "the kit's own code (--reference), or every submission of a directory (--submissions).")
    p.add_argument("lab", metavar="LAB", help=f"one of {', '.join(registry.LABS)}")
    p.add_argument("--submission", help="the learner's exercise file (default: labs/exercises/labNN_*.py)")
    p.add_argument("--reference", action="store_true", help="grade the kit's own implementation")
    p.add_argument("--only", action="append", metavar="TEST",
                   help="a test (lab03.handle_vote/decision_table) or exercise (lab03.handle_vote); repeatable")
    p.add_argument("--seed", type=int, help="run scenario tests for this seed only (replay a failure)")
    p.add_argument("--json", metavar="FILE", help="write Gradescope's results.json here")
    p.add_argument("--tests", metavar="DIR", help="a directory of extra (hidden) tests, *.py using @graded")
    p.add_argument("--time-limit", type=float, metavar="S", help="at most S seconds per test (default: each test's own)")
    p.add_argument("--submissions", metavar="DIR", help="bulk mode: grade every submission in DIR")
    p.add_argument("--out", metavar="DIR", help="bulk mode: one results.json per submission and summary.csv")
    p.set_defaults(func=run_grade)


def _only(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _line(lab: str, t: TestResult) -> str:
    mark = "PASS" if t.passed else "FAIL"
    first = t.message.splitlines()[0] if t.message else ""
    return f"{mark} {t.score:>4g}/{t.max_score:<4g} {t.name} ({t.duration_s:.1f} s){'' if t.passed else ': ' + first}"


def _print_report(report: GradeReport) -> None:
    for t in report.tests:
        if not t.passed:
            print(f"\n--- {t.name}\n{t.output()}")
    passed = sum(t.passed for t in report.tests)
    print(f"\n{report.lab}: {report.score:g}/{report.max_score:g} points, {passed}/{len(report.tests)} tests "
          f"passed in {report.execution_time_s:.1f} s ({report.submission})")


def run_grade(args: argparse.Namespace) -> int:
    if args.time_limit is not None and args.time_limit <= 0:
        raise RocketlabError(f"--time-limit must be > 0, got {args.time_limit}")
    if args.lab not in registry.LABS:
        raise RocketlabError(f"unknown lab {args.lab!r}; the graded labs are {', '.join(registry.LABS)}")
    if args.submissions or args.out:
        if not (args.submissions and args.out):
            raise RocketlabError("bulk mode needs both --submissions DIR and --out DIR")
        if args.submission or args.reference or args.json:
            raise RocketlabError("--submissions cannot be combined with --submission, --reference or --json")
        return _bulk(args)
    if args.reference and args.submission:
        raise RocketlabError("--reference grades the kit's own code: leave out --submission")
    if args.submission:
        _check_submission(Path(args.submission))
    elif not args.reference:
        default = registry.exercise_file(args.lab)
        if not default.is_file():
            raise RocketlabError(f"no {default.name} here: run `rocketlab grade` inside a workspace (`rocketlab init "
                                 "DIR` makes one), or pass --submission FILE")
    if args.json:
        writable_file(Path(args.json), "--json")
    report = grade(args.lab, args.submission, reference=args.reference, only=_only(args.only), seed=args.seed,
                   tests_dir=args.tests, time_limit_s=args.time_limit, progress=lambda lab, t: print(_line(lab, t), flush=True))
    _print_report(report)
    if args.json:
        print(f"results: {write_results(report, args.json)}")
    return 0 if report.all_passed else 1


def _check_submission(path: Path) -> None:
    """A submission is a Python file (the learner's copy of the lab's exercise module)."""
    if not path.exists():
        raise RocketlabError(f"--submission {path}: no such file")
    if not path.is_file():
        raise RocketlabError(f"--submission {path}: not a file (a directory of submissions goes to --submissions)")
    if path.suffix != ".py":
        raise RocketlabError(f"--submission {path}: not a Python file (.py): submit your copy of the lab's "
                             "exercise module, e.g. labs/exercises/lab03_dledger_election.py")


def _submissions(lab: str, root: Path) -> list[tuple[str, Path]]:
    """``DIR/name.py`` files, or ``DIR/name/<the lab's exercise file>`` directories."""
    if not root.is_dir():
        raise RocketlabError(f"--submissions {root}: not a directory")
    found = [(p.stem, p) for p in sorted(root.glob("*.py"))]
    found += [(d.name, d / registry.LABS[lab][0]) for d in sorted(root.iterdir())
              if d.is_dir() and (d / registry.LABS[lab][0]).is_file()]
    if not found:
        raise RocketlabError(f"--submissions {root}: no *.py files and no */{registry.LABS[lab][0]}")
    return found


def _bulk(args: argparse.Namespace) -> int:
    subs = _submissions(args.lab, Path(args.submissions))
    out = writable_dir(Path(args.out), "--out")
    rows: list[tuple[str, GradeReport]] = []
    with progress(f"grading {args.lab}", len(subs)) as bar:
        for name, path in subs:
            report = grade(args.lab, path, only=_only(args.only), seed=args.seed, tests_dir=args.tests,
                           time_limit_s=args.time_limit)
            write_results(report, out / name / "results.json")
            rows.append((name, report))
            bar.advance()
    summary = write_summary_csv(rows, out / "summary.csv")
    for name, report in rows:
        print(f"{name}: {report.score:g}/{report.max_score:g}")
    print(f"summary: {summary}")
    return 0
