"""Controller mode (RocketMQ 5) failover in the simulator, beside the broker group on DLedger in the same run.

For each seed: a cluster settles (controllers elected, brokers registered, the SyncStateSet full), a few
puts, then the master broker crashes at a seed-chosen moment; the figure is crash -> a new master broker
(the controllers' scan notices the missing heartbeats and elects). RocketMQ's default timers: broker
heartbeat 1 s, timeout 10 s, scans every 5 s. Baseline in the same run: the same crash in a broker group on
DLedger (``enableDLegerCommitLog``) with DLedger's default timers (heartbeat 2 s, 3 missed). Also the
simulator's cost: wall seconds per trial.

    python benchmarks/bench_controller.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.scenarios.controller_mode import settle  # noqa: E402
from rocketlab.sim import Cluster  # noqa: E402


def crash_master(c: Cluster, settled: str | None, seed: int, offset_range_ms: int) -> int | None:
    """After one put, crash the master ``settled`` at a seed-chosen moment; ms until another master (None:
    it never settled or no new master within 60 s). The cluster is closed."""
    try:
        if settled is None:
            return None
        c.put(b"before")
        c.run_for(random.Random(f"{seed}/offset").randrange(offset_range_ms))
        old = c.leader()
        c.crash(old)
        crashed = c.now_ms
        if not c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=60_000):
            return None
        return c.now_ms - crashed
    finally:
        c.close()


def controller_failover(seed: int) -> int | None:
    c = Cluster.controller_mode(seed=seed, broker={"allAckInSyncStateSet": True})
    return crash_master(c, settle(c), seed, 1000)  # within a broker heartbeat interval


def dledger_broker_failover(seed: int) -> int | None:
    c = Cluster.dledger_brokers(nodes=3, seed=seed)
    settled = c.leader() if c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000) else None
    return crash_master(c, settled, seed, 2000)  # within a DLedger heartbeat interval


def distribution(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(values), "min": ordered[0], "p50": ordered[len(ordered) // 2],
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], "max": ordered[-1],
            "mean": round(statistics.fmean(values), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seeds = range(1, 11 if args.quick else 51)
    results: dict[str, object] = {"seeds": len(seeds)}
    rows = []
    for name, trial in (("controller_mode", controller_failover), ("dledger_broker_group", dledger_broker_failover)):
        start = time.perf_counter()
        times = [t for t in (trial(s) for s in seeds) if t is not None]
        wall = time.perf_counter() - start
        d = distribution(times)
        results[name] = {"failover_ms": d, "unfinished": len(seeds) - len(times),
                         "wall_s_per_trial": round(wall / len(seeds), 3)}
        line(f"{name}: crash -> new master", f"{d['min']} / {d['p50']} / {d['p90']} / {d['max']}", "ms",
             f"min/p50/p90/max over {d['n']} seeds, {wall / len(seeds):.2f} s per trial")
        rows.append(d)
    print("   controller mode waits for the broker heartbeat timeout (10 s) and the next scan (5 s);")
    print("   DLedger's own election waits for 3 missed heartbeats (2 s each) plus a vote round")
    summary = [summary_row("controller-mode failover, median", rows[0]["p50"], "ms", rows[1]["p50"],
                           "broker group on DLedger, same seeds")]
    record("controller", results, summary)


if __name__ == "__main__":
    main()
