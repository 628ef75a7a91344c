"""Request and response header classes (``CommandCustomHeader``) as ext fields, both ways.

A :class:`Header` describes one Java header class: its fields with their Java types, the class that
declares each (the order ext fields travel in depends on it, see
:func:`~rocketlab.remoting.command.ext_fields_order`) and which are ``@CFNotNull``.

* :meth:`Header.write` is ``makeCustomHeaderToNet``: every non-null field as its ``toString()``;
* :meth:`Header.read` is ``decodeCommandCustomHeader``: each field parsed from its string by its type
  (``Integer.parseInt``, ``Long.parseLong``, ``Boolean.parseBoolean``); a missing ``@CFNotNull`` field
  is an error (Java: ``RemotingCommandException``, answered SYSTEM_ERROR); a value that does not parse
  leaves the field null, as Java logs and carries on - unless the field is required, where Java fails
  later with a NullPointerException (also SYSTEM_ERROR): an error here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting.command import HeaderClass, HeaderField, RemotingCommand


@dataclass(frozen=True)
class Prop:
    """One field: Java name, Java type (``String``, ``Integer``, ``Long``, ``Boolean``; primitives
    as ``int``, ``long``, ``boolean``), ``@CFNotNull``, and the class that declares it."""

    name: str
    type: str
    declaring: str
    required: bool = False


_PRIMITIVE_DEFAULT = {"int": 0, "long": 0, "boolean": False}


@dataclass(frozen=True)
class Header:
    """A Java ``CommandCustomHeader`` class (see the module docstring)."""

    java_class: str
    props: tuple[Prop, ...]
    _cls: HeaderClass = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cls", HeaderClass(self.java_class, tuple(
            HeaderField(p.name, p.declaring) for p in self.props)))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.props)

    def write(self, values: dict[str, Any]) -> dict[str, str]:
        """The ext fields of a header whose fields are ``values`` (Java name -> value; None = null)."""
        unknown = set(values) - set(self.names)
        if unknown:
            raise CodecError(f"{self.java_class} has no field(s) {sorted(unknown)}")
        return self._cls.ext_fields(values)

    def read(self, cmd: RemotingCommand) -> dict[str, Any]:
        """Java name -> parsed value (None for null) of every field, from ``cmd``'s ext fields."""
        ext = cmd.ext_fields or {}
        out: dict[str, Any] = {}
        short = self.java_class.rsplit(".", 1)[-1]
        for p in self.props:
            raw = ext.get(p.name)
            if raw is None:
                if p.required:
                    raise CodecError(f"{short}: the custom field <{p.name}> is null")
                out[p.name] = _PRIMITIVE_DEFAULT.get(p.type)
                continue
            value = _parse(p.type, raw)
            if value is None and p.required:
                raise CodecError(f"{short}.{p.name}: {raw!r} is not a valid {p.type}")
            out[p.name] = value if value is not None else _PRIMITIVE_DEFAULT.get(p.type)
        return out


def _parse(java_type: str, raw: str) -> Any:
    if java_type == "String":
        return raw
    if java_type in ("Boolean", "boolean"):
        return raw.lower() == "true"  # Boolean.parseBoolean: anything else is false
    try:
        value = int(raw, 10) if raw.strip() == raw and raw.lstrip("+-").isdigit() else None
    except ValueError:
        value = None
    if value is None:
        return None
    bounds = 31 if java_type in ("Integer", "int") else 63
    return value if -(2**bounds) <= value < 2**bounds else None


def props(declaring: str, *specs: str, required: tuple[str, ...] = ()) -> tuple[Prop, ...]:
    """Fields of one class from ``"Type name"`` strings, in declaration order."""
    out = []
    for spec in specs:
        java_type, name = spec.split()
        out.append(Prop(name, java_type, declaring, name in required))
    return tuple(out)
