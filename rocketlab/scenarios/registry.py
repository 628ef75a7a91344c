"""The scenario registry behind ``rocketlab sim``: a scenario is a name, a one-line description and a
function from :class:`ScenarioArgs` to a :class:`ScenarioResult` whose cluster holds the whole trace.

Modules of this package register their scenarios at import (``rocketlab.scenarios`` imports them all).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.sim.cluster import Cluster


@dataclass(frozen=True)
class ScenarioArgs:
    nodes: int | None = None
    seed: int = 1
    profile: str | None = None
    network: str | None = None
    latency: str | None = None
    duration_ms: int | None = None
    data_dir: Path | None = None

    def __post_init__(self) -> None:  # 0 or a negative number must not fall back to a default silently
        for name in ("nodes", "duration_ms"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise RocketlabError(f"{name} must be a positive integer, got {value!r}")


@dataclass
class ScenarioResult:
    cluster: Cluster
    summary: dict[str, Any] = field(default_factory=dict)
    table: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.cluster.violations


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    run: Callable[[ScenarioArgs], ScenarioResult]


SCENARIOS: dict[str, Scenario] = {}


def register(scenario: Scenario) -> Scenario:
    if scenario.name in SCENARIOS:
        raise RocketlabError(f"scenario {scenario.name!r} is registered twice")
    SCENARIOS[scenario.name] = scenario
    return scenario


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        known = ", ".join(sorted(SCENARIOS))
        raise RocketlabError(_("no scenario named {name!r} (known: {known}; see rocketlab sim --list)").format(
            name=name, known=known)) from None


def summarize(cluster: Cluster) -> dict[str, Any]:
    """Counts every scenario prints: events per kind, messages, faults, violations."""
    kinds = Counter(e["kind"] for e in cluster.events)
    return {"seed": cluster.seed, "scenario": cluster.scenario, "simulated_ms": cluster.now_ms,
            "events": len(cluster.events), "kernel_events": cluster.scheduler.events_run,
            "messages": dict(cluster.runtime.counters), "faults": kinds.get("fault", 0),
            "violations": len(cluster.violations), "kinds": dict(sorted(kinds.items()))}


def node_table(cluster: Cluster) -> list[dict[str, Any]]:
    rows = []
    for node_id in cluster.node_ids:
        core = cluster.node(node_id)
        row = {"node": node_id, "alive": cluster.alive(node_id)}
        if core is not None and hasattr(core, "describe"):
            row.update({k: v for k, v in core.describe().items() if k != "node" and not isinstance(v, dict)})
        rows.append(row)
    return rows
