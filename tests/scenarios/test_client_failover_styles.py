"""The kit's client hosts every consumer style in the simulator (rocketlab.client.lite_pull_core beside push_core):
under a DLedger master crash, a push, a lite pull subscribing and a lite pull assigned group lose no acknowledged
message, every duplicate is explained from the trace, and the same seed replays the same trace."""

from __future__ import annotations

import pytest

from rocketlab.client.client_core import ClientNodeConfig
from rocketlab.client.producer import MQClientException
from rocketlab.errors import RocketlabError
from rocketlab.scenarios import client_failover as cf
from rocketlab.sim.cluster import Cluster

STYLES = ("push", "lite-pull-subscribe", "lite-pull-assign")
CASES = (("push", 3), ("lite-pull-subscribe", 3), ("lite-pull-subscribe", 4), ("lite-pull-assign", 4))
"""(style, seed): push's own scenario tests run it longer (tests/scenarios/test_client_failover.py)."""
DURATION_MS = 33_000  # the pulls held by the crashed master time out (30 s) and the new master is read


def _run(style: str, seed: int, fault: str = "master-crash", duration_ms: int = DURATION_MS):
    c = cf.build(seed, duration_ms=duration_ms, consumer_style=style)
    try:
        info = cf.run_fault(c, fault, seed, duration_ms)
        return info, list(c.events), {k: c.node(k).consumer for k in ("k0", "k1", "k2") if c.alive(k)}
    finally:
        c.close()


@pytest.fixture(scope="module")
def runs():
    out = {}
    for style, seed in CASES:
        print("style", style, "seed", seed)
        out[(style, seed)] = _run(style, seed)
    return out


@pytest.mark.parametrize(("style", "seed"), CASES)
def test_no_acknowledged_message_is_lost_and_every_duplicate_is_explained(runs, style, seed):
    info, events, _ = runs[(style, seed)]
    acked = cf.acknowledged(events)
    assert len(acked) > 300
    assert {e["broker_name"] for e in acked.values()} == {"broker-a", "broker-b", "broker-c"}
    assert cf.lost_acknowledged(events) == []
    assert "unexplained" not in cf.explain_duplicates(events).values()
    crashed_reads = [e for e in events if e["kind"] == "client_pull" and e["broker_name"] == "broker-a"
                     and e["t"] > info["fault_ms"] and e["status"] == "FOUND"]
    assert crashed_reads  # broker-a is read again, from its new master
    statuses = {e["status"] for e in cf.consumptions(events)}
    assert statuses == ({"CONSUME_SUCCESS"} if style == "push" else {"POLLED"})


@pytest.mark.parametrize("style", STYLES[1:])
def test_a_lite_pull_consumer_pulls_its_batch_and_auto_commits(runs, style):
    _, events, consumers = runs[(style, 4)]
    pulls = [e for e in events if e["kind"] == "msg_send" and e["msg"] == "PullMessageRequest"
             and e["src"].startswith("k")]
    assert pulls
    k0 = consumers["k0"]
    assert k0.lite.config.pull_batch_size == 10 and k0.lite.config.auto_commit_interval_millis == 5_000
    assert k0.subscriptions == ({} if style == "lite-pull-assign" else {"TopicTest": k0.subscriptions["TopicTest"]})
    # autoCommit: what was polled reaches the broker (client_commit) at the persister's pace, never ahead of a poll
    commits = [e for e in events if e["kind"] == "client_commit" and e["node"] == "k0"]
    assert commits
    for e in commits:
        polled = [x for x in cf.consumptions(events) if x["node"] == "k0" and x["t"] <= e["t"]
                  and (x["broker_name"], x["queue_id"]) == (e["broker_name"], e["queue_id"])]
        assert e["offset"] <= max((x["queue_offset"] for x in polled), default=-1) + 1


def test_assigned_queues_do_not_move_when_a_member_leaves():
    """assign has no rebalance: the queues of a member that crashes stay its own, unread, while subscribe's group
    takes them over (and re-reads what it had not committed: every duplicate redelivered)."""
    print("seed", 3)
    _, assigned, _ = _run("lite-pull-assign", 3, "consumer-leaves", 15_000)
    _, subscribed, _ = _run("lite-pull-subscribe", 3, "consumer-leaves", 15_000)
    assert cf.lost_acknowledged(assigned)
    assert {e["node"] for e in assigned if e["kind"] == "client_rebalance"} == {"k0", "k1", "k2"}
    assert len([e for e in assigned if e["kind"] == "client_rebalance"]) == 3
    assert cf.lost_acknowledged(subscribed) == []
    reasons = cf.explain_duplicates(subscribed)
    assert reasons and set(reasons.values()) == {"redelivered"}  # polled by k1, not yet auto-committed
    assert all(seen[0]["node"] == "k1" for seen in cf.duplicates(subscribed).values())


@pytest.mark.parametrize(("style", "seed"), [("lite-pull-subscribe", 5), ("lite-pull-assign", 6)])
def test_same_seed_same_trace(style, seed):
    print("seed", seed)
    first, second = _run(style, seed, duration_ms=10_000)[:2], _run(style, seed, duration_ms=10_000)[:2]
    assert first == second
    assert any(e["kind"] == "client_consume" for e in first[1])


def test_an_unknown_style_is_refused():
    with pytest.raises(RocketlabError, match="consumer_style"):
        Cluster.applications(consumer_style="pull-ish")
    with pytest.raises(MQClientException, match="consumer style"):
        ClientNodeConfig("ns:9876", consumer_style="pull-ish")
