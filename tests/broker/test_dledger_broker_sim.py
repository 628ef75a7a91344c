"""A RocketMQ broker group on DLedger in the simulator: election, puts, committed-only reads, failover,
recovery, identical consume queues. The DLedger invariants run after every event (Cluster.dledger_brokers).

Reference: the digest's section 6 (DLedgerCommitLog, DLedgerRoleChangeHandler); RocketMQ's
DLedgerCommitlogTest (testPutAndGetMessage, testBatchPutAndGetMessage, testCommittedPos, testRecover).
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from rocketlab.broker.protocol import PullMessageRequest, SendMessageRequest
from rocketlab.dledger.config import DEFAULT_PROFILE
from rocketlab.sim import Cluster
from rocketlab.store import Message

FAST = {"heart_beat_time_interval_ms": 200, "max_vote_interval_ms": 300, "min_vote_interval_ms": 100,
        "vote_round_wait_base_ms": 200, "max_wait_ack_time_ms": 1000, "dispatcher_error_backoff_ms": 50}


def _group(tmp_path, seed=1, profile=DEFAULT_PROFILE, **kwargs):
    c = Cluster.dledger_brokers(3, seed=seed, profile=profile, data_dir=tmp_path, dledger=FAST,
                                latency="uniform:1:3", **kwargs)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000), f"no master (seed {seed})"
    return c


def _bodies(c, topic="TopicTest", queue_id=0):
    got, offset = [], 0
    while True:
        r = c.pull(topic, queue_id, offset, 32)
        if r.status != "FOUND":
            return got
        got += [m["body"] for m in r.messages]
        offset = r.next_begin_offset


def _cq_files(root: Path, node: str) -> Path:
    return root / "nodes" / node / "store" / "consumequeue" / "TopicTest" / "0"


def test_the_dledger_leader_becomes_sync_master_and_the_others_slaves_with_ids_from_self_id(tmp_path):
    c = _group(tmp_path)
    master = c.leader()
    assert c.node(master).server.role == "LEADER" and c.node(master).broker_role == "SYNC_MASTER"
    assert c.run_until(lambda c: all(c.node(n).master_id for n in c.followers()), timeout_ms=2000)
    for n in c.followers():
        core = c.node(n)
        assert core.broker_role == "SLAVE" and core.broker_id == int(n[1:]) + 1 and core.master_id == master
    roles = {(e["node"], e["role"]) for e in c.events if e["kind"] == "role"}
    assert (master, "LEADER") in roles and (master, "MASTER") in roles
    c.close()


def test_puts_are_acknowledged_by_a_majority_and_readable_with_offsets_pos_plus_48(tmp_path):
    """DLedgerCommitlogTest.testPutAndGetMessage: queue offsets 0.., phy offset = entry pos + 48."""
    c = _group(tmp_path)
    handles = [c.put(f"body-{i}".encode() * 5) for i in range(10)]
    assert [h.status for h in handles] == ["PUT_OK"] * 10
    assert [h.queue_offset for h in handles] == list(range(10))
    server = c.node(c.leader()).server
    positions = [e.pos for e in server.entries() if not e.is_noop]
    assert [h.wrote_offset for h in handles] == [p + 48 for p in positions]
    assert _bodies(c) == [f"body-{i}".encode() * 5 for i in range(10)]
    assert all(e["status"] == "PUT_OK" for e in c.events if e["kind"] == "put")
    c.close()


@pytest.mark.parametrize("version,status", [("4.9.5", "OS_PAGE_CACHE_BUSY"),  # 4.9.5's OS_PAGECACHE_BUSY
                                            ("5.3.3", "IN_SYNC_REPLICAS_NOT_ENOUGH")])
def test_only_committed_bytes_are_readable_and_dispatched(tmp_path, version, status):
    """testCommittedPos: a leader cut off from its followers appends but never commits; nothing of it
    is readable, the put ends with what ``asyncPutMessage`` of that release makes of
    WAIT_QUORUM_ACK_TIMEOUT (300 ms here: before the leader steps down)."""
    c = Cluster.dledger_brokers(3, seed=1, data_dir=tmp_path, dledger={**FAST, "max_wait_ack_time_ms": 300},
                                latency="uniform:1:3", broker={"rocketmq_version": version})
    c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert c.put(b"first").status == "PUT_OK"
    master = c.leader()
    core = c.node(master)
    committed = core.server.committed_pos
    c.partition([master], [n for n in c.node_ids if n != master])
    late = c.put(b"never committed")
    assert late.status == status and late.wrote_offset >= committed
    assert core.server.ledger_end_index > core.server.committed_index
    assert core.store.get_max_phy_offset() == core.server.committed_pos == committed
    assert core.commit_log.get_data(committed) is None
    assert core.store.get_max_offset_in_queue("TopicTest", 0) == 1
    c.close()


def test_a_slave_refuses_puts_and_reads_without_slave_read_enable(tmp_path):
    c = _group(tmp_path)
    slave = c.followers()[0]
    handle, _ = c.node(slave).put_message(Message(topic="T", body=b"x"), c.now_ms)
    assert handle.status == "SERVICE_NOT_AVAILABLE"
    assert c.node(slave).pull_message(PullMessageRequest("T", 0, 0)).status == "PULL_RETRY_IMMEDIATELY"
    c.close()


def test_a_deposed_leader_answers_its_pending_put_unknown_error_after_the_put_timeout(tmp_path):
    """0.3.x keeps a deposed leader's futures pending; waitForPutResult bounds the wait (10 s)."""
    c = _group(tmp_path)
    master = c.leader()
    c.partition([master], [n for n in c.node_ids if n != master])
    late = c.put(b"stuck")
    assert late.status == "UNKNOWN_ERROR" and late.latency_ms == 10_000
    assert c.node(master).server.role != "LEADER"
    c.close()


