"""RemotingConnection: one RocketMQ remoting connection as a sans-IO state machine, in the manner of h11.

Feed it what the socket gave with :meth:`~RemotingConnection.receive_data` (``b""`` = the peer closed),
take commands with :meth:`~RemotingConnection.next_command` (:data:`NEED_DATA` until a whole frame is
there, :data:`CLOSED` after a clean end), and turn commands into bytes with
:meth:`~RemotingConnection.send`. It never touches a socket or a clock.

Requests are paired with responses by ``opaque``, per connection: :meth:`~RemotingConnection.send`
of a (non-oneway) request remembers its opaque, and a response is handed out only if it answers one
(``NettyRemotingAbstract.processResponseCommand`` logs and drops any other); :meth:`forget` drops a
request given up on (a timeout). :meth:`next_opaque` numbers requests (Java: one ``AtomicInteger`` per
JVM from 0).

Anything :class:`~rocketlab.remoting.command.parse_frame` refuses, a frame over MAX_FRAME bytes, a length
field below 4, or a close in the middle of a frame raises
:class:`~rocketlab.errors.RemoteProtocolError`: the caller closes the connection (``NettyDecoder`` does,
after logging) and trusts nothing that came on it afterwards; the connection stays in the ERROR state.
"""

from __future__ import annotations

import struct
from typing import Final

from rocketlab.errors import LocalProtocolError, RemoteProtocolError
from rocketlab.remoting.command import MAX_FRAME, RemotingCommand, encode_command, parse_frame


class _Sentinel:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA: Final = _Sentinel("NEED_DATA")
CLOSED: Final = _Sentinel("CLOSED")
_LEN = struct.Struct(">i")


class RemotingConnection:
    """One connection's frames both ways (see the module docstring). ``max_frame`` is Java's 16 MiB."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._eof = False
        self.error: RemoteProtocolError | None = None
        self.offset = 0
        """Bytes consumed so far (where the next frame starts), for error messages."""
        self.awaiting: set[int] = set()
        """Opaques of our requests not yet answered."""
        self._opaque = 0
        self.unmatched = 0
        """Responses that answered none of our requests (dropped)."""

    # ---------------------------------------------------------------------------------- in
    def receive_data(self, data: bytes) -> None:
        """Bytes from the peer; ``b""`` means it closed its side."""
        if self._eof and data:
            raise LocalProtocolError("data received after the end of the stream")
        if not data:
            self._eof = True
        else:
            self._buffer += data

    def next_command(self) -> RemotingCommand | _Sentinel:
        """The next whole command, :data:`NEED_DATA` or :data:`CLOSED`; RemoteProtocolError on garbage."""
        if self.error is not None:
            raise self.error
        while True:
            try:
                cmd = self._next()
            except RemoteProtocolError as e:
                self.error = e
                raise
            if cmd is None:
                if self._eof:
                    if self._buffer:
                        self.error = RemoteProtocolError(
                            f"the peer closed the connection in the middle of a frame at stream offset "
                            f"{self.offset} ({len(self._buffer)} bytes of it received)")
                        raise self.error
                    return CLOSED
                return NEED_DATA
            if cmd.is_response:
                if cmd.opaque not in self.awaiting:
                    self.unmatched += 1
                    continue
                self.awaiting.discard(cmd.opaque)
            return cmd

    def _next(self) -> RemotingCommand | None:
        buf = self._buffer
        if len(buf) < 4:
            return None
        (length,) = _LEN.unpack_from(buf)
        if length < 4 or length + 4 > self.max_frame:
            raise RemoteProtocolError(f"frame at stream offset {self.offset}: length field {length} out of range "
                                      f"(4..{self.max_frame - 4})")
        if len(buf) < 4 + length:
            return None
        frame = bytes(buf[:4 + length])
        del buf[:4 + length]
        cmd = parse_frame(frame, self.offset)
        self.offset += 4 + length
        return cmd

    # ---------------------------------------------------------------------------------- out
    def next_opaque(self) -> int:
        """A fresh opaque for a request (wraps as Java's int does)."""
        opaque = self._opaque
        self._opaque = (self._opaque + 1) & 0x7FFFFFFF
        return opaque

    def send(self, cmd: RemotingCommand) -> bytes:
        """The bytes of ``cmd``; a request that expects a response is remembered by its opaque."""
        data = encode_command(cmd)
        if not cmd.is_response and not cmd.is_oneway:
            self.awaiting.add(cmd.opaque)
        return data

    def forget(self, opaque: int) -> None:
        """Stop waiting for the response to request ``opaque`` (it timed out)."""
        self.awaiting.discard(opaque)
