"""The ``rocketlab`` command.

Exit codes: 0 success; 1 the run or check found a problem (an invariant violation, a failed test);
2 bad usage or bad input, with one line on stderr and no traceback: an unknown name, a bad number, a path
that cannot be read or written, a closed output pipe. Subcommands live with their subsystem and register
here; every option has a help text (a test walks the parser). The contract is in docs/cli.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rocketlab import __version__, doctor, i18n, lab, sample_data, workspace
from rocketlab.analysis import cli as analysis_cli
from rocketlab.benchtable import load_rows, render
from rocketlab.chaos import cli as chaos_cli
from rocketlab.cli_support import (
    argparse_message,
    default_out,
    format_table,
    positive_int,
    writable_dir,
    writable_file,
)
from rocketlab.dledger import cli as dledger_cli
from rocketlab.errors import InvariantViolation, RocketlabError
from rocketlab.grading import assign, autograder, bundle, mutation
from rocketlab.grading import cli as grading_cli
from rocketlab.i18n import _
from rocketlab.net import cli as net_cli
from rocketlab.oracle import member_kind  # noqa: F401 - registers nodeKind=java-dledger with rocketlab node
from rocketlab.scenarios import SCENARIOS, ScenarioArgs, get_scenario
from rocketlab.store import cli as store_cli
from rocketlab.trace.rundir import event_files, fresh_dir
from rocketlab.workspace import require_home

COMMAND_MODULES = (workspace, doctor, lab, analysis_cli, store_cli, dledger_cli, net_cli, chaos_cli, grading_cli,
                   autograder, assign, bundle, mutation, sample_data)
"""The subsystems' command modules, each with a ``register(subparsers)`` adding its subcommands."""


class _HelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)


