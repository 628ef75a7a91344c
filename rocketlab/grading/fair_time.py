"""Fair time limits: a test's limit counts the submission's own CPU time, scaled to this machine.

The runner (:mod:`rocketlab.grading.runner`) watches each test with a :class:`TestClock`:

* **CPU**: the CPU time of every process below the judge (the sandbox running the submission, and
  anything it started), from ``/proc/PID/stat``. The judge's own work - the simulated cluster, the
  comparisons, the round trips' encoding on its side - is not the submission's and is not counted, so a
  tight limit stops an endless loop without failing a correct solution whose test merely has much to check.
* **Nothing running**: a submission that sleeps or blocks uses no CPU. The time during which no thread of
  the judge or its sandbox was on a CPU or waiting for one (``/proc/PID/task/TID/schedstat``) is counted
  against the same limit (at least :data:`IDLE_FLOOR_S`, so a slow disk's fsyncs do not count as sleep).
* **Wall clock**: a backstop, the test's own limit (which its author sized for the whole test) and at least
  three times the CPU limit.
* **Load**: time spent waiting for a CPU (the run queue, another program's load) counts against nothing.
  A test stopped while its threads waited for a CPU more than :data:`LOADED` of the time is re-run once
  in a fresh judge before it counts, and the report says so.

Limits are scaled by :func:`machine_factor`: the CPU time the reference solution takes on one graded
table (:data:`CALIBRATION_TEST`, in-process) on this machine, over what it took where the limits were
written (:data:`AUTHORED_CPU_S`), never below 1. It is measured once per machine and cached
(``$XDG_CACHE_HOME/rocketlab/grading-calibration.json``, keyed by host, CPU model and count, Python and
kit version), not per grading. rocketlab's own addition.
"""

from __future__ import annotations

import json
import os
import platform
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rocketlab
from rocketlab.grading import registry
from rocketlab.i18n import _

CALIBRATION_TEST = "lab03.handle_vote/decision_table"
"""The reference solution's work that calibrates a machine: 8,640 vote decisions and their comparison."""
AUTHORED_CPU_S = 0.029
"""CPU seconds one run of :data:`CALIBRATION_TEST` takes in-process on the machine the limits were written
on (a 2-core x86_64 VM, Python 3.11; the best of 3 rounds of 5 runs)."""
IDLE_FLOOR_S = 3.0
LOADED = 0.3
"""The share of a test's time its threads waited for a CPU above which a stopped test is re-run once."""
POLL_S = 0.5
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

_lock = threading.Lock()
_factor: float | None = None


def _cache_file() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocketlab" / "grading-calibration.json"


def machine_key() -> str:
    """What identifies this machine's speed: host, CPU model and count, Python, kit version."""
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.node()}|{model or platform.processor()}|{os.cpu_count()}|{platform.python_version()}|" \
           f"{rocketlab.__version__}"


def measure_reference_cpu(rounds: int = 3, runs: int = 5) -> float:
    """The reference solution's CPU time for one run of :data:`CALIBRATION_TEST` here (in-process; the
    best of ``rounds`` rounds of ``runs`` runs, about a second in all)."""
    test = registry.TESTS.get(CALIBRATION_TEST)
    if test is None:
        return AUTHORED_CPU_S
    impl = registry.EXERCISES[test.exercise].reference
    best = float("inf")
    for _round in range(rounds):
        t0 = time.process_time()
        for _run in range(runs):
            test.fn(registry.Ctx(impl, 0))
        best = min(best, (time.process_time() - t0) / runs)
    return best


def machine_factor() -> float:
    """How much slower this machine runs the reference than where the limits were written (>= 1): read
    from the cache, measured and cached the first time on a machine."""
    global _factor
    with _lock:
        if _factor is not None:
            return _factor
        key, path = machine_key(), _cache_file()
        try:
            cached = json.loads(path.read_text())
            if cached.get("key") == key and float(cached["reference_cpu_s"]) > 0:
                _factor = max(1.0, float(cached["reference_cpu_s"]) / AUTHORED_CPU_S)
                return _factor
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        measured = measure_reference_cpu()
        _factor = max(1.0, measured / AUTHORED_CPU_S)
        record = {"key": key, "reference_cpu_s": measured, "authored_cpu_s": AUTHORED_CPU_S,
                  "factor": round(_factor, 3), "test": CALIBRATION_TEST, "measured_at": time.time()}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(record, indent=1) + "\n")
            tmp.replace(path)
        except OSError:
            pass  # an unwritable home: measured again in the next process, still not per grading
        return _factor


