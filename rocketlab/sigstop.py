"""Pause a process with SIGSTOP and return only once it has stopped.

``kill(pid, SIGSTOP)`` returns as soon as the signal is queued. The kernel wakes one thread to take it,
and that thread then stops the others. Until it gets a CPU, the process's other threads keep running: on
a loaded machine, a JVM's network thread can still read, write and acknowledge for a while. A test that
pauses a replica and then expects silence must wait until every thread is stopped (state ``T`` in
``/proc/PID/task/*/stat``). rocketlab's own addition; Linux (elsewhere :func:`pause` only signals).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from rocketlab.errors import RocketlabError


def stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` is stopped (or the process is gone)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return True
    for tid in tids:
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread has exited
        if stat[stat.rindex(")") + 2] not in "TtZX":  # the state follows the command name in parentheses
            return False
    return True


def pause(pid: int, *, group: bool = False, timeout_s: float = 10.0) -> None:
    """SIGSTOP ``pid`` (its process group when ``group``; ``pid`` is then the group's leader) and wait
    until every thread of ``pid`` has stopped. A thread in uninterruptible sleep (an ``fsync``) stops
    when its call returns, so this can take as long as that call."""
    (os.killpg if group else os.kill)(pid, signal.SIGSTOP)
    if not os.path.isdir("/proc/self/task"):
        return
    deadline = time.monotonic() + timeout_s
    while not stopped(pid):
        if time.monotonic() > deadline:
            raise RocketlabError(f"process {pid} did not stop within {timeout_s:g} s of SIGSTOP")
        time.sleep(0.001)
