"""The checker is tested by the bugs it must catch (issue 40): each planted bug (tests/chaos/planted.py, a
patch applied from outside the kit, run as every node's command through ``RunSpec.node_module``; the
consumer's bug in this process) runs a short campaign, and the verdict must fail and name it.

Quick (CI): one seed each, short steps and recovery, on 127.0.0.1 (no fault here needs a namespace; the
six-node controller case uses namespaces where it can, whose fixed ports cannot be taken meanwhile).
Full (``ROCKETLAB_FULL=1``): five seeds each; the catch rate is in docs/chaos.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rocketlab.chaos import campaign, checker, losses
from rocketlab.chaos.campaign import RunSpec, check_run_dir, run, summary_line
from rocketlab.chaos.netns import available
from rocketlab.chaos.schedule import make_schedule
from rocketlab.chaos.systems import system
from rocketlab.errors import RocketlabError

from .planted import BUGS, skipping_read_back

pytestmark = pytest.mark.realnet
SHORT = {"step_ms": (800, 1200), "quiet_ms": (300, 500), "recovery_ms": 1500, "netns": False}

CASES = [  # (bug, system, variant, faults)
    ("sync-ack-at-start", "sync-pair", "", ("pause",)),
    ("slave-ack-before-write", "sync-pair", "", ("pause",)),
    ("dledger-self-quorum", "dledger", "dledger-0.3.1.2", ("pause",)),
    ("dledger-self-quorum", "dledger", "raft", ("pause",)),
    ("trace-loss-200ms", "dledger", "raft", ("kill",)),
    ("store-loses-tail", "dledger", "raft", ("kill",)),
    ("controller-elect-outside", "controller", "all-ack", ("kill",)),
]
IDS = [f"{bug}-{variant}" if variant else bug for bug, _, variant, _ in CASES]


def elect_outside_seeds(count: int) -> list[int]:
    """Seeds whose two kills hit a slave, then the master (n0) while the slave may still be catching up:
    the only moment a live broker is outside the SyncStateSet at an election."""
    sys_ = system("controller", "all-ack")
    found = []
    for seed in range(1, 200):
        steps = make_schedule(seed, sys_.label, sys_.nodes, ("kill",), 2, SHORT["step_ms"], SHORT["quiet_ms"])
        if [s.targets[0] for s in steps][1:] == ["n0"] and steps[0].targets[0] in ("n1", "n2"):
            found.append(seed)
            if len(found) == count:
                break
    return found


def _spec(bug: str, name: str, variant: str, faults: tuple[str, ...], seed: int) -> RunSpec:
    if bug == "controller-elect-outside":  # six nodes: namespaces (fixed ports) where this machine has them
        return RunSpec(name, variant, seed, faults, rounds=2, node_module=f"tests.chaos.planted:{bug}",
                       **{**SHORT, "netns": available()[0]})
    return RunSpec(name, variant, seed, faults, node_module=f"tests.chaos.planted:{bug}", **SHORT)


def _caught(bug: str, verdict: dict) -> bool:
    return not verdict["met"] and BUGS[bug][1] in verdict["checks"]


def _run_case(tmp_path: Path, bug: str, name: str, variant: str, faults: tuple[str, ...], seed: int) -> dict:
    spec = _spec(bug, name, variant, faults, seed)
    try:
        verdict = run(spec, tmp_path / "run")
    except RocketlabError as e:  # on 127.0.0.1 a port picked free may be taken before a node binds it
        if "did not start" not in str(e):
            raise
        verdict = run(spec, tmp_path / "run")
    print(summary_line(verdict))
    return verdict


QUICK_SEEDS = {"controller-elect-outside": elect_outside_seeds(3)}
"""Seeds tried in turn until one catches the bug (default: seeds 1, 2, 3). A planted bug shows only when the
faults meet it at the right moment - a slave acknowledging before writing shows when the master is lost
with frames still unwritten, the controller's election outside the SyncStateSet needs a broker still
catching up when the master dies - and on a loaded machine that moment may pass (seed 1 once missed each):
the suite asks for a catch within three seeds, each with its own timing; almost always the first."""


@pytest.mark.parametrize("bug, name, variant, faults", CASES, ids=IDS)
def test_each_planted_bug_is_named(tmp_path, bug, name, variant, faults):
    for seed in QUICK_SEEDS.get(bug, [1, 2, 3]):
        verdict = _run_case(tmp_path / f"seed{seed}", bug, name, variant, faults, seed)
        if _caught(bug, verdict):
            break
    assert _caught(bug, verdict), summary_line(verdict)
    tmp_path = tmp_path / f"seed{seed}"
    assert f"--node-module tests.chaos.planted:{bug}" in verdict["replay"]
    if bug == "dledger-self-quorum" and variant == "raft":
        # the figure-8 excuse needs counting: the same run judged as dledger-0.3.1.2 names no loss figure-8
        spec = json.loads((tmp_path / "run" / "spec.json").read_text())
        again_dir = tmp_path / "as-0.3.1.2"
        shutil.copytree(tmp_path / "run", again_dir)
        (again_dir / "spec.json").write_text(json.dumps({**spec, "variant": "dledger-0.3.1.2"}))
        again = check_run_dir(again_dir)
        assert not again["met"] and "early-ack" in again["checks"]
        assert not any(n.startswith("figure-8") for n in again["lost_named"].values())


def test_a_consumer_that_skips_messages_is_named_consumer_side(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "read_back", skipping_read_back(campaign.read_back))
    verdict = run(RunSpec("sync-pair", "", 1, ("pause",), **SHORT), tmp_path / "run")
    print(summary_line(verdict))
    assert not verdict["met"] and verdict["lost"]
    assert all(n.startswith("consumer-side") for n in verdict["lost_named"].values()), verdict["lost_named"]


def test_the_figure_8_excuse_needs_a_commit_by_counting():
    """An acknowledged entry later replaced is ``figure-8`` only where a leader of a later term committed it
    by counting; without that commit in the trace it is ``unexplained`` and fails the run."""
    history = [{"type": "ok", "id": "p0-0", "process": 0, "broker": "n0", "t": 100, "phy_offset": 48,
                "queue_offset": 0}]
    events = [{"t": 90, "node": "n0", "kind": "role", "term": 1, "role": "LEADER", "leader": "n0"},
              {"t": 95, "node": "n0", "kind": "append", "index": 0, "term": 1, "pos": 0, "size": 148}]
    logs = {"n0": [(0, 3, "other")], "n1": [(0, 3, "other")], "n2": []}
    stores = {n: {b for _, _, b in log} for n, log in logs.items()}
    named = losses.name_losses(["p0-0"], history, "dledger", events, logs, stores, "n1")
    assert named == {"p0-0": "unexplained"}
    counting = [{"t": 200, "node": "n2", "kind": "role", "term": 2, "role": "LEADER", "leader": "n2"},
                {"t": 201, "node": "n2", "kind": "append", "index": 0, "term": 1, "pos": 0, "size": 148},
                {"t": 210, "node": "n2", "kind": "commit", "index": 0, "pos": 0}]
    named = losses.name_losses(["p0-0"], history, "dledger", events + counting, logs, stores, "n1")
    assert named["p0-0"].startswith("figure-8: entry 0 of term 1 committed by counting at n2 in term 2")
    clean = {"lost": ["p0-0"], "duplicates": [], "gaps": [], "order": [], "refused_but_stored": [], "checks": {}}
    assert checker.expectation("dledger", "dledger-0.3.1.2", {**clean, "lost_named": named})[0]
    assert not checker.expectation("dledger", "dledger-0.3.1.2", {**clean, "lost_named": {"p0-0": "unexplained"}})[0]


FULL_SEEDS = range(1, 6)


@pytest.mark.slow
@pytest.mark.parametrize("bug, name, variant, faults", CASES, ids=IDS)
def test_full_planted_bug_catch_rate(tmp_path, bug, name, variant, faults):
    seeds = elect_outside_seeds(len(FULL_SEEDS)) if bug == "controller-elect-outside" else list(FULL_SEEDS)
    caught = []
    for seed in seeds:
        verdict = _run_case(tmp_path / str(seed), bug, name, variant, faults, seed)
        caught.append(_caught(bug, verdict))
    print(f"catch rate {bug} {variant}: {sum(caught)}/{len(caught)}")
    # a lazy trace loses events only if a kill lands while some are unwritten, and the controller elects
    # outside the SyncStateSet only if a broker is still catching up when the master dies: one seed may miss
    misses = 1 if bug in ("trace-loss-200ms", "controller-elect-outside") else 0
    assert sum(caught) >= len(caught) - misses, f"{bug}: caught on {sum(caught)} of {len(caught)} seeds {seeds}"


@pytest.mark.slow
def test_full_consumer_side_catch_rate(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "read_back", skipping_read_back(campaign.read_back))
    caught = []
    for seed in FULL_SEEDS:
        verdict = run(RunSpec("sync-pair", "", seed, ("pause",), **SHORT), tmp_path / str(seed))
        print(summary_line(verdict))
        named = verdict["lost_named"].values()
        caught.append(not verdict["met"] and bool(named) and all(n.startswith("consumer-side") for n in named))
    print(f"catch rate consumer-skip: {sum(caught)}/{len(caught)}")
    assert all(caught)
