"""Grading speed: time to grade each lab with ``--reference`` on this machine, tests per second, the
slowest scenario test.

Target (issue 11): every lab under 60 s. Baseline measured in the same run: the fixed cost of one
grading (start a worker process, import the kit, run the lab's cheapest unit test), so the figure of a
lab can be split into process overhead and the tests themselves.

    python benchmarks/bench_grade.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.grading import LABS, grade  # noqa: E402
from rocketlab.grading.registry import TESTS, load_builtin  # noqa: E402


def main() -> None:
    load_builtin("lab05")
    start = time.perf_counter()
    grade("lab05", reference=True, only=["lab05.phy_offset/offset_table"])
    overhead = time.perf_counter() - start
    line("baseline: one worker + one unit test", overhead, "s")
    labs, slowest = {}, []
    for lab in LABS:
        start = time.perf_counter()
        report = grade(lab, reference=True)
        wall = time.perf_counter() - start
        assert report.all_passed, f"{lab}: the reference lost points"
        tests = len(report.tests)
        seeds = sum(max(t.seeds_run, 1) for t in report.tests)
        labs[lab] = {"wall_s": round(wall, 2), "tests": tests, "tests_per_s": round(tests / wall, 2),
                     "test_runs_with_seeds": seeds, "under_60_s": wall < 60}
        line(f"{lab} --reference ({tests} tests, {seeds} runs)", wall, "s",
             f"{tests / wall:.1f} tests/s; baseline {overhead:.2f} s; target < 60 s {'met' if wall < 60 else 'MISSED'}")
        slowest += [(t.duration_s, t.name) for t in report.tests]
    slowest.sort(reverse=True)
    for duration, name in slowest[:3]:
        line(f"slow: {name}", duration, "s")
    record("grade", {"baseline_one_unit_test_s": round(overhead, 3), "labs": labs,
                     "slowest_tests": [{"test": n, "s": d} for d, n in slowest[:5]],
                     "tests_total": len(TESTS)})


if __name__ == "__main__":
    main()
