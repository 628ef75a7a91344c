"""The ``rocketlab`` command (DESIGN.md's CLI contract).

Exit codes: 0 success; 1 the run or check found a problem (an invariant violation); 2 bad usage or bad
input, with one line on stderr. Subcommands live with their subsystem and register here.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from rocketlab import __version__
from rocketlab.errors import RocketlabError

# Modules with a ``register(subparsers)`` function, each adding its subcommands.
COMMAND_MODULES = (
    "rocketlab.lab",
    "rocketlab.analysis.cli",
    "rocketlab.store.cli",
    "rocketlab.dledger.cli",
    "rocketlab.net.cli",
    "rocketlab.grading.cli",
    "rocketlab.sample_data",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's usage errors: one line, exit 2
        self.exit(2, f"rocketlab: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rocketlab", description="Learn RocketMQ storage and replication by running it.")
    parser.add_argument("--version", action="version", version=f"rocketlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_sim(sub)
    _add_demo(sub)
    _add_bench(sub)
    _add_view(sub)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if not e.name or not name.startswith(e.name):  # a real import error inside an existing module
                raise
            continue  # that subsystem has not arrived yet
        module.register(sub)
    return parser


def _add_sim(sub: Any) -> None:
    p = sub.add_parser("sim", help="run a named scenario in the simulator and write its run directory")
    p.add_argument("scenario", nargs="?", help="scenario name (see --list)")
    p.add_argument("--list", action="store_true", help="list the scenarios, one per line")
    p.add_argument("--nodes", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile")
    p.add_argument("--network", help="reliable, unreliable, reordering or long-delays")
    p.add_argument("--latency", help="constant:MS, uniform:LO:HI or exponential:MEAN")
    p.add_argument("--duration", type=int, dest="duration_ms", help="simulated ms")
    p.add_argument("--out", type=Path, help="run directory (default runs/SCENARIO-seedN)")
    p.add_argument("--parquet", action="store_true", help="write events.parquet instead of events.jsonl")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=cmd_sim)


def _add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="the headless tour: a DLedger broker group fails over; master-slave "
                                    "async vs sync loses (or not) acknowledged messages; an HTML report")
    p.add_argument("--out", type=Path, default=Path("runs/demo"))
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_demo)


def _add_bench(sub: Any) -> None:
    p = sub.add_parser("bench", help="run benchmarks (benchmarks/bench_*.py), print and record figures")
    p.add_argument("name", nargs="?", help="one benchmark, e.g. sim (default: all)")
    p.add_argument("--quick", action="store_true", help="smaller sizes")
    p.set_defaults(func=cmd_bench)


def _add_view(sub: Any) -> None:
    p = sub.add_parser("view", help="a run directory in the cluster viewer: one HTML page that plays and "
                                    "scrubs the run in the browser, offline")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.add_argument("--html", type=Path, dest="out", help="the page to write (default RUN_DIR/view.html)")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from rocketlab.viz.cluster_view.offline import write_viewer

    out = write_viewer(args.run_dir, args.out or args.run_dir / "view.html")
    print(f"viewer: {out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import subprocess

    bench_dir = Path(__file__).resolve().parent.parent / "benchmarks"
    if not bench_dir.is_dir():
        raise RocketlabError(f"no benchmarks directory at {bench_dir} (run from a checkout of the kit)")
    scripts = sorted(bench_dir.glob("bench_*.py"))
    if args.name:
        scripts = [s for s in scripts if s.stem == f"bench_{args.name}"]
        if not scripts:
            known = ", ".join(s.stem[6:] for s in sorted(bench_dir.glob("bench_*.py")))
            raise RocketlabError(f"no benchmark named {args.name!r} (known: {known})")
    from rocketlab.benchtable import load_rows, render

    results_dir = bench_dir / "results"

    def stamps() -> dict[str, int]:
        return {p.stem: p.stat().st_mtime_ns for p in results_dir.glob("*.json")}

    before = stamps()
    failed = 0
    for script in scripts:
        print(f"== {script.stem}", flush=True)
        cmd = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        failed += subprocess.run(cmd, check=False).returncode != 0
    fresh = [name for name, stamp in stamps().items() if before.get(name) != stamp]
    rows = load_rows(results_dir, fresh)
    print(f"\n== summary: {len(rows)} figures from this run (recorded under {results_dir})")
    print(render(rows))
    return 1 if failed else 0


def cmd_sim(args: argparse.Namespace) -> int:
    from rocketlab.scenarios import SCENARIOS, ScenarioArgs, get_scenario

    if args.list:
        for name in sorted(SCENARIOS):
            print(f"{name}\t{SCENARIOS[name].description}")
        return 0
    if not args.scenario:
        raise RocketlabError("sim needs a SCENARIO name (or --list)")
    scenario = get_scenario(args.scenario)
    out = args.out or Path("runs") / f"{scenario.name}-seed{args.seed}"
    _start_clean(out)
    sargs = ScenarioArgs(nodes=args.nodes, seed=args.seed, profile=args.profile, network=args.network,
                         latency=args.latency, duration_ms=args.duration_ms, data_dir=out)
    return _run_and_report(scenario.run, sargs, out, args.parquet, args.json)


def cmd_demo(args: argparse.Namespace) -> int:
    """DESIGN.md's tour (rocketlab.scenarios.tour): three runs under --out and one HTML report."""
    from rocketlab.errors import InvariantViolation
    from rocketlab.scenarios.tour import run_tour

    print(f"rocketlab demo: seed {args.seed}; the same producer writes to a DLedger broker group, an "
          f"ASYNC_MASTER pair and a SYNC_MASTER pair, and each loses its master", flush=True)
    try:
        tour = run_tour(args.out, seed=args.seed)
    except InvariantViolation as e:
        print(f"rocketlab: {e}", file=sys.stderr)
        return 1
    try:
        print("\n".join(tour.lines()))
        runs = (tour.dledger, tour.async_master, tour.sync_master)
        violations = sum(len(s.cluster.violations) for s in runs)
        print(f"run directories: {', '.join(str(s.run_dir) for s in runs)}")
        print(f"report: {tour.report}  ({tour.seconds:.1f} s, {violations} invariant violations)")
    finally:
        tour.close()
    return 1 if violations else 0


