"""The controller's wire vocabulary, RocketMQ 5.3.3: request and response codes, request/response headers
and bodies of the controller RPCs, as plain dataclasses with RocketMQ's field names in snake_case.

Java: ``remoting/.../protocol/ResponseCode.java`` (controller codes 2000-2016), ``RequestCode.java``,
``remoting/.../protocol/header/controller/**``, ``protocol/body/SyncStateSet``, ``ElectMasterResponseBody``,
``BrokerMemberGroup``, ``BrokerReplicasInfo``.

Simplified: the headers are not RemotingCommand ext fields and the bodies are kept as objects (Java encodes
them with fastjson); ``invokeTime`` is not modelled. Broker ids are ints (Java ``Long``), ``None`` where
Java allows null.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

FIRST_BROKER_CONTROLLER_ID = 1
"""``MixAll.FIRST_BROKER_CONTROLLER_ID``: the first id the controller hands out in a broker set."""
MASTER_ID = 0
"""``MixAll.MASTER_ID``: the id a master registers under at the NameServer."""


class ControllerResponseCode(enum.IntEnum):
    """``ResponseCode``: SUCCESS and the controller's codes 2000-2016 (same numbers as Java)."""

    SUCCESS = 0
    CONTROLLER_FENCED_MASTER_EPOCH = 2000
    CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH = 2001
    CONTROLLER_INVALID_MASTER = 2002
    CONTROLLER_INVALID_REPLICAS = 2003
    CONTROLLER_MASTER_NOT_AVAILABLE = 2004
    CONTROLLER_INVALID_REQUEST = 2005
    CONTROLLER_BROKER_NOT_ALIVE = 2006
    CONTROLLER_NOT_LEADER = 2007
    CONTROLLER_BROKER_METADATA_NOT_EXIST = 2008
    CONTROLLER_INVALID_CLEAN_BROKER_METADATA = 2009
    CONTROLLER_BROKER_NEED_TO_BE_REGISTERED = 2010
    CONTROLLER_MASTER_STILL_EXIST = 2011
    CONTROLLER_ELECT_MASTER_FAILED = 2012
    CONTROLLER_ALTER_SYNC_STATE_SET_FAILED = 2013
    CONTROLLER_BROKER_ID_INVALID = 2014
    CONTROLLER_JRAFT_INTERNAL_ERROR = 2015
    CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS = 2016


class ControllerRequestCode(enum.IntEnum):
    """``RequestCode`` of the controller RPCs (and the broker heartbeat, which goes to every controller)."""

    BROKER_HEARTBEAT = 904
    CONTROLLER_ALTER_SYNC_STATE_SET = 1001
    CONTROLLER_ELECT_MASTER = 1002
    CONTROLLER_REGISTER_BROKER = 1003
    CONTROLLER_GET_REPLICA_INFO = 1004
    CONTROLLER_GET_METADATA_INFO = 1005
    CONTROLLER_GET_SYNC_STATE_DATA = 1006
    NOTIFY_BROKER_ROLE_CHANGED = 1008
    CLEAN_BROKER_DATA = 1011
    CONTROLLER_GET_NEXT_BROKER_ID = 1012
    CONTROLLER_APPLY_BROKER_ID = 1013


# ---------------------------------------------------------------------- bodies
@dataclass(frozen=True)
class SyncStateSet:
    """``protocol/body/SyncStateSet``: the broker ids of the in-sync replicas and the set's epoch."""

    sync_state_set: frozenset[int]
    sync_state_set_epoch: int


@dataclass(frozen=True)
class BrokerMemberGroup:
    """``BrokerMemberGroup``: a broker set's members, id -> address."""

    cluster: str
    broker_name: str
    broker_addrs: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ElectMasterResponseBody:
    """``ElectMasterResponseBody``: the new SyncStateSet (the new master alone) and the member group."""

    sync_state_set: frozenset[int]
    broker_member_group: BrokerMemberGroup | None = None


@dataclass(frozen=True)
class ReplicaIdentity:
    """``BrokerReplicasInfo.ReplicaIdentity``."""

    broker_name: str
    broker_id: int
    broker_address: str | None
    alive: bool = False


