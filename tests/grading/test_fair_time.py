"""Fair time limits (issue 41): a limit counts the submission's own CPU time, not the judge's work or another
program's load; an endless loop still fails fast; a test stopped while the machine is loaded is re-run once
and the report says so; the machine's factor is measured once and cached."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketlab.grading import LABS, fair_time, grade

SOLUTIONS = Path(__file__).parent / "solutions"
HOSTILE = Path(__file__).parent / "hostile"
TABLES = ["lab03.handle_vote/decision_table", "lab03.handle_vote/term_boundaries"]


@pytest.fixture
def neighbours() -> Iterator[list[int]]:
    """Separate processes burning CPU: three per core, so every process here waits for a CPU most of the time."""
    # each in a session of its own: with autogroup scheduling (Linux's default) a session shares the CPUs
    # with other sessions, so burners in the test's own session would not load the sandbox's
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(3 * (os.cpu_count() or 1))]
    time.sleep(0.5)
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def test_a_correct_solution_under_cpu_burning_neighbours_with_a_tight_limit_gets_full_marks(neighbours):
    # lab 03's vote tables: 8,640 + 1,944 cases, each crossing the boundary; a second and a half of the
    # submission's CPU is plenty, whatever the judge and the neighbours take
    report = grade("lab03", SOLUTIONS / LABS["lab03"].exercise_file, only=TABLES, time_limit_s=1.5)
    assert report.score == report.max_score, [(t.name, t.message) for t in report.tests]
    assert all("re-run" not in t.message for t in report.tests)


def test_an_endless_loop_under_load_still_fails_fast_and_says_it_was_re_run(tmp_path, neighbours):
    folder = tmp_path / "submitted"
    folder.mkdir()
    path = folder / LABS["lab05"].exercise_file
    path.write_text((HOSTILE / "loop_mid_test.py").read_text())
    started = time.monotonic()
    report = grade("lab05", path, only=["lab05.phy_offset/offset_table"], time_limit_s=1.0)
    took = time.monotonic() - started
    looped = report.tests[0]
    assert not looped.passed and "of your code's CPU time" in looped.message, looped.message
    # stopped while every process here waited for a CPU most of the time: run once more before it counts
    assert "re-run once: its first run was stopped while the machine was loaded" in looped.message, looped.message
    assert took < 60, f"two runs of a 1 s CPU limit took {took:.0f} s"


def test_the_machine_factor_is_measured_once_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fair_time.forget_calibration()
    try:
        factor = fair_time.machine_factor()
        cached = json.loads((tmp_path / "rocketlab" / "grading-calibration.json").read_text())
        assert cached["key"] == fair_time.machine_key() and cached["reference_cpu_s"] > 0 and factor >= 1
        fair_time.forget_calibration()
        monkeypatch.setattr(fair_time, "measure_reference_cpu", lambda *a: pytest.fail("measured again"))
        assert fair_time.machine_factor() == factor  # read back from the cache, not measured per grading
    finally:
        fair_time.forget_calibration()


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
JUDGE = ("import subprocess, sys, time\n"
         f"child = subprocess.Popen([sys.executable, '-c', {BURN + 'print(1, flush=True); time.sleep(60)'!r}])\n"
         f"{BURN}print(0, flush=True)\ntime.sleep(60)\n")


def test_the_clock_counts_the_processes_below_the_judge_not_the_judge_itself():
    judge = subprocess.Popen([sys.executable, "-c", JUDGE], stdout=subprocess.PIPE, text=True)
    try:
        assert judge.stdout is not None
        said = {judge.stdout.readline().strip(), judge.stdout.readline().strip()}  # both burnt their second
        assert said == {"0", "1"}
        seen = fair_time.usage(judge.pid)
    finally:
        judge.kill()
        judge.wait()
    assert 0.9 <= seen.sandbox_cpu < 1.6, seen  # the child's second (and its start), not the judge's
    assert seen.on_cpu >= 1.9, seen  # every thread's time on a CPU, the judge's included
