"""Spark over RocketMQ's files and simulator sweeps on Spark (issue #13's benchmarks), local[2].

1. ``rocketmq-commitlog``: records per second reading a commit log of 1 KiB messages (1 GiB in 64 MiB
   files; 128 MiB with --quick) into Spark (every record decoded, counted per queue), beside a raw
   sequential read of the same files in the same run (how fast the disk and page cache give the bytes).
2. Raft Figure 16 as a sweep: 1,000 trials of 150-300 ms (100 with --quick) as Spark tasks on local[2]
   (target: at most 60 s wall); trials per second per core; the simulator's speed inside these trials
   (kernel events per wall second per core) beside its speed on the plain heartbeat mesh (``bench_sim``).

    python benchmarks/bench_spark_store.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402
from bench_sim import heartbeat_run  # noqa: E402

from rocketlab.analysis import get_spark  # noqa: E402
from rocketlab.analysis.sweep import sweep  # noqa: E402
from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.store import Message, MessageStore  # noqa: E402

FILE = 64 * 2**20


def write_commit_log(root: Path, total_bytes: int) -> int:
    """1 KiB messages over 4 queues until ``total_bytes``; returns how many."""
    count = 0
    with MessageStore.open(root, mapped_file_size_commit_log=FILE, threads=False) as store:
        batches = [[Message(topic="Bench", body=b"x" * 1024, queue_id=q) for _ in range(64)] for q in range(4)]
        while store.get_max_phy_offset() < total_bytes:
            store.put_messages(batches[count // 64 % 4])
            count += 64
    return count


def raw_read(directory: Path) -> float:
    """Seconds to read every file of ``directory`` sequentially in 1 MiB chunks."""
    start = time.perf_counter()
    for path in sorted(directory.iterdir()):
        with open(path, "rb", buffering=0) as f:
            while f.read(2**20):
                pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    total = (128 if args.quick else 1024) * 2**20
    trials = 100 if args.quick else 1000
    spark = get_spark(master="local[2]", app_name="bench-spark-store")
    cores = 2
    results: dict[str, object] = {"master": "local[2]"}
    with tempfile.TemporaryDirectory(prefix="bench-spark-store-") as tmp:
        store = Path(tmp) / "store"
        start = time.perf_counter()
        messages = write_commit_log(store, total)
        write_s = time.perf_counter() - start
        raw_s = raw_read(store / "commitlog")
        frame = spark.read.format("rocketmq-commitlog").load(str(store))
        start = time.perf_counter()
        per_queue = {r.queue_id: r["count"] for r in frame.groupBy("queue_id").count().collect()}
        read_s = time.perf_counter() - start
        assert sum(per_queue.values()) == messages, (per_queue, messages)
        files = len(list((store / "commitlog").iterdir()))
    gib = total / 2**30
    line(f"commit log of {messages:,} 1 KiB messages", round(gib, 3), "GiB", f"{files} files, written in {write_s:.1f} s")
    line("raw sequential read (baseline)", round(messages / raw_s), "records/s", f"{total / raw_s / 2**20:,.0f} MiB/s")
    line("rocketmq-commitlog on local[2]", round(messages / read_s), "records/s",
         f"{read_s:.1f} s, {total / read_s / 2**20:,.0f} MiB/s, every record decoded")
    results["commit_log"] = {"messages": messages, "bytes": total, "files": files, "write_s": round(write_s, 2),
                             "raw_read_s": round(raw_s, 3), "spark_read_s": round(read_s, 2),
                             "records_per_s": round(messages / read_s), "raw_records_per_s": round(messages / raw_s)}

    start = time.perf_counter()
    result = sweep(spark, "figure16", range(1, trials + 1), {"range": ["150-300"]})
    wall = time.perf_counter() - start
    rows = result.rows()
    sim_events = sum(r["sim_events"] for r in rows)
    per_core = trials / wall / cores
    events_per_core = sim_events / wall / cores
    base = heartbeat_run(30_000 if args.quick else 120_000, trace=True)
    line(f"Figure 16 sweep, {trials} trials of 150-300 ms", round(wall, 1), "s wall", "target <= 60 s for 1,000")
    line("trials per second per core", round(per_core, 1), "trials/s")
    line("simulator inside the trials, per core", round(events_per_core), "events/s")
    line("baseline: heartbeat mesh, tracing on", base["events_per_s"], "events/s")
    median = sorted(r["downtime_ms"] for r in rows)[len(rows) // 2]
    line("median downtime (150-300)", median, "ms")
    results["figure16_sweep"] = {"trials": trials, "wall_s": round(wall, 2), "trials_per_s_per_core": round(per_core, 2),
                                 "sim_events_per_s_per_core": round(events_per_core), "median_downtime_ms": median,
                                 "errors": sum(1 for r in rows if r.get("error")), "heartbeat_baseline": base}
    spark.stop()
    summary = [
        summary_row("rocketmq-commitlog read, local[2]", round(messages / read_s), "records/s",
                    round(messages / raw_s), "raw sequential read of the same files"),
        summary_row(f"Figure 16 sweep of {trials} trials, local[2] (seconds; lower is better)", round(wall, 1), "s"),
        summary_row("simulator speed inside Figure 16 trials, per core", round(events_per_core), "events/s",
                    base["events_per_s"], "heartbeat mesh, tracing on"),
    ]
    record("spark_store", results, summary)


if __name__ == "__main__":
    main()