def test_a_follower_commit_log_answers_os_page_cache_busy_when_dledger_refuses(tmp_path):
    """asyncPutMessage: a future with pos -1 (here NOT_LEADER) is OS_PAGE_CACHE_BUSY at once."""
    c = _group(tmp_path)
    follower = c.node(c.followers()[0])
    answers = []
    follower.commit_log.async_put(Message(topic="T", body=b"x"), c.now_ms, lambda r, out: answers.append(r))
    assert answers[0].status.name == "OS_PAGE_CACHE_BUSY" and "NOT_LEADER" in answers[0].detail
    c.close()


def test_master_crash_fails_over_and_every_acknowledged_message_survives(tmp_path):
    c = _group(tmp_path)
    acked = [f"m{i}".encode() for i in range(30) if c.put(f"m{i}".encode()).status == "PUT_OK"]
    old = c.leader()
    c.crash(old)
    assert c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=10_000)
    new = c.leader()
    assert c.node(new).server.term > 0 and c.node(new).broker_id == 0
    assert _bodies(c) == acked
    after = c.put(b"after failover")
    assert after.status == "PUT_OK" and after.queue_offset == len(acked)
    c.restart(old)
    assert c.run_until(lambda c: c.node(old).server.committed_index == c.node(new).server.committed_index
                       and c.node(old).store.dispatch_behind_bytes() == 0, timeout_ms=10_000)
    assert c.node(old).broker_role == "SLAVE" and c.node(old).master_id == new
    c.close()


def test_consume_queues_are_byte_identical_on_every_replica(tmp_path):
    c = _group(tmp_path)
    for i in range(40):
        c.put(b"x" * (50 + i * 37), topic="TopicTest")
    c.crash(c.leader())
    c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    for i in range(20):
        c.put(b"y" * (30 + i))
    c.run_for(1000)
    a, b = c.live_nodes()
    ends = {n: c.node(n).store.get_max_offset_in_queue("TopicTest", 0) for n in (a, b)}
    assert set(ends.values()) == {60}
    c.close()
    names = sorted(p.name for p in _cq_files(tmp_path, a).iterdir())
    match, mismatch, errors = filecmp.cmpfiles(_cq_files(tmp_path, a), _cq_files(tmp_path, b), names, shallow=False)
    assert names and not mismatch and not errors


