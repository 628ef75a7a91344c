"""Helpers for ``labs/00_tour.ipynb`` and ``rocketlab demo``: the tour's stories
(:mod:`rocketlab.scenarios.tour`) and the lab's tables, importable from one place, and the demo's HTML
report of the three runs (:func:`run_demo`), drawn here because scenarios sit below the figures.

Java analogues: none - the kit's own scripted demo.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.scenarios.tour import (
    LATENCY,
    TOPIC,
    Tour,
    dledger_failover,
    has_master,
    master_slave_crash,
    median_latency_ms,
    readable_bodies,
    run_tour,
    steady_puts,
)
from rocketlab.sim import Cluster
from rocketlab.trace.rundir import fresh_dir
from rocketlab.viz import role_timeline, write_report

__all__ = [
    "LATENCY", "TOPIC", "Demo", "dledger_failover", "failover_breakdown", "fresh_dir", "has_master", "layer_events",
    "master_slave_crash", "median_latency_ms", "node_table", "readable_bodies", "role_timelines", "run_demo",
    "run_tour", "steady_puts", "titled", "write_tour_report",
]

LAYERS = {"DLedger": frozenset({"LEADER", "FOLLOWER", "CANDIDATE"}), "broker": frozenset({"MASTER", "SLAVE"})}
"""The two layers of a broker on DLedger: its DLedger member's role (``DLedgerLeaderElector``) and the
role ``DLedgerRoleChangeHandler`` gives the broker. Both are traced as ``role`` events of the same node."""


def node_table(cluster: Cluster) -> list[dict[str, Any]]:
    """One row per broker: up or down, its broker role and id, and (on DLedger) its member's state."""
    rows = []
    for node_id in cluster.node_ids:
        core = cluster.node(node_id)
        row: dict[str, Any] = {"node": node_id, "up": cluster.alive(node_id)}
        if core is not None:
            row.update({k: v for k, v in core.describe().items() if k not in ("node", "pending_puts")
                        and not isinstance(v, dict)})
        rows.append(row)
    return rows


def layer_events(events: list[dict[str, Any]], layer: str) -> list[dict[str, Any]]:
    """The trace with only ``layer``'s role events (``"DLedger"`` or ``"broker"``, :data:`LAYERS`), every
    other event kept: one layer per figure, instead of each role event overwriting the other layer's."""
    roles = LAYERS[layer]
    return [e for e in events if e.get("kind") != "role" or e.get("role") in roles]


def titled(fig: Any, prefix: str) -> Any:
    """``fig`` with ``prefix`` before its title (the title keeps what the figure computed)."""
    title = fig.layout.title.text or ""
    return fig.update_layout(title_text=f"{prefix}: {title}" if title else prefix)


def role_timelines(events: list[dict[str, Any]]) -> list[Any]:
    """Two role timelines (:func:`rocketlab.viz.role_timeline`), the DLedger layer's then the broker's."""
    return [titled(role_timeline(layer_events(events, layer)), f"{layer} layer") for layer in LAYERS]


def failover_breakdown(cluster: Cluster, old: str, crash_ms: int) -> dict[str, int]:
    """Where a DLedger group's failover time goes, from the trace: the last heartbeat a survivor received
    from ``old`` before the crash, when the first survivor became CANDIDATE (``maxHeartBeatLeak``
    heartbeat intervals after that heartbeat), when one became LEADER, and when its broker became MASTER
    (``DLedgerRoleChangeHandler``). Times in ms of the run."""
    events = cluster.events
    beats = [e["t"] for e in events if e["kind"] == "msg_recv" and e.get("msg") == "HeartBeatRequest"
             and e.get("src") == old and e["t"] <= crash_ms]
    after = [e for e in events if e["kind"] == "role" and e["t"] >= crash_ms and e["node"] != old]
    leader = next(e for e in after if e["role"] == "LEADER")
    return {"crash": crash_ms, "last_heartbeat": max(beats),
            "candidate": next(e["t"] for e in after if e["role"] == "CANDIDATE"), "leader": leader["t"],
            "master": next(e["t"] for e in after if e["role"] == "MASTER" and e["node"] == leader["node"])}


# ---------------------------------------------------------------------- rocketlab demo
def write_tour_report(tour: Tour) -> Path:
    """``report.html`` beside the tour's three run directories: one self-contained HTML file with each
    run's summary, the cluster viewer and every figure (:func:`rocketlab.viz.write_report`)."""
    runs = {story.run_dir.name: story.run_dir for story in tour.stories}
    return write_report(tour.out / "report.html", runs, f"rocketlab demo (seed {tour.dledger.seed}): "
                        "failover on DLedger vs classic master-slave")


@dataclass
class Demo:
    """What ``rocketlab demo`` prints: the tour, its HTML report and the seconds both took."""

    tour: Tour
    report: Path
    seconds: float


def run_demo(out: str | Path, *, seed: int = 1, puts: int = 60) -> Demo:
    """``rocketlab demo``: the tour's three runs under ``out`` (:func:`run_tour`), then their report."""
    start = time.perf_counter()
    tour = run_tour(out, seed=seed, puts=puts)
    return Demo(tour, write_tour_report(tour), time.perf_counter() - start)
