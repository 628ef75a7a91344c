"""Grading fast again (issue 41): each lab before the trust boundary, with it as it was, and now; lab 03 in bulk.

1. Grading time per lab, same run, in turns: a learner's complete solution (``tests/grading/solutions/``)
   graded by the package as of the commit before the boundary (``2370b80``: the submission imported into
   the worker), as of the commit before issue 41 (``7838882``: the boundary, a round trip per call, per
   table case), as of the speed work's start (``7552338``: table cases in batches, the judge's memo of
   calls, lab 07's Spark sessions started side by side) and by this checkout (the sandbox's process
   imports its own modules only, the judge forked from the grading process where that is safe, the
   judge's files in memory, plain table cases without a call per item, lab 07's frames cached). Each in a
   fresh interpreter (``run_with_package``) after ``from rocketlab.grading import grade``, so all pay the
   same start-up. Targets: at most the pre-boundary time; lab 07 at most 40 s.
2. Bulk mode on lab 03: 12 submissions (8 complete solutions, 2 templates, 2 hostile ones) graded by the
   boundary's commit with ``--jobs 1`` (its default: today's rate) and with ``--jobs`` = cores, by this
   checkout with ``--jobs`` = cores (now the default) and by the pre-boundary commit (its bulk mode had no
   ``--jobs``: one at a time): submissions per minute. Target: at least twice today's rate.

The machine may be shared: the load average before and after is recorded beside the figures.

3. ``--tables ROUNDS``: only the tests batching changes (lab 01's parser reads, lab 02's records, the
   tables of labs 03, 04 and 06), their own time without start-up, the boundary's package and this
   checkout in turns, best of ROUNDS (``grade_speed_tables.json``).

4. ``--same-tests ROUNDS``: each lab on the tests the pre-boundary commit had (the suites grew since),
   every package in turns, best of ROUNDS (``grade_speed_same_tests.json``).

5. ``--pingpong ROUNDS``: what one crossing costs here: a pipe round trip between two processes on one
   CPU (as :mod:`rocketlab.grading.sandbox_cpu` pins the judge and its sandbox) beside the scheduler's
   placement, best of ROUNDS (``grade_speed_pingpong.json``).

    python benchmarks/bench_grade_speed.py [--labs lab03,lab05] [--skip-bulk] [--tables 3] [--same-tests 2]
        [--pingpong 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, line, package_at, record, run_with_package  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.grading import LABS  # noqa: E402

PRE_BOUNDARY = "2370b80"  # the last commit whose worker imported the submission
BOUNDARY = "7838882"  # the boundary as it was before issue 41
SPEED_START = "7552338"  # the batches, the memo and lab 07's sessions side by side: before the speed work
SOLUTIONS = REPO_ROOT / "tests" / "grading" / "solutions"
HOSTILE = REPO_ROOT / "tests" / "grading" / "hostile"
LAB07_TARGET_S = 40.0

CHILD = """
import json, time
from rocketlab.grading import grade
t0 = time.perf_counter()
report = grade({lab!r}, {path!r})
print(json.dumps({{"wall_s": time.perf_counter() - t0, "score": report.score, "max": report.max_score,
                  "tests": len(report.tests)}}))
