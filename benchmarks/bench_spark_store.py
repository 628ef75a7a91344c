"""Spark over RocketMQ's files (issue 34) and simulator sweeps on Spark (issue 13), local[2].

1. The store data sources, Arrow batches, on ``local[2]`` (``get_spark(jit="full")``: the JVM's full JIT,
   2-3x Spark's intake of Arrow batches over the quick-start default) with the session started before timing and the
   files in page cache; each query is ``spark.read.format(...).load(store)`` (or with a user schema naming
   the columns), then a count and sums over the columns read; best of two runs (the first run's time
   recorded too: no Python worker has walked the files then, see ``store_arrow_classic.ClassicChain``). A store of 1 KiB messages,
   1.25 GiB in RocketMQ's 1 GiB mapped files (so the 1 GiB file is split across the cores); ``--quick``
   160 MiB in 128 MiB files. Baselines from the same run: a raw sequential read of the same files,
   Java's ``MessageDecoder`` over them (RocketMQ 4.9.5 through the oracle harness, best of 3 rounds in one
   warm JVM; skipped with the reason when the oracle is absent) and the record-at-a-time reference decoder
   (what the data sources ran before, in one Python process over 100,000 records). Queries: all columns;
   the small columns (topic, queue id, queue offset, physical offset, store timestamp); consume queues
   (100 files of RocketMQ's 300,000 units, 600 MB, written with numpy; ``--quick`` 20) read for queue id,
   offsets and size, beside a raw read of those files. One more baseline: Spark's intake of prebuilt
   Arrow batches of the small columns' shape (and of the consume-queue query's), as many rows a batch as the
   readers yield, from a Python data source that decodes nothing (the ceiling of any Python data source here).
2. Raft Figure 16 as a sweep: 1,000 trials of 150-300 ms (100 with --quick) as Spark tasks on local[2]
   (target: at most 60 s wall); trials per second per core; the simulator's speed inside these trials
   (kernel events per wall second per core) beside its speed on the plain heartbeat mesh (``bench_sim``).

    python benchmarks/bench_spark_store.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402
from bench_sim import heartbeat_run  # noqa: E402

from rocketlab.analysis import get_spark, store_arrow_batch  # noqa: E402
from rocketlab.analysis.store_files import commit_log_rows, find_commit_logs  # noqa: E402
from rocketlab.analysis.sweep import sweep  # noqa: E402
from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.store import Message, MessageStore  # noqa: E402

SMALL = "topic string, queue_id int, queue_offset bigint, phy_offset bigint, store_timestamp bigint"
CQ_FILE_UNITS = 300_000  # RocketMQ's mapedFileSizeConsumeQueue: 300,000 units of 20 bytes


def write_commit_log(root: Path, total_bytes: int, file_size: int) -> int:
    """1 KiB messages over 4 queues until ``total_bytes``; returns how many."""
    count = 0
    with MessageStore.open(root, mapped_file_size_commit_log=file_size, threads=False) as store:
        batches = [[Message(topic="Bench", body=b"x" * 1024, queue_id=q) for _ in range(64)] for q in range(4)]
        while store.get_max_phy_offset() < total_bytes:
            store.put_messages(batches[count // 64 % 4])
            count += 64
    return count


def write_consume_queues(root: Path, files: int) -> int:
    """``files`` full consume-queue files (``ConsumeQueue``'s 20-byte units) over 8 queues of topic
    ``BenchCQ``; returns the units."""
    unit = np.dtype([("phy", ">i8"), ("size", ">i4"), ("tags", ">i8")])
    for i in range(files):
        q, n = i % 8, i // 8
        d = root / "consumequeue" / "BenchCQ" / str(q)
        d.mkdir(parents=True, exist_ok=True)
        units = np.zeros(CQ_FILE_UNITS, dtype=unit)
        units["phy"] = (np.arange(CQ_FILE_UNITS) + n * CQ_FILE_UNITS) * 8 * 1100 + q * 1100
        units["size"] = 1100
        units["tags"] = q
        units.tofile(d / f"{n * CQ_FILE_UNITS * 20:020d}")
    return files * CQ_FILE_UNITS


def raw_read(directory: Path) -> float:
    """Seconds to read every file below ``directory`` sequentially in 1 MiB chunks."""
    start = time.perf_counter()
    for dirpath, _dirs, names in os.walk(directory):
        for name in sorted(names):
            with open(os.path.join(dirpath, name), "rb", buffering=0) as f:
                while f.read(2**20):
                    pass
    return time.perf_counter() - start


def best_of(runs: int, query, first: list[float] | None = None) -> tuple[float, object]:
    """The best time of ``runs`` runs (and the query's result); ``first`` gets the first run's time."""
    best, out = float("inf"), None
    for i in range(runs):
        start = time.perf_counter()
        out = query()
        took = time.perf_counter() - start
        if i == 0 and first is not None:
            first.append(took)
        best = min(best, took)
    return best, out


def java_decoder(commitlog: Path, work: Path) -> dict[str, object]:
    """Java's ``MessageDecoder.decode`` over the files (the oracle harness's ``decodeFiles``)."""
    from rocketlab.oracle import find_oracle

    oracle, why = find_oracle("4.9.5")
    if oracle is None:
        return {"skipped": why}
    proc = oracle.start(work, name="decoder", heap_mb=1024)
    try:
        with_body = proc.request("decodeFiles", dir=str(commitlog), readBody=True, rounds=3, timeout_s=900)
        no_body = proc.request("decodeFiles", dir=str(commitlog), readBody=False, rounds=3, timeout_s=900)
    finally:
        proc.close()
    return {"release": oracle.release, "records": with_body["records"],
            "records_per_s": round(with_body["records"] / (with_body["bestNanos"] / 1e9)),
            "records_per_s_no_body": round(no_body["records"] / (no_body["bestNanos"] / 1e9))}


def reference_decoder(store: Path, limit: int = 100_000) -> float:
    """Records per second of the record-at-a-time reference decoder (the readers before issue 34)."""
    files = find_commit_logs(store)
    start, n = time.perf_counter(), 0
    for f in files:
        for _row in commit_log_rows(f):
            n += 1
            if n == limit:
                return n / (time.perf_counter() - start)
    return n / (time.perf_counter() - start)


CQ_SHAPE = "queue_id int, queue_offset bigint, phy_offset bigint, size int"


def spark_ceiling(spark, rows: int, shape: str = "small") -> float:
    """Rows per second Spark takes in from a Python data source that only yields prebuilt Arrow batches of
    the small columns' shape (or the consume-queue query's, ``shape="cq"``), as many rows a batch as the
    readers yield, no decoding at all: the most any Python data source can give here."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Reader(DataSourceReader):
        def __init__(self, rows: int, shape: str) -> None:
            self.rows, self.shape = rows, shape

        def partitions(self):
            return [InputPartition(i) for i in range(2)]

        def read(self, partition):
            n = store_arrow_batch.BATCH  # the batches the store readers yield
            longs = pa.array(np.arange(n))
            ints = pa.array(np.arange(n, dtype=np.int32))
            if self.shape == "cq":
                batch = pa.RecordBatch.from_arrays([ints, longs, longs, ints],
                                                   names=["queue_id", "queue_offset", "phy_offset", "size"])
            else:
                batch = pa.RecordBatch.from_arrays(
                    [pa.array(["Bench"] * n), ints, longs, longs, longs],
                    names=["topic", "queue_id", "queue_offset", "phy_offset", "store_timestamp"])
            for _ in range(self.rows // n // 2):
                yield batch

    class Ceiling(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench-arrow-ceiling"

        def schema(self) -> str:
            return CQ_SHAPE if self.options["shape"] == "cq" else SMALL

        def reader(self, schema):
            return Reader(int(self.options["rows"]), self.options["shape"])

    spark.dataSource.register(Ceiling)
    rows = rows // (2 * store_arrow_batch.BATCH) * (2 * store_arrow_batch.BATCH)

    def query():
        df = spark.read.format("bench-arrow-ceiling").option("rows", rows).option("shape", shape).load()
        if shape == "cq":
            return df.agg(F.count("*"), F.sum("queue_id"), F.sum("queue_offset"), F.sum("phy_offset"),
                          F.sum("size")).first()
        return df.agg(F.count("*"), F.sum("queue_id"), F.sum("queue_offset"), F.sum("phy_offset"),
                      F.sum("store_timestamp"), F.count("topic")).first()

    seconds, got = best_of(2, query)
    assert got[0] == rows, got
    return rows / seconds


def store_queries(spark, args, tmp: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    from pyspark.sql import functions as F

    total = (160 if args.quick else 1280) * 2**20
    file_size = (128 if args.quick else 1024) * 2**20
    store = tmp / "store"
    start = time.perf_counter()
    messages = write_commit_log(store, total, file_size)
    write_s = time.perf_counter() - start
    cq_units = write_consume_queues(store, 20 if args.quick else 100)
    files = len(list((store / "commitlog").iterdir()))
    raw_s = min(raw_read(store / "commitlog") for _ in range(2))
    cq_raw_s = min(raw_read(store / "consumequeue") for _ in range(2))
    java = java_decoder(store / "commitlog", tmp)
    ref = reference_decoder(store)
    ceiling = spark_ceiling(spark, messages)
    cq_ceiling = spark_ceiling(spark, cq_units + messages, "cq")

    def everything():
        df = spark.read.format("rocketmq-commitlog").load(str(store))
        return df.agg(F.count("*"), F.sum("queue_offset"), F.sum(F.length("body")), F.sum(F.size("properties")),
                      F.sum(F.length("msg_id"))).first()

    def small():
        df = spark.read.format("rocketmq-commitlog").schema(SMALL).load(str(store))
        return df.agg(F.count("*"), F.sum("queue_id"), F.sum("queue_offset"), F.sum("phy_offset"),
                      F.sum("store_timestamp"), F.count("topic")).first()

    def cq():
        df = spark.read.format("rocketmq-consumequeue").schema(CQ_SHAPE).load(str(store))
        return df.agg(F.count("*"), F.sum("queue_id"), F.sum("queue_offset"), F.sum("phy_offset"),
                      F.sum("size")).first()

    first: list[float] = []  # each query's first run: no Python worker has walked these files yet
    all_s, r_all = best_of(2, everything, first)
    small_s, r_small = best_of(2, small, first)
    cq_s, r_cq = best_of(2, cq, first)
    assert r_all[0] == r_small[0] == messages and r_all[2] == messages * 1024, (r_all, r_small, messages)
    assert r_cq[0] == cq_units + messages, (r_cq, cq_units, messages)
    gib = total / 2**30
    java_rate = java.get("records_per_s")
    line(f"commit log of {messages:,} 1 KiB messages", round(gib, 3), "GiB",
         f"{files} files of {file_size // 2**20} MiB, written in {write_s:.1f} s")
    line("raw sequential read (baseline)", round(messages / raw_s), "records/s", f"{total / raw_s / 2**20:,.0f} MiB/s")
    if java_rate:
        line(f"Java {java['release']} MessageDecoder (baseline)", java_rate, "records/s",
             f"{java['records_per_s_no_body']:,} without bodies")
    else:
        line("Java MessageDecoder (baseline)", "skipped", "", str(java.get("skipped"))[:80])
    line("reference decoder, one Python process", round(ref), "records/s", "the readers before issue 34")
    line("Spark's intake of prebuilt Arrow batches (ceiling)", round(ceiling), "rows/s", "small columns' shape")
    ratio = (lambda v: f"{v / java_rate:.1%} of Java") if java_rate else (lambda v: "")
    line("rocketmq-commitlog, all columns", round(messages / all_s), "records/s",
         f"{all_s:.2f} s; {ratio(messages / all_s)}; first run {first[0]:.2f} s")
    line("rocketmq-commitlog, small columns", round(messages / small_s), "records/s",
         f"{small_s:.2f} s; {ratio(messages / small_s)}; first run {first[1]:.2f} s")
    units = cq_units + messages
    line("raw read of the consume queues (baseline)", round(units / cq_raw_s), "units/s")
    line("Spark's intake of prebuilt batches, consume-queue shape", round(cq_ceiling), "rows/s")
    line("rocketmq-consumequeue, 4 columns", round(units / cq_s), "units/s",
         f"{cq_s:.2f} s; {units / cq_s / (units / cq_raw_s):.1%} of raw; {units / cq_s / cq_ceiling:.0%} of "
         f"the intake; first run {first[2]:.2f} s")
    results = {"messages": messages, "bytes": total, "files": files, "file_size": file_size,
               "write_s": round(write_s, 2), "raw_read_s": round(raw_s, 3),
               "raw_records_per_s": round(messages / raw_s), "java_decoder": java,
               "reference_decoder_records_per_s": round(ref), "arrow_ceiling_rows_per_s": round(ceiling),
               "all_columns_s": round(all_s, 2), "all_columns_records_per_s": round(messages / all_s),
               "all_columns_first_s": round(first[0], 2),
               "small_columns_s": round(small_s, 2), "small_columns_records_per_s": round(messages / small_s),
               "small_columns_first_s": round(first[1], 2),
               "consume_queue_units": units, "consume_queue_raw_units_per_s": round(units / cq_raw_s),
               "consume_queue_s": round(cq_s, 2), "consume_queue_units_per_s": round(units / cq_s),
               "consume_queue_first_s": round(first[2], 2), "consume_queue_arrow_ceiling_rows_per_s": round(cq_ceiling)}
    java_label = f"Java {java.get('release')} MessageDecoder, same files" if java_rate else "(Java oracle absent)"
    summary = [
        summary_row("rocketmq-commitlog, all columns, local[2]", round(messages / all_s), "records/s", java_rate,
                    java_label, target=0.10 if java_rate else None, target_on="ratio" if java_rate else "value"),
        summary_row("rocketmq-commitlog, small columns (user schema), local[2]", round(messages / small_s),
                    "records/s", java_rate, java_label, target=0.35 if java_rate else None,
                    target_on="ratio" if java_rate else "value"),
        summary_row("rocketmq-consumequeue, 4 columns, local[2]", round(units / cq_s), "units/s",
                    round(units / cq_raw_s), "raw sequential read of the same files", target=0.25, target_on="ratio"),
        summary_row("rocketmq-consumequeue vs Spark's Arrow intake", round(units / cq_s), "units/s",
                    round(cq_ceiling), "a Python data source yielding prebuilt batches, same shape"),
        summary_row("rocketmq-commitlog small columns vs Spark's Arrow intake", round(messages / small_s),
                    "records/s", round(ceiling), "a Python data source yielding prebuilt batches, same shape"),
        summary_row("rocketmq-commitlog all columns vs the raw read", round(messages / all_s), "records/s",
                    round(messages / raw_s), "raw sequential read of the same files"),
        summary_row("reference decoder (before issue 34), one process", round(ref), "records/s", java_rate,
                    java_label),
    ]
    return results, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    trials = 100 if args.quick else 1000
    spark = get_spark(master="local[2]", app_name="bench-spark-store", jit="full")
    cores = 2
    results: dict[str, object] = {"master": "local[2]", "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="bench-spark-store-") as tmp:
        results["store"], store_summary = store_queries(spark, args, Path(tmp))

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
        *store_summary,
        summary_row(f"Figure 16 sweep of {trials} trials, local[2] (seconds; lower is better)", round(wall, 1), "s"),
        summary_row("simulator speed inside Figure 16 trials, per core", round(events_per_core), "events/s",
                    base["events_per_s"], "heartbeat mesh, tracing on"),
    ]
    record("spark_store_quick" if args.quick else "spark_store", results, summary)


if __name__ == "__main__":
    main()