def test_a_batch_is_one_entry_per_message_with_consecutive_queue_offsets(tmp_path):
    """testBatchPutAndGetMessage."""
    c = _group(tmp_path)
    c.put(b"single")
    master = c.node(c.leader())
    batch = [Message(topic="TopicTest", body=f"b{i}".encode() * 20, queue_id=0) for i in range(5)]
    handles = []

    def put(core, now):
        handle, out = core.put_message(batch[0], now, batch=batch)
        handles.append(handle)
        return out

    c.runtime.call(c.leader(), put)
    c.run_until(lambda c: handles[0].done, timeout_ms=3000)
    h = handles[0]
    assert h.status == "PUT_OK" and h.queue_offset == 1 and h.result.append_message_result.msg_num == 5
    assert len(h.msg_id.split(",")) == 5
    entries = [e for e in master.server.entries() if not e.is_noop]
    assert len(entries) == 6
    assert _bodies(c)[1:] == [m.body for m in batch]
    c.close()


def test_send_message_requests_are_answered_with_the_put_result(tmp_path):
    """A group of one commits inside the input, so the reply is in the request's own Output."""
    c = Cluster.dledger_brokers(1, seed=1, data_dir=tmp_path)
    assert c.run_until(lambda c: c.leader() == "n0", timeout_ms=5000)
    out = c.node("n0").on_request("client", 9, SendMessageRequest("T", b"hi", 0, tags="A"), c.now_ms)
    replies = [(a.to, a.request_id, a.msg) for a in out.actions if type(a).__name__ == "Reply"]
    assert len(replies) == 1 and replies[0][:2] == ("client", 9)
    response = replies[0][2]
    assert response.status == "PUT_OK" and response.queue_offset == 0 and response.phy_offset == 48
    assert [e.fields["status"] for e in out.trace if e.kind == "put"] == ["PUT_OK"]
    c.close()


@pytest.mark.parametrize("crash", ["clean", "kill"])
def test_restart_of_the_whole_group_recovers_every_message_and_continues_queue_offsets(tmp_path, crash):
    """testRecover / testDLedgerAbnormallyRecover."""
    c = _group(tmp_path)
    for i in range(25):
        assert c.put(f"r{i}".encode() * 30).status == "PUT_OK"
    c.run_for(500)
    nodes = c.node_ids
    if crash == "clean":
        for n in nodes:
            c.runtime.stop(n)
        c.restart(*nodes)
    else:
        c.crash(*nodes)
        c.restart(*nodes)
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    assert _bodies(c) == [f"r{i}".encode() * 30 for i in range(25)]
    assert c.put(b"next").queue_offset == 25
    c.close()


def test_power_loss_of_a_follower_loses_nothing_acknowledged(tmp_path):
    c = _group(tmp_path)
    for i in range(20):
        c.put(f"p{i}".encode())
    victim = c.followers()[0]
    c.crash(victim, lose_unflushed=True)
    c.restart(victim)
    c.run_for(3000)
    for i in range(5):
        c.put(f"q{i}".encode())
    # the follower lost its unflushed tail; 0.3.x finds out when a later push leaves a gap (about 1 s)
    assert c.run_until(lambda c: c.node(victim).store.get_max_offset_in_queue("TopicTest", 0) == 25,
                       timeout_ms=5000)
    c.close()


def test_rocketmq_4_9_5_profile_also_fails_over_without_a_noop(tmp_path):
    """0.3.1.2 commits the old leader's entries by counting replicas: the wait still ends."""
    c = _group(tmp_path, profile="rocketmq-4.9.5")
    for i in range(10):
        c.put(f"z{i}".encode())
    old = c.leader()
    c.crash(old)
    assert c.run_until(lambda c: c.leader() not in (None, old), timeout_ms=15_000)
    assert not any(e.is_noop for e in c.node(c.leader()).server.entries())
    assert len(_bodies(c)) == 10
    c.close()


def test_same_seed_same_trace(tmp_path):
    traces = []
    for k in range(2):
        c = _group(tmp_path / str(k), seed=5)
        for i in range(5):
            c.put(f"d{i}".encode())
        c.crash(c.leader())
        c.run_for(3000)
        traces.append([{k: v for k, v in e.items()} for e in c.events])
        c.close()
    assert traces[0] == traces[1]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 21))