"""


def graded_package(commit: str | None) -> Path | None:
    """The package to grade with (shared with ``bench_grade_trust.py``): this checkout's (``commit`` None)
    or the one at ``commit`` (None where the history lacks it), seeing this checkout's kit files
    (``data/``, ``labs/``) as a checkout would, its byte code written (every grading process only reads it:
    the grader runs them with PYTHONDONTWRITEBYTECODE=1), so no package pays for compiling in the figures."""
    pkg = REPO_ROOT if commit is None else package_at(commit)
    if pkg is None:
        return None
    for name in ("pyproject.toml", "labs", "data"):
        link = pkg / name
        if pkg != REPO_ROOT and not link.exists():
            link.symlink_to(REPO_ROOT / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(pkg / "rocketlab")], env=env, check=True,
                   capture_output=True)
    return pkg


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def per_lab(labs: list[str], packages: dict[str, Path | None]) -> tuple[dict, list]:
    results, summary = {}, []
    for lab in labs:
        path = str(SOLUTIONS / LABS[lab].exercise_file)
        walls: dict[str, float | None] = {}
        for name, pkg in packages.items():  # in turns, same run
            if pkg is None:
                walls[name] = None
                continue
            try:
                got = run_with_package(pkg, CHILD.format(lab=lab, path=path))
            except RuntimeError as e:
                if name == "now" or "unknown lab" not in str(e):
                    raise
                walls[name] = None  # a lab that package did not have yet (lab 08)
                continue
            assert got["score"] == got["max"], f"{lab} on {name}: the solution lost points"
            walls[name] = round(got["wall_s"], 2)
        results[lab] = {**{f"{k}_s": v for k, v in walls.items()}, "load_avg_1m": _load()}
        now, before, boundary = walls["now"], walls["pre_boundary"], walls["boundary"]
        line(f"{lab} complete solution graded", now, "s",
             f"pre-boundary {before} s, boundary {boundary} s, load {results[lab]['load_avg_1m']}")
        target = LAB07_TARGET_S if lab == "lab07" else None
        summary.append(summary_row(f"{lab}: grading time now", now, "s", before, f"pre-boundary ({PRE_BOUNDARY})"))
        if before:
            summary.append(summary_row(f"{lab}: pre-boundary time over now (target >= 1)", round(before / now, 3), "x",
                                       None, "", target=1.0))
        if walls.get("speed_start"):
            summary.append(summary_row(f"{lab}: the speed work's start over now", round(walls["speed_start"] / now, 3),
                                       "x", None, f"before the speed work ({SPEED_START})"))
        if boundary:
            summary.append(summary_row(f"{lab}: the boundary's time over now", round(boundary / now, 3), "x",
                                       None, f"boundary ({BOUNDARY})"))
        if target:
            summary.append(summary_row(f"{lab}: 40 s over the grading time (target >= 1)", round(target / now, 3),
                                       "x", None, "", target=1.0))
    return results, summary


TABLES = {"lab01": ["lab01.transfer_parser/split_reads", "lab01.transfer_parser/two_connections"],
          "lab02": ["lab02.encode_record/any_message_record"],
          "lab03": ["lab03.handle_vote/decision_table", "lab03.handle_vote/term_boundaries"],
          "lab04": ["lab04.quorum_index/any_marks"], "lab06": ["lab06.elect_master/election_table"]}
TABLE_CHILD = """
import json, time
from rocketlab.grading import grade
report = grade({lab!r}, {path!r}, only={only!r})
print(json.dumps({{"tests_s": sum(t.duration_s for t in report.tests), "passed": report.all_passed}}))
"""


def tables(rounds: int, packages: dict[str, Path | None]) -> tuple[dict, list]:
    """The tests batching changes (tables, a parser's reads), their own time (no start-up), the boundary's
    package and this checkout in turns, ``rounds`` times: the best of each (a shared machine's load adds,
    it never subtracts)."""
    results, summary = {}, []
    for lab, only in TABLES.items():
        path = str(SOLUTIONS / LABS[lab].exercise_file)
        best: dict[str, float] = {}
        for _ in range(rounds):
            for name in ("boundary", "now"):
                got = run_with_package(packages[name], TABLE_CHILD.format(lab=lab, path=path, only=only))
                assert got["passed"], f"{lab} {name}: the solution failed a table"
                best[name] = min(best.get(name, float("inf")), got["tests_s"])
        results[lab] = {"tests": only, "boundary_s": round(best["boundary"], 3), "now_s": round(best["now"], 3),
                        "load_avg_1m": _load()}
        line(f"{lab} tables ({len(only)} tests)", best["now"], "s", f"boundary {best['boundary']:.2f} s")
        summary.append(summary_row(f"{lab}: its tables' time, the boundary's over now", round(best["boundary"] /
                                   max(best["now"], 1e-3), 2), "x", None, f"boundary ({BOUNDARY}), best of {rounds}"))
    return results, summary


NAMES_CHILD = """
import json
from rocketlab.grading import registry
registry.load_builtin({lab!r})
print(json.dumps([t.name for t in registry.tests_of({lab!r})]))
"""
SAME_CHILD = """
import json, resource, time
from rocketlab.grading import grade
def cpu():
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
t0, c0 = time.perf_counter(), cpu()
report = grade({lab!r}, {path!r}, only={only!r})
print(json.dumps({{"wall_s": time.perf_counter() - t0, "cpu_s": cpu() - c0, "passed": report.all_passed,
                  "tests": len(report.tests)}}))
"""
"""One grade in a fresh interpreter: its wall time, and the CPU time of every process it ran (this one, the
judge, the sandboxes, each waited for): the figure a loaded machine barely moves, so it tells a real gap
from a busy neighbour's."""


def same_tests(labs: list[str], rounds: int, packages: dict[str, Path | None]) -> tuple[dict, list]:
    """Each lab graded on the tests the pre-boundary commit had (the suites grew since: lab 04 had 6 tests,
    it has 14), every package in turns, ``rounds`` times: the best of each (load adds, never subtracts)."""
    results, summary = {}, []
    for lab in labs:
        path = str(SOLUTIONS / LABS[lab].exercise_file)
        names = [set(run_with_package(packages[k], NAMES_CHILD.format(lab=lab)))  # type: ignore[arg-type]
                 for k in ("pre_boundary", "now")]
        only = sorted(names[0] & names[1])
        best: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for _ in range(rounds):
            for name, pkg in packages.items():
                if pkg is None:
                    continue
                got = run_with_package(pkg, SAME_CHILD.format(lab=lab, path=path, only=only))
                assert got["passed"], f"{lab} on {name}: the solution failed"
                best[name] = min(best.get(name, float("inf")), got["wall_s"])
                cpu[name] = min(cpu.get(name, float("inf")), got["cpu_s"])
        results[lab] = {"tests": len(only), **{f"{k}_s": round(v, 2) for k, v in best.items()},
                        **{f"{k}_cpu_s": round(v, 2) for k, v in cpu.items()}, "load_avg_1m": _load()}
        line(f"{lab}, the pre-boundary tests ({len(only)})", best["now"], "s",
             ", ".join(f"{k} {v:.2f} s" for k, v in best.items() if k != "now") + f", load {_load()}")
        line(f"{lab}, the pre-boundary tests, CPU of every process", cpu["now"], "s",
             ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items() if k != "now"))
        summary.append(summary_row(f"{lab}: the pre-boundary tests, pre-boundary time over now (target >= 1)",
                                   round(best["pre_boundary"] / best["now"], 3), "x", None, f"best of {rounds}",
                                   target=1.0))
        summary.append(summary_row(f"{lab}: the pre-boundary tests, pre-boundary CPU time over now",
                                   round(cpu["pre_boundary"] / cpu["now"], 3), "x", None, f"best of {rounds}"))
    return results, summary


