"""Classic HA in the simulator: RocketMQ's HATest, the SYNC/ASYNC lesson, faults, bad peers, and the
4.9.5 / 5.3.3 HA client behaviours (``HAConfig.ha_client_behaviour``; 4.9.5 is the default).

The checkers SlaveIsPrefixChecker and SyncPutOnSlaveChecker run after every event in every test here
(Cluster.master_slave installs them): a violation raises with the seed.
"""

from __future__ import annotations

import pytest

from rocketlab.sim import Cluster

LAT = "uniform:1:3"


def _cluster(role, seed=1, tmp=None, **kwargs):
    kwargs.setdefault("latency", LAT)
    return Cluster.master_slave(role=role, slaves=1, seed=seed, data_dir=tmp, **kwargs)


def _connected(c):
    """Until the master has the slave's first report (its request offset), so bytes flow: a 4.9.5 slave
    sends it about 5 s after connecting, which is why Java's HATest sleeps 6 s."""
    return c.run_until(lambda c: c.node("n0").ha_service.reported_connection_count == 1, timeout_ms=7000)


def test_hatest_sync_master_puts_are_readable_from_the_slaves_consume_queue(tmp_path):
    """Mirrors HATest.testHandleHA: 10 puts on a SYNC_MASTER, each PUT_OK, all on the slave's queue."""
    c = _cluster("SYNC_MASTER", tmp=tmp_path)
    assert _connected(c)
    handles = [c.put(f"body-{i}".encode(), topic="TopicTest", queue_id=0) for i in range(10)]
    assert [h.status for h in handles] == ["PUT_OK"] * 10
    c.run_for(2)  # the slave's reput runs 1 ms after the bytes arrive
    got = c.node("n1").store.get_message("TopicTest", 0, offset=0, max_msg_nums=32)
    assert [m.body for m in got.messages] == [f"body-{i}".encode() for i in range(10)]
    c.close()


def test_hatest_slave_gone_gives_slave_not_available_after_housekeeping(tmp_path):
    """Mirrors HATest.testSemiSyncReplicaWhenSlaveActingMaster's 'slave gone' step, 4.x statuses."""
    c = _cluster("SYNC_MASTER", tmp=tmp_path)
    assert _connected(c)
    c.partition(["n0"], ["n1"])  # no FIN crosses: the master only learns from housekeeping
    first = c.put(b"waits")
    assert first.status == "FLUSH_SLAVE_TIMEOUT" and first.latency_ms >= 3000
    c.run_for(20_001)
    assert c.node("n0").ha_service.connection_count == 0
    late = c.put(b"no slave")
    assert late.status == "SLAVE_NOT_AVAILABLE" and late.latency_ms == 0
    master = c.node("n0").store
    assert master.get_max_phy_offset() == late.wrote_offset + late.wrote_bytes  # stored all the same
    closes = [e for e in c.events if e["kind"] == "ha_close"]
    assert closes and closes[0]["reason"].startswith("housekeeping")
    c.close()


def test_crashed_slave_is_noticed_at_once_and_slaves_refuse_puts(tmp_path):
    c = _cluster("SYNC_MASTER", tmp=tmp_path)
    assert _connected(c)
    c.crash("n1")
    c.run_for(10)
    assert c.put(b"x").status == "SLAVE_NOT_AVAILABLE"
    from rocketlab.store import Message

    c.restart("n1")
    handle, _ = c.node("n1").put_message(Message(topic="T", body=b"x"), c.now_ms)
    assert handle.status == "SERVICE_NOT_AVAILABLE"
    c.close()


