"""The wire benchmarks (issue #33): DLedger appends over RocketMQ remoting, and our members beside Java's.

1. New wire against old: replicated appends on a 3-process DLedger group over loopback (file store,
   fsync every 10 ms, 1 KiB bodies), 32 concurrent clients: appends/s and latency p50/p99, on this
   package (RocketMQ remoting: RemotingCommand frames, fastjson bodies with Java's getters, a response per
   request on the connection it came on) and, in the same run and taking turns, on the package as of
   :data:`BEFORE_WIRE` (its own frames: a kind byte, a request id and the sender before a body shaped like
   remoting), taken from git history. Each side runs its own nodes and its own client.
2. Java beside ours: the same load (our client, which speaks the same wire) on an all-Java DLedger 0.3.1.2
   group, on a mixed group (one of ours, two Java members), and on an all-Python group, in the same run,
   taking turns; which member leads is noted (the leader does most of the work). Needs the Java oracle
   (``ROCKETLAB_JAVA_4``); without it the section says why and is skipped.

    python benchmarks/bench_wire.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, best_interleaved, line, package_at, record, run_with_package  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.oracle import find_oracle  # noqa: E402

BEFORE_WIRE = "c7a0a1b11f527b75c854e4d51288500105656963"
"""The last commit with the kit's own frames (the wire issue #33 replaced)."""

CHILD = r'''
import asyncio, json, os, signal, socket, subprocess, sys, tempfile, time
from pathlib import Path
from rocketlab.dledger import DLedgerCodec
from rocketlab.dledger.protocol import AppendEntryRequest, MetadataRequest
from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient

TOTAL, CLIENTS = int(sys.argv[1]), int(sys.argv[2])

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

async def leader_of(ports):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        seen = set()
        for n, port in ports.items():
            try:
                c = await NetClient(("127.0.0.1", port), DLedgerCodec(), "probe").connect(1.0)
                md = await c.request(MetadataRequest(group="bench", remote_id=n), 1.0)
                await c.close()
                seen.add(md.leader_id)
            except RocketlabError:
                seen.add(None)
        if len(seen) == 1 and None not in seen:
            return seen.pop()
        await asyncio.sleep(0.1)
    raise RuntimeError("no leader")

async def load(port, leader):
    clients = [await NetClient(("127.0.0.1", port), DLedgerCodec(), f"c{i}").connect() for i in range(CLIENTS)]
    body, lat = b"x" * 1024, []
    async def run(c, k, keep):
        for _ in range(k):
            t = time.perf_counter()
            r = await c.request(AppendEntryRequest(group="bench", remote_id=leader, body=body), 30.0)
            assert r.code.name == "SUCCESS", r.code.name
            if keep:
                lat.append((time.perf_counter() - t) * 1000)
    await asyncio.gather(*(run(c, 20, False) for c in clients))
    t = time.perf_counter()
    await asyncio.gather(*(run(c, TOTAL // CLIENTS, True) for c in clients))
    secs = time.perf_counter() - t
    for c in clients:
        await c.close()
    lat.sort()
    return {"tps": round(len(lat) / secs), "p50_ms": round(lat[len(lat) // 2], 2),
            "p99_ms": round(lat[int(len(lat) * 0.99)], 2), "appends": len(lat)}

tmp = Path(tempfile.mkdtemp(prefix="bench-wire-"))
ids = ["n0", "n1", "n2"]
ports = {n: free_port() for n in ids}
peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ports.items())
procs = []
for n in ids:
    conf = tmp / f"{n}.conf"
    conf.write_text(f"nodeKind=dledger\ngroup=bench\nselfId={n}\npeers={peers}\nrunDir={tmp / 'run'}\n"
                    f"storeBaseDir={tmp / 'store'}\nmappedFileSizeForEntryData={128 * 2**20}\n"
                    f"mappedFileSizeForEntryIndex={32 * 2**20}\n")
    p = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(conf)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdout.readline()
    procs.append(p)
try:
    leader = asyncio.run(leader_of(ports))
    result = asyncio.run(load(ports[leader], leader))
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.wait()
print(json.dumps(result))
'''


def wire_run(source: Path, total: int, clients: int) -> dict:
    code = f"import sys; sys.argv = ['bench', '{total}', '{clients}']\n" + CHILD
    return run_with_package(source, code, timeout_s=1800)


