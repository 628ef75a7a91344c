"""RemotingCommand: RocketMQ remoting's one message shape, and its frame, as 4.9.5 and 5.x write them.

Frame (big-endian), ``NettyEncoder`` / ``NettyDecoder``::

    int32  length                the bytes that follow (a frame is at most MAX_FRAME bytes, this field included)
    int32  serializeType << 24 | headerLength
    bytes  header                JSON (serializeType 0) or RocketMQ's binary layout (1)
    bytes  body                  the rest: the request's or response's payload, opaque to remoting

The JSON header is fastjson's writing of the RemotingCommand bean, properties sorted by name, nulls
left out: ``{"code", "extFields", "flag", "language", "opaque", "remark", "serializeTypeCurrentRPC",
"version"}``. ``flag`` bit 0 marks a response, bit 1 a oneway request; a response carries the
request's ``opaque``. A request header class's fields travel as strings in ``extFields``.

:func:`encode_command` writes a frame; :func:`parse_frame` reads one whole frame (without trusting
anything in it). The connection-level parser is :mod:`rocketlab.remoting.connection`.

Java: ``remoting/protocol/RemotingCommand``, ``RemotingSerializable``, ``RocketMQSerializable``,
``LanguageCode``, ``SerializeType``, ``RemotingSysResponseCode``; ``netty/NettyDecoder``
(``com.rocketmq.remoting.frameMaxLength``, 16 MiB). Differences: our nodes write ``language`` JAVA (the
processes they re-implement) and ``version`` 0 (Java sends ``rocketmq.remoting.version`` when that
system property is set).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import RemoteProtocolError
from rocketlab.remoting.fastjson import dumps, field_hash, hashmap_order, loads

MAX_FRAME = 16 * 1024 * 1024
"""``NettyDecoder``'s ``FRAME_MAX_LENGTH`` (``com.rocketmq.remoting.frameMaxLength``): the largest frame,
its 4-byte length field included."""

RPC_TYPE = 0
"""Bit of ``flag``: 1 = a response (``RemotingCommandType.RESPONSE_COMMAND``)."""
RPC_ONEWAY = 1
"""Bit of ``flag``: 1 = a oneway request (no response)."""
RESPONSE_FLAG = 1 << RPC_TYPE
ONEWAY_FLAG = 1 << RPC_ONEWAY

JSON, ROCKETMQ = 0, 1
"""``SerializeType`` codes."""
SERIALIZE_TYPES = {JSON: "JSON", ROCKETMQ: "ROCKETMQ"}

LANGUAGE_CODES: dict[str, int] = {
    "JAVA": 0, "CPP": 1, "DOTNET": 2, "PYTHON": 3, "DELPHI": 4, "ERLANG": 5, "RUBY": 6, "OTHER": 7,
    "HTTP": 8, "GO": 9, "PHP": 10, "OMS": 11, "RUST": 12, "NODE_JS": 13}
"""``LanguageCode`` (5.3.3; 4.9.5 ends at RUST)."""
_LANGUAGE_NAMES = {v: k for k, v in LANGUAGE_CODES.items()}


class RemotingSysResponseCode:
    """``RemotingSysResponseCode``: the codes remoting itself answers with."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TRANSACTION_FAILED = 4


@dataclass(slots=True)
class RemotingCommand:
    """One request, oneway or response (``RemotingCommand``); ``ext_fields`` in the order they travel."""

    code: int
    flag: int = 0
    opaque: int = 0
    remark: str | None = None
    ext_fields: dict[str, str] | None = None
    body: bytes | None = None
    language: str = "JAVA"
    version: int = 0
    serialize_type: int = JSON
    size: int = field(default=0, compare=False)
    """The frame's size when it was parsed (not written)."""

    @property
    def is_response(self) -> bool:
        return bool(self.flag & RESPONSE_FLAG)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & ONEWAY_FLAG)

    def field(self, name: str) -> str | None:
        """One ext field (None when absent)."""
        return None if self.ext_fields is None else self.ext_fields.get(name)


@dataclass(frozen=True, slots=True)
class HeaderField:
    """One field of a Java request/response header class: its Java name and declaring class (the
    order ``extFields`` travel in depends on both, see :func:`ext_fields_order`)."""

    name: str
    declaring_class: str


@dataclass(frozen=True)
class HeaderClass:
    """A ``CommandCustomHeader`` class: its name and its non-static fields, the class's own first, then
    each superclass's, each in declaration order (``getClazzFields`` walks them so)."""

    name: str
    fields: tuple[HeaderField, ...]
    _order: dict[frozenset[str], tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)

    def ext_fields(self, values: dict[str, Any]) -> dict[str, str]:
        """``makeCustomHeaderToNet``: every non-null field as ``toString()``, in HashMap order."""
        present = frozenset(k for k, v in values.items() if v is not None)
        order = self._order.get(present)
        if order is None:
            order = self._order[present] = ext_fields_order(self, present)
        return {k: java_string(values[k]) for k in order}


