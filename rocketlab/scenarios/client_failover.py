"""``rocketlab sim client-*``: failover as an application lives it - a producer and a consumer group of three
(the kit's client, :mod:`rocketlab.client.client_core`) against two DLedger broker groups and a classic pair
behind a name server (:mod:`rocketlab.sim.applications`), while a master crashes or a consumer leaves.

* ``client-master-crash``: the DLedger master of ``broker-a`` crashes; sends to it fail and go to another broker,
  the group elects a new master that registers with the name server, clients see it at their next route refresh;
* ``client-classic-crash``: the classic ASYNC_MASTER ``c0`` crashes and restarts 45 s later (its consumers read
  the slave meanwhile; producers cannot write ``broker-c``);
* ``client-consumer-leaves``: consumer ``k1`` crashes; the brokers see its connection close, tell the group, the
  other two take its queues from the offsets it last committed.

What the trace says (functions below, pure on events, shared by the tests and lab 08): which sends were
acknowledged, which messages were consumed (and how often), the offsets committed per queue. The two claims
checked: no acknowledged message is lost (every one is consumed once the run settles); every duplicate was
consumed before the fault at an offset the group had not committed yet (at-least-once: RocketMQ redelivers
from the committed offset).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

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

FAULT_AT_MS = 13_000
"""When the fault comes (8 s after the clients start), plus a seeded 0-999 ms."""
SETTLE_MS = 70_000
"""How long the run goes on after the fault (default ``duration_ms``): two route refreshes and a pull timeout."""
RESTART_AFTER_MS = 45_000
"""When the classic master comes back: after its consumers gave up their pulls to it (30 s) and read the slave."""
FAULTS = ("master-crash", "classic-crash", "consumer-leaves")


def build(seed: int = 1, duration_ms: int = SETTLE_MS, network: str = "reliable", latency: str = "uniform:1:3",
          consumer_style: str = "push", **kwargs: Any) -> Cluster:
    """The applications cluster of these scenarios, the producer sending every 100 ms for the whole run; the group's
    members of ``consumer_style`` (``push``, ``lite-pull-subscribe``, ``lite-pull-assign``:
    :func:`~rocketlab.sim.applications.applications`)."""
    messages = (FAULT_AT_MS + 1_000 + duration_ms - 5_000) // 100 - 50  # the last sends settle before the end
    return Cluster.applications(seed=seed, messages=messages, network=network, latency=latency,
                                consumer_style=consumer_style, **kwargs)


def master_of(cluster: Cluster, group: str) -> str | None:
    """The live MASTER of a DLedger broker group (``a``: ``a0``..``a2``)."""
    for node_id in cluster.live_nodes():
        if node_id[0] == group and node_id[1:].isdigit() and getattr(cluster.node(node_id), "role", None) == "MASTER":
            return node_id
    return None


def run_fault(cluster: Cluster, fault: str, seed: int, duration_ms: int = SETTLE_MS) -> dict[str, Any]:
    """Run to the fault, apply it, run ``duration_ms`` more (a classic master restarts after ``RESTART_AFTER_MS``
    if the run lasts that long); returns {"fault", "fault_ms", "target"}."""
    if fault not in FAULTS:
        raise ConfigError(_("fault {fault!r} is not one of {choices}").format(fault=fault, choices=", ".join(FAULTS)))
    cluster.run_for(FAULT_AT_MS + random.Random(f"{seed}/fault").randint(0, 999) - cluster.now_ms)
    target = {"master-crash": master_of(cluster, "a"), "classic-crash": "c0", "consumer-leaves": "k1"}[fault]
    if target is None:
        raise ConfigError(_("broker-a has no master to crash"))
    fault_ms = cluster.now_ms
    cluster.crash(target)
    if fault == "classic-crash" and duration_ms > RESTART_AFTER_MS:
        cluster.run_for(RESTART_AFTER_MS)
        cluster.restart(target)
        cluster.run_for(duration_ms - RESTART_AFTER_MS)
    else:
        cluster.run_for(duration_ms)
    return {"fault": fault, "fault_ms": fault_ms, "target": target}


# ------------------------------------------------------------------------------------------ reading the trace
def acknowledged(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """uniq key -> the ``client_send`` event that the broker answered SEND_OK (what the application was told)."""
    return {e["uniq_key"]: e for e in events if e["kind"] == "client_send" and e["status"] == "SEND_OK"}


def consumptions(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "client_consume" and not e["topic"].startswith("%")]


CONSUMED = ("CONSUME_SUCCESS", "POLLED")
"""The statuses of a message the application has (a push listener's success, a lite pull consumer's poll)."""


def duplicates(events: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """uniq key -> its consumptions, for the messages the application consumed (CONSUME_SUCCESS, or POLLED by a
    lite pull consumer) more than once (a message it refused and got again by retry is not a duplicate)."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for e in consumptions(events):
        if e["status"] not in CONSUMED:
            continue
        seen.setdefault(e["uniq_key"], []).append(e)
    return {k: v for k, v in seen.items() if len(v) > 1}


