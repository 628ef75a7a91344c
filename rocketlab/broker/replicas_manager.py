"""ReplicasManager, RocketMQ 5.3.3 (``broker/.../controller/ReplicasManager.java``), sans-IO: how a
controller-mode broker learns its id and its role from the controllers and reports its SyncStateSet.

Start-up (``startBasicService``, retried every 5 s until it gets through): find the controller leader
(``CONTROLLER_GET_METADATA_INFO`` to each controller; the one that says it leads); register - a broker
with a ``brokerIdentity`` file reuses its id, otherwise ``GET_NEXT_BROKER_ID`` then ``APPLY_BROKER_ID``
(check code ``"<address>;<now>"``) and the file is written - then ``REGISTER_BROKER``, whose answer names
the master if one is alive; one heartbeat; if there is no master yet, ``brokerElect`` (a broker-triggered
election; SUCCESS and CONTROLLER_MASTER_STILL_EXIST both count). With a master known the broker takes its
role and is unfenced (RUNNING).

While running: a heartbeat to every controller every ``brokerHeartbeatInterval`` (1 s: epoch = last epoch
of the epoch file, max offset, confirm offset, timeout ``controllerHeartBeatTimeoutMills`` 10 s, election
priority); ``syncBrokerMetadata`` every 5 s (first after 3 s): a higher master epoch at the controller
changes the role (or triggers ``brokerElect`` if the controller has no master), the same epoch with a
newer SyncStateSet is adopted by a master; a master runs ``checkSyncStateSetAndDoReport`` every 5 s
(shrink) and reports every proposal with ``ALTER_SYNC_STATE_SET``, setting the set the controller
answers; ``NOTIFY_BROKER_ROLE_CHANGED`` with a higher epoch changes the role at once; the leader is
looked up again every 10 s and after any refusal or timeout.

Trace events: ``replicas_state`` (state, broker id), ``controller_call`` (request, code).

Simplified: the master's HA address is its node id (Java learns it from the NameServer); one request to a
controller is in flight at a time (Java's calls are synchronous within each scheduled task); the
registration temp file (``brokerIdentity-temp`` with the check code) is not written, only the final one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rocketlab.controller.protocol import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    ControllerResponseCode,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    SyncStateSet,
)
from rocketlab.controller.wire import AlterSyncStateSetRequest, ControllerResponse, GetMetadataInfoRequest
from rocketlab.core import OutputBuilder
from rocketlab.dledger.member_state import write_file_durably

Code = ControllerResponseCode
REQUEST_BASE = 1 << 42  # request ids of the controller calls (HA uses streams, puts are answers)
RETRY_INTERVAL_MS = 5_000
BROKER_HEARTBEAT_INTERVAL_MS = 1_000
CONTROLLER_HEARTBEAT_TIMEOUT_MS = 10_000
SYNC_BROKER_METADATA_PERIOD_MS = 5_000
CHECK_SYNC_STATE_SET_PERIOD_MS = 5_000
SYNC_CONTROLLER_METADATA_PERIOD_MS = 10_000
FIRST_SYNC_DELAY_MS = 3_000
RPC_TIMEOUT_MS = 3_000


@dataclass(frozen=True)
class ReplicasManagerConfig:
    cluster_name: str = "DefaultCluster"
    broker_name: str = "broker-a"
    election_priority: int | None = None
    heartbeat_timeout_ms: int = CONTROLLER_HEARTBEAT_TIMEOUT_MS


class BrokerRoleTarget(Protocol):
    """What ReplicasManager drives: the broker core (see :class:`~rocketlab.broker.auto_switch_broker.AutoSwitchBrokerCore`)."""

    role: str
    ha_service: Any

    def assign_broker_id(self, broker_id: int) -> None: ...

    def become_master(self, epoch: int, sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None: ...

    def become_slave(self, master: str, epoch: int, now_ms: int, out: OutputBuilder) -> None: ...

    def heartbeat_facts(self) -> tuple[int, int, int]: ...


class ReplicasManager:
    """Models ReplicasManager (see the module docstring)."""

    def __init__(self, node_id: str, controllers: tuple[str, ...], config: ReplicasManagerConfig,
                 broker: BrokerRoleTarget, identity_file: Path, rng: random.Random) -> None:
        self.node_id = node_id
        self.controllers = controllers
        self.config = config
        self.broker = broker
        self.identity_file = identity_file
        self.rng = rng
        self.state = "INITIAL"
        self.leader: str | None = None
        self.master_epoch = 0
        self.sync_state_set_epoch = 0
        self.sync_state_set: set[int] = set()
        self.master_broker_id: int | None = None
        self.ids = iter(range(REQUEST_BASE, REQUEST_BASE + (1 << 40)))
        self.calls: dict[int, tuple[str, Callable[[ControllerResponse | None, int, OutputBuilder], None]]] = {}
        self.busy = False  # one controller call chain at a time
        self.next_start_ms = 0
        self.next_beat_ms: int | None = None
        self.next_sync_ms: int | None = None
        self.next_check_ms: int | None = None
        self.next_leader_ms: int | None = None
        self.proposal_queue: list[set[int]] = []
        self.now_ms = 0
        self.register_attempts = 0
        persisted = self._read_identity()
        self.broker_id: int | None = persisted

    # ------------------------------------------------------------------ identity file
    def _read_identity(self) -> int | None:
        try:
            cluster, name, broker_id = self.identity_file.read_text().strip().split("#")
        except (OSError, ValueError):
            return None
        if (cluster, name) != (self.config.cluster_name, self.config.broker_name):
            return None
        try:
            return int(broker_id)
        except ValueError:
            return None

    def _write_identity(self, broker_id: int) -> None:
        self.identity_file.parent.mkdir(parents=True, exist_ok=True)
        write_file_durably(self.identity_file,
                           f"{self.config.cluster_name}#{self.config.broker_name}#{broker_id}".encode())

    # ------------------------------------------------------------------ calls
    def owns(self, request_id: int) -> bool:
        return request_id in self.calls

    def _call(self, to: str, msg: Any, then: Callable[[ControllerResponse | None, int, OutputBuilder], None],
              out: OutputBuilder) -> None:
        request_id = next(self.ids)
        self.calls[request_id] = (type(msg).__name__, then)
        out.request(to, msg, request_id, timeout_ms=RPC_TIMEOUT_MS)

    def on_reply(self, request_id: int, msg: Any, now_ms: int, out: OutputBuilder) -> None:
        self.now_ms = now_ms
        name, then = self.calls.pop(request_id)
        response = msg if isinstance(msg, ControllerResponse) else None
        if name != "BrokerHeartbeatRequestHeader":
            out.trace("controller_call", request=name, code=None if response is None else response.code)
        if response is not None and response.code == Code.CONTROLLER_NOT_LEADER:
            self.leader = None
        then(response, now_ms, out)

    def _to_leader(self, msg: Any, then: Callable[[ControllerResponse | None, int, OutputBuilder], None],
                   out: OutputBuilder) -> None:
        if self.leader is None:
            then(None, self.now_ms, out)
            return
        self._call(self.leader, msg, then, out)

    # ------------------------------------------------------------------ timers
    def next_deadline_ms(self) -> int | None:
        times = [self.next_beat_ms, self.next_sync_ms, self.next_check_ms, self.next_leader_ms]
        if self.state != "RUNNING" and not self.busy:
            times.append(self.next_start_ms)
        if self.state == "RUNNING" and not self.busy and self.proposal_queue:
            times.append(self.now_ms)
        return min((t for t in times if t is not None), default=None)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        self.now_ms = now_ms
        if self.state != "RUNNING" and not self.busy and now_ms >= self.next_start_ms:
            self._start_basic_service(now_ms, out)
        if self.next_beat_ms is not None and now_ms >= self.next_beat_ms:
            self.next_beat_ms = now_ms + BROKER_HEARTBEAT_INTERVAL_MS
            self._send_heartbeats(out)
        if self.next_leader_ms is not None and now_ms >= self.next_leader_ms:
            self.next_leader_ms = now_ms + SYNC_CONTROLLER_METADATA_PERIOD_MS
            self._find_leader(lambda ok, now, out2: None, out)
        if self.state == "RUNNING" and not self.busy:
            if self.next_sync_ms is not None and now_ms >= self.next_sync_ms:
                self.next_sync_ms = now_ms + SYNC_BROKER_METADATA_PERIOD_MS
                self._sync_broker_metadata(out)
            elif self.next_check_ms is not None and now_ms >= self.next_check_ms:
                self.next_check_ms = now_ms + CHECK_SYNC_STATE_SET_PERIOD_MS
                if self.broker.role == "MASTER":
                    self._check_sync_state_set(now_ms, out)
            elif self.proposal_queue:
                self._report(self.proposal_queue.pop(0), out)

    # ------------------------------------------------------------------ start-up
    def _fail(self, now_ms: int, register_attempt: bool = False) -> None:
        """A start-up step failed: ``register`` is retried up to 5 times after a random pause under 1 s
        (brokers racing for the same id), anything else after ``RETRY_INTERVAL_SECOND`` (5 s)."""
        self.busy = False
        if register_attempt and self.register_attempts < 5:
            self.register_attempts += 1
            self.next_start_ms = now_ms + self.rng.randrange(1, 1000)
        else:
            self.register_attempts = 0
            self.next_start_ms = now_ms + RETRY_INTERVAL_MS

    def _start_basic_service(self, now_ms: int, out: OutputBuilder) -> None:
        self.busy = True
        self._find_leader(lambda ok, now, out2: self._register(now, out2) if ok else self._fail(now), out)

    def _find_leader(self, then: Callable[[bool, int, OutputBuilder], None], out: OutputBuilder) -> None:
        """``updateControllerMetadata``: ask every controller; the one that says it leads is the leader."""
        answers: dict[str, bool] = {}

        def answered(controller: str) -> Callable[[ControllerResponse | None, int, OutputBuilder], None]:
            def got(response: ControllerResponse | None, now_ms: int, out2: OutputBuilder) -> None:
                leads = response is not None and response.header is not None and response.header.is_leader
                answers[controller] = leads
                if len(answers) == len(self.controllers):
                    leaders = [c for c in self.controllers if answers[c]]
                    self.leader = leaders[0] if leaders else None
                    then(bool(leaders), now_ms, out2)
            return got

        for controller in self.controllers:
            self._call(controller, GetMetadataInfoRequest(), answered(controller), out)

    def _register(self, now_ms: int, out: OutputBuilder) -> None:
        if self.broker_id is not None:
            self._register_broker(now_ms, out)
            return

        def got_next(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            if response is None or response.code != Code.SUCCESS:
                return self._fail(now)
            broker_id = response.header.next_broker_id
            check = f"{self.node_id};{now}"

            def applied(response2: ControllerResponse | None, now2: int, out3: OutputBuilder) -> None:
                if response2 is None or response2.code != Code.SUCCESS:
                    return self._fail(now2, register_attempt=True)
                self._write_identity(broker_id)
                self.broker_id = broker_id
                self._register_broker(now2, out3)

            self._to_leader(ApplyBrokerIdRequestHeader(self.config.cluster_name, self.config.broker_name, broker_id,
                                                       check), applied, out2)

        self._to_leader(GetNextBrokerIdRequestHeader(self.config.cluster_name, self.config.broker_name), got_next, out)

    def _register_broker(self, now_ms: int, out: OutputBuilder) -> None:
        assert self.broker_id is not None
        self.broker.assign_broker_id(self.broker_id)

        def registered(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            if response is None or response.code != Code.SUCCESS:
                return self._fail(now)
            self.state = "REGISTER_TO_CONTROLLER_DONE"
            out2.trace("replicas_state", state=self.state, broker_id=self.broker_id)
            header, body = response.header, response.body
            self._send_heartbeats(out2)
            self.next_beat_ms = now + BROKER_HEARTBEAT_INTERVAL_MS
            if header.master_broker_id is not None:
                self._take_role(header.master_broker_id, header.master_address, header.master_epoch,
                                header.sync_state_set_epoch, set(body.sync_state_set), now, out2)
                self._running(now, out2)
            else:
                self._broker_elect(now, out2, starting=True)

        self._to_leader(RegisterBrokerToControllerRequestHeader(self.config.cluster_name, self.config.broker_name,
                                                                self.broker_id, self.node_id), registered, out)

    def _broker_elect(self, now_ms: int, out: OutputBuilder, starting: bool = False) -> None:
        def elected(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            ok = response is not None and response.code in (Code.SUCCESS, Code.CONTROLLER_MASTER_STILL_EXIST) \
                and response.header.master_broker_id is not None
            if ok:
                h = response.header
                self._take_role(h.master_broker_id, h.master_address, h.master_epoch, h.sync_state_set_epoch,
                                set(response.body.sync_state_set), now, out2)
            if starting:
                if ok:
                    self._running(now, out2)
                else:
                    self._fail(now)
            else:
                self.busy = False

        self._to_leader(ElectMasterRequestHeader.of_broker_trigger(self.config.cluster_name, self.config.broker_name,
                                                                    self.broker_id), elected, out)

    def _running(self, now_ms: int, out: OutputBuilder) -> None:
        self.state, self.busy = "RUNNING", False
        out.trace("replicas_state", state=self.state, broker_id=self.broker_id)
        self.next_sync_ms = now_ms + FIRST_SYNC_DELAY_MS
        self.next_check_ms = now_ms + FIRST_SYNC_DELAY_MS
        self.next_leader_ms = now_ms + SYNC_CONTROLLER_METADATA_PERIOD_MS

    # ------------------------------------------------------------------ roles
    def _take_role(self, master_id: int, master_address: str | None, master_epoch: int, sss_epoch: int,
                   sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None:
        """``changeToMaster`` / ``changeToSlave``: only for a master epoch above the one this broker knows
        (a restarted broker knows 0, so the controller's current epoch is taken again - and, as in Java, a
        master restarted at the same epoch rewrites that epoch's entry at its max offset)."""
        if master_epoch <= self.master_epoch:
            return
        self.master_epoch = master_epoch
        if master_id == self.broker_id:
            self.sync_state_set, self.sync_state_set_epoch = set(sync_state_set), sss_epoch
            self.broker.become_master(master_epoch, sync_state_set, now_ms, out)
        elif master_address is not None:
            self.broker.become_slave(master_address, master_epoch, now_ms, out)
        self.master_broker_id = master_id

    def on_role_changed(self, master_id: int | None, master_address: str | None, master_epoch: int, sss_epoch: int,
                        sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None:
        """NOTIFY_BROKER_ROLE_CHANGED (``changeBrokerRole``): acted on only for a newer master epoch."""
        if master_id is not None and self.broker_id is not None:
            self._take_role(master_id, master_address, master_epoch, sss_epoch, sync_state_set, now_ms, out)

    def _sync_broker_metadata(self, out: OutputBuilder) -> None:
        self.busy = True

        def got(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            self.busy = False
            if response is None:
                return
            if response.code == Code.CONTROLLER_BROKER_METADATA_NOT_EXIST:
                self.state, self.next_start_ms = "FIRST_TIME_SYNC_CONTROLLER_METADATA_DONE", now  # register again
                return
            if response.code != Code.SUCCESS:
                return
            h, body = response.header, response.body
            if h.master_epoch > self.master_epoch:
                if h.master_broker_id is None:
                    self.busy = True
                    self._broker_elect(now, out2)
                else:
                    self._take_role(h.master_broker_id, h.master_address, h.master_epoch, body.sync_state_set_epoch,
                                    set(body.sync_state_set), now, out2)
            elif h.master_epoch == self.master_epoch and self.broker.role == "MASTER" \
                    and body.sync_state_set_epoch > self.sync_state_set_epoch:
                self._change_sync_state_set(set(body.sync_state_set), body.sync_state_set_epoch)

        self._to_leader(GetReplicaInfoRequestHeader(self.config.broker_name), got, out)

    # ------------------------------------------------------------------ the SyncStateSet
    def _change_sync_state_set(self, members: set[int], epoch: int) -> None:
        if epoch > self.sync_state_set_epoch or members != self.sync_state_set:
            self.sync_state_set, self.sync_state_set_epoch = set(members), epoch
            self.broker.ha_service.set_sync_state_set(members)

    def on_proposals(self, proposals: list[set[int]]) -> None:
        """The HA service proposed sets (``notifySyncStateSetChanged``): report them in order."""
        self.proposal_queue.extend(proposals)

    def _check_sync_state_set(self, now_ms: int, out: OutputBuilder) -> None:
        """``checkSyncStateSetAndDoReport``: shrink, and report if the set changed."""
        new = self.broker.ha_service.maybe_shrink_sync_state_set(now_ms, out)
        self.broker.ha_service.drain_proposals()  # the shrink's own proposal: reported right here
        new.add(self.broker_id)
        if new != self.sync_state_set:
            self._report(new, out)

    def _report(self, members: set[int], out: OutputBuilder) -> None:
        """``doReportSyncStateSetChanged``: ALTER_SYNC_STATE_SET with our epochs; set what is accepted."""
        if self.broker.role != "MASTER" or self.broker_id is None:
            return
        self.busy = True
        request = AlterSyncStateSetRequest(AlterSyncStateSetRequestHeader(self.config.broker_name, self.broker_id,
                                                                          self.master_epoch),
                                           SyncStateSet(frozenset(members), self.sync_state_set_epoch))

        def answered(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            self.busy = False
            if response is not None and response.code == Code.SUCCESS:
                self._change_sync_state_set(set(response.body.sync_state_set), response.body.sync_state_set_epoch)

        self._to_leader(request, answered, out)

    # ------------------------------------------------------------------ heartbeats
    def _send_heartbeats(self, out: OutputBuilder) -> None:
        if self.broker_id is None:
            return
        epoch, max_offset, confirm = self.broker.heartbeat_facts()
        beat = BrokerHeartbeatRequestHeader(self.config.cluster_name, self.node_id, self.config.broker_name,
                                            self.broker_id, epoch, max_offset, confirm, self.config.heartbeat_timeout_ms,
                                            self.config.election_priority)
        for controller in self.controllers:
            self._call(controller, beat, lambda response, now, out2: None, out)
