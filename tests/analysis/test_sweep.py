"""``rocketlab sweep``: trials planned from seeds and parameters, run as Spark tasks, the same rows on
``local[2]`` and on a real multi-process Spark (a standalone master and worker from the pyspark
distribution on 127.0.0.1, the sweep's driver in another process), bad input in one line."""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest

from rocketlab.analysis.sweep import Trial, parse_params, parse_seeds, plan, run_trial, sweep
from rocketlab.errors import RocketlabError

ROCKETLAB = Path(sys.executable).with_name("rocketlab")
SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_plan_is_the_cross_product_of_params_and_seeds():
    trials = plan("smoke", parse_seeds("3..5"), parse_params(["nodes=3,5"]))
    assert [(t.seed, dict(t.params)["nodes"]) for t in trials] == [(3, 3), (4, 3), (5, 3), (3, 5), (4, 5), (5, 5)]
    assert len(plan("figure16", [1])) == 10  # every range of both graphs by default (150-300 once)


@pytest.mark.parametrize("bad,match", [
    (lambda: parse_seeds("9..2"), "2 is below 9"),
    (lambda: parse_seeds("one"), "write A..B"),
    (lambda: parse_params(["nodes"]), "write NAME=V1,V2"),
    (lambda: plan("smoke", [1], {"colour": ["red"]}), "no parameter colour"),
    (lambda: plan("smoke", [1], {"nodes": ["three"]}), "not a whole number"),
    (lambda: plan("figure16", [1], {"range": ["fast"]}), "write LO-HI"),
    (lambda: plan("no-such-scenario", [1]), "no scenario named"),
])
def test_bad_sweeps_name_the_problem(bad, match):
    with pytest.raises(RocketlabError, match=match):
        bad()


def test_a_failed_trial_is_a_row_that_says_why():
    row = run_trial(Trial("smoke", 1, (("nodes", 1),)))
    assert row["seed"] == 1 and row["param_nodes"] == 1 and row["error"]


def test_sweep_rows_are_deterministic_and_written(spark, tmp_path):
    seen = []
    a = sweep(spark, "smoke", range(1, 5), {"nodes": [3]}, out=tmp_path / "a", progress=lambda d, t: seen.append((d, t)))
    b = sweep(spark, "smoke", range(1, 5), {"nodes": [3]}, partitions=1)
    assert a.rows() == b.rows() and [r["seed"] for r in a.rows()] == [1, 2, 3, 4]
    assert all(r["error"] is None and r["violations"] == 0 for r in a.rows())
    assert seen and seen[-1][0] == seen[-1][1]
    back = spark.read.parquet(str(tmp_path / "a" / "trials.parquet"))
    assert sorted(map(tuple, back.collect())) == sorted(map(tuple, a.frame.collect()))
    assert (tmp_path / "a" / "summary.json").read_text().count('"trials": 4') == 2  # the sweep's and the group's


def test_figure16_trials_on_spark(spark):
    result = sweep(spark, "figure16", range(1, 4), {"range": ["150-300"]})
    rows = result.rows()
    assert [r["range"] for r in rows] == ["150-300"] * 3 and all(r["elected"] for r in rows)
    from rocketlab.scenarios.figure16 import figure16_trial

    assert [r["downtime_ms"] for r in rows] == [figure16_trial(150, 300, seed)["downtime_ms"] for seed in (1, 2, 3)]
    assert all(75 < r["downtime_ms"] < 1_000 for r in rows)  # at least a timeout minus the heartbeat interval


def test_figure16_sweep_writes_the_figure_and_the_papers_numbers_beside_ours(spark, tmp_path):
    result = sweep(spark, "figure16", range(1, 4), {"range": ["150-155", "150-300"]}, out=tmp_path / "f16")
    page = (tmp_path / "f16" / "figure16.html").read_text()
    assert "150-155 ms (3)" in page and "150-300 ms (3)" in page and "6 trials" in page
    assert '"type":"log"' in page.replace(" ", "")  # the top graph's ranges: log x, as in the paper
    paper = json.loads((tmp_path / "f16" / "paper.json").read_text())
    median = statistics.median(r["downtime_ms"] for r in result.rows() if r["range"] == "150-155")
    assert paper == [{"range": "150-155", "statistic": "median", "paper_ms": 287, "paper_says": "median downtime 287 ms",
                      "ours_ms": median, "trials": 3}]


def test_figure16_report_of_mixed_and_bottom_sweeps(tmp_path):
    from rocketlab.analysis.figure16_report import write_figure16_report

    mixed = [run_trial(t) for t in plan("figure16", [1, 2], {"range": ["150-155"], "candidate_persist": ["0-0", "2-4"]})]
    assert write_figure16_report(mixed, tmp_path / "mixed") == []  # two set-ups: no single "ours"
    page = (tmp_path / "mixed" / "figure16.html").read_text()
    assert "150-155 ms, candidate_persist=0-0 (2)" in page and "candidate_persist=2-4 (2)" in page
    assert not (tmp_path / "mixed" / "paper.json").exists()
    bottom = [run_trial(t) for t in plan("figure16", [1], {"range": ["12-24", "25-50"]})]
    paper = write_figure16_report(bottom, tmp_path / "bottom")
    assert [(p["range"], p["statistic"]) for p in paper] == [("12-24", "mean"), ("12-24", "max")]
    assert '"type":"log"' not in (tmp_path / "bottom" / "figure16.html").read_text().replace(" ", "")
    dledger = [run_trial(t) for t in plan("figure16", [1], {"profile": ["dledger-0.3.1.2"], "timers": ["java defaults"]})]
    assert write_figure16_report(dledger, tmp_path / "dl") == []
    assert "dledger-0.3.1.2, java defaults (1)" in (tmp_path / "dl" / "figure16.html").read_text()
    failed = [{**dledger[0], "error": "ValueError: x"}]
    assert write_figure16_report(failed, tmp_path / "none") == [] and not (tmp_path / "none").exists()