def committed_at(events: Iterable[dict[str, Any]], t_ms: int) -> dict[tuple[str, int], int]:
    """(broker name, queue id) -> the highest offset the group had committed (sent to a broker) by ``t_ms``."""
    out: dict[tuple[str, int], int] = {}
    for e in events:
        if e["kind"] == "client_commit" and e["t"] <= t_ms and not e["topic"].startswith("%"):
            key = (e["broker_name"], e["queue_id"])
            out[key] = max(out.get(key, 0), e["offset"])
    return out


def uncommitted_at_fault(events: list[dict[str, Any]], fault_ms: int) -> list[str]:
    """The duplicates that were consumed before the fault at an offset the group had not committed by then (the
    claim: every duplicate is one of these, when the fault is all that moved the queues)."""
    committed = committed_at(events, fault_ms)
    return sorted(k for k, seen in duplicates(events).items() if seen[0]["t"] <= fault_ms
                  and committed.get((seen[0]["broker_name"], seen[0]["queue_id"]), 0) <= seen[0]["queue_offset"])


Period = tuple[int, float]


def ownership(events: list[dict[str, Any]], topic: str = "TopicTest") -> dict[tuple[str, str, int], list[Period]]:
    """(member, broker name, queue id) -> the periods [start, end) it owned the queue, from its ``client_rebalance``
    events (a member's crash ends them all)."""
    periods: dict[tuple[str, str, int], list[list[float]]] = {}
    owned: dict[str, set[tuple[str, int]]] = {}
    for e in events:
        if e["kind"] == "fault" and e["action"] == "crash":
            for node in e["targets"]:
                for q in owned.pop(node, set()):
                    periods[(node, *q)][-1][1] = e["t"]
        if e["kind"] != "client_rebalance" or e["topic"] != topic:
            continue
        now = {(name, int(qid)) for name, _, qid in (t.rpartition(":") for t in e["targets"])}
        before = owned.get(e["node"], set())
        for q in before - now:
            periods[(e["node"], *q)][-1][1] = e["t"]
        for q in now - before:
            periods.setdefault((e["node"], *q), []).append([e["t"], float("inf")])
        owned[e["node"]] = now
    return {k: [(int(a), b) for a, b in v] for k, v in periods.items()}


def explain_duplicates(events: list[dict[str, Any]]) -> dict[str, str]:
    """uniq key -> why the group saw it twice: ``redelivered`` (consumed, not committed yet when the queue passed to
    the member that consumed it again, which began at the committed offset), ``owned twice`` (two members owned the
    queue at the same time: their views of the group differed during a rebalance) or ``unexplained``."""
    periods = ownership(events)
    out = {}
    for key, seen in duplicates(events).items():
        reasons = [_why(events, periods, first, again) for first, again in itertools.pairwise(seen)]
        out[key] = next((r for r in reasons if r == "unexplained"), reasons[-1])
    return out


