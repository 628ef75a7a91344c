"""The classic HA wire protocol, byte-exact with RocketMQ 4.x (HAConnection / HAClient).

All integers are big-endian; there is no handshake, version or checksum.

* slave -> master: 8-byte frames, ``slaveMaxPhyOffset`` (int64). The first one on a connection is the
  request offset, later ones are acks and heartbeats. The master only acts on the newest complete frame
  (Java reads the long at ``pos - pos % 8 - 8``).
* master -> slave: a 12-byte header, ``phyOffset`` (int64) then ``bodySize`` (int32), then ``bodySize``
  raw CommitLog bytes (at most ``haTransferBatchSize``, never across a file); ``bodySize`` 0 is a
  heartbeat.

Both parsers have the h11 shape: :meth:`receive_data` then :meth:`next_event` until ``NEED_DATA``; a
frame split or merged across reads gives the same events. Bad frames raise
:class:`~rocketlab.errors.RemoteProtocolError`: the connection must be closed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rocketlab.errors import RemoteProtocolError

REPORT = struct.Struct(">q")
HEADER = struct.Struct(">qi")
REPORT_SIZE = REPORT.size  # 8
HEADER_SIZE = HEADER.size  # 12
HA_TRANSFER_BATCH_SIZE = 32 * 1024
HA_CLIENT_READ_MAX_BUFFER_SIZE = 4 * 1024 * 1024  # HAClient.READ_MAX_BUFFER_SIZE: the slave's read buffer
MAX_TRANSFER_BODY = HA_CLIENT_READ_MAX_BUFFER_SIZE - HEADER_SIZE  # the largest frame that fits in it


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData()


def encode_report(slave_max_offset: int) -> bytes:
    """The slave's 8-byte report: its max physical offset (request, ack or heartbeat)."""
    if slave_max_offset < 0:
        raise ValueError(f"offset must be >= 0, got {slave_max_offset}")
    return REPORT.pack(slave_max_offset)


def encode_transfer(phy_offset: int, body: bytes = b"") -> bytes:
    """The master's transfer frame: 12-byte header then the raw bytes (empty body = heartbeat)."""
    return HEADER.pack(phy_offset, len(body)) + body


class ReportParser:
    """Master side: turns the slave's bytes into its newest reported offset."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.consumed = 0

    def receive_data(self, data: bytes) -> None:
        self.buffer += data

    def next_event(self) -> int | _NeedData:
        """The newest complete report (earlier complete ones are skipped, as Java does), or NEED_DATA."""
        whole = len(self.buffer) - len(self.buffer) % REPORT_SIZE
        if whole == 0:
            return NEED_DATA
        (offset,) = REPORT.unpack_from(self.buffer, whole - REPORT_SIZE)
        del self.buffer[:whole]
        self.consumed += whole
        if offset < 0:
            raise RemoteProtocolError(f"slave reported a negative offset {offset} "
                                      f"(stream offset {self.consumed - REPORT_SIZE})")
        return offset


@dataclass(frozen=True, slots=True)
class TransferFrame:
    phy_offset: int
    body: bytes

    @property
    def is_heartbeat(self) -> bool:
        return not self.body


class TransferParser:
    """Slave side: turns the master's bytes into :class:`TransferFrame` events.

    ``max_body``: the largest ``bodySize`` taken; by default what fits in the slave's 4 MiB read buffer
    (Java's HAClient has no check: a larger frame never completes and the connection hangs until
    housekeeping; here it is a RemoteProtocolError). The slave's own ``haTransferBatchSize`` plays no
    part, so a master with a larger batch is served as in Java.
    """

    def __init__(self, max_body: int = MAX_TRANSFER_BODY) -> None:
        self.buffer = bytearray()
        self.max_body = max_body
        self.consumed = 0

    def receive_data(self, data: bytes) -> None:
        self.buffer += data

    def next_event(self) -> TransferFrame | _NeedData:
        if len(self.buffer) < HEADER_SIZE:
            return NEED_DATA
        phy_offset, size = HEADER.unpack_from(self.buffer)
        if phy_offset < 0:
            raise RemoteProtocolError(f"transfer header at stream offset {self.consumed} has negative "
                                      f"phyOffset {phy_offset}")
        if not 0 <= size <= self.max_body:
            raise RemoteProtocolError(f"transfer header at stream offset {self.consumed} has bodySize "
                                      f"{size}, outside 0..{self.max_body}")
        if len(self.buffer) < HEADER_SIZE + size:
            return NEED_DATA
        body = bytes(self.buffer[HEADER_SIZE:HEADER_SIZE + size])
        del self.buffer[:HEADER_SIZE + size]
        self.consumed += HEADER_SIZE + size
        return TransferFrame(phy_offset, body)
