"""rocketlab.sigstop: once :func:`pause` returns, no thread of the process runs (a busy thread's counter
stands still), and after SIGCONT it runs again."""

from __future__ import annotations

import mmap
import os
import signal
import subprocess
import sys
import time

import pytest

from rocketlab.sigstop import pause, stopped

CHILD = """
import mmap, sys, threading
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 8 * 4)
def spin(k):
    n = 0
    while True:
        n += 1
        m[8 * k:8 * k + 8] = n.to_bytes(8, "little")
for k in range(4):
    threading.Thread(target=spin, args=(k,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc")


def _counters(m: mmap.mmap) -> list[int]:
    return [int.from_bytes(m[8 * k:8 * k + 8], "little") for k in range(4)]


@pytest.mark.parametrize("group", [False, True])
def test_after_pause_no_thread_runs_and_after_sigcont_all_do(tmp_path, group):
    path = tmp_path / "counters"
    path.write_bytes(bytes(32))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with open(path, "r+b") as f, mmap.mmap(f.fileno(), 32) as m:
            assert not stopped(proc.pid)
            for _ in range(20):  # a bare SIGSTOP leaves a thread running in about 4 of 10 tries here
                pause(proc.pid, group=group)
                assert stopped(proc.pid)
                before = _counters(m)
                time.sleep(0.02)
                assert _counters(m) == before  # not one more step in any thread
                os.kill(proc.pid, signal.SIGCONT)
                deadline = time.monotonic() + 10
                while not all(a > b for a, b in zip(_counters(m), before, strict=True)):
                    assert time.monotonic() < deadline, "the threads did not run again after SIGCONT"
                    time.sleep(0.01)
    finally:
        proc.kill()
        proc.wait()
    assert stopped(proc.pid)  # a process that is gone counts as stopped
