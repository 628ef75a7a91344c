"""JSON as fastjson (and RocketMQ's remoting) writes it: key orders, Java's ``HashMap`` iteration order.

fastjson writes a bean's properties sorted by name (its ``SortField`` default) and leaves out nulls; a
``Map`` (a RemotingCommand's ``extFields``, a MetadataResponse's ``peers``) in the map's own iteration
order, which for Java's ``HashMap`` follows the bucket of each key's ``String.hashCode()``.
:func:`hashmap_order` reproduces that order (table size, hash spreading, resizes, insertion order within
a bucket), so the bytes we write are the bytes the Java classes write.

:func:`dumps` writes compact JSON with non-ASCII kept as UTF-8, as fastjson does (it escapes only
control characters, ``"`` and ``\\``); :func:`dumps_pretty` writes its ``PrettyFormat``, and
:func:`loads` reads what fastjson reads (also unquoted integer keys).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import orjson

_INT32 = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _INT32
    return h - (1 << 32) if h & 0x80000000 else h


def java_long_hash(value: int) -> int:
    """``Long.hashCode()``: ``(int)(value ^ (value >>> 32))``."""
    u = value & 0xFFFFFFFFFFFFFFFF
    h = (u ^ (u >> 32)) & _INT32
    return h - (1 << 32) if h & 0x80000000 else h


def long_set_order(values: Iterable[int]) -> list[int]:
    """The iteration order of a ``HashSet<Long>`` (or a ``HashMap<Long, ?>``'s keys), insertion order
    ``values``."""
    unique = list(dict.fromkeys(values))
    mask = hashmap_capacity(len(unique)) - 1
    ranked = sorted(range(len(unique)), key=lambda i: (_spread(java_long_hash(unique[i])) & mask, i))
    return [unique[i] for i in ranked]


def _spread(h: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` on the unsigned 32-bit value."""
    u = h & _INT32
    return u ^ (u >> 16)


def hashmap_capacity(size: int, initial: int = 16) -> int:
    """The table size of a ``new HashMap<>()`` (or ``HashSet``) after ``size`` puts: it doubles when
    the size goes past 0.75 of the table."""
    cap = initial
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def hashmap_order(keys: Iterable[str], hashes: Iterable[int] | None = None) -> list[str]:
    """The iteration order of a ``HashMap`` into which ``keys`` were put in this order (duplicates
    ignored); ``hashes`` gives each key's ``hashCode()`` when it is not ``String.hashCode`` (a ``Field``
    of a ``HashSet``). Buckets in table order, then insertion order within a bucket (Java appends at a
    bucket's tail and keeps the order when a resize splits it; a bucket is never treeified below 64
    slots, and a header has far fewer fields)."""
    unique = list(dict.fromkeys(keys))
    codes = list(hashes) if hashes is not None else [java_string_hash(k) for k in unique]
    mask = hashmap_capacity(len(unique)) - 1
    ranked = sorted(range(len(unique)), key=lambda i: (_spread(codes[i]) & mask, i))
    return [unique[i] for i in ranked]


def field_hash(declaring_class: str, name: str) -> int:
    """``java.lang.reflect.Field.hashCode()``: the declaring class's name hash XOR the field name's."""
    return java_string_hash(declaring_class) ^ java_string_hash(name)


def dumps(value: Any) -> bytes:
    """Compact JSON, keys in the order given, non-ASCII as UTF-8 (fastjson's default output)."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def dumps_pretty(value: Any, indent: int = 0) -> str:
    """fastjson's ``PrettyFormat`` (what RocketMQ's ``ConfigManager.persist`` writes): tabs, an object's
    members one a line; a map with integer keys (``ConcurrentMap<Integer, Long>``) on one line, its keys
    unquoted (``{0:12,1:3``), its closing brace on the next line. String keys sorted (a bean's properties
    are; readers do not depend on a map's order), integer keys ascending."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = "\t" * indent
        if all(isinstance(k, int) and not isinstance(k, bool) for k in value):
            inner = ",".join(f"{k}:{dumps_pretty(value[k], indent + 1)}" for k in sorted(value))
            return "{" + inner + "\n" + pad + "}"
        members = [f"{pad}\t{_string(str(k))}:{dumps_pretty(value[k], indent + 1)}" for k in sorted(value, key=str)]
        return "{\n" + ",\n".join(members) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps_pretty(v, indent + 1) for v in value) + "]"
    return dumps(value).decode("utf-8")


def _string(text: str) -> str:
    return dumps(text).decode("utf-8")


def loads(raw: bytes) -> Any:
    """Parse JSON (UTF-8) as fastjson reads it: also an object key that is a bare integer (fastjson
    writes a ``Map<Long, ?>`` so: ``{1:"a"}``); ``ValueError`` with the position on bad input."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    text = raw.decode("utf-8")  # UnicodeDecodeError is a ValueError
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        quoted = _quote_integer_keys(text)
        if quoted == text:
            raise
        return json.loads(quoted)


def _quote_integer_keys(text: str) -> str:
    """``{1:"a",-2:"b"}`` -> ``{"1":"a","-2":"b"}``, leaving strings alone."""
    out: list[str] = []
    i, n = 0, len(text)
    after_open = False  # just after { or , (where a key may start)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i, after_open = j + 1, False
            continue
        if after_open and (c == "-" or c.isdigit()):
            j = i + 1
            while j < n and text[j].isdigit():
                j += 1
            k = j
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] == ":":
                out.append(f'"{text[i:j]}"')
                i, after_open = j, False
                continue
        if c in "{,":
            after_open = True
        elif c not in " \t\r\n":
            after_open = False
        out.append(c)
        i += 1
    return "".join(out)
