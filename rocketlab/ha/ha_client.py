"""HAClient: the slave's replication loop, sans-IO — connect, report, receive, append, ack, reconnect.

Models ``org.apache.rocketmq.store.ha.HAService.HAClient`` of rocketmq-all-4.9.5 (the default) or, with
``HAConfig.ha_client_behaviour="5.3.3"``, ``DefaultHAClient`` of rocketmq-all-5.3.3. Common to both:
the 8-byte report carries the slave's max offset; on connect ``currentReportedOffset`` is that offset;
a report goes out when more than ``haSendHeartbeatInterval`` has passed since the last write; each
appended frame is acked (``reportSlaveMaxOffsetPlus``); a frame whose ``phyOffset`` differs from the
slave's own max offset (when that is not 0) closes the connection ("master pushed offset not equal the
max phy offset in slave"); an empty slave accepts any start; a failed connect waits 5 s.

Where the two releases differ (Java line numbers of ``HAService.java`` 4.9.5 / ``DefaultHAClient.java``
5.3.3):

==================================  =======================================  ===================================
                                    4.9.5 ``HAClient``                       5.3.3 ``DefaultHAClient``
==================================  =======================================  ===================================
``lastWriteTimestamp`` on connect   reset to now (``connectMaster``, 512):   untouched (initialised when the
                                    the first report, the request offset,    client is built, 67): the first
                                    goes out about 5 s after connecting      report waits until 5 s after the
                                    (why Java's HATest sleeps 6 s)           last write or the client's start
housekeeping                        on the last *write* (573-582); as the    on the last *read* (330-336),
                                    slave writes a heartbeat every 5 s, it   set on connect and on every read
                                    never fires with the default intervals
after ``closeMaster``               reconnects at once (``continue``, 565)   waits 5 s after a failed transfer
                                                                             (``closeMasterAndWait``, 322);
                                                                             at once after housekeeping
==================================  =======================================  ===================================

Observable: after the slave closes (an offset mismatch, or the master's close) a 4.9.5 slave is back at
once, so the master counts a connection but hears nothing for 5 s and a SYNC_MASTER's puts end in
FLUSH_SLAVE_TIMEOUT; a 5.3.3 slave stays away 5 s, so the master has no connection and answers
SLAVE_NOT_AVAILABLE at once, and once back it reports at once (its last write is over 5 s old).

Differences from Java 4.9.5 and 5.3.3 (under either switch):

* the loop is event-driven: a report is due at ``lastWriteTimestamp + haSendHeartbeatInterval + 1``
  exactly, where Java checks after each ``select(1000)``, i.e. up to about 1 s later;
* the connect is asynchronous: the timestamps are taken when the stream opens, and a failed connect is
  learnt from the runtime (``on_stream_closed`` before the open);
* the ack follows all frames of one read, not each frame; writes never fail part-way;
* a frame with a ``bodySize`` larger than the 4 MiB read buffer (or negative) closes the connection with
  a reason; Java's would never complete and the connection would hang (see :class:`TransferParser`).
"""

from __future__ import annotations

from typing import Any, Protocol

from rocketlab import plugs
from rocketlab.core import Connect, OutputBuilder, StreamClose, StreamWrite
from rocketlab.errors import RemoteProtocolError, StoreError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.wire import NEED_DATA, TransferParser, encode_report

TRANSFER_PARSER_PLUG = plugs.point("lab01.transfer_parser")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""


class CommitLogWriter(Protocol):
    """What the slave's HA side needs from its CommitLog."""

    def get_max_offset(self) -> int: ...

    def append_data(self, start_offset: int, data: bytes) -> bool: ...


