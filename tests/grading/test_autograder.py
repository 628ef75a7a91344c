"""``rocketlab autograder``: the Gradescope zip, run end to end as Gradescope's image would.

The kit's wheel is built once per session by the command's own default path (pip, from this checkout).
Lab 05's zip is unpacked into a temporary root laid out like Gradescope's (``source/``, ``submission/``,
``results/``, ``run_autograder`` beside them); ``setup.sh`` makes a clean venv there and installs the kit
from the packed wheel with ``constraints.txt`` (apt is skipped: Java and Python 3.11 are present); then
``run_autograder`` grades a reference solution (full marks, hidden test included), the exercise template
(not full marks), a wrong solution (its replay line names the learner's file), a notebook, no gradable
file (a results file with a score of 0 saying what to upload) and a broken install (the grader's failure: no
results file, a failed run).
The other labs' zips are checked for their layout only. Marked ``wheel`` (about two minutes).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rocketlab.cli import main
from rocketlab.grading.autograder import (
    GRADER_FAILED,
    ROOT_ENV,
    SubmissionError,
    failure_results,
    find_submission,
    notebook_to_module,
    zip_files,
)
from rocketlab.grading.autograder import (
    main as autograder_main,
)
from rocketlab.grading.registry import LABS
from rocketlab.grading.results import validate

CHECKOUT = Path(__file__).resolve().parents[2]
SOLUTIONS = CHECKOUT / "tests" / "grading" / "solutions"
TEMPLATES = CHECKOUT / "labs" / "exercises"
OFFLINE = ("No matching distribution", "Could not find a version", "Failed to establish a new connection",
           "Network is unreachable", "Temporary failure in name resolution")
HIDDEN_TEST = '''
from rocketlab.grading import graded


@graded("lab05.which_log", points=1)
def below_the_divide_is_the_old_log(ctx):
    """An offset below dividedCommitlogOffset is read from the classic CommitLog."""
    got = ctx.impl(10, 100, 1000)
    assert got == "commitlog", f"which_log(10, 100, 1000) answered {got!r}"
'''


def _skip_offline_or_fail(message: str) -> None:
    if os.environ.get("CI") != "true" and any(text in message for text in OFFLINE):
        pytest.skip(f"no package index for pip here: {message[-300:]}")
    raise AssertionError(message)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="session")
def hidden_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hidden")
    (d / "test_hidden_lab05.py").write_text(HIDDEN_TEST)
    return d


@pytest.fixture(scope="session")
def lab05_zip(tmp_path_factory, hidden_dir) -> Path:
    """Lab 05's zip built the default way (the wheel built from this checkout), with a hidden test."""
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    proc = subprocess.run([sys.executable, "-c", "import sys; from rocketlab.cli import main; sys.exit(main())",
                           "autograder", "lab05", "--out", str(out), "--tests", str(hidden_dir)],
                          capture_output=True, text=True, cwd=out.parent, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(CHECKOUT)})
    if proc.returncode != 0:
        _skip_offline_or_fail(f"rocketlab autograder exited {proc.returncode}: {proc.stdout}{proc.stderr}")
    assert "lab05 autograder" in proc.stdout and "hidden tests: 1 file(s)" in proc.stdout, proc.stdout
    return out


@pytest.fixture(scope="session")
def kit_wheel(lab05_zip, tmp_path_factory) -> Path:
    """The wheel packed in lab 05's zip (the other labs' zips reuse it)."""
    with zipfile.ZipFile(lab05_zip) as z:
        name = next(n for n in z.namelist() if n.endswith(".whl"))
        out = tmp_path_factory.mktemp("wheel")
        z.extract(name, out)
    return out / name


