"""ReplicasManager, RocketMQ 5.3.3 (``broker/.../controller/ReplicasManager.java``), sans-IO: how a
controller-mode broker learns its id and its role from the controllers and reports its SyncStateSet.

Start-up (``startBasicService``): a state machine that resumes where it stopped, retried every 5 s until
it gets through:

* ``INITIAL``: find the controller leader (``updateControllerMetadata``, up to 3 tries 1 s apart): the
  first controller to answer ``CONTROLLER_GET_METADATA_INFO`` with a leader address names it; then the
  address is refreshed 3 s later and every ``syncControllerMetadataPeriod`` (10 s);
* ``FIRST_TIME_SYNC_CONTROLLER_METADATA_DONE``: register (up to 5 tries, a random pause under 1 s
  between them) - a broker with a ``brokerIdentity`` file reuses its id, otherwise ``GET_NEXT_BROKER_ID``
  then ``APPLY_BROKER_ID`` (check code ``"<address>;<now>"``) and the file is written - then
  ``REGISTER_BROKER``, whose answer names the master if one is alive (the broker takes its role at once);
* ``REGISTER_TO_CONTROLLER_DONE``: one heartbeat; if no master is known yet, ``brokerElect`` (a
  broker-triggered election; SUCCESS and CONTROLLER_MASTER_STILL_EXIST both count); with a master known
  the broker is unfenced (``setFenced(false)``) and RUNNING.

While running: a heartbeat to every controller every ``brokerHeartbeatInterval`` (1 s: epoch = last epoch
of the epoch file, max offset, confirm offset, timeout ``controllerHeartBeatTimeoutMills`` 10 s, election
priority) - **skipped while the broker is fenced** (``BrokerController.isIsolated``: only start-up's own
heartbeat goes out then); ``syncBrokerMetadata`` every 5 s (first after 3 s): a higher master epoch at the
controller changes the role (or triggers ``brokerElect`` if the controller has no master), the same epoch
with a newer SyncStateSet epoch is adopted by a master; a master runs ``checkSyncStateSetAndDoReport`` at
once when it takes the role and then every 5 s (first after 3 s): shrink, and report; every proposal of
the HA service is reported with ``ALTER_SYNC_STATE_SET``, and the set the controller answers is adopted
if its epoch is newer; ``NOTIFY_BROKER_ROLE_CHANGED`` with a higher epoch changes the role at once. A
controller answering CONTROLLER_NOT_LEADER does not make the broker look for the leader (as in Java: the
periodic refresh finds the new one).

Role changes (``changeToMaster`` / ``changeToSlave``) act only for a master epoch above the one this
broker knows (a restarted broker knows 0). A master that stays master (``masterBrokerId`` is itself)
only gets a new epoch entry; a slave whose master stays (``masterBrokerId`` unchanged) only the epoch.
The SyncStateSet given with a role is adopted before the HA service changes (``changeSyncStateSet``, only
for a newer SyncStateSet epoch) - the order RocketMQ relies on for its confirm offset.

Trace events: ``replicas_state`` (state, broker id), ``controller_call`` (request, code).

Simplified: the master's HA address is its node id (Java learns it from the NameServer); one request to a
controller is in flight at a time per task chain (Java's calls are synchronous within each scheduled
task); the controller leader is looked up by asking every controller at once and taking the first answer
that names a leader (Java asks the reachable ones in turn; its reachability scan every 3 s keeps the dead
ones out of that list); the registration temp file (``brokerIdentity-temp`` with the check code) is not
written, only the final one.
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
METADATA_RETRY_MS = 1_000
METADATA_TRIES = 3
REGISTER_TRIES = 5
RPC_TIMEOUT_MS = 3_000

Then = Callable[[ControllerResponse | None, int, OutputBuilder], None]


@dataclass(frozen=True)
class ReplicasManagerConfig:
    cluster_name: str = "DefaultCluster"
    broker_name: str = "broker-a"
    election_priority: int | None = None
    heartbeat_timeout_ms: int = CONTROLLER_HEARTBEAT_TIMEOUT_MS


class BrokerRoleTarget(Protocol):
    """What ReplicasManager drives: the broker core (see :class:`~rocketlab.broker.auto_switch_broker.AutoSwitchBrokerCore`)."""

    role: str
    fenced: bool
    ha_service: Any

    def assign_broker_id(self, broker_id: int) -> None: ...

    def set_fenced(self, fenced: bool) -> None: ...

    def become_master(self, epoch: int, sync_state_set: set[int] | None, now_ms: int, out: OutputBuilder) -> None: ...

    def become_slave(self, master: str, epoch: int, master_unchanged: bool, now_ms: int,
                     out: OutputBuilder) -> None: ...

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
        self.leader: str | None = None  # controllerLeaderAddress
        self.master_epoch = 0
        self.sync_state_set_epoch = 0
        self.sync_state_set: set[int] = set()
        self.master_broker_id: int | None = None
        self.ids = iter(range(REQUEST_BASE, REQUEST_BASE + (1 << 40)))
        self.calls: dict[int, tuple[str, Then]] = {}
        self.busy = False  # one controller call chain at a time
        self.next_start_ms: int | None = 0
        self.next_beat_ms: int | None = None
        self.next_sync_ms: int | None = None
        self.next_check_ms: int | None = None
        self.check_now = False  # the check a new master submits at once
        self.next_leader_ms: int | None = None
        self.proposal_queue: list[set[int]] = []
        self.now_ms = 0
        self.metadata_tries = 0
        self.register_tries = 0
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

    def _call(self, to: str, msg: Any, then: Then, out: OutputBuilder) -> None:
        request_id = next(self.ids)
        self.calls[request_id] = (type(msg).__name__, then)
        out.request(to, msg, request_id, timeout_ms=RPC_TIMEOUT_MS)

    def on_reply(self, request_id: int, msg: Any, now_ms: int, out: OutputBuilder) -> None:
        self.now_ms = now_ms
        name, then = self.calls.pop(request_id)
        response = msg if isinstance(msg, ControllerResponse) else None
        if name != "BrokerHeartbeatRequestHeader":
            out.trace("controller_call", request=name, code=None if response is None else response.code)
        then(response, now_ms, out)

    def _to_leader(self, msg: Any, then: Then, out: OutputBuilder) -> None:
        if self.leader is None:
            then(None, self.now_ms, out)
            return
        self._call(self.leader, msg, then, out)

    # ------------------------------------------------------------------ timers
    def on_start(self, now_ms: int, out: OutputBuilder) -> None:
        """``BrokerController.start``: the heartbeat task (1 s, then every second; it skips while fenced)
        and ``ReplicasManager.start`` (``startBasicService`` at once)."""
        self.now_ms = now_ms
        self.next_beat_ms = now_ms + BROKER_HEARTBEAT_INTERVAL_MS
        self.next_start_ms = now_ms
        self.on_tick(now_ms, out)

    def next_deadline_ms(self) -> int | None:
        times = [self.next_beat_ms, self.next_leader_ms]
        if not self.busy:
            times += [self.next_start_ms, self.next_sync_ms, self.next_check_ms]
            if self.check_now or (self.state == "RUNNING" and self.proposal_queue):
                times.append(self.now_ms)
        return min((t for t in times if t is not None), default=None)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        self.now_ms = now_ms
        if self.next_beat_ms is not None and now_ms >= self.next_beat_ms:
            self.next_beat_ms = now_ms + BROKER_HEARTBEAT_INTERVAL_MS
            if not self.broker.fenced:
                self._send_heartbeats(out)
        if self.next_leader_ms is not None and now_ms >= self.next_leader_ms:
            self.next_leader_ms = now_ms + SYNC_CONTROLLER_METADATA_PERIOD_MS
            self._update_controller_metadata(lambda ok, now, out2: None, out)
        if self.busy:
            return
        if self.next_start_ms is not None and now_ms >= self.next_start_ms:
            self.next_start_ms = None
            self._start_basic_service(now_ms, out)
        elif self.next_sync_ms is not None and now_ms >= self.next_sync_ms:
            self.next_sync_ms = now_ms + SYNC_BROKER_METADATA_PERIOD_MS
            self._sync_broker_metadata(out)
        elif self.check_now or (self.next_check_ms is not None and now_ms >= self.next_check_ms):
            if not self.check_now:
                self.next_check_ms = now_ms + CHECK_SYNC_STATE_SET_PERIOD_MS
            self.check_now = False
            if self.broker.role == "MASTER":
                self._check_sync_state_set(now_ms, out)
        elif self.state == "RUNNING" and self.proposal_queue:
            self._report(self.proposal_queue.pop(0), out)

    # ------------------------------------------------------------------ start-up
    def _retry_later(self, now_ms: int) -> None:
        """``startBasicService`` returned false: the next attempt in ``RETRY_INTERVAL_SECOND`` (5 s)."""
        self.busy = False
        self.next_start_ms = now_ms + RETRY_INTERVAL_MS
        self.metadata_tries = self.register_tries = 0

    def _set_state(self, state: str, out: OutputBuilder) -> None:
        self.state = state
        out.trace("replicas_state", state=state, broker_id=self.broker_id)

    def _start_basic_service(self, now_ms: int, out: OutputBuilder) -> None:
        self.busy = True
        if self.state == "INITIAL":
            self._sync_controller_metadata(out)
        elif self.state == "FIRST_TIME_SYNC_CONTROLLER_METADATA_DONE":
            self._register(now_ms, out)
        elif self.state == "REGISTER_TO_CONTROLLER_DONE":
            self._elect_or_run(now_ms, out)
        else:
            self.busy = False

    def _sync_controller_metadata(self, out: OutputBuilder) -> None:
        """``schedulingSyncControllerMetadata``: up to 3 tries, 1 s apart."""
        def found(ok: bool, now: int, out2: OutputBuilder) -> None:
            if ok:
                self._set_state("FIRST_TIME_SYNC_CONTROLLER_METADATA_DONE", out2)
                self.next_leader_ms = now + FIRST_SYNC_DELAY_MS
                self.metadata_tries = 0
                self._register(now, out2)
                return
            self.metadata_tries += 1
            if self.metadata_tries < METADATA_TRIES:
                self.busy, self.next_start_ms = False, now + METADATA_RETRY_MS  # the same step again
            else:
                self._retry_later(now)

        self._update_controller_metadata(found, out)

    def _update_controller_metadata(self, then: Callable[[bool, int, OutputBuilder], None],
                                    out: OutputBuilder) -> None:
        """``updateControllerMetadata``: the first controller that names a leader address wins."""
        answers: dict[str, bool] = {}
        done = [False]

        def answered(controller: str) -> Then:
            def got(response: ControllerResponse | None, now_ms: int, out2: OutputBuilder) -> None:
                address = None
                if response is not None and response.code == Code.SUCCESS and response.header is not None:
                    address = response.header.controller_leader_address
                answers[controller] = bool(address)
                if done[0]:
                    return
                if address:
                    done[0] = True
                    self.leader = address
                    then(True, now_ms, out2)
                elif len(answers) == len(self.controllers):
                    done[0] = True
                    then(False, now_ms, out2)
            return got

        for controller in self.controllers:
            self._call(controller, GetMetadataInfoRequest(), answered(controller), out)

    def _register(self, now_ms: int, out: OutputBuilder) -> None:
        """``register``: one try; a failed try is repeated after a random pause under 1 s, 5 tries in all."""
        def failed(now: int) -> None:
            self.register_tries += 1
            if self.register_tries < REGISTER_TRIES:
                self.busy = False
                self.next_start_ms = now + self.rng.randrange(1, 1000)  # resumes in this state
            else:
                self._retry_later(now)

        def registered(ok: bool, now: int, out2: OutputBuilder) -> None:
            if not ok:
                return failed(now)
            self.register_tries = 0
            self._set_state("REGISTER_TO_CONTROLLER_DONE", out2)
            self._elect_or_run(now, out2)

        if self.broker_id is not None:
            self._register_broker(registered, out)
            return

        def got_next(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            if response is None or response.code != Code.SUCCESS:
                return failed(now)
            broker_id = response.header.next_broker_id
            check = f"{self.node_id};{now}"

            def applied(response2: ControllerResponse | None, now2: int, out3: OutputBuilder) -> None:
                if response2 is None or response2.code != Code.SUCCESS:
                    return failed(now2)
                self._write_identity(broker_id)
                self.broker_id = broker_id
                self._register_broker(registered, out3)

            self._to_leader(ApplyBrokerIdRequestHeader(self.config.cluster_name, self.config.broker_name, broker_id,
                                                       check), applied, out2)

        self._to_leader(GetNextBrokerIdRequestHeader(self.config.cluster_name, self.config.broker_name), got_next, out)

    def _register_broker(self, then: Callable[[bool, int, OutputBuilder], None], out: OutputBuilder) -> None:
        """``registerBrokerToController``: the answer names the master if one is alive: take that role."""
        assert self.broker_id is not None
        self.broker.assign_broker_id(self.broker_id)

        def registered(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            if response is None or response.code != Code.SUCCESS:
                return then(False, now, out2)
            header, body = response.header, response.body
            if header.master_broker_id is not None:
                self._take_role(header.master_broker_id, header.master_address, header.master_epoch,
                                header.sync_state_set_epoch, set(body.sync_state_set), now, out2)
            then(True, now, out2)

        self._to_leader(RegisterBrokerToControllerRequestHeader(self.config.cluster_name, self.config.broker_name,
                                                                self.broker_id, self.node_id), registered, out)

    def _elect_or_run(self, now_ms: int, out: OutputBuilder) -> None:
        """``REGISTER_TO_CONTROLLER_DONE``: one heartbeat, then RUNNING once a master is known."""
        self._send_heartbeats(out)
        if self.master_broker_id is not None:
            self._running(now_ms, out)
            return

        def elected(ok: bool, now: int, out2: OutputBuilder) -> None:
            if ok:
                self._running(now, out2)
            else:
                self._retry_later(now)

        self._broker_elect(elected, out)

    def _broker_elect(self, then: Callable[[bool, int, OutputBuilder], None], out: OutputBuilder) -> None:
        """``brokerElect``: ask the controller to elect; take whatever role its answer gives."""
        def answered(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            ok = response is not None and response.code in (Code.SUCCESS, Code.CONTROLLER_MASTER_STILL_EXIST) \
                and response.header.master_broker_id is not None and bool(response.header.master_address)
            if ok:
                h = response.header
                self._take_role(h.master_broker_id, h.master_address, h.master_epoch, h.sync_state_set_epoch,
                                set(response.body.sync_state_set), now, out2)
            then(ok, now, out2)

        self._to_leader(ElectMasterRequestHeader.of_broker_trigger(self.config.cluster_name, self.config.broker_name,
                                                                    self.broker_id), answered, out)

    def _running(self, now_ms: int, out: OutputBuilder) -> None:
        self.busy = False
        self._set_state("RUNNING", out)
        self.broker.set_fenced(False)
        self.next_sync_ms = now_ms + FIRST_SYNC_DELAY_MS  # schedulingSyncBrokerMetadata

    # ------------------------------------------------------------------ roles
    def _take_role(self, master_id: int, master_address: str | None, master_epoch: int, sss_epoch: int,
                   sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None:
        if master_id == self.broker_id:
            self._change_to_master(master_epoch, sss_epoch, sync_state_set, now_ms, out)
        elif master_address:
            self._change_to_slave(master_address, master_epoch, master_id, now_ms, out)

    def _change_to_master(self, epoch: int, sss_epoch: int, sync_state_set: set[int], now_ms: int,
                          out: OutputBuilder) -> None:
        """``changeToMaster``: the SyncStateSet first, then the broker (see the module docstring)."""
        if epoch <= self.master_epoch:
            return
        self.master_epoch = epoch
        members = self._change_sync_state_set(sync_state_set, sss_epoch)
        stays = self.master_broker_id == self.broker_id and self.broker.role == "MASTER"
        self.broker.become_master(epoch, members, now_ms, out)
        self.master_broker_id = self.broker_id
        if not stays:
            self.next_check_ms = now_ms + FIRST_SYNC_DELAY_MS  # schedulingCheckSyncStateSet
        self.check_now = True  # executorService.submit(checkSyncStateSetAndDoReport)

    def _change_to_slave(self, master_address: str, epoch: int, master_id: int, now_ms: int,
                         out: OutputBuilder) -> None:
        """``changeToSlave``: the same master only bumps the epoch; a new one is followed."""
        if epoch <= self.master_epoch:
            return
        self.master_epoch = epoch
        unchanged = master_id == self.master_broker_id
        if not unchanged:
            self.next_check_ms, self.check_now = None, False  # stopCheckSyncStateSet
        self.broker.become_slave(master_address, epoch, unchanged, now_ms, out)
        self.master_broker_id = master_id

    def on_role_changed(self, master_id: int | None, master_address: str | None, master_epoch: int, sss_epoch: int,
                        sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None:
        """NOTIFY_BROKER_ROLE_CHANGED (``changeBrokerRole``): acted on only for a newer master epoch."""
        self.now_ms = now_ms
        if master_id is not None and self.broker_id is not None:
            self._take_role(master_id, master_address, master_epoch, sss_epoch, sync_state_set, now_ms, out)

    def _sync_broker_metadata(self, out: OutputBuilder) -> None:
        self.busy = True

        def got(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            self.busy = False
            if response is None:
                return
            if response.code == Code.CONTROLLER_BROKER_METADATA_NOT_EXIST:
                self.busy = True  # registerBrokerToController again
                self._register_broker(lambda ok, now2, out3: setattr(self, "busy", False), out2)
                return
            if response.code != Code.SUCCESS:
                return
            h, body = response.header, response.body
            if h.master_epoch > self.master_epoch:
                if h.master_broker_id is None or not h.master_address:
                    self.busy = True
                    self._broker_elect(lambda ok, now2, out3: setattr(self, "busy", False), out2)
                else:
                    self._take_role(h.master_broker_id, h.master_address, h.master_epoch, body.sync_state_set_epoch,
                                    set(body.sync_state_set), now, out2)
            elif h.master_epoch == self.master_epoch and self.broker.role == "MASTER":
                members = self._change_sync_state_set(set(body.sync_state_set), body.sync_state_set_epoch)
                if members is not None:
                    self.broker.ha_service.set_sync_state_set(members)

        self._to_leader(GetReplicaInfoRequestHeader(self.config.broker_name), got, out)

    # ------------------------------------------------------------------ the SyncStateSet
    def _change_sync_state_set(self, members: set[int], epoch: int) -> set[int] | None:
        """``changeSyncStateSet``: a set with a newer epoch is recorded here and returned (for the HA
        service); an older or equal epoch is ignored (None)."""
        if epoch <= self.sync_state_set_epoch:
            return None
        self.sync_state_set, self.sync_state_set_epoch = set(members), epoch
        return set(members)

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
        """``doReportSyncStateSetChanged``: ALTER_SYNC_STATE_SET with our epochs; adopt what is accepted."""
        if self.broker_id is None:
            return
        self.busy = True
        request = AlterSyncStateSetRequest(AlterSyncStateSetRequestHeader(self.config.broker_name, self.broker_id,
                                                                          self.master_epoch),
                                           SyncStateSet(frozenset(members), self.sync_state_set_epoch))

        def answered(response: ControllerResponse | None, now: int, out2: OutputBuilder) -> None:
            self.busy = False
            if response is not None and response.code == Code.SUCCESS:
                adopted = self._change_sync_state_set(set(response.body.sync_state_set),
                                                      response.body.sync_state_set_epoch)
                if adopted is not None:
                    self.broker.ha_service.set_sync_state_set(adopted)

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
