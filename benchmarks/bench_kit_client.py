"""The kit's Python client (rocketlab.client) beside the unchanged RocketMQ 4.9.5 Java client, same run, same broker.

For each backend (``java``: the real 4.9.5 name server and broker; ``kit``: the kit's, once its broker serves the
client codes), against one ASYNC_MASTER:

1. Producer: ``count`` synchronous sends of 1 KiB with ``concurrency`` sends in flight (ours: asyncio tasks sharing
   one Producer; Java: threads sharing one DefaultMQProducer, ``bench_produce`` of bench_client_app's driver):
   messages/s, p50 and p99 of each send in ms.
2. Push consumer: the ``count`` messages read back by a new group (CONSUME_FROM_FIRST_OFFSET): messages/s from
   the consumer's start to the last message handed over (ours: one listener at a time; Java: one consume thread).
3. Send-to-receive latency with long polling: a message every 20 ms, received by a push consumer whose pulls the
   broker holds: p50/p99 from the send call to the listener, one clock per client.

    ROCKETLAB_JAVA_BROKER=... python benchmarks/bench_kit_client.py [--backends java,kit] [--count N] [--quick]

Results: ``benchmarks/results/kit_client.json``. The machine is shared (see its load figure). The consumers do not
do the same work per message: ours counts in a plain listener, Java's driver prints a JSON line per message
(its ``recv`` event), so the consumer figures bound what each client can take, they do not rank them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.client import Message, MQClientInstance, Producer, ProducerConfig, PushConsumer  # noqa: E402
from rocketlab.errors import RocketlabError  # noqa: E402
from rocketlab.oracle.broker_group import Backend  # noqa: E402
from rocketlab.oracle.client_app import ClientApp  # noqa: E402
from rocketlab.oracle.client_jvm import BrokerJava  # noqa: E402


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s))) - 1))]


def stats(lat_ms: list[float], seconds: float, count: int) -> dict:
    return {"count": count, "seconds": round(seconds, 3), "msgs_per_s": round(count / seconds, 1),
            "p50_ms": round(statistics.median(lat_ms), 3), "p99_ms": round(pct(lat_ms, .99), 3)}


async def our_producer(ns: str, topic: str, count: int, concurrency: int) -> dict:
    p = await Producer(MQClientInstance(ns, "bench-p"), ProducerConfig(producer_group="bench_kit")).start()
    await p.send(Message(topic, b"warm"))
    body = b"x" * 1024
    lat: list[float] = []
    left = iter(range(count))

    async def worker() -> None:
        for _ in left:
            t0 = time.perf_counter()
            await p.send(Message(topic, body))
            lat.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    out = stats(lat, time.perf_counter() - t0, count)
    await p.instance.shutdown()
    return out


async def our_consumer(ns: str, topic: str, count: int) -> dict:
    got = 0
    done = asyncio.Event()

    def listener(msgs):
        nonlocal got
        got += len(msgs)
        if got >= count:
            done.set()
        return "CONSUME_SUCCESS"
    c = PushConsumer(MQClientInstance(ns, "bench-c"), "g_bench_kit_read", listener, consume_thread_max=1,
                     consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(topic)
    t0 = time.perf_counter()
    await c.start()
    await asyncio.wait_for(done.wait(), 600)
    seconds = time.perf_counter() - t0
    await c.shutdown()
    await c.instance.shutdown()
    return {"count": got, "seconds": round(seconds, 3), "msgs_per_s": round(got / seconds, 1)}


async def our_latency(ns: str, topic: str, count: int) -> dict:
    sent: dict[str, float] = {}
    lat: list[float] = []

    def listener(msgs):
        now = time.perf_counter()
        lat.extend((now - sent[m.uniq_key]) * 1000 for m in msgs if m.uniq_key in sent)
        return "CONSUME_SUCCESS"
    c = PushConsumer(MQClientInstance(ns, "bench-lat-c"), "g_bench_kit_lat", listener, rebalance_interval=1000)
    c.subscribe(topic)
    await c.start()
    await asyncio.sleep(2.0)  # queues owned, pulls held
    p = await Producer(MQClientInstance(ns, "bench-lat-p")).start()
    for _ in range(count):
        m = Message(topic, b"y" * 1024)
        p.impl.id_setter.set_uniq_id(m)
        sent[m.uniq_key] = time.perf_counter()
        await p.send(m)
        await asyncio.sleep(0.02)
    deadline = time.monotonic() + 30
    while len(lat) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await c.shutdown()
    await c.instance.shutdown()
    await p.instance.shutdown()
    return {"messages": len(lat), "p50_ms": round(statistics.median(lat), 3), "p99_ms": round(pct(lat, .99), 3),
            "max_ms": round(max(lat), 3)}


def java_side(app: ClientApp, ns: str, count: int, concurrency: int, latency_count: int) -> dict:
    app.request("bench_produce", namesrv=ns, topic="JBench", threads=concurrency, count=min(500, count), size=1024)
    prod = app.request("bench_produce", namesrv=ns, topic="JBench", threads=concurrency, count=count, size=1024,
                       timeout_s=600)
    t0 = app.request("now")["t_us"]
    app.consume("jread", "push_first", ns, "JBench", group="g_bench_java_read")
    recvs = app.wait_for(count + min(500, count), "recv", timeout_s=600, consumer="jread")
    secs = (max(r["t_us"] for r in recvs) - t0) / 1e6
    app.stop_consumer("jread")
    app.consume("jlat", "push_last", ns, "JLatency", group="g_bench_java_lat")
    app.wait_for(0, "recv", settle_s=2.0)
    app.produce(ns, "JLatency", latency_count, "jlat", interval_ms=20, size=1024)
    sends = {s["uniq"]: s for s in app.events("send", run="jlat")}
    lrecv = app.wait_for(latency_count, "recv", timeout_s=60, consumer="jlat")
    lat = [(r["t_us"] - sends[r["uniq"]]["start_us"]) / 1000 for r in lrecv if r["uniq"] in sends]
    return {"producer": {k: prod[k] for k in ("count", "threads", "failed", "seconds", "msgs_per_s", "p50_ms",
                                              "p99_ms")},
            "consumer": {"count": len(recvs), "seconds": round(secs, 3), "msgs_per_s": round(len(recvs) / secs, 1)},
            "latency": {"messages": len(lat), "p50_ms": round(statistics.median(lat), 3),
                        "p99_ms": round(pct(lat, .99), 3), "max_ms": round(max(lat), 3)}}


def one_backend(java: BrokerJava, name: str, tmp: Path, count: int, concurrency: int, latency_count: int) -> dict:
    backend = Backend(name, tmp / name, java).start()
    try:
        app = ClientApp(java, tmp / name, name="bench")
        try:
            ns = backend.namesrv_addr
            for topic in ("KBench", "KLatency", "JBench", "JLatency"):
                app.create_topic(ns, topic)
            java_r = java_side(app, ns, count, concurrency, latency_count)
        finally:
            app.close()
        ours = {"producer": asyncio.run(our_producer(ns, "KBench", count, concurrency)),
                "consumer": asyncio.run(our_consumer(ns, "KBench", count)),
                "latency": asyncio.run(our_latency(ns, "KLatency", latency_count))}
    finally:
        backend.kill()
    return {"python_client": ours, "java_client": java_r}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="java,kit")
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="1,000 messages, 100 for the latency")
    args = ap.parse_args()
    java = BrokerJava.find()
    count = 1000 if args.quick else args.count
    lat_count = 100 if args.quick else 300
    results: dict = {}
    summary = []
    with tempfile.TemporaryDirectory(prefix="bench-kit-client-") as d:
        for name in args.backends.split(","):
            try:
                r = one_backend(java, name, Path(d), count, args.concurrency, lat_count)
            except (RocketlabError, TimeoutError, asyncio.TimeoutError) as e:
                results[name] = {"failed": f"{type(e).__name__}: {e}"}
                line(f"{name}: not measured", str(e)[:100])
                continue
            results[name] = r
            ours, theirs = r["python_client"], r["java_client"]
            for what in ("producer", "consumer"):
                line(f"{name} broker: Python {what}", ours[what]["msgs_per_s"], "msg/s",
                     f"Java {theirs[what]['msgs_per_s']} msg/s")
            line(f"{name} broker: Python send p99", ours["producer"]["p99_ms"], "ms",
                 f"Java {theirs['producer']['p99_ms']} ms")
            line(f"{name} broker: Python send to receive p50", ours["latency"]["p50_ms"], "ms",
                 f"Java {theirs['latency']['p50_ms']} ms")
            summary += [
                summary_row(f"{name} broker: Python producer, 1 KiB", ours["producer"]["msgs_per_s"], "msg/s",
                            theirs["producer"]["msgs_per_s"], "the Java 4.9.5 client"),
                summary_row(f"{name} broker: Python push consumer", ours["consumer"]["msgs_per_s"], "msg/s",
                            theirs["consumer"]["msgs_per_s"], "the Java 4.9.5 client")]
    results["settings"] = {"count": count, "concurrency": args.concurrency, "latency_messages": lat_count,
                           "body_bytes": 1024}
    record("kit_client", results, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
