"""The judge and its sandbox on one CPU while they take turns, back on every CPU when another program needs it.

A scenario test calls the learner's function thousands of times, one crossing each (lab 04's churn test:
some 4,500 round trips over its three seeds), and the judge and the sandbox never run at once: one waits
while the other works. On two CPUs every crossing wakes a process on the other one, and on this kind of
machine (a virtual one) that costs some 40 us a round trip; on one CPU, 5 us
(``benchmarks/bench_grade_speed.py --pingpong``). So a judge pins itself to the CPU it runs on, and the
sandbox it starts inherits the pin.

Pinned, the pair cannot move away from another busy program. :meth:`CpuPair.watch`, called at each request,
looks every :data:`WATCH_S` at how long the pair waited for that CPU (``/proc/PID/schedstat``); above
:data:`CROWDED` of the time both go back to every CPU they were allowed, for the rest of the grading.

Only a judge pins (:func:`enable`, called by :func:`rocketlab.grading.worker.serve`): a process that makes a
sandbox of its own (a notebook, a test) is left as it is. Not for a lab whose tests start a JVM (the lab
table's ``java``: Spark's threads need every CPU), and not with ``ROCKETLAB_GRADER_PIN=0``. The sandbox's
code may change its own affinity: that can only make its grading slower. rocketlab's own addition.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from rocketlab.grading.fair_time import below, schedstat

WATCH_S = 0.1
"""How often (wall seconds) a pinned pair looks at how long it waited for its CPU."""
CROWDED = 0.25
"""The share of the time waiting for the CPU above which the pair is unpinned."""

_enabled = False
_released = False  # this judge unpinned once: it stays unpinned


def enable() -> None:
    """This process is a judge: its sandboxes may share its CPU."""
    global _enabled
    _enabled = True


def current_cpu() -> int:
    """The CPU this thread runs on (``/proc/thread-self/stat``, field 39)."""
    text = Path("/proc/thread-self/stat").read_text()
    return int(text[text.rindex(")") + 2:].split()[36])


class CpuPair:
    """The judge's thread pinned to one CPU, the sandbox started after it (which inherits it), and the watch
    that undoes both. :meth:`pin` returns None where pinning does not apply or fails."""

    def __init__(self, cpu: int, allowed: set[int]) -> None:
        self.cpu, self.allowed = cpu, allowed
        self.root: int | None = None  # the sandbox's first process
        self.pids: list[int] | None = None  # the judge's and the sandbox's, watched
        self.next_check = time.monotonic() + WATCH_S
        self.last: tuple[float, float] | None = None

    @classmethod
    def pin(cls, jvm: bool) -> CpuPair | None:
        if (not _enabled or _released or jvm or os.environ.get("ROCKETLAB_GRADER_PIN") == "0"
                or not hasattr(os, "sched_setaffinity")):
            return None
        try:
            allowed = os.sched_getaffinity(0)
            cpu = current_cpu()
            if len(allowed) < 2 or cpu not in allowed:
                return None
            os.sched_setaffinity(0, {cpu})
        except (OSError, ValueError, IndexError):
            return None
        return cls(cpu, allowed)

    def started(self, root: int) -> None:
        self.root = root

    def watch(self) -> None:
        """Every :data:`WATCH_S`: unpin the pair if it waited for its CPU more than :data:`CROWDED` of the time."""
        now = time.monotonic()
        if now < self.next_check or self.root is None:
            return
        self.next_check = now + WATCH_S
        if self.pids is None:  # the sandbox's processes, once it runs (one pass over /proc)
            self.pids = [os.getpid(), self.root, *below(self.root)]
        waited = sum(schedstat(pid)[1] for pid in self.pids)
        if self.last is not None and (waited - self.last[1]) > CROWDED * (now - self.last[0]):
            self.release()
            return
        self.last = (now, waited)

    def release(self) -> None:
        """Both on every CPU they were allowed, for the rest of this judge's grading."""
        global _released
        _released = True
        self.next_check = float("inf")
        pids = [] if self.root is None else [self.root, *below(self.root)]
        for pid in [0, *pids]:
            try:
                os.sched_setaffinity(pid, self.allowed)
            except OSError:
                continue

    def stop(self) -> None:
        """The sandbox is gone: the judge back on every CPU (its next sandbox pins it again)."""
        try:
            os.sched_setaffinity(0, self.allowed)
        except OSError:
            pass
