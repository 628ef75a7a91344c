"""Simulator kernel speed: 5 nodes heartbeating all-to-all every 50 ms, tracing off and on.

Figures: kernel events per wall second and simulated ms per wall ms. Baseline measured in the same run:
a bare heapq push/pop loop of the same number of events (the floor any Python event loop pays).
Also a 5-node smoke run (requests, streams, unreliable network) for the fuller picture.
Target (issue #2): >= 100,000 events/s with tracing off; issue #14: also with tracing on.

    python benchmarks/bench_sim.py [--quick]
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.pingpong import PingPongConfig  # noqa: E402
from rocketlab.sim import Cluster  # noqa: E402


def heartbeat_run(sim_ms: int, trace: bool) -> dict[str, float]:
    # pings every 10 s of virtual time only, so the load is the heartbeat mesh
    config = PingPongConfig(heartbeat_interval_ms=50, ping_interval_ms=10_000_000, trace_pings=False)
    cluster = Cluster.pingpong(nodes=5, seed=1, config=config, trace=trace, latency="uniform:1:3")
    start = time.perf_counter()
    cluster.run_for(sim_ms)
    wall = time.perf_counter() - start
    events = cluster.scheduler.events_run
    return {"events": events, "wall_s": round(wall, 3), "events_per_s": round(events / wall),
            "sim_ms_per_wall_ms": round(sim_ms / (wall * 1000), 1), "trace_events": len(cluster.events)}


def heapq_baseline(n: int) -> dict[str, float]:
    queue: list[tuple[int, int, object, tuple]] = []
    noop = object()
    start = time.perf_counter()
    for i in range(n):
        heapq.heappush(queue, (i % 997, i, noop, ()))
    while queue:
        heapq.heappop(queue)
    wall = time.perf_counter() - start
    return {"events": n, "wall_s": round(wall, 3), "events_per_s": round(n / wall)}


def smoke_run(sim_ms: int) -> dict[str, float]:
    cluster = Cluster.pingpong(nodes=5, seed=1, network="unreliable", config=PingPongConfig(stream_frames=4))
    start = time.perf_counter()
    cluster.run_for(sim_ms)
    wall = time.perf_counter() - start
    return {"events": cluster.scheduler.events_run, "events_per_s": round(cluster.scheduler.events_run / wall),
            "sim_ms_per_wall_ms": round(sim_ms / (wall * 1000), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sim_ms = 60_000 if args.quick else 600_000
    off = heartbeat_run(sim_ms, trace=False)
    on = heartbeat_run(sim_ms, trace=True)
    base = heapq_baseline(off["events"])
    smoke = smoke_run(sim_ms // 10)
    print(f"heartbeat mesh, 5 nodes, {sim_ms} simulated ms:")
    print(f"  tracing off: {off['events_per_s']:>9,} events/s  {off['sim_ms_per_wall_ms']:>7} sim ms per wall ms")
    print(f"  tracing on:  {on['events_per_s']:>9,} events/s  {on['sim_ms_per_wall_ms']:>7} sim ms per wall ms")
    print(f"  baseline, bare heapq push+pop: {base['events_per_s']:,} events/s")
    print(f"  target >= 100,000 events/s with tracing off: {'met' if off['events_per_s'] >= 100_000 else 'NOT met'}")
    print(f"smoke load (requests, streams, unreliable): {smoke['events_per_s']:,} events/s, "
          f"{smoke['sim_ms_per_wall_ms']} sim ms per wall ms")
    summary = [
        summary_row("5-node heartbeat mesh, tracing on", on["events_per_s"], "events/s", base["events_per_s"],
                    "bare heapq push+pop", target=100_000),
        summary_row("5-node heartbeat mesh, tracing off", off["events_per_s"], "events/s", base["events_per_s"],
                    "bare heapq push+pop", target=100_000),
    ]
    record("sim", {"simulated_ms": sim_ms, "tracing_off": off, "tracing_on": on, "heapq_baseline": base,
                   "smoke_5_nodes": smoke, "target_events_per_s": 100_000}, summary)


if __name__ == "__main__":
    main()