class _Parser(argparse.ArgumentParser):
    """argparse in the kit's language: the usage line, the section titles and ``-h`` through the catalogue
    (argparse's own strings are in no catalogue the kit ships)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                          help=_("show this help message and exit"))

    def error(self, message: str) -> None:  # argparse's usage errors: one line, exit 2
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and action.required and action.choices and (
                    action.dest in message or (action.metavar and str(action.metavar) in message)):
                message = _("{prog} needs a subcommand: {choices} (see {prog} --help)").format(
                    prog=self.prog, choices=", ".join(action.choices))
                break
        self.exit(2, f"rocketlab: {argparse_message(message).removeprefix('rocketlab ')}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rocketlab", description=_("Learn RocketMQ storage and replication by running it. "
                     "Start with `rocketlab init DIR`, then `cd DIR && rocketlab lab` (open labs/00_tour first); "
                     "`rocketlab doctor` checks this machine."))
    parser.add_argument("--version", action="version", version=f"rocketlab {__version__}",
                        help=_("print the version and exit"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_sim(sub)
    _add_demo(sub)
    _add_bench(sub)
    _add_view(sub)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _add_sim(sub: Any) -> None:
    p = sub.add_parser("sim", help=_("run a named scenario in the simulator and write its run directory"),
                       description=_("Run a named scenario in the simulator, write its run directory (meta.json, "
                                   "events, the nodes' store files) and print a summary. Exit 1 if an invariant "
                                   "was violated."))
    p.add_argument("scenario", nargs="?", help=_("scenario name (see --list)"))
    p.add_argument("--list", action="store_true", help=_("list the scenarios, one per line, with a description"))
    p.add_argument("--nodes", type=positive_int, help=_("cluster size (default: the scenario's own)"))
    p.add_argument("--seed", type=int, default=1, help=_("the run's seed: the same seed gives the same trace (default 1)"))
    p.add_argument("--profile", help=_("the scenario's profile, e.g. dledger-0.3.1.2, dledger-0.3.2 or raft for "
                                     "the DLedger scenarios (default: the scenario's own)"))
    p.add_argument("--network", help=_("reliable, unreliable, reordering or long-delays (MIT 6.5840's labrpc modes)"))
    p.add_argument("--latency", help=_("message latency: constant:MS, uniform:LO:HI or exponential:MEAN"))
    p.add_argument("--duration", type=positive_int, dest="duration_ms", metavar="MS",
                   help=_("simulated milliseconds to run (default: the scenario's own)"))
    p.add_argument("--out", type=Path, help=_("run directory (default runs/SCENARIO-seedN in the workspace or "
                                            "checkout, else in the current directory)"))
    p.add_argument("--parquet", action="store_true", help=_("write events.parquet instead of events.jsonl"))
    p.add_argument("--json", action="store_true", help=_("print the summary as one JSON object"))
    p.set_defaults(func=cmd_sim)


def _add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help=_("the headless tour: a DLedger broker group fails over; master-slave "
                                    "async vs sync loses (or not) acknowledged messages; an HTML report"),
                       description=_("The headless tour in the simulator (a few seconds): three run directories "
                                   "and one offline HTML report under --out, and a summary."))
    p.add_argument("--out", type=Path, default=None,
                   help=_("where the runs and report.html go (default runs/demo in the workspace or checkout, "
                        "else in the current directory)"))
    p.add_argument("--seed", type=int, default=1, help=_("the seed of all three runs (default 1)"))
    p.set_defaults(func=cmd_demo)


def _add_bench(sub: Any) -> None:
    p = sub.add_parser("bench", help=_("run benchmarks (benchmarks/bench_*.py), print and record figures"),
                       description=_("Run the benchmarks of the workspace (or checkout), record their figures "
                                   "under benchmarks/results/ and end with one table: each headline figure, its "
                                   "same-run baseline, the ratio and the target."))
    p.add_argument("name", nargs="?", help=_("one benchmark, e.g. sim for bench_sim.py (default: all)"))
    p.add_argument("--quick", action="store_true", help=_("smaller sizes (a check that they run, not figures to keep)"))
    p.set_defaults(func=cmd_bench)


def _add_view(sub: Any) -> None:
    p = sub.add_parser("view", help=_("a run directory in the cluster viewer: one HTML page that plays and "
                                    "scrubs the run in the browser, offline"))
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help=_("a run directory (meta.json and events)"))
    p.add_argument("--html", type=Path, dest="out", metavar="OUT",
                   help=_("the page to write (default RUN_DIR/view.html)"))
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from rocketlab.viz.cluster_view.offline import write_viewer  # lazy: loads networkx

    event_files(args.run_dir)  # a run directory, before anything is created
    out = write_viewer(args.run_dir, writable_file(args.out or args.run_dir / "view.html", "--html"))
    print(_("viewer: {path}").format(path=out))
    return 0


def bench_dir() -> Path:
    """``benchmarks/`` of the workspace or checkout: the scripts run there and record their figures there."""
    where = require_home("rocketlab bench") / "benchmarks"
    if not where.is_dir():
        raise RocketlabError(_("no benchmarks directory at {where}; `rocketlab init {parent}` adds it").format(
            where=where, parent=where.parent))
    return where


def cmd_bench(args: argparse.Namespace) -> int:

    scripts_dir = bench_dir()
    scripts = sorted(scripts_dir.glob("bench_*.py"))
    if args.name:
        scripts = [s for s in scripts if s.stem == f"bench_{args.name}"]
        if not scripts:
            known = ", ".join(s.stem[6:] for s in sorted(scripts_dir.glob("bench_*.py")))
            raise RocketlabError(_("no benchmark named {name!r} (known: {known})").format(name=args.name, known=known))
    results_dir = scripts_dir / "results"

    def stamps() -> dict[str, int]:
        return {p.stem: p.stat().st_mtime_ns for p in results_dir.glob("*.json")}

    before = stamps()
    failed = 0
    for i, script in enumerate(scripts, 1):
        print(f"== {script.stem} ({i}/{len(scripts)})", flush=True)
        cmd = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        failed += subprocess.run(cmd, check=False).returncode != 0
    fresh = [name for name, stamp in stamps().items() if before.get(name) != stamp]
    rows = load_rows(results_dir, fresh)
    print("\n== " + _("summary: {n} figures from this run (recorded under {path})").format(n=len(rows), path=results_dir))
    print(render(rows))
    return 1 if failed else 0


def cmd_sim(args: argparse.Namespace) -> int:
    if args.list:
        for name in sorted(SCENARIOS):
            print(f"{name}\t{SCENARIOS[name].description}")
        return 0
    if not args.scenario:
        raise RocketlabError(_("sim needs a SCENARIO name (or --list)"))
    scenario = get_scenario(args.scenario)
    out = args.out or default_out(f"{scenario.name}-seed{args.seed}")
    sargs = ScenarioArgs(nodes=args.nodes, seed=args.seed, profile=args.profile, network=args.network,
                         latency=args.latency, duration_ms=args.duration_ms, data_dir=out)
    _start_clean(out)
    return _run_and_report(scenario.run, sargs, out, args.parquet, args.json)


def cmd_demo(args: argparse.Namespace) -> int:
    """The tour of :mod:`rocketlab.scenarios.tour`: three runs under --out and one HTML report
    (:func:`rocketlab.labs_support.tour.run_demo`)."""
    from rocketlab.labs_support.tour import run_demo  # lazy: loads networkx and plotly for the report

    out = writable_dir(args.out or default_out("demo"), "--out")
    print(_("rocketlab demo: seed {seed}; the same producer writes to a DLedger broker group, an ASYNC_MASTER "
            "pair and a SYNC_MASTER pair, and each loses its master").format(seed=args.seed), flush=True)
    try:
        demo = run_demo(out, seed=args.seed)
    except InvariantViolation as e:
        print(f"rocketlab: {e}", file=sys.stderr)
        return 1
    tour = demo.tour
    try:
        print("\n".join(tour.lines()))
        violations = sum(len(s.cluster.violations) for s in tour.stories)
        print(_("run directories: {paths}").format(paths=", ".join(str(s.run_dir) for s in tour.stories)))
        print(_("report: {path}  ({seconds} s, {violations} invariant violations)").format(
            path=demo.report, seconds=f"{demo.seconds:.1f}", violations=violations))
    finally:
        tour.close()
    return 1 if violations else 0


def _start_clean(out: Path) -> None:
    """A run starts from an empty directory: stores left by an earlier run there would be recovered and
    change the run (the same seed must give the same trace). An earlier run directory is replaced; any
    other non-empty directory is refused."""
    if out.exists() and not out.is_dir():
        raise RocketlabError(_("{option} {path}: exists and is not a directory").format(option="--out", path=out))
    if out.is_dir() and any(out.iterdir()):
        if not (out / "meta.json").exists():
            raise RocketlabError(_("--out {path}: not empty and not a run directory (no meta.json); choose another")
                                 .format(path=out))
        fresh_dir(out)
    writable_dir(out, "--out")


def _run_and_report(run: Any, sargs: Any, out: Path, parquet: bool, as_json: bool) -> int:
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
    print(_("scenario {scenario}  seed {seed}  simulated {ms} ms  events {events}  violations {violations}").format(
        scenario=summary["scenario"], seed=summary["seed"], ms=summary["simulated_ms"], events=summary["events"],
        violations=summary["violations"]))
    msgs = summary["messages"]
    print(_("messages: sent {sent}  delivered {delivered}  dropped {dropped}  faults {faults}").format(
        sent=msgs["sent"], delivered=msgs["delivered"], dropped=msgs["dropped"], faults=summary["faults"]))
    print(_("events by kind: ") + ", ".join(f"{k} {v}" for k, v in summary["kinds"].items()))
    extra = {k: v for k, v in summary.items() if k not in STANDARD_SUMMARY}
    if extra:
        print("  ".join(f"{k} {v}" for k, v in extra.items()))
    print(format_table(table))
    print(_("run directory: {path}").format(path=out))


def _os_error_line(e: OSError) -> str:
    where = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
    what = e.strerror or str(e)
    return f"{where}: {what}" if where else what


def _stdout_closed() -> None:
    """The reader of our output went away (``| head``): stop writing, and keep Python from complaining
    about the unflushed buffer at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    try:
        i18n.language()  # a bad ROCKETLAB_LANG or stored language: one line, before any work
    except RocketlabError as e:
        print(f"rocketlab: {e}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except RocketlabError as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"rocketlab: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _stdout_closed()
        print("rocketlab: " + _("the output was closed before the command finished (broken pipe)"),
              file=sys.stderr)
        return 2
    except OSError as e:  # a path that cannot be read or written, a port in use: the user's input
        print(f"rocketlab: {_os_error_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
