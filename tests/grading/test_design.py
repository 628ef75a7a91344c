"""The design exercises. Lab 04's ``commit_rule``: the references pass, the unsafe original and realistic
half-fixes fail with the seeds named here; ``--stress`` reports the first failing seed with its replay line.

Each half-fix is plugged in-process into the graded test that catches it, for the seed that shows it
(deterministic: same seed, same trace); the whole lab is graded in the sandbox by test_grader.py.
Lab 03's ``handle_heart_beat`` (find the bug): the template's planted elector fails with its seeds, the
fixed one passes.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab import plugs
from rocketlab.dledger.entry_pusher import COMMIT_RULE_PLUG, quorum_index, safe_commit_index
from rocketlab.dledger.leader_elector import HANDLE_HEART_BEAT_PLUG
from rocketlab.grading import registry
from rocketlab.grading.registry import Ctx

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "tests" / "grading" / "solutions" / "lab04_dledger_replication.py"


def unsafe(w, t, c, term_of):  # dledger-0.3.1.2 as shipped: count replicas
    return quorum_index(w, t, c, False, term_of)


def never(w, t, c, term_of):  # safe by committing nothing
    return c


def every_member(w, t, c, term_of):  # wait until all hold it
    return max(c, min(w.values()))


def supermajority(w, t, c, term_of):  # one replica more than a majority
    marks = sorted(w.values(), reverse=True)
    return marks[min(len(marks) - 1, len(marks) // 2 + 1)]


def leader_wrote_this_term(w, t, c, term_of):  # the leader's last entry is of its term, then count
    return quorum_index(w, t, c, False, term_of) if term_of(max(w.values())) == t else c


def next_entry_of_this_term(w, t, c, term_of):  # the first uncommitted entry must be of the term
    return quorum_index(w, t, c, False, term_of) if term_of(c + 1) == t else c


HALF_FIXES = [  # (rule, graded test, seed, what the failure says)
    (unsafe, "figure8", 0, "committed and then overwritten"),
    (unsafe, "figure8_family", 1, "invariants broken"),
    (unsafe, "commit_properties", None, "may still overwrite"),
    (never, "figure8_family", 0, "could not commit its first write"),
    (never, "majority_up", 0, "did not commit"),
    (every_member, "majority_up", 0, "no write committed"),
    (every_member, "figure8_family", 0, "did not commit within 8 s"),
    (supermajority, "figure8_family", 0, "did not commit within 8 s"),
    (leader_wrote_this_term, "figure8_family", 1, "invariants broken"),
    (leader_wrote_this_term, "commit_properties", None, "may still overwrite"),
    (next_entry_of_this_term, "figure8_family", 0, "did not commit within 8 s"),
]


def run(name: str, rule, seed: int | None) -> None:
    test = registry.TESTS[f"lab04.commit_rule/{name}"]
    ctx = Ctx(rule, seed or 0)
    try:
        with plugs.plugged({COMMIT_RULE_PLUG: rule}):
            test.fn(ctx)
    finally:
        for c in ctx.clusters:
            c.close()


@pytest.mark.parametrize("rule,name,seed,said", HALF_FIXES,
                         ids=[f"{r.__name__}-{n}-seed{s}" for r, n, s, _ in HALF_FIXES])
def test_a_half_fix_fails_with_its_seed(rule, name, seed, said):
    print(f"seed {seed}")
    with pytest.raises(AssertionError, match=said):
        run(name, rule, seed)


@pytest.mark.parametrize("name,seed", [("figure8", 0), ("figure8_family", 1), ("majority_up", 0),
                                       ("commit_properties", None)])
def test_the_kits_rule_passes_where_the_half_fixes_fail(name, seed):
    run(name, safe_commit_index, seed)


def test_stress_reports_the_first_failing_seed_with_its_replay_line(tmp_path):
    bad = tmp_path / "lab04_dledger_replication.py"
    text = SOLUTION.read_text()
    bad.write_text(text.replace("and term_of(index) == term:", ":"))  # the counting rule back
    assert bad.read_text() != text
    run_ = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab04", "--submission", str(bad),
                           "--only", "lab04.commit_rule/figure8_family", "--stress", "3"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run_.returncode == 1, run_.stdout + run_.stderr
    assert "seed 1:" in run_.stdout and "--only lab04.commit_rule/figure8_family --seed 1" in run_.stdout, run_.stdout
    refused = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab04", "--reference", "--stress", "0"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr


# --- find the bug: lab 03's handle_heart_beat -----------------------------------------------------
def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TEMPLATE3 = ROOT / "labs" / "exercises" / "lab03_dledger_election.py"
SOLUTION3 = ROOT / "tests" / "grading" / "solutions" / "lab03_dledger_election.py"


def _run_bug(name: str, fn, seed: int) -> None:
    test = registry.TESTS[f"lab03.handle_heart_beat/{name}"]
    ctx = Ctx(fn, seed)
    try:
        with plugs.plugged({HANDLE_HEART_BEAT_PLUG: fn}):
            test.fn(ctx)
    finally:
        for c in ctx.clusters:
            c.close()


@pytest.mark.parametrize("name,seed,said", [("elections", 0, "no leader that every member follows"),
                                            ("churn", 0, "no leader within 5 s"),
                                            ("heart_beat_fixed_alone", 0, "2 of 36 heartbeat decisions differ")])
def test_the_planted_elector_fails_with_its_seed(name, seed, said):
    planted = _module(TEMPLATE3, "lab03_template").handle_heart_beat
    print(f"seed {seed}")
    with pytest.raises(AssertionError, match=said):
        _run_bug(name, planted, seed)


@pytest.mark.parametrize("name,seed", [("elections", 0), ("churn", 0), ("heart_beat_fixed_alone", 0)])
def test_the_fixed_elector_passes(name, seed):
    _run_bug(name, _module(SOLUTION3, "lab03_solution").handle_heart_beat, seed)


def test_the_planted_fault_is_two_rows_merged():
    template, solution = TEMPLATE3.read_text(), SOLUTION3.read_text()
    planted = template[template.index("def handle_heart_beat"):]
    assert "if request_leader_id == leader_id or leader_id is None:" in planted and "BECOME_FOLLOWER" not in planted
    assert "HeartBeatEffect.BECOME_FOLLOWER" in solution[solution.index("def handle_heart_beat"):]
