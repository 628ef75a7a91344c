"""Shared by the benchmark scripts: record results with machine info, print aligned figure lines.

    from _common import record, line
    line("pandas load_events", 12.3, "s")          # "  pandas load_events ........ 12.3 s"
    record("trace_analysis", {...})                # -> benchmarks/results/trace_analysis.json
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where :func:`package_at` extracts earlier versions of the package (ignored by git).
CACHE_DIR = Path(__file__).resolve().parent / ".cache"


def machine_info() -> dict[str, Any]:
    """Where the figures were measured: CPU count, memory, OS, Python, rocketlab version."""
    from rocketlab import __version__

    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "rocketlab": __version__,
    }
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
        info["load_avg_1m"] = round(os.getloadavg()[0], 2)
    except (OSError, ValueError, IndexError):
        pass
    return info


def record(name: str, results: dict[str, Any], summary: list[dict[str, Any]] | None = None) -> Path:
    """Write ``benchmarks/results/NAME.json``: name, UTC timestamp, machine info, ``results`` and the
    ``summary`` rows (:func:`rocketlab.benchtable.summary_row`) that ``rocketlab bench`` tabulates; the
    rows are printed as a table too."""
    from rocketlab.benchtable import evaluate, render

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    doc = {"name": name, "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "machine": machine_info(), "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
           "results": results, "summary": summary or []}
    path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    if summary:
        print(render([{"benchmark": name, **evaluate(row)} for row in summary]))
    print(f"results: {path}")
    return path


def line(label: str, value: float | int | str, unit: str = "", note: str = "") -> None:
    """Print one figure: label padded with dots, the value, its unit and an optional note."""
    if isinstance(value, float):
        shown = f"{value:,.2f}"
    else:
        shown = f"{value:,}" if isinstance(value, int) else value
    text = f"  {label} {'.' * max(2, 44 - len(label))} {shown} {unit}".rstrip()
    print(f"{text}   {note}" if note else text)


# --- an earlier version of the package, measured in the same run ----------------------------------

def package_at(commit: str, cache_dir: Path = CACHE_DIR) -> Path | None:
    """A directory holding ``rocketlab/`` as of ``commit``, taken from this checkout's git history and kept
    under ``cache_dir`` for later runs; None where the history lacks it (a tarball, a shallow clone): the
    caller then has no same-run "before" and says so."""
    dest = cache_dir / commit
    if (dest / "rocketlab" / "__init__.py").is_file():
        return dest
    tmp = cache_dir / f"{commit}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "--format=tar", commit, "rocketlab"],
                                 capture_output=True, check=True).stdout
        tmp.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    tmp.rename(dest)
    return dest


def run_with_package(source: Path, code: str, timeout_s: float = 1800) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter whose ``rocketlab`` is the one under ``source`` (this checkout's
    or :func:`package_at`'s) and return the JSON object it prints last. The same helper runs the current
    package too, so "before" and "after" pay the same process start and warm-up."""
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout_s,
                          cwd=str(source))
    if done.returncode != 0:
        raise RuntimeError(f"benchmark child on {source} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- real nodes for the multi-process benchmarks -------------------------------------------------

def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(config: Path, env: dict[str, str] | None = None):
    """``rocketlab node --config CONFIG`` as a child process (``env``: added to this one's environment),
    returned once it listens."""
    proc = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, **(env or {})})
    proc.stdout.readline()
    return proc


def stop(*procs) -> None:
    """SIGTERM every node, then wait for each (a clean shutdown flushes and writes final state)."""
    import signal

    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        proc.wait(timeout=60)


def best_interleaved(rounds: int, runs: dict[str, Callable[[], dict[str, Any]]], key: str) -> dict[str, dict[str, Any]]:
    """Run each of ``runs`` ``rounds`` times, taking turns (a, b, a, b, ...), and keep per name the run with
    the highest ``key``: on a shared VM whose speed drifts within minutes, the slow runs measure the
    neighbours, and taking turns gives a figure and its baseline the same share of the slow phases.
    The kept run records ``rounds`` and every round's ``key`` (``<key>_rounds``)."""
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seen[name].append(run())
    return {name: {**max(results, key=lambda r: r[key]), "rounds": rounds,
                   f"{key}_rounds": [r[key] for r in results]} for name, results in seen.items()}


@contextlib.contextmanager
def slowed(owner: Any, name: str, delay_ms: float) -> Iterator[None]:
    """``owner.name`` (an fsync-like function) made ``delay_ms`` slower while the block runs: a disk
    whose flush is not host-cached."""
    real, delay = getattr(owner, name), delay_ms / 1000

    def slow(fd: int) -> None:
        real(fd)
        time.sleep(delay)

    setattr(owner, name, slow)
    try:
        yield
    finally:
        setattr(owner, name, real)


def work_and_ticks(seconds: float, work: Callable[[int], object], tick: Callable[[int], object]) -> dict[str, Any]:
    """For ``seconds``: rounds of ten ``work(now_ms)`` calls and one ``tick(now_ms)``, with a clock the loop
    moves 10 ms per round; work done per wall second and how long the ticks held the thread."""
    ticks: list[float] = []
    done, now_ms = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            work(now_ms)
        done += 10
        now_ms += 10
        t = time.perf_counter()
        tick(now_ms)
        ticks.append((time.perf_counter() - t) * 1000)
    wall = time.perf_counter() - start
    ticks.sort()
    return {"per_s": round(done / wall), "tick_ms_p50": round(ticks[len(ticks) // 2], 2),
            "tick_ms_max": round(ticks[-1], 2), "share_of_time_in_ticks": round(sum(ticks) / 1000 / wall, 3)}
