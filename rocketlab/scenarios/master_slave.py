"""``rocketlab sim ms-async-crash`` / ``ms-sync-crash``: classic master-slave HA losing its master."""

from __future__ import annotations

import random

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.scenarios.registry import (
    Scenario,
    ScenarioArgs,
    ScenarioResult,
    node_table,
    register,
    summarize,
)
from rocketlab.sim.cluster import Cluster


def _master_crash(role: str, name: str):
    def run(args: ScenarioArgs) -> ScenarioResult:
        """Steady puts on a master and its slave, then the master crashes: count what was lost."""
        if args.profile not in (None, "4.x", "5.x"):
            raise ConfigError(_("master-slave profiles are 4.x (default) or 5.x, not {profile!r}").format(profile=args.profile))
        ha = {"in_sync_replicas": 1} if args.profile == "5.x" else {}
        cluster = Cluster.master_slave(role=role, slaves=(args.nodes or 2) - 1, seed=args.seed,
                                       network=args.network or "reliable", latency=args.latency or "uniform:1:3",
                                       data_dir=args.data_dir, ha=ha, scenario=name)
        # the load starts once every slave has sent its first report (a 4.9.5 slave does ~5 s after
        # connecting; Java's HATest sleeps 6 s for the same reason); the run lasts duration_ms after that,
        # plus a seeded 0-99 ms so the crash falls anywhere in the master's 100 ms write poll
        slaves = len(cluster.node_ids) - 1
        cluster.run_until(lambda c: c.node("n0").ha_service.reported_connection_count == slaves, timeout_ms=10_000)
        rng = random.Random(f"{args.seed}/workload")
        acked: list[int] = []
        end_ms = cluster.now_ms + (args.duration_ms or 3000) + rng.randint(0, 99)
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
