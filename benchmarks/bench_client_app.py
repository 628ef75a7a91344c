"""The unchanged RocketMQ 4.9.5 Java client against the kit's broker and the real Java broker (issue 39).

1. Producer throughput: N threads share one DefaultMQProducer, synchronous sends of 1 KiB, against each
   backend's single ASYNC_MASTER (name server + broker), in the same run: messages/s, p50 and p99 in ms.
   The Java broker is the baseline.
2. Send-to-receive latency with long polling: a producer sends one message every 20 ms, a push consumer
   (its pulls held by the broker until a message arrives) receives it; p50/p99 from the send call to the
   listener, one JVM clock.
3. ``--failover``: :func:`rocketlab.oracle.failover.measure_failover` on the Java DLedger group (five JVMs), the
   kit's DLedger group with short timers (300 ms heartbeats), the kit's DLedger group with DLedger's default
   timers (2 s heartbeats, the Java group's: the same scenario) and the kit's controller mode: sends failed,
   lost, duplicated, kill to first SEND_OK on the new master, consumer catch-up. ``--groups`` picks some; the
   others keep their last figures in the results file.

    ROCKETLAB_JAVA_BROKER=... python benchmarks/bench_client_app.py [--backends java,kit] [--failover [--rounds 3]
        [--groups java-dledger,kit-dledger,kit-dledger-default-timers,kit-controller]] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, line, machine_info, record  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.oracle.broker_group import Backend  # noqa: E402
from rocketlab.oracle.client_app import ClientApp  # noqa: E402
from rocketlab.oracle.client_jvm import BrokerJava  # noqa: E402
from rocketlab.oracle.failover import measure_failover  # noqa: E402

FAILOVER_GROUPS = {"java-dledger": ("java", "dledger", True), "kit-dledger": ("kit", "dledger", True),
                   "kit-dledger-default-timers": ("kit", "dledger", False), "kit-controller": ("kit", "controller", True)}
"""Failover groups: name -> (backend, layout, the kit's short DLedger timers)."""


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s))) - 1))]


def producer_and_latency(java: BrokerJava, name: str, tmp: Path, threads: int, count: int,
                         latency_count: int) -> dict:
    backend = Backend(name, tmp / name, java).start()
    try:
        app = ClientApp(java, tmp / name)
        try:
            ns = backend.namesrv_addr
            app.create_topic(ns, "Bench")
            app.create_topic(ns, "Latency")
            app.request("bench_produce", namesrv=ns, topic="Bench", threads=threads, count=min(500, count), size=1024)
            prod = app.request("bench_produce", namesrv=ns, topic="Bench", threads=threads, count=count, size=1024,
                               timeout_s=600)
            app.consume("lat", "push_last", ns, "Latency", group="g_latency")
            app.wait_for(0, "recv", settle_s=2.0)  # the consumer's queues assigned, its pulls held
            app.produce(ns, "Latency", latency_count, "lat", interval_ms=20, size=1024)
            sends = {s["uniq"]: s for s in app.events("send", run="lat")}
            recvs = app.wait_for(latency_count, "recv", timeout_s=60, consumer="lat")
            lat = [(r["t_us"] - sends[r["uniq"]]["start_us"]) / 1000 for r in recvs if r["uniq"] in sends]
        finally:
            app.close()
    finally:
        backend.kill()
    out = {k: prod[k] for k in ("count", "threads", "failed", "seconds", "msgs_per_s", "p50_ms", "p99_ms")}
    out["latency"] = {"messages": len(lat), "p50_ms": round(statistics.median(lat), 3), "p99_ms": round(pct(lat, .99), 3),
                      "max_ms": round(max(lat), 3)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="java,kit")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--failover", action="store_true", help="measure failovers instead")
    ap.add_argument("--rounds", type=int, default=3, help="failovers per group (--failover)")
    ap.add_argument("--groups", default=",".join(FAILOVER_GROUPS), help="failover groups (--failover)")
    ap.add_argument("--quick", action="store_true", help="2,000 messages, one failover round")
    args = ap.parse_args()
    java = BrokerJava.find()
    count = 2000 if args.quick else args.count
    args.rounds = 1 if args.quick else args.rounds
    path = RESULTS_DIR / "client_app.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    results = previous.get("results", {})
    for group in results.get("failover", {}).values():  # figures of an earlier run say which
        group.setdefault("measured", {"timestamp": previous["timestamp"], "command": previous["command"],
                                      "load_avg_1m": previous["machine"].get("load_avg_1m")})
    with tempfile.TemporaryDirectory(prefix="bench-client-") as d:
        tmp = Path(d)
        if args.failover:
            fo = results.setdefault("failover", {})
            for key in args.groups.split(","):
                if key not in FAILOVER_GROUPS:
                    ap.error(f"--groups: no group {key!r} (groups: {', '.join(FAILOVER_GROUPS)})")
                name, layout, short = FAILOVER_GROUPS[key]
                rounds = [measure_failover(java, tmp / f"{key}-{k}", name, layout, short_dledger_timers=short).as_dict()
                          for k in range(args.rounds)]
                fo[key] = {"rounds": rounds, **{f"median_{f}": statistics.median(r[f] for r in rounds) for f in
                                                ("kill_to_first_send_ok_s", "kill_to_first_consumed_s", "failed")},
                           "lost": sum(r["lost"] for r in rounds), "duplicated": sum(r["duplicated"] for r in rounds),
                           "measured": {"timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
                                        "load_avg_1m": machine_info().get("load_avg_1m")}}
                for r in rounds:
                    line(f"{key} kill to first SEND_OK", r["kill_to_first_send_ok_s"], "s",
                         f"consumed {r['kill_to_first_consumed_s']} s, failed {r['failed']} lost {r['lost']} "
                         f"duplicated {r['duplicated']}")
        else:
            prod = results.setdefault("producer", {})
            for name in args.backends.split(","):
                r = producer_and_latency(java, name, tmp, args.threads, count, 100 if args.quick else 300)
                prod[name] = r
                line(f"{name}: {args.threads} threads 1 KiB", r["msgs_per_s"], "msg/s",
                     f"p50 {r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms")
                line(f"{name}: send to receive (long polling)", r["latency"]["p50_ms"], "ms p50",
                     f"p99 {r['latency']['p99_ms']} ms")
    summary = []
    prod = results.get("producer", {})
    if "msgs_per_s" in prod.get("kit", {}) and "msgs_per_s" in prod.get("java", {}):
        summary.append(summary_row("kit broker: Java producer, 1 KiB", prod["kit"]["msgs_per_s"], "msg/s",
                                   prod["java"]["msgs_per_s"], "the Java 4.9.5 broker"))
    record("client_app", results, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
