"""ControllerCore: one controller of RocketMQ 5's controller mode, its metadata replicated by our DLedger.

Theory of operation
-------------------
Models ``ControllerManager`` + ``DLedgerController`` (RocketMQ 5.3.3). The controllers form a DLedger
group (``group="controller"``, DLedger 0.3.1.2 as RocketMQ ships it, Java's timers unless overridden);
each core owns its DLedger member (:attr:`server`), a :class:`ReplicasInfoManager` (the state machine),
its own heartbeat table and a ``DefaultElectPolicy`` reading that table.

* **Writes and reads go through one queue** (``EventScheduler``: single-threaded, FIFO): a request is
  refused with ``CONTROLLER_NOT_LEADER`` (2007) unless this controller is in *leader state*; otherwise the
  manager validates it against its memory. A read or a refusal is answered at once; a request that
  produced events appends them to DLedger as one batch (one entry per event, ``EventSerializer`` bytes)
  and waits - the queue stays blocked - until the batch is acknowledged by a quorum (then answered with
  the validation's result) or fails or 5 s pass (``appendToDLedgerAndWait``; answered ``SYSTEM_ERROR``:
  the outcome is unknown, the entries may still commit).
* **Apply on commit, on every controller**: after every input, committed entries beyond the last applied
  one are decoded and applied (``DLedgerControllerStateMachine.onApply``); empty entries are skipped.
* **Leader state**: when its DLedger member becomes LEADER, the controller appends an empty entry and
  starts serving only once that commits (everything committed before is then applied); it retries while
  it leads. Any other role leaves leader state at once.
* **Liveness**: heartbeats (any controller) update the heartbeat table and are answered SUCCESS (the
  connection a broker's first heartbeat came on is its channel). A broker is inactive two ways:

  - its **channel closes** (its process died: ``BrokerHousekeepingService.onChannelClose`` ->
    ``DefaultBrokerHeartbeatManager.onBrokerChannelClose``, the runtime's ``on_peer_closed``): at once,
    on every controller;
  - its **heartbeats stop** (a dead host, a cut network): ``scanNotActiveBroker`` runs 2 s after start and
    every ``scanNotActiveBrokerInterval`` and finds it ``controllerHeartBeatTimeoutMills`` (10 s) after
    its last heartbeat.

  Either way (``ControllerManager.onBrokerInactive``) the leader checks whether it was the master and, if
  so, triggers a controller election (``electMasterMaxRetryCount`` attempts while the answer is not
  SUCCESS). The leader also scans every ``scanInactiveMasterInterval`` for sets whose master is dead while
  a replica lives (#6382's fix).
* **Notification**: every successful election - the controller's own, a broker's or an admin's
  (``ControllerRequestProcessor.handleControllerElectMaster``) - is pushed to the set's live members with
  a oneway ``NOTIFY_BROKER_ROLE_CHANGED`` (``notifyBrokerRoleChanged``).

Trace events: ``controller_apply`` (index, event type, broker set; ``members`` of a new SyncStateSet,
``master`` of an election, the set's ``master_epoch`` after it) when an event is applied,
``controller_leader`` (term) when leader state begins, ``controller_request`` (request, code) per answer,
``broker_inactive`` (broker set, id, reason: ``channel closed`` or ``heartbeat timeout``).

Simplified: broker addresses are node ids (a notification is sent to the address the broker registered); a
channel is the peer's node id (Java's is the connection: the same as long as a broker has one connection
to each controller, which it does); no ``isProcessReadEvent``, metrics or JRaft; Netty's idle check
(``serverChannelMaxIdleTimeSeconds``, 120 s) is not modelled.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rocketlab.controller.config import ControllerConfig
from rocketlab.controller.elect_policy import DefaultElectPolicy
from rocketlab.controller.events import AlterSyncStateSetEvent, ElectMasterEvent, EventSerializer
from rocketlab.controller.heartbeat_manager import DefaultBrokerHeartbeatManager
from rocketlab.controller.protocol import (
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ControllerResponseCode,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from rocketlab.controller.replicas_info_manager import ControllerResult, ReplicasInfoManager
from rocketlab.controller.wire import (
    AlterSyncStateSetRequest,
    ControllerMetadata,
    ControllerResponse,
    GetMetadataInfoRequest,
    GetSyncStateDataRequest,
    NotifyBrokerRoleChanged,
)
from rocketlab.core import EMPTY, BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.dledger.config import members_peers
from rocketlab.dledger.entry import MAGIC_NOOP
from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.dledger.protocol import MESSAGE_TYPES as DLEDGER_MESSAGES
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.dledger.server import DLedgerServer, make_dledger_server
from rocketlab.errors import CodecError

Code = ControllerResponseCode
SYSTEM_ERROR = 1
"""``ResponseCode.SYSTEM_ERROR``: what a broker sees when the controller could not finish a request."""
APPEND_TIMEOUT_MS = 5_000
FIRST_SCAN_DELAY_MS = 2_000
CONTROLLER_GROUP = "controller"
_DLEDGER_TYPES = frozenset(DLEDGER_MESSAGES)
_WRITES = (ElectMasterRequestHeader, AlterSyncStateSetRequest, ApplyBrokerIdRequestHeader,
           RegisterBrokerToControllerRequestHeader, CleanControllerBrokerDataRequestHeader)


@dataclass(frozen=True)
class ControllerNodeConfig:
    """A controller node: ControllerConfig fields, DLedger overrides (``dledger``) and the controller
    node ids (default: the node and all its peers)."""

    controller: ControllerConfig = field(default_factory=ControllerConfig)
    dledger: Mapping[str, Any] = field(default_factory=dict)
    controller_ids: tuple[str, ...] = ()


@dataclass
class _Job:
    """One queued request: from a broker (``src``/``request_id``) or the controller's own trigger."""

    msg: Any
    src: str | None = None
    request_id: int = 0
    attempts_left: int = 0  # for controller-triggered elections