def forget_calibration() -> None:
    """Drop this process's memory of the factor (tests; the cache file is left alone)."""
    global _factor
    with _lock:
        _factor = None


# ----------------------------------------------------------------------------------------- the tree's usage
@dataclass
class Usage:
    """A judge process tree at one moment: the submission's CPU seconds (every process below the judge),
    and the seconds all its threads (judge included) spent on a CPU and waiting for one."""

    sandbox_cpu: float = 0.0
    on_cpu: float = 0.0
    waiting: float = 0.0


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds incl. reaped children) of ``pid``, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return int(fields[1]), (utime + stime + cutime + cstime) / CLK_TCK


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds ``pid``'s live threads spent on a CPU and waiting in the run queue."""
    on = wait = 0.0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0, 0.0
    for tid in tids:
        try:
            parts = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        except OSError:
            continue
        on += int(parts[0]) / 1e9
        wait += int(parts[1]) / 1e9
    return on, wait


def below(root: int) -> dict[int, float]:
    """Every process below ``root`` (one pass over ``/proc``): its CPU seconds, incl. reaped children."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got is not None:
                parent[int(entry)], cpu[int(entry)] = got
    found: list[int] = []
    frontier = [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while frontier:
        kids = children.get(frontier.pop(), [])
        found += kids
        frontier += kids
    return {pid: cpu[pid] for pid in found}


def usage(judge: int) -> Usage:
    """The usage of ``judge`` and the processes below it."""
    cpu = below(judge)
    out = Usage(sandbox_cpu=sum(cpu.values()))
    for pid in [judge, *cpu]:
        on, wait = schedstat(pid)
        out.on_cpu += on
        out.waiting += wait
    return out


class TestClock:
    """One test's limits, checked as it runs: the submission's CPU, time with nothing running, the wall."""

    def __init__(self, judge: int, limit_s: float, own_limit_s: float, factor: float) -> None:
        self.judge, self.factor = judge, factor
        self.cpu_limit = limit_s * factor
        self.idle_limit = max(limit_s, IDLE_FLOOR_S) * factor
        self.wall_limit = max(own_limit_s, 3 * limit_s) * factor
        self.started = time.monotonic()
        self.first = self.last = usage(judge)
        self.last_t = self.started
        self.idle = 0.0
        self.why: str | None = None

    def deadline(self) -> float:
        """When to look again."""
        return min(time.monotonic() + POLL_S, self.started + self.wall_limit)

    def check(self) -> str | None:
        """None while within the limits, else why the test is stopped (in the learner's terms)."""
        now, seen = time.monotonic(), usage(self.judge)
        dt = now - self.last_t
        busy = (seen.on_cpu - self.last.on_cpu) + (seen.waiting - self.last.waiting)
        self.idle += max(0.0, dt - busy)
        self.last, self.last_t = seen, now
        used = seen.sandbox_cpu - self.first.sandbox_cpu
        if used > self.cpu_limit:
            self.why = _("stopped after {seconds} s of your code's CPU time, this test's limit ({limit}): does "
                         "your code loop forever?").format(seconds=f"{used:.1f}", limit=self._limit(self.cpu_limit))
        elif self.idle > self.idle_limit:
            self.why = _("stopped after {seconds} s with nothing running, this test's limit ({limit}): does your "
                         "code sleep or wait forever?").format(seconds=f"{self.idle:.1f}",
                                                               limit=self._limit(self.idle_limit))
        elif now - self.started >= self.wall_limit:
            self.why = _("stopped after {seconds} s, this test's limit: does your code loop forever or sleep?").format(
                seconds=f"{now - self.started:.0f}")
        return self.why

    def _limit(self, value: float) -> str:
        scaled = _(", scaled x{factor} to this machine").format(factor=f"{self.factor:.2f}")
        return _("{seconds} s").format(seconds=f"{value:.3g}") + (scaled if self.factor > 1.001 else "")

    def loaded(self) -> float:
        """The share of the test's time its threads waited for a CPU (the machine's load, not the test's)."""
        wall = max(1e-6, self.last_t - self.started)
        return min(1.0, (self.last.waiting - self.first.waiting) / wall)


def describe() -> dict[str, Any]:
    """The cached calibration (for the docs and ``rocketlab doctor``-like reports)."""
    try:
        return json.loads(_cache_file().read_text())
    except (OSError, ValueError):
        return {}