def test_async_master_lags_by_its_poll_and_sync_master_does_not(tmp_path):
    lags: dict[str, list[float]] = {}
    for role in ("ASYNC_MASTER", "SYNC_MASTER"):
        c = _cluster(role, tmp=tmp_path / role)
        assert _connected(c)
        lags[role] = []
        for _ in range(10):
            c.run_for(37)
            handle = c.put(b"m" * 200)
            end, start = handle.wrote_offset + handle.wrote_bytes, c.now_ms
            c.run_until(lambda c, end=end: c.node("n1").max_offset >= end, timeout_ms=1000)
            lags[role].append(c.now_ms - start + handle.latency_ms)
        c.close()
    assert max(lags["SYNC_MASTER"]) <= 10  # the put path wakes the write loop
    assert max(lags["ASYNC_MASTER"]) <= 110 and sum(lags["ASYNC_MASTER"]) / 10 > 20  # up to a 100 ms poll


def _acked_then_crash_master(role, seed, tmp):
    """Steady puts, crash the master at a seed-chosen moment; count PUT_OK messages not on the slave."""
    c = _cluster(role, seed=seed, tmp=tmp, network="unreliable")
    assert _connected(c)
    rng = __import__("random").Random(seed)
    acked = []
    for _ in range(rng.randint(20, 60)):
        handle = c.put(b"x" * rng.randint(50, 500))
        if handle.status == "PUT_OK":
            acked.append(handle.wrote_offset + handle.wrote_bytes)
        c.run_for(rng.randint(0, 30))
    c.crash("n0")
    slave_end = c.node("n1").max_offset
    c.close()
    return sum(end > slave_end for end in acked), len(acked)


@pytest.mark.parametrize("seed", range(8))
def test_a_sync_master_never_loses_an_acknowledged_message(seed, tmp_path):
    lost, acked = _acked_then_crash_master("SYNC_MASTER", seed, tmp_path)
    assert acked > 0 and lost == 0, f"seed {seed}"


def test_an_async_master_can_lose_acknowledged_messages(tmp_path):
    losses = [_acked_then_crash_master("ASYNC_MASTER", seed, tmp_path / str(seed))[0] for seed in range(8)]
    assert sum(losses) > 0, losses  # the lab's lesson: count them


SEEDS = range(12)


def _fault_run(seed, tmp, role):
    c = _cluster(role, seed=seed, tmp=tmp, network=["reliable", "unreliable"][seed % 2],
                 broker={"mapped_file_size_commit_log": 8 * 1024})
    rng = __import__("random").Random(seed)
    for step in range(40):
        c.put(b"p" * rng.randint(10, 900), topic=f"T{step % 3}", queue_id=step % 2)
        c.run_for(rng.randint(0, 200))
        roll = rng.random()
        if roll < 0.08 and c.alive("n1"):
            c.crash("n1")
        elif roll < 0.16 and not c.alive("n1"):
            c.restart("n1")
        elif roll < 0.22:
            c.partition(["n0"], ["n1"])
        elif roll < 0.3:
            c.heal()
    c.heal()
    if not c.alive("n1"):
        c.restart("n1")
    c.run_until(lambda c: c.node("n1").max_offset == c.node("n0").max_offset, timeout_ms=60_000)
    return c


@pytest.mark.parametrize("seed", SEEDS)
def test_faults_never_break_the_prefix_and_the_slave_catches_up(seed, tmp_path):
    role = ["ASYNC_MASTER", "SYNC_MASTER"][seed % 2]
    c = _fault_run(seed, tmp_path, role)
    master, slave = c.node("n0").store.commit_log, c.node("n1").store.commit_log
    assert slave.get_max_offset() == master.get_max_offset(), f"seed {seed}"
    start = slave.get_min_offset()
    assert slave.get_data(start, 1 << 20) == master.get_data(start, 1 << 20), f"seed {seed}"
    assert not c.violations
    c.close()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 300))
def test_faults_full_sweep(seed, tmp_path):
    test_faults_never_break_the_prefix_and_the_slave_catches_up(seed, tmp_path)


