"""Simulator sweeps on Spark: many seeds and parameter values, one deterministic trial per (seed, params).

    rocketlab sweep dledger-churn --seeds 1..200 --param profile=dledger-0.3.1.2,raft --out runs/sweep
    rocketlab sweep figure16 --seeds 1..1000 --param range=150-155,150-200 --master spark://host:7077 ...

or from a notebook: ``sweep(spark, "figure16", seeds=range(1, 101), params={"range": ["150-155"]})``.

A sweep is the cross product of its parameter values times its seeds. Each (seed, params) is a *trial*:
the driver partitions the trials over the executors, each task runs the simulator for its trials and
returns one metrics row per trial (JSON), and the rows become a DataFrame written as Parquet
(``trials.parquet``) beside ``summary.json`` (per parameter combination: trials, and count / mean / median /
p90 / max of each numeric metric). The simulator is deterministic, so the same sweep gives the same rows on
``local[*]`` and on a multi-process cluster; rows are sorted by parameters then seed.

What can be swept (:data:`SWEEPABLE`): every scenario of ``rocketlab sim --list`` (parameters: the
``ScenarioArgs`` fields ``nodes``, ``profile``, ``network``, ``latency``, ``duration_ms``; the row is the
scenario's summary, scalar values only) and ``figure16`` (Raft's Figure 16 trial, parameters ``range``
(``LO-HI`` ms, default all the paper's ranges), ``profile`` (``raft``; a DLedger profile runs DLedger's
elector with ``timers``), ``timers`` (``java defaults`` or ``scaled to 150-300``), ``latency`` (requests,
default ``constant:0``), ``reply_latency`` (default ``uniform:7:10``; ``same`` for the request's) and
``candidate_persist`` (``LO-HI`` ms: the candidate's own disk write before it asks for votes; default
``2-4``, ``0-0`` for none); the defaults are :mod:`rocketlab.scenarios.figure16`'s LogCabin set-up).

On a cluster that is not local, the driver ships the ``rocketlab`` package to the executors
(``addPyFile`` of a zip) unless ``ship_package=False``; the executors need Python with the kit's
dependencies (the same ``pip install``). rocketlab's own addition.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import socket
import statistics
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rocketlab
from rocketlab.analysis.figure16_report import write_figure16_report
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.scenarios import ScenarioArgs, get_scenario
from rocketlab.scenarios.figure16 import RANGES_BOTTOM, RANGES_TOP, dledger_trial, figure16_trial

SCENARIO_PARAMS = ("nodes", "profile", "network", "latency", "duration_ms")
FIGURE16_PARAMS = ("range", "profile", "timers", "latency", "reply_latency", "candidate_persist")
_INT_PARAMS = {"nodes", "duration_ms"}


@dataclass(frozen=True)
class Trial:
    """One (seed, params) of a sweep."""

    sweep: str
    seed: int
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)


def parse_seeds(text: str) -> range:
    """``A..B`` (both included) or one number."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:\.\.\s*(\d+))?\s*", text)
    if not m:
        raise RocketlabError(_("--seeds {text!r}: write A..B (both included) or one seed").format(text=text))
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    if hi < lo:
        raise RocketlabError(_("--seeds {text!r}: {hi} is below {lo}").format(text=text, hi=hi, lo=lo))
    return range(lo, hi + 1)


