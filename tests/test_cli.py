"""The rocketlab command: sim, demo, exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rocketlab.cli import format_table, main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocketlab.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_sim_list_prints_name_and_description_per_line(capsys):
    assert main(["sim", "--list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("smoke\t") and len(line.split("\t")[1]) > 20 for line in lines)


def test_sim_smoke_writes_a_run_directory_and_a_summary(tmp_path, capsys):
    assert main(["sim", "smoke", "--seed", "5", "--out", str(tmp_path / "r"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["seed"] == 5 and summary["violations"] == 0 and summary["faults"] == 7
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["scenario"] == "smoke" and meta["events"] == summary["events"]
    lines = (tmp_path / "r" / "events.jsonl").read_text().splitlines()
    assert len(lines) == summary["events"]


def test_sim_is_deterministic_across_processes(tmp_path):
    for name in ("a", "b"):
        assert run("sim", "smoke", "--seed", "3", "--out", str(tmp_path / name)).returncode == 0
    assert (tmp_path / "a" / "events.jsonl").read_bytes() == (tmp_path / "b" / "events.jsonl").read_bytes()


def test_sim_rerun_into_the_same_directory_starts_clean(tmp_path, capsys):
    """Stores an earlier run left in --out must not be recovered: the same seed gives the same trace."""
    out = tmp_path / "churn"
    argv = ["sim", "dledger-churn", "--seed", "11", "--network", "unreliable", "--duration", "2000", "--out", str(out)]
    main(argv)
    first = (out / "events.jsonl").read_bytes()
    main(argv)
    assert (out / "events.jsonl").read_bytes() == first
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me")
    assert main(["sim", "smoke", "--out", str(other)]) == 2
    assert "not empty and not a run directory" in capsys.readouterr().err
    assert (other / "todo.txt").read_text() == "keep me"


def test_sim_parquet_option(tmp_path):
    assert main(["sim", "smoke", "--duration", "500", "--out", str(tmp_path), "--parquet"]) == 0
    assert (tmp_path / "events.parquet").stat().st_size > 0


@pytest.mark.parametrize("args,problem", [
    (["sim", "nope"], "no scenario named 'nope'"),
    (["sim"], "needs a SCENARIO"),
    (["sim", "smoke", "--network", "lossy"], "network 'lossy'"),
    (["sim", "smoke", "--latency", "gauss:1"], "kind must be"),
    (["sim", "smoke", "--nodes", "2"], "at least 3 nodes"),
    (["sim", "smoke", "--seed", "x"], "invalid int value"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(args, problem):
    proc = run(*args)
    assert proc.returncode == 2, proc.stderr
    assert problem in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith("rocketlab: ")


def test_demo_prints_a_summary(tmp_path):
    proc = run("demo", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "rocketlab demo: seed 1" in proc.stdout and "0 invariant violations" in proc.stdout
    assert "lost 0 of" in proc.stdout and (tmp_path / "report.html").exists()
    assert (tmp_path / "dledger-failover" / "meta.json").exists()


def test_format_table_aligns_columns_numbers_to_the_right():
    assert format_table([{"node": "n0", "ok": 10}, {"node": "n10", "ok": 2}]) == "node  ok\n--------\nn0    10\nn10    2"
