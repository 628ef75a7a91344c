"""What the grader's trust boundary costs (issue 30), and bulk grading's throughput.

1. Grading time per lab, before and after the boundary, same run: a learner's complete solution
   (``tests/grading/solutions/``) graded by the package as of the commit before the boundary (the
   submission imported into the worker, its functions called in-process) and by this checkout (the
   judge calls them in a sandbox process, every call a round trip on a pipe). Each in a fresh
   interpreter (``run_with_package``), so both pay the same start-up.
2. Bulk mode: 20 submissions of lab 05 (12 complete solutions, 4 templates, 4 hostile ones from
   ``tests/grading/hostile/``) with ``--jobs 1`` and ``--jobs 2`` (the machine has 2 cores): submissions per
   minute, ``--jobs 1`` the baseline.

    python benchmarks/bench_grade_trust.py [--labs lab03,lab05] [--skip-bulk]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, line, record, run_with_package  # noqa: E402
from bench_grade_speed import CHILD, HOSTILE, SOLUTIONS, graded_package  # noqa: E402
from bench_grade_speed import PRE_BOUNDARY as BEFORE  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.grading import LABS  # noqa: E402


def per_lab(labs: list[str]) -> tuple[dict, list]:
    before_pkg = graded_package(BEFORE)
    results, summary = {}, []
    for lab in labs:
        path = str(SOLUTIONS / LABS[lab].exercise_file)
        after = run_with_package(REPO_ROOT, CHILD.format(lab=lab, path=path))
        assert after["score"] == after["max"], f"{lab}: the solution lost points behind the boundary"
        before = run_with_package(before_pkg, CHILD.format(lab=lab, path=path)) if before_pkg else None
        results[lab] = {"after_s": round(after["wall_s"], 2), "before_s": round(before["wall_s"], 2) if before else None,
                        "tests": after["tests"]}
        note = f"before {before['wall_s']:.1f} s (x{after['wall_s'] / before['wall_s']:.2f})" if before else \
            "no same-run before: the history lacks " + BEFORE
        line(f"{lab} solution behind the boundary", after["wall_s"], "s", note)
        summary.append(summary_row(f"{lab}: grading time behind the boundary", round(after["wall_s"], 2), "s",
                                   round(before["wall_s"], 2) if before else None, f"in-process worker ({BEFORE})"))
    return results, summary


def bulk(jobs_list: tuple[int, ...] = (1, 2)) -> tuple[dict, list]:
    tmp = Path(tempfile.mkdtemp(prefix="rocketlab-bench-bulk-"))
    try:
        subs = tmp / "subs"
        subs.mkdir()
        good = (SOLUTIONS / LABS["lab05"].exercise_file).read_text()
        template = (REPO_ROOT / "labs" / "exercises" / LABS["lab05"].exercise_file).read_text()
        for i in range(12):
            (subs / f"learner{i:02d}.py").write_text(good)
        for i in range(4):
            (subs / f"template{i}.py").write_text(template)
        for name in ("always_equal", "garbage_channel", "code_swap", "forged_events"):
            (subs / f"hostile_{name}.py").write_text((HOSTILE / f"{name}.py").read_text())
        results, walls = {}, {}
        for jobs in jobs_list:
            out = tmp / f"out{jobs}"
            t0 = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--submissions", str(subs),
                                  "--out", str(out), "--jobs", str(jobs)], capture_output=True, text=True,
                                 cwd=REPO_ROOT, timeout=3600)
            wall = time.perf_counter() - t0
            if run.returncode != 0:
                raise RuntimeError(f"bulk grading failed: {run.stderr[-2000:]}")
            rows = (out / "summary.csv").read_text().splitlines()
            assert len(rows) == 21, rows
            walls[jobs] = wall
            results[f"jobs_{jobs}"] = {"wall_s": round(wall, 2), "submissions_per_min": round(20 / wall * 60, 2)}
            line(f"bulk lab05, 20 submissions, --jobs {jobs}", wall, "s", f"{20 / wall * 60:.1f} submissions/min")
        summary = [summary_row("bulk lab05: submissions per minute, --jobs 2", round(20 / walls[2] * 60, 2),
                               "submissions/min", round(20 / walls[1] * 60, 2), "--jobs 1")]
        results["submissions"] = {"complete": 12, "templates": 4, "hostile": 4}
        return results, summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labs", default=",".join(LABS), help="labs to time (default: all)")
    parser.add_argument("--skip-bulk", action="store_true")
    args = parser.parse_args()
    labs = [lab for lab in args.labs.split(",") if lab]
    results, summary = per_lab(labs)
    doc: dict = {"labs": results, "before_commit": BEFORE}
    if not args.skip_bulk:
        bulk_results, bulk_summary = bulk()
        doc["bulk_lab05"] = bulk_results
        summary += bulk_summary
    record("grade_trust", doc, summary)
    print(json.dumps(doc["labs"]))


if __name__ == "__main__":
    main()