def test_a_restarted_slave_resumes_from_its_own_max_offset(tmp_path):
    c = _cluster("ASYNC_MASTER", tmp=tmp_path)
    assert _connected(c)
    for _ in range(5):
        c.put(b"a" * 100)
    c.run_for(500)
    c.crash("n1")
    for _ in range(5):
        c.put(b"b" * 100)
    c.restart("n1")
    resume_at = c.node("n1").max_offset
    assert resume_at > 0
    mark = len(c.events)
    c.run_for(5500)  # the 4.9.5 slave reports about 5 s after it connects
    reports = [e["offset"] for e in c.events[mark:] if e["kind"] == "ha_report"]
    assert reports[0] == resume_at and reports[-1] == c.node("n0").max_offset
    conn = next(iter(c.node("n0").ha_service.connections.values()))
    assert conn.slave_request_offset == resume_at
    c.close()


def test_an_empty_slave_starts_at_the_masters_last_file(tmp_path):
    c = Cluster.master_slave(role="ASYNC_MASTER", slaves=1, data_dir=tmp_path,
                             broker={"mapped_file_size_commit_log": 4096})
    c.crash("n1")
    for _ in range(30):
        c.put(b"z" * 300)
    master_max = c.node("n0").max_offset
    assert master_max > 2 * 4096
    import shutil

    shutil.rmtree(tmp_path / "nodes" / "n1" / "store")
    c.restart("n1")
    c.run_for(6000)
    slave = c.node("n1").store.commit_log
    assert slave.get_min_offset() == master_max - master_max % 4096
    assert slave.get_max_offset() == master_max
    c.close()


def test_a_slave_ahead_of_the_master_is_refused_with_a_reason(tmp_path):
    # the prefix checker would (rightly) flag this slave; here we watch the master refuse it
    c = Cluster.master_slave(role="ASYNC_MASTER", slaves=1, data_dir=tmp_path, checkers=[])
    c.crash("n1")
    c.run_for(10)
    # the slave's files come from another, longer history: its log is ahead of the master's
    other = Cluster.master_slave(role="ASYNC_MASTER", slaves=0, data_dir=tmp_path / "other")
    for _ in range(10):
        other.put(b"o" * 200)
    other.close()
    import shutil

    shutil.rmtree(tmp_path / "nodes" / "n1" / "store")
    shutil.copytree(tmp_path / "other" / "nodes" / "n0" / "store", tmp_path / "nodes" / "n1" / "store")
    master_end = c.put(b"m" * 100)
    master_end = master_end.wrote_offset + master_end.wrote_bytes
    c.restart("n1")
    slave_end = c.node("n1").max_offset
    assert slave_end > master_end
    c.run_for(11_000)  # the request offset ~5 s after connecting, then a heartbeat report 5 s later: an
    # ack beyond the master's end
    reasons = [e["reason"] for e in c.events if e["kind"] == "ha_close"]
    assert any("beyond the master's max offset" in r for r in reasons), reasons
    assert c.node("n0").max_offset == master_end and c.node("n1").max_offset == slave_end  # nothing moved
    c.close()


def test_a_jump_in_the_masters_offsets_makes_the_slave_disconnect(tmp_path):
    c = _cluster("ASYNC_MASTER", tmp=tmp_path)
    assert _connected(c)
    c.put(b"a" * 100)
    c.run_for(300)
    before = c.node("n1").max_offset
    conn = next(iter(c.node("n0").ha_service.connections.values()))
    conn.next_transfer_from_where += 8  # the master skips 8 bytes: a header whose offset jumps
    c.put(b"b" * 100)
    c.run_for(300)
    reasons = c.node("n1").ha_client.close_reasons
    assert any("not equal the max phy offset in slave" in r for r in reasons)
    assert c.node("n1").max_offset >= before  # nothing appended from the bad frame
    c.run_for(6000)  # reconnect (4.9.5: at once, reporting ~5 s later); the master re-positions at the
    # slave's real offset
    assert c.node("n1").max_offset == c.node("n0").max_offset
    c.close()