def _start_clean(out: Path) -> None:
    """A run starts from an empty directory: stores left by an earlier run there would be recovered and
    change the run (the same seed must give the same trace). An earlier run directory is replaced; any
    other non-empty directory is refused."""
    from rocketlab.trace.rundir import fresh_dir

    if out.exists() and not out.is_dir():
        raise RocketlabError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "meta.json").exists():
            raise RocketlabError(f"--out {out}: not empty and not a run directory (no meta.json); choose another")
        fresh_dir(out)


def _run_and_report(run: Any, sargs: Any, out: Path, parquet: bool, as_json: bool) -> int:
    from rocketlab.errors import InvariantViolation

    try:
        result = run(sargs)
    except InvariantViolation as e:
        print(f"rocketlab: {e}", file=sys.stderr)
        return 1
    result.cluster.save(out, parquet=parquet)
    result.cluster.close()
    if as_json:
        print(json.dumps({**result.summary, "run_dir": str(out), "nodes": result.table}))
    else:
        print_summary(result.summary, result.table, out)
    return 0 if result.ok else 1


STANDARD_SUMMARY = ("scenario", "seed", "simulated_ms", "events", "kernel_events", "messages", "faults",
                    "violations", "kinds")


def print_summary(summary: dict[str, Any], table: list[dict[str, Any]], out: Path) -> None:
    print(f"scenario {summary['scenario']}  seed {summary['seed']}  simulated {summary['simulated_ms']} ms  "
          f"events {summary['events']}  violations {summary['violations']}")
    msgs = summary["messages"]
    print(f"messages: sent {msgs['sent']}  delivered {msgs['delivered']}  dropped {msgs['dropped']}  "
          f"faults {summary['faults']}")
    print("events by kind: " + ", ".join(f"{k} {v}" for k, v in summary["kinds"].items()))
    extra = {k: v for k, v in summary.items() if k not in STANDARD_SUMMARY}
    if extra:
        print("  ".join(f"{k} {v}" for k, v in extra.items()))
    print(format_table(table))
    print(f"run directory: {out}")


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain fixed-width table of dict rows (the same keys in every row)."""
    if not rows:
        return ""
    cols = list(dict.fromkeys(c for row in rows for c in row))
    widths = [max(len(str(c)), *(len(str(r.get(c, ""))) for r in rows)) for c in cols]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(cols, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RocketlabError as e:
        print(f"rocketlab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
