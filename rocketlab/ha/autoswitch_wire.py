"""The HA wire protocol of RocketMQ 5's controller mode (AutoSwitchHAClient / AutoSwitchHAConnection,
RocketMQ 5.3.3), byte-exact. Big-endian, no checksum; every frame starts with the sender's connection
state (``HAConnectionState`` ordinal: READY 0, HANDSHAKE 1, TRANSFER 2, SUSPEND 3, SHUTDOWN 4).

Slave -> master::

    HANDSHAKE  state:i32 (=1)  isSyncFromLastFile:i16  isAsyncLearner:i16  slaveBrokerId:i64      16 bytes
    TRANSFER   state:i32 (=2)  maxOffset:i64 (the ack)                                              12 bytes

Master -> slave::

    HANDSHAKE  state:i32 (=1)  bodySize:i32  maxPhyOffset:i64  lastEpoch:i32                       20 bytes
               body: bodySize / 12 x (epoch:i32, startOffset:i64)  - the master's epoch entries
    TRANSFER   state:i32 (=2)  bodySize:i32  offset:i64  epoch:i32  epochStartOffset:i64
               confirmOffset:i64                                                                    36 bytes
               body: bodySize bytes of commit log from ``offset``; bodySize 0 is a heartbeat

Both parsers have the h11 shape of :mod:`rocketlab.ha.wire`: ``receive_data`` then ``next_event`` until
``NEED_DATA``; a frame split or merged across reads gives the same events. A frame that cannot be right
(an unknown state, a negative or oversized body) raises :class:`~rocketlab.errors.RemoteProtocolError`:
the connection must be closed.

Simplified against Java: the master's reader starts on a frame once 12 bytes (``MIN_HEADER_SIZE``) are
there and, for a handshake, reads the slave id from bytes 8-15 whether or not they have arrived; we wait
for all 16. The 5.0.0 and 5.1.0 layouts (a 12-byte slave handshake followed by the address, one 36-byte
master header for both frames) are not modelled.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.wire import HA_CLIENT_READ_MAX_BUFFER_SIZE, NEED_DATA, _NeedData


class HAConnectionState(enum.IntEnum):
    """``HAConnectionState``: the ordinals are on the wire."""

    READY = 0
    HANDSHAKE = 1
    TRANSFER = 2
    SUSPEND = 3
    SHUTDOWN = 4


SLAVE_HANDSHAKE = struct.Struct(">ihhq")
SLAVE_TRANSFER = struct.Struct(">iq")
MASTER_HANDSHAKE = struct.Struct(">iiqi")
MASTER_TRANSFER = struct.Struct(">iiqiqq")
EPOCH_ENTRY = struct.Struct(">iq")
SLAVE_HANDSHAKE_SIZE = SLAVE_HANDSHAKE.size    # AutoSwitchHAClient.HANDSHAKE_HEADER_SIZE = 16
SLAVE_TRANSFER_SIZE = SLAVE_TRANSFER.size      # AutoSwitchHAClient.TRANSFER_HEADER_SIZE = 12
MIN_HEADER_SIZE = min(SLAVE_HANDSHAKE_SIZE, SLAVE_TRANSFER_SIZE)
MASTER_HANDSHAKE_SIZE = MASTER_HANDSHAKE.size  # AutoSwitchHAConnection.HANDSHAKE_HEADER_SIZE = 20
MASTER_TRANSFER_SIZE = MASTER_TRANSFER.size    # AutoSwitchHAConnection.TRANSFER_HEADER_SIZE = 36
EPOCH_ENTRY_SIZE = EPOCH_ENTRY.size            # 12
MAX_EPOCH_ENTRIES = 1000                       # the master's handshake buffer holds at most 1000 entries


# ---------------------------------------------------------------------- frames
@dataclass(frozen=True, slots=True)
class SlaveHandshake:
    slave_broker_id: int
    sync_from_last_file: bool = False
    async_learner: bool = False


@dataclass(frozen=True, slots=True)
class SlaveAck:
    """A slave's TRANSFER frame: its max offset (the first one on a connection is its request offset)."""

    max_offset: int
    state: HAConnectionState = HAConnectionState.TRANSFER


@dataclass(frozen=True, slots=True)
class MasterHandshake:
    max_phy_offset: int
    last_epoch: int
    epoch_entries: tuple[tuple[int, int], ...]
    """(epoch, startOffset) of every epoch entry the master has, oldest first."""


@dataclass(frozen=True, slots=True)
class MasterTransfer:
    offset: int
    epoch: int
    epoch_start_offset: int
    confirm_offset: int
    body: bytes = b""


def encode_slave_handshake(frame: SlaveHandshake) -> bytes:
    return SLAVE_HANDSHAKE.pack(HAConnectionState.HANDSHAKE, int(frame.sync_from_last_file), int(frame.async_learner),
                                frame.slave_broker_id)