def parse_params(items: Sequence[str]) -> dict[str, list[str]]:
    """``["profile=raft,dledger-0.3.1.2", "nodes=3,5"]`` -> ``{"profile": [...], "nodes": [...]}``."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise RocketlabError(_("--param {item!r}: write NAME=V1,V2,...").format(item=item))
        out[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return out


def allowed_params(name: str) -> tuple[str, ...]:
    if name == "figure16":
        return FIGURE16_PARAMS

    get_scenario(name)  # RocketlabError naming the known scenarios
    return SCENARIO_PARAMS


def plan(name: str, seeds: Iterable[int], params: Mapping[str, Sequence[Any]] | None = None) -> list[Trial]:
    """Every trial of the sweep, parameters checked (a name that does not exist is an error)."""
    allowed = allowed_params(name)
    params = dict(params or {})
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise RocketlabError(_("sweep {name}: no parameter {unknown} (it takes {allowed})").format(
            name=name, unknown=", ".join(unknown), allowed=", ".join(allowed)))
    if name == "figure16":

        if set(params.get("profile", ["raft"])) == {"raft"}:  # DLedger's elector takes timers, not a range
            params.setdefault("range", [f"{lo}-{hi}" for lo, hi in dict.fromkeys(RANGES_TOP + RANGES_BOTTOM)])
        elif "range" in params:
            raise RocketlabError(_("sweep figure16: --param range is for the raft profile; DLedger's elector takes "
                                   "--param timers (java defaults, scaled to 150-300)"))
    typed = {k: [_typed(k, v) for v in vs] for k, vs in sorted(params.items())}
    seeds = list(seeds)
    if not seeds:
        raise RocketlabError(_("sweep {name}: no seeds").format(name=name))
    combos = [tuple(zip(typed, values, strict=True)) for values in itertools.product(*typed.values())]
    return [Trial(name, seed, combo) for combo in combos for seed in seeds]


def _typed(key: str, value: Any) -> Any:
    if key in _INT_PARAMS and not isinstance(value, int):
        try:
            return int(value)
        except ValueError:
            raise RocketlabError(_("--param {key}={value}: not a whole number").format(key=key, value=value)) from None
    if key in ("range", "candidate_persist") and not re.fullmatch(r"\d+-\d+", str(value)):
        raise RocketlabError(_("--param {key}={value}: write LO-HI in ms, e.g. 150-300").format(key=key, value=value))
    return value


# ---------------------------------------------------------------------- one trial (runs on an executor)
def run_trial(trial: Trial) -> dict[str, Any]:
    """The metrics row of one trial: its sweep, seed and params, then what the trial measured."""
    params = dict(trial.params)
    head = {"sweep": trial.sweep, "seed": trial.seed, **{f"param_{k}": v for k, v in trial.params}}
    try:
        if trial.sweep == "figure16":
            metrics = _figure16(trial.seed, params)
        else:
            metrics = _scenario(trial.sweep, trial.seed, params)
        return {**head, **{k: v for k, v in metrics.items() if k not in head}, "error": None}
    except Exception as e:  # noqa: BLE001 - a failed trial is a row that says why, not a lost sweep
        return {**head, "error": f"{type(e).__name__}: {e}"}


def _figure16(seed: int, params: Mapping[str, Any]) -> dict[str, Any]:
    profile = params.get("profile", "raft")
    kwargs: dict[str, Any] = {}
    if "latency" in params:
        kwargs["latency"] = params["latency"]
    if "reply_latency" in params:
        kwargs["reply_latency"] = None if params["reply_latency"] == "same" else params["reply_latency"]
    if profile != "raft":
        return dledger_trial(params.get("timers", "java defaults"), seed, profile=profile, **kwargs)
    lo, hi = (int(x) for x in str(params["range"]).split("-"))
    if "candidate_persist" in params:
        low, high = (int(x) for x in str(params["candidate_persist"]).split("-"))
        kwargs["candidate_persist"] = (low, high)
    return figure16_trial(lo, hi, seed, profile=profile, **kwargs)


def _scenario(name: str, seed: int, params: Mapping[str, Any]) -> dict[str, Any]:
    result = get_scenario(name).run(ScenarioArgs(seed=seed, **params))
    try:
        return {"violations": len(result.cluster.violations), **_scalars(result.summary)}
    finally:
        result.cluster.close()


def _scalars(summary: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key in ("seed", "scenario"):
            continue
        if isinstance(value, bool | int | float | str) or value is None:
            out[key] = value
        elif isinstance(value, Mapping) and all(isinstance(v, int | float) for v in value.values()):
            out.update({f"{key}_{k}": v for k, v in value.items() if key != "kinds"})
        else:
            out[key] = json.dumps(value, sort_keys=True, default=str)
    return out


def _run_partition(trials: Iterable[Trial]) -> Iterable[str]:
    for trial in trials:
        yield json.dumps(run_trial(trial), sort_keys=True, default=str)


# ---------------------------------------------------------------------- the driver
@dataclass
class SweepResult:
    """What :func:`sweep` returns: the rows as a DataFrame (sorted), where they were written, the summary."""

    frame: Any
    out: Path | None
    summary: list[dict[str, Any]]
    trials: int
    seconds: float

    def rows(self) -> list[dict[str, Any]]:
        return [r.asDict() for r in self.frame.collect()]


def check_master_reachable(master: str, timeout_s: float = 2.0) -> None:
    """A ``spark://host:port`` master that does not accept connections is one clear error, at once
    (Spark itself retries for a minute)."""
    m = re.fullmatch(r"spark://([^:/]+):(\d+)", master)
    if not m:
        return
    try:
        with socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout_s):
            pass
    except OSError as e:
        raise RocketlabError(_("cannot reach the Spark master at {master}: {why}").format(
            master=master, why=e.strerror or e)) from None


def package_zip(directory: Path) -> Path:
    """The ``rocketlab`` package as a zip for ``addPyFile`` (what executors on other machines import)."""
    root = Path(rocketlab.__file__).resolve().parent
    out = directory / "rocketlab.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and "_kit" not in path.relative_to(root).parts:
                z.write(path, Path("rocketlab") / path.relative_to(root))
    return out


def sweep(spark: Any, name: str, seeds: Iterable[int], params: Mapping[str, Sequence[Any]] | None = None, *,
          out: str | Path | None = None, partitions: int | None = None, progress: Callable[[int, int], None] | None = None,
          ship_package: bool | None = None) -> SweepResult:
    """Run the sweep on ``spark`` (see the module docstring); write ``out/trials.parquet`` and
    ``out/summary.json`` when ``out`` is given (for ``figure16`` also ``figure16.html`` and, where it
    applies, ``paper.json``: :mod:`rocketlab.analysis.figure16_report`). ``progress(done, total)`` is called as tasks finish."""
    trials = plan(name, seeds, params)
    sc = spark.sparkContext
    if ship_package if ship_package is not None else not sc.master.startswith("local"):

        sc.addPyFile(str(package_zip(Path(tempfile.mkdtemp(prefix="rocketlab-sweep-")))))
    slices = partitions or min(len(trials), max(1, sc.defaultParallelism) * 8)
    started = time.perf_counter()
    rdd = sc.parallelize(trials, slices).mapPartitions(_run_partition)
    lines = _collect_with_progress(sc, rdd, progress)
    rows = sorted((json.loads(line) for line in lines),
                  key=lambda r: (tuple(str(r.get(f"param_{k}")) for k, _ in trials[0].params), r["seed"]))
    frame = _frame(spark, rows)
    seconds = time.perf_counter() - started
    summary = summarize(rows, [k for k, _ in trials[0].params])
    target = None
    if out is not None:
        target = Path(out)
        target.mkdir(parents=True, exist_ok=True)
        frame.coalesce(1).write.mode("overwrite").parquet(str(target / "trials.parquet"))
        (target / "summary.json").write_text(json.dumps(
            {"sweep": name, "trials": len(rows), "seconds": round(seconds, 2), "master": sc.master,
             "groups": summary}, indent=1, default=str) + "\n")
        if name == "figure16":

            write_figure16_report(rows, target)
    return SweepResult(frame, target, summary, len(rows), seconds)


def _collect_with_progress(sc: Any, rdd: Any, progress: Callable[[int, int], None] | None) -> list[str]:
    if progress is None:
        return rdd.collect()
    group = f"rocketlab-sweep-{time.monotonic_ns()}"
    done = threading.Event()
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            sc.setJobGroup(group, "rocketlab sweep")  # a thread-local property: set where the job starts
            result["lines"] = rdd.collect()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = e
        finally:
            done.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    tracker = sc.statusTracker()
    last = (-1, -1)
    while not done.wait(0.5):
        finished = total = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else ():
                s = tracker.getStageInfo(stage)
                if s:
                    finished, total = finished + s.numCompletedTasks, total + s.numTasks
        if total and (finished, total) != last:
            progress(finished, total)
            last = (finished, total)
    worker.join()
    if "error" in result:
        raise result["error"]
    total = rdd.getNumPartitions()
    progress(total, total)
    return result["lines"]


def _frame(spark: Any, rows: list[dict[str, Any]]) -> Any:
    """The rows as a DataFrame with one column per key any row has (types from the values)."""
    from pyspark.sql import types as T  # lazy: Spark, only where it runs

    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    fields = []
    for key in keys:
        values = [r.get(key) for r in rows if r.get(key) is not None]
        if values and all(isinstance(v, bool) for v in values):
            t: Any = T.BooleanType()
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            t = T.LongType()
        elif values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            t = T.DoubleType()
        else:
            t = T.StringType()
        fields.append(T.StructField(key, t, True))
    schema = T.StructType(fields)

    def cast(field: Any, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(field.dataType, T.DoubleType):
            return float(value)
        if isinstance(field.dataType, T.StringType) and not isinstance(value, str):
            return json.dumps(value, default=str)
        return value

    data = [tuple(cast(f, r.get(f.name)) for f in schema.fields) for r in rows]
    return spark.createDataFrame(data, schema)


def summarize(rows: Sequence[Mapping[str, Any]], param_keys: Sequence[str]) -> list[dict[str, Any]]:
    """Per parameter combination: trials, errors, and count/mean/median/p90/max of each numeric metric."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(f"param_{k}") for k in param_keys), []).append(row)
    out = []
    skip = {"seed"}
    for key, group in groups.items():
        entry: dict[str, Any] = {**{k: v for k, v in zip(param_keys, key, strict=True)}, "trials": len(group),
                                 "errors": sum(1 for r in group if r.get("error"))}
        metrics = sorted({k for r in group for k, v in r.items() if isinstance(v, int | float)
                          and not isinstance(v, bool) and k not in skip and not k.startswith("param_")})
        for metric in metrics:
            values = sorted(float(r[metric]) for r in group if isinstance(r.get(metric), int | float)
                            and not isinstance(r.get(metric), bool))
            if values:
                p90 = values[min(len(values) - 1, math.ceil(0.9 * len(values)) - 1)]
                entry[metric] = {"n": len(values), "mean": round(statistics.fmean(values), 3),
                                 "median": statistics.median(values), "p90": p90, "max": values[-1]}
        out.append(entry)
    return out


__all__ = ["SweepResult", "Trial", "check_master_reachable", "parse_params", "parse_seeds", "plan", "run_trial",
           "summarize", "sweep"]