def test_failover_sweep_no_acknowledged_message_is_lost(tmp_path, seed):
    c = Cluster.dledger_brokers(3, seed=seed, data_dir=tmp_path, dledger=FAST, network="unreliable")
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=20_000), f"seed {seed}"
    acked = []
    for round_ in range(3):
        for i in range(15):
            if c.leader() is None:
                c.run_until(lambda c: c.leader() is not None, timeout_ms=20_000)
            body = f"{round_}-{i}".encode()
            if c.put(body).status == "PUT_OK":
                acked.append(body)
        victim = c.leader()
        c.crash(victim)
        c.run_until(lambda c, v=victim: c.leader() not in (None, v), timeout_ms=20_000)
        c.restart(victim)
    c.heal()
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=20_000), f"seed {seed}"
    got = set(_bodies(c))
    assert set(acked) <= got, f"seed {seed}: lost {set(acked) - got}"
    c.close()


def test_slaves_sync_metadata_from_whoever_is_master(tmp_path):
    """changeToSlave starts SlaveSynchronize against the DLedger leader; after a failover the remaining
    slave syncs from the new master."""
    import json

    from rocketlab.broker.protocol import UpdateConsumerOffsetRequest
    from rocketlab.remoting import fastjson

    c = _group(tmp_path)
    c.put(b"x", topic="Orders")
    c.run_for(3_500)
    for n in c.followers():
        topics = json.loads((tmp_path / "nodes" / n / "store" / "config" / "topics.json").read_text())
        assert "Orders" in topics["topicConfigTable"] and c.node(n).slave_synchronize.syncs >= 1
    c.crash(c.leader())
    assert c.run_until(lambda c: c.leader() is not None, timeout_ms=10_000)
    new = c.leader()
    c.node(new).on_request("client", 3, UpdateConsumerOffsetRequest("g1", "Orders", 0, 1), c.now_ms)
    slave = next(n for n in c.live_nodes() if n != new)
    assert c.run_until(lambda c: c.node(slave).master_id == new, timeout_ms=2_000)
    c.run_for(10_500)
    offsets = fastjson.loads((tmp_path / "nodes" / slave / "store" / "config" / "consumerOffset.json").read_bytes())
    assert offsets["offsetTable"] == {"Orders@g1": {"0": 1}}
    c.close()


def test_after_a_truncation_stale_consume_queue_units_stay_until_recovery_trims_them(tmp_path):
    """As Java (4.9.5, 5.3.3): no run-time trim; DLedgerCommitLog.recover calls truncateDirtyLogicFiles.
    The follower gets Figure 8's TRUNCATE (see the helper) after dispatching three messages."""
    from rocketlab.labs_support.rocketmq_on_dledger import stale_units_after_truncation

    got = stale_units_after_truncation(tmp_path)
    assert got["ledger_end_index"] == 1
    assert [u[2] for u in got["before_restart"]] == ["in the log"] + ["points past the log's end"] * 2
    assert [u[0] for u in got["after_restart"]] == [0] and got["recovery_trimmed"] == {"T/0": 2}


def test_the_run_time_trim_is_a_kit_switch(tmp_path):
    from rocketlab.labs_support.rocketmq_on_dledger import stale_units_after_truncation

    got = stale_units_after_truncation(tmp_path, trim=True)
    assert [u[0] for u in got["before_restart"]] == [0] and not got["recovery_trimmed"]


def test_a_dledger_master_stamps_physic_msg_timestamp_as_java(tmp_path):
    """ConsumeQueue.putMessagePositionInfoWrapper: stamped when the role is SLAVE *or* DLedger is on."""
    c = _group(tmp_path)
    put = c.put(b"stamp", topic="T")
    assert put.status == "PUT_OK"
    checkpoint = c.node(c.leader()).store.store_checkpoint
    assert checkpoint.physic_msg_timestamp == put.result.store_timestamp > 0
    c.close()
