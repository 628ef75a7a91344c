"""Family: how one protocol's messages (DLedger's, a broker's, a controller's, ...) map to RemotingCommands.

A family knows its request classes and their request codes, its response classes, and turns a message
into the :class:`Parts` of a command (code, remark, ext fields, body) and a command back into a message:
a request by its code, a response by the request class it answers (a remoting response names no type).
:class:`~rocketlab.remoting.codec.RemotingCodec` routes between families; a family never frames bytes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from rocketlab.errors import CodecError
from rocketlab.remoting.command import RemotingCommand


class Parts(NamedTuple):
    """What a message puts in its command: ``code`` (request code, or response code for a response),
    ``remark``, ``ext_fields`` (ordered as they travel), ``body`` and the command's ``version`` (the
    sender's ``MQVersion`` ordinal, which some Java processors read; 0 unless a family sets it)."""

    code: int
    remark: str | None
    ext_fields: dict[str, str] | None
    body: bytes | None
    version: int = 0


class UnsupportedRequest(CodecError):
    """A request code the family declares but does not serve (answered REQUEST_CODE_NOT_SUPPORTED)."""


class Family(ABC):
    """Base class: set the four attributes and implement :meth:`encode` and the two decoders."""

    name: str = ""
    requests: dict[type, int] = {}
    """Request (and oneway) message classes -> their request code."""
    oneways: frozenset[type] = frozenset()
    """Message classes sent as oneway requests (no response)."""
    responses: frozenset[type] = frozenset()
    """Response message classes."""
    codes: frozenset[int] = frozenset()
    """Request codes this family decodes."""

    @abstractmethod
    def encode(self, msg: Any) -> Parts:
        """The :class:`Parts` of ``msg``'s command."""

    @abstractmethod
    def decode_request(self, cmd: RemotingCommand) -> Any:
        """The message of a request command (``CodecError`` on a bad header or body)."""

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        """The message of a response to a request of class ``answers`` (``CodecError`` when it is not one).
        A family whose requests are all oneway (no :attr:`responses`) answers none."""
        raise CodecError(f"{self.name}: {answers.__name__} is sent oneway; no response answers it")

    def sender(self, msg: Any) -> str | None:
        """The node id a request names as its sender, where the protocol carries one."""
        return None

    def wire_size(self, msg: Any) -> int | None:
        """The frame's size without encoding it (opaque 0), or None: the simulator then encodes."""
        return None
