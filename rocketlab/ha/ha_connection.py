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
Simplified: socket writes never block part-way (``lastWriteOver`` is always true).
"""

from __future__ import annotations

from typing import Any, Protocol

from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.wire import NEED_DATA, ReportParser, encode_transfer

MAX_BATCHES_PER_PUMP = 32  # 1 MiB of 32 KiB batches per write-loop turn before yielding


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
            self.next_transfer_from_where = self._start_offset(commit_log.get_max_offset())
        frames: list[tuple[int, int, bytes]] = []
        if now_ms - self.last_write_timestamp > self.config.ha_send_heartbeat_interval:
            frames.append((self.next_transfer_from_where, 0, encode_transfer(self.next_transfer_from_where)))
        for _ in range(MAX_BATCHES_PER_PUMP):
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

    def has_more(self, commit_log: CommitLogReader) -> bool:
        return 0 <= self.next_transfer_from_where < commit_log.get_max_offset()

    def next_deadline_ms(self, commit_log: CommitLogReader) -> int:
        """When this connection next needs the write or read loop."""
        housekeeping = self.last_read_timestamp + self.config.ha_housekeeping_interval + 1
        if self.slave_request_offset < 0:  # nothing to write until the slave says where to start
            return housekeeping
        heartbeat = self.last_write_timestamp + self.config.ha_send_heartbeat_interval + 1
        return min(self.next_poll_ms, heartbeat, housekeeping)
