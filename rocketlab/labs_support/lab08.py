"""Helpers for ``labs/08_client_failover.ipynb``, "Failover as an application lives it": a producer and a consumer
group of three (the kit's client, the same cores as its asyncio client) against two DLedger broker groups and a
classic pair behind a name server, in the simulator (:mod:`rocketlab.sim.applications`), while a master crashes or
a consumer leaves (:mod:`rocketlab.scenarios.client_failover`).

Everything here reads the run back from its trace (``client_*``, ``broker_registered``, ``pull_held``, ...) and the
cores' state; the lab's cells only call these and show what they return.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from rocketlab.broker.schedule_message_service import parse_delay_level
from rocketlab.broker.topic_config_rules import DEFAULT_MESSAGE_DELAY_LEVEL
from rocketlab.client.client_core import MQ_CLIENT_API_TIMEOUT, ClientNodeConfig
from rocketlab.client.consumers import PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION
from rocketlab.client.producer import ProducerConfig
from rocketlab.i18n import _
from rocketlab.namesrv.namesrv_controller import NamesrvConfig
from rocketlab.scenarios import client_failover as cf
from rocketlab.sim import Cluster

__all__ = [
    "TOPIC", "at_least_once", "client_timers", "delay_levels", "layout", "retry_journey", "retry_run", "commits_at_crash", "consumer_after_failover", "crash",
    "crash_line", "duplicates_line", "duplicates_table", "failover_timeline", "first_duplicate_owners", "first_sends",
    "leave", "long_polling", "owners", "route_table", "send_outcomes", "sends_line", "start",
]

TOPIC = "TopicTest"


def start(seed: int = 1, duration_ms: int = cf.SETTLE_MS) -> Cluster:
    """The lab's cluster (``ns``, ``a0``-``a2``, ``b0``-``b2``, ``c0``-``c1``, ``p0``, ``k0``-``k2``), run until
    8 s after the clients started: masters elected and registered, the group rebalanced, messages flowing."""
    c = cf.build(seed, duration_ms)
    c.run_for(cf.FAULT_AT_MS)
    return c


def layout(c: Cluster) -> dict[str, list[str]]:
    """The cluster's processes by what they are."""
    kinds = c.meta["node_kinds"]
    out: dict[str, list[str]] = {"name server": [n for n in c.node_ids if kinds.get(n) == "namesrv"]}
    for g in c.meta["dledger_groups"]:
        out[f"broker-{g} (DLedger)"] = [n for n in c.node_ids if n[0] == g and n not in kinds]
    for g in c.meta["classic_pairs"]:
        out[f"broker-{g} (master, slave)"] = [n for n in c.node_ids if n[0] == g and n not in kinds]
    out["producer (group PG)"] = c.meta["producers"]
    out["consumers (group CG)"] = c.meta["consumers"]
    return out


def client_timers() -> dict[str, int]:
    """The Java client's defaults the run uses (ms), read from the kit's config objects."""
    c, p = ClientNodeConfig("ns:9876"), ProducerConfig()
    return {"pollNameServerInterval": c.poll_name_server_interval,
            "heartbeatBrokerInterval": c.heartbeat_broker_interval, "rebalanceInterval": c.rebalance_interval,
            "persistConsumerOffsetInterval": c.persist_consumer_offset_interval, "sendMsgTimeout": p.send_msg_timeout,
            "retryTimesWhenSendFailed": p.retry_times_when_send_failed, "mqClientApiTimeout": MQ_CLIENT_API_TIMEOUT,
            "brokerSuspendMaxTimeMillis": c.broker_suspend_max_time_millis,
            "consumerTimeoutMillisWhenSuspend": c.consumer_timeout_millis_when_suspend,
            "pullTimeDelayMillsWhenException": PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION,
            "nameServerScanInterval": NamesrvConfig().scan_interval_ms}