def unpack(archive: Path, target: Path) -> None:
    """Unzip as Gradescope does, keeping the files' modes (``unzip`` keeps them; ``zipfile`` does not)."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            z.extract(info, target)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(target / info.filename, stat.S_IMODE(mode))


@pytest.fixture(scope="session")
def gradescope(lab05_zip, tmp_path_factory) -> Path:
    """A root like Gradescope's with ``setup.sh`` run: ``source/``, ``run_autograder``, the clean venv."""
    root = tmp_path_factory.mktemp("autograder")
    unpack(lab05_zip, root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    proc = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                          cwd=root / "source", timeout=900,
                          env=_clean_env(**{ROOT_ENV: str(root), "ROCKETLAB_AUTOGRADER_PYTHON": sys._base_executable,
                                           "ROCKETLAB_AUTOGRADER_PIP_ARGS": "--no-compile"}))
    if proc.returncode != 0:
        _skip_offline_or_fail(f"setup.sh exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    assert proc.stdout.strip().endswith("rocketlab 0.1.0"), proc.stdout
    venv_site = list((root / "rocketlab-venv" / "lib").glob("python3*/site-packages/rocketlab"))
    assert len(venv_site) == 1 and CHECKOUT not in venv_site[0].parents, venv_site
    assert stat.S_IMODE((root / "source" / "tests" / "test_hidden_lab05.py").stat().st_mode) == 0o600
    return root


def run_autograder(root: Path, files: dict[str, Path | str]) -> dict:
    """Put ``files`` (name -> source path or text) in ``submission/``, run ``run_autograder``, read results."""
    sub = root / "submission"
    shutil.rmtree(sub)
    sub.mkdir()
    for name, what in files.items():
        (sub / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(what, Path):
            shutil.copyfile(what, sub / name)
        else:
            (sub / name).write_text(what)
    proc = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, cwd=root, timeout=600,
                          env=_clean_env(**{ROOT_ENV: str(root)}))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert validate(results) == [], validate(results)
    return results


# --- end to end: lab 05 in a Gradescope-like root ------------------------------------------------------

@pytest.mark.wheel
def test_a_reference_solution_gets_full_marks_hidden_test_included(gradescope):
    results = run_autograder(gradescope, {"lab05_rocketmq_on_dledger.py": SOLUTIONS / "lab05_rocketmq_on_dledger.py"})
    assert results["tests"] and all(t["status"] == "passed" for t in results["tests"]), results["output"]
    # with hidden tests the top-level score is left out (Gradescope totals the tests) and the summary
    # counts the public tests only, so the learner cannot tell a hidden test exists before publication
    assert "score" not in results
    assert sum(t["score"] for t in results["tests"]) == sum(t["max_score"] for t in results["tests"])
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    public = [t for t in results["tests"] if t["visibility"] != "after_published"]
    assert results["extra_data"]["max_score"] == sum(t["max_score"] for t in public)
    assert [t["name"] for t in hidden] == ["lab05.which_log/below_the_divide_is_the_old_log"], hidden


@pytest.mark.wheel
def test_the_exercise_template_does_not(gradescope):
    results = run_autograder(gradescope, {"lab05_rocketmq_on_dledger.py": TEMPLATES / "lab05_rocketmq_on_dledger.py"})
    assert results["tests"] and sum(t["score"] for t in results["tests"]) < sum(t["max_score"] for t in results["tests"])
    assert any(t["status"] == "failed" for t in results["tests"])
    assert str(gradescope) not in json.dumps(results)  # nothing of the grading machine's paths


@pytest.mark.wheel
def test_a_failing_seed_replays_without_any_path_of_the_grading_machine(gradescope):
    code = (SOLUTIONS / "lab05_rocketmq_on_dledger.py").read_text()
    assert "entry_pos + 48" in code
    results = run_autograder(gradescope, {"mine.py": code.replace("entry_pos + 48", "entry_pos + 40")})
    failed = {t["name"]: t["output"] for t in results["tests"] if t["status"] == "failed"}
    assert set(failed) == {"lab05.phy_offset/offset_table", "lab05.phy_offset/any_offset",
                           "lab05.phy_offset/put_and_pull"}, list(failed)
    # the file has the exercise's own name, so the replay line needs no --submission: in the learner's
    # workspace the grader finds labs/exercises/lab05_rocketmq_on_dledger.py by itself
    replay = next(line for line in failed["lab05.phy_offset/put_and_pull"].splitlines() if line.startswith("replay: "))
    assert replay == "replay: rocketlab grade lab05 --only lab05.phy_offset/put_and_pull --seed 0", replay
    assert str(gradescope) not in json.dumps(results) and "rocketlab-submission-" not in json.dumps(results)


@pytest.mark.wheel
def test_a_notebook_or_an_oddly_named_file_is_found_alone(gradescope):
    code = (SOLUTIONS / "lab05_rocketmq_on_dledger.py").read_text()
    notebook = {"cells": [{"cell_type": "markdown", "source": "# my lab 05"},
                          {"cell_type": "code", "source": ["%load_ext autoreload\n", code]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    results = run_autograder(gradescope, {"work/lab05.ipynb": json.dumps(notebook), "README.txt": "hi"})
    assert sum(t["score"] for t in results["tests"]) == sum(t["max_score"] for t in results["tests"]), results["output"]
    assert "lab05_rocketmq_on_dledger.py" in results["output"]


@pytest.mark.wheel
def test_no_gradable_file_still_writes_results(gradescope):
    results = run_autograder(gradescope, {"notes.txt": "no code", "a.py": "x = 1", "b.py": "y = 2"})
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("Not graded: no lab05_rocketmq_on_dledger.py in the submission and several"), \
        results["output"]


@pytest.mark.wheel
def test_a_broken_install_is_a_failed_run_not_a_zero(gradescope, tmp_path):
    root = tmp_path / "autograder"  # the scripts without setup.sh's venv: the kit cannot start
    shutil.copytree(gradescope / "source", root / "source")
    shutil.copy2(gradescope / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    shutil.copyfile(SOLUTIONS / "lab05_rocketmq_on_dledger.py", root / "submission" / "lab05_rocketmq_on_dledger.py")
    proc = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, cwd=root, timeout=600,
                          env=_clean_env(**{ROOT_ENV: str(root)}))
    assert proc.returncode == 127 and not (root / "results" / "results.json").exists(), proc.stdout + proc.stderr
    assert "the grader's failure (not the submission's): the autograder stopped (exit 127)" in proc.stdout


@pytest.mark.wheel
def test_a_bundle_is_graded_zipped_or_unzipped_with_its_checks(gradescope, tmp_path, capsys):
    """``rocketlab submit``'s bundle: Gradescope unzips an uploaded zip into ``submission/``; a bundle left
    zipped is opened by the autograder. The checks of the packed source notebook join the tests."""
    from tests.grading.test_assign import _answered, _course_source

    src = _course_source(tmp_path)
    assert _cli(capsys, "assign", "--source", str(src), "--out", str(tmp_path / "out"), "--no-autograder")[0] == 0
    notebook = tmp_path / "05_rocketmq_on_dledger.ipynb"
    notebook.write_text(json.dumps(_answered(tmp_path / "out" / "student" / "labs" / notebook.name, "a", 48, "mine")))
    bundle = tmp_path / "lab05-submission.zip"
    code, _, err = _cli(capsys, "submit", "lab05", "--exercise", str(SOLUTIONS / "lab05_rocketmq_on_dledger.py"),
                        "--notebook", str(notebook), "--out", str(bundle))
    assert code == 0, err
    with zipfile.ZipFile(bundle) as z:
        unzipped = {name: z.read(name).decode() for name in z.namelist()}
    packed = gradescope / "source" / "questions"
    packed.mkdir()
    shutil.copy(src / notebook.name, packed)  # what `rocketlab assign` packs into the zip
    try:
        for files in (unzipped, {bundle.name: bundle}):
            results = run_autograder(gradescope, files)
            scores = {t["name"]: (t["score"], t["max_score"]) for t in results["tests"]}
            assert scores["lab05.questions/lab05-which-log"] == (2, 2) and scores["lab05.questions/lab05-header"] == (1, 1)
            assert sum(t["score"] for t in results["tests"]) == sum(t["max_score"] for t in results["tests"]), scores
            assert results["extra_data"]["max_score"] == 15 + 3, results["extra_data"]
            assert results["output"].endswith("lab05.questions: 3/3 points in the notebook's checks"), results["output"]
    finally:
        shutil.rmtree(packed)


@pytest.mark.wheel
def test_assign_packs_the_source_notebook_for_the_checks(kit_wheel, tmp_path, capsys):
    from tests.grading.test_assign import _course_source

    src = _course_source(tmp_path)
    shutil.copytree(CHECKOUT / "labs" / "exercises", src / "exercises")
    code, out, err = _cli(capsys, "assign", "--source", str(src), "--out", str(tmp_path / "out"), "--lab", "lab05",
                          "--wheel", str(kit_wheel))
    assert code == 0, err
    with zipfile.ZipFile(tmp_path / "out" / "autograder" / "lab05-autograder.zip") as z:
        assert z.read("questions/05_rocketmq_on_dledger.ipynb") == (src / "05_rocketmq_on_dledger.ipynb").read_bytes()
        assert 'chmod -R go-rwx "$SOURCE/questions"' in z.read("setup.sh").decode()
    assert sorted(p.name for p in (tmp_path / "out" / "student" / "labs").rglob("*.*")) == [
        "05_rocketmq_on_dledger.ipynb", "lab05_rocketmq_on_dledger.py"]


# --- every lab's zip: layout only ------------------------------------------------------------------------

@pytest.mark.wheel
@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_labs_zip_has_gradescopes_layout(lab, kit_wheel, hidden_dir, tmp_path, capsys):
    out = tmp_path / "ag.zip"
    code, stdout, err = _cli(capsys, "autograder", lab, "--out", str(out), "--wheel", str(kit_wheel))
    assert code == 0, err
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        assert names == {"setup.sh", "run_autograder", "constraints.txt", "autograder.json", kit_wheel.name}
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in z.infolist()}
        setup, run = z.read("setup.sh").decode(), z.read("run_autograder").decode()
        config = json.loads(z.read("autograder.json"))
        assert z.read("constraints.txt") == (CHECKOUT / "constraints.txt").read_bytes()
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert config == {"lab": lab, "exercise_file": LABS[lab].exercise_file, "rocketlab": "0.1.0", "wheel": kit_wheel.name,
                      "java": LABS[lab].java, "hidden_tests": []}
    assert ("openjdk-17-jre-headless" in setup) == LABS[lab].java == (lab == "lab07")
    assert f"--lab {lab}" in run and "--tests" not in run
    for script in (setup, run):
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


@pytest.mark.wheel
def test_hidden_tests_are_packed_under_tests(lab05_zip):
    with zipfile.ZipFile(lab05_zip) as z:
        assert "tests/test_hidden_lab05.py" in z.namelist()
        assert z.read("tests/test_hidden_lab05.py").decode() == HIDDEN_TEST
        assert '--tests "$SOURCE/tests"' in z.read("run_autograder").decode()
        assert json.loads(z.read("autograder.json"))["hidden_tests"] == ["tests/test_hidden_lab05.py"]


# --- bad input: one line, exit 2 -------------------------------------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (["lab99", "--out", "{tmp}/a.zip"], "rocketlab: unknown lab 'lab99'; the graded labs are lab01"),
    (["lab05", "--out", "{tmp}/file/a.zip"], "rocketlab: --out {tmp}/file: exists and is not a directory"),
    (["lab05", "--out", "/proc/a.zip", "--wheel", "{tmp}/rocketlab-0.1.0-py3-none-any.whl"],
     "rocketlab: --out /proc/a.zip: cannot write"),
    (["lab05", "--out", "{tmp}/dir.zip"], "rocketlab: --out {tmp}/dir.zip: is a directory, not a file"),
    (["lab05", "--out", "{tmp}/a.tar"], "rocketlab: --out {tmp}/a.tar: not a .zip file name"),
    (["lab05", "--out", "{tmp}/a.zip", "--tests", "{tmp}/nope"], "rocketlab: --tests {tmp}/nope: no such directory"),
    (["lab05", "--out", "{tmp}/a.zip", "--tests", "{tmp}/empty"], "rocketlab: --tests {tmp}/empty: no *.py test files"),
    (["lab05", "--out", "{tmp}/a.zip", "--wheel", "{tmp}/file"], "rocketlab: --wheel {tmp}/file: not the kit's wheel"),
    (["lab05"], "rocketlab: the following arguments are required: --out"),
])
def test_bad_input_is_one_line_and_exit_2(argv, expected, tmp_path, capsys):
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "empty").mkdir()
    (tmp_path / "dir.zip").mkdir()
    (tmp_path / "rocketlab-0.1.0-py3-none-any.whl").write_bytes(b"PK")
    try:
        code = main(["autograder", *(a.format(tmp=tmp_path) for a in argv)])
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(expected.format(tmp=tmp_path)), err
    assert not (tmp_path / "a.zip").exists()


