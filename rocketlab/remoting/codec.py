"""RemotingCodec: the one codec of every node kind - messages to RocketMQ remoting frames and back.

Every family of messages (DLedger's RPCs, a broker's requests, the controller RPCs, the kit's own group
check and ping/pong) maps its classes to request codes, ext fields and bodies
(:class:`~rocketlab.remoting.family.Family`); a codec is given the families its node kind sends and
receives, routes by class on the way out and by request code on the way in, and decodes a response
through the family of the request it answers.

* ``encode(msg)`` / ``decode(data, answers=None)``: a whole frame (opaque 0), what the simulator uses
  when it serialises; ``answers`` is the request a response answers (the request, its class or the
  class's name);
* ``command(msg, opaque)`` / ``message(cmd, answers)``: the :class:`RemotingCommand` level, what the TCP
  runtime uses with :class:`~rocketlab.remoting.connection.RemotingConnection`;
* ``wire_size(msg)``: a frame's size without encoding (the simulator's byte counts), where a family
  can tell it;
* ``families``: the :class:`~rocketlab.remoting.family.Family` objects it knows (a message of any other
  class is a ``CodecError``: no message family has it);
* ``serves``: the names of the families whose requests this node answers (default: all it knows); a
  request of any other code is :class:`~rocketlab.remoting.family.UnsupportedRequest` (the runtime
  answers REQUEST_CODE_NOT_SUPPORTED, as ``NettyRemotingAbstract`` does for a code without a processor).

The package that owns a node kind builds its codec with its own families (``DLedgerCodec``,
``broker_codec``, ``dledger_broker_codec``, ...); the places that need every family import them
(:data:`rocketlab.net.families.ALL_FAMILIES`). So this module imports no protocol package: remoting is the
bottom of the cores.
"""

from __future__ import annotations

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


class RemotingCodec:
    """See the module docstring. ``families``: the families this node kind sends and receives, in the
    order they are consulted; ``serves``: the names of those whose requests it answers (default: all)."""

    decodes_replies = True
    """A response is read as the answer to its request: ``decode(data, answers)``."""

    def __init__(self, families: Iterable[Family], serves: Iterable[str] | None = None) -> None:
        self.families = list(families)
        by_name = {fam.name: fam for fam in self.families}
        names = tuple(by_name) if serves is None else tuple(serves)
        for n in names:
            if n not in by_name:
                raise CodecError(f"no message family {n!r} (known: {', '.join(by_name)})")
        self.serves = names
        self._out: dict[type, Family] = {}
        for fam in self.families:
            for t in (*fam.requests, *fam.responses):
                self._out.setdefault(t, fam)
        self._in: dict[int, Family] = {}
        for n in names:
            for code in by_name[n].codes:
                self._in.setdefault(code, by_name[n])
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
                               ext_fields=parts.ext_fields, body=parts.body, version=parts.version)

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
