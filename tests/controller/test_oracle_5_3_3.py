"""The real RocketMQ 5.3.3 as the judge of controller mode (``ROCKETLAB_JAVA_5``; skipped without it, required
under ``CI=true``):

* AutoSwitch HA across languages over real TCP: a real 5.3.3 slave store replicates from our master and we
  replicate from a real master, through two epoch changes, each with a tail the new slave must truncate; the
  commit logs are byte-identical, the epoch files identical, byte for byte;
* the consume queues after a restart with the checkpoint's confirm offset behind the log, the real store and
  ours the same four ways (clean or crashed, the queue files kept or lost);
* the controllers' event log: written by real ``DLedgerController`` members, our decoder reads every entry as
  Java's ``EventSerializer`` does and writes the same bytes back; written by our controller group, Java decodes
  every entry to the same events and re-serialises our bytes exactly.

The controller-over-remoting tests (a rocketlab broker registering with a real controller group, and ours
serving 5.3.3's NettyRemotingClient) need the RocketMQ remoting wire of issue #33.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rocketlab.controller.events import EventSerializer
from rocketlab.errors import RocketlabError
from rocketlab.oracle.autoswitch import (
    JavaAutoSwitchStore,
    JavaControllers,
    OurAutoSwitchBroker,
    java_decode_events,
    set_checkpoint_confirm,
    wait_for,
)
from rocketlab.oracle.dledger import JavaDLedger, java_layout, member_sizes, our_member
from rocketlab.oracle.ha import commit_log_bytes, free_port
from rocketlab.oracle.jvm import Oracle
from rocketlab.sim import Cluster
from rocketlab.store.message import Message
from tests.oracle.conftest import need_oracle

pytestmark = pytest.mark.realnet
FILE_SIZE = 64 * 1024


@pytest.fixture(scope="module")
def oracle5() -> Oracle:
    return need_oracle("5.3.3")


def messages(tag: str, n: int, start: int = 0) -> list[Message]:
    return [Message("FooBar", f"{tag}-{i}: Once, there was a chance for me!".encode(), 0,
                    properties={"TAGS": "TAG1", "KEYS": f"{tag}{i}"}, born_timestamp=1_700_000_000_000 + start + i)
            for i in range(n)]


def same_log(a: Path, b: Path, upto: int) -> bool:
    return commit_log_bytes(a, upto) == commit_log_bytes(b, upto)


def test_a_real_slave_follows_our_master_and_we_follow_a_real_master_across_epochs(oracle5, tmp_path):
    java = JavaAutoSwitchStore(oracle5, tmp_path, tmp_path / "java", 2, free_port(), file_size=FILE_SIZE)
    ours = OurAutoSwitchBroker(tmp_path / "ours", 1, free_port(), file_size=FILE_SIZE)
    try:
        # epoch 1: ours is master, the real store its slave
        ours.change_to_master(1, [1])
        java.change_to_slave(ours.ha_address, 1)
        assert ours.put_many(messages("e1", 10)) == ["PUT_OK"] * 10
        wait_for(lambda: java.info()["maxPhyOffset"] == ours.info()["max_offset"], "the real slave caught up")
        e1 = ours.info()["max_offset"]
        assert java.epochs() == [(1, 0)] and java.info()["confirmOffset"] == e1
        # epoch 2: the real store becomes master; ours, still master in its own eyes, writes a tail nobody has
        assert java.change_to_master(2, [2])["accepted"]
        assert ours.put_many(messages("orphan", 3, 100)) == ["PUT_OK"] * 3
        assert ours.info()["max_offset"] > e1
        assert [r["status"] for r in java.put_many(messages("e2", 5, 200))] == ["PUT_OK"] * 5
        ours.change_to_slave(java.ha_address, 2)
        wait_for(lambda: ours.info()["max_offset"] == java.info()["maxPhyOffset"] and ours.epochs() == java.epochs(),
                 "ours truncated its tail and caught up with the real master")
        e2 = java.info()["maxPhyOffset"]
        assert ours.epochs() == [(1, 0), (2, e1)]
        # epoch 3: ours is master again; the real store, master of epoch 2 in its own eyes, writes a tail
        ours.change_to_master(3, [1])
        assert [r["status"] for r in java.put_many(messages("orphan", 2, 300))] == ["PUT_OK"] * 2
        java.change_to_slave(ours.ha_address, 3)
        assert ours.put_many(messages("e3", 7, 400)) == ["PUT_OK"] * 7
        try:  # 60 s: the real slave reconnects every 5 s after a failed handshake (AutoSwitchHAClient)
            wait_for(lambda: java.info()["maxPhyOffset"] == ours.info()["max_offset"] and java.epochs() == ours.epochs(),
                     "the real slave truncated its tail and caught up with ours", timeout_s=60)
        except RocketlabError as e:  # say where each side stood: this step once timed out at 30 s under a full run
            raise AssertionError(f"{e}; real slave {java.info()} epochs {java.epochs()}; ours {ours.info()} "
                                 f"epochs {ours.epochs()}") from None
        top = ours.info()["max_offset"]
        assert java.epochs() == [(1, 0), (2, e1), (3, e2)]
        queue = java.queue("FooBar")
        assert queue["maxOffsetInQueue"] == 10 + 5 + 7  # the real store dispatched our records, tails gone
    finally:
        java.shutdown()
        ours.close()
    assert same_log(tmp_path / "java", ours.store_dir, top)
    java_epochs = (tmp_path / "java" / "epochFileCheckpoint").read_bytes()
    assert java_epochs == (ours.store_dir / "epochFileCheckpoint").read_bytes()
    assert java_epochs.decode().splitlines()[2:] == ["1-0", f"2-{e1}", f"3-{e2}"]


# ------------------------------------------------------------------ restart with the confirm offset behind
def _java_restart(oracle5: Oracle, work: Path, clean: bool, lose_queues: bool) -> int:
    """A real master puts 10 messages (all dispatched), stops (cleanly or SIGKILL), its checkpoint's confirm
    offset is set to half, (``lose_queues``) its consume queues deleted; reopened fenced: the queue's size."""
    root = work / "store"
    java = JavaAutoSwitchStore(oracle5, work, root, 1, free_port(), file_size=FILE_SIZE)
    java.change_to_master(1, [1])
    java.put_many(messages("m", 10))
    wait_for(lambda: java.queue("FooBar")["maxOffsetInQueue"] == 10, "the real store dispatched its messages")
    top = java.info()["maxPhyOffset"]
    if clean:
        java.shutdown()
    else:
        java.kill()
    set_checkpoint_confirm(oracle5, work, root, top // 2 - (top // 2) % (top // 10))
    if lose_queues:
        shutil.rmtree(root / "consumequeue")
    again = JavaAutoSwitchStore(oracle5, work, root, 1, free_port(), file_size=FILE_SIZE, fenced=True)
    try:
        assert again.opened["lastExitOK"] == clean
        return int(again.queue("FooBar")["maxOffsetInQueue"])
    finally:
        again.shutdown()


def _our_restart(work: Path, clean: bool, lose_queues: bool) -> int:
    from rocketlab.store.checkpoint import StoreCheckpoint
    from tests.controller.test_auto_switch_ha import brokers, call

    c = brokers(work)
    call(c, "a1", lambda core, now: core.change_to_master(1, {1}, now))
    for m in messages("m", 10):
        call(c, "a1", lambda core, now, m=m: core.put_message(m, now))
    c.run_for(1_000)
    top = c.node("a1").max_offset
    if clean:
        c.runtime.stop("a1")
    else:
        c.node("a1").store.store_checkpoint.flush()
        c.crash("a1")
    root = work / "nodes" / "a1" / "store"
    checkpoint = StoreCheckpoint(str(root / "checkpoint"))
    checkpoint.confirm_phy_offset = top // 2 - (top // 2) % (top // 10)
    checkpoint.flush()
    checkpoint.shutdown()
    if lose_queues:
        shutil.rmtree(root / "consumequeue")
    c.restart("a1")
    assert c.node("a1").store.last_exit_ok == clean
    return c.node("a1").store.get_max_offset_in_queue("FooBar", 0)


@pytest.mark.parametrize(("clean", "lose_queues"), [(True, False), (True, True), (False, False), (False, True)])
def test_a_restart_dispatches_what_5_3_3_dispatches(oracle5, tmp_path, clean, lose_queues):
    """recoverNormally dispatches what the queues lack, the whole log; recoverAbnormally keeps the units on
    disk and re-dispatches only up to the confirm offset (here 5 of the 10 records)."""
    java = _java_restart(oracle5, tmp_path / "java", clean, lose_queues)
    ours = _our_restart(tmp_path / "ours", clean, lose_queues)
    assert java == ours == (5 if (lose_queues and not clean) else 10)


# ------------------------------------------------------------------ the controllers' event log
def _bodies(member_dir: Path, self_id: str) -> list[bytes]:
    copy = member_dir.parent / f"{member_dir.name}-copy"
    shutil.copytree(member_dir, copy)
    entries = our_member(copy, self_id)["entries"]
    return [e["body"] for e in entries if e["body"]]


def test_a_real_controller_log_decodes_the_same_with_ours(oracle5, tmp_path):
    ports = {f"c{i}": free_port() for i in range(3)}
    cluster, name = "DefaultCluster", "broker-a"
    controllers = JavaControllers(oracle5, tmp_path, tmp_path / "controllers", ports)
    try:
        lead = controllers.leader()
        for broker_id, address in ((1, "10.0.0.1:30911"), (2, "10.0.0.2:30911"), (3, "10.0.0.3:30911")):
            assert controllers.call(lead, "getNextBrokerId")["header"]["nextBrokerId"] == broker_id
            assert controllers.call(lead, "applyBrokerId", brokerId=broker_id,
                                    registerCheckCode=f"{address};1700000000000")["code"] == 0
            assert controllers.call(lead, "registerBroker", brokerId=broker_id, brokerAddress=address)["code"] == 0
        controllers.alive([(cluster, name, 1), (cluster, name, 2), (cluster, name, 3)])
        assert controllers.call(lead, "electMaster", brokerId=1)["code"] == 0
        assert controllers.call(lead, "alterSyncStateSet", masterBrokerId=1, masterEpoch=1, syncStateSet=[1, 2, 3],
                                syncStateSetEpoch=1)["code"] == 0
        assert controllers.call(lead, "registerBroker", brokerId=2, brokerAddress="10.0.0.9:30911")["code"] == 0
        assert controllers.call(lead, "electMaster", trigger="admin", brokerId=3)["code"] == 0
        controllers.alive([(cluster, name, 2)])
        assert controllers.call(lead, "electMaster", trigger="controller")["code"] == 2004  # 3 dead, 2 not in set
        assert controllers.call(lead, "cleanBrokerData", brokerIdSetToClean="1;3")["code"] == 0
        member = controllers.member_dir(lead)
    finally:
        controllers.shutdown()
    bodies = _bodies(member, lead)
    ours = [EventSerializer().deserialize(b) for b in bodies]
    assert [type(e).__name__ for e in ours] == [
        "ApplyBrokerIdEvent", "ApplyBrokerIdEvent", "ApplyBrokerIdEvent", "ElectMasterEvent",
        "AlterSyncStateSetEvent", "UpdateBrokerAddressEvent", "ElectMasterEvent", "ElectMasterEvent",
        "CleanBrokerDataEvent"]
    assert [EventSerializer().serialize(e) for e in ours] == bodies  # the same bytes back
    proc = oracle5.start(tmp_path, name="decoder")
    try:
        assert [_sorted_lists(d["event"]) for d in java_decode_events(proc, bodies)] == [_as_java(e) for e in ours]
    finally:
        proc.close()


def _as_java(event) -> dict:
    """Our event as the getters of Java's class show it: camelCase, the type's name, null where ours has
    None, sets as lists."""
    import dataclasses
    import json

    out = json.loads(EventSerializer().serialize(event)[2:])
    for f in dataclasses.fields(event):
        if getattr(event, f.name) is None:
            out["".join(w if k == 0 else w.title() for k, w in enumerate(f.name.split("_")))] = None
    return _sorted_lists(out)


def _sorted_lists(event: dict | None) -> dict | None:
    return None if event is None else {k: sorted(v) if isinstance(v, list) else v for k, v in event.items()}


def test_our_controller_log_decodes_the_same_in_java(oracle5, tmp_path):
    c = Cluster.controller_mode(brokers=3, seed=3, data_dir=tmp_path / "run", broker={"allAckInSyncStateSet": True},
                                raise_on_violation=False)
    from rocketlab.scenarios.controller_mode import settle

    settle(c)
    master = c.leader()
    c.crash(master)
    c.run_until(lambda c: c.leader() not in (None, master), timeout_ms=30_000)
    c.restart(master)
    c.run_for(10_000)
    c.close()
    member = tmp_path / "run" / "nodes" / "c0"
    bodies = _bodies(member, "c0")
    ours = [EventSerializer().deserialize(b) for b in bodies]
    assert {type(e).__name__ for e in ours} >= {"ApplyBrokerIdEvent", "ElectMasterEvent", "AlterSyncStateSetEvent"}
    proc = oracle5.start(tmp_path, name="decoder")
    try:
        decoded = java_decode_events(proc, bodies)
    finally:
        proc.close()
    assert [_sorted_lists(d["event"]) for d in decoded] == [_as_java(e) for e in ours]
    assert [d["reserialized"] for d in decoded] == bodies  # Java writes our bytes back exactly
    # and Java's own DLedger store reads our controller's log: the same entries
    base = java_layout(member, tmp_path / "java-layout", "c0")
    data_size, index_size = member_sizes(member)
    proc = oracle5.start(tmp_path, name="dledger")
    try:
        java = JavaDLedger(proc, base, "c0", data_file_size=data_size, index_file_size=index_size, group="controller")
        java_bodies = [e["body"] for e in java.read()["entries"] if e["body"]]
    finally:
        proc.close()
    assert java_bodies == bodies
    assert os.path.isdir(base)
