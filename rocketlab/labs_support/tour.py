"""Helpers for ``labs/00_tour.ipynb``: the tour's stories (:mod:`rocketlab.scenarios.tour`, the same code
``rocketlab demo`` runs) and the lab's tables, importable from one place."""

from __future__ import annotations

from typing import Any

from rocketlab.scenarios.tour import (
    LATENCY,
    TOPIC,
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

__all__ = [
    "LATENCY", "TOPIC", "dledger_failover", "fresh_dir", "has_master", "master_slave_crash",
    "median_latency_ms", "node_table", "readable_bodies", "run_tour", "steady_puts",
]


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