# --- finding the submission --------------------------------------------------------------------------------

def test_the_exercise_file_is_found_by_name_the_shallowest_first(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    for p in ("deep/lab03_dledger_election.py", "deep/er/lab03_dledger_election.py", "other.py", "x.ipynb"):
        (tmp_path / p).write_text("")
    assert find_submission(tmp_path, "lab03") == tmp_path / "deep" / "lab03_dledger_election.py"
    (tmp_path / "lab03_dledger_election.py").write_text("")
    assert find_submission(tmp_path, "lab03") == tmp_path / "lab03_dledger_election.py"


def test_a_single_python_file_or_notebook_is_taken_whatever_its_name(tmp_path):
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "._mine.py").write_text("")
    (tmp_path / ".hidden.py").write_text("")
    (tmp_path / "mine.py").write_text("")
    (tmp_path / "notes.md").write_text("")
    assert find_submission(tmp_path, "lab03") == tmp_path / "mine.py"


@pytest.mark.parametrize("files, expected", [
    ([], "no lab03_dledger_election.py in the submission (it is empty): submit your labs/exercises/"),
    (["notes.md"], "no lab03_dledger_election.py in the submission (it holds notes.md): submit"),
    (["a.py", "b.ipynb"], "no lab03_dledger_election.py in the submission and several Python files (a.py, b.ipynb)"),
    (["a/lab03_dledger_election.py", "b/lab03_dledger_election.py"],
     "several lab03_dledger_election.py in the submission (a/lab03_dledger_election.py, b/lab03_dledger_election.py)"),
])
def test_no_single_candidate_is_a_clear_message(files, expected, tmp_path):
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    with pytest.raises(SubmissionError) as caught:
        find_submission(tmp_path, "lab03")
    assert str(caught.value).startswith(expected), str(caught.value)


