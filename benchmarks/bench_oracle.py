"""The same 1 KiB puts through the real RocketMQ 4.9.5 ``DefaultMessageStore`` (Java 17) and through ours,
in the same run, on the same disk (issue #28): a figure for the performance table, not a target.

Both stores as a broker runs them: ASYNC_FLUSH with their flush and reput services running (Java's threads;
ours with ``threads=True``), RocketMQ's default file sizes (1 GiB commit-log files, created sparse), one
producer putting messages built beforehand (Java: a ``MessageExtBrokerInner`` per put, as a broker hands
over; the loop is timed inside the JVM, no JSON per put), after half as many puts to warm up (the JIT, the
file's first page faults). Rounds alternate Java and ours; the best of each counts. Needs the oracle (``ROCKETLAB_JAVA_4``; see rocketlab.oracle).

    python benchmarks/bench_oracle.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import line, record  # noqa: E402

from rocketlab.benchtable import summary_row  # noqa: E402
from rocketlab.oracle import find_oracle  # noqa: E402
from rocketlab.oracle.store import JavaStore, message_spec, open_ours  # noqa: E402
from rocketlab.store import Message, PutMessageStatus  # noqa: E402

BODY = 1024


def messages(count: int) -> list[Message]:
    return [Message("BenchTopic", os.urandom(BODY), i % 4, tags="TagA", keys=f"key-{i}",
                    born_timestamp=1_700_000_000_000 + i) for i in range(count)]


def java_round(oracle, work: Path, msgs: list[Message], count: int) -> float:
    root = work / "java"
    specs = [message_spec(m) for m in msgs]
    with JavaStore.start(oracle, work, root) as store:
        store.proc.request("putRepeat", msgs=specs, count=count // 2, timeout_s=900)  # warm up: JIT, page faults
        reply = store.proc.request("putRepeat", msgs=specs, count=count, timeout_s=900)
        store.shutdown()
    shutil.rmtree(root)
    assert reply["putOk"] == count, reply
    return count / (reply["nanos"] / 1e9)


def ours_round(work: Path, msgs: list[Message], count: int) -> float:
    root = work / "ours"
    store = open_ours(root, threads=True)
    todo = [msgs[i % len(msgs)] for i in range(count)]
    put = store.put_message
    for m in todo[: count // 2]:  # warm up as Java does
        put(m)
    begin = time.perf_counter()
    ok = sum(put(m).status is PutMessageStatus.PUT_OK for m in todo)
    elapsed = time.perf_counter() - begin
    store.shutdown()
    shutil.rmtree(root)
    assert ok == count
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 puts per round, 2 rounds")
    args = parser.parse_args()
    oracle, why = find_oracle("4.9.5")
    if oracle is None:
        print(f"bench_oracle: skipped: {why}", file=sys.stderr)
        sys.exit(0)
    count, rounds = (20_000, 2) if args.quick else (200_000, 3)
    msgs = messages(1000)
    java_rates, our_rates = [], []
    with tempfile.TemporaryDirectory(prefix="rocketlab-bench-oracle-") as tmp:
        work = Path(tmp)
        for _ in range(rounds):
            java_rates.append(java_round(oracle, work, msgs, count))
            our_rates.append(ours_round(work, msgs, count))
    java, ours = max(java_rates), max(our_rates)
    print(f"1 KiB puts, one producer, ASYNC_FLUSH, {count:,} per round, best of {rounds}:")
    line("RocketMQ 4.9.5 DefaultMessageStore (Java)", round(java), "msgs/s", f"rounds {[round(r) for r in java_rates]}")
    line("rocketlab MessageStore (Python)", round(ours), "msgs/s", f"rounds {[round(r) for r in our_rates]}")
    line("rocketlab / Java", f"{ours / java:.3f}")
    results = {"quick": args.quick, "puts_per_round": count, "rounds": rounds, "body_bytes": BODY,
               "java": {"release": oracle.release, "jdk": oracle.jdk.version, "msgs_per_s": round(java),
                        "rounds": [round(r) for r in java_rates]},
               "ours": {"msgs_per_s": round(ours), "rounds": [round(r) for r in our_rates]}}
    record("oracle", results, [summary_row("1 KiB puts, ASYNC_FLUSH, rocketlab's store", round(ours), "msgs/s",
                                           round(java), f"RocketMQ {oracle.release} DefaultMessageStore (Java "
                                           f"{oracle.jdk.major}), same messages and disk")])


if __name__ == "__main__":
    main()
