"""Small reusable Spark aggregations over the DataFrame of :func:`rocketlab.analysis.read_events`.

Each function takes that DataFrame and returns a new (lazy) DataFrame; nothing here collects. They only
group on the trace fields of docs/trace.md, so they work on any run that has the events they look at (a run
without puts simply gives an empty ``puts_per_status``). ``by_run=True`` adds the ``run`` column to the
grouping for multi-run inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

MESSAGE_KINDS = ("msg_send", "msg_recv", "msg_drop")


def _keys(by_run: bool, *keys: str) -> list[str]:
    return ["run", *keys] if by_run else list(keys)


def events_per_kind_and_node(events, *, by_run: bool = False):
    """Events per ``kind`` and ``node`` (null node = cluster-wide events such as faults).

    Columns: [run,] kind, node, events, first_t, last_t; sorted by those keys.
    """
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run, "kind", "node")
    return (events.groupBy(*keys)
            .agg(F.count(F.lit(1)).alias("events"), F.min("t").alias("first_t"), F.max("t").alias("last_t"))
            .orderBy(*[F.col(k).asc_nulls_first() for k in keys]))


def window_start(t_column="t", window_ms: int = 1000):
    """Column expression: the start (ms) of the ``window_ms`` window that holds ``t``."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    if window_ms <= 0:
        raise ValueError(f"window_ms must be positive, got {window_ms}")
    t = F.col(t_column) if isinstance(t_column, str) else t_column
    return (F.floor(t / F.lit(window_ms)) * F.lit(window_ms)).cast("long")


def counts_per_window(events, window_ms: int = 1000, *, by: Sequence[str] = (), by_run: bool = False):
    """Events per ``window_ms`` window of ``t`` (default 1 s), optionally also per ``by`` columns.

    Columns: [run,] window_start (ms), ``*by``, events; sorted by window then keys. Empty windows are absent.
    """
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = [*_keys(by_run), "window_start", *by]
    return (events.withColumn("window_start", window_start("t", window_ms))
            .groupBy(*keys).agg(F.count(F.lit(1)).alias("events"))
            .orderBy(*[F.col(k).asc_nulls_first() for k in keys]))


def message_counts(events, *, by_run: bool = False):
    """Network messages per message type: sent, received and dropped (``msg_send/recv/drop`` events).

    Columns: [run,] msg, sent, received, dropped, drop_rate (dropped / sent, null if nothing was sent).
    """
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run, "msg")
    counts = (events.where(F.col("kind").isin(*MESSAGE_KINDS))
              .groupBy(*keys)
              .agg(*[F.sum(F.when(F.col("kind") == kind, 1).otherwise(0)).cast("long").alias(name)
                     for kind, name in zip(MESSAGE_KINDS, ("sent", "received", "dropped"), strict=True)]))
    rate = F.when(F.col("sent") > 0, F.col("dropped") / F.col("sent"))
    return counts.withColumn("drop_rate", rate).orderBy(*keys)


def drops_per_reason(events, *, by_run: bool = False):
    """Dropped messages per ``reason`` and ``msg``. Columns: [run,] reason, msg, dropped."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run, "reason", "msg")
    return (events.where(F.col("kind") == "msg_drop").groupBy(*keys)
            .agg(F.count(F.lit(1)).alias("dropped")).orderBy(*keys))


def votes_per_term(events, *, by_run: bool = False):
    """Vote responses per ``term``, ``candidate`` and ``result`` (VoteResponse result name).

    Columns: [run,] term, candidate, result, votes.
    """
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run, "term", "candidate", "result")
    return (events.where(F.col("kind") == "vote_response").groupBy(*keys)
            .agg(F.count(F.lit(1)).alias("votes")).orderBy(*keys))


def puts_per_status(events, *, by_run: bool = False):
    """Puts per PutMessageStatus name, with their latency.

    Columns: [run,] status, puts, bytes (sum of ``size``), mean_latency_ms, max_latency_ms.
    """
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run, "status")
    return (events.where(F.col("kind") == "put").groupBy(*keys)
            .agg(F.count(F.lit(1)).alias("puts"), F.sum("size").alias("bytes"),
                 F.avg("latency_ms").alias("mean_latency_ms"), F.max("latency_ms").alias("max_latency_ms"))
            .orderBy(*keys))


def time_span(events, *, by_run: bool = True):
    """First and last ``t`` and the number of events. Columns: [run,] events, first_t, last_t, span_ms."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    keys = _keys(by_run)
    grouped = events.groupBy(*keys) if keys else events.groupBy()
    frame = grouped.agg(F.count(F.lit(1)).alias("events"), F.min("t").alias("first_t"),
                        F.max("t").alias("last_t"))
    frame = frame.withColumn("span_ms", F.col("last_t") - F.col("first_t"))
    return frame.orderBy(*keys) if keys else frame


def faults(events):
    """The fault events in order. Columns: run, t, seq, node, action, targets."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    return (events.where(F.col("kind") == "fault")
            .select("run", "t", "seq", "node", "action", "targets").orderBy("run", "t", "seq"))


def violations(events):
    """The invariant violations in order. Columns: run, t, seq, node, invariant, detail."""
    from pyspark.sql import functions as F  # lazy: Spark, only where it runs

    return (events.where(F.col("kind") == "violation")
            .select("run", "t", "seq", "node", "invariant", "detail").orderBy("run", "t", "seq"))