def ext_fields_order(header: HeaderClass, present: frozenset[str]) -> tuple[str, ...]:
    """The order of ``extFields`` of a header with the ``present`` fields set: ``getClazzFields`` puts
    the fields in a ``HashSet<Field>`` (hashed by declaring class and name), ``makeCustomHeaderToNet``
    copies them in that set's order into a ``HashMap<String, String>``, which fastjson writes in its
    own iteration order."""
    names = [f.name for f in header.fields]
    hashes = [field_hash(f.declaring_class, f.name) for f in header.fields]
    in_set_order = hashmap_order(names, hashes)
    return tuple(hashmap_order([n for n in in_set_order if n in present]))


def java_string(value: Any) -> str:
    """``Object.toString()`` of a header field value: booleans as ``true``/``false``."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if hasattr(value, "value") and hasattr(value, "name") and not isinstance(value, int | str):
        return str(value.name)
    return str(int(value)) if isinstance(value, int) else str(value)


# ---------------------------------------------------------------------------------------- encoding
_PREFIX = struct.Struct(">ii")
_HEAD_KEYS = ("code", "extFields", "flag", "language", "opaque", "remark", "serializeTypeCurrentRPC", "version")


def header_json(cmd: RemotingCommand) -> bytes:
    """The JSON header as fastjson writes the bean (sorted keys, nulls left out, ``extFields`` in its
    map's order)."""
    head: dict[str, Any] = {"code": cmd.code}
    if cmd.ext_fields is not None:
        head["extFields"] = cmd.ext_fields
    head["flag"] = cmd.flag
    head["language"] = cmd.language
    head["opaque"] = cmd.opaque
    if cmd.remark is not None:
        head["remark"] = cmd.remark
    head["serializeTypeCurrentRPC"] = SERIALIZE_TYPES[cmd.serialize_type]
    head["version"] = cmd.version
    return dumps(head)


def _rocketmq_header(cmd: RemotingCommand) -> bytes:
    """``RocketMQSerializable.rocketMQProtocolEncode``."""
    remark = (cmd.remark or "").encode("utf-8")
    ext = b"".join(struct.pack(">H", len(k.encode())) + k.encode() + struct.pack(">i", len(v.encode())) + v.encode()
                   for k, v in (cmd.ext_fields or {}).items())
    return (struct.pack(">hbhii", _short(cmd.code), LANGUAGE_CODES.get(cmd.language, 7), _short(cmd.version),
                        cmd.opaque, cmd.flag)
            + struct.pack(">i", len(remark)) + remark + struct.pack(">i", len(ext)) + ext)


def _short(value: int) -> int:
    value &= 0xFFFF
    return value - 0x10000 if value & 0x8000 else value


def encode_command(cmd: RemotingCommand) -> bytes:
    """The whole frame of ``cmd`` (``RemotingCommand.encode``); RemoteProtocolError past MAX_FRAME."""
    head = header_json(cmd) if cmd.serialize_type == JSON else _rocketmq_header(cmd)
    body = cmd.body or b""
    length = 4 + len(head) + len(body)
    if length + 4 > MAX_FRAME:
        raise RemoteProtocolError(f"a frame of {length + 4} bytes exceeds the {MAX_FRAME}-byte limit")
    return _PREFIX.pack(length, cmd.serialize_type << 24 | len(head)) + head + body


def frame_size(header_size: int, body_size: int) -> int:
    """The bytes of a frame with a header and a body of these sizes."""
    return 8 + header_size + body_size


# ---------------------------------------------------------------------------------------- decoding
def parse_frame(frame: bytes | bytearray | memoryview, offset: int = 0) -> RemotingCommand:
    """One whole frame (length field included) as ``RemotingCommand.decode`` reads it; anything it
    would refuse is a :class:`~rocketlab.errors.RemoteProtocolError` naming what and where
    (``offset``: where the frame starts in its stream, for the message)."""
    frame = bytes(frame)
    if len(frame) < 8:
        raise RemoteProtocolError(f"frame at stream offset {offset}: {len(frame)} bytes, shorter than its 8-byte prefix")
    length, mark = _PREFIX.unpack_from(frame)
    if length != len(frame) - 4:
        raise RemoteProtocolError(f"frame at stream offset {offset}: length field {length} but {len(frame) - 4} bytes")
    serialize_type, head_len = (mark >> 24) & 0xFF, mark & 0xFFFFFF
    if head_len > length - 4:
        raise RemoteProtocolError(f"frame at stream offset {offset}: decode error, bad header length: {head_len}")
    head = frame[8:8 + head_len]
    if serialize_type == JSON:
        cmd = _json_header(head, offset)
    elif serialize_type == ROCKETMQ:
        cmd = _binary_header(head, offset)
    else:
        raise RemoteProtocolError(f"frame at stream offset {offset}: unknown serialize type {serialize_type} "
                                  "(0 JSON, 1 ROCKETMQ)")
    body = frame[8 + head_len:]
    cmd.body = body if body else None
    cmd.serialize_type = serialize_type
    cmd.size = len(frame)
    return cmd


def _int32(value: Any, what: str, offset: int) -> int:
    """A header number as fastjson reads it into an ``int``: a JSON integer in range, or its string."""
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise RemoteProtocolError(f"frame at stream offset {offset}: header {what} {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise RemoteProtocolError(f"frame at stream offset {offset}: header {what} {value!r} is not a 32-bit integer")
    return value


def _json_header(raw: bytes, offset: int) -> RemotingCommand:
    try:
        head = loads(raw)
    except (ValueError, RecursionError) as e:
        raise RemoteProtocolError(f"frame at stream offset {offset}: the header is not JSON ({e})") from None
    if not isinstance(head, dict):
        raise RemoteProtocolError(f"frame at stream offset {offset}: the header is not a JSON object")
    ext = head.get("extFields")
    if ext is not None:
        if not isinstance(ext, dict):
            raise RemoteProtocolError(f"frame at stream offset {offset}: extFields is not an object")
        ext = {str(k): v if isinstance(v, str) else _json_scalar(v, offset) for k, v in ext.items()}
    remark = head.get("remark")
    if remark is not None and not isinstance(remark, str):
        remark = _json_scalar(remark, offset)
    language = head.get("language", "JAVA")
    if isinstance(language, int) and not isinstance(language, bool):
        language = _LANGUAGE_NAMES.get(language, language)
    if not isinstance(language, str) or language not in LANGUAGE_CODES:
        raise RemoteProtocolError(f"frame at stream offset {offset}: unknown language {language!r}")
    # fields fastjson does not know are ignored, as there (serializeTypeCurrentRPC is re-set from the prefix)
    return RemotingCommand(code=_int32(head.get("code", 0), "code", offset),
                           flag=_int32(head.get("flag", 0), "flag", offset),
                           opaque=_int32(head.get("opaque", 0), "opaque", offset), remark=remark,
                           ext_fields=ext, language=language,
                           version=_int32(head.get("version", 0), "version", offset))


def _json_scalar(value: Any, offset: int) -> str:
    """A map value or remark that is not a string: fastjson turns a scalar into its text, refuses the rest."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise RemoteProtocolError(f"frame at stream offset {offset}: a header string is {type(value).__name__}")


def _binary_header(raw: bytes, offset: int) -> RemotingCommand:
    """``RocketMQSerializable.rocketMQProtocolDecode``."""
    try:
        code, lang, version, opaque, flag = struct.unpack_from(">hbhii", raw, 0)
        pos = 13
        (remark_len,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        if remark_len < 0 or pos + remark_len > len(raw):
            raise RemoteProtocolError(f"frame at stream offset {offset}: remark length {remark_len} out of range")
        remark = raw[pos:pos + remark_len].decode("utf-8") if remark_len else None
        pos += remark_len
        (ext_len,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        if ext_len < 0 or pos + ext_len > len(raw):
            raise RemoteProtocolError(f"frame at stream offset {offset}: extFields length {ext_len} out of range")
        ext: dict[str, str] | None = {} if ext_len else None
        end = pos + ext_len
        while pos < end:
            (klen,) = struct.unpack_from(">h", raw, pos)
            pos += 2
            key = raw[pos:pos + klen].decode("utf-8")
            pos += klen
            (vlen,) = struct.unpack_from(">i", raw, pos)
            pos += 4
            if klen < 0 or vlen < 0 or pos + vlen > end:
                raise RemoteProtocolError(f"frame at stream offset {offset}: an ext field runs past its map")
            assert ext is not None
            ext[key] = raw[pos:pos + vlen].decode("utf-8")
            pos += vlen
    except (struct.error, UnicodeDecodeError) as e:
        raise RemoteProtocolError(f"frame at stream offset {offset}: bad ROCKETMQ header: {e}") from None
    if lang not in _LANGUAGE_NAMES:
        raise RemoteProtocolError(f"frame at stream offset {offset}: unknown language code {lang}")
    return RemotingCommand(code=code, flag=flag, opaque=opaque, remark=remark, ext_fields=ext,
                           language=_LANGUAGE_NAMES[lang], version=version)
