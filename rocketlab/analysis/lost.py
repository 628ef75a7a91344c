"""Acknowledged but lost: which messages a producer was told PUT_OK that no surviving replica holds, for
any number of runs at once - the trace's puts joined with the store files' records through Spark.

:func:`acked_but_lost` is the query (lab 07's exercise ``lab07.acked_but_lost`` when one is plugged in);
:func:`lost_messages` reads run directories (``read_events`` + ``rocketmq-commitlog``) and asks it.
rocketlab's own addition (the classic master-slave lab and the tour count the same thing per run in Python).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rocketlab import plugs
from rocketlab.analysis.readers import read_events
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _

ACKED_BUT_LOST_PLUG = plugs.point("lab07.acked_but_lost")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""


def acked_but_lost(events: Any, records: Any) -> Any:
    """Acknowledged messages that no surviving replica holds: columns ``run, phy_offset, size``, sorted.

    ``events``: trace events of one or more runs (``read_events``); a ``put`` with status ``PUT_OK`` is
    acknowledged at ``(run, phy_offset, size)``. A node is down at the end of a run when the last ``fault``
    event with action ``crash`` or ``restart`` naming it (in ``targets``) is a crash. ``records``:
    ``rocketmq-commitlog`` rows of the same runs; a replica holds the message when a record of a node that is
    not down, not ``corrupt``, sits at the same ``run`` and ``phy_offset`` with ``total_size`` equal to
    ``size``."""
    from pyspark.sql import Window  # lazy: Spark, only where it runs
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    acked = (events.where((F.col("kind") == "put") & (F.col("status") == "PUT_OK"))
             .select("run", "phy_offset", "size").distinct())
    faults = (events.where((F.col("kind") == "fault") & F.col("action").isin("crash", "restart"))
              .select("run", "t", "seq", "action", F.explode("targets").alias("node")))
    last = Window.partitionBy("run", "node").orderBy(F.col("t").desc(), F.col("seq").desc())
    down = (faults.withColumn("rank", F.row_number().over(last))
            .where((F.col("rank") == 1) & (F.col("action") == "crash")).select("run", "node"))
    held = (records.where(F.col("corrupt").isNull()).join(down, ["run", "node"], "left_anti")
            .select("run", "phy_offset", F.col("total_size").alias("size")).distinct())
    return acked.join(held, ["run", "phy_offset", "size"], "left_anti").orderBy("run", "phy_offset")


def read_commit_logs(spark: Any, dirs: Iterable[str | Path]) -> Any:
    """The ``rocketmq-commitlog`` rows of every run directory in ``dirs`` (the data source reads one path)."""
    records = None
    for d in dirs:
        frame = spark.read.format("rocketmq-commitlog").load(str(d))
        records = frame if records is None else records.unionByName(frame)
    if records is None:
        raise RocketlabError(_("no run directories given"))
    return records


def lost_messages(spark: Any, run_dirs: str | Path | Iterable[str | Path], *, events: Any = None) -> Any:
    """:func:`acked_but_lost` over ``run_dirs`` (each holding a trace and ``nodes/<id>/`` store files);
    ``events``: their trace events when the caller has read them already."""
    dirs = [Path(run_dirs)] if isinstance(run_dirs, str | Path) else [Path(d) for d in run_dirs]
    if not dirs:
        raise RocketlabError(_("lost_messages: no run directories given"))
    if events is None:
        events = read_events(spark, dirs)
    query = plugs.resolve(ACKED_BUT_LOST_PLUG, acked_but_lost)
    return query(events, read_commit_logs(spark, dirs))


__all__ = ["acked_but_lost", "lost_messages", "read_commit_logs"]
