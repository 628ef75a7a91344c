"""How controller RPCs travel between nodes: the request messages, the one response shape, the role-change
notice, and the codec of a controller node's message port.

Requests are the header dataclasses of :mod:`rocketlab.controller.protocol` (plus
:class:`AlterSyncStateSetRequest` and :class:`GetSyncStateDataRequest`, which carry a body); every answer
is a :class:`ControllerResponse` (code, remark, response header, body), as a RemotingCommand response
is. A controller tells brokers about a new master with a oneway :class:`NotifyBrokerRoleChanged`.

:class:`ControllerNodeCodec` (the codec of every node of a controller-mode cluster) tags each frame with
its family, like :class:`~rocketlab.broker.dledger_broker.DLedgerBrokerCodec`: ``0x01`` + DLedger's own
bytes (the controllers' Raft log), ``0x02`` + the broker's JSON (SEND_MESSAGE, PULL_MESSAGE), ``0x03`` +
the controller RPC as tagged JSON (dataclasses as ``{"@": name, ...}``,
sets as ``{"@set": [...]}``, maps with int keys as ``{"@map": [[k, v], ...]}``). Simplified: Java sends
RemotingCommands (header fields as strings in ``extFields``, bodies as fastjson bytes); the tagged JSON
keeps the same fields without that layer.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from rocketlab.controller import protocol
from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.protocol import MESSAGE_TYPES as DLEDGER_MESSAGES
from rocketlab.errors import CodecError
from rocketlab.jsoncodec import dump_json


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
MESSAGE_CLASSES: tuple[type, ...] = (
    *REQUEST_TYPES, ControllerResponse, ControllerMetadata, NotifyBrokerRoleChanged, protocol.SyncStateSet,
    protocol.BrokerMemberGroup, protocol.ElectMasterResponseBody, protocol.ReplicaIdentity, protocol.ReplicasInfo,
    protocol.AlterSyncStateSetRequestHeader, protocol.ElectMasterResponseHeader,
    protocol.AlterSyncStateSetResponseHeader, protocol.GetNextBrokerIdResponseHeader,
    protocol.ApplyBrokerIdResponseHeader, protocol.RegisterBrokerToControllerResponseHeader,
    protocol.GetReplicaInfoResponseHeader)
_BY_NAME = {cls.__name__: cls for cls in MESSAGE_CLASSES}


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"@": type(value).__name__, **{f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, frozenset | set):
        return {"@set": sorted(value)}
    if isinstance(value, dict):
        return {"@map": [[_to_plain(k), _to_plain(v)] for k, v in value.items()]}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)  # IntEnum codes travel as numbers
    return value


def _from_plain(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_from_plain(v) for v in value)
    if not isinstance(value, dict):
        return value
    if "@set" in value:
        if set(value) != {"@set"} or not isinstance(value["@set"], list):
            raise CodecError("a set must be {\"@set\": [...]}")
        return frozenset(_from_plain(v) for v in value["@set"])
    if "@map" in value:
        pairs = value["@map"]
        if set(value) != {"@map"} or not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in pairs):
            raise CodecError("a map must be {\"@map\": [[key, value], ...]}")
        return {_from_plain(k): _from_plain(v) for k, v in pairs}
    name = value.get("@")
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CodecError(f"unknown controller message type {name!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    given = set(value) - {"@"}
    if given - names:
        raise CodecError(f"{name} has no field(s) {sorted(given - names)}")
    try:
        return cls(**{k: _from_plain(v) for k, v in value.items() if k != "@"})
    except TypeError as e:
        raise CodecError(f"bad {name}: {e}") from None


class ControllerNodeCodec:
    """The codec of a controller node's port (and of a broker talking to it): see the module docstring."""

    DLEDGER, BROKER, CONTROLLER = b"\x01", b"\x02", b"\x03"

    def __init__(self) -> None:
        from rocketlab.broker.protocol import BROKER_MESSAGES, broker_codec

        self.dledger = DLedgerCodec()
        self.broker = broker_codec()
        self._dledger_types = frozenset(DLEDGER_MESSAGES)
        self._broker_types = frozenset(BROKER_MESSAGES)

    def encode(self, msg: Any) -> bytes:
        if type(msg) in self._dledger_types:
            return self.DLEDGER + self.dledger.encode(msg)
        if type(msg) in self._broker_types:
            return self.BROKER + self.broker.encode(msg)
        if type(msg).__name__ not in _BY_NAME or _BY_NAME[type(msg).__name__] is not type(msg):
            raise CodecError(f"cannot encode {type(msg).__name__}: not a controller or DLedger message")
        return self.CONTROLLER + dump_json(_to_plain(msg))

    def wire_size(self, msg: Any) -> int | None:
        """DLedger messages are sized without encoding; controller RPCs are always serialised."""
        if type(msg) in self._dledger_types:
            size = self.dledger.wire_size(msg)
            return None if size is None else 1 + size
        return None

    def decode(self, data: bytes) -> Any:
        tag, body = bytes(data[:1]), bytes(data[1:])
        if tag == self.DLEDGER:
            return self.dledger.decode(body)
        if tag == self.BROKER:
            return self.broker.decode(body)
        if tag != self.CONTROLLER:
            raise CodecError(f"unknown message family tag {tag!r} (expected 0x01 DLedger, 0x02 broker or 0x03 "
                             "controller)", 0)
        try:
            plain = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CodecError(f"controller message is not JSON: {e}", 1) from None
        msg = _from_plain(plain)
        if type(msg) not in (*REQUEST_TYPES, ControllerResponse, NotifyBrokerRoleChanged):
            raise CodecError(f"{type(msg).__name__} is not a message of its own", 1)
        return msg
