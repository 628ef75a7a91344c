"""``rocketlab analyze``: text and JSON output, exit codes, bad input."""

from __future__ import annotations

import argparse
import json
from collections import Counter

import pytest

from rocketlab import cli as main_cli
from rocketlab.analysis import cli
from rocketlab.errors import RocketlabError
from rocketlab.trace import RunDirError, load_events

pytestmark = pytest.mark.spark


def _parse(argv):
    parser = argparse.ArgumentParser(prog="rocketlab")
    cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_analyze_text_output(spark, jsonl_run, parquet_run, capsys):
    args = _parse(["analyze", str(jsonl_run), str(parquet_run)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    pdf = load_events(jsonl_run)
    header = (f"run alpha: {len(pdf)} events, t {pdf.t.min()}..{pdf.t.max()} ms "
              f"({(pdf.t.max() - pdf.t.min()) / 1000:.1f} s), nodes n0, n1, n2, 3 faults, 0 violations")
    assert header in out.splitlines()
    assert "run beta: " in out
    heartbeats = int((pdf.kind == "heartbeat").sum())
    assert any(line.split()[:3] == ["heartbeat", "n1", str(heartbeats)] for line in out.splitlines())
    assert "    t=2500 crash n2" in out and "    t=4400 partition n0 n1,n2" in out
    assert spark.range(3).count() == 3  # the shared session was reused and left running


def test_analyze_json_one_object_per_run(spark, jsonl_run, violation_run, capsys):
    args = _parse(["analyze", str(jsonl_run), str(violation_run), "--json", "--master", "local[2]"])
    assert args.func(args) == 1  # gamma recorded an invariant violation
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    alpha, gamma = (json.loads(line) for line in lines)
    pdf = load_events(jsonl_run)
    assert alpha["run"] == "alpha" and alpha["events"] == len(pdf)
    assert (alpha["first_t"], alpha["last_t"], alpha["span_ms"]) == (
        pdf.t.min(), pdf.t.max(), pdf.t.max() - pdf.t.min())
    assert alpha["nodes"] == ["n0", "n1", "n2"]
    per = {(r["kind"], r["node"]): r["events"] for r in alpha["per_kind_node"]}
    nodes = [node if isinstance(node, str) else None for node in pdf.node]
    assert per == Counter(zip(pdf.kind, nodes, strict=True))
    assert alpha["faults"][0] == {"t": 2500, "node": None, "action": "crash", "targets": ["n2"]}
    assert alpha["violations"] == []
    assert gamma["violations"] == [{"t": 4500, "node": "n2", "invariant": "log_matching",
                                    "detail": "index 3 differs"}]
    assert all(key == key.lower() for key in alpha)


def test_analyze_bad_input_raises(tmp_path, jsonl_run):
    with pytest.raises(RunDirError, match="no such directory"):
        cli.analyze([tmp_path / "nope"])
    (tmp_path / "other").mkdir()
    twin = tmp_path / "other" / "alpha"
    twin.mkdir()
    (twin / "events.jsonl").write_text((jsonl_run / "events.jsonl").read_text())
    with pytest.raises(RocketlabError, match="have the same name 'alpha'"):
        cli.analyze([jsonl_run, twin])


def test_main_cli_exit_2_with_one_line(tmp_path, capsys):
    assert main_cli.main(["analyze", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err == f"rocketlab: {tmp_path / 'nope'}: not a run directory (no such directory)\n"


def test_main_cli_corrupt_file_exit_2(spark, tmp_path, capsys):
    run = tmp_path / "torn"
    run.mkdir()
    (run / "events.jsonl").write_text('{"t":0,"seq":0,"node":null,"kind":"heal"}\n{"t":1,"seq":1,"no\n')
    assert main_cli.main(["analyze", str(run)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"rocketlab: {run / 'events.jsonl'}: corrupt event at line 2: ")


def _rocketlab(*argv: str) -> tuple[int, str, str, float]:
    """``rocketlab ARGV`` in its own process (no Spark session of the tests' to reuse)."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("SPARK_MASTER", None)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "import sys; from rocketlab.cli import main; sys.exit(main(sys.argv[1:]))", *argv], capture_output=True, text=True, env=env,
                          timeout=600)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def test_an_unreachable_master_is_one_line_at_once(jsonl_run):
    code, out, err, seconds = _rocketlab("analyze", str(jsonl_run), "--master", "spark://127.0.0.1:1")
    assert code == 2 and out == ""
    assert err.splitlines() == ["rocketlab: cannot reach the Spark master at spark://127.0.0.1:1: Connection refused"]
    assert seconds < 60  # Spark started would retry for over a minute (72 s measured); this is imports


def test_a_corrupt_events_file_is_refused_before_spark_starts(tmp_path):
    run = tmp_path / "torn"
    run.mkdir()
    (run / "events.jsonl").write_text('{"t":0,"seq":0,"node":null,"kind":"heal"}\n{"t":1,"seq":1,"no\n')
    code, out, err, seconds = _rocketlab("analyze", str(run), "--master", "local[1]")
    assert code == 2 and out == "" and "starting Spark" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"rocketlab: {run / 'events.jsonl'}: corrupt event at line 2: ")
    assert seconds < 60
    with pytest.raises(RunDirError, match="corrupt event at line 2"):
        cli.check_inputs([run])


def test_analyze_says_when_it_starts_spark(jsonl_run):
    code, out, err, _seconds = _rocketlab("analyze", str(jsonl_run), "--master", "local[1]", "--json")
    assert code == 0 and json.loads(out)["run"] == "alpha"
    assert "analyze: starting Spark (local[1]) for 1 run(s)" in err.splitlines()


def test_analyze_a_store_per_topic_and_queue(spark, tmp_path, capsys):
    """``--store``: a broker's store directory summarised per topic and queue with the data sources; a
    corrupted copy exits 1 and names the file."""
    import shutil

    from rocketlab.store import Message, MessageStore

    root = tmp_path / "store"
    with MessageStore.open(root, threads=False, mapped_file_size_commit_log=4096) as store:
        for i in range(40):
            store.put_message(Message("TopicA" if i % 4 else "TopicB", b"x" * (10 + i), i % 2))
        store.reput()
    args = _parse(["analyze", "--store", str(root), "--json"])
    assert args.func(args) == 0
    (summary,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert summary["records"] == 40 and summary["corrupt"] == [] and summary["kind"] == ["classic"]
    per = {(r["topic"], r["queue_id"]): r for r in summary["per_queue"]}
    assert {k: (r["records"], r["first_offset"], r["last_offset"], r["cq_units"]) for k, r in per.items()} == {
        ("TopicA", 0): (10, 0, 9, 10), ("TopicA", 1): (20, 0, 19, 20), ("TopicB", 0): (10, 0, 9, 10)}
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    first = sorted((copy / "commitlog").iterdir())[1]
    data = bytearray(first.read_bytes())
    data[4:8] = b"\xde\xad\xbe\xef"
    first.write_bytes(bytes(data))
    args = _parse(["analyze", "--store", str(copy)])
    assert args.func(args) == 1
    out = capsys.readouterr().out
    assert f"corrupt: {first.name}: {first.name} at phy offset {int(first.name)}: " in out and "1 corrupt" in out
    (tmp_path / "empty").mkdir()
    with pytest.raises(RocketlabError, match="no commit log here"):
        cli.analyze_stores([tmp_path / "empty"])
