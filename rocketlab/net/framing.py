"""Length-prefixed frames for the message channel, parsed h11-style from whatever bytes arrive.

Frame: ``u32 length`` (of what follows) | ``u8 kind`` | ``u64 request_id`` | ``u16 src length`` |
``src`` (UTF-8) | ``body`` (the node codec's bytes). Kinds: 1 one-way, 2 request, 3 reply. All big-endian.
A peer that sends a frame over :data:`MAX_FRAME` bytes, an unknown kind or a broken header is a
:class:`~rocketlab.errors.RemoteProtocolError`: the runtime closes that connection.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rocketlab.errors import RemoteProtocolError

ONEWAY, REQUEST, REPLY = 1, 2, 3
MAX_FRAME = 16 * 1024 * 1024
_LEN = struct.Struct(">I")
_HEAD = struct.Struct(">BQH")


@dataclass(frozen=True, slots=True)
class Frame:
    kind: int
    request_id: int
    src: str
    body: bytes


def encode_frame(kind: int, request_id: int, src: str, body: bytes) -> bytes:
    src_bytes = src.encode()
    size = _HEAD.size + len(src_bytes) + len(body)
    if size > MAX_FRAME:
        raise RemoteProtocolError(f"frame of {size} bytes exceeds the {MAX_FRAME}-byte limit")
    return _LEN.pack(size) + _HEAD.pack(kind, request_id, len(src_bytes)) + src_bytes + body


class FrameDecoder:
    """Feed bytes with :meth:`receive_data`; take frames with :meth:`next_frame` (None = need data)."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.buffer = bytearray()
        self.max_frame = max_frame
        self.offset = 0  # bytes consumed so far on this connection, for error messages

    def receive_data(self, data: bytes) -> None:
        self.buffer += data

    def next_frame(self) -> Frame | None:
        buf = self.buffer
        if len(buf) < _LEN.size:
            return None
        (size,) = _LEN.unpack_from(buf)
        if size > self.max_frame or size < _HEAD.size:
            raise RemoteProtocolError(f"frame length {size} at stream offset {self.offset} is out of range "
                                      f"({_HEAD.size}..{self.max_frame})")
        if len(buf) < _LEN.size + size:
            return None
        kind, request_id, src_len = _HEAD.unpack_from(buf, _LEN.size)
        if kind not in (ONEWAY, REQUEST, REPLY):
            raise RemoteProtocolError(f"unknown frame kind {kind} at stream offset {self.offset}")
        start = _LEN.size + _HEAD.size
        if src_len > size - _HEAD.size:
            raise RemoteProtocolError(f"frame at stream offset {self.offset}: source id longer than the frame")
        try:
            src = bytes(buf[start:start + src_len]).decode()
        except UnicodeDecodeError:
            raise RemoteProtocolError(f"frame at stream offset {self.offset}: source id is not UTF-8") from None
        body = bytes(buf[start + src_len:_LEN.size + size])
        del buf[:_LEN.size + size]
        self.offset += _LEN.size + size
        return Frame(kind, request_id, src, body)
