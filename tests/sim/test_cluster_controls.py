"""The Cluster controls the cluster widget added: one-way link cuts (messages and HA byte streams), a new
network model mid-run, "time out now", leadership transfer, non-blocking puts, and the recipe that
rebuilds a cluster."""

from __future__ import annotations

import pytest

from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.sim import Cluster


def elected(c: Cluster, within_ms: int = 15_000) -> str:
    assert c.run_until(lambda c: c.leader() is not None, within_ms), f"no leader (seed {c.seed})"
    return c.leader()


def test_a_one_way_cut_loses_one_direction_only():
    c = Cluster.dledger(nodes=3, seed=2, memory=True)
    leader = elected(c)
    follower = c.followers()[0]
    c.cut_link(leader, follower)
    c.run_for(5000)
    drops = [e for e in c.events if e["kind"] == "msg_drop"]
    assert drops and {(d["src"], d["dst"], d["reason"]) for d in drops} == {(leader, follower, "link cut")}
    back = [e for e in c.events if e["kind"] == "msg_recv" and e["src"] == follower and e["dst"] == leader
            and e["t"] > drops[0]["t"]]
    assert back, "the other direction still delivers"
    c.heal_link(leader, follower)
    seen = len(c.events)
    c.run_for(5000)
    assert not [e for e in c.events[seen:] if e["kind"] == "msg_drop"]
    faults = [(e["action"], e["targets"]) for e in c.events if e["kind"] == "fault"]
    assert faults == [("cut_link", [leader, follower]), ("heal_link", [leader, follower])]


def test_a_cut_holds_ha_stream_bytes_until_healed():
    c = Cluster.master_slave(role="ASYNC_MASTER", seed=1)
    c.run_for(6000)
    c.put(b"before")
    c.run_for(1000)
    c.cut_link("n0", "n1")
    c.put(b"during")
    c.run_for(3000)
    master_max = c.node("n0").store.get_max_phy_offset()
    assert c.node("n1").store.get_max_phy_offset() < master_max, "nothing crosses the cut direction"
    c.heal()
    c.run_for(6000)
    assert c.node("n1").store.get_max_phy_offset() == master_max


def test_connect_needs_both_directions():
    c = Cluster.master_slave(role="ASYNC_MASTER", seed=1)
    c.run_for(100)
    c.cut_link("n0", "n1")  # the master cannot answer: the restarted slave's connect times out
    c.crash("n1")
    c.restart("n1")
    c.run_for(4000)
    closes = [e for e in c.events if e["kind"] == "stream_close" and e["dst"] == "n1"]
    assert closes and closes[0]["reason"] == "connect timed out"


def test_set_network_switches_the_model_and_rejects_bad_ones():
    c = Cluster.dledger(nodes=3, seed=1, memory=True)
    c.set_network("unreliable", "uniform:2:8")
    assert (c.model.mode, str(c.model.latency), c.model.drop_request) == ("unreliable", "uniform:2:8", 0.1)
    assert c.runtime.model is c.model
    with pytest.raises(ConfigError, match="network 'smoke-signals'"):
        c.set_network("smoke-signals")
    with pytest.raises(ConfigError, match="latency"):
        c.set_network("reliable", "uniform:9:1")


@pytest.mark.parametrize("profile", ["dledger-0.3.1.2", "dledger-0.3.2", "raft"])
def test_time_out_makes_a_follower_a_candidate_at_once(profile):
    c = Cluster.dledger(nodes=3, seed=4, memory=True, profile=profile)
    leader = elected(c)
    c.run_for(500)  # every member has heard the leader
    follower = c.followers()[0]
    assert c.node(follower).role == "FOLLOWER"
    c.time_out(follower)
    roles = [e for e in c.events if e["kind"] == "role" and e["node"] == follower and e["t"] == c.now_ms]
    if profile == "raft":  # Raft's timer firing starts an election: a new term at once
        assert c.node(follower).term > c.node(leader).term or roles
    else:
        assert roles and roles[-1]["role"] == "CANDIDATE"
    with pytest.raises(RocketlabError, match="is the leader"):
        c.time_out(leader)
    c.crash(follower)
    with pytest.raises(RocketlabError, match="it is down"):
        c.time_out(follower)


def test_time_out_and_transfer_need_an_elector():
    c = Cluster.master_slave(seed=1)
    with pytest.raises(RocketlabError, match="no leader election"):
        c.time_out("n1")


def test_transfer_leadership_hands_over():
    c = Cluster.dledger(nodes=3, seed=5, memory=True)
    elected(c)
    c.run_for(500)
    target = c.followers()[0]
    c.transfer_leadership(target)
    c.run_for(2000)
    assert c.leader() == target
    with pytest.raises(RocketlabError, match="already leads"):
        c.transfer_leadership(target)


def test_put_without_waiting_returns_the_pending_answer():
    c = Cluster.dledger(nodes=3, seed=1, memory=True)
    elected(c)
    now = c.now_ms
    future = c.put(b"x", wait=False)
    assert c.now_ms == now and not future.done
    assert c.run_until(lambda c: future.done, 3000)


def test_the_recipe_rebuilds_the_same_run():
    c = Cluster.dledger(nodes=3, seed=9, memory=True, network="unreliable")
    assert c.recipe.code() == "Cluster.dledger(nodes=3, seed=9, memory=True, network='unreliable')"
    twin = c.recipe.build()
    c.run_for(3000)
    twin.run_for(3000)
    assert twin.events == c.events