def _bulk_dir(tmp: Path) -> Path:
    subs = tmp / "subs"
    subs.mkdir()
    good = (SOLUTIONS / LABS["lab03"].exercise_file).read_text()
    template = (REPO_ROOT / "labs" / "exercises" / LABS["lab03"].exercise_file).read_text()
    for i in range(8):
        (subs / f"learner{i:02d}.py").write_text(good)
    for i in range(2):
        (subs / f"template{i}.py").write_text(template)
    for name in ("always_equal", "garbage_channel"):
        (subs / f"hostile_{name}.py").write_text((HOSTILE / f"{name}.py").read_text())
    return subs


def _bulk_once(pkg: Path, subs: Path, out: Path, jobs: int | None) -> float:
    """One bulk grading; ``jobs`` None: a package without ``--jobs`` (one submission at a time)."""
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab03", "--submissions", str(subs),
                          "--out", str(out), *([] if jobs is None else ["--jobs", str(jobs)])], capture_output=True,
                         text=True, cwd=pkg, env={**os.environ, "PYTHONPATH": str(pkg)}, timeout=3600)
    wall = time.perf_counter() - t0
    if not (out / "summary.csv").is_file():
        raise RuntimeError(f"bulk grading on {pkg} failed: {run.stderr[-2000:]}")
    return wall


