"""Lab 07 exercise: a Spark query over many runs.

Edit the body below, then check it from the notebook (``check("lab07.acked_but_lost")``) or from a shell
(``rocketlab grade lab07``). The grader plugs your query into ``rocketlab.analysis.lost.lost_messages``,
runs it over the sample runs in ``data/`` and over fresh master-slave crashes (ASYNC and SYNC, several
seeds), and compares what you find with what the simulator knows was lost. Use DataFrame operations
(``where``, ``select``, ``join``, window functions, ``explode``); no Python UDFs are needed. Keep the
name and signature; you may add helpers.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window  # noqa: F401  (yours to use)
from pyspark.sql import functions as F  # noqa: F401


def acked_but_lost(events: DataFrame, records: DataFrame) -> DataFrame:
    """Acknowledged messages that no surviving replica holds, over any number of runs.

    ``events`` are trace events (``read_events``: columns ``run, t, seq, node, kind, ...``). A ``put``
    event whose ``status`` is ``PUT_OK`` means the producer was told the message at ``(run, phy_offset)``
    of ``size`` bytes is stored. A node is **down at the end** of a run when the last ``fault`` event of
    that run with ``action`` ``crash`` or ``restart`` whose ``targets`` (an array) name it is a crash;
    latest means largest ``t``, then largest ``seq``.

    ``records`` are ``rocketmq-commitlog`` rows of the same runs (``run, node, phy_offset, total_size,
    corrupt, ...``). A message is held when a record that is not ``corrupt`` (``corrupt`` is null), of a
    node that is not down, sits at the same ``run`` and ``phy_offset`` with ``total_size == size``.

    Return a DataFrame with exactly the columns ``run, phy_offset, size``: one row per acknowledged
    message that is not held, sorted by ``run`` then ``phy_offset``.
    """
    raise NotImplementedError("lab07.acked_but_lost")