def test_metadata_sync_copies_topics_and_merges_consumer_offsets(tmp_path):
    import json

    from rocketlab.broker.protocol import UpdateConsumerOffsetRequest
    from rocketlab.remoting import fastjson

    c = _cluster("ASYNC_MASTER", tmp=tmp_path)
    c.put(b"x", topic="Orders")
    out = c.node("n0").on_request("client", 7, UpdateConsumerOffsetRequest("g1", "Orders", 0, 1), c.now_ms)
    assert [(a.to, a.request_id, a.msg.ok) for a in out.actions] == [("client", 7, True)]
    c.run_for(3500)
    config = tmp_path / "nodes" / "n1" / "store" / "config"
    assert "Orders" in json.loads((config / "topics.json").read_text())["topicConfigTable"]
    offsets = fastjson.loads((config / "consumerOffset.json").read_bytes())  # fastjson's form: {0:1}
    assert offsets["offsetTable"] == {"Orders@g1": {"0": 1}}
    assert c.node("n1").syncs == 1
    c.run_for(10_000)
    assert c.node("n1").syncs == 2
    c.close()


@pytest.mark.parametrize("slave_read_enable", [True, False])
def test_consumers_read_from_the_slave_when_the_master_is_down(tmp_path, slave_read_enable):
    c = _cluster("SYNC_MASTER", tmp=tmp_path, broker={"slave_read_enable": slave_read_enable})
    assert _connected(c)
    for i in range(5):
        assert c.put(f"m{i}".encode(), topic="T").status == "PUT_OK"
    assert c.pull("T").status == "FOUND"
    c.crash("n0")
    got = c.pull("T")
    if slave_read_enable:
        assert got.status == "FOUND" and [m["body"] for m in got.messages] == [f"m{i}".encode() for i in range(5)]
        assert got.suggest_which_broker_id == 1
    else:
        assert got.status == "PULL_RETRY_IMMEDIATELY" and got.suggest_which_broker_id == 0
    c.close()


def test_in_sync_replicas_option_follows_5x(tmp_path):
    one = _cluster("SYNC_MASTER", tmp=tmp_path / "one", ha={"in_sync_replicas": 1})
    one.crash("n1")
    assert one.put(b"x").status == "PUT_OK"  # 5.x default: a SYNC_MASTER behaves like ASYNC
    one.close()
    two = _cluster("SYNC_MASTER", tmp=tmp_path / "two", ha={"in_sync_replicas": 2})
    assert _connected(two)
    assert two.put(b"y").status == "PUT_OK"
    two.crash("n1")
    assert two.put(b"z").status == "FLUSH_SLAVE_TIMEOUT"
    two.close()


