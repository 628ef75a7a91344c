"""HAService: the master's replication side, sans-IO — connections, push2SlaveMaxOffset, group transfer.

Models ``org.apache.rocketmq.store.ha.HAService`` (RocketMQ 4.x): ``AcceptSocketService`` becomes
:meth:`accept`, each accepted stream an :class:`HAConnection`; ``notifyTransferSome`` raises
``push2SlaveMaxOffset`` (the highest ack from any slave) and wakes the :class:`GroupTransferService`;
``isSlaveOK`` decides between waiting and SLAVE_NOT_AVAILABLE. The put path's ``wakeupAll`` (SYNC_MASTER
only) is :meth:`wakeup_all`; an ASYNC_MASTER's write loops poll every 100 ms, so its replication lag
includes that poll, as in Java.

All effects go into an :class:`~rocketlab.core.OutputBuilder`: stream writes and closes, and the trace
events ``ha_report`` (an ack seen) and ``ha_transfer`` (bytes shipped).

Differences from Java 4.9.5: no threads (accept, read and write loops are methods called by the broker
core); ``GroupTransferService`` is checked on acks and deadlines, not polled every 10 ms; writes never
block part-way (see :mod:`rocketlab.ha.ha_connection`); :attr:`reported_connection_count` is a kit
addition for inspection.
"""

from __future__ import annotations

from typing import Any

from rocketlab.core import OutputBuilder, StreamClose, StreamWrite
from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.group_transfer import GroupCommitRequest, GroupTransferService
from rocketlab.ha.ha_connection import CommitLogReader, HAConnection


class HAService:
    """The master side of classic HA (see module docstring)."""

    def __init__(self, config: HAConfig, commit_log: CommitLogReader, mapped_file_size: int) -> None:
        self.config = config
        self.commit_log = commit_log
        self.mapped_file_size = mapped_file_size
        self.connections: dict[Any, HAConnection] = {}
        self.push2_slave_max_offset = 0
        self.group_transfer_service = GroupTransferService()

    @property
    def connection_count(self) -> int:
        return len(self.connections)

    @property
    def reported_connection_count(self) -> int:
        """Connections whose slave has sent its first report (the request offset): only those are
        transferring. A 4.9.5 slave sends it about 5 s after connecting."""
        return sum(c.slave_request_offset >= 0 for c in self.connections.values())

    def is_slave_ok(self, master_put_where: int) -> bool:
        """4.x ``isSlaveOK``: a slave is connected and not more than haSlaveFallbehindMax behind."""
        return (self.connection_count > 0
                and master_put_where - self.push2_slave_max_offset < self.config.ha_slave_fallbehind_max)

    def accept(self, stream_id: Any, client_addr: str, now_ms: int) -> None:
        self.connections[stream_id] = HAConnection(stream_id, client_addr, self.config, self.mapped_file_size,
                                                   now_ms)

    def on_stream_data(self, stream_id: Any, data: bytes, now_ms: int, out: OutputBuilder) -> list[Any]:
        """The slave's reports; returns the tokens of group-transfer requests completed."""
        conn = self.connections.get(stream_id)
        if conn is None:
            return []
        first = conn.slave_request_offset < 0
        try:
            ack = conn.on_data(data, now_ms, self.commit_log.get_max_offset())
        except RemoteProtocolError as e:
            self._close(conn, str(e), out)
            return self._complete(now_ms, out)
        if ack is None:
            return []
        out.trace("ha_report", slave=conn.client_addr, offset=ack)
        self.notify_transfer_some(ack)
        if first:  # the write loop, which was waiting for the request offset, starts now
            conn.next_poll_ms = now_ms
        elif conn.window_blocked and conn.window_open():  # the write loop waited for this ack
            conn.window_blocked = False
            conn.next_poll_ms = now_ms
        return self._complete(now_ms, out)  # otherwise an ack wakes GroupTransferService only, not the writer

    def notify_transfer_some(self, offset: int) -> None:
        if offset > self.push2_slave_max_offset:
            self.push2_slave_max_offset = offset

    def on_stream_closed(self, stream_id: Any) -> None:
        self.connections.pop(stream_id, None)

    def submit_replica_request(self, next_offset: int, token: Any, now_ms: int, ack_nums: int = 1) -> None:
        self.group_transfer_service.put_request(
            GroupCommitRequest(next_offset, now_ms + self.config.slave_timeout, token, ack_nums))

    def wakeup_all(self, now_ms: int, out: OutputBuilder) -> None:
        """The put path's ``WaitNotifyObject.wakeupAll``: every write loop runs now."""
        for conn in list(self.connections.values()):
            self._pump(conn, now_ms, out)

    def on_tick(self, now_ms: int, out: OutputBuilder) -> list[Any]:
        """Write loops whose poll is due, heartbeats, housekeeping, and timed-out waits."""
        for conn in list(self.connections.values()):
            if conn.expired(now_ms):
                self._close(conn, f"housekeeping: nothing read from {conn.client_addr} for "
                                  f"{now_ms - conn.last_read_timestamp} ms", out)
            elif now_ms >= conn.next_deadline_ms(self.commit_log):
                self._pump(conn, now_ms, out)
        return self._complete(now_ms, out)

    def next_deadline_ms(self) -> int | None:
        times = [c.next_deadline_ms(self.commit_log) for c in self.connections.values()]
        transfer = self.group_transfer_service.next_deadline_ms()
        if transfer is not None:
            times.append(transfer)
        return min(times, default=None)

    def _pump(self, conn: HAConnection, now_ms: int, out: OutputBuilder) -> None:
        for offset, size, wire in conn.pump(self.commit_log, now_ms):
            out.act(StreamWrite(conn.stream_id, wire))
            out.trace("ha_transfer", slave=conn.client_addr, offset=offset, size=size)
        # more data waiting: run again at once; otherwise (or while the slave's acks lag too far behind, see
        # MAX_UNACKED_TRANSFER_BYTES) wait for a wakeup, the ack or the poll interval
        busy = conn.has_more(self.commit_log) and not conn.window_blocked
        conn.next_poll_ms = now_ms if busy else now_ms + self.config.ha_write_poll_interval

    def _close(self, conn: HAConnection, reason: str, out: OutputBuilder) -> None:
        self.connections.pop(conn.stream_id, None)
        out.act(StreamClose(conn.stream_id, reason))
        out.trace("ha_close", slave=conn.client_addr, reason=reason)

    def _complete(self, now_ms: int, out: OutputBuilder) -> list[tuple[Any, bool]]:
        acks = [c.slave_ack_offset for c in self.connections.values()]
        done = self.group_transfer_service.do_wait_transfer(self.push2_slave_max_offset, acks, now_ms)
        return [(request.token, ok) for request, ok in done]
