"""Every plotly figure a learner sees, one call each, reading trace events only.

Each figure takes one run's events (a list of event dicts, e.g. ``cluster.events``, or a pandas
DataFrame from :func:`rocketlab.trace.rundir.load_events`) and returns a plotly ``Figure``. A run that
lacks the kinds a figure needs gets a figure that says so ("no put events in this run"), never an
exception. Field names are the trace contract's (docs/trace.md). One module per figure:

* :mod:`~rocketlab.viz.figures.roles` - ``role_timeline``: roles and terms, faults and violations above;
* :mod:`~rocketlab.viz.figures.votes` - ``votes_per_term``: vote requests, answers and round verdicts;
* :mod:`~rocketlab.viz.figures.offsets` - ``commit_progress``: DLedger indexes and classic HA offsets;
* :mod:`~rocketlab.viz.figures.messages` - ``message_flow``: messages sent, delivered and lost;
* :mod:`~rocketlab.viz.figures.latency` - ``put_latency``: put latency by PutMessageStatus;
* :mod:`~rocketlab.viz.figures.controller` - ``epochs_and_sync_state_set``: controller mode's master
  epochs and SyncStateSet.

* :mod:`~rocketlab.viz.figures.figure16` - ``downtime_cdf``: Raft's Figure 16 from a sweep's trials (rows of
  trials, not trace events: the one figure that reads no trace).

:mod:`rocketlab.viz` exports the trace figures (``from rocketlab.viz import role_timeline``).
"""
