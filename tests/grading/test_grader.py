"""The graders are tested: reference and a learner's solution get full marks, templates zero with a
helpful message, every hand-written mutant loses points, bad submissions fail cleanly, results files
validate, hidden tests, bulk mode, ``check`` and ``replay``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from rocketlab import plugs
from rocketlab.grading import LABS, check, grade, replay
from rocketlab.grading.registry import TESTS, exercise_file, load_builtin
from rocketlab.grading.results import SCHEMA, gradescope, validate
from rocketlab.grading.runner import _replay_lines
from tests.grading.mutants import MUTANTS, SOLUTIONS, grade_mutant, mutant_source

ROOT = Path(__file__).resolve().parents[2]


# A Spark lab (lab 07) grades through two Spark sessions (the judge's and the sandbox's): 1-2 minutes per grading
# on this machine. One such grading stays in the default run (a learner's complete solution, across the boundary);
# the others are ``slow``.
FIND_THE_BUG = {"lab03.handle_heart_beat"}
"""Exercises whose template is a complete implementation with a planted fault (the learner finds and fixes it)."""
SLOW_SPARK = [pytest.param(lab, marks=pytest.mark.slow) if LABS[lab].spark else lab for lab in LABS]


def solution(lab: str) -> Path:
    return SOLUTIONS / LABS[lab].exercise_file


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def assert_results_valid(data: dict) -> None:
    assert validate(data) == []
    jsonschema.validate(data, SCHEMA)


@pytest.mark.parametrize("lab", SLOW_SPARK)
def test_reference_gets_full_marks(lab):
    report = grade(lab, reference=True)
    assert report.all_passed, [(t.name, t.message) for t in report.tests if not t.passed]
    assert report.score == report.max_score > 0
    assert {t.kind for t in report.tests} == {"unit", "scenario"}
    assert_results_valid(gradescope(report))


@pytest.mark.parametrize("lab", list(LABS))
def test_a_learners_complete_solution_gets_full_marks(lab):
    report = grade(lab, solution(lab))
    assert report.all_passed, [(t.name, t.message) for t in report.tests if not t.passed]


@pytest.mark.parametrize("lab", SLOW_SPARK)
def test_the_unchanged_template_scores_zero_with_a_helpful_message(lab):
    report = grade(lab, exercise_file(lab))
    assert report.score == 0 and report.tests
    for t in report.tests:
        assert "Traceback" not in t.output(), t.output()
        if t.exercise in FIND_THE_BUG:  # written, and wrong: its scenarios fail with the history to replay
            assert t.kind == "unit" or (t.seed is not None and t.replay), t.output()
            continue
        assert "not implemented yet" in t.message, t.output()
        assert not t.replay  # nothing to replay for a template


@pytest.mark.parametrize("exercise,mistake,old,new", [
    pytest.param(*m, marks=pytest.mark.slow) if LABS[m[0].split(".")[0]].spark else m for m in MUTANTS],
    ids=[f"{m[0]}:{m[1]}" for m in MUTANTS])
def test_each_mutant_loses_points(exercise, mistake, old, new, tmp_path):
    lab = exercise.split(".")[0]
    path = tmp_path / LABS[lab].exercise_file
    path.write_text(mutant_source(exercise, old, new))
    report = grade_mutant(exercise, path)  # the decision tables first: most mistakes end here
    assert not report.all_passed, f"mutant survived: {mistake}"
    assert report.score < report.max_score


def test_every_exercise_has_five_mutants_and_tests_of_both_kinds():
    load_builtin_all()
    for exercise in {t.exercise for t in TESTS.values()}:
        assert sum(m[0] == exercise for m in MUTANTS) >= 5, exercise
        kinds = {t.kind for t in TESTS.values() if t.exercise == exercise}
        assert kinds == {"unit", "scenario"}, (exercise, kinds)


def load_builtin_all() -> None:
    for lab in LABS:
        load_builtin(lab)


# ---------------------------------------------------------------------- a failing scenario: seed, replay, viewer
def test_a_failing_scenario_names_its_seed_and_replays_in_the_viewer(tmp_path):
    path = tmp_path / LABS["lab03"].exercise_file
    path.write_text(mutant_source("lab03.handle_vote", *next(m for m in MUTANTS if "persist" in m[1])[2:]))
    report = grade("lab03", path, only=["lab03.handle_vote/elections"])
    t = report.tests[0]
    assert not t.passed and t.seed is not None and t.message.startswith(f"seed {t.seed}:")
    # not the workspace's default file: named, by its name only (no grader's path in what the learner reads)
    name = LABS["lab03"].exercise_file
    assert t.replay == f"rocketlab grade lab03 --only lab03.handle_vote/elections --seed {t.seed} --submission {name}"
    assert str(tmp_path) not in t.replay + t.viewer
    assert f"ClusterView(replay('lab03.handle_vote/elections', seed={t.seed}, submission={name!r}))" in t.viewer
    again = cli("lab03", "--only", "lab03.handle_vote/elections", "--seed", str(t.seed), "--submission", str(path))
    assert again.returncode == 1 and f"seed {t.seed}:" in again.stdout
    # the workspace's own exercise file is the default: left out
    default = exercise_file("lab03")
    assert grade_replay_line(default, t.seed) == f"rocketlab grade lab03 --only lab03.handle_vote/elections --seed {t.seed}"


def grade_replay_line(path: Path, seed: int) -> str:
    return _replay_lines(TESTS["lab03.handle_vote/elections"], seed, str(path), "lab03")[0]


def test_replay_from_another_folder_opens_the_graded_file_says_so_and_unplugs_it(tmp_path, monkeypatch, capsys):
    from rocketlab.viz import ClusterView  # lazy: anywidget and the viewer's assets

    workspace = tmp_path / "workspace"  # the learner's workspace, its template still in labs/exercises/
    (workspace / "labs" / "exercises").mkdir(parents=True)
    (workspace / "rocketlab-workspace.json").write_text("{}\n")
    name = LABS["lab03"].exercise_file
    (workspace / "labs" / "exercises" / name).write_text((ROOT / "labs" / "exercises" / name).read_text())
    monkeypatch.setenv("ROCKETLAB_WORKSPACE", str(workspace))
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    path = folder / name
    path.write_text(mutant_source("lab03.handle_vote", *next(m for m in MUTANTS if "persist" in m[1])[2:]))
    monkeypatch.chdir(folder)  # a folder that is not the workspace's labs/exercises/, the file under its own name
    t = grade("lab03", path.name, only=["lab03.handle_vote/elections"]).tests[0]
    assert not t.passed and f"--submission {path.name}" in t.replay, t.replay
    line = t.viewer[t.viewer.index("replay("):-1]  # what the learner pastes, inside ClusterView(...)
    try:
        with eval(line, {"replay": replay}) as cluster:  # noqa: S307 - the line the report printed
            plugged = plugs.active()["lab03.handle_vote"]
            assert Path(plugged.__code__.co_filename).resolve() == path.resolve() and cluster.now_ms > 0
            assert getattr(cluster, "failure", None), "the graded file's failure is shown"
        assert "lab03.handle_vote" not in plugs.active()
        out = capsys.readouterr().out
        assert "plugged in at lab03.handle_vote" in out and str(path.name) in out and "unplugged" in out
        view = ClusterView(eval(line, {"replay": replay}))  # noqa: S307
        assert "lab03.handle_vote" in plugs.active()
        view.close()
        assert "lab03.handle_vote" not in plugs.active()
    finally:
        plugs.clear()


# ---------------------------------------------------------------------- bad submissions
BAD_IMPORT = "def handle_vote(view, request, is_self):\n    return (\n"
WRONG_SIGNATURE = "def handle_vote(view, request):\n    return None\n"
LOUD = ("import sys\nfrom tests.grading.solutions.lab05_rocketmq_on_dledger import which_log\n"
        "def phy_offset(entry_pos):\n    print('x' * 100000)\n    sys.stderr.write('y' * 100000)\n    return entry_pos + 48\n")
SLEEPY = "import time\ndef phy_offset(entry_pos):\n    time.sleep(3600)\n\ndef which_log(o, d, c):\n    return None\n"
EXITS = ("import os\nfrom tests.grading.solutions.lab05_rocketmq_on_dledger import which_log\n"
         "def phy_offset(entry_pos):\n    os._exit(3)\n")
PATCH_AT_IMPORT = ("import rocketlab.dledger.invariants as inv\ninv.election_safety = lambda *a, **k: []\n"
                   "from tests.grading.solutions.lab03_dledger_election import handle_vote, parse_vote_result\n")
PATCH_IN_CALL = ("from tests.grading.solutions.lab05_rocketmq_on_dledger import which_log\n"
                 "def phy_offset(entry_pos):\n    import rocketlab.grading.suites._common as c\n"
                 "    c.expect = lambda *a: None\n    return entry_pos + 48\n")


def _write(tmp_path: Path, lab: str, text: str) -> Path:
    path = tmp_path / LABS[lab].exercise_file
    path.write_text(text)
    return path


def test_a_submission_that_does_not_import_fails_every_test_and_still_writes_results(tmp_path):
    path = _write(tmp_path, "lab03", BAD_IMPORT)
    out = tmp_path / "results.json"
    run = cli("lab03", "--submission", str(path), "--json", str(out), "--only", "lab03.handle_vote/decision_table",
              "--only", "lab03.parse_vote_result/parse_result_table")
    assert run.returncode == 1, run.stderr
    data = json.loads(out.read_text())
    assert_results_valid(data)
    assert data["score"] == 0 and len(data["tests"]) == 2
    assert all("did not import" in t["output"] and "SyntaxError" in t["output"] for t in data["tests"])


def test_a_wrong_signature_is_named(tmp_path):
    report = grade("lab03", _write(tmp_path, "lab03", WRONG_SIGNATURE), only=["lab03.handle_vote/decision_table",
                                                                            "lab03.parse_vote_result/parse_result_table"])
    first, second = report.tests
    assert "handle_vote must take (view, request, is_self)" in first.message
    assert "has no parse_vote_result" in second.message


def test_megabytes_of_printing_are_counted_and_cut(tmp_path):
    report = grade("lab05", _write(tmp_path, "lab05", LOUD), only=["lab05.phy_offset/offset_table"])
    t = report.tests[0]
    assert t.passed and t.printed_chars >= 1_600_000 and len(t.printed) <= 2_000
    assert "first 2000 of" in t.output()


def test_a_test_that_sleeps_is_stopped_and_the_others_still_graded(tmp_path):
    report = grade("lab05", _write(tmp_path, "lab05", SLEEPY), time_limit_s=3,
                   only=["lab05.phy_offset/offset_table", "lab05.which_log/log_table"])
    slept, other = report.tests
    assert not slept.passed and re.search(r"stopped after 3\.\d s with nothing running", slept.message), slept.message
    assert slept.duration_s < 10
    assert not other.passed and "cases wrong" in other.message  # graded by a fresh worker


def test_a_submission_that_exits_the_interpreter_fails_that_test_only(tmp_path):
    report = grade("lab05", _write(tmp_path, "lab05", EXITS),
                   only=["lab05.phy_offset/offset_table", "lab05.which_log/log_table"])
    exited, other = report.tests
    assert not exited.passed and "exit code 3" in exited.message
    assert other.passed


def test_monkey_patching_the_kit_changes_nothing_the_judge_sees(tmp_path):
    """The patches land in the sandbox's copy of the kit: the judge's invariants and checkers still run."""
    report = grade("lab03", _write(tmp_path, "lab03", PATCH_AT_IMPORT.replace(
        "from tests.grading.solutions.lab03_dledger_election import handle_vote, parse_vote_result\n",
        "def handle_vote(view, request, is_self):\n    return None\n")), only=["lab03.handle_vote/decision_table"])
    assert not report.tests[0].passed and "cases wrong" in report.tests[0].message
    report = grade("lab05", _write(tmp_path, "lab05", PATCH_IN_CALL.replace("entry_pos + 48", "entry_pos")),
                   only=["lab05.phy_offset/offset_table", "lab05.which_log/log_table"])
    patched, other = report.tests
    assert not patched.passed and "cases wrong" in patched.message
    assert other.passed


def test_bad_usage_exits_2_with_one_line(tmp_path):
    for args in (("lab99",), ("lab03", "--submission", str(tmp_path / "missing.py")),
                 ("lab03", "--reference", "--only", "lab03.nothing"), ("lab03", "--submissions", str(tmp_path))):
        run = cli(*args)
        assert run.returncode == 2 and run.stderr.startswith("rocketlab: ") and len(run.stderr.splitlines()) == 1, args


def test_reference_on_the_command_line_exits_0_and_writes_gradescope_results(tmp_path):
    out = tmp_path / "results.json"
    run = cli("lab05", "--reference", "--json", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text())
    assert_results_valid(data)
    assert data["score"] == data["extra_data"]["max_score"] == sum(t["max_score"] for t in data["tests"])
    assert all(t["status"] == "passed" and t["visibility"] == "visible" for t in data["tests"])


# ---------------------------------------------------------------------- hidden tests, bulk mode, check
HIDDEN = '''
from rocketlab.grading import graded


@graded("lab05.phy_offset", points=5)
def far_offsets(ctx):
    """Offsets beyond 4 GiB."""
    assert ctx.impl(2**33) == 2**33 + 48, "wrong beyond 4 GiB"
'''


def test_hidden_tests_are_graded_and_published_later(tmp_path):
    tests_dir = tmp_path / "hidden"
    tests_dir.mkdir()
    (tests_dir / "extra.py").write_text(HIDDEN)
    report = grade("lab05", solution("lab05"), tests_dir=tests_dir)
    hidden = [t for t in report.tests if t.hidden]
    assert [t.name for t in hidden] == ["lab05.phy_offset/far_offsets"] and hidden[0].passed
    data = gradescope(report)
    assert {t["name"]: t["visibility"] for t in data["tests"]}["lab05.phy_offset/far_offsets"] == "after_published"
    assert_results_valid(data)
    assert check("lab05.phy_offset", solution("lab05")).report.tests[-1].name != "lab05.phy_offset/far_offsets"


def test_bulk_mode_grades_a_directory_into_results_and_a_csv(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(solution("lab05").read_text())
    (subs / "bob").mkdir()
    (subs / "bob" / LABS["lab05"].exercise_file).write_text(exercise_file("lab05").read_text())
    out = tmp_path / "out"
    run = cli("lab05", "--submissions", str(subs), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "2/2" in run.stderr  # the progress bar
    for who in ("alice", "bob"):
        assert_results_valid(json.loads((out / who / "results.json").read_text()))
    rows = (out / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("submission,score,max_score,passed,tests,lab05.phy_offset/offset_table")
    assert rows[1].startswith("alice,15,15,6,6") and rows[2].startswith("bob,0,15,0,6")


def test_bulk_mode_stresses_every_submission(tmp_path):
    """``--stress N`` with ``--submissions``: each submission's scenario tests run seeds 0..N-1 (not silently
    the usual two), as for one submission."""
    load_builtin("lab05")
    assert len(TESTS["lab05.which_log/smooth_upgrade"].seeds) == 2
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(solution("lab05").read_text())
    out = tmp_path / "out"
    run = cli("lab05", "--submissions", str(subs), "--out", str(out), "--only", "lab05.which_log/smooth_upgrade",
              "--stress", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    tests = json.loads((out / "alice" / "results.json").read_text())["tests"]
    assert [(t["name"], t["extra_data"]["seeds_run"], t["status"]) for t in tests] == [
        ("lab05.which_log/smooth_upgrade", 3, "passed")], tests
    bad = cli("lab05", "--submissions", str(subs), "--out", str(out), "--stress", "0")
    assert bad.returncode == 2 and bad.stderr.strip() == "rocketlab: --stress must be at least 1 seed, got 0"


def test_check_shows_a_compact_green_and_red_table(tmp_path):
    good = check("lab05.which_log", solution("lab05"))
    assert good.passed and "✔ passed" in good._repr_html_() and "✘" not in good._repr_html_()
    bad = check("lab05.which_log", exercise_file("lab05"))
    html = bad._repr_html_()
    assert not bad.passed and html.count("✘ failed") == 3 and "not implemented yet" in html
    assert "lab05.which_log: 0/8 points" in repr(bad)


def test_grading_works_in_a_process_with_descriptors_above_1023():
    """A notebook that has opened many files still grades: the runner waits on its worker with poll, since
    select() refuses a descriptor above 1023 (seen when the test suite itself held ~1,100 open files)."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        if hard != resource.RLIM_INFINITY and hard < 1200:
            pytest.skip(f"the open-file limit ({hard}) is too low to hold 1,200 descriptors")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    held = [os.open(os.devnull, os.O_RDONLY)]
    try:
        while held[-1] < 1100:
            held.append(os.dup(held[0]))
        report = grade("lab05", reference=True, only=["lab05.which_log/log_table"])
        assert [t.passed for t in report.tests] == [True], report.tests
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