class HAClient:
    """The slave side of classic HA (see module docstring)."""

    def __init__(self, config: HAConfig, commit_log: CommitLogWriter, master_address: str | None,
                 node_id: str) -> None:
        self.config = config
        self.v4 = config.ha_client_behaviour == "4.9.5"
        self.commit_log = commit_log
        self.master_address = master_address
        self.node_id = node_id
        self.stream_id: str | None = None
        self.connected = False
        self.connects = 0
        self.parser = plugs.resolve(TRANSFER_PARSER_PLUG, TransferParser)()
        self.current_reported_offset = 0
        self.last_write_timestamp: int | None = None  # None until the first tick: "when the client was built"
        self.last_read_timestamp = 0
        self.next_connect_ms = 0
        self.close_reasons: list[str] = []
        self.reports = 0

    def update_master_address(self, address: str | None) -> None:
        self.master_address = address

    # --- timers --------------------------------------------------------------------------------
    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        if self.last_write_timestamp is None:
            self.last_write_timestamp = now_ms  # the field initialiser: System.currentTimeMillis()
        if self.stream_id is None:
            if self.master_address and now_ms >= self.next_connect_ms:
                self.connects += 1
                self.stream_id = f"ha-{self.node_id}-{self.connects}"
                out.act(Connect(self.master_address, self.stream_id))
            return
        if not self.connected:
            return
        if self._time_to_report(now_ms):
            self._report(self.current_reported_offset, now_ms, out)
        if self.v4:
            if now_ms - self.last_write_timestamp > self.config.ha_housekeeping_interval:
                self._close(f"housekeeping: nothing written to the master for "
                            f"{now_ms - self.last_write_timestamp} ms", now_ms, out, wait=False)
        elif now_ms - self.last_read_timestamp > self.config.ha_housekeeping_interval:
            self._close(f"housekeeping: nothing read from the master for "
                        f"{now_ms - self.last_read_timestamp} ms", now_ms, out, wait=False)

    def _time_to_report(self, now_ms: int) -> bool:
        """``isTimeToReportOffset``: more than haSendHeartbeatInterval since the last write."""
        return now_ms - self.last_write_timestamp > self.config.ha_send_heartbeat_interval

    def next_deadline_ms(self) -> int | None:
        if self.stream_id is None:
            return self.next_connect_ms if self.master_address else None
        if not self.connected:
            return None
        report = self.last_write_timestamp + self.config.ha_send_heartbeat_interval + 1
        housekeeping = (self.last_write_timestamp if self.v4 else self.last_read_timestamp) \
            + self.config.ha_housekeeping_interval + 1
        return min(report, housekeeping)

    # --- the stream ------------------------------------------------------------------------------
    def owns(self, stream_id: Any) -> bool:
        return stream_id is not None and stream_id == self.stream_id

    def on_stream_open(self, now_ms: int, out: OutputBuilder) -> None:
        """``connectMaster`` succeeded: both versions take ``currentReportedOffset`` and reset their
        housekeeping clock (4.9.5: lastWriteTimestamp, 5.3.3: lastReadTimestamp); a report is sent now
        only if one is due (never under 4.9.5, whose clock was just reset)."""
        if self.last_write_timestamp is None:
            self.last_write_timestamp = now_ms
        self.connected = True
        self.parser = plugs.resolve(TRANSFER_PARSER_PLUG, TransferParser)()
        self.current_reported_offset = self.commit_log.get_max_offset()
        if self.v4:
            self.last_write_timestamp = now_ms
        else:
            self.last_read_timestamp = now_ms
        if self._time_to_report(now_ms):
            self._report(self.current_reported_offset, now_ms, out)

    def on_stream_data(self, data: bytes, now_ms: int, out: OutputBuilder) -> int:
        """Append what the master sent; returns how many bytes were appended."""
        self.last_read_timestamp = now_ms
        self.parser.receive_data(data)
        appended = 0
        try:
            while (frame := self.parser.next_event()) is not NEED_DATA:
                local_max = self.commit_log.get_max_offset()
                if local_max != 0 and local_max != frame.phy_offset:
                    raise RemoteProtocolError(
                        f"master pushed offset {frame.phy_offset} not equal the max phy offset in slave "
                        f"{local_max}")
                if frame.body:
                    self.commit_log.append_data(frame.phy_offset, frame.body)
                    appended += len(frame.body)
        except (RemoteProtocolError, StoreError) as e:
            self._close(str(e), now_ms, out, wait=not self.v4)
            return appended
        current = self.commit_log.get_max_offset()
        if current > self.current_reported_offset:  # reportSlaveMaxOffsetPlus: the ack
            self.current_reported_offset = current
            self._report(current, now_ms, out)
        return appended

    def on_stream_closed(self, reason: str, now_ms: int) -> None:
        """The master closed the stream (4.9.5: reconnect at once; 5.3.3: after 5 s), or the connect
        failed (both: after 5 s)."""
        self.close_reasons.append(reason)
        self._reset(now_ms, wait=not self.connected or not self.v4)

    def _report(self, offset: int, now_ms: int, out: OutputBuilder) -> None:
        out.act(StreamWrite(self.stream_id, encode_report(offset)))
        self.last_write_timestamp = now_ms
        self.reports += 1

    def _close(self, reason: str, now_ms: int, out: OutputBuilder, *, wait: bool) -> None:
        out.act(StreamClose(self.stream_id, reason))
        out.trace("ha_close", slave=self.node_id, reason=reason)
        self.close_reasons.append(reason)
        self._reset(now_ms, wait=wait)

    def _reset(self, now_ms: int, *, wait: bool) -> None:
        self.stream_id = None
        self.connected = False
        self.next_connect_ms = now_ms + self.config.ha_reconnect_interval if wait else now_ms