def encode_slave_ack(frame: SlaveAck) -> bytes:
    return SLAVE_TRANSFER.pack(frame.state, frame.max_offset)


def encode_master_handshake(frame: MasterHandshake) -> bytes:
    if len(frame.epoch_entries) > MAX_EPOCH_ENTRIES:
        raise ValueError(f"{len(frame.epoch_entries)} epoch entries: the handshake holds at most {MAX_EPOCH_ENTRIES}")
    body = b"".join(EPOCH_ENTRY.pack(epoch, start) for epoch, start in frame.epoch_entries)
    return MASTER_HANDSHAKE.pack(HAConnectionState.HANDSHAKE, len(body), frame.max_phy_offset, frame.last_epoch) + body


def encode_master_transfer(frame: MasterTransfer) -> bytes:
    return MASTER_TRANSFER.pack(HAConnectionState.TRANSFER, len(frame.body), frame.offset, frame.epoch,
                                frame.epoch_start_offset, frame.confirm_offset) + frame.body


# ---------------------------------------------------------------------- parsers
class _Parser:
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.consumed = 0

    def receive_data(self, data: bytes) -> None:
        self.buffer += data

    def _take(self, size: int) -> None:
        del self.buffer[:size]
        self.consumed += size

    def _state(self) -> int:
        return int.from_bytes(self.buffer[:4], "big", signed=True)


class SlaveFrameParser(_Parser):
    """Master side (``AutoSwitchHAConnection.ReadSocketService``): the slave's handshakes and acks."""

    def next_event(self) -> SlaveHandshake | SlaveAck | _NeedData:
        if len(self.buffer) < MIN_HEADER_SIZE:
            return NEED_DATA
        state = self._state()
        if state == HAConnectionState.HANDSHAKE:
            if len(self.buffer) < SLAVE_HANDSHAKE_SIZE:
                return NEED_DATA
            _, from_last, learner, broker_id = SLAVE_HANDSHAKE.unpack_from(self.buffer)
            self._take(SLAVE_HANDSHAKE_SIZE)
            return SlaveHandshake(broker_id, from_last == 1, learner == 1)
        if state == HAConnectionState.TRANSFER:
            _, offset = SLAVE_TRANSFER.unpack_from(self.buffer)
            if offset < 0:
                raise RemoteProtocolError(f"slave acked a negative offset {offset} (stream offset {self.consumed})")
            self._take(SLAVE_TRANSFER_SIZE)
            return SlaveAck(offset)
        raise RemoteProtocolError(f"slave frame with state {state} at stream offset {self.consumed}: "
                                  "only HANDSHAKE (1) and TRANSFER (2) are sent by a slave")


class MasterFrameParser(_Parser):
    """Slave side (``AutoSwitchHAClient.HAClientReader``): the master's handshakes and transfers. Whether a
    frame's state matches the slave's own is the client's business (Java drops the connection)."""

    def next_event(self) -> MasterHandshake | MasterTransfer | _NeedData:
        if len(self.buffer) < MASTER_HANDSHAKE_SIZE:
            return NEED_DATA
        state, body_size = struct.unpack_from(">ii", self.buffer)
        header = MASTER_TRANSFER_SIZE if state == HAConnectionState.TRANSFER else MASTER_HANDSHAKE_SIZE
        if state not in (HAConnectionState.HANDSHAKE, HAConnectionState.TRANSFER):
            raise RemoteProtocolError(f"master frame with state {state} at stream offset {self.consumed}")
        if body_size < 0 or header + body_size > HA_CLIENT_READ_MAX_BUFFER_SIZE:
            raise RemoteProtocolError(f"master frame body size {body_size} at stream offset {self.consumed} "
                                      f"(the slave's buffer holds {HA_CLIENT_READ_MAX_BUFFER_SIZE} bytes)")
        if len(self.buffer) < header + body_size:
            return NEED_DATA
        if state == HAConnectionState.HANDSHAKE:
            _, _, max_offset, last_epoch = MASTER_HANDSHAKE.unpack_from(self.buffer)
            count = body_size // EPOCH_ENTRY_SIZE  # Java reads bodySize / 12 entries and skips the rest
            entries = tuple(EPOCH_ENTRY.unpack_from(self.buffer, header + i * EPOCH_ENTRY_SIZE) for i in range(count))
            self._take(header + body_size)
            return MasterHandshake(max_offset, last_epoch, entries)
        _, _, offset, epoch, epoch_start, confirm = MASTER_TRANSFER.unpack_from(self.buffer)
        body = bytes(self.buffer[header:header + body_size])
        self._take(header + body_size)
        return MasterTransfer(offset, epoch, epoch_start, confirm, body)
