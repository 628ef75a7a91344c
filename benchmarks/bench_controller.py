"""Controller mode (RocketMQ 5): failover in the simulator beside the broker group on DLedger, and put
throughput over real processes beside the classic SYNC_MASTER pair, in the same run.

For each seed and each fault: a cluster settles (controllers elected, brokers registered, the SyncStateSet
full), a few puts, then the master broker dies at a seed-chosen moment - its process crashes (its channel to
the controllers closes: they elect at once) or its host fails (nothing closes: the heartbeat timeout and a
scan); the figure is fault -> a new master broker. RocketMQ's default timers: broker heartbeat 1 s, timeout
10 s, scans every 5 s. Baseline in the same run: the same faults in a broker group on DLedger
(``enableDLegerCommitLog``) with DLedger's default timers (heartbeat 2 s, 3 missed). Also the simulator's
cost: wall seconds per trial. Messages take 1-3 ms on the simulated network.

Puts over real processes (``rocketlab node`` on 127.0.0.1): 3 controllers and 2 brokers (a master and one
slave in its SyncStateSet) with ``allAckInSyncStateSet`` on and off, 1 and 32 producers putting 1 KiB
messages; baseline in the same run: a classic SYNC_MASTER and its slave (bench_ha's set-up).

    python benchmarks/bench_controller.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, line, record, start_node, stop  # noqa: E402
from bench_ha import producers, write_group  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.broker.protocol import broker_codec  # noqa: E402
from rocketlab.controller.protocol import GetReplicaInfoRequestHeader  # noqa: E402
from rocketlab.controller.wire import ControllerNodeCodec  # noqa: E402
from rocketlab.net.client import NetClient  # noqa: E402
from rocketlab.scenarios.controller_mode import settle  # noqa: E402
from rocketlab.sim import Cluster  # noqa: E402

FAULTS = ("crash", "host_down")
"""How the master dies: its process (Cluster.crash) or its host (Cluster.host_down)."""
LATENCY = "uniform:1:3"
"""1-3 ms per message (a LAN, as lab 06): with none, a crash's close and the election take 0 ms."""


def crash_master(c: Cluster, settled: str | None, seed: int, offset_range_ms: int, fault: str = "crash") -> int | None:
    """After one put, ``fault`` (crash or host_down) the master ``settled`` at a seed-chosen moment; ms
    until another master (None: it never settled or no new master within 60 s). The cluster is closed."""
    try:
        if settled is None:
            return None
        c.put(b"before")
        c.run_for(random.Random(f"{seed}/offset").randrange(offset_range_ms))
        old = c.leader()
        getattr(c, fault)(old)
        crashed = c.now_ms
        if not c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=60_000):
            return None
        return c.now_ms - crashed
    finally:
        c.close()


def controller_failover(seed: int, fault: str = "crash") -> int | None:
    c = Cluster.controller_mode(seed=seed, broker={"allAckInSyncStateSet": True}, latency=LATENCY)
    return crash_master(c, settle(c), seed, 1000, fault)  # within a broker heartbeat interval


def dledger_broker_failover(seed: int, fault: str = "crash") -> int | None:
    c = Cluster.dledger_brokers(nodes=3, seed=seed, latency=LATENCY)
    settled = c.leader() if c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000) else None
    return crash_master(c, settled, seed, 2000, fault)  # within a DLedger heartbeat interval


CONTROLLERS = ("c0", "c1", "c2")


def controller_group(tmp: Path, all_ack: bool, brokers: int = 2) -> tuple[list[Path], dict[str, int]]:
    """Config files of 3 controllers and ``brokers`` controller-mode brokers (RocketMQ's default timers)."""
    tmp.mkdir(parents=True, exist_ok=True)
    names = [f"n{i}" for i in range(brokers)]
    ports = {n: free_port() for n in (*CONTROLLERS, *names)}
    ha = {n: free_port() for n in names}
    peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ports.items())
    stream_peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ha.items())
    configs = []
    for n in (*CONTROLLERS, *names):
        text = f"selfId={n}\npeers={peers}\nrunDir={tmp / 'run'}\ncontrollerIds={','.join(CONTROLLERS)}\n"
        if n in CONTROLLERS:
            text += "nodeKind=controller\n"
        else:
            text += (f"nodeKind=broker\nenableControllerMode=true\nhaListenPort={ha[n]}\nstreamPeers={stream_peers}\n"
                     f"allAckInSyncStateSet={str(all_ack).lower()}\nmappedFileSizeCommitLog={2**30}\n")
        path = tmp / f"{n}.conf"
        path.write_text(text)
        configs.append(path)
    return configs, ports


