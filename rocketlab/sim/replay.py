"""Rebuild a run to an instant: a fresh cluster from the same recipe and seed, the same code run on it,
stopped by the kernel's horizon (:class:`~rocketlab.sim.kernel.HorizonReached`) once every event due at
the instant has run. The cluster viewer forks recorded runs this way.

A run is its *producer*: the code that drove it (a scenario function, a grader's test, or the calls a
learner made, :attr:`Cluster.calls`, replayed at the positions they came). Not a Java class: the kit's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.sim.cluster import Call, Cluster
from rocketlab.sim.kernel import HorizonReached

Producer = Callable[[Cluster], Any]


def run_to(cluster: Cluster, produce: Producer, at_ms: int) -> Cluster:
    """Run ``produce(cluster)`` until the clock would pass ``at_ms`` (or it returns or fails), then run
    what is due at ``at_ms``: the cluster as the recorded run was at that instant."""
    cluster.scheduler.horizon_ms = at_ms
    try:
        produce(cluster)
    except HorizonReached:
        pass
    except Exception:  # noqa: BLE001, S110 - the recorded run failed here too (a grader's check): stop with it
        pass
    return stop_at(cluster, at_ms)


def stop_at(cluster: Cluster, at_ms: int) -> Cluster:
    """Clear the horizon and run what is due at ``at_ms`` (when the producer ended before it, up to it)."""
    cluster.scheduler.horizon_ms = None
    if cluster.now_ms <= at_ms:
        cluster.scheduler.run_until_time(at_ms)
    return cluster


def replay_calls(calls: Sequence[Call]) -> Producer:
    """A producer making ``calls`` again, each at the position it came (kernel events run first)."""

    def produce(cluster: Cluster) -> None:
        scheduler = cluster.scheduler
        for call in calls:
            while scheduler.events_run < call.events_run:
                if not scheduler.step():
                    break
            if scheduler.now_ms < call.at_ms:
                scheduler.run_until_time(call.at_ms)
            getattr(cluster, call.method)(*call.args, **call.kwargs)

    return produce


def same_history(fork: Cluster, original: Sequence[dict[str, Any]], at_ms: int) -> None:
    """RocketlabError unless ``fork``'s trace repeats ``original``'s up to ``at_ms``: a run changed by
    code the producer does not repeat (a core's method called directly, say) cannot be forked."""
    before = sum(1 for e in original if e["t"] < at_ms)
    events = fork.events
    n = min(len(events), sum(1 for e in original if e["t"] <= at_ms))
    if len(events) < before or events[:n] != list(original[:n]):
        first = next((i for i in range(n) if events[i] != original[i]), n)
        raise RocketlabError(f"cannot go back to t = {at_ms} ms: rebuilding the run gave another trace from event "
                             f"{first} on (it was changed by code outside the Cluster's calls); act at the present "
                             "instead, or open the run from the code that made it")
