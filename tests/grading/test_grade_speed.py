"""Grading's start-up and scratch (issue 41, "fast"): the sandbox's process imports its own modules only, the
judge is forked where that is safe and grades exactly as a fresh one, its files live in memory and go.

Lab 05's and lab 02's files (quick to grade); the hostile corpus (``test_sandbox.py``) runs on the same paths.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rocketlab import plugs
from rocketlab.grading import LABS, grade, runner
from rocketlab.grading.sandbox import Sandbox
from tests.grading.wrong import WRONG

SOLUTIONS = Path(__file__).parent / "solutions"

PROBE = '''
import sys


def grading_modules():
    return sorted(m for m in sys.modules if m.startswith("rocketlab.grading"))


def real_package():
    import rocketlab.grading
    return hasattr(rocketlab.grading, "grade") and sorted(rocketlab.grading.LABS)
'''


def test_the_sandbox_imports_no_suite_and_a_submission_still_gets_the_real_package():
    box = Sandbox("lab05")
    try:
        box.load(PROBE, "probe.py")
        loaded = box.call("grading_modules", ())
        assert set(loaded) == {"rocketlab.grading.sandbox_child",
                               "rocketlab.grading.sandbox_codec", "rocketlab.grading.sandbox_confine"}, loaded
        assert box.call("real_package", ()) == sorted(LABS)
    finally:
        box.stop()


def _verdicts(lab: str, path: Path) -> list[tuple[str, bool, float, str]]:
    return [(t.name, t.passed, t.score, t.message) for t in grade(lab, path).tests]


def test_a_forked_judge_grades_exactly_as_a_fresh_one(tmp_path, monkeypatch):
    wrong = next(w for w in WRONG if w.lab == "lab02")
    files = [("lab05", SOLUTIONS / LABS["lab05"].exercise_file), ("lab02", wrong.write(tmp_path))]
    if not runner.fork_safe():
        pytest.skip("this test process cannot fork its judge (threads, plugs or Spark)")
    forked = [_verdicts(lab, path) for lab, path in files]
    monkeypatch.setenv("ROCKETLAB_GRADER_FORK", "0")
    assert not runner.fork_safe()
    fresh = [_verdicts(lab, path) for lab, path in files]
    assert forked == fresh
    assert all(passed for _, passed, _, _ in forked[0]) and not all(passed for _, passed, _, _ in forked[1])


def test_no_fork_with_a_second_thread_or_a_plugged_function():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not runner.fork_safe()
    finally:
        stop.set()
        thread.join()
    with plugs.plugged({"lab05.phy_offset": lambda pos: pos}):
        assert not runner.fork_safe()


SNOOP = '''
import glob, os


def phy_offset(entry_pos):
    found = []
    for d in glob.glob("/dev/shm/rocketlab-judge-*"):
        try:
            found += os.listdir(d)
        except OSError as e:
            found.append(type(e).__name__)
    print("judge scratch seen:", found)
    return entry_pos


def which_log(offset, divided_commitlog_offset, committed_pos):
    return "dledger"
'''


def test_the_judges_scratch_is_in_memory_out_of_the_sandboxs_reach_and_removed(tmp_path):
    if not runner.MEMORY_SCRATCH.is_dir():
        pytest.skip("no /dev/shm here: the judge keeps its files in the system's temporary directory")
    before = set(runner.MEMORY_SCRATCH.glob("rocketlab-judge-*"))
    folder = tmp_path / "submitted"
    folder.mkdir()
    path = folder / LABS["lab05"].exercise_file
    path.write_text(SNOOP)
    report = grade("lab05", path, only=["lab05.phy_offset/put_and_pull"])
    printed = report.tests[0].printed
    assert "judge scratch seen:" in printed and "commitlog" not in printed and "rocketlab-tmp" not in printed, printed
    assert set(runner.MEMORY_SCRATCH.glob("rocketlab-judge-*")) - before == set()

