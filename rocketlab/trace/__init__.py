"""The trace: the one event stream every plot, widget, Spark analysis, grader and checker reads.

* :mod:`rocketlab.trace.schema` — the contract (envelope, kinds, field types) and ``validate_event``;
* :mod:`rocketlab.trace.recorder` — ``TraceRecorder`` used by both runtimes, ``describe`` one-liners;
* :mod:`rocketlab.trace.rundir` — run directories on disk and the pandas loader;
* :mod:`rocketlab.trace.faults` — the fault vocabulary: one table of fault kinds (schedules, the
  simulator, the chaos campaign and the cluster viewer read it).
"""

from rocketlab.trace.recorder import TraceRecorder, describe
from rocketlab.trace.rundir import RunDirError, iter_events, load_events, read_meta, write_run
from rocketlab.trace.schema import FIELD_TYPES, KINDS, TraceSchemaError, validate_event

__all__ = [
    "FIELD_TYPES", "KINDS", "RunDirError", "TraceRecorder", "TraceSchemaError", "describe",
    "iter_events", "load_events", "read_meta", "validate_event", "write_run",
]