def bulk(packages: dict[str, Path | None]) -> tuple[dict, list]:
    cores = os.cpu_count() or 1
    tmp = Path(tempfile.mkdtemp(prefix="rocketlab-bench-bulk-"))
    try:
        subs = _bulk_dir(tmp)
        n = len(list(subs.iterdir()))
        # the pre-boundary commit's bulk mode had no --jobs: it grades one submission at a time
        runs = [("boundary", 1), ("now", cores), ("boundary", cores), ("speed_start", cores), ("pre_boundary", None)]
        results: dict = {"submissions": n, "cores": cores}
        for name, jobs in runs:
            pkg = packages[name]
            if pkg is None:
                continue
            load = _load()
            wall = _bulk_once(pkg, subs, tmp / f"out-{name}-{jobs}", jobs)
            jobs = jobs or 1
            results[f"{name}_jobs_{jobs}"] = {"wall_s": round(wall, 2), "submissions_per_min": round(n / wall * 60, 2),
                                              "load_avg_1m_before": load}
            line(f"bulk lab03, {n} submissions, {name} --jobs {jobs}", wall, "s",
                 f"{n / wall * 60:.1f} submissions/min (load {load})")
        now = results[f"now_jobs_{cores}"]["submissions_per_min"]
        today = results.get("boundary_jobs_1", {}).get("submissions_per_min")
        today_cores = results.get(f"boundary_jobs_{cores}", {}).get("submissions_per_min")
        pre = results.get("pre_boundary_jobs_1", {}).get("submissions_per_min")
        summary = [summary_row(f"bulk lab03: submissions per minute, --jobs {cores} (now the default)", now,
                               "submissions/min", today, f"boundary ({BOUNDARY}), its default --jobs 1",
                               target=2.0, target_on="ratio")]
        if today_cores:
            summary.append(summary_row(f"bulk lab03: submissions per minute, --jobs {cores}, against the boundary's "
                                       f"at --jobs {cores}", now, "submissions/min", today_cores,
                                       f"boundary ({BOUNDARY}), --jobs {cores}"))
        if pre:
            summary.append(summary_row(f"bulk lab03: submissions per minute, --jobs {cores}, against pre-boundary",
                                       now, "submissions/min", pre, f"pre-boundary ({PRE_BOUNDARY}), one at a time "
                                       "(it had no --jobs)"))
        return results, summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


PINGPONG_ROUNDS = 20_000


