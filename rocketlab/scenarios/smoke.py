"""``rocketlab sim smoke``: the pingpong smoke protocol under every kind of fault (proves the runtime)."""

from __future__ import annotations

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.pingpong import PingPongConfig
from rocketlab.scenarios.registry import (
    Scenario,
    ScenarioArgs,
    ScenarioResult,
    node_table,
    register,
    summarize,
)
from rocketlab.sim.cluster import Cluster
from rocketlab.trace.recorder import Event

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
    nodes = args.nodes or 3
    if nodes < 3:
        raise ConfigError(_("the smoke scenario needs at least 3 nodes, got {nodes}").format(nodes=nodes))
    if args.profile is not None:
        raise ConfigError(_("the smoke scenario has no profile {profile!r}").format(profile=args.profile))
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


register(Scenario("smoke", "pingpong nodes exchange heartbeats, pings and stream frames under crash, "
                           "restart, partition, pause and a dropped message", run_smoke))