def route_table(c: Cluster, topic: str = TOPIC) -> list[dict[str, Any]]:
    """What the name server answers for ``topic``: each broker name's members (id 0: the master) and queues."""
    route = c.node("ns").route_info_manager.pickup_topic_route_data(topic)
    queues = {q.broker_name: (q.read_queue_nums, q.write_queue_nums) for q in route.queue_datas}
    return [{"brokerName": b.broker_name, "master (id 0)": b.broker_addrs.get(0, "-"),
             "slaves": ", ".join(f"{i}: {a}" for i, a in sorted(b.broker_addrs.items()) if i != 0),
             "read queues": queues.get(b.broker_name, (0, 0))[0], "write queues": queues.get(b.broker_name, (0, 0))[1]}
            for b in route.broker_datas]


def first_sends(c: Cluster, n: int = 12) -> list[dict[str, Any]]:
    """The producer's first ``n`` send attempts: which queue ``MQFaultStrategy`` chose, what the broker answered."""
    sends = [e for e in c.events if e["kind"] == "client_send"][:n]
    return [{"t": e["t"], "broker": e["broker_name"], "queue": e["queue_id"], "attempt": e["attempt"],
             "status": e["status"], "queue offset": e.get("queue_offset")} for e in sends]


def crash(c: Cluster, group: str = "a") -> tuple[str, int]:
    """Crash the DLedger master of broker group ``group``: (its node, the instant)."""
    master = cf.master_of(c, group)
    if master is None:
        raise ValueError(f"broker-{group} has no master to crash")
    at = c.now_ms
    c.crash(master)
    return master, at


def leave(c: Cluster, node: str = "k1") -> int:
    """A consumer's process dies (its connections close): the instant."""
    at = c.now_ms
    c.crash(node)
    return at


def send_outcomes(c: Cluster, since_ms: int = 0) -> dict[str, Any]:
    """The producer's sends since ``since_ms``: attempts, failed attempts (by broker), what the application got."""
    sends = [e for e in c.events if e["kind"] == "client_send" and e["t"] >= since_ms]
    bad = [e for e in sends if e["status"] != "SEND_OK"]
    keys = {e["uniq_key"] for e in sends}
    return {"messages": len(keys), "attempts": len(sends), "failed attempts": len(bad),
            "failed attempts by broker": dict(Counter(e["broker_name"] for e in bad)),
            "failed attempts by reason": dict(Counter(e["reason"].split(" ")[0] for e in bad)),
            "stored on a retry": sum(e["attempt"] > 0 and e["status"] == "SEND_OK" for e in sends),
            "sends the application saw fail": sum(e["kind"] == "client_send_failed" and e["t"] >= since_ms
                                                  for e in c.events)}


def _after(e: dict[str, Any], fault_ms: int) -> str:
    return f"+{e['t'] - fault_ms} ms"


def failover_timeline(c: Cluster, fault_ms: int, group: str = "a") -> list[dict[str, Any]]:
    """The first time each thing happened after the crash, as the processes lived it (offsets from the crash)."""
    ev = [e for e in c.events if e["t"] >= fault_ms]
    name = f"broker-{group}"
    rows: list[dict[str, Any]] = []

    def first(what: str, pred: Any) -> None:
        hit = next((e for e in ev if pred(e)), None)
        if hit is not None:
            rows.append({"after the crash": _after(hit, fault_ms), "t": hit["t"], "who": hit["node"] or "-",
                         "what": what, "event": hit["kind"]})

    first(_("a send to the dead master fails (connection refused)"),
          lambda e: e["kind"] == "client_send" and e["broker_name"] == name and e["status"] != "SEND_OK")
    first(_("... and its retry is stored by another broker"),
          lambda e: e["kind"] == "client_send" and e["attempt"] > 0 and e["status"] == "SEND_OK")
    first(_("the name server drops the master (its connection closed)"),
          lambda e: e["kind"] == "broker_unregistered" and e["broker_name"] == name)
    first(_("a survivor stands for election"), lambda e: e["kind"] == "role" and e["node"][0] == group
          and e["role"] == "CANDIDATE")
    first(_("the new master is MASTER"), lambda e: e["kind"] == "role" and e["node"][0] == group
          and e["role"] == "MASTER")
    first(_("it registers with the name server as brokerId 0"), lambda e: e["kind"] == "broker_registered"
          and e["broker_name"] == name and e["broker_id"] == 0)
    first(_("the producer reads the new route (its periodic refresh)"),
          lambda e: e["kind"] == "client_route" and e["node"] == "p0" and e["topic"] == TOPIC)
    first(_("the producer's first send stored by {broker} again").format(broker=name),
          lambda e: e["kind"] == "client_send" and e["broker_name"] == name and e["status"] == "SEND_OK")
    return sorted(rows, key=lambda r: r["t"])


