"""rocketlab.console (rich): aligned ASCII tables; a progress bar that redraws only on a terminal; and
results.json checked by jsonschema."""

from __future__ import annotations

import subprocess
import sys

from rocketlab.console import render_table
from rocketlab.grading.results import SCHEMA, validate


def test_tables_align_numbers_right_and_never_wrap():
    rows = [{"node": "n0", "events": 10, "note": "x" * 300}, {"node": "n10", "events": 2, "note": None}]
    lines = render_table(rows, right=["events"]).splitlines()
    assert lines[0].split() == ["node", "events", "note"] and set(lines[1]) == {"-"}
    assert lines[2].startswith("n0        10  xxx") and lines[2].endswith("x" * 10)  # one line, not wrapped
    assert lines[3] == "n10        2"
    assert render_table(rows[:1], ["node"], rule=False, indent=2) == "  node\n  n0"
    assert all(ord(c) < 128 for c in render_table(rows))


PROGRESS = """
from rocketlab.console import progress
with progress("work", 3) as bar:
    for i in range(3):
        bar.log(f"step {i}")
        bar.advance()
"""


def test_the_progress_bar_writes_no_carriage_return_to_a_non_terminal():
    proc = subprocess.run([sys.executable, "-c", PROGRESS], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[:3] == ["step 0", "step 1", "step 2"] and lines[3].startswith("work") and "3/3" in lines[3]


def test_results_are_checked_by_jsonschema_and_each_problem_says_where():
    good = {"score": 3, "execution_time": 1.5, "output": "", "visibility": "visible",
            "tests": [{"name": "t", "score": 3, "max_score": 3, "status": "passed", "output": "", "visibility": "visible"}]}
    assert validate(good) == []
    bad = {**good, "visibility": "sometimes",
           "tests": [{**good["tests"][0], "score": -1, "status": "ok"}, {"name": ""}]}
    problems = validate(bad)
    assert "results.visibility: 'sometimes' is not one of" in "\n".join(problems)
    assert any(p.startswith("results.tests[0].score: -1 is less than the minimum of 0") for p in problems)
    assert any(p.startswith("results.tests[0].status: 'ok' is not one of") for p in problems)
    assert any(p.startswith("results.tests[1]: 'score' is a required property") for p in problems)
    assert SCHEMA["$schema"].endswith("2020-12/schema")
