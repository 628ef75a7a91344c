"""Lab 08's scenarios (rocketlab.scenarios.client_failover): what an application lives through when a master
crashes or a consumer leaves, read from the trace; and the same seed replays the same run."""

from __future__ import annotations

import pytest

from rocketlab.errors import ConfigError
from rocketlab.scenarios import ScenarioArgs, get_scenario
from rocketlab.scenarios import client_failover as cf

SEED = 3  # a seed whose master crash shows a rebalance that hands a queue to two members (not every seed does)


@pytest.fixture(scope="module")
def runs():
    print("seed", SEED)
    done = {name: get_scenario(name).run(ScenarioArgs(seed=SEED))
            for name in ("client-master-crash", "client-classic-crash", "client-consumer-leaves")}
    yield done
    for r in done.values():
        r.cluster.close()


@pytest.mark.parametrize("name", ["client-master-crash", "client-classic-crash", "client-consumer-leaves"])
def test_no_acknowledged_message_is_lost(runs, name):
    r = runs[name]
    events = r.cluster.events
    assert r.ok and r.summary["acked"] > 600
    assert cf.lost_acknowledged(events) == []
    # every message the producer was told SEND_OK for reached the group, whichever broker took it
    consumed = {e["uniq_key"] for e in cf.consumptions(events)}
    assert set(cf.acknowledged(events)) <= consumed
    assert set(r.summary["by_broker"]) == {"broker-a", "broker-b", "broker-c"}


def test_a_crashed_master_makes_sends_fail_over_to_another_broker(runs):
    r = runs["client-master-crash"]
    events, fault_ms = r.cluster.events, r.summary["fault_ms"]
    failed = [e for e in events if e["kind"] == "client_send" and e["status"] != "SEND_OK" and e["t"] >= fault_ms]
    assert failed and {e["broker_name"] for e in failed} == {"broker-a"}
    for e in failed:  # the retry of the same message went to another broker and was stored there
        retry = next(x for x in events if x["kind"] == "client_send" and x["uniq_key"] == e["uniq_key"]
                     and x["attempt"] == e["attempt"] + 1)
        assert retry["broker_name"] != "broker-a" and retry["status"] == "SEND_OK"
    new_master = cf.master_of(r.cluster, "a")
    assert new_master not in (None, r.summary["target"])
    routes = [e for e in events if e["kind"] == "client_route" and e["node"] == "p0" and e["t"] > fault_ms]
    assert routes and f"broker-a@{new_master}:10911" in routes[-1]["targets"]
    assert any(e["kind"] == "client_send" and e["broker_name"] == "broker-a" and e["status"] == "SEND_OK"
               and e["t"] > routes[-1]["t"] for e in events)  # broker-a takes sends again, at its new master


def test_every_duplicate_after_a_consumer_leaves_was_consumed_but_not_committed_at_the_crash(runs):
    r = runs["client-consumer-leaves"]
    events, fault_ms = r.cluster.events, r.summary["fault_ms"]
    dups = cf.duplicates(events)
    assert dups, "k1's last pulled batch is consumed again by the member that takes its queue"
    assert sorted(dups) == cf.uncommitted_at_fault(events, fault_ms)
    assert all(seen[0]["node"] == "k1" and seen[1]["node"] != "k1" for seen in dups.values())
    assert set(cf.explain_duplicates(events).values()) == {"redelivered"}
    owners = cf.ownership(events)
    after = {(b, q) for (node, b, q), spans in owners.items()
             if node != "k1" and any(s[1] == float("inf") for s in spans)}
    assert len(after) == 12  # the two left own all twelve queues


def test_every_duplicate_of_a_master_crash_is_explained(runs):
    """The claim "consumed but not committed at the crash" does not cover a DLedger master's crash: the new master
    knows the group only from each member's next heartbeat (every 30 s), so the first rebalance it answers sees
    part of the group and two members own a queue at once. Each duplicate is one of those (or redelivered)."""
    r = runs["client-master-crash"]
    events = r.cluster.events
    reasons = cf.explain_duplicates(events)
    assert reasons and set(reasons.values()) == {"owned twice"}  # seed 3
    assert cf.uncommitted_at_fault(events, r.summary["fault_ms"]) == []
    owners = cf.ownership(events)
    first = next(iter(cf.duplicates(events).values()))
    spans = [s for node in ("k0", "k1", "k2") for s in owners.get((node, first[0]["broker_name"], first[0]["queue_id"]), [])]
    assert any(a[0] < b[1] and b[0] < a[1] for a in spans for b in spans if a is not b)


def test_classic_crash_reads_the_slave_and_loses_nothing_once_the_master_restarts(runs):
    r = runs["client-classic-crash"]
    events, fault_ms = r.cluster.events, r.summary["fault_ms"]
    assert cf.duplicates(events) == {}
    from_slave = [e for e in events if e["kind"] == "msg_send" and e["src"][0] == "k" and e["dst"] == "c1"
                  and e["msg"] == "PullMessageRequest" and fault_ms < e["t"] < fault_ms + cf.RESTART_AFTER_MS]
    assert from_slave  # while c0 is down its queues are read from c1


@pytest.mark.parametrize(("fault", "seed"), [("master-crash", 3), ("classic-crash", 4), ("consumer-leaves", 5)])
def test_same_seed_same_run(fault, seed):
    """Lab 08's scenarios replay by seed: the same seed gives the same trace, event for event."""
    print("seed", seed)
    traces = []
    for _ in range(2):
        c = cf.build(seed, duration_ms=15_000)
        try:
            info = cf.run_fault(c, fault, seed, 15_000)
            traces.append((info, c.events))
        finally:
            c.close()
    assert traces[0] == traces[1]
    assert any(e["kind"] == "client_consume" for e in traces[0][1])


def test_a_layout_is_fixed_and_a_fault_must_be_known():
    with pytest.raises(ConfigError, match="fixed layout"):
        get_scenario("client-master-crash").run(ScenarioArgs(nodes=3))
    c = cf.build(1, duration_ms=1_000)
    try:
        with pytest.raises(ConfigError, match="not one of"):
            cf.run_fault(c, "meteor", 1)
    finally:
        c.close()
