"""Safe versus shipped: how often MIT-style churn breaks an invariant under each DLedger profile.

For each profile (``dledger-0.3.1.2``, ``dledger-0.3.2``, ``raft``) the ``dledger-churn`` scenario (random
crashes, restarts and partitions under three clients' writes, every invariant checked after every event,
reliable and unreliable networks alternating by seed) runs over the same seeds. Figures: runs with at least
one violation per 1,000 seeds, by invariant, and runs that lost an acknowledged write or did not converge.
Baseline measured in the same run: the ``raft`` profile, whose commit rule keeps every committed entry
(expected 0 violations; anything else is a bug of the kit).

    python benchmarks/bench_profiles.py [--quick] [--seeds N] [--duration MS] [--jobs J]

``--quick`` runs 6 seeds per profile; the figure for the lab comes from ``ROCKETLAB_FULL=1`` (1,000 seeds
per profile; about 5 s of wall time per seed and profile on one core at the default 7 s of churn,
so hours on this machine: `--seeds N` for fewer).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.scenarios import ScenarioArgs, get_scenario  # noqa: E402

PROFILES = ("dledger-0.3.1.2", "dledger-0.3.2", "raft")


def one_run(profile: str, seed: int, duration_ms: int) -> dict[str, Any]:
    network = "unreliable" if seed % 2 else "reliable"
    args = ScenarioArgs(seed=seed, profile=profile, network=network, duration_ms=duration_ms)
    result = get_scenario("dledger-churn").run(args)
    summary = result.summary
    names = {str(e.get("detail", "")).split(":", 1)[0] for e in result.cluster.violations}
    count = len(result.cluster.violations)
    result.cluster.close()
    return {"profile": profile, "seed": seed, "network": network, "violated": sorted(names), "violations": count, "acked_missing": summary.get("acked_missing", 0),
            "converged": bool(summary.get("converged", True))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 seeds per profile")
    parser.add_argument("--seeds", type=int, help="seeds per profile (default 6 quick, 1000 with ROCKETLAB_FULL=1, "
                                                  "else 50)")
    parser.add_argument("--duration", type=int, default=7000, help="ms of churn per run (default 7000)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    full = os.environ.get("ROCKETLAB_FULL") == "1"
    seeds = args.seeds or (6 if args.quick else 1000 if full else 50)
    print(f"dledger-churn, {seeds} seeds per profile, {args.duration} ms of churn each, {args.jobs} processes")
    start = time.perf_counter()
    jobs = [(p, s, args.duration) for p in PROFILES for s in range(1, seeds + 1)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(one_run, *zip(*jobs, strict=True)))
    wall = time.perf_counter() - start
    results: dict[str, Any] = {"seeds": seeds, "duration_ms": args.duration, "wall_s": round(wall, 1), "profiles": {}}
    baseline = None
    for profile in reversed(PROFILES):  # raft first: the baseline
        mine = [r for r in runs if r["profile"] == profile]
        per_1000 = 1000 / len(mine)
        by_invariant = Counter(v for r in mine for v in r["violated"])
        figure = {
            "runs_with_violation_per_1000": round(sum(1 for r in mine if r["violations"]) * per_1000, 1),
            "by_invariant_per_1000": {k: round(n * per_1000, 1) for k, n in sorted(by_invariant.items())},
            "acked_write_lost_per_1000": round(sum(1 for r in mine if r["acked_missing"]) * per_1000, 1),
            "not_converged_per_1000": round(sum(1 for r in mine if not r["converged"]) * per_1000, 1),
            "seeds_with_violation": [r["seed"] for r in mine if r["violations"]][:20],
            "seeds_not_converged": [r["seed"] for r in mine if not r["converged"]][:20],
        }
        results["profiles"][profile] = figure
        if baseline is None:
            baseline = figure["runs_with_violation_per_1000"]
        note = "baseline (expected 0)" if profile == "raft" else f"raft in the same run: {baseline}"
        line(f"{profile} runs with a violation", figure["runs_with_violation_per_1000"], "per 1000 seeds", note)
        for name, value in figure["by_invariant_per_1000"].items():
            line(f"  {name}", value, "per 1000 seeds")
        line(f"  {profile} acknowledged write lost", figure["acked_write_lost_per_1000"], "per 1000 seeds")
        line(f"  {profile} group did not converge", figure["not_converged_per_1000"], "per 1000 seeds")
    line("wall time", results["wall_s"], "s")
    record("profiles_quick" if args.quick else "profiles", results)  # the seed count is in the results
    return 0


if __name__ == "__main__":
    sys.exit(main())
