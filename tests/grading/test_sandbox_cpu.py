"""The judge and its sandbox share one CPU while they take turns (:mod:`rocketlab.grading.sandbox_cpu`), and
go back to every CPU when another program crowds it. Real processes, real affinities."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from rocketlab.grading import sandbox_cpu
from rocketlab.grading.fair_time import below
from rocketlab.grading.sandbox import RemoteFunction, Sandbox

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                                reason="needs Linux and at least two CPUs")

ECHO = "def echo(x):\n    return x\n"


def _allowed(pid: int) -> set[int]:
    return os.sched_getaffinity(pid)


@pytest.fixture
def judge(monkeypatch):
    """This process acting as a judge (``enable``), put back as it was afterwards."""
    before = os.sched_getaffinity(0)
    monkeypatch.setattr(sandbox_cpu, "_enabled", True)
    monkeypatch.setattr(sandbox_cpu, "_released", False)
    monkeypatch.delenv("ROCKETLAB_GRADER_PIN", raising=False)
    yield
    os.sched_setaffinity(0, before)


def test_a_judge_and_its_sandbox_share_one_cpu_and_the_judge_gets_every_cpu_back(judge):
    everything = os.sched_getaffinity(0)
    box = Sandbox("lab05")
    try:
        assert box.cpu is not None
        box.load(ECHO, "echo.py")
        assert RemoteFunction(box, "echo")(41) == 41
        pinned = {box.cpu.cpu}
        assert _allowed(0) == pinned
        tree = [box.proc.pid, *below(box.proc.pid)]
        assert len(tree) >= 1 and all(_allowed(pid) == pinned for pid in tree), tree  # unshare and python
    finally:
        box.stop()
    assert _allowed(0) == everything


def test_a_crowded_cpu_unpins_both_for_the_rest_of_the_grading(judge):
    everything = os.sched_getaffinity(0)
    box = Sandbox("lab05")
    burner = None
    try:
        box.load(ECHO, "echo.py")
        echo = RemoteFunction(box, "echo")
        cpu = box.cpu.cpu
        burner = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"])
        deadline = time.monotonic() + 20
        i = 0
        while not sandbox_cpu._released and time.monotonic() < deadline:
            i += 1
            echo([i, "x" * 2000])  # work on both sides, so each waits behind the burner
        assert sandbox_cpu._released, "the pair never gave up its crowded CPU"
        assert _allowed(0) == everything
        assert all(_allowed(pid) == everything for pid in [box.proc.pid, *below(box.proc.pid)])
        assert sandbox_cpu.CpuPair.pin(jvm=False) is None  # this judge does not pin again
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
        box.stop()


def test_no_pin_outside_a_judge_for_a_jvm_lab_or_when_switched_off(monkeypatch, judge):
    assert sandbox_cpu.CpuPair.pin(jvm=True) is None
    monkeypatch.setenv("ROCKETLAB_GRADER_PIN", "0")
    assert sandbox_cpu.CpuPair.pin(jvm=False) is None
    monkeypatch.delenv("ROCKETLAB_GRADER_PIN")
    monkeypatch.setattr(sandbox_cpu, "_enabled", False)  # a notebook or a test making a sandbox itself
    everything = os.sched_getaffinity(0)
    box = Sandbox("lab05")
    try:
        assert box.cpu is None and _allowed(0) == everything
    finally:
        box.stop()


def test_the_current_cpu_is_one_this_thread_may_run_on():
    assert sandbox_cpu.current_cpu() in os.sched_getaffinity(0)
