"""HAClient: the slave's replication loop, sans-IO — connect, report, receive, append, ack, reconnect.

Models ``org.apache.rocketmq.store.ha.HAService.HAClient`` (RocketMQ 4.x, with 5.x's housekeeping on
the last *read*). A frame whose ``phyOffset`` differs from the slave's own max offset (when that is not
0) closes the connection ("master pushed offset not equal the max phy offset in slave"); on reconnect
the slave reports its real offset and the master re-positions. An empty slave accepts any start.
Each appended body is acked at once (``reportSlaveMaxOffsetPlus``). Simplified: the first report is
sent as soon as the connection opens (4.x could wait up to 5 s).
"""

from __future__ import annotations

from typing import Any, Protocol

from rocketlab.core import Connect, OutputBuilder, StreamClose, StreamWrite
from rocketlab.errors import RemoteProtocolError, StoreError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.wire import NEED_DATA, TransferParser, encode_report


class CommitLogWriter(Protocol):
    """What the slave's HA side needs from its CommitLog."""

    def get_max_offset(self) -> int: ...

    def append_data(self, start_offset: int, data: bytes) -> bool: ...


class HAClient:
    """The slave side of classic HA (see module docstring)."""

    def __init__(self, config: HAConfig, commit_log: CommitLogWriter, master_address: str | None,
                 node_id: str) -> None:
        self.config = config
        self.commit_log = commit_log
        self.master_address = master_address
        self.node_id = node_id
        self.stream_id: str | None = None
        self.connected = False
        self.connects = 0
        self.parser = TransferParser(config.ha_transfer_batch_size)
        self.current_reported_offset = 0
        self.last_write_timestamp = 0
        self.last_read_timestamp = 0
        self.next_connect_ms = 0
        self.close_reasons: list[str] = []

    def update_master_address(self, address: str | None) -> None:
        self.master_address = address

    # --- timers --------------------------------------------------------------------------------
    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        if self.stream_id is None:
            if self.master_address and now_ms >= self.next_connect_ms:
                self.connects += 1
                self.stream_id = f"ha-{self.node_id}-{self.connects}"
                out.act(Connect(self.master_address, self.stream_id))
            return
        if not self.connected:
            return
        if now_ms - self.last_read_timestamp > self.config.ha_housekeeping_interval:
            self._close(f"housekeeping: nothing read from the master for "
                        f"{now_ms - self.last_read_timestamp} ms", now_ms, out)
        elif now_ms - self.last_write_timestamp >= self.config.ha_send_heartbeat_interval:
            self._report(now_ms, out)

    def next_deadline_ms(self) -> int | None:
        if self.stream_id is None:
            return self.next_connect_ms if self.master_address else None
        if not self.connected:
            return None
        return min(self.last_write_timestamp + self.config.ha_send_heartbeat_interval,
                   self.last_read_timestamp + self.config.ha_housekeeping_interval + 1)

    # --- the stream ------------------------------------------------------------------------------
    def owns(self, stream_id: Any) -> bool:
        return stream_id is not None and stream_id == self.stream_id

    def on_stream_open(self, now_ms: int, out: OutputBuilder) -> None:
        self.connected = True
        self.parser = TransferParser(self.config.ha_transfer_batch_size)
        self.last_read_timestamp = now_ms
        self.current_reported_offset = self.commit_log.get_max_offset()
        self._report(now_ms, out)

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
            self._close(str(e), now_ms, out)
            return appended
        if self.commit_log.get_max_offset() > self.current_reported_offset:
            self._report(now_ms, out)  # reportSlaveMaxOffsetPlus: the ack
        return appended

    def on_stream_closed(self, reason: str, now_ms: int) -> None:
        self.close_reasons.append(reason)
        self._reset(now_ms)

    def _report(self, now_ms: int, out: OutputBuilder) -> None:
        self.current_reported_offset = self.commit_log.get_max_offset()
        out.act(StreamWrite(self.stream_id, encode_report(self.current_reported_offset)))
        self.last_write_timestamp = now_ms

    def _close(self, reason: str, now_ms: int, out: OutputBuilder) -> None:
        out.act(StreamClose(self.stream_id, reason))
        out.trace("ha_close", slave=self.node_id, reason=reason)
        self.close_reasons.append(reason)
        self._reset(now_ms)

    def _reset(self, now_ms: int) -> None:
        self.stream_id = None
        self.connected = False
        self.next_connect_ms = now_ms + self.config.ha_reconnect_interval