def test_a_notebook_becomes_its_code_cells_without_magics(tmp_path):
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": ["%matplotlib inline\n", "def f():\n", "    return 1\n"]},
        {"cell_type": "markdown", "source": "text"},
        {"cell_type": "code", "source": "!pip install x\nX = f()"}]}))
    out = notebook_to_module(nb, tmp_path / "m.py")
    namespace: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)
    assert namespace["X"] == 1 and "%" not in out.read_text() and "!pip" not in out.read_text()
    (tmp_path / "bad.ipynb").write_text("{not json")
    with pytest.raises(SubmissionError, match="bad.ipynb: not a readable Jupyter notebook"):
        notebook_to_module(tmp_path / "bad.ipynb", tmp_path / "m2.py")


def test_failure_results_match_gradescopes_schema_and_cap_the_output():
    results = failure_results("Not graded: why", "x" * 100_000)
    assert validate(results) == [] and results["score"] == 0 and len(results["output"]) < 21_000


def test_java_is_installed_for_exactly_the_labs_whose_tests_start_a_jvm():
    suites = CHECKOUT / "rocketlab" / "grading" / "suites"
    starts_jvm = {lab for lab in LABS if any(word in (suites / f"{lab}.py").read_text()
                                            for word in ("get_spark", "SparkSession", "oracle"))}
    assert starts_jvm == {lab for lab in LABS if LABS[lab].java} == {"lab07"}


