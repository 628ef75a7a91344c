"""The simulator hosts a name server and the kit's client beside the brokers (rocketlab.sim.applications)."""

from __future__ import annotations

import pytest

from rocketlab.sim.cluster import Cluster
from rocketlab.trace.schema import validate_event


def _run(seed: int, ms: int = 12_000, **kwargs) -> Cluster:
    cluster = Cluster.applications(seed=seed, messages=30, latency="uniform:1:3", **kwargs)
    cluster.run_for(ms)
    return cluster


def test_brokers_register_and_clients_find_them_through_the_name_server() -> None:
    c = _run(1)
    try:
        routes = c.node("ns").route_info_manager.pickup_topic_route_data("TopicTest")
        assert sorted(b.broker_name for b in routes.broker_datas) == ["broker-a", "broker-b", "broker-c"]
        producer = c.node("p0")
        assert len(producer.acked) == 30 and not producer.failed
        owned = [mq for k in ("k0", "k1", "k2") for mq in c.node(k).consumer.owned() if mq.topic == "TopicTest"]
        assert len(owned) == len(set(owned)) == 12  # every queue owned, none twice
        consumed = [u for k in ("k0", "k1", "k2") for u in c.node(k).consumer.consumed]
        assert sorted(consumed) == sorted(producer.acked)
        kinds = {e["kind"] for e in c.events}
        assert {"client_route", "client_send", "client_rebalance", "client_pull", "client_consume", "pull_held",
                "pull_woken", "broker_registered"} <= kinds
        for e in c.events:
            validate_event(e)
        # the clients' frames cross the simulated network
        sent_to = {e["dst"] for e in c.events if e["kind"] == "msg_send" and e["src"] == "p0"}
        assert {"ns", "c0"} <= sent_to and sent_to & {"a0", "a1", "a2"} and sent_to & {"b0", "b1", "b2"}
    finally:
        c.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_seed_same_trace(seed: int) -> None:
    print("seed", seed)
    a, b = _run(seed, 9_000), _run(seed, 9_000)
    try:
        assert a.events == b.events
        assert any(e["kind"] == "client_consume" for e in a.events)
    finally:
        a.close()
        b.close()


def test_a_client_restarted_while_a_broker_holds_its_pull_is_a_new_connection() -> None:
    """A consumer back within the 15 s a broker holds its pulls reuses its request ids (a new process); the
    broker's late answers to the old process go nowhere, as on a closed connection, and the new one is served."""
    c = Cluster.applications(seed=1, messages=0, consumers=3, queues=2, classic_pairs=("a",),
                             dledger_groups=("b", "c"))
    try:
        c.run_for(12_000)
        c.crash("k2")
        c.run_for(2_500)
        c.restart("k2")
        c.run_for(8_000)
        c.crash("a0")
        c.run_for(5_000)
        c.restart("a0")
        c.run_for(60_000)
        assert any(e.get("node") == "k2" and e["kind"] == "client_rebalance" and e["t"] >= 14_500 for e in c.events)
        assert c.now_ms >= 87_500  # the run went on: no answer reached the new process as its own
    finally:
        c.close()
