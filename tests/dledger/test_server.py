"""DLedgerServer as a hosted core: factory, common request checks, client requests, leadership transfer,
determinism and the trace contract."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rocketlab.core import NodeContext, Reply
from rocketlab.dledger import DLedgerCodec, DLedgerConfig, DLedgerServer, dledger_factory, make_dledger_server
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.dledger.protocol import (
    AppendEntryRequest,
    DLedgerResponseCode,
    GetEntriesRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    MetadataRequest,
    PushEntryRequest,
    VoteRequest,
    VoteResponse,
)
from rocketlab.dledger.store import DLedgerMemoryStore, DLedgerMmapFileStore
from rocketlab.errors import ConfigError, LocalProtocolError, RemoteProtocolError, RocketlabError
from rocketlab.scenarios.dledger_group import wait_settled
from rocketlab.sim import Cluster
from rocketlab.trace.schema import validate_event

from .helpers import FAST, group, quorum_leader, wait_leader

Code = DLedgerResponseCode


def test_factory_uses_the_context(tmp_path: Path):
    ctx = NodeContext("n1", ("n0", "n1", "n2"), 5, tmp_path / "n1", {"dledger": {"heartBeatTimeIntervalMs": 50}})
    core = make_dledger_server(ctx, {"profile": "rocketmq-4.9.5"})
    assert core.config.self_id == "n1" and core.config.peer_ids == ("n0", "n1", "n2")
    assert core.config.heart_beat_time_interval_ms == 50 and core.config.profile == "dledger-0.3.1.2"
    assert isinstance(core.store, DLedgerMmapFileStore) and (tmp_path / "n1" / "data").is_dir()
    memory = make_dledger_server(NodeContext("n0", ("n0", "n1"), 5))
    assert isinstance(memory.store, DLedgerMemoryStore) and memory.config.store_type == "MEMORY"
    bound = dledger_factory(DLedgerConfig(max_vote_interval_ms=500))(NodeContext("n2", ("n0", "n1", "n2"), 1))
    assert bound.config.max_vote_interval_ms == 500 and bound.node_id == "n2"


def test_factory_rejects_a_member_missing_from_the_configured_peers():
    with pytest.raises(ConfigError, match="self_id"):
        make_dledger_server(NodeContext("n7", ("n7",), 1), {"peers": "n0-a:1;n1-a:2"})
    with pytest.raises(ConfigError, match="FILE"):
        DLedgerServer(DLedgerConfig(), None, random.Random(1))


def started(node: str = "n0") -> DLedgerServer:
    core = make_dledger_server(NodeContext(node, ("n0", "n1", "n2"), 1))
    core.on_start(0)
    return core


def reply_of(out, request_id: int):
    replies = [a.msg for a in out.actions if isinstance(a, Reply) and a.request_id == request_id]
    assert len(replies) == 1
    return replies[0]


def test_common_checks_answer_with_the_right_response_type():
    core = started()
    r = reply_of(core.on_request("x", 1, VoteRequest(group="default", remote_id="n9", term=5), 1), 1)
    assert isinstance(r, VoteResponse) and r.code is Code.UNKNOWN_MEMBER
    r = reply_of(core.on_request("x", 2, PushEntryRequest(group="other", remote_id="n0"), 1), 2)
    assert r.code is Code.UNKNOWN_GROUP
    with pytest.raises(RemoteProtocolError, match="unexpected request"):
        core.on_request("x", 3, HeartBeatResponse(), 1)


def test_misuse_is_a_local_protocol_error():
    core = started()
    with pytest.raises(LocalProtocolError, match="unknown request id"):
        core.on_reply("n1", 12345, None, 1)
    core.on_stop()
    assert core.next_deadline_ms() is None
    with pytest.raises(LocalProtocolError):
        core.on_tick(5)


def only(answers: list):
    assert len(answers) == 1, answers
    return answers[0]


def test_client_requests_on_a_cluster():
    c = group(seed=31)
    leader = wait_settled(c)
    follower = next(i for i in c.node_ids if i != leader)
    appended = c.request(leader, AppendEntryRequest(group="default", remote_id=leader, body=b"remote"))
    assert not appended  # answered once a quorum has it
    c.run_for(100)
    assert c.node(leader).committed_index == 0
    got = only(c.request(leader, GetEntriesRequest(group="default", remote_id=leader, begin_index=0)))
    assert got.entries[0].body == b"remote"
    not_leader = only(c.request(follower, GetEntriesRequest(group="default", remote_id=follower, begin_index=0)))
    assert not_leader.code is Code.NOT_LEADER and not_leader.leader_id == leader
    meta = only(c.request(leader, MetadataRequest(group="default", remote_id=leader)))
    assert meta.leader_id == leader and sorted(meta.peers) == c.node_ids


def test_remote_append_is_answered_when_committed():
    c = group(seed=32)
    leader = wait_settled(c)
    answers = c.request(leader, AppendEntryRequest(group="default", remote_id=leader, body=b"r"))
    c.run_for(100)
    assert len(answers) == 1 and answers[0].code is Code.SUCCESS and answers[0].index == 0


def test_leadership_transfer_moves_the_leader_to_a_new_term():
    c = group(seed=33)
    leader = wait_settled(c)
    target = next(i for i in c.node_ids if i != leader)
    term = c.node(leader).term
    c.put(b"before", wait=False, via=leader)
    c.run_for(200)
    c.transfer_leadership(target)
    assert c.node(leader).member_state.transferee == target
    assert c.put(b"while transferring", wait=False, via=leader).code is Code.LEADER_TRANSFERRING
    assert c.run_until(lambda c: quorum_leader(c) == target, 3000)
    assert c.node(target).term == term + 1


def test_leadership_transfer_refusals():
    c = group(seed=34, max_leadership_transfer_wait_index=0)
    leader = wait_settled(c)
    follower = next(i for i in c.node_ids if i != leader)
    term = c.node(leader).term

    def transfer(to: str, **fields):
        req = LeadershipTransferRequest(**({"group": "default", "remote_id": to, "term": term} | fields))
        return only(c.request(to, req, client="admin")).code

    assert transfer(leader, transfer_id=leader, transferee_id="n9") is Code.UNKNOWN_MEMBER
    assert transfer(leader, transfer_id=leader, transferee_id=follower, term=term + 1) is Code.INCONSISTENT_TERM
    assert transfer(leader, transfer_id=leader, transferee_id=follower) is Code.FALL_BEHIND_TOO_MUCH
    assert transfer(follower, transfer_id=follower, transferee_id=leader) is Code.NOT_LEADER
    assert transfer(follower, transfer_id="n9", transferee_id=follower) is Code.INCONSISTENT_LEADER
    assert transfer(follower, transfer_id="a", transferee_id="b") is Code.UNEXPECTED_ARGUMENT


def test_role_change_handlers_are_called():
    c = group(3, seed=35)

    class Handler:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def handle(self, term: int, role) -> None:
            self.seen.append(role.name)

    handlers = {i: Handler() for i in c.node_ids}
    for i, handler in handlers.items():
        c.node(i).add_role_change_handler(handler)
    calls: list[tuple[int, str]] = []
    c.node("n0").add_role_change_handler(lambda term, role: calls.append((term, role.name)))
    leader = wait_settled(c)
    assert calls and calls[-1][1] == ("LEADER" if leader == "n0" else "FOLLOWER")
    assert handlers[leader].seen[-1] == "LEADER"
    assert all(hd.seen and hd.seen[-1] == "FOLLOWER" for i, hd in handlers.items() if i != leader)


def run_once(seed: int) -> list[dict]:
    c = group(seed=seed, delay_ms=(1, 20))
    wait_leader(c)
    for i in range(5):
        c.put(b"d%d" % i, wait=False, via=quorum_leader(c) or "n0")
        c.run_for(7)
    c.crash(quorum_leader(c) or "n0")
    c.run_for(2000)
    return c.events


def test_same_seed_same_trace_event_for_event():
    assert run_once(41) == run_once(41)
    assert run_once(41) != run_once(42)


def test_every_event_follows_the_trace_contract(tmp_path: Path):
    c = group(seed=43, data_dir=tmp_path)
    leader = wait_settled(c)
    for i in range(5):
        c.put(b"t%d" % i, wait=False, via=leader)
    c.run_for(200)
    c.crash(leader)
    c.run_for(1500)
    c.restart(leader)
    c.run_for(1500)
    kinds = {e["kind"] for e in c.events}
    assert {"role", "term", "vote_request", "vote_response", "vote_round", "heartbeat", "append", "commit"} <= kinds
    for event in c.events:
        validate_event(event)


def test_snapshot_and_clean_shutdown(tmp_path: Path):
    c = group(1, seed=44, data_dir=tmp_path)
    assert c.run_until(lambda c: c.node("n0").role == "LEADER", 1000)
    c.put(b"kept", wait=False, via="n0")
    c.run_for(50)
    snap = c.node("n0").snapshot()
    assert snap["role"] == "LEADER" and snap["committed_index"] == 0 and snap["node"] == "n0"
    c.node("n0").shutdown()
    assert "committedIndex=0" in (tmp_path / "nodes" / "n0" / "checkpoint").read_text()


def test_a_core_that_raised_refuses_further_input(monkeypatch):
    core = started()

    def broken(now_ms: int) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(core.store, "on_tick", broken)
    with pytest.raises(OSError):
        core.on_tick(10)
    with pytest.raises(LocalProtocolError, match="failed earlier"):
        core.on_request("x", 1, VoteRequest(group="default", remote_id="n0"), 11)


def test_hosted_by_the_simulator_with_the_invariant_checker(tmp_path: Path):
    """The generic rocketlab.sim Cluster hosts the cores through the factory and the codec."""
    checker = DLedgerChecker(lambda c: {n: c.node(n) for n in c.live_nodes()})
    c = Cluster(["n0", "n1", "n2"], dledger_factory(FAST), DLedgerCodec(), seed=3, network="unreliable",
                data_dir=tmp_path, checkers=[checker])
    c.run_until(lambda c: c.leader() is not None, 10_000)
    leader = c.leader()
    futures = []
    for i in range(5):
        c.runtime.call(leader, lambda core, now, i=i: futures.append(core.append(b"v%d" % i, now)) or futures[-1][1])
    c.run_for(2000)
    assert [f.code for f, _out in futures] == [Code.SUCCESS] * 5
    c.crash(leader)
    c.run_for(2000)
    c.restart(leader)
    c.run_for(2000)
    committed = {c.node(n).committed_index for n in c.live_nodes()}
    assert len(committed) == 1 and min(committed) >= 4 and not c.violations


def test_the_simulators_hooks_for_a_test_refuse_misuse_and_trace_what_they_drop():
    """Cluster.request, force_role and drop_if (the hooks these tests drive members with)."""
    c = group(seed=45)
    leader = wait_settled(c)
    with pytest.raises(LocalProtocolError, match="named like node"):
        c.request(leader, MetadataRequest(group="default", remote_id=leader), client="n1")
    c.crash("n2")
    with pytest.raises(LocalProtocolError, match="down"):
        c.request("n2", MetadataRequest(group="default", remote_id="n2"))
    assert not c.runtime.client_replies
    with pytest.raises(RocketlabError, match="FOLLOWER with its leader"):
        c.force_role(leader, "FOLLOWER")
    asked: list[str] = []
    c.drop_if(lambda src, dst, msg: asked.append(dst) or dst == "n1")
    c.run_for(300)
    drops = {(e["dst"], e["reason"]) for e in c.events_of("msg_drop") if e["t"] > c.now_ms - 300}
    assert drops == {("n1", "fault: drop"), ("n2", "peer down")} and "n2" not in asked  # only what would leave
    c.drop_if(None)
    c.run_for(300)
    assert not [e for e in c.events_of("msg_drop") if e["t"] > c.now_ms - 200 and e["reason"] == "fault: drop"]