def test_a_grader_that_stops_without_results_is_a_failed_run_not_a_zero(tmp_path, capsys, monkeypatch):
    """Broken hidden tests (an instructor's slip): ``rocketlab grade`` exits 2 and writes nothing. The grader's
    failure is never a grade: no results file (a stale one is removed: Gradescope then reports a failed run and
    records no score), why on stdout (the staff's ``results/stdout``) and stderr, exit 3."""
    monkeypatch.setenv("PYTHONPATH", str(CHECKOUT))  # the grade subprocess runs this checkout's kit
    (tmp_path / "submission").mkdir()
    shutil.copyfile(SOLUTIONS / "lab05_rocketmq_on_dledger.py", tmp_path / "submission" / "lab05_rocketmq_on_dledger.py")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "broken.py").write_text("def oops(:\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "results.json").write_text('{"score": 0, "tests": []}')  # a previous run's
    code = autograder_main(["--root", str(tmp_path), "--lab", "lab05", "--tests", str(tmp_path / "hidden")])
    out, err = capsys.readouterr()
    assert code == GRADER_FAILED == 3 and not (tmp_path / "results" / "results.json").exists()
    assert "Not graded, the grader's failure (not the submission's): the grader stopped (exit 2)" in out, out
    assert "hidden tests" in out and err.startswith("run_autograder: the grader stopped (exit 2)"), err


def test_run_autograder_leaves_no_results_and_fails_when_the_kit_cannot_start(tmp_path):
    """The zip's own ``run_autograder`` script with no venv (``setup.sh`` failed): no results file, never a
    score of 0, and the exit status of the failed start (127), so the run shows as failed."""
    script = tmp_path / "run_autograder"
    script.write_text(zip_files("lab05", "rocketlab-0.1.0-py3-none-any.whl")["run_autograder"][0])
    (tmp_path / "submission").mkdir()
    shutil.copyfile(SOLUTIONS / "lab05_rocketmq_on_dledger.py", tmp_path / "submission" / "lab05_rocketmq_on_dledger.py")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "results.json").write_text('{"score": 0, "tests": []}')
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60,
                         env=_clean_env(**{ROOT_ENV: str(tmp_path)}))
    assert run.returncode == 127, run.stdout + run.stderr
    assert not (tmp_path / "results" / "results.json").exists()
    assert "Not graded, the grader's failure (not the submission's): the autograder stopped (exit 127)" in run.stdout
    assert "run_autograder: the autograder stopped (exit 127) without results" in run.stderr
