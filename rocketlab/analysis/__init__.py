"""Spark analysis of run directories.

* :mod:`rocketlab.analysis.session` — ``get_spark()``: the one SparkSession builder (local or cluster);
* :mod:`rocketlab.analysis.readers` — ``read_events()``: run directories → DataFrame, explicit schema;
* :mod:`rocketlab.analysis.analyses` — small aggregations (per kind and node, per window, messages,
  votes, puts, faults);
* :mod:`rocketlab.analysis.cli` — the ``rocketlab analyze`` subcommand.

Importing this package does not import pyspark; the functions do when called.
"""

from rocketlab.analysis.analyses import (
    counts_per_window,
    drops_per_reason,
    events_per_kind_and_node,
    faults,
    message_counts,
    puts_per_status,
    time_span,
    violations,
    votes_per_term,
)
from rocketlab.analysis.readers import event_schema, read_events
from rocketlab.analysis.session import find_java, get_spark

__all__ = [
    "counts_per_window", "drops_per_reason", "event_schema", "events_per_kind_and_node", "faults",
    "find_java", "get_spark", "message_counts", "puts_per_status", "read_events", "time_span",
    "violations", "votes_per_term",
]
