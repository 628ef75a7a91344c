"""``rocketlab mutate``: the automatic mutation run works end to end on one tiny exercise with a small
budget (the full run is not part of CI; its report is benchmarks/results/mutation.json)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

from rocketlab.grading.mutation import build, mutants_of, scope
from rocketlab.grading.registry import EXERCISES

ROOT = Path(__file__).resolve().parents[2]


def mutate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocketlab.cli", "mutate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_every_mutant_of_every_exercise_builds_and_differs_from_the_reference():
    for exercise in EXERCISES:
        found = mutants_of(exercise)
        assert found, exercise
        _, parts = scope(exercise)
        assert {m.description.split(":")[0] for m in found} <= {name for name, _, _ in parts}
        reference = EXERCISES[exercise].reference
        for m in found[:: max(1, len(found) // 12)]:  # a spread of each exercise's mutants
            mutated = build(m)
            assert callable(mutated) and mutated is not reference
            if inspect.isfunction(reference) and m.description.startswith(parts[0][0] + ":"):
                code, ref = mutated.__code__, reference.__code__
                assert (code.co_code, code.co_consts) != (ref.co_code, ref.co_consts), m


def test_a_mutation_run_on_one_exercise_reports_the_share_killed(tmp_path):
    out = tmp_path / "mutation.json"
    run = mutate("lab05.phy_offset", "--budget", "120", "--limit", "20", "--json", str(out),
                 "--baseline-without", "any_offset")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(out.read_text())
    r = report["exercises"]["lab05.phy_offset"]
    assert r["mutants"] == r["run"] == r["killed"] == 2 and r["survived"] == 0 and r["killed_share"] == 1.0
    assert r["killed_by_tables"] == 2  # tables first: no scenario needed
    assert report["baseline"]["exercises"]["lab05.phy_offset"]["killed"] == 2  # offset_table alone kills both
    assert "| lab05.phy_offset | 2 | 2 | 2 (2 + 0) | 0 | 0 | 100% | 2 of 2 |" in run.stdout
    assert "killed by lab05.phy_offset/offset_table" in run.stderr


def test_bad_usage_is_one_line_and_exit_2(tmp_path):
    for args in (("lab99",), ("lab05", "--budget", "0"), ("lab05", "--json", str(tmp_path))):
        run = mutate(*args)
        assert run.returncode == 2 and run.stderr.startswith("rocketlab: ") and len(run.stderr.splitlines()) == 1, args
