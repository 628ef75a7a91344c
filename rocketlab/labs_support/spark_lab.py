"""Helpers for ``labs/07_spark.ipynb``: Spark over many runs at once - the sample runs in ``data/``, the
store files as tables, acknowledged-but-lost messages across seeds, consume queues checked against the
commit log, and simulator sweeps as Spark tasks (failover times, Raft's Figure 16).

Every function reads real run directories (traces and store files) or runs the real simulator; the lab's
cells call these and show what they return.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rocketlab.analysis.lost import lost_messages
from rocketlab.analysis.readers import read_events
from rocketlab.analysis.session import get_spark
from rocketlab.i18n import N_, _
from rocketlab.sample_data import RUNS, SMALL_STORE, data_root
from rocketlab.scenarios.tour import master_slave_crash
from rocketlab.store.index_file import index_key_hash_method
from rocketlab.viz.style import BAR_EDGE, base_layout, series_colors, series_pattern

__all__ = [
    "commit_log_of", "cq_cross_check", "crash_runs", "events_per_run", "lost_by_run", "sample_run_dirs",
    "index_lookup", "start_spark", "sweep_progress",
]


def start_spark(master: str = "local[2]") -> tuple[Any, float]:
    """The kit's SparkSession and how many seconds starting it took (a JVM: once per kernel)."""
    started = time.perf_counter()
    spark = get_spark(master=master, app_name="rocketlab-lab07")
    return spark, time.perf_counter() - started


def sample_run_dirs(root: str | Path | None = None) -> list[Path]:
    """Every run directory of ``data/`` (the tour's three, then the others), in :data:`RUNS` order; by
    default the workspace's ``data/`` (:func:`rocketlab.sample_data.data_root`)."""
    root = data_root() if root is None else Path(root)
    dirs: list[Path] = []
    for run in RUNS:
        here = root / run.name
        dirs += sorted(p for p in here.iterdir() if p.is_dir()) if run.name == "tour" else [here]
    return dirs


def events_per_run(spark: Any, dirs: Sequence[Path]) -> pd.DataFrame:
    """Per run: events, simulated time, puts and how many were PUT_OK, faults and invariant violations."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    events = read_events(spark, dirs)
    summary = events.groupBy("run").agg(
        F.count("*").alias("events"), F.max("t").alias("simulated_ms"),
        F.sum(F.when(F.col("kind") == "put", 1).otherwise(0)).alias("puts"),
        F.sum(F.when((F.col("kind") == "put") & (F.col("status") == "PUT_OK"), 1).otherwise(0)).alias("put_ok"),
        F.sum(F.when(F.col("kind") == "fault", 1).otherwise(0)).alias("faults"),
        F.sum(F.when(F.col("kind") == "violation", 1).otherwise(0)).alias("violations"))
    order = {d.name: i for i, d in enumerate(dirs)}
    frame = summary.toPandas()
    return frame.sort_values("run", key=lambda s: s.map(order)).reset_index(drop=True)


def commit_log_of(spark: Any, run_dir: Path) -> Any:
    """Every record of every node's commit log in ``run_dir`` (the ``rocketmq-commitlog`` data source)."""
    return spark.read.format("rocketmq-commitlog").load(str(run_dir))


