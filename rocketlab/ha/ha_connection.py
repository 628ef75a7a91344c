"""HAConnection: the master's end of one slave's HA stream (read and write halves), sans-IO.

Models ``org.apache.rocketmq.store.ha.HAConnection`` (RocketMQ 4.9.x): ``ReadSocketService`` parses
the slave's 8-byte reports and ``WriteSocketService`` ships raw CommitLog ranges. Here both are plain
methods: :meth:`on_data` (bytes from the slave) and :meth:`pump` (what to write now).

Rules kept from Java:

* the first report is the request offset; an empty slave (0) starts at the master's last file
  (``maxOffset - maxOffset % mappedFileSize``), older files are never replicated;
* after the first, a report beyond the master's max offset closes the connection (4.9.3, issue #3015);
* a batch is at most ``haTransferBatchSize`` and never crosses a file (``getCommitLogData``);
* a heartbeat ``(nextTransferFromWhere, 0)`` after ``haSendHeartbeatInterval`` without writing;
* housekeeping closes a connection with nothing read for ``haHousekeepingInterval``.

Simplified: socket writes never block part-way (``lastWriteOver`` is always true). In their place, a
bound on what is sent but not acknowledged (:data:`MAX_UNACKED_TRANSFER_BYTES`, shared with the 5.x
AutoSwitchHAService).
"""

from __future__ import annotations

from typing import Any, Protocol

from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.wire import NEED_DATA, ReportParser, encode_transfer

MAX_BATCHES_PER_PUMP = 32  # 1 MiB of 32 KiB batches per write-loop turn before yielding

MAX_UNACKED_TRANSFER_BYTES = 4 * 1024 * 1024
"""Deviation: a master's write loop pauses while this many bytes are sent to a slave and not acknowledged,
and goes on with the ack that brings it below. Java's loop pauses when the socket's send buffer is full
(``lastWriteOver`` false) until the selector says writable; a sans-IO core cannot see the socket, and
without a bound the TCP runtime queued a slave's whole catch-up in the master's memory (measured with a
191 MiB log: master RSS +216 MiB without the bound, +90 MiB with 32 MiB, +3 MiB with 4 MiB). A slave acks
after every read, so the bound does not slow a catch-up over loopback (the same MiB/s within this
machine's noise), and no simulated scenario comes near it."""


def transfer_window_open(next_transfer_from_where: int, slave_ack_offset: int, transfer_start: int) -> bool:
    """Whether a master may push more: fewer than :data:`MAX_UNACKED_TRANSFER_BYTES` sent past the
    slave's ack (or past where the transfer started, before the slave acked anything beyond it)."""
    return next_transfer_from_where - max(slave_ack_offset, transfer_start) < MAX_UNACKED_TRANSFER_BYTES


class CommitLogReader(Protocol):
    """What the master's HA side reads from the CommitLog."""

    def get_max_offset(self) -> int: ...

    def get_data(self, offset: int, max_size: int | None = None) -> bytes | None: ...


class HAConnection:
    """One slave connection on the master (see module docstring)."""

    def __init__(self, stream_id: Any, client_addr: str, config: HAConfig, mapped_file_size: int,
                 now_ms: int) -> None:
        self.stream_id = stream_id
        self.client_addr = client_addr
        self.config = config
        self.mapped_file_size = mapped_file_size
        self.parser = ReportParser()
        self.slave_request_offset = -1
        self.slave_ack_offset = -1
        self.next_transfer_from_where = -1
        self.transfer_start = -1
        self.window_blocked = False
        """The last pump stopped at :data:`MAX_UNACKED_TRANSFER_BYTES`; the ack that opens it pumps again."""
        self.last_read_timestamp = now_ms
        self.last_write_timestamp = now_ms
        self.next_poll_ms = now_ms

    # --- ReadSocketService ---------------------------------------------------------------------
    def on_data(self, data: bytes, now_ms: int, master_max_offset: int) -> int | None:
        """Feed the slave's bytes; returns the newest ack (or None). Raises RemoteProtocolError."""
        self.parser.receive_data(data)
        self.last_read_timestamp = now_ms
        offset = self.parser.next_event()
        if offset is NEED_DATA:
            return None
        if self.slave_request_offset < 0:
            self.slave_request_offset = offset
        elif offset > master_max_offset:
            raise RemoteProtocolError(f"slave {self.client_addr} acked offset {offset}, beyond the master's "
                                      f"max offset {master_max_offset}")
        self.slave_ack_offset = offset
        return offset

    def expired(self, now_ms: int) -> bool:
        return now_ms - self.last_read_timestamp > self.config.ha_housekeeping_interval

    # --- WriteSocketService --------------------------------------------------------------------
    def pump(self, commit_log: CommitLogReader, now_ms: int) -> list[tuple[int, int, bytes]]:
        """Frames to write now: ``(phy_offset, size, wire_bytes)`` each; heartbeat ones have size 0."""
        if self.slave_request_offset < 0:
            return []
        if self.next_transfer_from_where < 0:
            self.next_transfer_from_where = self.transfer_start = self._start_offset(commit_log.get_max_offset())
        frames: list[tuple[int, int, bytes]] = []
        if now_ms - self.last_write_timestamp > self.config.ha_send_heartbeat_interval:
            frames.append((self.next_transfer_from_where, 0, encode_transfer(self.next_transfer_from_where)))
        self.window_blocked = False
        for _ in range(MAX_BATCHES_PER_PUMP):
            if not self.window_open():
                self.window_blocked = True
                break
            body = commit_log.get_data(self.next_transfer_from_where, self.config.ha_transfer_batch_size)
            if not body:
                break
            frames.append((self.next_transfer_from_where, len(body),
                           encode_transfer(self.next_transfer_from_where, body)))
            self.next_transfer_from_where += len(body)
        if frames:
            self.last_write_timestamp = now_ms
        return frames

    def _start_offset(self, master_max_offset: int) -> int:
        if self.slave_request_offset == 0:
            return master_max_offset - master_max_offset % self.mapped_file_size
        return self.slave_request_offset

    def window_open(self) -> bool:
        return transfer_window_open(self.next_transfer_from_where, self.slave_ack_offset, self.transfer_start)

    def has_more(self, commit_log: CommitLogReader) -> bool:
        return 0 <= self.next_transfer_from_where < commit_log.get_max_offset()

    def next_deadline_ms(self, commit_log: CommitLogReader) -> int:
        """When this connection next needs the write or read loop."""
        housekeeping = self.last_read_timestamp + self.config.ha_housekeeping_interval + 1
        if self.slave_request_offset < 0:  # nothing to write until the slave says where to start
            return housekeeping
        heartbeat = self.last_write_timestamp + self.config.ha_send_heartbeat_interval + 1
        return min(self.next_poll_ms, heartbeat, housekeeping)
