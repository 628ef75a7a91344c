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
