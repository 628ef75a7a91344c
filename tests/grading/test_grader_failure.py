"""A grader that cannot start its sandbox is the grader's failure, never a 0 for the submission (issue 41,
deliverable 1): in bulk mode (exit 3, the entry's score empty in ``summary.csv`` and absent from its
``results.json``, the reason in ``note``) and in the Gradescope autograder (no ``results.json``: a failed run,
exit 3, the reason for the staff).

The sandbox is made to fail for real: a directory on ``sys.path`` (``PYTHONPATH``) that the sandbox's user
(``nobody``) may not enter, which the sandbox must expose and cannot. That needs root and namespaces (CI has
both): elsewhere the sandbox runs as the caller and the directory stays readable.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.grading.autograder import GRADER_FAILED
from rocketlab.grading.autograder import main as autograder_main
from rocketlab.grading.registry import LABS
from rocketlab.grading.sandbox import SandboxSetupError, namespaces_available

CHECKOUT = Path(__file__).resolve().parents[2]
SOLUTION = CHECKOUT / "tests" / "grading" / "solutions" / LABS["lab05"].exercise_file


@pytest.fixture
def closed_path(tmp_path, monkeypatch) -> Path:
    """``PYTHONPATH`` holds this checkout and a directory of mode 700 (the grade subprocesses inherit it)."""
    why = None
    if os.geteuid() != 0:
        why = "the sandbox switches to nobody only as root"
    elif not namespaces_available():
        why = "unshare cannot make namespaces here"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(why + ", and CI must show a sandbox failure is never a 0")
        pytest.skip(why)
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    monkeypatch.setenv("PYTHONPATH", f"{CHECKOUT}{os.pathsep}{closed}")
    return closed


def test_bulk_mode_marks_the_entry_and_exits_3(tmp_path, closed_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(SOLUTION, subs / "alice.py")
    (subs / "notes.txt").write_text("not a submission")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--submissions", str(subs),
                          "--out", str(out), "--only", "lab05.which_log/log_table"],
                         capture_output=True, text=True, cwd=CHECKOUT, timeout=300)
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("rocketlab: the grader failed for 1 submission(s) (alice)")
    rows = {r["submission"]: r for r in csv.DictReader((out / "summary.csv").open())}
    alice = rows["alice"]
    assert alice["score"] == alice["max_score"] == alice["passed"] == "", alice
    assert alice["note"].startswith(f"not graded, the grader's failure: {SandboxSetupError.PREFIX}{closed_path}")
    results = json.loads((out / "alice" / "results.json").read_text())
    assert "score" not in results and results["tests"] == [] and results["extra_data"]["graded"] is False
    assert results["output"].startswith(f"lab05: not graded: the grader's failure: {SandboxSetupError.PREFIX}")
    notes = json.loads((out / "notes.txt" / "results.json").read_text())  # the learner's slip: no score either
    assert "score" not in notes and rows["notes.txt"]["score"] == "", rows["notes.txt"]


def test_the_autograder_leaves_no_results_and_fails_the_run(tmp_path, closed_path, capsys):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    shutil.copy(SOLUTION, root / "submission")
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 15, "tests": []}')  # a previous run's, removed
    code = autograder_main(["--root", str(root), "--lab", "lab05"])
    out, err = capsys.readouterr()
    assert code == GRADER_FAILED == 3, out + err
    assert not (root / "results" / "results.json").exists()
    said = f"Not graded, the grader's failure (not the submission's): {SandboxSetupError.PREFIX}{closed_path}"
    assert said in out, out
    assert err.startswith(f"run_autograder: {SandboxSetupError.PREFIX}{closed_path}"), err