def consumer_after_failover(c: Cluster, fault_ms: int, group: str = "a") -> dict[str, Any]:
    """What the group lived through on ``broker-<group>``'s queues: pulls that waited their timeout, pulls the new
    master refused (it did not know the group yet), the heartbeat that told it, the first message consumed again."""
    name = f"broker-{group}"
    ev = [e for e in c.events if e["t"] >= fault_ms]
    refused = [x for k in c.meta["consumers"] if c.node(k) is not None
               for x in c.node(k).events if x[0] == "pull_error" and "group info not exist" in x[1]]
    timeouts = [x for k in c.meta["consumers"] if c.node(k) is not None
                for x in c.node(k).events if x[0] == "pull_error" and "timeout" in x[1] and name in x[1]]
    new_master = cf.master_of(c, group)
    known = next((e for e in ev if e["kind"] == "consumer_group" and e["node"] == new_master), None)
    consumed = next((e for e in ev if e["kind"] == "client_consume" and e["broker_name"] == name), None)
    return {"pulls that waited their 30 s timeout": len(timeouts),
            "pulls the new master refused (group unknown)": len(refused),
            "the new master learns the group (a heartbeat)": None if known is None else _after(known, fault_ms),
            f"first message of {name} consumed again": None if consumed is None else _after(consumed, fault_ms)}


def duplicates_table(c: Cluster) -> list[dict[str, Any]]:
    """Each message the group consumed twice: who consumed it when, and why (:func:`cf.explain_duplicates`)."""
    reasons = cf.explain_duplicates(c.events)
    rows = []
    for key, seen in cf.duplicates(c.events).items():
        a, b = seen[0], seen[1]
        rows.append({"queue": f"{a['broker_name']}:{a['queue_id']}", "queue offset": a["queue_offset"],
                     "first": f"{a['node']} at {a['t']}", "again": f"{b['node']} at {b['t']}", "why": reasons[key],
                     "uniq key": key})
    return sorted(rows, key=lambda r: (r["queue"], r["queue offset"]))


def owners(c: Cluster, queue: str) -> list[dict[str, Any]]:
    """Who owned ``queue`` (``broker-a:0``) when, from the members' ``client_rebalance`` events."""
    name, _, qid = queue.rpartition(":")
    spans = cf.ownership(c.events)
    rows = [{"member": node, "from": start, "until": None if end == float("inf") else int(end)}
            for (node, b, q), periods in spans.items() if (b, q) == (name, int(qid)) for start, end in periods]
    return sorted(rows, key=lambda r: r["from"])


def commits_at_crash(c: Cluster, node: str, fault_ms: int) -> list[dict[str, Any]]:
    """For each queue ``node`` owned when it crashed: the next offset it would have consumed, and the offset its
    group had committed to the broker by then; the messages between are the ones another member consumes again."""
    consumed: dict[tuple[str, int], int] = {}
    for e in cf.consumptions(c.events):
        if e["node"] == node and e["t"] <= fault_ms:
            key = (e["broker_name"], e["queue_id"])
            consumed[key] = max(consumed.get(key, -1), e["queue_offset"] + 1)
    committed = cf.committed_at(c.events, fault_ms)
    again = Counter((d[1]["broker_name"], d[1]["queue_id"]) for d in cf.duplicates(c.events).values())
    return [{"queue": f"{b}:{q}", "consumed up to": consumed[(b, q)], "committed": committed.get((b, q), 0),
             "consumed again": again.get((b, q), 0)} for b, q in sorted(consumed)]


def long_polling(c: Cluster) -> dict[str, Any]:
    """How the brokers held the consumers' pulls: how many were held, why they were woken, how long they waited."""
    held = [e for e in c.events if e["kind"] == "pull_held"]
    woken = [e for e in c.events if e["kind"] == "pull_woken" and not e["topic"].startswith("%")]
    found = [e["held_ms"] for e in woken if e["status"] == "FOUND"]
    empty = [e["held_ms"] for e in woken if e["status"] != "FOUND"]
    return {"pulls held": len(held), "woken by a message": len(found), "woken empty (time up)": len(empty),
            "median wait for a message (ms)": statistics.median(found) if found else None,
            "longest empty wait (ms)": max(empty) if empty else None}