@dataclass
class _InFlight:
    job: _Job
    result: ControllerResult[Any]
    future: AppendFuture
    deadline_ms: int


class ControllerCore(BaseCore):
    """One controller (see the module docstring). Inspection: :attr:`server` (its DLedger member),
    :attr:`manager`, :attr:`heartbeats`, :attr:`leader_state`, :attr:`applied_index`."""

    def __init__(self, ctx: NodeContext, config: ControllerNodeConfig) -> None:
        self.node_id = ctx.node_id
        self.config = config.controller
        ids = config.controller_ids or tuple(sorted(set(ctx.peers) | {ctx.node_id}))
        dledger = {"group": CONTROLLER_GROUP, "peers": members_peers(ids), **dict(config.dledger)}
        self.server: DLedgerServer = make_dledger_server(ctx, dledger)
        self.manager = ReplicasInfoManager(self.config)
        self.heartbeats = DefaultBrokerHeartbeatManager()
        self.serializer = EventSerializer()
        self.applied_index = -1
        self.now_ms = 0
        self.ready_term: int | None = None
        self.empty_entry: tuple[int, AppendFuture] | None = None  # (term, future) of the leader's empty entry
        self.queue: deque[_Job] = deque()
        self.in_flight: _InFlight | None = None
        self.next_broker_scan_ms = 0
        self.next_master_scan_ms: int | None = None

    # ------------------------------------------------------------------ inspection
    @property
    def role(self) -> str:
        return self.server.role

    @property
    def term(self) -> int:
        return self.server.term

    @property
    def leader_state(self) -> bool:
        return self.ready_term is not None

    def alive(self, cluster: str | None, broker_name: str, broker_id: int) -> bool:
        return self.heartbeats.is_broker_active(self.now_ms, cluster, broker_name, broker_id)

    def policy(self) -> DefaultElectPolicy:
        return DefaultElectPolicy(self.alive, self.heartbeats.get_broker_live_info)

    # ------------------------------------------------------------------ inputs
    def on_start(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        self.next_broker_scan_ms = now_ms + FIRST_SCAN_DELAY_MS
        return self._finish(self.server.on_start(now_ms), OutputBuilder())

    def on_stop(self) -> None:
        self.server.on_stop()

    def on_crash(self, lose_unflushed: bool = False) -> None:
        self.server.on_crash(lose_unflushed)

    def on_tick(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        server_out = self.server.on_tick(now_ms)
        if now_ms >= self.next_broker_scan_ms:
            self.next_broker_scan_ms = now_ms + self.config.scan_not_active_broker_interval
            for cluster, name, broker_id in self.heartbeats.scan_not_active_broker(now_ms):
                out.trace("broker_inactive", broker_name=name, broker_id=broker_id, reason="heartbeat timeout")
                self._on_broker_inactive(cluster, name, broker_id)
        if self.next_master_scan_ms is not None and now_ms >= self.next_master_scan_ms:
            self.next_master_scan_ms = now_ms + self.config.scan_inactive_master_interval
            if self.leader_state:
                for name in self.manager.scan_need_reelect_broker_sets(self.alive):
                    self._trigger_elect_master(name)
        if self.in_flight is not None and now_ms >= self.in_flight.deadline_ms:
            job, self.in_flight = self.in_flight.job, None
            self._answer(job, ControllerResponse(SYSTEM_ERROR, "append to DLedger timed out"), out)
        return self._finish(server_out, out)

    def next_deadline_ms(self) -> int | None:
        times = [self.server.next_deadline_ms(), self.next_broker_scan_ms, self.next_master_scan_ms]
        if self.in_flight is not None:
            times.append(self.in_flight.deadline_ms)
        present = [t for t in times if t is not None]
        return min(present) if present else None

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.now_ms = now_ms
        if type(msg) in _DLEDGER_TYPES:
            return self._finish(self.server.on_request(src, request_id, msg, now_ms), OutputBuilder())
        out = OutputBuilder()
        if isinstance(msg, BrokerHeartbeatRequestHeader):
            self._heartbeat(msg, src)
            out.reply(src, request_id, ControllerResponse(Code.SUCCESS if msg.broker_id is not None
                                                          else Code.CONTROLLER_INVALID_REQUEST))
        elif isinstance(msg, GetMetadataInfoRequest):
            leader = self.server.leader_id
            out.reply(src, request_id, ControllerResponse(Code.SUCCESS, header=ControllerMetadata(
                CONTROLLER_GROUP, leader, leader, self.leader_state, self.server.config.peers)))
        else:
            self.queue.append(_Job(msg, src, request_id))
        return self._finish(EMPTY, out)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        self.now_ms = now_ms
        return self._finish(self.server.on_reply(src, request_id, msg, now_ms), OutputBuilder())

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        self.now_ms = now_ms
        return EMPTY

    def on_peer_closed(self, peer: str, now_ms: int) -> Output:
        """A connection closed (``BrokerHousekeepingService.onChannelClose``): if a broker heartbeated on it,
        it is inactive now (``onBrokerChannelClose``) and, if it was the master, the leader elects another."""
        self.now_ms = now_ms
        out = OutputBuilder()
        identity = self.heartbeats.on_broker_channel_close(peer)
        if identity is not None:
            cluster, name, broker_id = identity
            out.trace("broker_inactive", broker_name=name, broker_id=broker_id, reason="channel closed")
            self._on_broker_inactive(cluster, name, broker_id)
        return self._finish(EMPTY, out)

    # ------------------------------------------------------------------ the loop after every input
    def _finish(self, server_out: Output, out: OutputBuilder) -> Output:
        self._apply_committed(out)
        self._track_leadership(out)
        self._complete_in_flight(out)
        self._run_queue(out)
        return server_out + out.build()

    def _apply_committed(self, out: OutputBuilder) -> None:
        committed = min(self.server.committed_index, self.server.ledger_end_index)
        if committed <= self.applied_index:
            return
        for entry in self.server.entries(max(self.applied_index + 1, self.server.ledger_begin_index), committed):
            self.applied_index = entry.index
            if entry.magic == MAGIC_NOOP or not entry.body:
                continue
            try:
                event = self.serializer.deserialize(entry.body)
            except CodecError as e:
                out.trace("controller_apply_error", index=entry.index, error=str(e))
                continue
            self.manager.apply_event(event)
            details: dict[str, Any] = {}
            if isinstance(event, AlterSyncStateSetEvent):
                details["members"] = sorted(event.new_sync_state_set)
            elif isinstance(event, ElectMasterEvent):
                details["master"] = event.new_master_broker_id if event.new_master_elected else None
            info = self.manager.sync_state_set_info_table.get(event.broker_name)
            if info is not None:
                details["master_epoch"] = info.master_epoch
            out.trace("controller_apply", index=entry.index, event=event.event_type.name,
                      broker_name=event.broker_name, **details)

    def _track_leadership(self, out: OutputBuilder) -> None:
        term = self.server.term
        if self.server.role != "LEADER":
            self.ready_term, self.empty_entry, self.next_master_scan_ms = None, None, None
            return
        if self.ready_term == term:
            return
        if self.empty_entry is not None and self.empty_entry[0] == term:
            future = self.empty_entry[1]
            if not future.done:
                return
            if future.code is DLedgerResponseCode.SUCCESS and future.index <= self.applied_index:
                self.ready_term, self.empty_entry = term, None
                self.next_master_scan_ms = self.now_ms + self.config.scan_inactive_master_interval
                out.trace("controller_leader", term=term)
                return
            if future.code is DLedgerResponseCode.SUCCESS:
                return  # acknowledged: wait until it is committed here and applied
        future, server_out = self.server.append(b"", self.now_ms)  # Java loops until it commits
        out.extend(server_out)
        self.empty_entry = (term, future)

    def _complete_in_flight(self, out: OutputBuilder) -> None:
        flight = self.in_flight
        if flight is None or not flight.future.done:
            return
        if flight.future.code is DLedgerResponseCode.SUCCESS and flight.future.index > self.applied_index:
            return  # acknowledged by a quorum; answer once applied here
        self.in_flight = None
        if flight.future.code is DLedgerResponseCode.SUCCESS:
            self._answer(flight.job, self._response(flight.result), out)
        else:
            self._answer(flight.job, ControllerResponse(SYSTEM_ERROR, f"append to DLedger failed: "
                                                                      f"{flight.future.code.name}"), out)

    def _run_queue(self, out: OutputBuilder) -> None:
        while self.queue and self.in_flight is None:
            job = self.queue.popleft()
            if not self.leader_state:
                self._answer(job, ControllerResponse(Code.CONTROLLER_NOT_LEADER, "The controller is not in leader state"),
                             out)
                continue
            result = self._validate(job.msg)
            if result is None:
                self._answer(job, ControllerResponse(Code.CONTROLLER_INVALID_REQUEST,
                                                     f"unknown request {type(job.msg).__name__}"), out)
                continue
            if not isinstance(job.msg, _WRITES) or not result.events:
                self._answer(job, self._response(result), out)
                continue
            bodies = [self.serializer.serialize(e) for e in result.events]
            future, server_out = self.server.append(bodies, self.now_ms)
            out.extend(server_out)
            self.in_flight = _InFlight(job, result, future, self.now_ms + APPEND_TIMEOUT_MS)
            self._complete_in_flight(out)  # refused at once (not leader, pending full): answer now

    def _validate(self, msg: Any) -> ControllerResult[Any] | None:
        m = self.manager
        if isinstance(msg, ElectMasterRequestHeader):
            return m.elect_master(msg, self.policy())
        if isinstance(msg, AlterSyncStateSetRequest):
            return m.alter_sync_state_set(msg.header, msg.sync_state_set, self.alive)
        if isinstance(msg, ApplyBrokerIdRequestHeader):
            return m.apply_broker_id(msg)
        if isinstance(msg, RegisterBrokerToControllerRequestHeader):
            return m.register_broker(msg, self.alive)
        if isinstance(msg, CleanControllerBrokerDataRequestHeader):
            return m.clean_broker_data(msg, self.alive)
        if isinstance(msg, GetReplicaInfoRequestHeader):
            return m.get_replica_info(msg)
        if isinstance(msg, GetNextBrokerIdRequestHeader):
            return m.get_next_broker_id(msg)
        if isinstance(msg, GetSyncStateDataRequest):
            return m.get_sync_state_data(msg.broker_names, self.alive)
        return None

    @staticmethod
    def _response(result: ControllerResult[Any]) -> ControllerResponse:
        return ControllerResponse(int(result.response_code), result.remark, result.response, result.body)

    def _answer(self, job: _Job, response: ControllerResponse, out: OutputBuilder) -> None:
        out.trace("controller_request", request=type(job.msg).__name__, code=response.code,
                  src=job.src or self.node_id)
        if job.src is not None:
            out.reply(job.src, job.request_id, response)
            if isinstance(job.msg, ElectMasterRequestHeader) and response.code == Code.SUCCESS:
                self._notify_role_changed(response, out)  # a broker's or an admin's election
            return
        # the controller's own election (ControllerManager.triggerElectMaster)
        if response.code == Code.SUCCESS:
            self._notify_role_changed(response, out)
        elif job.attempts_left > 1:
            self.queue.append(_Job(job.msg, attempts_left=job.attempts_left - 1))

    # ------------------------------------------------------------------ liveness
    def _heartbeat(self, msg: BrokerHeartbeatRequestHeader, channel: str) -> None:
        if msg.broker_id is None:
            return
        self.heartbeats.on_broker_heartbeat(self.now_ms, msg.cluster_name, msg.broker_name, msg.broker_addr,
                                            msg.broker_id, msg.heartbeat_timeout_mills, channel, msg.epoch,
                                            msg.max_offset, msg.confirm_offset, msg.election_priority)

    def _on_broker_inactive(self, cluster: str | None, broker_name: str, broker_id: int | None) -> None:
        """``ControllerManager.onBrokerInactive``: only the leader acts, and only for a dead master."""
        if not self.leader_state:
            return
        info = self.manager.sync_state_set_info_table.get(broker_name)
        if broker_id is None or (info is not None and info.master_broker_id == broker_id):
            self._trigger_elect_master(broker_name)

    def _trigger_elect_master(self, broker_name: str) -> None:
        self.queue.append(_Job(ElectMasterRequestHeader.of_controller_trigger(broker_name),
                               attempts_left=self.config.elect_master_max_retry_count))

    def _notify_role_changed(self, response: ControllerResponse, out: OutputBuilder) -> None:
        if not self.config.notify_broker_role_changed:
            return
        header, body = response.header, response.body
        group = getattr(body, "broker_member_group", None)
        if group is None or header.master_broker_id is None:
            return
        notice = NotifyBrokerRoleChanged(header.master_address, header.master_epoch, header.sync_state_set_epoch,
                                         header.master_broker_id, frozenset(body.sync_state_set))
        for broker_id, address in sorted(group.broker_addrs.items()):
            if self.alive(group.cluster, group.broker_name, broker_id):
                out.send(address, notice)


def make_controller(ctx: NodeContext, config: ControllerNodeConfig | None = None) -> ControllerCore:
    return ControllerCore(ctx, config or ControllerNodeConfig())

