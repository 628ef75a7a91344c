"""Bad input for a broker on DLedger: clear errors, nothing valid deleted.

* peers lists that disagree between nodes (the group check: ``config_error``, the odd node never joins);
* a ``dLegerSelfId`` without digits;
* a DLedger data directory written for another group;
* a different commit log file size than the existing DLedger files.
"""

from __future__ import annotations

import dataclasses

import pytest

from rocketlab.broker.dledger_broker import DLedgerBrokerConfig, dledger_broker_codec, make_dledger_broker
from rocketlab.core import NodeContext
from rocketlab.errors import ConfigError, StoreError
from rocketlab.sim import Cluster
from rocketlab.sim.systems import _dledger_broker_put

FAST = {"heart_beat_time_interval_ms": 200, "max_vote_interval_ms": 300, "min_vote_interval_ms": 100,
        "vote_round_wait_base_ms": 200, "mapped_file_size_for_entry_index": 4096, "fsync_policy": "never"}
CONFIG = DLedgerBrokerConfig(mapped_file_size_commit_log=64 * 1024, dledger=FAST)


def _files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.name not in ("lock", "abort")}


def test_a_node_whose_peers_disagree_is_reported_and_never_joins(tmp_path):
    """n2 believes the group is {n0, n2}: with n0's vote it could make its own majority. The group check
    reports the disagreement on both sides, n2's DLedger member never starts, n0 and n1 carry on."""

    def factory(ctx: NodeContext):
        if ctx.node_id == "n2":
            ctx = dataclasses.replace(ctx, peers=("n0", "n2"))
        return make_dledger_broker(ctx, CONFIG)

    c = Cluster(["n0", "n1", "n2"], factory, dledger_broker_codec(), seed=1, data_dir=tmp_path,
                latency="uniform:1:3")
    c._put_handler = _dledger_broker_put
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    c.run_for(3000)
    errors = [e for e in c.events if e["kind"] == "config_error"]
    by_node = {e["node"] for e in errors}
    assert {"n0", "n2"} <= by_node
    assert any("n0 has dLegerGroup='broker-a' members [n0,n1,n2] but n2 has" in e["detail"] for e in errors)
    assert not c.node("n2").server_started and c.node("n2").server.role == "CANDIDATE"
    assert c.node("n2").server.term == 0 and c.leader() in ("n0", "n1")
    assert c.put(b"still served").status == "PUT_OK"
    assert c.node("n2").describe()["config_errors"] == 2  # n0 and n1 both told it their view
    c.close()


def test_a_self_id_without_digits_is_refused_before_anything_is_created(tmp_path):
    ctx = NodeContext("node", ("node", "n1"), 1, tmp_path / "x")
    with pytest.raises(ConfigError, match="one letter followed by digits"):
        make_dledger_broker(ctx, CONFIG)
    assert not (tmp_path / "x").exists()


def test_a_dledger_directory_from_another_group_is_refused_and_left_as_it_was(tmp_path):
    c = Cluster.dledger_brokers(3, seed=1, data_dir=tmp_path, dledger=FAST, broker={"broker_name": "RaftNode00"})
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    for i in range(5):
        c.put(f"m{i}".encode())
    c.close()
    store = tmp_path / "nodes" / "n0" / "store"
    before = _files(store)
    other = dataclasses.replace(CONFIG, dleger_group="RaftNode01")
    with pytest.raises(ConfigError, match="belongs to group 'RaftNode00'.*dLegerGroup='RaftNode01'"):
        make_dledger_broker(NodeContext("n0", ("n0", "n1", "n2"), 1, tmp_path / "nodes" / "n0"), other)
    with pytest.raises(ConfigError, match="members 'n0,n1,n2'"):
        make_dledger_broker(NodeContext("n0", ("n0", "n1", "n2", "n3"), 1, tmp_path / "nodes" / "n0"),
                            dataclasses.replace(CONFIG, broker_name="RaftNode00"))
    assert _files(store) == before
    again = make_dledger_broker(NodeContext("n0", ("n0", "n1", "n2"), 1, tmp_path / "nodes" / "n0"),
                                dataclasses.replace(CONFIG, broker_name="RaftNode00"))
    assert again.server.ledger_end_index >= 4  # the right group still opens it
    again.on_stop()


def test_a_different_file_size_than_the_existing_dledger_files_is_a_clear_error(tmp_path):
    c = Cluster.dledger_brokers(1, seed=1, data_dir=tmp_path, dledger=FAST)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    c.put(b"x")
    c.close()
    store = tmp_path / "nodes" / "n0" / "store"
    before = _files(store)
    with pytest.raises(StoreError, match="configured size"):
        make_dledger_broker(NodeContext("n0", ("n0",), 1, tmp_path / "nodes" / "n0"),
                            dataclasses.replace(CONFIG, mapped_file_size_commit_log=128 * 1024))
    assert _files(store) == before