def test_master_crash_scenarios_count_lost_acknowledged_messages(tmp_path, capsys):
    import json

    from rocketlab.cli import main

    lost = {}
    for name in ("ms-async-crash", "ms-sync-crash"):
        assert main(["sim", name, "--seed", "3", "--out", str(tmp_path / name), "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["acked"] > 100
        lost[name] = summary["lost_acked"]
    assert lost == {"ms-async-crash": 7, "ms-sync-crash": 0}  # seed 3: the async master lost seven


# --- the HA client per release: 4.9.5's HAClient (default) and 5.3.3's DefaultHAClient -----------------

def _first_report_after_open(c, since=0):
    """ms from the master's accept of the slave's stream (after event index ``since``) to the first report."""
    events = c.events[since:]
    opened = next(e["t"] for e in events if e["kind"] == "stream_open" and e["node"] == "n0")
    reported = next(e["t"] for e in events if e["kind"] == "ha_report" and e["t"] >= opened)
    return reported - opened


def test_a_4_9_5_slave_sends_its_first_report_about_5_s_after_connecting(tmp_path):
    c = _cluster("SYNC_MASTER", tmp=tmp_path)
    c.run_until(lambda c: c.node("n0").ha_service.connection_count == 1, timeout_ms=2000)
    assert c.node("n0").ha_service.reported_connection_count == 0  # connected, but silent
    early = c.put(b"before the first report")  # a connection counts: isSlaveOK, then a 3 s wait
    assert early.status == "FLUSH_SLAVE_TIMEOUT" and early.latency_ms == 3000
    assert _connected(c)
    assert 5000 < _first_report_after_open(c) <= 5010  # connectMaster reset lastWriteTimestamp
    assert c.put(b"now").status == "PUT_OK"
    c.close()


def _mismatch_then_put(tmp_path, behaviour):
    """The master's stream skips 8 bytes, so its next heartbeat frame names an offset the slave does not
    have: the slave closes ("not equal the max phy offset in slave"). 50 ms later a SYNC_MASTER put.
    Returns the cluster, that put's handle and the master's connection count when it was made."""
    c = _cluster("SYNC_MASTER", tmp=tmp_path, ha={"ha_client_behaviour": behaviour})
    assert _connected(c)
    assert c.put(b"a" * 100).status == "PUT_OK"
    conn = next(iter(c.node("n0").ha_service.connections.values()))
    conn.next_transfer_from_where += 8
    closed = c.run_until(lambda c: any("not equal the max phy offset in slave" in r
                                       for r in c.node("n1").ha_client.close_reasons), timeout_ms=6000)
    assert closed
    c.run_for(50)
    connections = c.node("n0").ha_service.connection_count
    return c, c.put(b"after the close"), connections


def test_after_an_offset_mismatch_a_4_9_5_slave_is_back_at_once_and_sync_puts_time_out(tmp_path):
    c, put, connections = _mismatch_then_put(tmp_path, "4.9.5")
    assert connections == 1  # reconnected at once (closeMaster, then connectMaster)...
    assert put.status == "FLUSH_SLAVE_TIMEOUT" and put.latency_ms == 3000  # ...but silent for 5 s
    c.run_for(3000)
    assert c.put(b"later").status == "PUT_OK"
    c.close()


def test_after_an_offset_mismatch_a_5_3_3_slave_stays_away_5_s_and_sync_puts_fail_at_once(tmp_path):
    c, put, connections = _mismatch_then_put(tmp_path, "5.3.3")
    assert connections == 0  # closeMasterAndWait: 5 s before the next connect
    assert put.status == "SLAVE_NOT_AVAILABLE" and put.latency_ms == 0
    mark = len(c.events)
    assert c.run_until(lambda c: c.node("n0").ha_service.reported_connection_count == 1, timeout_ms=6000)
    assert _first_report_after_open(c, mark) <= 10  # its last write is > 5 s old: it reports at once
    assert c.put(b"later").status == "PUT_OK"
    c.close()


@pytest.mark.parametrize("behaviour", ["4.9.5", "5.3.3"])
def test_housekeeping_in_a_partition_per_release(tmp_path, behaviour):
    """4.9.5 times out on the last write, which its 5 s heartbeats keep fresh: the slave never gives up
    on its side. 5.3.3 times out on the last read: the slave closes after 20 s of silence."""
    c = _cluster("ASYNC_MASTER", tmp=tmp_path, ha={"ha_client_behaviour": behaviour})
    assert _connected(c)
    c.partition(["n0"], ["n1"])
    c.run_for(25_000)
    slave_closes = [e for e in c.events if e["kind"] == "ha_close" and e["node"] == "n1"]
    if behaviour == "4.9.5":
        assert not slave_closes and c.node("n1").ha_client.connected
    else:
        assert slave_closes and "nothing read from the master" in slave_closes[0]["reason"]
    c.heal()
    c.put(b"after the heal")
    c.run_for(12_000)
    assert c.node("n1").max_offset == c.node("n0").max_offset
    c.close()


def test_an_unknown_ha_client_behaviour_is_refused():
    from rocketlab.errors import ConfigError
    from rocketlab.ha.config import HAConfig

    with pytest.raises(ConfigError, match="ha_client_behaviour='4.x' is not one of 4.9.5, 5.3.3"):
        HAConfig(ha_client_behaviour="4.x")