async def _master_when_in_sync(ports: dict[str, int], members: int, timeout_s: float = 90) -> str:
    """Ask the controllers until one names a master whose SyncStateSet has ``members`` brokers."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for c in CONTROLLERS:
            try:
                client = await NetClient(("127.0.0.1", ports[c]), ControllerNodeCodec(), "bench").connect()
                try:
                    answer = await client.request(GetReplicaInfoRequestHeader("broker-a"), timeout_s=2)
                finally:
                    await client.close()
            except Exception:  # noqa: BLE001 - still starting or electing
                continue
            if (answer.code == 0 and answer.header.master_address is not None
                    and len(answer.body.sync_state_set) >= members):
                return answer.header.master_address
        await asyncio.sleep(0.2)
    raise RuntimeError(f"no master with {members} brokers in sync within {timeout_s} s")


def controller_puts(tmp: Path, all_ack: bool, concurrency: int, total: int) -> dict[str, float]:
    configs, ports = controller_group(tmp, all_ack)
    procs = [start_node(c) for c in configs]
    try:
        master = asyncio.run(_master_when_in_sync(ports, 2))
        asyncio.run(producers(ports[master], 8, 64, broker_codec()))  # warm-up
        return asyncio.run(producers(ports[master], concurrency, total, broker_codec()))
    finally:
        stop(*procs)


def sync_master_puts(tmp: Path, concurrency: int, total: int) -> dict[str, float]:
    master_conf, slave_conf, ports = write_group(tmp, "SYNC_MASTER")
    master, slave = start_node(master_conf), start_node(slave_conf)
    try:
        time.sleep(0.3)
        asyncio.run(producers(ports["n0"], 8, 64))  # warm-up (the slave reports first)
        return asyncio.run(producers(ports["n0"], concurrency, total))
    finally:
        stop(slave, master)


def put_throughput(puts: int) -> tuple[dict[str, dict[str, float]], list[dict[str, object]]]:
    loads: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-controller-") as tmp_name:
        tmp = Path(tmp_name)
        for concurrency in (1, 32):
            runs = {"SYNC_MASTER": lambda d, k=concurrency: sync_master_puts(d, k, puts),
                    "controller, allAck": lambda d, k=concurrency: controller_puts(d, True, k, puts),
                    "controller, default": lambda d, k=concurrency: controller_puts(d, False, k, puts)}
            for name, run in runs.items():
                r = run(tmp / f"{name.replace(', ', '-')}-{concurrency}")
                loads[f"{name}/{concurrency}"] = r
                line(f"{name}, {concurrency} producers", r["tps"], "puts/s",
                     f"p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, {r['statuses']}")
    summary = [summary_row(f"controller-mode puts (allAck {mode}), 32 producers", loads[f"controller, {key}/32"]["tps"],
                           "puts/s", loads["SYNC_MASTER/32"]["tps"], "classic SYNC_MASTER, 32 producers")
               for mode, key in (("on", "allAck"), ("off", "default"))]
    return loads, summary


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
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for fault in FAULTS:
        for name, trial in (("controller_mode", controller_failover), ("dledger_broker_group", dledger_broker_failover)):
            start = time.perf_counter()
            times = [t for t in (trial(s, fault) for s in seeds) if t is not None]
            wall = time.perf_counter() - start
            d = distribution(times)
            results[f"{name}/{fault}"] = {"failover_ms": d, "unfinished": len(seeds) - len(times),
                                          "wall_s_per_trial": round(wall / len(seeds), 3)}
            line(f"{name}: {fault} -> new master", f"{d['min']} / {d['p50']} / {d['p90']} / {d['max']}", "ms",
                 f"min/p50/p90/max over {d['n']} seeds, {wall / len(seeds):.2f} s per trial")
            rows[(name, fault)] = d
    print("   controller mode: a crashed process's channel closes and the controllers elect at once; a failed")
    print("   host is noticed after the broker heartbeat timeout (10 s) and the next scan (5 s);")
    print("   DLedger's own election waits for 3 missed heartbeats (2 s each) plus a vote round, either way")
    summary = [summary_row(f"controller-mode failover ({fault}), median", rows[("controller_mode", fault)]["p50"], "ms",
                           rows[("dledger_broker_group", fault)]["p50"], f"broker group on DLedger ({fault}), same seeds")
               for fault in FAULTS]
    print("puts over real processes (3 controllers, a master and one slave in its SyncStateSet; 1 KiB bodies):")
    results["puts"], put_rows = put_throughput(600 if args.quick else 3200)
    record("controller", results, summary + put_rows)


if __name__ == "__main__":
    main()