def _wait_port(port: int, proc: subprocess.Popen, log: Path, timeout_s: float = 90) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"nothing listens on {port} after {timeout_s} s:\n{log.read_text()[-2000:]}")


def test_the_same_rows_on_a_standalone_cluster(spark, tmp_path):
    """A Spark standalone master and one worker (2 cores), separate JVMs on 127.0.0.1, started with the
    pyspark distribution's spark-class; the sweep's driver is a `rocketlab sweep` process."""
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "SPARK_LOG_DIR": str(tmp_path / "logs")}
    port, ui, worker_ui = free_port(), free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs = []
    try:
        master_log = tmp_path / "master.log"
        with open(master_log, "w") as log:
            procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host",
                                           "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
                                          stdout=log, stderr=subprocess.STDOUT, env=env))
        _wait_port(port, procs[0], master_log)
        worker_log = tmp_path / "worker.log"
        with open(worker_log, "w") as log:
            procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                           "--cores", "2", "--memory", "1g", "--webui-port", str(worker_ui),
                                           f"spark://127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                                          env=env))
        out = tmp_path / "cluster-sweep"
        run = subprocess.run([str(ROCKETLAB), "sweep", "smoke", "--seeds", "1..4", "--param", "nodes=3",
                              "--master", f"spark://127.0.0.1:{port}", "--out", str(out), "--quiet"],
                             capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr + worker_log.read_text()[-2000:]
        assert "4 trials" in run.stdout
        assert "Registering worker" in master_log.read_text() or "Registered" in worker_log.read_text()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    on_cluster = spark.read.parquet(str(out / "trials.parquet"))
    local = sweep(spark, "smoke", range(1, 5), {"nodes": [3]})
    assert on_cluster.columns == local.frame.columns
    assert [tuple(r) for r in on_cluster.orderBy("seed").collect()] == [tuple(r) for r in local.frame.collect()]


def test_an_unreachable_master_is_one_line(tmp_path):
    run = subprocess.run([str(ROCKETLAB), "sweep", "smoke", "--seeds", "1..2", "--master",
                          f"spark://127.0.0.1:{free_port()}", "--out", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stderr.strip().startswith("rocketlab: cannot reach the Spark master")
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_figure16_full_sweep_beside_the_papers_findings(spark):
    """The paper's set-up at full size on Spark (1,000 trials per range, 100 for 150-150): its findings in shape
    and the five numbers it states. Measured here (seeds 1-1000; seeds 1001-2000 in brackets): 150-155 median
    289 ms (291; paper 287), 12-24 mean 34.3 ms (34.2; paper 35), 150-200 worst 638 ms (605; paper 513), 12-24
    worst 136 ms (114; paper 152), 150-150 no leader in 60 s in 100 of 100 trials (paper: consistently over
    10 s). Tolerances: a median or mean within 10 % (two batches of 1,000 differ by under 1 %); a worst case of
    1,000 trials within one election round of the paper's (the range's longest timeout plus a 13 ms vote
    round), because a maximum is quantised in rounds and moves by a large part of one between batches (33 ms
    and 22 ms above); 150-150 never elects within 10 s."""
    from rocketlab.scenarios.figure16 import PAPER_STATED, stated_beside_ours, summarize_trials

    ranges = ["150-151", "150-155", "150-175", "150-200", "150-300", "12-24", "25-50", "50-100", "100-200"]
    rows = sweep(spark, "figure16", range(1, 1001), {"range": ranges}).rows()
    rows += sweep(spark, "figure16", range(1, 101), {"range": ["150-150"]}).rows()
    assert not any(r["error"] for r in rows)
    s = summarize_trials(rows)
    for r in stated_beside_ours(s):
        print(f"{r['range']} {r['statistic']}: paper {r['paper_ms']} ms, ours {r['ours_ms']} ms ({r['trials']} trials)")
    for stated in PAPER_STATED:
        ours = s[f"{stated.lo}-{stated.hi}"][stated.statistic]
        where = f"{stated.lo}-{stated.hi} {stated.statistic}: ours {ours} ms, paper {stated.value_ms} ms"
        if stated.statistic in ("median", "mean"):
            assert abs(ours - stated.value_ms) <= 0.10 * stated.value_ms, where
        elif stated.statistic == "max":
            assert abs(ours - stated.value_ms) <= stated.hi + 13, where
        else:  # 150-150: "consistently over 10 s"
            assert ours > stated.value_ms, where
    assert s["150-150"]["no_leader"] > 0 and s["150-150"]["median"] > 10 * s["150-151"]["median"]  # no randomness
    assert s["150-151"]["median"] > s["150-155"]["median"]        # a little randomness helps a lot...
    assert s["150-200"]["max"] < s["150-155"]["max"]              # ...more shortens the tail
    assert s["12-24"]["mean"] < s["50-100"]["mean"] < s["150-300"]["mean"]  # scale: shorter timeouts, less downtime
    assert all(s[r]["no_leader"] == 0 for r in ranges)
