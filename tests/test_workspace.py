"""``rocketlab init DIR``: a learner's workspace, found by its marker; init never overwrites an edited file;
commands run inside it read and write there. (The installed-wheel side is tests/test_wheel.py.)"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab import workspace
from rocketlab.cli import bench_dir, default_out, main
from rocketlab.errors import RocketlabError
from rocketlab.grading.registry import exercise_file
from rocketlab.kitfiles import workspace_files
from rocketlab.lab import find_labs_dir
from rocketlab.labs_support.dledger_replication import recorded_sweep
from rocketlab.sample_data import data_root

CHECKOUT = Path(__file__).resolve().parents[1]
EXERCISE = "labs/exercises/lab03_dledger_election.py"


def test_init_lays_out_labs_exercises_data_benchmarks_readme_and_marker(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    out = capsys.readouterr().out
    shipped = list(workspace_files(CHECKOUT))  # the kit's files, the exercises' Chinese twins aside
    assert {"labs/00_tour.ipynb", EXERCISE, "data/README.md", "benchmarks/results/profiles.json"} <= set(shipped)
    for rel in shipped:
        assert (ws / rel).read_bytes() == (CHECKOUT / rel).read_bytes(), rel
    marker = json.loads((ws / workspace.MARKER).read_text())
    assert set(marker["files"]) == {*shipped, "README.md"}
    assert (ws / EXERCISE).stat().st_mode & 0o644 == 0o644  # readable as any new file, not mkstemp's 0600
    assert "Open `00_tour.ipynb` first" in (ws / "README.md").read_text()
    assert f"new workspace {ws}" in out and f"added {len(shipped) + 1} files" in out
    assert "open labs/00_tour.ipynb first" in out


def test_init_again_adds_what_is_missing_updates_untouched_files_and_keeps_edits(tmp_path, capsys):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws)
    (ws / EXERCISE).write_text("def handle_vote(*a):\n    return 'mine'\n")       # the learner's work
    (ws / "labs" / "02_commitlog.ipynb").unlink()                               # deleted by mistake
    old = b"# an older kit's version of this file\n"                           # written by an older init
    (ws / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py").write_bytes(old)
    marker = json.loads((ws / workspace.MARKER).read_text())
    marker["files"]["labs/exercises/lab05_rocketmq_on_dledger.py"] = hashlib.sha256(old).hexdigest()
    (ws / workspace.MARKER).write_text(json.dumps(marker))
    (ws / "notes.md").write_text("my notes")                                    # not the kit's: left alone

    capsys.readouterr()
    assert main(["init", str(ws)]) == 0
    out = capsys.readouterr().out
    assert (ws / EXERCISE).read_text() == "def handle_vote(*a):\n    return 'mine'\n"
    assert (ws / "labs" / "02_commitlog.ipynb").read_bytes() == (CHECKOUT / "labs" / "02_commitlog.ipynb").read_bytes()
    assert (ws / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py").read_bytes() == \
        (CHECKOUT / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py").read_bytes()
    assert (ws / "notes.md").read_text() == "my notes"
    assert "added 1 file: labs/02_commitlog.ipynb" in out
    assert "updated 1 file you had not changed: labs/exercises/lab05_rocketmq_on_dledger.py" in out
    assert "kept 1 file you changed" in out and out.rstrip().splitlines()[-2].endswith(EXERCISE)
    # the edit stays an edit on every later init: its recorded hash is still the kit's
    report = workspace.init_workspace(ws)
    assert report.kept == [EXERCISE] and not report.added and not report.updated


def test_a_file_already_there_without_a_record_is_kept(tmp_path):
    ws = tmp_path / "ws"
    (ws / "labs" / "exercises").mkdir(parents=True)
    (ws / EXERCISE).write_text("# mine, from before init\n")
    report = workspace.init_workspace(ws)
    assert report.kept == [EXERCISE] and (ws / EXERCISE).read_text() == "# mine, from before init\n"


def test_init_refuses_a_file_the_checkout_and_a_broken_marker(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(RocketlabError, match="exists and is not a directory"):
        workspace.init_workspace(tmp_path / "f")
    with pytest.raises(RocketlabError, match="the kit's own checkout"):
        workspace.init_workspace(CHECKOUT)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / workspace.MARKER).write_text("{broken")
    with pytest.raises(RocketlabError, match="unreadable workspace marker"):
        workspace.init_workspace(tmp_path / "ws")


def test_commands_inside_a_workspace_read_and_write_there(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws)
    monkeypatch.chdir(ws / "labs" / "exercises")  # anywhere inside: found by walking up to the marker
    assert workspace.find_workspace() == ws.resolve() and workspace.home() == ws.resolve()
    assert find_labs_dir() == (ws / "labs").resolve()
    assert exercise_file("lab03") == (ws / EXERCISE).resolve()
    assert default_out("demo") == ws.resolve() / "runs" / "demo"
    assert data_root() == ws.resolve() / "data"
    assert bench_dir() == ws.resolve() / "benchmarks"
    sweep = json.loads((ws / "benchmarks" / "results" / "profiles.json").read_text())
    sweep["timestamp"] = "the workspace's own"
    (ws / "benchmarks" / "results" / "profiles.json").write_text(json.dumps(sweep))
    assert recorded_sweep()["recorded"] == "the workspace's own"
    monkeypatch.chdir(tmp_path)  # outside it: the checkout again
    assert workspace.find_workspace() is None and find_labs_dir() == CHECKOUT / "labs"
    monkeypatch.setenv(workspace.ENV, str(ws))
    assert workspace.home() == ws.resolve()
    monkeypatch.setenv(workspace.ENV, str(tmp_path))
    with pytest.raises(RocketlabError, match="not a rocketlab workspace"):
        workspace.home()


def test_sim_and_grade_in_a_workspace_use_its_runs_and_exercises(tmp_path):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws)
    (ws / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py").write_text(
        (CHECKOUT / "tests" / "grading" / "solutions" / "lab05_rocketmq_on_dledger.py").read_text())
    env = {"PYTHONPATH": str(CHECKOUT)}
    sim = subprocess.run([sys.executable, "-m", "rocketlab.cli", "sim", "smoke", "--duration", "300"],
                         cwd=ws / "labs", capture_output=True, text=True, timeout=300, env={**_env(), **env})
    assert sim.returncode == 0, sim.stderr
    assert (ws / "runs" / "smoke-seed1" / "meta.json").exists()
    grade = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--only", "lab05.which_log"],
                           cwd=ws, capture_output=True, text=True, timeout=600, env={**_env(), **env})
    assert grade.returncode == 0, grade.stdout + grade.stderr
    assert f"({ws / 'labs' / 'exercises' / 'lab05_rocketmq_on_dledger.py'})" in grade.stdout


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != workspace.ENV}
