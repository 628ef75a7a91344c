"""The controller's events: what a validated request turns into, what the controllers' replicated log
carries, and what every controller applies on commit. RocketMQ 5.3.3, ``controller/.../impl/event/``.

Byte format of one event (``EventSerializer``): a 2-byte big-endian :class:`EventType` id, then the event as
fastjson writes it (``FastJsonSerializer``): every getter of the class as a camelCase property, sorted by
name, null ones left out - so ``eventType`` (the type's name) too - sets as arrays (ascending, as Java's
``HashSet`` of small ids iterates), text as UTF-8. The same events give the same bytes as a real
``DLedgerController`` writes (the oracle test decodes a Java-written log with ours and back). Reading
tolerates what fastjson's parser tolerates: ``eventType`` (checked against the type id) and a missing
nullable property. Java's ``deserialize`` answers null for a short or unknown frame;
:meth:`EventSerializer.deserialize` raises a :class:`~rocketlab.errors.CodecError` naming the problem instead,
so a corrupt log entry is never applied silently.
"""

from __future__ import annotations

import enum
import json
import struct
from dataclasses import dataclass, fields
from typing import Any

from rocketlab.errors import CodecError

_TYPE_ID = struct.Struct(">h")


class EventType(enum.IntEnum):
    """``EventType``: the 2-byte ids written before each event."""

    ALTER_SYNC_STATE_SET_EVENT = 1
    APPLY_BROKER_ID_EVENT = 2
    ELECT_MASTER_EVENT = 3
    READ_EVENT = 4
    CLEAN_BROKER_DATA_EVENT = 5
    UPDATE_BROKER_ADDRESS = 6


@dataclass(frozen=True)
class AlterSyncStateSetEvent:
    """Models AlterSyncStateSetEvent: the broker set's SyncStateSet becomes ``new_sync_state_set``."""

    broker_name: str
    new_sync_state_set: frozenset[int]

    event_type = EventType.ALTER_SYNC_STATE_SET_EVENT


@dataclass(frozen=True)
class ApplyBrokerIdEvent:
    """Models ApplyBrokerIdEvent: ``new_broker_id`` now belongs to the broker at ``broker_address``."""

    cluster_name: str
    broker_name: str
    broker_address: str
    new_broker_id: int
    register_check_code: str

    event_type = EventType.APPLY_BROKER_ID_EVENT


@dataclass(frozen=True)
class ElectMasterEvent:
    """Models ElectMasterEvent: a new master (``new_master_elected``), or none: the old master is gone
    and nobody could replace it (master cleared, masterEpoch still bumped, SyncStateSet kept)."""

    broker_name: str
    new_master_elected: bool
    new_master_broker_id: int | None = None

    event_type = EventType.ELECT_MASTER_EVENT


@dataclass(frozen=True)
class CleanBrokerDataEvent:
    """Models CleanBrokerDataEvent: forget some broker ids of a set, or the whole set (None)."""

    broker_name: str
    broker_id_set_to_clean: frozenset[int] | None = None

    event_type = EventType.CLEAN_BROKER_DATA_EVENT


@dataclass(frozen=True)
class UpdateBrokerAddressEvent:
    """Models UpdateBrokerAddressEvent: a registered broker came back at a new address."""

    cluster_name: str
    broker_name: str
    broker_address: str
    broker_id: int

    event_type = EventType.UPDATE_BROKER_ADDRESS


EventMessage = AlterSyncStateSetEvent | ApplyBrokerIdEvent | ElectMasterEvent | CleanBrokerDataEvent | \
    UpdateBrokerAddressEvent
EVENT_CLASSES: dict[EventType, type] = {cls.event_type: cls for cls in (
    AlterSyncStateSetEvent, ApplyBrokerIdEvent, ElectMasterEvent, CleanBrokerDataEvent, UpdateBrokerAddressEvent)}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


class EventSerializer:
    """Models EventSerializer: see the module docstring for the format and how it differs from Java."""

    def serialize(self, event: EventMessage) -> bytes:
        if type(event) not in EVENT_CLASSES.values():
            raise CodecError(f"cannot serialize {type(event).__name__}: not a controller event")
        body: dict[str, Any] = {"eventType": event.event_type.name}
        for f in fields(event):
            value = getattr(event, f.name)
            if value is not None:
                body[_camel(f.name)] = sorted(value) if isinstance(value, frozenset) else value
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return _TYPE_ID.pack(event.event_type) + text.encode("utf-8")

    def deserialize(self, data: bytes) -> EventMessage:
        if len(data) < _TYPE_ID.size:
            raise CodecError(f"controller event of {len(data)} bytes is shorter than its 2-byte type", 0)
        (type_id,) = _TYPE_ID.unpack_from(data)
        try:
            cls = EVENT_CLASSES[EventType(type_id)]
        except (ValueError, KeyError):
            raise CodecError(f"unknown controller event type {type_id}", 0) from None
        try:
            body = json.loads(data[_TYPE_ID.size:])
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CodecError(f"{cls.__name__}: body is not JSON ({e})", _TYPE_ID.size) from None
        if not isinstance(body, dict):
            raise CodecError(f"{cls.__name__}: body must be a JSON object", _TYPE_ID.size)
        kwargs: dict[str, Any] = {}
        known = {_camel(f.name): f for f in fields(cls)}
        if "eventType" in body and body.pop("eventType") != cls.event_type.name:
            raise CodecError(f"{cls.__name__}: eventType does not match the type id {type_id}", _TYPE_ID.size)
        unknown = set(body) - set(known)
        if unknown:
            raise CodecError(f"{cls.__name__} has no field(s) {sorted(unknown)}", _TYPE_ID.size)
        for key, f in known.items():
            if key not in body and "None" not in str(f.type):
                raise CodecError(f"{cls.__name__}: missing field {key}", _TYPE_ID.size)
            kwargs[f.name] = _check_field(cls.__name__, key, f.type, body.get(key))
        return cls(**kwargs)


def _check_field(owner: str, key: str, kind: Any, value: Any) -> Any:
    kind = str(kind)
    optional = "None" in kind
    if value is None:
        if optional:
            return None
        raise CodecError(f"{owner}.{key} must not be null", _TYPE_ID.size)
    if "frozenset" in kind:
        if not isinstance(value, list) or not all(type(v) is int for v in value):
            raise CodecError(f"{owner}.{key} must be an array of broker ids", _TYPE_ID.size)
        return frozenset(value)
    expected = bool if kind.startswith("bool") else int if kind.startswith("int") else str
    if type(value) is not expected:
        raise CodecError(f"{owner}.{key} must be {expected.__name__}, got {value!r}", _TYPE_ID.size)
    return value
