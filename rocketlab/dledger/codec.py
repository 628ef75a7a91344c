"""DLedger's RPCs on RocketMQ remoting, as DLedger 0.3.1.2 writes and reads them (``DLedgerRpcNettyService``).

A request is a RemotingCommand with DLedger's request code (VOTE 51001, HEART_BEAT 51002, PUSH 51004,
APPEND 50001, GET 50002, METADATA 50000, LEADERSHIP_TRANSFER 51005), no ext fields, and the request
object as fastjson JSON in the body (``JSON.toJSONBytes(request)``); the answer is a response command
with code 200 (``DLedgerResponseCode.SUCCESS``, whatever the answer's own ``code``), the request's
opaque, and the response object as JSON in the body. Which response class a body is follows from the
request it answers.

The body JSON is fastjson's writing of the Java bean: every public getter's property sorted by name,
nulls left out, enums by name, ``byte[]`` as base64, entries as objects - so a PushEntryRequest also
carries ``batch``, ``count``, ``firstEntryIndex`` and ``lastEntryIndex`` (getters without fields), and
its ``batchEntry`` list even when empty. Decoding is as lenient as ``JSON.parseObject``: unknown keys
(those getters among them) are ignored, a missing key keeps the class's default, a number may come as
a string, an enum by name or by ordinal; it is as strict where fastjson refuses: a body that is not a
JSON object, a number that does not fit, a string where an object is expected, an unknown enum name,
invalid base64.

Differences from DLedger 0.3.1.2, on purpose: an APPEND whose body has ``batchMsgs`` decodes as a
BatchAppendEntryRequest (Java's RPC reads every APPEND as a plain AppendEntryRequest, so batches work
only in-process there); an AppendEntryResponse to a batch carries its ``positions`` (Java keeps them in
the future, off the wire); PULL (51003, declared, never implemented) is not decoded.
"""

from __future__ import annotations

import base64
import binascii
import enum
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.protocol import (
    MESSAGE_TYPES,
    REQUEST_CODES,
    AppendEntryRequest,
    AppendEntryResponse,
    BatchAppendEntryRequest,
    DLedgerRequestCode,
    DLedgerResponseCode,
    GetEntriesRequest,
    GetEntriesResponse,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    MetadataRequest,
    MetadataResponse,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    RequestOrResponse,
    VoteRequest,
    VoteResponse,
    VoteResult,
)
from rocketlab.errors import CodecError
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RESPONSE_FLAG, RemotingCommand, header_json
from rocketlab.remoting.family import Family, Parts
from rocketlab.remoting.fastjson import dumps, hashmap_order, loads

INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)
RESPONSE_CODE = int(DLedgerResponseCode.SUCCESS)
"""The remoting code of every DLedger response (``handleResponse``)."""

RESPONSE_OF: dict[type, type] = {
    VoteRequest: VoteResponse, HeartBeatRequest: HeartBeatResponse, PushEntryRequest: PushEntryResponse,
    AppendEntryRequest: AppendEntryResponse, BatchAppendEntryRequest: AppendEntryResponse,
    GetEntriesRequest: GetEntriesResponse, MetadataRequest: MetadataResponse,
    LeadershipTransferRequest: LeadershipTransferResponse,
}
"""The response class that answers each request class (``DLedgerRpcNettyService``'s parse of the body)."""

_BY_CODE: dict[int, type] = {
    int(DLedgerRequestCode.VOTE): VoteRequest, int(DLedgerRequestCode.HEART_BEAT): HeartBeatRequest,
    int(DLedgerRequestCode.PUSH): PushEntryRequest, int(DLedgerRequestCode.APPEND): AppendEntryRequest,
    int(DLedgerRequestCode.GET): GetEntriesRequest, int(DLedgerRequestCode.METADATA): MetadataRequest,
    int(DLedgerRequestCode.LEADERSHIP_TRANSFER): LeadershipTransferRequest,
}

# ---------------------------------------------------------------------- the JSON of each class
# kind of a property: how it is written and read. "derived": a getter without a field (written, ignored on read)
_BASE = {"code": ("code", "code"), "group": ("group", "str"), "leaderId": ("leader_id", "str"),
         "localId": ("local_id", "str"), "remoteId": ("remote_id", "str"), "term": ("term", "long")}
