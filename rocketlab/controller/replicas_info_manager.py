"""ReplicasInfoManager, RocketMQ 5.3.3 (``controller/.../impl/manager/``): the controller's state machine.

Two tables keyed by broker name (one broker set): :class:`BrokerReplicaInfo` (who the members are: id ->
address and register check code, the next id to hand out) and :class:`SyncStateInfo` (the master, its
``masterEpoch``, the SyncStateSet and its ``syncStateSetEpoch``).

Every request is **validated against the current state and answered with a** :class:`ControllerResult`
**holding events; nothing changes until the events are applied** (:meth:`ReplicasInfoManager.apply_event`),
which the controller does on every replica once the events are committed in its replicated log. The
checks run in Java's order and answer with Java's codes (:class:`ControllerResponseCode`); remarks are
Java's strings where tests look at them.

Simplified: response bodies are objects (Java: fastjson bytes); :meth:`ReplicasInfoManager.serialize`
frames each table entry as Java does (4-byte lengths, the broker name) but the entries as JSON, not
Hessian.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rocketlab.controller.config import ControllerConfig
from rocketlab.controller.elect_policy import DefaultElectPolicy
from rocketlab.controller.events import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    EventMessage,
    UpdateBrokerAddressEvent,
)
from rocketlab.controller.protocol import (
    FIRST_BROKER_CONTROLLER_ID,
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ApplyBrokerIdRequestHeader,
    ApplyBrokerIdResponseHeader,
    BrokerMemberGroup,
    CleanControllerBrokerDataRequestHeader,
    ControllerResponseCode,
    ElectMasterRequestHeader,
    ElectMasterResponseBody,
    ElectMasterResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
    ReplicaIdentity,
    ReplicasInfo,
    SyncStateSet,
)
from rocketlab.errors import CodecError

Code = ControllerResponseCode
BrokerValidPredicate = Callable[[str | None, str, int], bool]
R = TypeVar("R")
_INT = struct.Struct(">i")


@dataclass
class BrokerReplicaInfo:
    """Models BrokerReplicaInfo. ``add_broker`` always advances ``next_assign_broker_id``."""

    cluster_name: str
    broker_name: str
    next_assign_broker_id: int = FIRST_BROKER_CONTROLLER_ID
    broker_id_info: dict[int, tuple[str, str]] = field(default_factory=dict)
    """broker id -> (address, registerCheckCode)"""

    def add_broker(self, broker_id: int, address: str, register_check_code: str) -> None:
        self.broker_id_info[broker_id] = (address, register_check_code)
        self.next_assign_broker_id += 1

    def remove_broker_id(self, broker_id: int) -> None:
        self.broker_id_info.pop(broker_id, None)

    def is_broker_exist(self, broker_id: int | None) -> bool:
        return broker_id in self.broker_id_info

    def get_all_broker(self) -> set[int]:
        return set(self.broker_id_info)

    def get_broker_id_table(self) -> dict[int, str]:
        return {i: pair[0] for i, pair in self.broker_id_info.items()}

    def get_broker_address(self, broker_id: int | None) -> str | None:
        pair = self.broker_id_info.get(broker_id) if broker_id is not None else None
        return pair[0] if pair else None

    def get_broker_register_check_code(self, broker_id: int | None) -> str | None:
        pair = self.broker_id_info.get(broker_id) if broker_id is not None else None
        return pair[1] if pair else None

    def update_broker_address(self, broker_id: int | None, address: str) -> None:
        if broker_id is not None and broker_id in self.broker_id_info:
            self.broker_id_info[broker_id] = (address, self.broker_id_info[broker_id][1])


@dataclass
class SyncStateInfo:
    """Models SyncStateInfo. ``update_master_info`` bumps ``master_epoch`` even when the master is None
    (no master could be elected); ``update_sync_state_set_info`` bumps ``sync_state_set_epoch``."""

    cluster_name: str
    broker_name: str
    master_epoch: int = 0
    sync_state_set_epoch: int = 0
    sync_state_set: set[int] = field(default_factory=set)
    master_broker_id: int | None = None

    def update_master_info(self, master_broker_id: int | None) -> None:
        self.master_broker_id = master_broker_id
        self.master_epoch += 1

    def update_sync_state_set_info(self, new_sync_state_set: Iterable[int]) -> None:
        self.sync_state_set = set(new_sync_state_set)
        self.sync_state_set_epoch += 1

    def is_first_time_for_elect(self) -> bool:
        return self.master_epoch == 0

    def is_master_exist(self) -> bool:
        return self.master_broker_id is not None

    def remove_from_sync_state(self, broker_id: int) -> None:
        self.sync_state_set.discard(broker_id)


@dataclass
class ControllerResult(Generic[R]):
    """Models ControllerResult: the response header, the events to commit, a body, a code and a remark."""

    response: R
    events: list[EventMessage] = field(default_factory=list)
    body: Any = None
    response_code: ControllerResponseCode = Code.SUCCESS
    remark: str | None = None

    def set_code_and_remark(self, code: ControllerResponseCode, remark: str) -> None:
        self.response_code, self.remark = code, remark

    def add_event(self, event: EventMessage) -> None:
        self.events.append(event)


class ReplicasInfoManager:
    """Models ReplicasInfoManager (see the module docstring)."""

    def __init__(self, config: ControllerConfig | None = None) -> None:
        self.config = config or ControllerConfig()
        self.replica_info_table: dict[str, BrokerReplicaInfo] = {}
        self.sync_state_set_info_table: dict[str, SyncStateInfo] = {}

    def is_contains_broker(self, broker_name: str) -> bool:
        return broker_name in self.replica_info_table and broker_name in self.sync_state_set_info_table

    # ------------------------------------------------------------------ writes (validate -> events)
    def alter_sync_state_set(self, request: AlterSyncStateSetRequestHeader, sync_state_set: SyncStateSet,
                             broker_alive_predicate: BrokerValidPredicate
                             ) -> ControllerResult[AlterSyncStateSetResponseHeader]:
        """``alterSyncStateSet``: the master proposes a new SyncStateSet; fenced by master id, master
        epoch and SyncStateSet epoch; every member must be registered and alive; the master must stay in."""
        result = ControllerResult(AlterSyncStateSetResponseHeader())
        name = request.broker_name
        if not self.is_contains_broker(name):
            result.set_code_and_remark(Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "Broker metadata is not existed")
            return result
        new_set = set(sync_state_set.sync_state_set)
        info, replicas = self.sync_state_set_info_table[name], self.replica_info_table[name]
        if info.sync_state_set == new_set:
            result.set_code_and_remark(Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED,
                                       "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet")
            return result
        if info.master_broker_id is None or info.master_broker_id != request.master_broker_id:
            result.set_code_and_remark(Code.CONTROLLER_INVALID_MASTER, "Rejecting alter syncStateSet request because "
                                       f"the current leader is:{{{info.master_broker_id}}}, not {{{request.master_broker_id}}}")
            return result
        if request.master_epoch != info.master_epoch:
            result.set_code_and_remark(Code.CONTROLLER_FENCED_MASTER_EPOCH, "Rejecting alter syncStateSet request "
                                       f"because the current master epoch is:{{{info.master_epoch}}}, not {{{request.master_epoch}}}")
            return result
        if sync_state_set.sync_state_set_epoch != info.sync_state_set_epoch:
            result.set_code_and_remark(Code.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, "Rejecting alter syncStateSet "
                                       f"request because the current syncStateSet epoch is:{{{info.sync_state_set_epoch}}}, "
                                       f"not {{{sync_state_set.sync_state_set_epoch}}}")
            return result
        for replica in sorted(new_set):
            if not replicas.is_broker_exist(replica):
                result.set_code_and_remark(Code.CONTROLLER_INVALID_REPLICAS, "Rejecting alter syncStateSet request "
                                           f"because the replicas {{{replica}}} don't exist")
                return result
            if not broker_alive_predicate(replicas.cluster_name, replicas.broker_name, replica):
                result.set_code_and_remark(Code.CONTROLLER_BROKER_NOT_ALIVE, "Rejecting alter syncStateSet request "
                                           f"because the replicas {{{replica}}} don't alive")
                return result
        if info.master_broker_id not in new_set:
            result.set_code_and_remark(Code.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "Rejecting alter syncStateSet "
                                       f"request because the newSyncStateSet don't contains origin leader "
                                       f"{{{info.master_broker_id}}}")
            return result
        epoch = info.sync_state_set_epoch + 1
        result.response.new_sync_state_set_epoch = epoch
        result.body = SyncStateSet(frozenset(new_set), epoch)
        result.add_event(AlterSyncStateSetEvent(name, frozenset(new_set)))
        return result

    def elect_master(self, request: ElectMasterRequestHeader, elect_policy: DefaultElectPolicy
                     ) -> ControllerResult[ElectMasterResponseHeader]:
        """``electMaster``: the first election of a set makes the requester master; later ones ask the
        policy (SyncStateSet, then every replica if unclean election is on). See the module docstring of
        :mod:`rocketlab.controller` for the three trigger kinds."""
        result = ControllerResult(ElectMasterResponseHeader())
        response, name, broker_id = result.response, request.broker_name, request.broker_id
        if not self.is_contains_broker(name):
            result.set_code_and_remark(Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "Broker hasn't been registered")
            return result
        info, replicas = self.sync_state_set_info_table[name], self.replica_info_table[name]
        sync_state_set = set(info.sync_state_set)
        old_master = info.master_broker_id
        all_replicas = replicas.get_all_broker() if self.config.enable_elect_unclean_master else None
        new_master = broker_id if info.is_first_time_for_elect() else None
        if new_master is None or new_master == -1:
            assigned = broker_id if request.designate_elect else None
            new_master = elect_policy.elect(replicas.cluster_name, replicas.broker_name, sync_state_set, all_replicas,
                                            old_master, assigned)
        if new_master is not None and new_master == old_master:
            response.master_epoch, response.sync_state_set_epoch = info.master_epoch, info.sync_state_set_epoch
            response.master_broker_id, response.master_address = old_master, replicas.get_broker_address(old_master)
            result.body = ElectMasterResponseBody(frozenset(sync_state_set))
            result.set_code_and_remark(Code.CONTROLLER_MASTER_STILL_EXIST, f"The old master {old_master} is still "
                                       f"alive, not need to elect new master for broker {replicas.broker_name}")
            return result
        if new_master is not None:
            response.master_broker_id, response.master_address = new_master, replicas.get_broker_address(new_master)
            response.master_epoch, response.sync_state_set_epoch = info.master_epoch + 1, info.sync_state_set_epoch + 1
            group = BrokerMemberGroup(replicas.cluster_name, replicas.broker_name, replicas.get_broker_id_table())
            result.body = ElectMasterResponseBody(frozenset({new_master}), group)
            result.add_event(ElectMasterEvent(name, True, new_master))
            return result
        if broker_id is None or broker_id == -1:  # the controller triggered it: record that the master is gone
            result.add_event(ElectMasterEvent(name, False))
            result.set_code_and_remark(Code.CONTROLLER_MASTER_NOT_AVAILABLE,
                                       "Old master has down and failed to elect a new broker master")
        else:
            result.set_code_and_remark(Code.CONTROLLER_ELECT_MASTER_FAILED, "Failed to elect a new master")
        return result

    def get_next_broker_id(self, request: GetNextBrokerIdRequestHeader) -> ControllerResult[GetNextBrokerIdResponseHeader]:
        result = ControllerResult(GetNextBrokerIdResponseHeader(request.cluster_name, request.broker_name))
        replicas = self.replica_info_table.get(request.broker_name)
        result.response.next_broker_id = FIRST_BROKER_CONTROLLER_ID if replicas is None else replicas.next_assign_broker_id
        return result

    def apply_broker_id(self, request: ApplyBrokerIdRequestHeader) -> ControllerResult[ApplyBrokerIdResponseHeader]:
        """``applyBrokerId``: an unknown set accepts only id 1; a known set an unused id, or one already held
        with the same register check code (the same broker retrying)."""
        name, broker_id, check_code = request.broker_name, request.applied_broker_id, request.register_check_code
        result = ControllerResult(ApplyBrokerIdResponseHeader(request.cluster_name, name))
        event = ApplyBrokerIdEvent(request.cluster_name, name, check_code.split(";")[0], broker_id, check_code)
        replicas = self.replica_info_table.get(name)
        if replicas is None:
            if broker_id == FIRST_BROKER_CONTROLLER_ID:
                result.add_event(event)
            else:
                result.set_code_and_remark(Code.CONTROLLER_BROKER_ID_INVALID, f"Broker-set: {name} hasn't been "
                                           f"registered in controller, but broker try to apply brokerId: {broker_id}")
            return result
        if not replicas.is_broker_exist(broker_id) or check_code == replicas.get_broker_register_check_code(broker_id):
            result.add_event(event)
            return result
        result.set_code_and_remark(Code.CONTROLLER_BROKER_ID_INVALID,
                                   f"Fail to apply brokerId: {broker_id} in broker-set: {name}")
        return result

    def register_broker(self, request: RegisterBrokerToControllerRequestHeader, alive_predicate: BrokerValidPredicate
                        ) -> ControllerResult[RegisterBrokerToControllerResponseHeader]:
        """``registerBroker``: the master's id, address and epochs are returned only if it exists and is
        alive; a changed address becomes an UpdateBrokerAddressEvent."""
        name, cluster, broker_id = request.broker_name, request.cluster_name, request.broker_id
        result = ControllerResult(RegisterBrokerToControllerResponseHeader(cluster, name))
        if not self.is_contains_broker(name):
            result.set_code_and_remark(Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                                       f"Broker-set: {name} hasn't been registered in controller")
            return result
        replicas, info = self.replica_info_table[name], self.sync_state_set_info_table[name]
        if not replicas.is_broker_exist(broker_id):
            result.set_code_and_remark(Code.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                                       f"BrokerId: {broker_id} hasn't been registered in broker-set: {name}")
            return result
        if info.is_master_exist() and alive_predicate(cluster, name, info.master_broker_id):
            response = result.response
            response.master_broker_id = info.master_broker_id
            response.master_address = replicas.get_broker_address(info.master_broker_id)
            response.master_epoch, response.sync_state_set_epoch = info.master_epoch, info.sync_state_set_epoch
        result.body = SyncStateSet(frozenset(info.sync_state_set), info.sync_state_set_epoch)
        if request.broker_address != replicas.get_broker_address(broker_id):
            result.add_event(UpdateBrokerAddressEvent(cluster, name, request.broker_address, broker_id))
        return result

    def clean_broker_data(self, request: CleanControllerBrokerDataRequestHeader, valid_predicate: BrokerValidPredicate
                          ) -> ControllerResult[None]:
        """``cleanBrokerData`` (admin): refuse while the set (or a named id) is alive, unless told to."""
        result: ControllerResult[None] = ControllerResult(None)
        cluster, name, ids_text = request.cluster_name, request.broker_name, request.broker_controller_ids_to_clean
        ids: frozenset[int] | None = None
        if not request.clean_living_broker:
            info = self.sync_state_set_info_table.get(name)
            if not (ids_text or "").strip() and info is not None and info.master_broker_id is not None:
                result.set_code_and_remark(Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                           f"Broker {name} is still alive, clean up failure")
                return result
            if (ids_text or "").strip():
                try:
                    ids = frozenset(int(part) for part in ids_text.split(";"))  # type: ignore[union-attr]
                except ValueError as e:
                    result.set_code_and_remark(Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "Please set the option "
                                               f"<brokerControllerIdsToClean> according to the format, exception: {e}")
                    return result
                for broker_id in sorted(ids):
                    if valid_predicate(cluster, name, broker_id):
                        result.set_code_and_remark(Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                                   f"Broker [{name},  {broker_id}] is still alive, clean up failure")
                        return result
        if self.is_contains_broker(name):
            result.add_event(CleanBrokerDataEvent(name, ids))
            return result
        result.set_code_and_remark(Code.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                   f"Broker {name} is not existed,clean broker data failure.")
        return result

    # ------------------------------------------------------------------ reads
    def get_replica_info(self, request: GetReplicaInfoRequestHeader) -> ControllerResult[GetReplicaInfoResponseHeader]:
        result = ControllerResult(GetReplicaInfoResponseHeader())
        name = request.broker_name
        if not self.is_contains_broker(name):
            result.set_code_and_remark(Code.CONTROLLER_BROKER_METADATA_NOT_EXIST, "Broker metadata is not existed")
            return result
        info, replicas = self.sync_state_set_info_table[name], self.replica_info_table[name]
        result.response.master_broker_id = info.master_broker_id
        result.response.master_address = replicas.get_broker_address(info.master_broker_id)
        result.response.master_epoch = info.master_epoch
        result.body = SyncStateSet(frozenset(info.sync_state_set), info.sync_state_set_epoch)
        return result

    def get_sync_state_data(self, broker_names: Iterable[str], broker_alive_predicate: BrokerValidPredicate
                            ) -> ControllerResult[None]:
        """``getSyncStateData``: per known set, the replicas in and out of the SyncStateSet with liveness
        (body: ``{broker name: ReplicasInfo}``)."""
        result: ControllerResult[None] = ControllerResult(None)
        table: dict[str, ReplicasInfo] = {}
        for name in broker_names:
            if not self.is_contains_broker(name):
                continue
            info, replicas = self.sync_state_set_info_table[name], self.replica_info_table[name]
            in_sync, not_in_sync = [], []
            for broker_id, address in sorted(replicas.get_broker_id_table().items()):
                alive = broker_alive_predicate(replicas.cluster_name, name, broker_id)
                (in_sync if broker_id in info.sync_state_set else not_in_sync).append(
                    ReplicaIdentity(name, broker_id, address, alive))
            table[name] = ReplicasInfo(info.master_broker_id, replicas.get_broker_address(info.master_broker_id),
                                       info.master_epoch, info.sync_state_set_epoch, tuple(in_sync), tuple(not_in_sync))
        result.body = table
        return result

    def scan_need_reelect_broker_sets(self, valid_predicate: BrokerValidPredicate) -> list[str]:
        """``scanNeedReelectBrokerSets``: sets whose master is dead while some replica is alive."""
        found = []
        for name, info in self.sync_state_set_info_table.items():
            master = info.master_broker_id
            if master is not None and not valid_predicate(info.cluster_name, name, master):
                ids = self.replica_info_table[name].get_broker_id_table()
                if any(valid_predicate(info.cluster_name, name, i) for i in sorted(ids)):
                    found.append(name)
        return found

    # ------------------------------------------------------------------ apply (on every controller)
    def apply_event(self, event: EventMessage) -> None:
        """``applyEvent``: change the state as the committed event says, without validating again."""
        if isinstance(event, AlterSyncStateSetEvent):
            if self.is_contains_broker(event.broker_name):
                self.sync_state_set_info_table[event.broker_name].update_sync_state_set_info(event.new_sync_state_set)
        elif isinstance(event, ApplyBrokerIdEvent):
            self._apply_broker_id(event)
        elif isinstance(event, ElectMasterEvent):
            if self.is_contains_broker(event.broker_name):
                info = self.sync_state_set_info_table[event.broker_name]
                if event.new_master_elected:
                    info.update_master_info(event.new_master_broker_id)
                    info.update_sync_state_set_info({event.new_master_broker_id})  # type: ignore[arg-type]
                else:  # nobody could replace the old master: clear it, keep the SyncStateSet
                    info.update_master_info(None)
        elif isinstance(event, CleanBrokerDataEvent):
            self._clean_broker_data(event)
        elif isinstance(event, UpdateBrokerAddressEvent):
            replicas = self.replica_info_table.get(event.broker_name)
            if replicas is not None:
                replicas.update_broker_address(event.broker_id, event.broker_address)

    def _apply_broker_id(self, event: ApplyBrokerIdEvent) -> None:
        name = event.broker_name
        if self.is_contains_broker(name):
            replicas = self.replica_info_table[name]
            if not replicas.is_broker_exist(event.new_broker_id):
                replicas.add_broker(event.new_broker_id, event.broker_address, event.register_check_code)
            return
        replicas = BrokerReplicaInfo(event.cluster_name, name)
        replicas.add_broker(event.new_broker_id, event.broker_address, event.register_check_code)
        self.replica_info_table[name] = replicas
        self.sync_state_set_info_table[name] = SyncStateInfo(event.cluster_name, name)

    def _clean_broker_data(self, event: CleanBrokerDataEvent) -> None:
        name, ids = event.broker_name, event.broker_id_set_to_clean
        if not ids:
            self.replica_info_table.pop(name, None)
            self.sync_state_set_info_table.pop(name, None)
            return
        if not self.is_contains_broker(name):
            return
        replicas, info = self.replica_info_table[name], self.sync_state_set_info_table[name]
        for broker_id in ids:
            replicas.remove_broker_id(broker_id)
            info.remove_from_sync_state(broker_id)
        if not replicas.broker_id_info:
            del self.replica_info_table[name]
        if not info.sync_state_set:
            del self.sync_state_set_info_table[name]

    # ------------------------------------------------------------------ snapshot bytes
    def serialize(self) -> bytes:
        """Both tables: a 4-byte count, then per entry the name and the entry, each behind a 4-byte length."""
        out = bytearray()
        for table, encode in ((self.replica_info_table, _replica_to_json), (self.sync_state_set_info_table, _sync_to_json)):
            out += _INT.pack(len(table))
            for name, entry in sorted(table.items()):
                for blob in (name.encode(), json.dumps(encode(entry), sort_keys=True).encode()):
                    out += _INT.pack(len(blob)) + blob
        return bytes(out)

    def deserialize_from(self, data: bytes) -> None:
        """Replace both tables with what :meth:`serialize` wrote; CodecError (with the offset) on bad bytes."""
        at, tables = 0, []
        for decode in (_replica_from_json, _sync_from_json):
            count, at = _read_int(data, at)
            table = {}
            for _ in range(count):
                name_len, at = _read_int(data, at)
                name, at = _read_blob(data, at, name_len)
                blob_len, at = _read_int(data, at)
                blob, at = _read_blob(data, at, blob_len)
                try:
                    table[name.decode()] = decode(json.loads(blob))
                except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
                    raise CodecError(f"bad table entry: {e}", at - blob_len) from None
            tables.append(table)
        if at != len(data):
            raise CodecError(f"{len(data) - at} bytes after the two tables", at)
        self.replica_info_table, self.sync_state_set_info_table = tables


def _read_int(data: bytes, at: int) -> tuple[int, int]:
    if at + 4 > len(data):
        raise CodecError("truncated: a 4-byte length is cut off", at)
    value = _INT.unpack_from(data, at)[0]
    if value < 0:
        raise CodecError(f"negative length {value}", at)
    return value, at + 4


def _read_blob(data: bytes, at: int, size: int) -> tuple[bytes, int]:
    if at + size > len(data):
        raise CodecError(f"truncated: {size} bytes announced, {len(data) - at} left", at)
    return data[at:at + size], at + size


def _replica_to_json(r: BrokerReplicaInfo) -> dict[str, Any]:
    return {"clusterName": r.cluster_name, "brokerName": r.broker_name, "nextAssignBrokerId": r.next_assign_broker_id,
            "brokerIdInfo": {str(i): list(pair) for i, pair in sorted(r.broker_id_info.items())}}


def _replica_from_json(d: dict[str, Any]) -> BrokerReplicaInfo:
    return BrokerReplicaInfo(d["clusterName"], d["brokerName"], int(d["nextAssignBrokerId"]),
                             {int(i): (pair[0], pair[1]) for i, pair in d["brokerIdInfo"].items()})


def _sync_to_json(s: SyncStateInfo) -> dict[str, Any]:
    return {"clusterName": s.cluster_name, "brokerName": s.broker_name, "masterEpoch": s.master_epoch,
            "syncStateSetEpoch": s.sync_state_set_epoch, "syncStateSet": sorted(s.sync_state_set),
            "masterBrokerId": s.master_broker_id}


def _sync_from_json(d: dict[str, Any]) -> SyncStateInfo:
    return SyncStateInfo(d["clusterName"], d["brokerName"], int(d["masterEpoch"]), int(d["syncStateSetEpoch"]),
                         {int(i) for i in d["syncStateSet"]}, d["masterBrokerId"])
