"""DLedgerRpcService, outbound half, as sans-IO bookkeeping: requests become ``Request`` actions.

Theory of operation
-------------------
A component that wants to call a peer (vote, heartBeat, push, leadershipTransfer) calls
:meth:`DLedgerRpcService.request` with the current OutputBuilder and a continuation. The service picks a
fresh request id, emits ``Request(to, msg, request_id, timeout_ms)`` and remembers the continuation;
when the runtime delivers ``on_reply(src, request_id, msg_or_None)`` the continuation runs with the
answer (``None`` = lost, timed out or the peer is unreachable: Java's failed future). Exactly one
continuation call per request, as the runtime contract promises exactly one ``on_reply``.

Inbound requests whose answer comes later (pushes buffered by the follower, client appends waiting for
a quorum, take-leadership) are answered through a :data:`Responder`.

Java file: ``DLedgerRpcService.java`` / ``DLedgerRpcNettyService.java`` (DLedger 0.3.1.2). Simplified:
no Netty, no fastjson here (see :mod:`rocketlab.dledger.codec`), no per-code thread pools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketlab.core import OutputBuilder
from rocketlab.errors import LocalProtocolError

Continuation = Callable[[Any | None, int, OutputBuilder], None]
"""``continuation(reply_or_None, now_ms, out)``."""

Responder = Callable[[Any, OutputBuilder], None]
"""``responder(response, out)``: answers one inbound request, now or later."""


@dataclass(slots=True)
class _Pending:
    """An outbound request waiting for its one ``on_reply``."""

    to: str
    msg_type: str
    continuation: Continuation


class DLedgerRpcService:
    """Models DLedgerRpcService (outbound calls), DLedger 0.3.1.2; see the module docstring."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}

    def request(self, out: OutputBuilder, to: str, msg: Any, continuation: Continuation,
                timeout_ms: int | None = None) -> int:
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = _Pending(to, type(msg).__name__, continuation)
        out.request(to, msg, request_id, self.timeout_ms if timeout_ms is None else timeout_ms)
        return request_id

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int, out: OutputBuilder) -> None:
        pending = self._pending.pop(request_id, None)
        if pending is None:
            raise LocalProtocolError(f"reply from {src} for unknown request id {request_id}")
        pending.continuation(msg, now_ms, out)

    @property
    def in_flight(self) -> int:
        return len(self._pending)


def reply_to(src: str, request_id: int) -> Responder:
    """A responder that answers request ``request_id`` from ``src`` with a ``Reply`` action."""

    def respond(response: Any, out: OutputBuilder) -> None:
        out.reply(src, request_id, response)

    return respond
