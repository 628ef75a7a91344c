"""The campaign on real processes, bounded for CI: the classic SYNC pair and a DLedger group under ``raft``
through every fault kind (network namespaces where this machine can: CI runs as root), and shorter runs
asserting what each other system must show - the ASYNC pair loses what its lost master had not replicated
(counted, named), a DLedger group under ``dledger-0.3.1.2`` loses only through Figure 8, controller mode
under allAckInSyncStateSet loses nothing. Each run leaves its history, merged trace, HTML timeline and a
one-command replay. The full campaign (many seeds, every system and variant) runs with ROCKETLAB_FULL=1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.chaos.campaign import RunSpec, check_run_dir, run, summary_line
from rocketlab.chaos.java_clients import java_available
from rocketlab.chaos.netns import available
from rocketlab.chaos.schedule import FAULTS, LOCAL_FAULTS, Step, make_schedule
from rocketlab.chaos.systems import system

from .conftest import need_netns

pytestmark = pytest.mark.realnet
SHORT = {"step_ms": (1500, 3000), "quiet_ms": (300, 800), "recovery_ms": 4000}


def _netns() -> bool:
    if os.environ.get("CI") == "true":
        need_netns()
    return available()[0]


def _check_run_dir(out: Path, spec: RunSpec) -> list[str]:
    for name in ("history.jsonl", "events.jsonl", "reads.json", "verdict.json", "timeline.html", "replay.sh",
                 "schedule.json", "meta.json"):
        assert (out / name).exists(), name
    steps = [Step.from_json(s) for s in json.loads((out / "schedule.json").read_text())]
    label = system(spec.system, spec.variant or None).label
    kinds = spec.faults if spec.netns and available()[0] else tuple(k for k in spec.faults if k in LOCAL_FAULTS)
    assert steps == make_schedule(spec.seed, label, system(spec.system, spec.variant or None).nodes, kinds,
                                  spec.rounds, spec.step_ms, spec.quiet_ms)  # what the replay re-runs
    assert RunSpec.load(out / "spec.json") == spec
    assert "rocketlab chaos run" in (out / "replay.sh").read_text()
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "fault" for e in events) and any(e["kind"] == "put" for e in events)
    assert "rocketlab-viewer" in (out / "timeline.html").read_text()[:200000]
    return [s.fault for s in steps]


@pytest.mark.parametrize("name, variant, seed", [("sync-pair", "", 11), ("dledger", "raft", 12)])
def test_every_fault_kind_against_the_sync_pair_and_a_dledger_group(tmp_path, name, variant, seed):
    netns = _netns()
    spec = RunSpec(name, variant, seed, FAULTS, netns=netns, **SHORT)
    verdict = run(spec, tmp_path / "run")
    print(summary_line(verdict))
    ran = _check_run_dir(tmp_path / "run", spec)
    again = check_run_dir(tmp_path / "run")  # what `rocketlab chaos check RUN_DIR` computes
    assert again == {k: verdict[k] for k in again}
    expected = {k for k in (FAULTS if netns else LOCAL_FAULTS) if not (k == "bridge" and name == "sync-pair")}
    assert set(ran) == expected
    assert verdict["met"] and verdict["lost"] == [] and verdict["ok"] > 500, verdict
    assert verdict["duplicates"] == [] and verdict["gaps"] == [] and verdict["order"] == []
    if name == "dledger":
        assert verdict["election_safety"] == [] and verdict["log_matching"] == []


def _java() -> str:
    ok, why = java_available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Java 4.9.5 client is required under CI=true: {why}", pytrace=False)
        pytest.skip(f"no Java 4.9.5 client here: {why}")
    return "java"


@pytest.mark.parametrize("name, variant, faults, seed, client", [
    ("async-pair", "", ("kill", "pause"), 21, "java"),
    ("dledger", "dledger-0.3.1.2", ("partition", "kill", "loss"), 22, "kit"),
    ("controller", "all-ack", ("kill", "partition"), 23, "kit"),
])
def test_what_each_other_system_must_show(tmp_path, name, variant, faults, seed, client):
    """The ASYNC pair's producers are the unchanged Java 4.9.5 client (the kit's client runs the others)."""
    spec = RunSpec(name, variant, seed, faults, netns=_netns(), client=_java() if client == "java" else client,
                   **SHORT)
    verdict = run(spec, tmp_path / "run")
    print(summary_line(verdict))
    assert verdict["met"], verdict
    assert verdict["ok"] > 100 and verdict["read"] >= verdict["ok"] - len(verdict["lost"])
    history = [json.loads(line) for line in (tmp_path / "run" / "history.jsonl").read_text().splitlines()]
    acked = [op for op in history if op["type"] == "ok"]
    assert all(op["msg_id"] and op["offset_msg_id"] and op["queue"] in range(4) and op["broker"] in ("n0", "n1", "n2")
               for op in acked)  # what the application was told, and which node stored it
    assert check_run_dir(tmp_path / "run")["met"]
    if name == "async-pair":
        assert set(verdict["lost_named"].values()) <= {"unreplicated"}
    elif name == "dledger":
        assert all(n.startswith("figure-8") for n in verdict["lost_named"].values())
    else:
        assert verdict["lost"] == [] and verdict["master_safety"] == []


def test_the_command_line_on_127_0_0_1_and_bad_usage(tmp_path):
    """``--local``: what a machine without network namespaces runs - a partition becomes the relays' holds,
    ``isolate`` is left out, and the first line says so."""
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "chaos", "run", "--system", "dledger", "--variant",
                           "raft", "--seed", "3", "--faults", "partition,isolate,pause", "--step-ms", "1500-2000",
                           "--quiet-ms", "300-500", "--recovery-ms", "3000", "--local", "--out", str(tmp_path / "cli")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, *rest = proc.stdout.splitlines()
    assert first.startswith("chaos: no network namespaces here (asked for 127.0.0.1 (--local)); running on 127.0.0.1 "
                            "without isolate")
    assert any(line.startswith("dledger/raft seed 3:") and "as expected" in line for line in rest)
    verdict = json.loads((tmp_path / "cli" / "verdict.json").read_text())
    assert verdict["faults"] == ["partition", "pause"] and verdict["network"].startswith("127.0.0.1")
    bad = subprocess.run([sys.executable, "-m", "rocketlab.cli", "chaos", "run", "--system", "sync-pair", "--seed",
                          "1", "--faults", "meteor"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("rocketlab: --faults: unknown ['meteor']")
    bad = subprocess.run([sys.executable, "-m", "rocketlab.cli", "chaos", "run", "--system", "zookeeper", "--seed",
                          "1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown system 'zookeeper'" in bad.stderr


FULL_SYSTEMS = [("sync-pair", ""), ("async-pair", ""), ("dledger", "raft"), ("dledger", "dledger-0.3.1.2"),
                ("dledger", "dledger-0.3.2"), ("controller", "all-ack"), ("controller", "defaults")]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("name, variant", FULL_SYSTEMS, ids=[f"{n}-{v}" if v else n for n, v in FULL_SYSTEMS])
def test_full_campaign(tmp_path, name, variant, seed):
    spec = RunSpec(name, variant, seed, FAULTS, rounds=2, netns=_netns())
    verdict = run(spec, tmp_path / "run")
    print(summary_line(verdict))
    assert verdict["met"], f"{summary_line(verdict)}; replay: {verdict['replay']}"
