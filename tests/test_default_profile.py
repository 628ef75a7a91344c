"""Every way to build a DLedger member defaults to ``dledger-0.3.1.2``: what RocketMQ 4.9.5-5.3.x ship."""

from __future__ import annotations

import pytest

from rocketlab.broker.dledger_broker import DLedgerBrokerConfig
from rocketlab.broker.node import dledger_broker_config_from_properties
from rocketlab.core import NodeContext
from rocketlab.dledger.config import DEFAULT_PROFILE, DLedgerConfig
from rocketlab.dledger.node import dledger_config_from_properties
from rocketlab.errors import ConfigError
from rocketlab.net.node import node_spec
from rocketlab.sim import Cluster

PEERS = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"


def test_the_default_profile_is_the_shipped_dledger():
    assert DEFAULT_PROFILE == "dledger-0.3.1.2" == DLedgerConfig().profile


def test_simulated_groups_default_to_it():
    with Cluster.dledger(nodes=3, seed=1, memory=True) as c:
        assert {c.node(n).config.profile for n in c.node_ids} == {DEFAULT_PROFILE}
        assert c.describe()["profile"] == DEFAULT_PROFILE
    with Cluster.dledger_brokers(nodes=3, seed=1) as b:
        assert {b.node(n).server.config.profile for n in b.node_ids} == {DEFAULT_PROFILE}
        assert b.describe()["profile"] == DEFAULT_PROFILE
    assert DLedgerBrokerConfig().profile == DEFAULT_PROFILE


def test_real_nodes_default_to_it(tmp_path):
    props = {"nodeKind": "dledger", "selfId": "n0", "peers": PEERS}
    assert dledger_config_from_properties(props).profile == DEFAULT_PROFILE
    spec = node_spec("dledger", {**props, "storeType": "MEMORY"})
    core = spec.factory(NodeContext("n0", ("n0", "n1", "n2"), 1, tmp_path / "n0"))
    assert core.config.profile == DEFAULT_PROFILE
    broker = {"nodeKind": "broker", "enableDLegerCommitLog": "true", "selfId": "n0", "peers": PEERS}
    assert dledger_broker_config_from_properties(broker).profile == DEFAULT_PROFILE


def test_the_alias_and_the_other_profiles_are_accepted_and_recorded():
    with Cluster.dledger(nodes=3, seed=1, memory=True, profile="rocketmq-4.9.5") as c:
        assert c.describe()["profile"] == "dledger-0.3.1.2"
    props = {"selfId": "n0", "peers": PEERS, "profile": "dledger-0.3.2"}
    assert dledger_config_from_properties(props).profile == "dledger-0.3.2"


@pytest.mark.parametrize("build", [
    lambda: Cluster.dledger(nodes=3, seed=1, memory=True, profile="safe"),
    lambda: dledger_config_from_properties({"selfId": "n0", "peers": PEERS, "profile": "0.3.1.2"}),
])
def test_an_unknown_profile_is_refused_with_the_known_names(build):
    with pytest.raises(ConfigError, match="expected one of dledger-0.3.1.2, dledger-0.3.2, raft"):
        build()
