"""A controller group on DLedger in the simulator, driven by scripted brokers: leader state, the write
path (validate, commit, apply everywhere), heartbeats and the controller-triggered re-election, and losing
the controller leader (DLedgerControllerTest and ControllerManagerTest's stories)."""

from __future__ import annotations

from typing import Any

import pytest

from rocketlab.controller import ControllerConfig
from rocketlab.controller.controller_core import ControllerCore, ControllerNodeConfig, make_controller
from rocketlab.controller.protocol import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    SyncStateSet,
)
from rocketlab.controller.protocol import (
    ControllerResponseCode as Code,
)
from rocketlab.controller.wire import AlterSyncStateSetRequest, ControllerNodeCodec, NotifyBrokerRoleChanged
from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.sim import Cluster

CONTROLLERS = ("c0", "c1", "c2")
CLUSTER, NAME = "DefaultCluster", "broker-a"


class StubBroker(BaseCore):
    """A broker reduced to what the controller sees: heartbeats every second to every controller, the
    requests a test makes it send, the replies and notifications it gets."""

    def __init__(self, ctx: NodeContext, beat_ms: int = 1000, timeout_ms: int = 10_000) -> None:
        self.node_id = ctx.node_id
        self.broker_id: int | None = None
        self.epoch, self.max_offset = 0, 0
        self.beat_ms, self.timeout_ms = beat_ms, timeout_ms
        self.next_beat = 0
        self.ids = iter(range(1, 10**9))
        self.replies: dict[int, Any] = {}
        self.notices: list[NotifyBrokerRoleChanged] = []

    def ask(self, to: str, msg: Any) -> tuple[int, Output]:
        out = OutputBuilder()
        request_id = next(self.ids)
        out.request(to, msg, request_id, timeout_ms=6000)
        return request_id, out.build()

    def start_beating(self, broker_id: int, now_ms: int) -> Output:
        self.broker_id, self.next_beat = broker_id, now_ms
        return Output()

    def next_deadline_ms(self) -> int | None:
        return self.next_beat if self.broker_id is not None else None

    def on_tick(self, now_ms: int) -> Output:
        out = OutputBuilder()
        if self.broker_id is not None and now_ms >= self.next_beat:
            self.next_beat = now_ms + self.beat_ms
            beat = BrokerHeartbeatRequestHeader(CLUSTER, self.node_id, NAME, self.broker_id, self.epoch,
                                                self.max_offset, 0, self.timeout_ms)
            for controller in CONTROLLERS:
                out.request(controller, beat, next(self.ids), timeout_ms=1000)
        return out.build()

    def on_reply(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.replies[request_id] = msg
        return Output()

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        self.notices.append(msg)
        return Output()


def group(seed: int = 1, brokers: int = 3, controller: dict | None = None) -> Cluster:
    config = ControllerNodeConfig(ControllerConfig(**(controller or {})), controller_ids=CONTROLLERS)

    def factory(ctx: NodeContext):
        return make_controller(ctx, config) if ctx.node_id in CONTROLLERS else StubBroker(ctx)

    return Cluster([*CONTROLLERS, *(f"b{i}" for i in range(1, brokers + 1))], factory, ControllerNodeCodec(),
                   seed=seed, latency="uniform:1:3")


def leader(c: Cluster) -> str | None:
    ready = [n for n in CONTROLLERS if c.alive(n) and c.node(n).leader_state]
    return ready[0] if len(ready) == 1 else None


def settle(c: Cluster) -> str:
    assert c.run_until(lambda c: leader(c) is not None, timeout_ms=30_000), "no controller in leader state"
    return leader(c)


def request(c: Cluster, broker: str, msg: Any, to: str | None = None) -> Any:
    """Send ``msg`` from ``broker`` to the controller leader (or ``to``) and run until the answer comes."""
    target = to or settle(c)
    holder: dict[str, int] = {}

    def send(core: StubBroker, now: int) -> Output:
        holder["id"], out = core.ask(target, msg)
        return out

    c.runtime.call(broker, send)
    core = c.node(broker)
    assert c.run_until(lambda c: holder["id"] in core.replies, timeout_ms=10_000), f"no answer to {msg}"
    return core.replies[holder["id"]]


def register(c: Cluster, broker: str) -> int:
    nxt = request(c, broker, GetNextBrokerIdRequestHeader(CLUSTER, NAME))
    broker_id = nxt.header.next_broker_id
    applied = request(c, broker, ApplyBrokerIdRequestHeader(CLUSTER, NAME, broker_id, f"{broker};{c.now_ms}"))
    assert applied.code == Code.SUCCESS, applied
    registered = request(c, broker, RegisterBrokerToControllerRequestHeader(CLUSTER, NAME, broker_id, broker))
    assert registered.code == Code.SUCCESS, registered
    c.runtime.call(broker, lambda core, now: core.start_beating(broker_id, now))
    return broker_id


def replica_info(c: Cluster, broker: str = "b1"):
    return request(c, broker, GetReplicaInfoRequestHeader(NAME))


def test_one_controller_serves_and_the_others_refuse():
    c = group()
    lead = settle(c)
    follower = next(n for n in CONTROLLERS if n != lead)
    refused = request(c, "b1", GetNextBrokerIdRequestHeader(CLUSTER, NAME), to=follower)
    assert refused.code == Code.CONTROLLER_NOT_LEADER
    answered = request(c, "b1", GetNextBrokerIdRequestHeader(CLUSTER, NAME))
    assert answered.code == Code.SUCCESS and answered.header.next_broker_id == 1
    assert any(e["kind"] == "controller_leader" and e["node"] == lead for e in c.events)


def test_registration_and_first_election_are_committed_and_applied_on_every_controller():
    c = group()
    ids = [register(c, f"b{i}") for i in (1, 2, 3)]
    assert ids == [1, 2, 3]
    first = request(c, "b2", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 2))
    assert first.code == Code.SUCCESS and (first.header.master_broker_id, first.header.master_epoch) == (2, 1)
    again = request(c, "b1", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 1))
    assert again.code == Code.CONTROLLER_MASTER_STILL_EXIST and again.header.master_broker_id == 2
    c.run_for(3000)  # followers learn the commit index with the next pushes/heartbeats
    tables = [(c.node(n).manager.replica_info_table, c.node(n).manager.sync_state_set_info_table) for n in CONTROLLERS]
    assert tables[0] == tables[1] == tables[2]
    assert tables[0][1][NAME].master_broker_id == 2