_PROPS: dict[type, dict[str, tuple[str, str]]] = {
    VoteRequest: {"ledgerEndIndex": ("ledger_end_index", "long"), "ledgerEndTerm": ("ledger_end_term", "long")},
    VoteResponse: {"voteResult": ("vote_result", "vote_result")},
    HeartBeatRequest: {}, HeartBeatResponse: {},
    PushEntryRequest: {"batch": ("is_batch", "derived_bool"), "batchEntry": ("batch_entry", "entries!"),
                       "commitIndex": ("commit_index", "long"), "count": ("count", "derived_long"),
                       "entry": ("entry", "entry"), "firstEntryIndex": ("first_entry_index", "derived_long"),
                       "lastEntryIndex": ("last_entry_index", "derived_long"), "totalSize": ("total_size", "long"),
                       "type": ("type", "push_type")},
    PushEntryResponse: {"beginIndex": ("begin_index", "long"), "count": ("count", "long"),
                        "endIndex": ("end_index", "long"), "index": ("index", "long?")},
    AppendEntryRequest: {"body": ("body", "bytes")},
    BatchAppendEntryRequest: {"batchMsgs": ("batch_msgs", "bytes_list"), "body": ("body", "bytes")},
    AppendEntryResponse: {"index": ("index", "long"), "pos": ("pos", "long"), "positions": ("positions", "longs?")},
    GetEntriesRequest: {"beginIndex": ("begin_index", "long"), "maxSize": ("max_size", "long")},
    GetEntriesResponse: {"entries": ("entries", "entries")},
    MetadataRequest: {}, MetadataResponse: {"peers": ("peers", "str_map")},
    LeadershipTransferRequest: {"takeLeadershipLedgerIndex": ("take_leadership_ledger_index", "long"),
                                "transferId": ("transfer_id", "str"), "transfereeId": ("transferee_id", "str")},
    LeadershipTransferResponse: {},
}
_PLAN: dict[type, tuple[tuple[str, str, str], ...]] = {
    t: tuple((key, *spec) for key, spec in sorted({**_BASE, **_PROPS[t]}.items())) for t in MESSAGE_TYPES}
"""Per class: (JSON key, attribute, kind) in fastjson's (sorted) order."""
_READ: dict[type, dict[str, tuple[str, str]]] = {
    t: {key: (attr, kind) for key, attr, kind in plan if not kind.startswith("derived")} for t, plan in _PLAN.items()}
_INIT: dict[type, frozenset[str]] = {t: frozenset(f.name for f in fields(t) if f.init) for t in MESSAGE_TYPES}
_ENTRY_KEYS: tuple[tuple[str, str, tuple[int, int]], ...] = (
    ("bodyCrc", "body_crc", INT32), ("chainCrc", "chain_crc", INT32), ("channel", "channel", INT32),
    ("index", "index", INT64), ("magic", "magic", INT32), ("pos", "pos", INT64), ("size", "size", INT32),
    ("term", "term", INT64))
"""DLedgerEntry's properties after ``body`` (sorted)."""


def _entry_json(e: DLedgerEntry) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if e.body is not None:
        out["body"] = base64.b64encode(e.body).decode()
    out.update((key, getattr(e, attr)) for key, attr, _ in _ENTRY_KEYS)
    return out


def _value_json(kind: str, value: Any) -> Any:
    if kind in ("long", "long?", "str", "derived_long", "derived_bool"):
        return value
    if kind == "code":
        return int(value)
    if kind in ("vote_result", "push_type"):
        return value.name
    if kind == "entry":
        return _entry_json(value)
    if kind in ("entries", "entries!"):
        return [_entry_json(e) for e in value]
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "bytes_list":
        return [base64.b64encode(b).decode() for b in value]
    if kind == "longs?":
        return list(value) if value else None
    if kind == "str_map":
        return {k: value[k] for k in hashmap_order(value)}  # a Java HashMap
    raise AssertionError(kind)


def body_json(msg: RequestOrResponse) -> dict[str, Any]:
    """The properties fastjson writes for ``msg``, in its order (nulls left out)."""
    out: dict[str, Any] = {}
    for key, attr, kind in _PLAN[type(msg)]:
        value = getattr(msg, attr)
        if value is None:
            continue
        value = _value_json(kind, value)
        if value is not None:
            out[key] = value
    return out


