"""Classic HA on real TCP, master and slave as separate processes on 127.0.0.1 (issue #4's benchmarks).

1. Async catch-up: an empty slave copies a master's commit log of 1 KiB messages (200 MB; 20 MB with
   --quick). Baseline in the same run: raw asyncio socket throughput between two fresh processes of
   the same interpreter on the same loopback, on the nodes' event loop (uvloop where installed; target:
   catch-up >= 50 % of it). Also how much the master's
   RSS grows meanwhile (sampled every 10 ms): what it holds for the slave beyond the mapped log.
2. Put latency p50/p99 and throughput, ASYNC_MASTER vs SYNC_MASTER, 1 and 32 concurrent producers
   (target: SYNC >= 50 % of ASYNC throughput at 32 producers, thanks to pipelined waits).
3. Replication lag under steady load (ASYNC_MASTER): per put, ms from the put's answer to the slave's
   ack that covers it, and bytes the slave is behind, both from the master's trace.
4. A slow disk (every fdatasync 100 ms slower), in one process: a master's 1 KiB puts and ticks with the
   ASYNC_FLUSH flushes on threads of their own (the TCP runtime) beside the same flushes on the core's
   ticks (what the TCP runtime did before; the simulator still does); and SYNC_FLUSH puts, 32 in flight,
   with the group commit on its thread beside a flush per put in line.
5. SYNC_FLUSH puts over TCP (ASYNC_MASTER with its slave), 1 and 32 producers, beside the ASYNC_FLUSH rows.

    python benchmarks/bench_ha.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, record, slowed, start_node, stop, work_and_ticks  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.broker.broker import BrokerConfig, BrokerCore  # noqa: E402
from rocketlab.broker.protocol import SendMessageRequest, broker_codec  # noqa: E402
from rocketlab.core import NodeContext  # noqa: E402
from rocketlab.net.client import NetClient  # noqa: E402
from rocketlab.store import Message, MessageStore, mapped_file  # noqa: E402

GIB = 1024 ** 3


def write_group(tmp: Path, role: str, flush: str = "ASYNC_FLUSH") -> tuple[Path, Path, dict[str, int]]:
    tmp.mkdir(parents=True, exist_ok=True)
    ports = {"n0": free_port(), "n1": free_port(), "ha": free_port()}
    peers = f"n0-127.0.0.1:{ports['n0']};n1-127.0.0.1:{ports['n1']}"
    common = f"nodeKind=broker\npeers={peers}\nrunDir={tmp / 'run'}\nmappedFileSizeCommitLog={GIB}\n"
    master = tmp / "master.conf"
    master.write_text(common + f"selfId=n0\nbrokerRole={role}\nhaListenPort={ports['ha']}\n"
                               f"storePathRootDir={tmp / 'master'}\nflushDiskType={flush}\n")
    slave = tmp / "slave.conf"
    slave.write_text(common + f"selfId=n1\nbrokerRole=SLAVE\nbrokerId=1\nhaMasterAddress=127.0.0.1:{ports['ha']}\n"
                              f"storePathRootDir={tmp / 'slave'}\n")
    return master, slave, ports


def master_events(tmp: Path) -> list[dict]:
    path = tmp / "run" / "events-n0.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- 1. catch-up vs raw sockets ----------------------------------------------------------------------

def preload(root: Path, total_bytes: int) -> int:
    with MessageStore.open(root, mapped_file_size_commit_log=GIB) as store:
        batch = [Message(topic="Bench", body=b"x" * 1024, queue_id=0) for _ in range(64)]
        while store.get_max_phy_offset() < total_bytes:
            store.put_messages(batch)
        return store.get_max_phy_offset()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def catch_up(tmp: Path, total_bytes: int) -> dict[str, float]:
    master_conf, slave_conf, _ = write_group(tmp, "ASYNC_MASTER")
    end = preload(tmp / "master", total_bytes)
    master = start_node(master_conf)
    time.sleep(0.2)
    rss_before = peak = rss_kib(master.pid)
    slave = start_node(slave_conf)
    while True:
        peak = max(peak, rss_kib(master.pid))
        reports = [(e["t"], e["offset"]) for e in master_events(tmp) if e["kind"] == "ha_report"]
        if reports and max(offset for _, offset in reports) >= end:
            break
        time.sleep(0.01)
    stop(slave, master)
    # from the slave's first report (connected, asking for offset 0) to its ack of the last byte,
    # both on the master's clock: process start-up is not counted
    first = reports[0][0]
    last = min(t for t, offset in reports if offset >= end)
    seconds = max(last - first, 1) / 1000
    return {"bytes": end, "seconds": round(seconds, 3), "mib_per_s": round(end / seconds / 2**20, 1),
            "master_rss_growth_mib": round((peak - rss_before) / 1024, 1)}


RAW_RECEIVER = """
import asyncio, sys
async def main(port, total):
    done = asyncio.Event()
    async def handle(reader, writer):
        got = 0
        while got < total:
            data = await reader.read(1 << 20)
            if not data: break
            got += len(data)
        writer.write(b"k"); await writer.drain(); writer.close(); done.set()
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    print("ready", flush=True)
    await done.wait(); server.close()