def _group_with_master_and_full_sync_state_set(seed: int = 1) -> Cluster:
    c = group(seed)
    for i in (1, 2, 3):
        register(c, f"b{i}")
    assert request(c, "b1", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 1)).code == Code.SUCCESS
    c.run_for(1500)  # heartbeats reach the controllers: the members are alive
    altered = request(c, "b1", AlterSyncStateSetRequest(AlterSyncStateSetRequestHeader(NAME, 1, 1),
                                                        SyncStateSet(frozenset({1, 2, 3}), 1)))
    assert altered.code == Code.SUCCESS and altered.header.new_sync_state_set_epoch == 2
    return c


def _master_dies(fault: str, seed: int = 1) -> tuple[Cluster, int]:
    """b1 is master of {1,2,3}; b3 is ahead of b2, so the policy prefers it. ``fault`` ends b1: a process
    crash or a host failure. Returns the cluster and how long until b3 was told it is master (epoch 2)."""
    c = _group_with_master_and_full_sync_state_set(seed)
    c.node("b2").max_offset, c.node("b3").max_offset = 500, 900
    c.run_for(1500)
    crash_ms = c.now_ms
    getattr(c, fault)("b1")

    def told(c: Cluster) -> bool:
        return any(isinstance(m, NotifyBrokerRoleChanged) and m.master_epoch == 2 for m in c.node("b3").notices)

    assert c.run_until(told, timeout_ms=20_000)
    waited = c.now_ms - crash_ms
    c.run_for(50)  # the notice to b2 is on its way too
    notice = c.node("b3").notices[-1]
    assert (notice.master_broker_id, notice.master_epoch, notice.sync_state_set) == (3, 2, frozenset({3}))
    assert any(isinstance(m, NotifyBrokerRoleChanged) and m.master_epoch == 2 for m in c.node("b2").notices)
    info = replica_info(c, "b2")
    assert (info.header.master_broker_id, info.header.master_epoch, info.body.sync_state_set) == (3, 2, {3})
    return c, waited


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_crashed_master_is_replaced_at_once_its_channel_closed(seed):
    """ControllerManager.onBrokerInactive from BrokerHousekeepingService.onChannelClose: the crash closes the
    master's connections, every controller drops it from the heartbeat table, the leader elects at once."""
    c, waited = _master_dies("crash", seed)
    assert waited <= 100, waited
    inactive = [e for e in c.events if e["kind"] == "broker_inactive"]
    assert {e["reason"] for e in inactive} == {"channel closed"} and len(inactive) == len(CONTROLLERS)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_master_whose_host_fails_is_replaced_after_the_heartbeat_timeout_and_a_scan(seed):
    """No connection closes: the heartbeat times out after 10 s, the next of the two scans (every 5 s: the
    heartbeat table's, the leader's for inactive masters) sees it."""
    c, waited = _master_dies("host_down", seed)
    assert 9_000 <= waited <= 16_500, waited  # its last heartbeat came at most 1 s before
    assert not any(e.get("reason") == "channel closed" for e in c.events if e["kind"] == "broker_inactive")


