"""The ``rocketlab analyze`` and ``rocketlab sweep`` commands: a Spark summary of run directories, and
simulator trials as Spark tasks (:mod:`rocketlab.analysis.sweep`)::

    rocketlab analyze RUN_DIR... [--master URL] [--json]
    rocketlab analyze --store STORE_DIR [--store ...] [--master URL] [--json]
    rocketlab sweep SCENARIO --seeds A..B [--param k=v1,v2 ...] [--master URL] --out DIR

For each run: events, time span, nodes, then events per kind and node, the faults and any invariant
violations. For each ``--store`` (a broker's store directory or a copy): records, offsets, bytes and
store-time span per topic and queue, consume-queue units, corrupt records (the ``rocketmq-*`` data
sources). ``--json`` prints one JSON object per run (store) and line. Exit codes: 0, 1 when a run recorded an
invariant violation (a store holds a corrupt record), 2 (a :class:`RocketlabError` raised here, printed by
the main CLI) on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketlab.analysis import analyses, store_files
from rocketlab.analysis.figure16_report import FIGURE_FILE, PAPER_FILE
from rocketlab.analysis.readers import _check_parquet_footer, read_events
from rocketlab.analysis.session import active_session, get_spark, resolve_master
from rocketlab.analysis.sweep import check_master_reachable, parse_params, parse_seeds, plan, sweep
from rocketlab.cli_support import positive_int, writable_dir
from rocketlab.console import progress, render_table
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.trace.rundir import event_files, iter_events


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``analyze`` subcommand; its handler is ``args.func(args) -> int``."""
    parser = subparsers.add_parser(
        "analyze", help=_("Spark analysis of run directories"),
        description=_("Summarise run directories with Spark: events per kind and node, time span, faults. "
                      "Exit 1 if a run recorded an invariant violation."))
    parser.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help=_("run directory (meta.json + events)"))
    parser.add_argument("--store", action="append", default=[], metavar="DIR",
                        help=_("a broker's store directory (or a copy of one; repeatable): its commit log and "
                               "consume queues summarised per topic and queue"))
    parser.add_argument("--master", default=None, metavar="URL",
                        help=_("Spark master URL (default: $SPARK_MASTER or local[*])"))
    parser.add_argument("--json", action="store_true", help=_("one JSON object per run and line"))
    parser.set_defaults(func=run_analyze)
    sweep = subparsers.add_parser(
        "sweep", help=_("simulator trials over seeds and parameters, as Spark tasks"),
        description=_("Run SCENARIO (any of `rocketlab sim --list`, or figure16) for every seed and parameter "
                      "combination as Spark tasks; write trials.parquet and summary.json under --out."))
    sweep.add_argument("scenario", metavar="SCENARIO", help=_("a scenario of `rocketlab sim --list`, or figure16"))
    sweep.add_argument("--seeds", required=True, metavar="A..B", help=_("seeds, both ends included (or one seed)"))
    sweep.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                       help=_("a parameter and its values (repeatable); scenarios: nodes, profile, network, "
                              "latency, duration_ms; figure16: range, profile, timers, latency, reply_latency, "
                              "candidate_persist"))
    sweep.add_argument("--master", default=None, metavar="URL",
                       help=_("Spark master URL (default: $SPARK_MASTER or local[*]), e.g. spark://host:7077"))
    sweep.add_argument("--out", type=Path, required=True, metavar="DIR", help=_("where trials.parquet and "
                       "summary.json go (figure16: also figure16.html and paper.json)"))
    sweep.add_argument("--partitions", type=positive_int, default=None, help=_("Spark tasks (default 8 per core)"))
    sweep.add_argument("--quiet", action="store_true", help=_("no progress bar"))
    sweep.set_defaults(func=run_sweep)
    return parser


def run_sweep(args: argparse.Namespace) -> int:
    """Handler of ``rocketlab sweep``: runs the sweep, prints the summary; exit 1 if a trial failed or a
    scenario trial recorded an invariant violation."""
    seeds, params = parse_seeds(args.seeds), parse_params(args.param)
    trials = plan(args.scenario, seeds, params)  # bad names fail before Spark starts
    writable_dir(args.out, "--out")
    master = resolve_master(args.master)
    check_master_reachable(master)
    print(_("sweep {scenario}: {trials} trials on {master}").format(scenario=args.scenario, trials=len(trials),
                                                                    master=master), flush=True)
    spark = get_spark(master=master, app_name=f"rocketlab-sweep-{args.scenario}")
    with progress(_("sweep: tasks"), enabled=not args.quiet) as bar:
        result = sweep(spark, args.scenario, seeds, params, out=args.out, partitions=args.partitions,
                       progress=None if args.quiet else bar.update)
    for group in result.summary:
        print(json.dumps(group, default=str))
    print(_("{trials} trials in {seconds} s; rows: {path}").format(
        trials=result.trials, seconds=f"{result.seconds:.1f}", path=result.out / "trials.parquet"))
    if args.scenario == "figure16":

        print(_("figure: {path}").format(path=result.out / FIGURE_FILE))
        if (result.out / PAPER_FILE).exists():
            for p in json.loads((result.out / PAPER_FILE).read_text()):
                print(_("{range} ms, {statistic}: ours {ours} ms over {trials} trials; the paper: {paper}").format(
                    range=p["range"], statistic=p["statistic"], ours=f"{p['ours_ms']:.0f}", trials=p["trials"],
                    paper=p["paper_says"]))
    bad = sum(g["errors"] for g in result.summary)
    violated = sum(r.get("violations") or 0 for r in result.rows())
    if bad or violated:
        print("rocketlab: " + _("{bad} trial(s) failed, {violated} invariant violation(s) recorded").format(
            bad=bad, violated=violated), flush=True)
    return 1 if bad or violated else 0


