"""AutoSwitchHAClient, RocketMQ 5.3.3 (controller mode), sans-IO: the slave's side of replication with epochs.

States (``HAConnectionState``): READY -> (connect) HANDSHAKE -> (the master's handshake, truncation)
TRANSFER; any failure closes the stream and goes back to READY, which waits 5 s before connecting again.

* **READY**: ``truncateInvalidMsg`` (cut a half-written tail behind the dispatch point) and the epoch file
  with it, then connect to the master's HA address; on connect ``currentReportedOffset`` = the local max
  offset and the housekeeping clock starts.
* **HANDSHAKE**: send the 16-byte handshake (broker id, flags), wait for the master's. Truncation
  (``doTruncate``): an empty epoch file truncates nothing and reports from 0; otherwise both epoch lists
  are closed at their logs' ends and :meth:`~rocketlab.ha.epoch_file_cache.EpochFileCache.find_consistent_point`
  says where the logs stop agreeing (-1: no common point, the connection fails); the log and the epoch
  file are cut there and ``currentReportedOffset`` becomes that point. An ack goes out only if the log is
  now beyond ``currentReportedOffset`` - so, as in Java, the first ack (the request offset) usually waits
  for the periodic report ``haSendHeartbeatInterval`` (5 s) after the handshake was written.
* **TRANSFER**: each frame must start at the local max offset (unless the log is empty), else the
  connection fails; a new epoch in a frame's header appends ``(epoch, epochStartOffset)`` to the epoch
  file; the bytes are appended; ``confirmOffset`` becomes ``min(frame's confirmOffset, local max)``; after
  a read the slave acks if its max grew, and reports every ``haSendHeartbeatInterval`` anyway. Nothing
  read for ``haHousekeepingInterval`` closes the stream.

Every truncation (a half-written tail, or the handshake's cut) also brings a confirm offset beyond the cut
down to it (``CommitLog.truncateDirtyFiles``).

Trace events: ``ha_close`` (slave, reason), ``ha_truncate`` (slave, offset, removed), ``epoch_append``.

Differences from Java 5.3.3: event-driven (a report is due exactly ``haSendHeartbeatInterval`` + 1 ms after
the last write); a master frame whose state differs from the slave's closes the stream (Java skips it,
returns false and the read loop closes it).
"""

from __future__ import annotations

from typing import Any, Protocol

from rocketlab.core import Connect, OutputBuilder, StreamClose, StreamWrite
from rocketlab.errors import RemoteProtocolError, StoreError
from rocketlab.ha.autoswitch_wire import (
    NEED_DATA,
    HAConnectionState,
    MasterFrameParser,
    MasterHandshake,
    MasterTransfer,
    SlaveAck,
    SlaveHandshake,
    encode_slave_ack,
    encode_slave_handshake,
)
from rocketlab.ha.config import HAConfig
from rocketlab.ha.epoch_file_cache import EpochEntry, EpochFileCache


class SlaveStore(Protocol):
    """What the slave's HA side needs from its store."""

    def get_max_phy_offset(self) -> int: ...

    def append_to_commit_log(self, start_offset: int, data: bytes) -> bool: ...

    def truncate_files(self, offset: int) -> bool: ...

    def truncate_invalid_msg(self) -> int: ...

    def set_confirm_offset(self, offset: int) -> None: ...

    def get_confirm_offset_directly(self) -> int: ...


