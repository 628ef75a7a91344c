"""DLedgerCodec: DLedger messages to bytes and back, shaped like a RocketMQ remoting frame.

Frame (big-endian)::

    int32  length          bytes that follow this field
    int32  type+headerLen  high byte: serialize type (0 = JSON), low 3 bytes: header length
    bytes  header          JSON {"code": request code (0 for a response), "flag": 0 request / 1 response,
                                 "type": message class name}
    bytes  body            JSON of the message, Java's camelCase field names (fastjson style): enums by
                           name, byte arrays base64, entries as objects, null fields omitted

:meth:`DLedgerCodec.decode` raises :class:`~rocketlab.errors.CodecError` (with the offset) on anything
malformed: short or overlong frames, bad lengths, invalid UTF-8 or JSON, unknown types, unknown or
mistyped fields, out-of-range integers. Simplified against DLedgerRpcNettyService: no opaque/request id
(the runtime pairs replies), no remoting header fields beyond the three above.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import struct
from dataclasses import fields
from typing import Any

import orjson

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.protocol import (
    MESSAGE_TYPES,
    REQUEST_CODES,
    DLedgerResponseCode,
    MetadataResponse,
    PushType,
    RequestOrResponse,
    VoteResult,
)
from rocketlab.errors import CodecError
from rocketlab.jsoncodec import dump_json

_INT32 = struct.Struct(">i")
_PREFIX = struct.Struct(">ii")
MAX_FRAME = 64 * 1024 * 1024
INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)

_TYPES = {t.__name__: t for t in MESSAGE_TYPES}
_STR = ("group", "remote_id", "local_id", "leader_id", "transfer_id", "transferee_id")
_INT = ("term", "ledger_end_index", "ledger_end_term", "commit_index", "total_size", "begin_index", "end_index",
        "count", "max_size", "pos", "take_leadership_ledger_index")
_KINDS: dict[str, str] = {**{n: "str?" for n in _STR}, **{n: "int" for n in _INT}, "code": "code",
                          "vote_result": "vote_result", "type": "push_type", "entry": "entry?",
                          "batch_entry": "entries", "entries": "entries", "body": "bytes", "batch_msgs": "bytes_list",
                          "positions": "int_list", "peers": "str_map", "index": "int?"}
_ENTRY_FIELDS = {"magic": INT32, "size": INT32, "index": INT64, "term": INT64, "pos": INT64, "channel": INT32,
                 "chain_crc": INT32, "body_crc": INT32}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _header(msg_type: type) -> bytes:
    code = REQUEST_CODES.get(msg_type)
    header = {"code": int(code) if code is not None else 0, "flag": 0 if code is not None else 1,
              "type": msg_type.__name__}
    return json.dumps(header, separators=(",", ":")).encode()


# Per message type, computed once: the header bytes, (attribute, JSON key) pairs to encode, and JSON key ->
# (attribute, kind) to decode. The bytes are the same as building everything per message.
_HEADERS: dict[type, bytes] = {t: _header(t) for t in MESSAGE_TYPES}
_TYPE_OF_HEADER: dict[bytes, type] = {h: t for t, h in _HEADERS.items()}
_ENCODE_PLAN: dict[type, tuple[tuple[str, str], ...]] = {
    t: tuple((f.name, _camel(f.name)) for f in fields(t)) for t in MESSAGE_TYPES}
_DECODE_PLAN: dict[type, dict[str, tuple[str, str]]] = {
    t: {_camel(f.name): (f.name, _KINDS[f.name]) for f in fields(t)} for t in MESSAGE_TYPES}
_ENTRY_KEYS: tuple[tuple[str, str, tuple[int, int]], ...] = tuple(
    (k, _camel(k), b) for k, b in _ENTRY_FIELDS.items())
_ENTRY_KNOWN = frozenset(camel for _, camel, _ in _ENTRY_KEYS) | {"body"}
_ENTRY_FIXED = 2 + sum(len(camel) + 3 for _, camel, _ in _ENTRY_KEYS) + len(_ENTRY_KEYS) - 1


class DLedgerCodec:
    """The :class:`~rocketlab.core.Codec` for DLedger members (and clients): see the module docstring."""

    def encode(self, msg: Any) -> bytes:
        head = _HEADERS.get(type(msg))
        if head is None:
            raise CodecError(f"cannot encode {type(msg).__name__}: not a DLedger message")
        body = dump_json(_to_json(msg), sort_keys=True)
        return _PREFIX.pack(4 + len(head) + len(body), len(head)) + head + body

    def wire_size(self, msg: Any) -> int | None:
        """``len(self.encode(msg))``, computed without building the bytes (the simulator traces a
        message's size without serialising it), or None for a message this cannot size (one carrying a
        mutable map, which the simulator must copy through the codec anyway)."""
        sizer = _SIZE_FUNCTIONS.get(type(msg))
        return None if sizer is None else sizer(msg)

    def decode(self, data: bytes) -> Any:
        data = bytes(data)
        if len(data) < _PREFIX.size:
            raise CodecError(f"frame of {len(data)} bytes is shorter than its 8-byte prefix", 0)
        length, mark = _PREFIX.unpack_from(data)
        if length < 4 or length > MAX_FRAME or length != len(data) - 4:
            raise CodecError(f"frame length {length} does not match the {len(data) - 4} bytes that follow", 0)
        serialize_type, head_len = (mark >> 24) & 0xFF, mark & 0xFFFFFF
        if serialize_type != 0:
            raise CodecError(f"unsupported serialize type {serialize_type} (only 0 = JSON)", 4)
        if head_len > length - 4:
            raise CodecError(f"header length {head_len} exceeds the frame", 4)
        body_at = 8 + head_len
        known = _TYPE_OF_HEADER.get(data[8:body_at])
        if known is not None:  # the exact bytes this codec writes for a known type: nothing to check
            body = _load_json(data[body_at:], body_at)
            if not isinstance(body, dict):
                raise CodecError(f"{known.__name__} body must be a JSON object", body_at)
            return _from_json(known, body, body_at)
        header = _load_json(data[8:8 + head_len], 8)
        if not isinstance(header, dict) or set(header) != {"code", "flag", "type"}:
            raise CodecError("header must be an object with exactly code, flag and type", 8)
        msg_type = _TYPES.get(header["type"]) if isinstance(header["type"], str) else None
        if msg_type is None:
            raise CodecError(f"unknown message type {header['type']!r}", 8)
        expected = REQUEST_CODES.get(msg_type)
        if header["code"] != (int(expected) if expected is not None else 0) or header["flag"] != (
                0 if expected is not None else 1):
            raise CodecError(f"header code/flag {header['code']}/{header['flag']} do not fit {msg_type.__name__}", 8)
        body = _load_json(data[body_at:], body_at)
        if not isinstance(body, dict):
            raise CodecError(f"{msg_type.__name__} body must be a JSON object", body_at)
        return _from_json(msg_type, body, body_at)


def _load_json(raw: bytes, offset: int) -> Any:
    try:
        return orjson.loads(raw)  # the fast path; anything it rejects gets the json module's exact error
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CodecError(f"invalid UTF-8: {e.reason}", offset + e.start) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CodecError(f"invalid JSON: {e.msg}", offset + e.pos) from None
    except RecursionError:
        raise CodecError("JSON nested too deeply", offset) from None


# ---------------------------------------------------------------------- to JSON
def _entry_to_json(entry: DLedgerEntry) -> dict[str, Any]:
    out: dict[str, Any] = {camel: getattr(entry, k) for k, camel, _ in _ENTRY_KEYS}
    if entry.body is not None:
        out["body"] = base64.b64encode(entry.body).decode()
    return out


def _value_to_json(value: Any) -> Any:
    if type(value) is int or type(value) is str:
        return value
    if isinstance(value, enum.Enum):
        return int(value) if isinstance(value, DLedgerResponseCode) else value.name
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, DLedgerEntry):
        return _entry_to_json(value)
    if isinstance(value, tuple | list):
        return [_value_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    return value


def _to_json(msg: RequestOrResponse) -> dict[str, Any]:
    return {camel: _value_to_json(value) for name, camel in _ENCODE_PLAN[type(msg)]
            if (value := getattr(msg, name)) is not None}


# ---------------------------------------------------------------------- sizes without encoding
def _str_size(value: str) -> int:
    return len(value) + 2 if value.isascii() and value.isalnum() else len(json.dumps(value))


def _b64_size(value: bytes | bytearray) -> int:
    return 4 * ((len(value) + 2) // 3) + 2


_ENTRY_SIZES: dict[int, tuple[DLedgerEntry, int]] = {}
"""id(entry) -> (entry, its JSON size): a leader pushes the same entry object to every follower. The
entry is held so that its id cannot be reused while cached; the cache is emptied when it gets big."""


def _entry_size(entry: DLedgerEntry) -> int:
    hit = _ENTRY_SIZES.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1]
    if len(_ENTRY_SIZES) >= 4096:
        _ENTRY_SIZES.clear()
    size = _compute_entry_size(entry)
    _ENTRY_SIZES[id(entry)] = (entry, size)
    return size


def _compute_entry_size(e: DLedgerEntry) -> int:
    size = _ENTRY_FIXED + len(str(e.magic)) + len(str(e.size)) + len(str(e.index)) + len(str(e.term)) \
        + len(str(e.pos)) + len(str(e.channel)) + len(str(e.chain_crc)) + len(str(e.body_crc))
    return size if e.body is None else size + 8 + _b64_size(e.body)  # ,"body":


def _seq_size(value: tuple[Any, ...] | list[Any]) -> int:
    return 2 + sum(_value_size(v) for v in value) + max(0, len(value) - 1)


_SIZERS: dict[type, Any] = {
    int: lambda v: len(str(v)), str: _str_size, bytes: _b64_size, bytearray: _b64_size,
    DLedgerResponseCode: lambda v: len(str(int(v))), PushType: lambda v: len(v.name) + 2,
    VoteResult: lambda v: len(v.name) + 2, DLedgerEntry: _entry_size, tuple: _seq_size, list: _seq_size}


def _value_size(value: Any) -> int:
    sizer = _SIZERS.get(type(value))
    if sizer is not None:
        return sizer(value)
    return len(json.dumps(_value_to_json(value), separators=(",", ":"), sort_keys=True))


# What one field adds to the size when its value has the type its kind expects (``v``: the value); any
# other value goes through :func:`_value_size`, so the result is the same for every value.
_KIND_SIZES: dict[str, tuple[str, str]] = {
    "int": ("int", "len(str(v))"), "int?": ("int", "len(str(v))"),
    "str?": ("str", "(len(v) + 2 if v.isascii() and v.isalnum() else _str_size(v))"),
    "code": ("DLedgerResponseCode", "len(str(v._value_))"),
    "vote_result": ("VoteResult", "len(v._name_) + 2"), "push_type": ("PushType", "len(v._name_) + 2"),
    "entry?": ("DLedgerEntry", "_entry_size(v)"),
}


def _size_function(msg_type: type) -> Any:
    """``wire_size`` for one message type, written out once per type: 8 + the header + the braces, and
    per present field its ``"key":``, its value and a separating comma. It does what a loop over the
    fields would, without the per-field dispatch (the simulator sizes every message it carries)."""
    lines = ["def size(msg):", f"    t = {8 + len(_HEADERS[msg_type]) + 2}", "    n = 0"]
    for name, key in _ENCODE_PLAN[msg_type]:
        lines += [f"    v = msg.{name}", "    if v is not None:", "        n += 1"]
        expected, expr = _KIND_SIZES.get(_KINDS[name], ("", ""))
        if expected:
            lines.append(f"        t += {len(key) + 3} + ({expr} if type(v) is {expected} else _value_size(v))")
        else:
            lines.append(f"        t += {len(key) + 3} + _value_size(v)")
    lines.append("    return t + n - 1 if n else t")
    namespace = {"DLedgerResponseCode": DLedgerResponseCode, "VoteResult": VoteResult, "PushType": PushType,
                 "DLedgerEntry": DLedgerEntry, "_str_size": _str_size, "_entry_size": _entry_size,
                 "_value_size": _value_size}
    exec(compile("\n".join(lines), f"<wire_size of {msg_type.__name__}>", "exec"), namespace)  # noqa: S102
    return namespace["size"]


_SIZE_FUNCTIONS: dict[type, Any] = {t: _size_function(t) for t in MESSAGE_TYPES if t is not MetadataResponse}
"""Per message type its ``wire_size``; MetadataResponse (a mutable map) has none."""


# ---------------------------------------------------------------------- from JSON
def _int(value: Any, what: str, bounds: tuple[int, int], offset: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not bounds[0] <= value <= bounds[1]:
        raise CodecError(f"{what} must be an integer in [{bounds[0]}, {bounds[1]}], got {value!r}", offset)
    return value


def _bytes(value: Any, what: str, offset: int) -> bytes:
    if not isinstance(value, str):
        raise CodecError(f"{what} must be a base64 string", offset)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise CodecError(f"{what} is not valid base64", offset) from None


def _entry(value: Any, offset: int) -> DLedgerEntry:
    if not isinstance(value, dict):
        raise CodecError("entry must be a JSON object", offset)
    if not _ENTRY_KNOWN.issuperset(value):
        raise CodecError(f"entry has unknown fields {sorted(set(value) - _ENTRY_KNOWN)}", offset)
    kwargs: dict[str, Any] = {k: _int(value.get(camel, 0), f"entry.{camel}", b, offset) for k, camel, b in _ENTRY_KEYS}
    kwargs["body"] = _bytes(value["body"], "entry.body", offset) if "body" in value else None
    return DLedgerEntry(**kwargs)


def _list(value: Any, what: str, offset: int) -> list[Any]:
    if not isinstance(value, list):
        raise CodecError(f"{what} must be a JSON array", offset)
    return value


def _field(kind: str, name: str, value: Any, offset: int) -> Any:
    if kind == "int" and type(value) is int and INT64[0] <= value <= INT64[1]:
        return value
    if kind == "str?":
        if value is not None and not isinstance(value, str):
            raise CodecError(f"{name} must be a string", offset)
        return value
    if kind in ("int", "int?"):
        return None if value is None and kind == "int?" else _int(value, name, INT64, offset)
    if kind == "code":
        return DLedgerResponseCode.value_of(_int(value, name, INT32, offset))
    if kind in ("vote_result", "push_type"):
        enum_type = VoteResult if kind == "vote_result" else PushType
        if not isinstance(value, str) or value not in enum_type.__members__:
            raise CodecError(f"{name} must be one of {list(enum_type.__members__)}, got {value!r}", offset)
        return enum_type[value]
    if kind == "entry?":
        return None if value is None else _entry(value, offset)
    if kind == "entries":
        return tuple(_entry(v, offset) for v in _list(value, name, offset))
    if kind == "bytes":
        return _bytes(value, name, offset)
    if kind == "bytes_list":
        return tuple(_bytes(v, name, offset) for v in _list(value, name, offset))
    if kind == "int_list":
        return tuple(_int(v, name, INT64, offset) for v in _list(value, name, offset))
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise CodecError(f"{name} must be an object of strings", offset)
    return dict(value)


def _from_json(msg_type: type[RequestOrResponse], body: dict[str, Any], offset: int) -> RequestOrResponse:
    plan = _DECODE_PLAN[msg_type]
    kwargs: dict[str, Any] = {}
    for key, value in body.items():
        spec = plan.get(key)
        if spec is None:
            raise CodecError(f"{msg_type.__name__} has no field {key!r}", offset)
        kwargs[spec[0]] = _field(spec[1], key, value, offset)
    return msg_type(**kwargs)