def test_broker_and_admin_elections_notify_the_live_members_too():
    """ControllerRequestProcessor.handleControllerElectMaster: any successful election is pushed to the
    set's live members, not only the controller's own."""
    c = _group_with_master_and_full_sync_state_set()
    first = [m for m in c.node("b2").notices if isinstance(m, NotifyBrokerRoleChanged)]
    assert [(m.master_broker_id, m.master_epoch) for m in first] == [(1, 1)]  # b1's election, at start
    designated = request(c, "b2", ElectMasterRequestHeader.of_admin_trigger(CLUSTER, NAME, 3))
    assert designated.code == Code.SUCCESS and designated.header.master_broker_id == 3
    c.run_for(100)
    for broker in ("b1", "b2", "b3"):
        notices = [(m.master_broker_id, m.master_epoch) for m in c.node(broker).notices
                   if isinstance(m, NotifyBrokerRoleChanged)]
        assert notices[-1] == (3, 2), broker
    still = request(c, "b1", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 1))
    assert still.code == Code.CONTROLLER_MASTER_STILL_EXIST  # no election: nobody is told
    c.run_for(100)
    assert [m.master_epoch for m in c.node("b1").notices if isinstance(m, NotifyBrokerRoleChanged)][-1] == 2


def test_with_only_the_master_in_sync_its_death_leaves_no_master_and_bumps_the_epoch():
    """testAllReplicasShutdownAndRestart through the controller: nobody else is in the SyncStateSet."""
    c = group()
    for i in (1, 2):
        register(c, f"b{i}")
    assert request(c, "b1", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 1)).code == Code.SUCCESS
    c.run_for(2000)
    c.crash("b1")
    c.run_for(20_000)
    info = replica_info(c, "b2")
    assert info.header.master_broker_id is None and info.header.master_epoch >= 2
    refused = request(c, "b2", ElectMasterRequestHeader.of_broker_trigger(CLUSTER, NAME, 2))
    assert refused.code == Code.CONTROLLER_ELECT_MASTER_FAILED  # not in the SyncStateSet, unclean off


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_losing_the_controller_leader_keeps_the_metadata(seed):
    c = _group_with_master_and_full_sync_state_set(seed)
    old = settle(c)
    c.crash(old)
    new = settle(c)
    assert new != old
    info = replica_info(c, "b2")
    assert (info.header.master_broker_id, info.header.master_epoch, info.body.sync_state_set_epoch) == (1, 1, 2)
    assert info.body.sync_state_set == {1, 2, 3}


def test_without_a_controller_quorum_nothing_changes_then_the_inactive_master_scan_reelects():
    """DLedgerControllerTest: two controllers down -> an election cannot commit; once they are back, the
    leader's scan for dead masters (every 5 s) re-elects by itself."""
    c = _group_with_master_and_full_sync_state_set()
    lead = settle(c)
    down = [n for n in CONTROLLERS if n != lead]
    for n in down:
        c.crash(n)
    c.crash("b1")  # the master dies while there is no quorum
    c.run_for(25_000)
    assert c.node(lead).manager.sync_state_set_info_table[NAME].master_broker_id == 1  # nothing committed
    for n in down:
        c.restart(n)
    assert c.run_until(lambda c: (lead := leader(c)) is not None and
                       c.node(lead).manager.sync_state_set_info_table[NAME].master_broker_id in (2, 3),
                       timeout_ms=40_000)
    assert isinstance(c.node(leader(c)), ControllerCore)