def run_analyze(args: argparse.Namespace) -> int:
    """Handler of ``rocketlab analyze``: prints the summary, returns the exit code."""
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    if not args.run_dirs and not args.store:
        raise RocketlabError(_("analyze: give run directories, or a store with --store DIR"))
    if args.store:
        if args.run_dirs:
            raise RocketlabError(_("analyze: give run directories or --store, not both"))
        stores = analyze_stores(args.store, master=args.master, say=say)
        for summary in stores:
            print(json.dumps(summary, separators=(",", ":")) if args.json else format_store(summary))
        return 1 if any(s["corrupt"] for s in stores) else 0
    summaries = analyze(args.run_dirs, master=args.master, say=say)
    if args.json:
        for summary in summaries:
            print(json.dumps(summary, separators=(",", ":")))
    else:
        print(format_summaries(summaries))
    return 1 if any(s["violations"] for s in summaries) else 0


def check_inputs(run_dirs: Sequence[str | Path]) -> dict[str, str]:
    """Every run directory's name -> path, after checking each the way Spark will read it: events present,
    every JSON line an event (RunDirError naming the file and line), Parquet footers readable, no two runs
    of the same name. Runs without Spark, so bad input is one line before Spark starts."""
    names: dict[str, str] = {}
    for run_dir in run_dirs:
        files = event_files(run_dir)  # RunDirError for a missing directory or one without events
        name = Path(os.path.abspath(run_dir)).name
        if name in names:
            raise RocketlabError(_("run directories {first} and {second} have the same name {name!r}; analyze "
                                   "tells runs apart by directory name").format(first=names[name], second=run_dir,
                                                                               name=name))
        names[name] = str(run_dir)
        if any(f.suffix == ".parquet" for f in files):  # read_events reads the Parquet when there is some
            for f in files:
                if f.suffix == ".parquet":
                    _check_parquet_footer(str(f))
        else:
            for _event in iter_events(run_dir):
                pass
    return names


def analyze(run_dirs: Sequence[str | Path], master: str | None = None, *, say=None) -> list[dict[str, Any]]:
    """Summaries (one dict per run, in argument order) computed with Spark.

    Uses the SparkSession already running in this process if there is one (and leaves it running);
    otherwise checks a ``spark://`` master answers (one error at once, as ``sweep`` does), says so
    through ``say`` (a callable given one line; the CLI prints it to stderr), starts one for ``master``
    and stops it afterwards. Bad input raises RocketlabError before Spark starts (missing directory, no
    events, a corrupt event or Parquet file, duplicate run names).
    """
    names = check_inputs(run_dirs)
    started = active_session() is None
    if started:
        master = resolve_master(master)
        check_master_reachable(master)
        if say is not None:
            say(_("analyze: starting Spark ({master}) for {n} run(s)").format(master=master, n=len(names)))
    spark = get_spark(master=master, app_name="rocketlab-analyze")
    try:
        events = read_events(spark, list(run_dirs))
        per_kind_node = [r.asDict(recursive=True) for r in
                         analyses.events_per_kind_and_node(events, by_run=True).collect()]
        notable = [r.asDict(recursive=True) for r in
                   events.where(events.kind.isin("fault", "violation"))
                   .select("run", "t", "seq", "node", "kind", "action", "targets", "invariant", "detail")
                   .orderBy("run", "t", "seq").collect()]
    finally:
        if started:
            spark.stop()
    return [_summary(name, per_kind_node, notable) for name in names]


STORE_COLUMNS = ["node", "file", "topic", "queue_id", "queue_offset", "store_timestamp", "total_size", "corrupt"]


