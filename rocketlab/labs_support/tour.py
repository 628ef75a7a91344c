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
    "LATENCY", "TOPIC", "dledger_failover", "failover_breakdown", "fresh_dir", "has_master", "layer_events",
    "master_slave_crash", "median_latency_ms", "node_table", "readable_bodies", "role_timelines", "run_tour",
    "steady_puts", "titled",
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
    from rocketlab.viz import role_timeline

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