class AutoSwitchHAClient:
    """Models AutoSwitchHAClient (see the module docstring)."""

    def __init__(self, config: HAConfig, store: SlaveStore, epoch_cache: EpochFileCache, broker_id: int,
                 node_id: str, master_ha_address: str | None = None, sync_from_last_file: bool = False,
                 async_learner: bool = False) -> None:
        self.config = config
        self.store = store
        self.epoch_cache = epoch_cache
        self.broker_id = broker_id
        self.node_id = node_id
        self.master_ha_address = master_ha_address
        self.sync_from_last_file, self.async_learner = sync_from_last_file, async_learner
        self.state = HAConnectionState.READY
        self.stream_id: str | None = None
        self.connects = 0
        self.parser = MasterFrameParser()
        self.current_reported_offset = 0
        self.current_received_epoch = -1
        self.last_read_ms = 0
        self.last_write_ms = 0
        self.next_connect_ms = 0
        self.close_reasons: list[str] = []

    def update_ha_master_address(self, address: str | None) -> None:
        self.master_ha_address = address

    def owns(self, stream_id: Any) -> bool:
        return stream_id is not None and stream_id == self.stream_id

    # ------------------------------------------------------------------ timers
    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        if self.state == HAConnectionState.SHUTDOWN:
            return
        if self.state == HAConnectionState.READY:
            if self.stream_id is None and self.master_ha_address and now_ms >= self.next_connect_ms:
                before = self.store.get_max_phy_offset()
                removed = self.store.truncate_invalid_msg()
                if 0 <= removed < before:
                    lower_confirm_offset(self.store, removed)
                if removed >= 0:
                    self.epoch_cache.truncate_suffix_by_offset(removed)
                self.connects += 1
                self.stream_id = f"ha-{self.node_id}-{self.connects}"
                out.act(Connect(self.master_ha_address, self.stream_id))
            return
        if now_ms - self.last_read_ms > self.config.ha_housekeeping_interval:
            self._close(f"housekeeping: nothing read from the master for {now_ms - self.last_read_ms} ms",
                        now_ms, out, wait=False)
            return
        if self.state == HAConnectionState.TRANSFER and now_ms - self.last_write_ms > self.config.ha_send_heartbeat_interval:
            self._write(encode_slave_ack(SlaveAck(self.current_reported_offset)), now_ms, out)

    def next_deadline_ms(self) -> int | None:
        if self.state == HAConnectionState.SHUTDOWN:
            return None
        if self.state == HAConnectionState.READY:
            return self.next_connect_ms if self.stream_id is None and self.master_ha_address else None
        times = [self.last_read_ms + self.config.ha_housekeeping_interval + 1]
        if self.state == HAConnectionState.TRANSFER:
            times.append(self.last_write_ms + self.config.ha_send_heartbeat_interval + 1)
        return min(times)

    def shutdown(self, out: OutputBuilder) -> None:
        if self.stream_id is not None:
            out.act(StreamClose(self.stream_id, "HA client shut down"))
        self.stream_id, self.state = None, HAConnectionState.SHUTDOWN

    def reopen(self, now_ms: int) -> None:
        """``reOpen`` (``shutdown`` + ``init``): back to READY with ``currentReceivedEpoch`` -1 and
        ``currentReportedOffset`` 0 (a new master to follow). A reconnect within one client keeps them."""
        self.stream_id, self.state, self.next_connect_ms = None, HAConnectionState.READY, now_ms
        self.current_received_epoch, self.current_reported_offset = -1, 0

    # ------------------------------------------------------------------ the stream
    def on_stream_open(self, now_ms: int, out: OutputBuilder) -> None:
        self.state = HAConnectionState.HANDSHAKE
        self.parser = MasterFrameParser()
        self.current_reported_offset = self.store.get_max_phy_offset()
        self.last_read_ms = now_ms
        self._write(encode_slave_handshake(SlaveHandshake(self.broker_id, self.sync_from_last_file,
                                                          self.async_learner)), now_ms, out)

    def on_stream_data(self, data: bytes, now_ms: int, out: OutputBuilder) -> int:
        """Handle the master's frames; returns how many log bytes were appended."""
        self.last_read_ms = now_ms
        self.parser.receive_data(data)
        appended = 0
        try:
            while (frame := self.parser.next_event()) is not NEED_DATA:
                if isinstance(frame, MasterHandshake):
                    if self.state != HAConnectionState.HANDSHAKE:
                        raise RemoteProtocolError(f"master sent a HANDSHAKE in state {self.state.name}")
                    self._do_truncate(frame, out)
                else:
                    if self.state != HAConnectionState.TRANSFER:
                        raise RemoteProtocolError(f"master sent a TRANSFER in state {self.state.name}")
                    appended += self._append(frame, out)
        except (RemoteProtocolError, StoreError) as e:
            self._close(str(e), now_ms, out, wait=True)
            return appended
        if self.state == HAConnectionState.TRANSFER:
            self._report_if_grown(now_ms, out)
        return appended

    def _do_truncate(self, frame: MasterHandshake, out: OutputBuilder) -> None:
        if self.epoch_cache.get_entry_size() == 0:
            self.current_reported_offset = 0
        else:
            master = EpochFileCache()
            master.init_cache_from_entries([EpochEntry(e, s) for e, s in frame.epoch_entries])
            master.set_last_epoch_entry_end_offset(frame.max_phy_offset)
            local = EpochFileCache()
            local.init_cache_from_entries(self.epoch_cache.get_all_entries())
            local.set_last_epoch_entry_end_offset(self.store.get_max_phy_offset())
            point = local.find_consistent_point(master)
            if point < 0:
                raise RemoteProtocolError("no consistent point with the master's epochs: "
                                          f"local {[(e.epoch, e.start_offset) for e in local.get_all_entries()]}, "
                                          f"master {list(frame.epoch_entries)}")
            before = self.store.get_max_phy_offset()
            if not self.store.truncate_files(point):
                raise RemoteProtocolError(f"cannot truncate the log to {point}")
            if point < before:
                lower_confirm_offset(self.store, point)
            self.epoch_cache.truncate_suffix_by_offset(point)
            out.trace("ha_truncate", slave=self.node_id, offset=point, removed=max(0, before - point))
            self.current_reported_offset = point
        self.state = HAConnectionState.TRANSFER

    def _append(self, frame: MasterTransfer, out: OutputBuilder) -> int:
        local_max = self.store.get_max_phy_offset()
        if local_max != 0 and local_max != frame.offset:
            raise RemoteProtocolError(f"master pushed offset {frame.offset} not equal the max phy offset in "
                                      f"slave {local_max}")
        if frame.epoch != self.current_received_epoch:
            self.current_received_epoch = frame.epoch
            if self.epoch_cache.append_entry(EpochEntry(frame.epoch, frame.epoch_start_offset)):
                out.trace("epoch_append", node=self.node_id, epoch=frame.epoch, start=frame.epoch_start_offset)
        if frame.body and not self.store.append_to_commit_log(frame.offset, frame.body):
            raise StoreError(f"append of {len(frame.body)} bytes at {frame.offset} failed")
        self.store.set_confirm_offset(min(frame.confirm_offset, self.store.get_max_phy_offset()))
        return len(frame.body)

    def _report_if_grown(self, now_ms: int, out: OutputBuilder) -> None:
        top = self.store.get_max_phy_offset()
        if top > self.current_reported_offset:
            self.current_reported_offset = top
            self._write(encode_slave_ack(SlaveAck(top)), now_ms, out)

    def on_stream_closed(self, reason: str, now_ms: int) -> None:
        self.close_reasons.append(reason)
        self._reset(now_ms, wait=True)

    def _write(self, data: bytes, now_ms: int, out: OutputBuilder) -> None:
        out.act(StreamWrite(self.stream_id, data))
        self.last_write_ms = now_ms

    def _close(self, reason: str, now_ms: int, out: OutputBuilder, *, wait: bool) -> None:
        out.act(StreamClose(self.stream_id, reason))
        out.trace("ha_close", slave=self.node_id, reason=reason)
        self.close_reasons.append(reason)
        self._reset(now_ms, wait=wait)

    def _reset(self, now_ms: int, *, wait: bool) -> None:
        self.stream_id = None
        self.state = HAConnectionState.READY
        self.next_connect_ms = now_ms + self.config.ha_reconnect_interval if wait else now_ms


def lower_confirm_offset(store: SlaveStore, offset: int) -> None:
    """``CommitLog.truncateDirtyFiles``: a confirm offset beyond the truncation point comes down to it."""
    if store.get_confirm_offset_directly() > offset:
        store.set_confirm_offset(offset)