def languages_run(work: Path, kinds: dict[str, str], total: int, clients: int) -> dict:
    from rocketlab.dledger.codec import DLedgerCodec
    from rocketlab.dledger.protocol import AppendEntryRequest
    from rocketlab.net.client import NetClient
    from rocketlab.oracle.mixed import MixedGroup

    g = MixedGroup(work / f"group-{time.monotonic_ns()}", kinds,
                   settings={"mappedFileSizeForEntryData": str(128 * 2**20),
                             "mappedFileSizeForEntryIndex": str(32 * 2**20)})

    async def load(port: int, leader: str) -> dict:
        cs = [await NetClient(("127.0.0.1", port), DLedgerCodec(), f"c{i}").connect() for i in range(clients)]
        body, lat = b"x" * 1024, []

        async def run(c: NetClient, k: int, keep: bool) -> None:
            for _ in range(k):
                t = time.perf_counter()
                r = await c.request(AppendEntryRequest(group="g1", remote_id=leader, body=body), 30.0)
                assert r.code.name == "SUCCESS", r.code.name
                if keep:
                    lat.append((time.perf_counter() - t) * 1000)

        await asyncio.gather(*(run(c, 20, False) for c in cs))
        t = time.perf_counter()
        await asyncio.gather(*(run(c, total // clients, True) for c in cs))
        secs = time.perf_counter() - t
        for c in cs:
            await c.close()
        lat.sort()
        return {"tps": round(len(lat) / secs), "p50_ms": round(lat[len(lat) // 2], 2),
                "p99_ms": round(lat[int(len(lat) * 0.99)], 2)}

    try:
        g.start_all()
        leader = g.leader()
        time.sleep(2.0)  # every member follows (a late starter joins at the next heartbeat)
        leader = g.leader()
        result = asyncio.run(load(g.ports[leader], leader))
        return {**result, "leader": f"{leader} ({kinds[leader]})", "members": dict(kinds)}
    finally:
        g.stop_all()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer appends, one round")
    args = parser.parse_args()
    total, rounds = (3200, 1) if args.quick else (32000, 3)
    results: dict = {"quick": args.quick}
    summary = []

    print("1. DLedger appends, 3 members, 32 clients: RocketMQ remoting against the old wire (same run, in turns)")
    before = package_at(BEFORE_WIRE)
    runs = {"remoting": lambda: wire_run(REPO_ROOT, total, 32)}
    if before is not None:
        runs["old_wire"] = lambda: wire_run(before, total, 32)
    else:
        print(f"  (no git history for {BEFORE_WIRE[:7]} here: the old wire is not measured)")
    best = best_interleaved(rounds, runs, "tps")
    results["wire"] = best
    for name, r in best.items():
        line(f"{name}: appends/s", r["tps"], "", f"p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms")
    summary.append(summary_row("DLedger appends over RocketMQ remoting, 3 members, 32 clients", best["remoting"]["tps"],
                               "appends/s", best.get("old_wire", {}).get("tps"), "the old wire, same run"))

    print("2. the same load on Java, mixed and Python groups (same run, in turns)")
    oracle, why = find_oracle("4.9.5")
    if oracle is None:
        print(f"  skipped: {why}")
        results["languages"] = {"skipped": why}
    else:
        with tempfile.TemporaryDirectory(prefix="bench-wire-") as tmp:
            work = Path(tmp)
            groups = {"all_java": {"n0": "java", "n1": "java", "n2": "java"},
                      "mixed": {"n0": "python", "n1": "java", "n2": "java"},
                      "all_python": {"n0": "python", "n1": "python", "n2": "python"}}
            best = best_interleaved(rounds, {k: (lambda k=k: languages_run(work, groups[k], total, 32))
                                             for k in groups}, "tps")
        results["languages"] = best
        for name, r in best.items():
            line(f"{name}: appends/s", r["tps"], "", f"leader {r['leader']}, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms")
        summary.append(summary_row("a mixed DLedger group (1 Python + 2 Java), 32 clients", best["mixed"]["tps"],
                                   "appends/s", best["all_java"]["tps"], "all-Java group, same run"))
        summary.append(summary_row("an all-Python DLedger group, 32 clients", best["all_python"]["tps"],
                                   "appends/s", best["all_java"]["tps"], "all-Java group, same run"))
    record("wire_quick" if args.quick else "wire", results, summary)
    print(json.dumps({k: v for k, v in results.items() if k != "quick"}, default=str)[:2000])


if __name__ == "__main__":
    main()