def _pingpong(pin: int | None) -> float:
    """Microseconds per round trip of one byte between two processes on pipes: both on CPU ``pin``, or
    where the scheduler puts them (None)."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    allowed = os.sched_getaffinity(0)
    pid = os.fork()
    if pid == 0:
        try:
            if pin is not None:
                os.sched_setaffinity(0, {pin})
            while (data := os.read(a_r, 1)) != b"q":
                os.write(b_w, data)
        finally:
            os._exit(0)
    try:
        if pin is not None:
            os.sched_setaffinity(0, {pin})
        t0 = time.perf_counter()
        for _ in range(PINGPONG_ROUNDS):
            os.write(a_w, b"x")
            os.read(b_r, 1)
        took = time.perf_counter() - t0
    finally:
        os.write(a_w, b"q")
        os.waitpid(pid, 0)
        os.sched_setaffinity(0, allowed)
        for fd in (a_r, a_w, b_r, b_w):
            os.close(fd)
    return took / PINGPONG_ROUNDS * 1e6


def pingpong(rounds: int) -> tuple[dict, list]:
    """A crossing's cost on this machine, the judge and the sandbox on one CPU (as ``sandbox_cpu`` pins
    them) beside two processes the scheduler places, best of ``rounds`` each, in turns."""
    best = {"one_cpu_us": float("inf"), "scheduler_us": float("inf")}
    cpu = min(os.sched_getaffinity(0))
    for _ in range(rounds):
        best["one_cpu_us"] = min(best["one_cpu_us"], _pingpong(cpu))
        best["scheduler_us"] = min(best["scheduler_us"], _pingpong(None))
    line("a round trip on one CPU", best["one_cpu_us"], "us", f"scheduler's placement {best['scheduler_us']:.1f} us")
    summary = [summary_row("pipe round trip, one CPU (the judge and its sandbox pinned)", round(best["one_cpu_us"], 1),
                           "us", round(best["scheduler_us"], 1), f"best of {rounds}")]
    return {k: round(v, 1) for k, v in best.items()} | {"rounds": PINGPONG_ROUNDS, "load_avg_1m": _load()}, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labs", default=",".join(LABS), help="labs to time (default: all)")
    parser.add_argument("--skip-bulk", action="store_true")
    parser.add_argument("--record", default="grade_speed", help="the results' name (default grade_speed)")
    parser.add_argument("--tables", type=int, metavar="ROUNDS",
                        help="only the tests batching changes, best of ROUNDS (grade_speed_tables.json)")
    parser.add_argument("--same-tests", type=int, metavar="ROUNDS",
                        help="each lab on the tests the pre-boundary commit had, best of ROUNDS "
                             "(grade_speed_same_tests.json)")
    parser.add_argument("--pingpong", type=int, metavar="ROUNDS",
                        help="only a pipe round trip on one CPU beside two, best of ROUNDS (grade_speed_pingpong.json)")
    args = parser.parse_args()
    if args.pingpong:
        result, summary = pingpong(args.pingpong)
        record("grade_speed_pingpong", result, summary)
        return
    labs = [lab for lab in args.labs.split(",") if lab]
    packages = {"pre_boundary": graded_package(PRE_BOUNDARY), "boundary": graded_package(BOUNDARY),
                "speed_start": graded_package(SPEED_START), "now": graded_package(None)}
    for name, pkg in packages.items():
        if pkg is None:
            print(f"no same-run {name} figures: the history lacks its commit")
    load_before = _load()
    if args.same_tests:
        same_results, same_summary = same_tests(labs, args.same_tests, packages)
        record("grade_speed_same_tests", {"labs": same_results, "pre_boundary_commit": PRE_BOUNDARY,
                                          "boundary_commit": BOUNDARY, "speed_start_commit": SPEED_START,
                                          "rounds": args.same_tests, "load_avg_1m_at_start": load_before,
                                          "load_avg_1m_at_end": _load()}, same_summary)
        return
    if args.tables:
        table_results, table_summary = tables(args.tables, packages)
        record("grade_speed_tables", {"labs": table_results, "boundary_commit": BOUNDARY, "rounds": args.tables,
                                      "load_avg_1m_at_start": load_before, "load_avg_1m_at_end": _load()},
               table_summary)
        return
    results, summary = per_lab(labs, packages)
    doc: dict = {"labs": results, "pre_boundary_commit": PRE_BOUNDARY, "boundary_commit": BOUNDARY,
                 "speed_start_commit": SPEED_START, "load_avg_1m_at_start": load_before}
    if not args.skip_bulk:
        bulk_results, bulk_summary = bulk(packages)
        doc["bulk_lab03"] = bulk_results
        summary += bulk_summary
    doc["load_avg_1m_at_end"] = _load()
    doc["note"] = "the machine is shared with other work: load averages are recorded beside the figures"
    record(args.record, doc, summary)
    print(json.dumps(doc["labs"]))


if __name__ == "__main__":
    main()
