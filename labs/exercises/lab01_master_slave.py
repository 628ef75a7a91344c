"""Lab 01 exercises: the slave's side of classic HA replication.

Edit the bodies below, then check them from the notebook (``check("lab01.transfer_parser")``) or from a
shell (``rocketlab grade lab01``). The grader plugs your code into the real HAClient and
GroupTransferService of a simulated master and slave, so a mistake shows up as the cluster misbehaving.
Keep the names and signatures; you may add helpers.
"""

from __future__ import annotations

import struct

from rocketlab.errors import RemoteProtocolError  # noqa: F401  (yours to use)
from rocketlab.ha.wire import MAX_TRANSFER_BODY, NEED_DATA, TransferFrame  # noqa: F401

HEADER = struct.Struct(">qi")  # phyOffset (int64), bodySize (int32), big-endian: 12 bytes


class TransferParser:
    """The slave's reader of the master's transfer frames, h11-style (``HAClient.processReadEvent``).

    The master sends frames of a 12-byte header, ``phyOffset`` (int64) then ``bodySize`` (int32), both
    big-endian, followed by ``bodySize`` bytes of CommitLog data; ``bodySize`` 0 is a heartbeat. TCP may
    cut a frame anywhere or glue several together, so:

    * ``receive_data(data)`` appends bytes as they arrive;
    * ``next_event()`` returns the next whole frame as ``TransferFrame(phy_offset, body)`` (``body`` as
      ``bytes``), or ``NEED_DATA`` when the buffer holds no whole frame yet. Call it until ``NEED_DATA``.
      The same bytes split differently must give the same frames.
    * A negative ``phyOffset``, or a ``bodySize`` outside ``0..max_body``, raises
      ``RemoteProtocolError`` (the HAClient then closes the connection).
    """

    def __init__(self, max_body: int = MAX_TRANSFER_BODY) -> None:
        self.max_body = max_body
        raise NotImplementedError("lab01.transfer_parser: set up your buffer")

    def receive_data(self, data: bytes) -> None:
        raise NotImplementedError("lab01.transfer_parser: receive_data")

    def next_event(self) -> TransferFrame | object:
        raise NotImplementedError("lab01.transfer_parser: next_event")


def decide_wait_transfer(next_offset: int, ack_nums: int, deadline_ms: int, push2_slave_max_offset: int,
                         slave_acks: list[int], now_ms: int) -> bool | None:
    """One waiting SYNC_MASTER put in ``GroupTransferService.doWaitTransfer``.

    The put ends at ``next_offset`` (``wroteOffset + wroteBytes``). Answer True when it is replicated
    (the put returns PUT_OK), False when its deadline has come first (``now_ms >= deadline_ms``:
    FLUSH_SLAVE_TIMEOUT, the message stays stored on the master), None to keep waiting.

    * ``ack_nums <= 1`` (RocketMQ 4.x): replicated once ``push2_slave_max_offset``, the furthest any
      slave has acknowledged, has reached ``next_offset``.
    * ``ack_nums > 1`` (5.x, ``inSyncReplicas``): replicated once ``ack_nums`` replicas hold it, the
      master counting as one and each slave whose ack in ``slave_acks`` reached ``next_offset`` as one.

    A put that is replicated exactly at its deadline is replicated (True).
    """
    raise NotImplementedError("lab01.decide_wait_transfer")
