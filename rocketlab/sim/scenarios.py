"""Named scenarios for ``rocketlab sim``: a system, a network, a fault schedule and a summary.

Every scenario takes the same :class:`ScenarioArgs` and returns a :class:`ScenarioResult` whose cluster
has the whole trace. Issues that add systems register their scenarios here with :func:`register`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.sim.cluster import Cluster
from rocketlab.trace.recorder import Event


@dataclass(frozen=True)
class ScenarioArgs:
    nodes: int | None = None
    seed: int = 1
    profile: str | None = None
    network: str | None = None
    latency: str | None = None
    duration_ms: int | None = None
    data_dir: Path | None = None


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
        raise RocketlabError(f"no scenario named {name!r} (known: {known}; see rocketlab sim --list)") from None


# --- the smoke scenario ------------------------------------------------------------------------

SMOKE_FAULTS = """
1000 crash {b}
2500 restart {b}
3000 partition {a} | {rest}
4500 heal
5000 pause {c}
5600 resume {c}
6000 drop {a} -> {b}
"""


class StreamOrderChecker:
    """Every byte stream delivers its frames whole and in order, however reads split or merge them."""

    name = "stream_frames_in_order"

    def check(self, cluster: Cluster, event: Event) -> str | None:
        if event["kind"] == "stream_close" and str(event.get("reason", "")).startswith("bad frame"):
            return f"{event['node']} got a broken stream from {event['src']}: {event['reason']}"
        return None


def run_smoke(args: ScenarioArgs) -> ScenarioResult:
    """Pingpong nodes under crash, restart, partition, pause and a dropped message."""
    from rocketlab.pingpong import PingPongConfig

    nodes = args.nodes or 3
    if nodes < 3:
        raise ConfigError(f"the smoke scenario needs at least 3 nodes, got {nodes}")
    if args.profile not in (None, "safe"):
        raise ConfigError(f"the smoke scenario has no profile {args.profile!r}")
    duration = args.duration_ms or 8000
    cluster = Cluster.pingpong(
        nodes=nodes, seed=args.seed, network=args.network or "unreliable", latency=args.latency,
        data_dir=args.data_dir, config=PingPongConfig(stream_frames=4), checkers=[StreamOrderChecker()],
        scenario="smoke")
    ids = cluster.node_ids
    schedule = SMOKE_FAULTS.format(a=ids[0], b=ids[1], c=ids[2], rest=" ".join(ids[1:]))
    cluster.apply_schedule(schedule)
    cluster.run_for(duration)
    return ScenarioResult(cluster, summarize(cluster), node_table(cluster))


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


register(Scenario("smoke", "pingpong nodes exchange heartbeats, pings and stream frames under crash, "
                           "restart, partition, pause and a dropped message", run_smoke))


# --- classic master-slave ------------------------------------------------------------------------

def _master_crash(role: str, name: str):
    def run(args: ScenarioArgs) -> ScenarioResult:
        """Steady puts on a master and its slave, then the master crashes: count what was lost."""
        import random

        if args.profile not in (None, "4.x", "5.x"):
            raise ConfigError(f"master-slave profiles are 4.x (default) or 5.x, not {args.profile!r}")
        ha = {"in_sync_replicas": 1} if args.profile == "5.x" else {}
        cluster = Cluster.master_slave(role=role, slaves=(args.nodes or 2) - 1, seed=args.seed,
                                       network=args.network or "reliable", latency=args.latency or "uniform:1:3",
                                       data_dir=args.data_dir, ha=ha, scenario=name)
        rng = random.Random(f"{args.seed}/workload")
        acked: list[int] = []
        end_ms = args.duration_ms or 3000
        while cluster.now_ms < end_ms:
            handle = cluster.put(b"m" * rng.randint(100, 1000), topic="TopicTest")
            if handle.status == "PUT_OK":
                acked.append(handle.wrote_offset + handle.wrote_bytes)
            cluster.run_for(rng.randint(0, 20))
        cluster.crash("n0")
        best = max(cluster.node(n).max_offset for n in cluster.live_nodes())
        summary = {**summarize(cluster), "acked": len(acked), "lost_acked": sum(e > best for e in acked)}
        return ScenarioResult(cluster, summary, node_table(cluster))
    return run


register(Scenario("ms-async-crash", "ASYNC_MASTER and slave under steady puts; the master crashes; counts "
                                    "acknowledged messages the slave never got", _master_crash("ASYNC_MASTER", "ms-async-crash")))
register(Scenario("ms-sync-crash", "the same with a SYNC_MASTER: no acknowledged message is lost "
                                   "(profile 5.x: inSyncReplicas=1 makes it behave like async)",
                  _master_crash("SYNC_MASTER", "ms-sync-crash")))

import rocketlab.dledger.scenarios  # noqa: E402,F401  (registers the dledger-* scenarios)
