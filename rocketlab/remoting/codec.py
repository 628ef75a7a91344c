"""RemotingCodec: the one codec of every node kind - messages to RocketMQ remoting frames and back.

Every family of messages (:data:`FAMILIES`: DLedger's RPCs, a broker's requests, the controller RPCs,
the kit's own group check and ping/pong) maps its classes to request codes, ext fields and bodies
(:class:`~rocketlab.remoting.family.Family`); this codec routes by class on the way out and by request
code on the way in, and decodes a response through the family of the request it answers.

* ``encode(msg)`` / ``decode(data, answers=None)``: a whole frame (opaque 0), what the simulator uses
  when it serialises; ``answers`` is the request a response answers (the request, its class or the
  class's name);
* ``command(msg, opaque)`` / ``message(cmd, answers)``: the :class:`RemotingCommand` level, what the TCP
  runtime uses with :class:`~rocketlab.remoting.connection.RemotingConnection`;
* ``wire_size(msg)``: a frame's size without encoding (the simulator's byte counts), where a family
  can tell it;
* ``serves``: the families whose requests this node answers; a request of any other code is
  :class:`~rocketlab.remoting.family.UnsupportedRequest` (the runtime answers REQUEST_CODE_NOT_SUPPORTED,
  as ``NettyRemotingAbstract`` does for a code without a processor).

Families are named by import path, loaded on first use, so this module imports no protocol package.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting.command import (
    ONEWAY_FLAG,
    RESPONSE_FLAG,
    RemotingCommand,
    encode_command,
    parse_frame,
)
from rocketlab.remoting.family import Family, UnsupportedRequest

FAMILIES: dict[str, str] = {
    "dledger": "rocketlab.dledger.codec:DLEDGER_FAMILY",
    "broker": "rocketlab.broker.protocol:BROKER_FAMILY",
    "group-check": "rocketlab.broker.group_check:GROUP_CHECK_FAMILY",
    "controller": "rocketlab.controller.wire:CONTROLLER_FAMILY",
    "controller-notify": "rocketlab.controller.wire:NOTIFY_FAMILY",
    "pingpong": "rocketlab.pingpong:PINGPONG_FAMILY",
}
"""Family name -> ``"module:attribute"`` of its :class:`Family`."""

_LOADED: dict[str, Family] = {}


def family(name: str) -> Family:
    """The family registered under ``name`` (imported on first use)."""
    fam = _LOADED.get(name)
    if fam is None:
        if name not in FAMILIES:
            raise CodecError(f"no message family {name!r} (known: {', '.join(FAMILIES)})")
        module, _, attr = FAMILIES[name].partition(":")
        fam = _LOADED[name] = getattr(importlib.import_module(module), attr)
    return fam


class RemotingCodec:
    """See the module docstring. ``serves``: family names (default: all of them)."""

    decodes_replies = True
    """A response is read as the answer to its request: ``decode(data, answers)``."""

    def __init__(self, serves: Iterable[str] | None = None) -> None:
        names = tuple(FAMILIES) if serves is None else tuple(serves)
        self.families = [family(n) for n in FAMILIES]
        self.serves = names
        self._out: dict[type, Family] = {}
        for fam in self.families:
            for t in (*fam.requests, *fam.responses):
                self._out.setdefault(t, fam)
        self._in: dict[int, Family] = {}
        for n in names:
            fam = family(n)
            for code in fam.codes:
                self._in.setdefault(code, fam)
        self._sizers = {t: fam.wire_size for t, fam in self._out.items()}
        self._request_names = {t.__name__: t for fam in self.families for t in fam.requests}

    def _family_of(self, msg_type: type) -> Family:
        fam = self._out.get(msg_type)
        if fam is None:
            raise CodecError(f"cannot encode {msg_type.__name__}: no message family has it")
        return fam

    # ------------------------------------------------------------------ commands
    def is_request(self, msg: Any) -> bool:
        return type(msg) in self._family_of(type(msg)).requests

    def command(self, msg: Any, opaque: int = 0) -> RemotingCommand:
        """The command of ``msg``: a request (oneway for its family's oneway classes) or a response."""
        fam = self._family_of(type(msg))
        parts = fam.encode(msg)
        if type(msg) in fam.requests:
            flag = ONEWAY_FLAG if type(msg) in fam.oneways else 0
        else:
            flag = RESPONSE_FLAG
        return RemotingCommand(code=parts.code, flag=flag, opaque=opaque, remark=parts.remark,
                               ext_fields=parts.ext_fields, body=parts.body)

    def message(self, cmd: RemotingCommand, answers: Any = None) -> Any:
        """The message of a command; a response needs ``answers`` (the request or its class).
        CodecError on a bad command, UnsupportedRequest for a code this node does not serve."""
        if cmd.is_response:
            if answers is None:
                raise CodecError(f"a response (code {cmd.code}, opaque {cmd.opaque}) without the request it answers")
            if isinstance(answers, str):
                request_type = self._request_names.get(answers)
                if request_type is None:
                    raise CodecError(f"a response to {answers!r}, which is no request class")
            else:
                request_type = answers if isinstance(answers, type) else type(answers)
            return self._family_of(request_type).decode_response(cmd, request_type)
        fam = self._in.get(cmd.code)
        if fam is None:
            raise UnsupportedRequest(f" request type {cmd.code} not supported")
        return fam.decode_request(cmd)

    def sender(self, msg: Any) -> str | None:
        """The node id a request names as its sender (DLedger's ``localId``), if its protocol has one."""
        fam = self._out.get(type(msg))
        return None if fam is None else fam.sender(msg)

    # ------------------------------------------------------------------ bytes
    def encode(self, msg: Any) -> bytes:
        return encode_command(self.command(msg))

    def decode(self, data: bytes, answers: Any = None) -> Any:
        return self.message(parse_frame(data), answers)

    def wire_size(self, msg: Any) -> int | None:
        """``len(self.encode(msg))`` without encoding where the family can tell it, else None."""
        sizer = self._sizers.get(type(msg))
        return None if sizer is None else sizer(msg)