def _period(periods: dict[tuple[str, str, int], list[Period]], e: dict[str, Any]) -> Period | None:
    return next((p for p in periods.get((e["node"], e["broker_name"], e["queue_id"]), ()) if p[0] <= e["t"] < p[1]),
                None)


def _why(events: list[dict[str, Any]], periods: dict[tuple[str, str, int], list[Period]], first: dict[str, Any],
         again: dict[str, Any]) -> str:
    p1, p2 = _period(periods, first), _period(periods, again)
    if p1 is None or p2 is None:
        return "unexplained"
    if first["node"] != again["node"] and p1[0] < p2[1] and p2[0] < p1[1]:
        return "owned twice"
    committed = committed_at(events, p2[0]).get((again["broker_name"], again["queue_id"]), 0)
    return "redelivered" if first["t"] <= p2[0] and committed <= again["queue_offset"] else "unexplained"


def lost_acknowledged(events: list[dict[str, Any]]) -> list[str]:
    consumed = {e["uniq_key"] for e in consumptions(events)}
    return sorted(set(acknowledged(events)) - consumed)


def client_summary(events: list[dict[str, Any]], fault_ms: int) -> dict[str, Any]:
    """The numbers an application would report: sends, failures, retries, route changes, rebalances, duplicates."""
    sends = [e for e in events if e["kind"] == "client_send"]
    return {"acked": len(acknowledged(events)),
            "send_failed": sum(e["kind"] == "client_send_failed" for e in events),
            "attempts_failed": sum(e["status"] != "SEND_OK" for e in sends),
            "retried": sum(e["attempt"] > 0 for e in sends),
            "route_changes": sum(e["kind"] == "client_route" and e["t"] > fault_ms for e in events),
            "rebalances": sum(e["kind"] == "client_rebalance" and e["t"] > fault_ms for e in events),
            "consumed": len(consumptions(events)), "duplicates": len(duplicates(events)),
            "lost_acked": len(lost_acknowledged(events)),
            "uncommitted_at_fault": len(uncommitted_at_fault(events, fault_ms)),
            "duplicate_reasons": dict(sorted(Counter(explain_duplicates(events).values()).items())),
            "by_broker": dict(sorted(Counter(e["broker_name"] for e in acknowledged(events).values()).items()))}


def _scenario(fault: str, name: str):
    def run(args: ScenarioArgs) -> ScenarioResult:
        if args.nodes is not None:
            raise ConfigError(_("{name} has a fixed layout (ns, a0-a2, b0-b2, c0-c1, p0, k0-k2): no --nodes").format(name=name))
        cluster = build(args.seed, args.duration_ms or SETTLE_MS, args.network or "reliable",
                        args.latency or "uniform:1:3", scenario=name, data_dir=args.data_dir)
        fault_info = run_fault(cluster, fault, args.seed, args.duration_ms or SETTLE_MS)
        summary = {**summarize(cluster), **fault_info, **client_summary(cluster.events, fault_info["fault_ms"])}
        return ScenarioResult(cluster, summary, node_table(cluster))
    return run


register(Scenario("client-master-crash", "a producer and a consumer group of three while broker-a's DLedger master "
                                         "crashes: sends retried on another broker, routes refreshed, nothing "
                                         "acknowledged lost", _scenario("master-crash", "client-master-crash")))
register(Scenario("client-classic-crash", "the same while the classic ASYNC_MASTER c0 crashes and restarts 45 s "
                                          "later", _scenario("classic-crash", "client-classic-crash")))
register(Scenario("client-consumer-leaves", "consumer k1 of three crashes: the group rebalances and re-consumes "
                                            "what k1 had not committed", _scenario("consumer-leaves",
                                                                                   "client-consumer-leaves")))