# ---------------------------------------------------------------------- reading, as JSON.parseObject
def _long(value: Any, what: str, bounds: tuple[int, int] = INT64) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise CodecError(f"{what}: {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise CodecError(f"{what} must be an integer in [{bounds[0]}, {bounds[1]}], got {value!r}")
    return value


def _str(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise CodecError(f"{what} must be a string, got {value!r}")


def _enum(enum_type: type[enum.Enum], value: Any, what: str) -> Any:
    members = list(enum_type)
    if isinstance(value, str) and value in enum_type.__members__:
        return enum_type[value]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(members):
        return members[value]  # fastjson reads an enum's ordinal too
    raise CodecError(f"{what} must be one of {[m.name for m in members]}, got {value!r}")


def _bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise CodecError(f"{what} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise CodecError(f"{what} is not valid base64") from None


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise CodecError(f"{what} must be a JSON array")
    return value


def _entry(value: Any, what: str) -> DLedgerEntry:
    if not isinstance(value, dict):
        raise CodecError(f"{what} must be a JSON object")
    kwargs: dict[str, Any] = {attr: 0 if (v := value.get(key)) is None else _long(v, f"{what}.{key}", bounds)
                              for key, attr, bounds in _ENTRY_KEYS}
    body = value.get("body")
    kwargs["body"] = None if body is None else _bytes(body, f"{what}.body")
    return DLedgerEntry(**kwargs)


def _read(kind: str, value: Any, what: str) -> Any:
    if kind == "long":
        return _long(value, what)
    if kind == "long?":
        return None if value is None else _long(value, what)
    if kind == "str":
        return None if value is None else _str(value, what)
    if kind == "code":
        return DLedgerResponseCode.value_of(_long(value, what, INT32))
    if kind == "vote_result":
        return _enum(VoteResult, value, what)
    if kind == "push_type":
        return _enum(PushType, value, what)
    if kind == "entry":
        return None if value is None else _entry(value, what)
    if kind in ("entries", "entries!"):
        return () if value is None else tuple(_entry(v, what) for v in _list(value, what))
    if kind == "bytes":
        return b"" if value is None else _bytes(value, what)
    if kind == "bytes_list":
        return () if value is None else tuple(_bytes(v, what) for v in _list(value, what))
    if kind == "longs?":
        return () if value is None else tuple(_long(v, what) for v in _list(value, what))
    if kind == "str_map":
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise CodecError(f"{what} must be a JSON object")
        return {str(k): _str(v, what) for k, v in value.items()}
    raise AssertionError(kind)


def from_json(msg_type: type[RequestOrResponse], body: bytes | None) -> RequestOrResponse:
    """``JSON.parseObject(body, msg_type)`` (see the module docstring for what is lenient and what is not)."""
    if not body:
        raise CodecError(f"{msg_type.__name__}: the command has no body")
    try:
        obj = loads(body)
    except (ValueError, RecursionError) as e:
        raise CodecError(f"{msg_type.__name__} body is not JSON: {e}") from None
    if not isinstance(obj, dict):
        raise CodecError(f"{msg_type.__name__} body must be a JSON object")
    if msg_type is AppendEntryRequest and obj.get("batchMsgs") is not None:
        msg_type = BatchAppendEntryRequest
    read = _READ[msg_type]
    kwargs: dict[str, Any] = {}
    for key, value in obj.items():
        spec = read.get(key)
        if spec is None:
            continue  # fastjson ignores what the class has no setter for
        attr, kind = spec
        if value is None and kind in ("long", "code"):
            continue  # a null primitive keeps its default
        kwargs[attr] = _read(kind, value, f"{msg_type.__name__}.{key}")
    return msg_type(**{k: v for k, v in kwargs.items() if k in _INIT[msg_type]})


# ---------------------------------------------------------------------- the family
def _frame_overhead(code: int, flag: int) -> int:
    return 8 + len(header_json(RemotingCommand(code=code, flag=flag)))


class DLedgerFamily(Family):
    """DLedger 0.3.1.2's RPCs (see the module docstring)."""

    name = "dledger"
    requests = {t: int(c) for t, c in REQUEST_CODES.items()}
    responses = frozenset(set(RESPONSE_OF.values()))
    codes = frozenset(_BY_CODE)

    def encode(self, msg: Any) -> Parts:
        body = dumps(body_json(msg))
        code = self.requests.get(type(msg))
        return Parts(RESPONSE_CODE if code is None else code, None, None, body)

    def decode_request(self, cmd: RemotingCommand) -> Any:
        return from_json(_BY_CODE[cmd.code], cmd.body)

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        response_type = RESPONSE_OF[answers]
        if cmd.code != RESPONSE_CODE:
            raise CodecError(f"{response_type.__name__}: remoting code {cmd.code} ({cmd.remark or 'no remark'}), "
                             f"not {RESPONSE_CODE}")
        return from_json(response_type, cmd.body)

    def sender(self, msg: Any) -> str | None:
        return msg.local_id if type(msg) in self.requests else None

    def wire_size(self, msg: Any) -> int | None:
        sizer = _SIZERS.get(type(msg))
        return None if sizer is None else sizer(msg)


# ---------------------------------------------------------------------- sizes without encoding
def _str_size(value: str) -> int:
    return len(value) + 2 if value.isascii() and value.isalnum() else len(dumps(value))


def _b64_size(value: bytes | bytearray) -> int:
    return 4 * ((len(value) + 2) // 3) + 2


_ENTRY_SIZES: dict[int, tuple[DLedgerEntry, int]] = {}
"""id(entry) -> (entry, its JSON size): a leader pushes the same entry object to every follower. The
entry is held so that its id cannot be reused while cached; the cache is emptied when it gets big."""
_ENTRY_FIXED = 2 + sum(len(key) + 3 for key, _, _ in _ENTRY_KEYS) + len(_ENTRY_KEYS) - 1


def _entry_size(entry: DLedgerEntry) -> int:
    hit = _ENTRY_SIZES.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1]
    if len(_ENTRY_SIZES) >= 4096:
        _ENTRY_SIZES.clear()
    e = entry
    size = _ENTRY_FIXED + len(str(e.magic)) + len(str(e.size)) + len(str(e.index)) + len(str(e.term)) \
        + len(str(e.pos)) + len(str(e.channel)) + len(str(e.chain_crc)) + len(str(e.body_crc))
    if e.body is not None:
        size += 8 + _b64_size(e.body)  # "body":...,
    _ENTRY_SIZES[id(entry)] = (entry, size)
    return size


def _seq_size(values: Any, item: Callable[[Any], int]) -> int:
    return 2 + sum(item(v) for v in values) + max(0, len(values) - 1)


_KIND_SIZE: dict[str, str] = {
    "long": "len(str(v))", "long?": "len(str(v))", "derived_long": "len(str(v))",
    "derived_bool": "(4 if v else 5)", "str": "(len(v) + 2 if v.isascii() and v.isalnum() else _str_size(v))",
    "code": "len(str(v._value_))", "vote_result": "len(v._name_) + 2", "push_type": "len(v._name_) + 2",
    "entry": "_entry_size(v)", "entries": "_seq_size(v, _entry_size)", "entries!": "_seq_size(v, _entry_size)",
    "bytes": "_b64_size(v)", "bytes_list": "_seq_size(v, _b64_size)",
}


def _size_function(msg_type: type) -> Callable[[Any], int] | None:
    """``wire_size`` of one class written out once: the frame's fixed part (prefix and header, opaque 0),
    the braces, and per present property its ``"key":``, its value and a separating comma."""
    plan = _PLAN[msg_type]
    if any(kind not in _KIND_SIZE for _, _, kind in plan if kind != "longs?"):
        return None
    code = REQUEST_CODES.get(msg_type)
    fixed = _frame_overhead(int(code), 0) if code is not None else _frame_overhead(RESPONSE_CODE, RESPONSE_FLAG)
    lines = ["def size(msg):", f"    t = {fixed + 2}", "    n = 0"]
    for key, attr, kind in plan:
        if kind == "longs?":  # AppendEntryResponse.positions: written only when there are some
            lines += [f"    v = msg.{attr}", "    if v:", "        n += 1",
                      f"        t += {len(key) + 3} + _seq_size(v, _int_size)"]
            continue
        lines += [f"    v = msg.{attr}", "    if v is not None:", "        n += 1",
                  f"        t += {len(key) + 3} + {_KIND_SIZE[kind]}"]
    lines.append("    return t + n - 1 if n else t")
    namespace: dict[str, Any] = {"_str_size": _str_size, "_entry_size": _entry_size, "_seq_size": _seq_size,
                                 "_b64_size": _b64_size, "_int_size": lambda v: len(str(v))}
    exec(compile("\n".join(lines), f"<wire_size of {msg_type.__name__}>", "exec"), namespace)  # noqa: S102
    return namespace["size"]


_SIZERS: dict[type, Callable[[Any], int]] = {
    t: f for t in MESSAGE_TYPES if t is not MetadataResponse and (f := _size_function(t)) is not None}
"""Per class its ``wire_size``; MetadataResponse (a mutable map) has none: the simulator encodes it."""

DLEDGER_FAMILY = DLedgerFamily()


class DLedgerCodec(RemotingCodec):
    """The remoting codec of a DLedger member and its clients: DLedger's RPCs, which it serves."""

    def __init__(self) -> None:
        super().__init__((DLEDGER_FAMILY,))