@dataclass(frozen=True)
class ReplicasInfo:
    """``BrokerReplicasInfo.ReplicasInfo``: one broker set's master, epochs and replicas in and out of sync."""

    master_broker_id: int | None
    master_address: str | None
    master_epoch: int
    sync_state_set_epoch: int
    in_sync_replicas: tuple[ReplicaIdentity, ...]
    not_in_sync_replicas: tuple[ReplicaIdentity, ...]

    def is_exist_in_sync(self, broker_name: str, broker_id: int, broker_address: str) -> bool:
        return ReplicaIdentity(broker_name, broker_id, broker_address) in {
            ReplicaIdentity(r.broker_name, r.broker_id, r.broker_address) for r in self.in_sync_replicas}


# ---------------------------------------------------------------------- request headers
@dataclass(frozen=True)
class ElectMasterRequestHeader:
    """``ElectMasterRequestHeader``: ``broker_id`` None or -1 means the controller triggered the election;
    ``designate_elect`` (admin) makes ``broker_id`` the only acceptable winner."""

    cluster_name: str | None = None
    broker_name: str = ""
    broker_id: int | None = None
    designate_elect: bool = False

    @classmethod
    def of_broker_trigger(cls, cluster_name: str, broker_name: str, broker_id: int) -> ElectMasterRequestHeader:
        """A broker asks for an election (it is *not* preferred: ``designate_elect`` stays False)."""
        return cls(cluster_name, broker_name, broker_id)

    @classmethod
    def of_controller_trigger(cls, broker_name: str) -> ElectMasterRequestHeader:
        """The controller re-elects after the master went inactive (no broker id)."""
        return cls(None, broker_name, None)

    @classmethod
    def of_admin_trigger(cls, cluster_name: str, broker_name: str, broker_id: int) -> ElectMasterRequestHeader:
        """An admin designates ``broker_id``."""
        return cls(cluster_name, broker_name, broker_id, True)


@dataclass(frozen=True)
class AlterSyncStateSetRequestHeader:
    """``AlterSyncStateSetRequestHeader``: sent by the master with the epoch it believes in."""

    broker_name: str
    master_broker_id: int
    master_epoch: int


@dataclass(frozen=True)
class GetNextBrokerIdRequestHeader:
    cluster_name: str
    broker_name: str


@dataclass(frozen=True)
class ApplyBrokerIdRequestHeader:
    """``registerCheckCode`` is ``"<address>;<currentTimeMillis>"``: the address is the part before ``;``."""

    cluster_name: str
    broker_name: str
    applied_broker_id: int
    register_check_code: str


@dataclass(frozen=True)
class RegisterBrokerToControllerRequestHeader:
    cluster_name: str
    broker_name: str
    broker_id: int
    broker_address: str


@dataclass(frozen=True)
class GetReplicaInfoRequestHeader:
    broker_name: str


@dataclass(frozen=True)
class CleanControllerBrokerDataRequestHeader:
    """``brokerControllerIdsToClean``: ids joined by ``;`` (None: the whole broker set)."""

    cluster_name: str | None
    broker_name: str
    broker_controller_ids_to_clean: str | None = None
    clean_living_broker: bool = False


@dataclass(frozen=True)
class BrokerHeartbeatRequestHeader:
    """``BrokerHeartbeatRequestHeader``: what a broker reports every ``brokerHeartbeatInterval`` (1 s)."""

    cluster_name: str
    broker_addr: str
    broker_name: str
    broker_id: int | None
    epoch: int | None = None
    max_offset: int | None = None
    confirm_offset: int | None = None
    heartbeat_timeout_mills: int | None = None
    election_priority: int | None = None


# ---------------------------------------------------------------------- response headers
@dataclass
class ElectMasterResponseHeader:
    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None
    sync_state_set_epoch: int | None = None


@dataclass
class AlterSyncStateSetResponseHeader:
    new_sync_state_set_epoch: int | None = None


@dataclass
class GetNextBrokerIdResponseHeader:
    cluster_name: str
    broker_name: str
    next_broker_id: int | None = None


@dataclass
class ApplyBrokerIdResponseHeader:
    cluster_name: str
    broker_name: str


@dataclass
class RegisterBrokerToControllerResponseHeader:
    cluster_name: str
    broker_name: str
    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None
    sync_state_set_epoch: int | None = None


@dataclass
class GetReplicaInfoResponseHeader:
    master_broker_id: int | None = None
    master_address: str | None = None
    master_epoch: int | None = None