def index_lookup(spark: Any, run_dir: Path, key: str, topic: str = "TopicTest") -> pd.DataFrame:
    """What ``IndexService.queryOffset`` does for one key, over every node of ``run_dir``: the index entries
    (``rocketmq-index``) whose hash is the key's (``topic#key``, ``IndexFile.indexKeyHashMethod``), joined with
    the records at their physical offsets (``rocketmq-commitlog``) to see whose KEYS they hold: a hash can
    collide, so RocketMQ too reads each record and compares its keys."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    index = spark.read.format("rocketmq-index").load(str(run_dir))
    hits = index.filter(F.col("key_hash") == index_key_hash_method(f"{topic}#{key}"))
    records = commit_log_of(spark, run_dir).select("node", "phy_offset", F.col("properties")["KEYS"].alias("keys"),
                                                   "queue_offset")
    joined = hits.join(records, ["node", "phy_offset"], "left").select(
        "node", "file", "slot", "index_no", "phy_offset", "keys", "queue_offset")
    return joined.orderBy("node", "phy_offset").toPandas()


def cq_cross_check(spark: Any, dirs: Iterable[Path]) -> pd.DataFrame:
    """Per run and node: how many consume-queue units point at a record of the same node's commit log with
    the same topic, queue id, queue offset and size (``consistent``), at a record that disagrees
    (``mismatched``), or at no record at all (``dangling``: past the log's end or into a cut tail). Runs
    without brokers (a bare DLedger group has no consume queues) are skipped."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    frames = []
    for d in dirs:
        if not any(p.is_dir() for p in Path(d).glob("nodes/*/store/consumequeue")):
            continue
        units = spark.read.format("rocketmq-consumequeue").load(str(d)).where(F.col("corrupt").isNull())
        records = commit_log_of(spark, d).where(F.col("corrupt").isNull() & F.col("topic").isNotNull()).select(
            "run", "node", "phy_offset", F.col("topic").alias("r_topic"), F.col("queue_id").alias("r_queue"),
            F.col("queue_offset").alias("r_qoff"), F.col("total_size").alias("r_size"))
        joined = units.join(records, ["run", "node", "phy_offset"], "left")
        same = ((F.col("topic") == F.col("r_topic")) & (F.col("queue_id") == F.col("r_queue"))
                & (F.col("queue_offset") == F.col("r_qoff")) & (F.col("size") == F.col("r_size")))
        frames.append(joined.groupBy("run", "node").agg(
            F.count("*").alias("units"),
            F.sum(F.when(F.col("r_size").isNotNull() & same, 1).otherwise(0)).alias("consistent"),
            F.sum(F.when(F.col("r_size").isNotNull() & ~same, 1).otherwise(0)).alias("mismatched"),
            F.sum(F.when(F.col("r_size").isNull(), 1).otherwise(0)).alias("dangling")))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result.orderBy("run", "node").toPandas()


def crash_runs(root: Path, seeds: Iterable[int], puts: int = 60) -> list[Path]:
    """For each seed an ASYNC_MASTER and a SYNC_MASTER pair (``rocketlab demo``'s story: ``puts`` puts, the
    master crashes right after the last answer), saved as run directories ``async-<seed>``/``sync-<seed>``."""
    dirs = []
    for seed in seeds:
        for role in ("ASYNC_MASTER", "SYNC_MASTER"):
            story = master_slave_crash(root / f"{role.split('_')[0].lower()}-{seed}", role, seed=seed, puts=puts,
                                       broker={"store_options": SMALL_STORE}, parquet=True)
            story.cluster.close()
            dirs.append(story.run_dir)
    return dirs


def lost_by_run(spark: Any, dirs: Sequence[Path]) -> pd.DataFrame:
    """Per run: its role and seed, acknowledged puts, and how many of them no surviving replica holds
    (``lost_messages``: the trace's puts joined with every node's commit log, in one Spark query)."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    events = read_events(spark, dirs)
    acked = (events.where((F.col("kind") == "put") & (F.col("status") == "PUT_OK")).groupBy("run")
             .agg(F.count("*").alias("acked")))
    lost = lost_messages(spark, dirs, events=events).groupBy("run").agg(F.count("*").alias("lost"))
    frame = acked.join(lost, "run", "left").fillna(0, ["lost"]).toPandas()
    frame["role"] = frame["run"].str.split("-").str[0].str.upper() + "_MASTER"
    frame["seed"] = frame["run"].str.split("-").str[1].astype(int)
    return frame[["run", "role", "seed", "acked", "lost"]].sort_values(["role", "seed"]).reset_index(drop=True)


@contextmanager
def sweep_progress(description: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar (rich's; in a notebook it redraws in the cell's output) for a long sweep: yields the
    ``progress(done, total)`` callback :func:`rocketlab.analysis.sweep.sweep` calls as Spark tasks finish."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("tasks"),
                  TimeElapsedColumn()) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


LOST_TITLE = N_("Acknowledged messages lost when the master crashes, per seed (60 puts each)")
"""The title lab 07's code cell passes to :func:`lost_figure` (the same in both languages): in the catalogue, so
that the Chinese twin shows it in Chinese."""


def lost_figure(lost: pd.DataFrame, title: str) -> go.Figure:
    """Lost acknowledged messages per seed, one bar series per role (:func:`lost_by_run`'s table): the kit's
    colours, a pattern per role beside the colour, and text colours the theme repaints (plotly's own template
    writes #2a3f5f, unreadable on a dark page)."""
    fig = go.Figure()
    roles = sorted(lost["role"].unique())
    colors = series_colors(roles)
    for i, role in enumerate(roles):
        rows = lost[lost["role"] == role]
        fig.add_trace(go.Bar(x=rows["seed"], y=rows["lost"], name=role, marker=dict(
            color=colors[role], line=BAR_EDGE, pattern=series_pattern(i))))
    base_layout(fig, _(title), 360, legend="top").update_layout(barmode="group")  # LOST_TITLE: in the catalogue
    fig.update_xaxes(title=_("seed"))
    fig.update_yaxes(title=_("acknowledged but lost"))
    return fig
