"""How controller RPCs travel: RocketMQ 5.3.3's request codes, header classes in ext fields, fastjson bodies.

Requests are the header dataclasses of :mod:`rocketlab.controller.protocol` (plus
:class:`AlterSyncStateSetRequest` and :class:`GetSyncStateDataRequest`, which carry a body, and
:class:`GetMetadataInfoRequest`); every answer is a :class:`ControllerResponse` (code, remark, response
header, body), as a RemotingCommand response is: which header class and body class it carries follows
from the request it answers. A controller tells a broker about a new master with a oneway
:class:`NotifyBrokerRoleChanged` (NOTIFY_BROKER_ROLE_CHANGED, the SyncStateSet as its body).

========================================  =====  ==============================================  ==========================
request                                   code   header (ext fields)                             body
========================================  =====  ==============================================  ==========================
BrokerHeartbeatRequestHeader              904    BrokerHeartbeatRequestHeader                    -
AlterSyncStateSetRequest                  1001   AlterSyncStateSetRequestHeader                  SyncStateSet
ElectMasterRequestHeader                  1002   ElectMasterRequestHeader                        -
RegisterBrokerToControllerRequestHeader   1003   RegisterBrokerToControllerRequestHeader         -
GetReplicaInfoRequestHeader               1004   GetReplicaInfoRequestHeader                     -
GetMetadataInfoRequest                    1005   -                                               -
GetSyncStateDataRequest                   1006   -                                               JSON list of broker names
NotifyBrokerRoleChanged (oneway)          1008   NotifyBrokerRoleChangedRequestHeader            SyncStateSet
CleanControllerBrokerDataRequestHeader    1011   CleanControllerBrokerDataRequestHeader          -
GetNextBrokerIdRequestHeader              1012   GetNextBrokerIdRequestHeader                    -
ApplyBrokerIdRequestHeader                1013   ApplyBrokerIdRequestHeader                      -
========================================  =====  ==============================================  ==========================

Answers carry ElectMasterResponseHeader + ElectMasterResponseBody (1002), AlterSyncStateSetResponseHeader
+ SyncStateSet (1001), RegisterBrokerToControllerResponseHeader + SyncStateSet (1003),
GetReplicaInfoResponseHeader + SyncStateSet (1004), GetMetaDataResponseHeader (1005), BrokerReplicasInfo
(1006), GetNextBrokerIdResponseHeader (1012), ApplyBrokerIdResponseHeader (1013).

Java: ``remoting/.../protocol/RequestCode``, ``header/controller/**``, ``header/namesrv/BrokerHeartbeatRequestHeader``,
``header/NotifyBrokerRoleChangedRequestHeader``, ``protocol/body/SyncStateSet``, ``ElectMasterResponseBody``,
``BrokerMemberGroup``, ``BrokerReplicasInfo``; ``ControllerRequestProcessor``, ``ControllerManager``
(5.3.3). Difference: ``invokeTime`` (read only by the JRaft controller, which the kit does not model) is
not sent; the receiver keeps its own default, as Java does for a field that is absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.controller import protocol
from rocketlab.controller.protocol import ControllerRequestCode as RC
from rocketlab.dledger.codec import DLEDGER_FAMILY
from rocketlab.errors import CodecError
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.fastjson import dumps, hashmap_order, loads, long_set_order
from rocketlab.remoting.headers import Header, props


@dataclass(frozen=True)
class AlterSyncStateSetRequest:
    """CONTROLLER_ALTER_SYNC_STATE_SET: the header and the proposed SyncStateSet (the body)."""

    header: protocol.AlterSyncStateSetRequestHeader
    sync_state_set: protocol.SyncStateSet


@dataclass(frozen=True)
class GetSyncStateDataRequest:
    """CONTROLLER_GET_SYNC_STATE_DATA: the broker names (the body)."""

    broker_names: tuple[str, ...]


@dataclass(frozen=True)
class GetMetadataInfoRequest:
    """CONTROLLER_GET_METADATA_INFO: who leads the controllers."""


@dataclass(frozen=True)
class ControllerMetadata:
    """GetMetaDataResponseHeader: the controller group, its leader and whether the answering one leads."""

    group: str
    controller_leader_id: str | None
    controller_leader_address: str | None
    is_leader: bool
    peers: str


@dataclass(frozen=True)
class ControllerResponse:
    """A controller's answer: ``code`` (:class:`~rocketlab.controller.protocol.ControllerResponseCode`),
    ``remark``, the response header and the body."""

    code: int
    remark: str | None = None
    header: Any = None
    body: Any = None


@dataclass(frozen=True)
class NotifyBrokerRoleChanged:
    """NOTIFY_BROKER_ROLE_CHANGED (oneway, controller -> broker): RoleChangeNotifyEntry."""

    master_address: str | None
    master_epoch: int
    sync_state_set_epoch: int
    master_broker_id: int | None
    sync_state_set: frozenset[int]


REQUEST_TYPES: tuple[type, ...] = (
    protocol.ElectMasterRequestHeader, AlterSyncStateSetRequest, protocol.ApplyBrokerIdRequestHeader,
    protocol.RegisterBrokerToControllerRequestHeader, protocol.GetReplicaInfoRequestHeader,
    protocol.GetNextBrokerIdRequestHeader, protocol.CleanControllerBrokerDataRequestHeader,
    protocol.BrokerHeartbeatRequestHeader, GetSyncStateDataRequest, GetMetadataInfoRequest)

# ------------------------------------------------------------------------------------ header classes
_C = "org.apache.rocketmq.remoting.protocol.header.controller."
_P = "org.apache.rocketmq.remoting.protocol.header."


def _h(name: str, *fields: str, required: tuple[str, ...] = (), package: str = _C) -> Header:
    return Header(package + name, props(package + name, *fields, required=required))


HEARTBEAT = _h("BrokerHeartbeatRequestHeader", "String clusterName", "String brokerAddr", "String brokerName",
               "Long brokerId", "Integer epoch", "Long maxOffset", "Long confirmOffset", "Long heartbeatTimeoutMills",
               "Integer electionPriority", required=("clusterName", "brokerAddr", "brokerName"),
               package=_P + "namesrv.")
ALTER = _h("AlterSyncStateSetRequestHeader", "String brokerName", "Long masterBrokerId", "Integer masterEpoch",
           "long invokeTime")
ALTER_RESPONSE = _h("AlterSyncStateSetResponseHeader", "int newSyncStateSetEpoch")
ELECT = _h("ElectMasterRequestHeader", "String clusterName", "String brokerName", "Long brokerId",
           "Boolean designateElect", "Long invokeTime", required=("clusterName", "brokerName", "brokerId",
                                                                  "designateElect"))
ELECT_RESPONSE = _h("ElectMasterResponseHeader", "Long masterBrokerId", "String masterAddress", "Integer masterEpoch",
                    "Integer syncStateSetEpoch")
METADATA_RESPONSE = _h("GetMetaDataResponseHeader", "String group", "String controllerLeaderId",
                       "String controllerLeaderAddress", "boolean isLeader", "String peers")
REPLICA_INFO = _h("GetReplicaInfoRequestHeader", "String brokerName")
REPLICA_INFO_RESPONSE = _h("GetReplicaInfoResponseHeader", "Long masterBrokerId", "String masterAddress",
                           "Integer masterEpoch")
CLEAN = _h("CleanControllerBrokerDataRequestHeader", "String clusterName", "String brokerName",
           "String brokerControllerIdsToClean", "boolean isCleanLivingBroker", "long invokeTime",
           required=("brokerName",), package=_C + "admin.")
APPLY = _h("ApplyBrokerIdRequestHeader", "String clusterName", "String brokerName", "Long appliedBrokerId",
           "String registerCheckCode", package=_C + "register.")
APPLY_RESPONSE = _h("ApplyBrokerIdResponseHeader", "String clusterName", "String brokerName", package=_C + "register.")
NEXT_ID = _h("GetNextBrokerIdRequestHeader", "String clusterName", "String brokerName", package=_C + "register.")
NEXT_ID_RESPONSE = _h("GetNextBrokerIdResponseHeader", "String clusterName", "String brokerName",
                      "Long nextBrokerId", package=_C + "register.")
REGISTER = _h("RegisterBrokerToControllerRequestHeader", "String clusterName", "String brokerName", "Long brokerId",
              "String brokerAddress", "long invokeTime", package=_C + "register.")
REGISTER_RESPONSE = _h("RegisterBrokerToControllerResponseHeader", "String clusterName", "String brokerName",
                       "Long masterBrokerId", "String masterAddress", "Integer masterEpoch", "Integer syncStateSetEpoch",
                       package=_C + "register.")
NOTIFY = _h("NotifyBrokerRoleChangedRequestHeader", "String masterAddress", "Integer masterEpoch",
            "Integer syncStateSetEpoch", "Long masterBrokerId", package=_P)

# request class -> (code, header, {java field: attribute}, response header class, {java field: attribute})
_SPEC: dict[type, tuple[int, Header | None, dict[str, str], Header | None, type | None, dict[str, str]]] = {
    protocol.BrokerHeartbeatRequestHeader: (
        RC.BROKER_HEARTBEAT, HEARTBEAT,
        {"clusterName": "cluster_name", "brokerAddr": "broker_addr", "brokerName": "broker_name",
         "brokerId": "broker_id", "epoch": "epoch", "maxOffset": "max_offset", "confirmOffset": "confirm_offset",
         "heartbeatTimeoutMills": "heartbeat_timeout_mills", "electionPriority": "election_priority"},
        None, None, {}),
    AlterSyncStateSetRequest: (
        RC.CONTROLLER_ALTER_SYNC_STATE_SET, ALTER,
        {"brokerName": "broker_name", "masterBrokerId": "master_broker_id", "masterEpoch": "master_epoch"},
        ALTER_RESPONSE, protocol.AlterSyncStateSetResponseHeader, {"newSyncStateSetEpoch": "new_sync_state_set_epoch"}),
    protocol.ElectMasterRequestHeader: (
        RC.CONTROLLER_ELECT_MASTER, ELECT,
        {"clusterName": "cluster_name", "brokerName": "broker_name", "brokerId": "broker_id",
         "designateElect": "designate_elect"},
        ELECT_RESPONSE, protocol.ElectMasterResponseHeader,
        {"masterBrokerId": "master_broker_id", "masterAddress": "master_address", "masterEpoch": "master_epoch",
         "syncStateSetEpoch": "sync_state_set_epoch"}),
    protocol.RegisterBrokerToControllerRequestHeader: (
        RC.CONTROLLER_REGISTER_BROKER, REGISTER,
        {"clusterName": "cluster_name", "brokerName": "broker_name", "brokerId": "broker_id",
         "brokerAddress": "broker_address"},
        REGISTER_RESPONSE, protocol.RegisterBrokerToControllerResponseHeader,
        {"clusterName": "cluster_name", "brokerName": "broker_name", "masterBrokerId": "master_broker_id",
         "masterAddress": "master_address", "masterEpoch": "master_epoch", "syncStateSetEpoch": "sync_state_set_epoch"}),
    protocol.GetReplicaInfoRequestHeader: (
        RC.CONTROLLER_GET_REPLICA_INFO, REPLICA_INFO, {"brokerName": "broker_name"},
        REPLICA_INFO_RESPONSE, protocol.GetReplicaInfoResponseHeader,
        {"masterBrokerId": "master_broker_id", "masterAddress": "master_address", "masterEpoch": "master_epoch"}),
    GetMetadataInfoRequest: (RC.CONTROLLER_GET_METADATA_INFO, None, {}, METADATA_RESPONSE, ControllerMetadata,
                             {"group": "group", "controllerLeaderId": "controller_leader_id",
                              "controllerLeaderAddress": "controller_leader_address", "isLeader": "is_leader",
                              "peers": "peers"}),
    GetSyncStateDataRequest: (RC.CONTROLLER_GET_SYNC_STATE_DATA, None, {}, None, None, {}),
    protocol.CleanControllerBrokerDataRequestHeader: (
        RC.CLEAN_BROKER_DATA, CLEAN,
        {"clusterName": "cluster_name", "brokerName": "broker_name",
         "brokerControllerIdsToClean": "broker_controller_ids_to_clean", "isCleanLivingBroker": "clean_living_broker"},
        None, None, {}),
    protocol.GetNextBrokerIdRequestHeader: (
        RC.CONTROLLER_GET_NEXT_BROKER_ID, NEXT_ID, {"clusterName": "cluster_name", "brokerName": "broker_name"},
        NEXT_ID_RESPONSE, protocol.GetNextBrokerIdResponseHeader,
        {"clusterName": "cluster_name", "brokerName": "broker_name", "nextBrokerId": "next_broker_id"}),
    protocol.ApplyBrokerIdRequestHeader: (
        RC.CONTROLLER_APPLY_BROKER_ID, APPLY,
        {"clusterName": "cluster_name", "brokerName": "broker_name", "appliedBrokerId": "applied_broker_id",
         "registerCheckCode": "register_check_code"},
        APPLY_RESPONSE, protocol.ApplyBrokerIdResponseHeader, {"clusterName": "cluster_name", "brokerName": "broker_name"}),
}
_BY_CODE = {int(spec[0]): t for t, spec in _SPEC.items()}
_RESPONSE_HEADERS: dict[type, tuple[Header, dict[str, str]]] = {
    spec[4]: (spec[3], spec[5]) for spec in _SPEC.values() if spec[4] is not None}
_BODY_KINDS: dict[type, str] = {protocol.SyncStateSet: "sync_state_set", protocol.ElectMasterResponseBody: "elect",
                                dict: "replicas_info"}
_BODY_OF = {AlterSyncStateSetRequest: "sync_state_set", protocol.ElectMasterRequestHeader: "elect",
            protocol.RegisterBrokerToControllerRequestHeader: "sync_state_set",
            protocol.GetReplicaInfoRequestHeader: "sync_state_set", GetSyncStateDataRequest: "replicas_info"}
"""The body class of the answer to each request."""


# ------------------------------------------------------------------------------------ bodies
def sync_state_set_json(s: protocol.SyncStateSet) -> dict[str, Any]:
    return {"syncStateSet": long_set_order(sorted(s.sync_state_set)), "syncStateSetEpoch": s.sync_state_set_epoch}


def _member_group_json(g: protocol.BrokerMemberGroup) -> dict[str, Any]:
    return {"brokerAddrs": {str(k): g.broker_addrs[k] for k in long_set_order(sorted(g.broker_addrs))},
            "brokerName": g.broker_name, "cluster": g.cluster}


def _identity_json(r: protocol.ReplicaIdentity) -> dict[str, Any]:
    out = {"alive": r.alive}
    if r.broker_address is not None:
        out["brokerAddress"] = r.broker_address
    out.update(brokerId=r.broker_id, brokerName=r.broker_name)
    return out


def _replicas_json(info: protocol.ReplicasInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"inSyncReplicas": [_identity_json(r) for r in info.in_sync_replicas]}
    if info.master_address is not None:
        out["masterAddress"] = info.master_address
    if info.master_broker_id is not None:
        out["masterBrokerId"] = info.master_broker_id
    out.update(masterEpoch=info.master_epoch,
               notInSyncReplicas=[_identity_json(r) for r in info.not_in_sync_replicas],
               syncStateSetEpoch=info.sync_state_set_epoch)
    return out


def _body_json(kind: str, body: Any) -> bytes | None:
    if body is None:
        return None
    if kind == "sync_state_set":
        return dumps(sync_state_set_json(body))
    if kind == "elect":
        out: dict[str, Any] = {}
        if body.broker_member_group is not None:
            out["brokerMemberGroup"] = _member_group_json(body.broker_member_group)
        out["syncStateSet"] = long_set_order(sorted(body.sync_state_set))
        return dumps(out)
    if kind == "replicas_info":
        return dumps({"replicasInfoTable": {k: _replicas_json(body[k]) for k in hashmap_order(body)}})
    raise AssertionError(kind)


def _obj(raw: bytes | None, what: str) -> dict[str, Any]:
    if not raw:
        raise CodecError(f"{what}: the command has no body")
    try:
        value = loads(raw)
    except (ValueError, RecursionError) as e:
        raise CodecError(f"{what} body is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise CodecError(f"{what} body must be a JSON object")
    return value


def _int(value: Any, what: str, default: int | None = None) -> int | None:
    if value is None:
        return default
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise CodecError(f"{what}: {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"{what} must be a number, got {value!r}")
    return value


def _ids(value: Any, what: str) -> frozenset[int]:
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise CodecError(f"{what} must be a JSON array")
    return frozenset(_int(v, what) for v in value)  # type: ignore[misc]


def _sync_state_set(obj: dict[str, Any], what: str) -> protocol.SyncStateSet:
    return protocol.SyncStateSet(_ids(obj.get("syncStateSet"), f"{what}.syncStateSet"),
                                 _int(obj.get("syncStateSetEpoch"), f"{what}.syncStateSetEpoch", 0))  # type: ignore[arg-type]


def _identity(obj: Any, what: str) -> protocol.ReplicaIdentity:
    if not isinstance(obj, dict):
        raise CodecError(f"{what} must be a JSON object")
    return protocol.ReplicaIdentity(obj.get("brokerName"), _int(obj.get("brokerId"), what),  # type: ignore[arg-type]
                                    obj.get("brokerAddress"), bool(obj.get("alive")))


def _body(kind: str, raw: bytes | None) -> Any:
    if not raw:
        return None
    if kind == "sync_state_set":
        return _sync_state_set(_obj(raw, "SyncStateSet"), "SyncStateSet")
    if kind == "elect":
        obj = _obj(raw, "ElectMasterResponseBody")
        group = obj.get("brokerMemberGroup")
        member_group = None
        if isinstance(group, dict):
            addrs = group.get("brokerAddrs")
            addrs = {} if addrs is None else addrs
            if not isinstance(addrs, dict):
                raise CodecError("BrokerMemberGroup.brokerAddrs must be a JSON object")
            member_group = protocol.BrokerMemberGroup(group.get("cluster"), group.get("brokerName"),
                                                      {_int(k, "brokerAddrs"): v for k, v in addrs.items()})
        return protocol.ElectMasterResponseBody(_ids(obj.get("syncStateSet"), "syncStateSet"), member_group)
    obj = _obj(raw, "BrokerReplicasInfo")
    table = obj.get("replicasInfoTable")
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise CodecError("BrokerReplicasInfo.replicasInfoTable must be a JSON object")
    out = {}
    for name, info in table.items():
        if not isinstance(info, dict):
            raise CodecError(f"ReplicasInfo of {name} must be a JSON object")
        out[name] = protocol.ReplicasInfo(
            _int(info.get("masterBrokerId"), "masterBrokerId"), info.get("masterAddress"),
            _int(info.get("masterEpoch"), "masterEpoch", 0), _int(info.get("syncStateSetEpoch"), "syncStateSetEpoch", 0),
            tuple(_identity(r, "inSyncReplicas") for r in info.get("inSyncReplicas") or ()),
            tuple(_identity(r, "notInSyncReplicas") for r in info.get("notInSyncReplicas") or ()))
    return out


# ------------------------------------------------------------------------------------ the families
class ControllerFamily(Family):
    """The RPCs a broker (or an admin tool) sends to the controllers (see the module docstring)."""

    name = "controller"
    requests = {t: int(spec[0]) for t, spec in _SPEC.items()}
    responses = frozenset({ControllerResponse})
    codes = frozenset(requests.values())

    def encode(self, msg: Any) -> Parts:
        t = type(msg)
        if t is ControllerResponse:
            return self._encode_response(msg)
        code, header, fields, *_ = _SPEC[t]
        source = msg.header if t is AlterSyncStateSetRequest else msg
        values = {java: getattr(source, attr) for java, attr in fields.items()}
        if t is protocol.ElectMasterRequestHeader:
            values["clusterName"] = "" if values["clusterName"] is None else values["clusterName"]
            values["brokerId"] = -1 if values["brokerId"] is None else values["brokerId"]
        body = None
        if t is AlterSyncStateSetRequest:
            body = dumps(sync_state_set_json(msg.sync_state_set))
        elif t is GetSyncStateDataRequest:
            body = dumps(list(msg.broker_names))
        return Parts(code, None, header.write(values) if header is not None else None, body)

    @staticmethod
    def _encode_response(msg: ControllerResponse) -> Parts:
        """The header class and the body class follow from the objects themselves."""
        ext = None
        if msg.header is not None:
            header, fields = _RESPONSE_HEADERS[type(msg.header)]
            ext = header.write({java: getattr(msg.header, attr) for java, attr in fields.items()})
        body = None
        if msg.body is not None:
            kind = _BODY_KINDS.get(type(msg.body))
            if kind is None:
                raise CodecError(f"a controller response cannot carry a {type(msg.body).__name__} body")
            body = _body_json(kind, msg.body)
        return Parts(int(msg.code), msg.remark, ext, body)

    def decode_request(self, cmd: RemotingCommand) -> Any:
        t = _BY_CODE[cmd.code]
        _, header, fields, *_ = _SPEC[t]
        if t is GetMetadataInfoRequest:
            return GetMetadataInfoRequest()
        if t is GetSyncStateDataRequest:
            try:
                names = loads(cmd.body) if cmd.body else []
            except (ValueError, RecursionError) as e:
                raise CodecError(f"CONTROLLER_GET_SYNC_STATE_DATA body is not JSON: {e}") from None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise CodecError("CONTROLLER_GET_SYNC_STATE_DATA body must be a JSON list of broker names")
            return GetSyncStateDataRequest(tuple(names))
        assert header is not None
        h = header.read(cmd)
        values = {attr: h[java] for java, attr in fields.items()}
        if t is AlterSyncStateSetRequest:
            sync = _sync_state_set(_obj(cmd.body, "SyncStateSet"), "SyncStateSet")
            return AlterSyncStateSetRequest(protocol.AlterSyncStateSetRequestHeader(**values), sync)
        if t is protocol.ElectMasterRequestHeader:
            values["cluster_name"] = values["cluster_name"] or None
            values["broker_id"] = None if values["broker_id"] in (None, -1) else values["broker_id"]
            values["designate_elect"] = bool(values["designate_elect"])
        if t is protocol.CleanControllerBrokerDataRequestHeader:
            values["clean_living_broker"] = bool(values["clean_living_broker"])
        return t(**values)

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        _, _, _, header, header_type, fields = _SPEC[answers]
        response_header = None
        if header is not None and header_type is not None and (cmd.ext_fields or header_type is ControllerMetadata):
            h = header.read(cmd)
            response_header = header_type(**{attr: h[java] for java, attr in fields.items()})
        body = _body(_BODY_OF[answers], cmd.body) if answers in _BODY_OF else None
        return ControllerResponse(cmd.code, cmd.remark, response_header, body)


class NotifyFamily(Family):
    """NOTIFY_BROKER_ROLE_CHANGED, which brokers serve (oneway, controller -> broker)."""

    name = "controller-notify"
    requests = {NotifyBrokerRoleChanged: int(RC.NOTIFY_BROKER_ROLE_CHANGED)}
    oneways = frozenset({NotifyBrokerRoleChanged})
    codes = frozenset({int(RC.NOTIFY_BROKER_ROLE_CHANGED)})

    def encode(self, msg: NotifyBrokerRoleChanged) -> Parts:
        ext = NOTIFY.write({"masterAddress": msg.master_address, "masterEpoch": msg.master_epoch,
                            "syncStateSetEpoch": msg.sync_state_set_epoch, "masterBrokerId": msg.master_broker_id})
        body = dumps(sync_state_set_json(protocol.SyncStateSet(msg.sync_state_set, msg.sync_state_set_epoch)))
        return Parts(int(RC.NOTIFY_BROKER_ROLE_CHANGED), None, ext, body)

    def decode_request(self, cmd: RemotingCommand) -> Any:
        h = NOTIFY.read(cmd)
        sync = _sync_state_set(_obj(cmd.body, "SyncStateSet"), "SyncStateSet") if cmd.body else None
        return NotifyBrokerRoleChanged(h["masterAddress"], h["masterEpoch"] if h["masterEpoch"] is not None else -1,
                                       h["syncStateSetEpoch"] if h["syncStateSetEpoch"] is not None else -1,
                                       h["masterBrokerId"], sync.sync_state_set if sync is not None else frozenset())


CONTROLLER_FAMILY = ControllerFamily()
NOTIFY_FAMILY = NotifyFamily()


class ControllerNodeCodec(RemotingCodec):
    """The remoting codec of a controller: the controller RPCs, the role-change notices it sends and its
    DLedger group's RPCs. ``serves`` (default: all three) - ``rocketlab node`` gives a controller the
    controller RPCs and DLedger's; the simulator's controller-mode cluster, whose brokers send the
    controller RPCs and take the notices, serves them all (:func:`rocketlab.broker.protocol.auto_switch_broker_codec`
    is a broker's on TCP)."""

    def __init__(self, serves: tuple[str, ...] | None = None) -> None:
        super().__init__((CONTROLLER_FAMILY, NOTIFY_FAMILY, DLEDGER_FAMILY), serves)