def retry_run(seed: int = 1, key: str = "p0-3", max_reconsume_times: int = 2, run_ms: int = 60_000) -> Cluster:
    """A fresh cluster whose consumers' listener answers RECONSUME_LATER for the message with KEYS ``key`` every
    time (the others succeed), with ``maxReconsumeTimes`` ``max_reconsume_times``; run ``run_ms``."""
    c = Cluster.applications(seed=seed, messages=20, latency="uniform:1:3", reject_keys=(key,),
                             max_reconsume_times=max_reconsume_times)
    c.run_for(run_ms)
    return c


def delay_levels(levels: int = 6) -> dict[int, int]:
    """``messageDelayLevel``'s first levels (ms), RocketMQ's default: a retry waits level 3 + reconsume times."""
    table = parse_delay_level(DEFAULT_MESSAGE_DELAY_LEVEL)
    return {level: table[level] for level in range(1, levels + 1)}


def retry_journey(c: Cluster) -> list[dict[str, Any]]:
    """Every event of the message the listener refused: consumed, sent back, scheduled, delivered, dead-lettered."""
    refused = next((e["uniq_key"] for e in c.events if e["kind"] == "client_consume"
                    and e["status"] != "CONSUME_SUCCESS"), None)
    kinds = ("client_consume", "client_send_back", "send_back", "schedule", "schedule_deliver", "dlq")
    first = next((e["t"] for e in c.events if e.get("uniq_key") == refused), 0)
    return [{"t": e["t"], "+ms": e["t"] - first, "node": e["node"], "event": e["kind"],
             "topic": e.get("topic", ""), "status": e.get("status", e.get("ok", "")),
             "reconsume times": e.get("reconsume_times", ""), "delay level": e.get("delay_level", "")}
            for e in c.events if e["kind"] in kinds and e.get("uniq_key") == refused]


def at_least_once(seed: int = 1) -> list[dict[str, Any]]:
    """The three faults, each on a fresh cluster: what was acknowledged, lost, consumed twice, and why."""
    rows = []
    for fault in cf.FAULTS:
        c = cf.build(seed)
        try:
            info = cf.run_fault(c, fault, seed)
            s = cf.client_summary(c.events, info["fault_ms"])
            rows.append({"fault": f"{fault} ({info['target']})", "acknowledged": s["acked"],
                         "lost": s["lost_acked"], "consumed": s["consumed"], "consumed twice": s["duplicates"],
                         "not committed at the fault": s["uncommitted_at_fault"],
                         "why": ", ".join(f"{k} {v}" for k, v in s["duplicate_reasons"].items()) or "-"})
        finally:
            c.close()
    return rows


# ---------------------------------------------------------------------- the lab's printed lines
def sends_line(c: Cluster) -> str:
    """The producer's sends before the crash (:func:`send_outcomes`), on one line."""
    return _("sends before the crash: {outcomes}").format(outcomes=send_outcomes(c))


def crash_line(master: str, crash_ms: int, now_ms: int) -> str:
    """Which master crashed when, and how far the run went on."""
    return _("crashed {master} at t={crash_ms} ms; the run goes on to t={now_ms} ms").format(
        master=master, crash_ms=crash_ms, now_ms=now_ms)


def duplicates_line(dups: list[dict[str, Any]]) -> str:
    """How many messages the group consumed twice (:func:`duplicates_table`), counted by why."""
    return _("messages consumed twice: {n}; why: {why}").format(n=len(dups), why=dict(Counter(d["why"] for d in dups)))


def first_duplicate_owners(c: Cluster, dups: list[dict[str, Any]]) -> Any:
    """Who owned the queue of the first duplicate when (:func:`owners`, a pandas DataFrame), or a line saying
    that this seed consumed nothing twice."""
    import pandas as pd  # lazy: 0.3 s to import, and only this table needs it

    return pd.DataFrame(owners(c, dups[0]["queue"])) if dups else _("no duplicates with this seed")