def analyze_stores(stores: Sequence[str | Path], master: str | None = None, *, say=None) -> list[dict[str, Any]]:
    """Per store directory (a broker's ``store/``, a copy of one, a run directory, a DLedger data
    directory): records, bytes and store-time span per node, topic and queue, the consume-queue units per
    queue, and the corrupt records (exit 1 when there are some). The files are found and checked before
    Spark starts (RocketlabError naming the path); a ``spark://`` master is checked at once."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    from rocketlab.analysis.datasources import read_store  # lazy: loads pyarrow
    found = []
    for store in stores:
        logs = store_files.find_commit_logs(store)
        try:
            queues = bool(store_files.find_consume_queues(store))
        except RocketlabError:
            queues = False
        found.append((str(store), logs, queues))
    started = active_session() is None
    if started:
        master = resolve_master(master)
        check_master_reachable(master)
        if say is not None:
            say(_("analyze: starting Spark ({master}) for {n} store(s)").format(master=master, n=len(found)))
    spark = get_spark(master=master, app_name="rocketlab-analyze")
    out = []
    try:
        for store, logs, queues in found:
            records = read_store(spark, "rocketmq-commitlog", store, columns=STORE_COLUMNS)
            per_queue = [r.asDict() for r in records.where(F.col("topic").isNotNull())
                         .groupBy("node", "topic", "queue_id")
                         .agg(F.count("*").alias("records"), F.min("queue_offset").alias("first_offset"),
                              F.max("queue_offset").alias("last_offset"), F.sum("total_size").alias("bytes"),
                              F.min("store_timestamp").alias("first_store_ms"),
                              F.max("store_timestamp").alias("last_store_ms"))
                         .orderBy("node", "topic", "queue_id").collect()]
            corrupt = [r.asDict() for r in records.where(F.col("corrupt").isNotNull())
                       .select("node", "file", "corrupt").orderBy("node", "file").collect()]
            units: dict[tuple, int] = {}
            if queues:
                cq = read_store(spark, "rocketmq-consumequeue", store, columns=["node", "topic", "queue_id"])
                units = {(r.node, r.topic, r.queue_id): r["count"] for r in
                         cq.groupBy("node", "topic", "queue_id").count().collect()}
            for r in per_queue:
                r["cq_units"] = units.get((r["node"], r["topic"], r["queue_id"]))
            out.append({"store": store, "files": len(logs), "kind": sorted({f.kind for f in logs}),
                        "records": sum(r["records"] for r in per_queue), "per_queue": per_queue,
                        "corrupt": corrupt})
    finally:
        if started:
            spark.stop()
    return out


def format_store(s: dict[str, Any]) -> str:
    """One store's summary for people."""
    lines = [_("store {store}: {records} records in {files} commit-log file(s) ({kinds}), {corrupt} corrupt").format(
        store=s["store"], records=s["records"], files=s["files"], kinds=", ".join(s["kind"]), corrupt=len(s["corrupt"]))]
    rows = [(r["node"] or "-", r["topic"], r["queue_id"], r["records"], r["first_offset"], r["last_offset"],
             r["bytes"], "-" if r["cq_units"] is None else r["cq_units"]) for r in s["per_queue"]]
    lines.append(render_table(rows, ("node", "topic", "queue", "records", "first_offset", "last_offset", "bytes",
                                     "cq_units"),
                              right=("queue", "records", "first_offset", "last_offset", "bytes", "cq_units"),
                              rule=False, indent=2))
    lines += ["  " + _("corrupt: {file}: {why}").format(file=c["file"], why=c["corrupt"]) for c in s["corrupt"]]
    return "\n".join(lines)


def _summary(run: str, per_kind_node: list[dict[str, Any]], notable: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [{k: r[k] for k in ("kind", "node", "events", "first_t", "last_t")}
            for r in per_kind_node if r["run"] == run]
    first = min((r["first_t"] for r in rows), default=None)
    last = max((r["last_t"] for r in rows), default=None)
    return {
        "run": run,
        "events": sum(r["events"] for r in rows),
        "first_t": first,
        "last_t": last,
        "span_ms": None if first is None or last is None else last - first,
        "nodes": sorted({r["node"] for r in rows if r["node"] is not None}),
        "per_kind_node": rows,
        "faults": [{k: e[k] for k in ("t", "node", "action", "targets")}
                   for e in notable if e["run"] == run and e["kind"] == "fault"],
        "violations": [{k: e[k] for k in ("t", "node", "invariant", "detail")}
                       for e in notable if e["run"] == run and e["kind"] == "violation"],
    }


def format_summaries(summaries: Sequence[dict[str, Any]]) -> str:
    """The human-readable summary: one block per run."""
    return "\n\n".join(_format_one(s) for s in summaries)


def _format_one(s: dict[str, Any]) -> str:
    span = _("no events") if s["first_t"] is None else (
        f"t {s['first_t']}..{s['last_t']} ms ({s['span_ms'] / 1000:.1f} s)")
    lines = [_("run {run}: {events} events, {span}, nodes {nodes}, {faults} faults, {violations} violations").format(
        run=s["run"], events=s["events"], span=span, nodes=", ".join(s["nodes"]) or "-", faults=len(s["faults"]),
        violations=len(s["violations"]))]

    rows = [(r["kind"], r["node"] or "-", r["events"], r["first_t"], r["last_t"]) for r in s["per_kind_node"]]
    lines.append(render_table(rows, ("kind", "node", "events", "first_t", "last_t"),
                              right=("events", "first_t", "last_t"), rule=False, indent=2))
    if s["faults"]:
        lines.append("  " + _("faults:"))
        lines += [f"    t={f['t']} {f['action']} {' '.join(f['targets'] or []) or '-'}" for f in s["faults"]]
    if s["violations"]:
        lines.append("  " + _("violations:"))
        lines += [f"    t={v['t']} {v['node'] or '-'} {v['invariant']}: {v['detail']}"
                  for v in s["violations"]]
    return "\n".join(lines)
