"""Trace analysis at scale: Spark (local[2]) against pandas on one 1,000,000-event run directory.

Generates a run directory of a 5-node group (network messages, heartbeats, appends, commits, puts, HA
transfers, elections, a few faults) as JSON lines, then in the same process:

* Spark on JSON lines: session start-up (reported on its own), ``read_events`` (explicit schema + the
  corrupt-line check job), events per kind and node, events per 1 s window; twice (cold JIT, then warm);
* Spark on Parquet: the same events written once as ``events.parquet`` (the format the readers prefer),
  the same passes (target: warm total at least 5x faster than on JSON lines);
* pandas (the baseline): ``load_events`` then the same two aggregations.

Both give the same counts (checked). Results go to benchmarks/results/trace_analysis.json.

    python benchmarks/bench_trace_analysis.py [--events N] [--master URL] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.analysis import (  # noqa: E402
    counts_per_window,
    events_per_kind_and_node,
    get_spark,
    read_events,
)
from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.trace import load_events, read_meta  # noqa: E402
from rocketlab.trace.rundir import EVENTS_FILE, META_FILE, PARQUET_FILE, iter_events, versions, write_run  # noqa: E402

# kind -> weight (per 1000 events): roughly what a busy DLedger group with HA and a lossy network traces.
MIX = {"msg_send": 300, "msg_recv": 280, "msg_drop": 20, "heartbeat": 120, "append": 120, "commit": 40,
       "put": 60, "ha_transfer": 20, "ha_report": 20, "vote_request": 6, "vote_response": 6, "term": 3,
       "role": 3, "vote_round": 2}
MESSAGES = ("HeartBeatRequest", "PushEntryRequest", "VoteRequest", "HAReport", "HATransfer")


def generate_run(run_dir: Path, n_events: int, n_nodes: int, seed: int, duration_ms: int) -> float:
    """Write ``n_events`` events (plus a few faults) to ``run_dir``; return the seconds it took."""
    start = time.perf_counter()
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(n_nodes)]
    n_faults = 10
    kinds = rng.choices(list(MIX), weights=list(MIX.values()), k=n_events - n_faults)
    fault_at = {(i + 1) * len(kinds) // (n_faults + 1): i for i in range(n_faults)}
    run_dir.mkdir(parents=True, exist_ok=True)
    term, index, msg_id, offset = 1, 0, 0, 0
    seq = 0
    with open(run_dir / EVENTS_FILE, "w", encoding="utf-8") as f:
        for i, kind in enumerate(kinds):
            t = i * duration_ms // len(kinds)
            if i in fault_at:
                action = ("crash", "restart")[fault_at[i] % 2]
                fault = {"t": t, "seq": seq, "node": None, "kind": "fault", "action": action,
                         "targets": [nodes[fault_at[i] // 2 % n_nodes]]}
                f.write(json.dumps(fault, separators=(",", ":")) + "\n")
                seq += 1
            node = nodes[rng.randrange(n_nodes)]
            other = nodes[rng.randrange(n_nodes)]
            if kind in ("msg_send", "msg_recv", "msg_drop"):
                msg_id += 1
                fields: dict[str, Any] = {"src": node, "dst": other, "msg": MESSAGES[msg_id % len(MESSAGES)],
                                          "channel": "dledger", "msg_id": msg_id}
                if kind == "msg_drop":
                    fields["reason"] = rng.choice(("loss", "partition", "down"))
                else:
                    fields["bytes"] = rng.randrange(40, 4200)
            elif kind == "heartbeat":
                fields = {"term": term, "leader": nodes[0], "to": other,
                          "code": "SUCCESS" if rng.random() < 0.97 else None}
            elif kind == "append":
                index += 1
                fields = {"index": index, "term": term, "pos": index * 256, "size": 256}
            elif kind == "commit":
                fields = {"index": index, "pos": index * 256}
            elif kind == "put":
                offset += 256
                fields = {"topic": "T", "queue_id": offset % 4, "queue_offset": offset // 1024,
                          "phy_offset": offset, "size": 256,
                          "status": "PUT_OK" if rng.random() < 0.98 else "FLUSH_SLAVE_TIMEOUT",
                          "latency_ms": round(rng.expovariate(1 / 2.5), 3)}
            elif kind in ("ha_transfer", "ha_report"):
                fields = {"slave": other, "offset": offset}
                if kind == "ha_transfer":
                    fields["size"] = 4096
            elif kind in ("vote_request", "vote_response"):
                fields = {"term": term, "candidate": node, "voter": other}
                if kind == "vote_request":
                    fields.update(ledger_end_index=index, ledger_end_term=term)
                else:
                    fields["result"] = rng.choice(("ACCEPT", "REJECT_ALREADY_VOTED", "REJECT_TERM_NOT_READY"))
            elif kind == "term":
                term += 1
                fields = {"term": term, "prev": term - 1}
            elif kind == "role":
                fields = {"term": term, "role": rng.choice(("LEADER", "FOLLOWER", "CANDIDATE")),
                          "leader": nodes[0]}
            else:  # vote_round
                fields = {"term": term, "result": "PASSED", "accepted": 3, "not_ready": 0, "bigger_ledger": 0,
                          "valid": 5, "all": 5}
            f.write(json.dumps({"t": t, "seq": seq, "node": node, "kind": kind, **fields},
                               separators=(",", ":")) + "\n")
            seq += 1
    meta = {"seed": seed, "scenario": "bench_trace_analysis", "nodes": nodes, "events": seq,
            "events_file": EVENTS_FILE, "versions": versions()}
    (run_dir / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return time.perf_counter() - start


def jvm_peak_rss_mb(spark) -> float | None:
    """Peak RSS of the driver JVM (VmHWM), if it is a local child process."""
    try:
        pid = spark.sparkContext._gateway.proc.pid  # noqa: SLF001
        with open(f"/proc/{pid}/status") as f:
            for row in f:
                if row.startswith("VmHWM:"):
                    return round(int(row.split()[1]) / 1024, 1)
    except (AttributeError, OSError, ValueError):
        return None
    return None


def spark_pass(spark, run_dir: Path) -> tuple[dict[str, float], dict, dict]:
    """read_events + the two aggregations, each timed; returns timings and the collected counts."""
    t0 = time.perf_counter()
    events = read_events(spark, run_dir)
    t1 = time.perf_counter()
    per_kind_node = {(r.kind, r.node): r.events for r in events_per_kind_and_node(events).collect()}
    t2 = time.perf_counter()
    per_window = {r.window_start: r.events for r in counts_per_window(events, 1000).collect()}
    t3 = time.perf_counter()
    timings = {"read_and_check_s": t1 - t0, "per_kind_node_s": t2 - t1, "per_window_s": t3 - t2,
               "total_s": t3 - t0}
    return {k: round(v, 3) for k, v in timings.items()}, per_kind_node, per_window


def pandas_pass(run_dir: Path) -> tuple[dict[str, float], dict, dict]:
    t0 = time.perf_counter()
    frame = load_events(run_dir)
    t1 = time.perf_counter()
    counts = frame.groupby(["kind", "node"], dropna=False).size()
    per_kind_node = {(kind, node if isinstance(node, str) else None): int(n)
                     for (kind, node), n in counts.items()}
    t2 = time.perf_counter()
    per_window = {int(w): int(n) for w, n in frame.groupby(frame["t"] // 1000 * 1000).size().items()}
    t3 = time.perf_counter()
    timings = {"load_s": t1 - t0, "per_kind_node_s": t2 - t1, "per_window_s": t3 - t2, "total_s": t3 - t0}
    return {k: round(v, 3) for k, v in timings.items()}, per_kind_node, per_window


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the generated run directory here (reused when it matches)")
    args = parser.parse_args(argv)
    if args.events < 100 or args.nodes < 1:
        parser.error("--events must be at least 100 and --nodes at least 1")

    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp:
        run_dir = args.keep or Path(tmp) / "bench-run"
        meta = read_meta(run_dir) if (run_dir / META_FILE).exists() else {}
        wanted = {"scenario": "bench_trace_analysis", "seed": args.seed, "events": args.events,
                  "nodes": [f"n{i}" for i in range(args.nodes)]}
        if all(meta.get(k) == v for k, v in wanted.items()):
            generate_s = None  # --keep'd run from an earlier identical invocation
        else:
            generate_s = round(generate_run(run_dir, args.events, args.nodes, args.seed,
                                            duration_ms=max(1000, args.events * 3 // 5)), 3)
        size_mb = round((run_dir / EVENTS_FILE).stat().st_size / 2**20, 1)
        n_events = read_meta(run_dir)["events"]

        t0 = time.perf_counter()
        spark = get_spark(master=args.master, app_name="bench-trace-analysis")
        session_start_s = round(time.perf_counter() - t0, 3)
        cold, kn_spark, win_spark = spark_pass(spark, run_dir)
        warm, _, _ = spark_pass(spark, run_dir)
        parquet_dir = Path(tmp) / "bench-run-parquet"
        t0 = time.perf_counter()
        write_run(parquet_dir, read_meta(run_dir), list(iter_events(run_dir)), parquet=True)
        convert_s = round(time.perf_counter() - t0, 3)
        parquet_mb = round((parquet_dir / PARQUET_FILE).stat().st_size / 2**20, 1)
        pq_cold, kn_pq, win_pq = spark_pass(spark, parquet_dir)
        pq_warm, _, _ = spark_pass(spark, parquet_dir)
        jvm_rss = jvm_peak_rss_mb(spark)
        spark.stop()

        pandas_t, kn_pandas, win_pandas = pandas_pass(run_dir)
        agree = kn_spark == kn_pandas == kn_pq and win_spark == win_pandas == win_pq

    print(f"trace analysis: {n_events:,} events, {args.nodes} nodes, {size_mb} MiB of JSON lines, "
          f"{len(kn_spark)} (kind, node) groups, {len(win_spark)} 1 s windows")
    if generate_s is not None:
        line("generate run directory", generate_s, "s")
    line(f"spark session start ({args.master})", session_start_s, "s")
    for label, timings in (("cold", cold), ("warm", warm)):
        line(f"spark {label}: read + check", timings["read_and_check_s"], "s")
        line(f"spark {label}: per kind and node", timings["per_kind_node_s"], "s")
        line(f"spark {label}: per 1 s window", timings["per_window_s"], "s")
        line(f"spark {label}: total", timings["total_s"], "s",
             f"{n_events / timings['total_s']:,.0f} events/s")
    line("write the same events as Parquet", convert_s, "s", f"{parquet_mb} MiB")
    for label, timings in (("cold", pq_cold), ("warm", pq_warm)):
        line(f"spark on parquet {label}: total", timings["total_s"], "s",
             f"{n_events / timings['total_s']:,.0f} events/s")
    speedup = round(warm["total_s"] / pq_warm["total_s"], 2)
    line("parquet vs JSON lines (warm totals)", speedup, "x", "target >= 5x")
    line("pandas load_events", pandas_t["load_s"], "s")
    line("pandas per kind and node", pandas_t["per_kind_node_s"], "s")
    line("pandas per 1 s window", pandas_t["per_window_s"], "s")
    line("pandas total (baseline)", pandas_t["total_s"], "s",
         f"{n_events / pandas_t['total_s']:,.0f} events/s")
    line("spark warm total / pandas total", round(warm["total_s"] / pandas_t["total_s"], 2), "x")
    line("same counts from spark and pandas", "yes" if agree else "NO")
    peak_python = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    record("trace_analysis", {
        "events": n_events, "nodes": args.nodes, "jsonl_mib": size_mb, "generate_s": generate_s,
        "master": args.master, "spark_session_start_s": session_start_s,
        "spark_cold": cold, "spark_warm": warm, "pandas": pandas_t, "parquet_mib": parquet_mb,
        "parquet_write_s": convert_s, "spark_parquet_cold": pq_cold, "spark_parquet_warm": pq_warm,
        "parquet_speedup_over_jsonl": speedup,
        "kind_node_groups": len(kn_spark), "windows_1s": len(win_spark), "counts_agree": agree,
        "jvm_peak_rss_mib": jvm_rss, "python_peak_rss_mib": peak_python,
    }, [summary_row("Spark on Parquet, 1M-event trace analysis", round(n_events / pq_warm["total_s"]), "events/s",
                    round(n_events / warm["total_s"]), "Spark on JSON lines, same events", target=5, target_on="ratio"),
        summary_row("Spark on JSON lines, same analysis", round(n_events / warm["total_s"]), "events/s",
                    round(n_events / pandas_t["total_s"]), "pandas on JSON lines")])
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