from rocketlab.net.node import run_event_loop  # the nodes' event loop (uvloop where installed)
run_event_loop(main, int(sys.argv[1]), int(sys.argv[2]))
"""

RAW_SENDER = """
import asyncio, sys, time
async def main(port, total):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    chunk = b"x" * 32768
    start = time.perf_counter()
    for _ in range(total // len(chunk)):
        writer.write(chunk)
        await writer.drain()
    await reader.read(1)
    print(time.perf_counter() - start)
from rocketlab.net.node import run_event_loop
run_event_loop(main, int(sys.argv[1]), int(sys.argv[2]))
"""


def raw_socket(total_bytes: int) -> dict[str, float]:
    port = free_port()
    total = total_bytes - total_bytes % 32768
    receiver = subprocess.Popen([sys.executable, "-c", RAW_RECEIVER, str(port), str(total)],
                                stdout=subprocess.PIPE, text=True)
    receiver.stdout.readline()
    out = subprocess.run([sys.executable, "-c", RAW_SENDER, str(port), str(total)], capture_output=True,
                         text=True, check=True)
    receiver.wait(timeout=60)
    seconds = float(out.stdout.strip())
    return {"bytes": total, "seconds": round(seconds, 2), "mib_per_s": round(total / seconds / 2**20, 1)}


# --- 2. put latency and throughput -----------------------------------------------------------------

async def producers(port: int, concurrency: int, total: int, codec: Any = None) -> dict[str, float]:
    """``concurrency`` producers, each putting 1 KiB messages one at a time, ``total`` puts in all."""
    clients = [await NetClient(("127.0.0.1", port), codec or broker_codec(), f"p{i}").connect()
               for i in range(concurrency)]
    latencies: list[float] = []
    statuses: dict[str, int] = {}

    async def run(client: NetClient, count: int) -> None:
        for _ in range(count):
            start = time.perf_counter()
            reply = await client.request(SendMessageRequest("Bench", b"x" * 1024, 0))
            latencies.append((time.perf_counter() - start) * 1000)
            statuses[reply.status] = statuses.get(reply.status, 0) + 1

    start = time.perf_counter()
    await asyncio.gather(*(run(c, total // concurrency) for c in clients))
    seconds = time.perf_counter() - start
    for client in clients:
        await client.close()
    latencies.sort()
    return {"producers": concurrency, "puts": len(latencies), "tps": round(len(latencies) / seconds),
            "p50_ms": round(latencies[len(latencies) // 2], 2),
            "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 2), "statuses": statuses}


def put_load(tmp: Path, role: str, concurrency: int, total: int, flush: str = "ASYNC_FLUSH") -> dict[str, float]:
    master_conf, slave_conf, ports = write_group(tmp, role, flush)
    master, slave = start_node(master_conf), start_node(slave_conf)

    async def warm_up() -> None:
        client = await NetClient(("127.0.0.1", ports["n0"]), broker_codec(), "warm").connect()
        while (await client.request(SendMessageRequest("Bench", b"w", 0))).status != "PUT_OK":
            await asyncio.sleep(0.05)
        await client.close()

    asyncio.run(warm_up())
    time.sleep(0.3)  # the slave's first report has arrived
    result = asyncio.run(producers(ports["n0"], concurrency, total))
    stop(slave, master)
    return result


# --- 3. replication lag ------------------------------------------------------------------------------

def replication_lag(tmp: Path, rate: int, seconds: float) -> dict[str, float]:
    master_conf, slave_conf, ports = write_group(tmp, "ASYNC_MASTER")
    master, slave = start_node(master_conf), start_node(slave_conf)

    async def steady() -> None:
        client = await NetClient(("127.0.0.1", ports["n0"]), broker_codec(), "steady").connect()
        interval, next_at, end = 1 / rate, time.perf_counter(), time.perf_counter() + seconds
        while next_at < end:
            await client.request(SendMessageRequest("Bench", b"x" * 1024, 0))
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        await client.close()

    asyncio.run(steady())
    time.sleep(0.5)
    stop(slave, master)
    events = master_events(tmp)
    acks = [(e["t"], e["offset"]) for e in events if e["kind"] == "ha_report"]
    lags_ms, lags_bytes = [], []
    for put in (e for e in events if e["kind"] == "put" and e["status"] == "PUT_OK"):
        end = put["phy_offset"] + put["size"]
        covered = next((t for t, offset in acks if offset >= end and t >= put["t"]), None)
        if covered is not None:
            lags_ms.append(covered - put["t"])
        behind = [end - offset for t, offset in acks if t <= put["t"]]
        lags_bytes.append(max(0, behind[-1]) if behind else end)
    lags_ms.sort()
    lags_bytes.sort()
    return {"rate_per_s": rate, "puts": len(lags_bytes), "lag_ms_p50": lags_ms[len(lags_ms) // 2],
            "lag_ms_p99": lags_ms[int(len(lags_ms) * 0.99) - 1], "lag_ms_max": lags_ms[-1],
            "lag_bytes_p50": lags_bytes[len(lags_bytes) // 2], "lag_bytes_max": lags_bytes[-1]}


# --- 4. a slow disk and the core's thread --------------------------------------------------------------

def slow_disk_puts(tmp: Path, delay_ms: float, seconds: float, threads: bool) -> dict[str, float]:
    """Puts of 1 KiB, ten per round, and the core's tick every 10 ms of its clock (its flush timer is
    500 ms of that clock: every 50 rounds), with every fdatasync ``delay_ms`` slower."""
    core = BrokerCore(NodeContext("n0", ("n0",), 1, tmp, threads=threads),
                      BrokerConfig(broker_role="ASYNC_MASTER", mapped_file_size_commit_log=GIB), wall_clock=True)
    core.on_start(0)
    msg = Message("Bench", b"x" * 1024, 0)
    with slowed(mapped_file, "_fdatasync", delay_ms):
        r = work_and_ticks(seconds, lambda now_ms: core.put_message(msg, now_ms), core.on_tick)
        core.on_stop()
    return {"flush_on_threads": threads, "added_fdatasync_ms": delay_ms, "puts_per_s": r.pop("per_s"), **r}


def slow_disk_sync_puts(tmp: Path, delay_ms: float, seconds: float, threads: bool, in_flight: int = 32) -> dict:
    """SYNC_FLUSH puts of 1 KiB with ``in_flight`` of them always waiting (32 producers), every fdatasync
    ``delay_ms`` slower: with the group commit on its thread one fsync answers every put appended before
    it; in line (the simulator's way, the TCP runtime's before) each put waits for a flush of its own."""
    core = BrokerCore(NodeContext("n0", ("n0",), 1, tmp, threads=threads),
                      BrokerConfig(broker_role="ASYNC_MASTER", flush_disk_type="SYNC_FLUSH",
                                   mapped_file_size_commit_log=GIB), wall_clock=True)
    core.on_start(0)
    msg, pending, answered, now_ms = Message("Bench", b"x" * 1024, 0), [], 0, 0
    with slowed(mapped_file, "_fdatasync", delay_ms):
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            now_ms += 1
            pending += [core.put_message(msg, now_ms)[0] for _ in range(in_flight - len(pending))]
            core.on_tick(now_ms)
            answered += sum(h.done for h in pending)
            pending = [h for h in pending if not h.done]
            time.sleep(0.001)
        wall = time.perf_counter() - start
        core.on_stop()
    return {"flush_on_threads": threads, "added_fdatasync_ms": delay_ms, "in_flight": in_flight,
            "puts_per_s": round(answered / wall)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    total = (20 if args.quick else 200) * 1000 * 1000
    puts = 600 if args.quick else 3200
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ha-") as tmp_name:
        tmp = Path(tmp_name)
        raw = raw_socket(total)
        up = catch_up(tmp / "catchup", total)
        share = up["mib_per_s"] / raw["mib_per_s"]
        print(f"catch-up of {up['bytes'] / 1e6:.0f} MB: {up['mib_per_s']} MiB/s in {up['seconds']} s; raw sockets "
              f"{raw['mib_per_s']} MiB/s; {share:.0%} of raw (target >= 50%); master RSS grew "
              f"{up['master_rss_growth_mib']} MiB")
        results["catch_up"], results["raw_socket"], results["catch_up_share_of_raw"] = up, raw, round(share, 3)
        loads = {}
        for role in ("ASYNC_MASTER", "SYNC_MASTER"):
            for concurrency in (1, 32):
                r = put_load(tmp / f"{role}-{concurrency}", role, concurrency, puts)
                loads[f"{role}/{concurrency}"] = r
                print(f"{role:12} {concurrency:2} producers: {r['tps']:6} puts/s  p50 {r['p50_ms']} ms  "
                      f"p99 {r['p99_ms']} ms  {r['statuses']}")
        for concurrency in (1, 32):
            r = put_load(tmp / f"sync-flush-{concurrency}", "ASYNC_MASTER", concurrency, puts, "SYNC_FLUSH")
            loads[f"ASYNC_MASTER+SYNC_FLUSH/{concurrency}"] = r
            print(f"ASYNC_MASTER, SYNC_FLUSH {concurrency:2} producers: {r['tps']:6} puts/s  p50 {r['p50_ms']} ms  "
                  f"p99 {r['p99_ms']} ms  {r['statuses']}")
        ratio = loads["SYNC_MASTER/32"]["tps"] / loads["ASYNC_MASTER/32"]["tps"]
        print(f"SYNC/ASYNC throughput at 32 producers: {ratio:.0%} (target >= 50%)")
        results["puts"], results["sync_over_async_32"] = loads, round(ratio, 3)
        lag = replication_lag(tmp / "lag", rate=500, seconds=3 if args.quick else 6)
        print(f"replication lag at {lag['rate_per_s']} puts/s: p50 {lag['lag_ms_p50']} ms, p99 "
              f"{lag['lag_ms_p99']} ms, max {lag['lag_ms_max']} ms; bytes behind p50 {lag['lag_bytes_p50']}, "
              f"max {lag['lag_bytes_max']}")
        results["replication_lag"] = lag
        slow = {mode: slow_disk_puts(tmp / f"slow-{mode}", 100, 1.0 if args.quick else 3.0, mode == "threads")
                for mode in ("core", "threads")}
        for mode, r in slow.items():
            print(f"fdatasync + 100 ms, flush on the {mode:7}: {r['puts_per_s']:6} puts/s, tick p50 "
                  f"{r['tick_ms_p50']} ms, max {r['tick_ms_max']} ms, {r['share_of_time_in_ticks']:.0%} of the time in ticks")
        results["slow_disk"] = slow
        sync = {mode: slow_disk_sync_puts(tmp / f"slow-sync-{mode}", 100, 1.0 if args.quick else 3.0,
                                          mode == "threads") for mode in ("core", "threads")}
        for mode, r in sync.items():
            print(f"SYNC_FLUSH, 32 puts in flight, fdatasync + 100 ms, flush on the {mode:7}: {r['puts_per_s']:6} puts/s")
        results["slow_disk_sync_flush"] = sync
    summary = [
        summary_row("HA catch-up of a slave", up["mib_per_s"], "MiB/s", raw["mib_per_s"], "raw loopback socket",
                    target=0.5, target_on="ratio"),
        summary_row("SYNC_MASTER puts, 32 producers", loads["SYNC_MASTER/32"]["tps"], "puts/s",
                    loads["ASYNC_MASTER/32"]["tps"], "ASYNC_MASTER, 32 producers", target=0.5, target_on="ratio"),
        summary_row("a master's puts, fdatasync + 100 ms, flush threads", slow["threads"]["puts_per_s"], "puts/s",
                    slow["core"]["puts_per_s"], "flush on the core's ticks"),
        summary_row("SYNC_FLUSH puts (32 in flight), fdatasync + 100 ms, group commit thread",
                    sync["threads"]["puts_per_s"], "puts/s", sync["core"]["puts_per_s"], "a flush per put, in line"),
    ]
    record("ha", results, summary)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
