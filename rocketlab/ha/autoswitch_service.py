"""AutoSwitchHAService and AutoSwitchHAConnection, RocketMQ 5.3.3 (controller mode), sans-IO: the master's
side of replication with epochs, the local SyncStateSet and the confirm offset.

Theory of operation
-------------------
A master accepts one stream per slave (:class:`AutoSwitchHAConnection`). The slave opens with a HANDSHAKE
(its broker id); the master answers once with its epoch entries, max offset and last epoch; the slave's
first TRANSFER frame (an ack) is its request offset, and the master then ships log batches of at most
``haTransferBatchSize`` that **never cross an epoch boundary**, each labelled with its epoch, the epoch's
start and the master's confirm offset; an empty TRANSFER frame is the heartbeat.

* **Expand**: an ack at or beyond what the master had when it last shipped (``lastMasterMaxOffset``)
  records the slave's caught-up time; if the slave is not in the local SyncStateSet and its ack is at
  least the confirm offset and the start of the master's current epoch, the master proposes the set with
  it (``markSynchronizingSyncStateSet``) and reports it (the broker asks the controller:
  :meth:`drain_proposals`).
* **Shrink** (:meth:`maybe_shrink_sync_state_set`, run by the broker every 5 s): members not caught up
  for ``haMaxTimeSlaveNotCatchup`` and members without a connection leave; a closed connection's slave
  leaves at once.
* **The synchronizing union (#5663's fix)**: while a proposal is out, :meth:`get_sync_state_set` is the
  local set *and* the proposal, and :meth:`in_sync_replicas_nums` the larger of the two; ``set_sync_state_set``
  (the controller's answer) ends it.
* **confirmOffset** (:meth:`compute_confirm_offset`): the least ack of the SyncStateSet's connected
  members (acks > 0), at most the max offset; if a member (not the master) has no connection, the old
  value stays (#6662's fix). Recomputed on every ack of a member and when the set changes.
* **Waiting puts** (``GroupTransferService`` in controller mode): ``allAckInSyncStateSet`` waits for every
  member of :meth:`get_sync_state_set` (the master counts; a set of one is done at once); otherwise
  ``needAckNums`` acks from any connection, the master included; ``needAckNums <= 1`` waits for
  ``push2SlaveMaxOffset``. Unmet after ``slaveTimeout`` -> FLUSH_SLAVE_TIMEOUT.

Trace events: ``ha_report`` (slave, offset), ``ha_transfer`` (slave, offset, size, epoch), ``ha_close``,
``ha_handshake`` (slave id, flags), ``sync_state_set_proposed`` (set, reason).

Differences from Java 5.3.3: no threads; write loops run on acks, puts and deadlines; the master reads a
handshake only when all 16 bytes are there (see :mod:`rocketlab.ha.autoswitch_wire`); no flow monitor
(``maxHaTransferByteInSecond``); when no epoch entry covers the slave's request offset the write loop
starts over later (Java keeps the offset and goes on with a stale header buffer); a write loop pauses
with :data:`~rocketlab.ha.ha_connection.MAX_UNACKED_TRANSFER_BYTES` sent and not acknowledged (Java's
pauses on a full socket buffer) and goes on with the ack that opens it.
Faithful to Java's order at an epoch boundary: the batch that ends at the boundary already carries the
next epoch in its header (Java moves to the next epoch before building the header); its start offset is
the boundary, so the slave's epoch file ends up the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rocketlab.core import OutputBuilder, StreamClose, StreamWrite
from rocketlab.errors import RemoteProtocolError
from rocketlab.ha.autoswitch_wire import (
    NEED_DATA,
    HAConnectionState,
    MasterHandshake,
    MasterTransfer,
    SlaveAck,
    SlaveFrameParser,
    SlaveHandshake,
    encode_master_handshake,
    encode_master_transfer,
)
from rocketlab.ha.config import HAConfig
from rocketlab.ha.epoch_file_cache import EpochFileCache
from rocketlab.ha.ha_connection import transfer_window_open

ALL_ACK_IN_SYNC_STATE_SET = -1
"""``MixAll.ALL_ACK_IN_SYNC_STATE_SET``: the needAckNums of a put under ``allAckInSyncStateSet``."""
HA_MAX_TIME_SLAVE_NOT_CATCHUP = 15_000


class StoreView(Protocol):
    """What the master's HA side reads and sets on its store."""

    def get_max_phy_offset(self) -> int: ...

    def get_min_phy_offset(self) -> int: ...

    def get_commit_log_data(self, offset: int, max_size: int | None = None) -> bytes | None: ...

    def get_confirm_offset(self) -> int: ...

    def get_confirm_offset_directly(self) -> int: ...

    def set_confirm_offset(self, offset: int) -> None: ...


class AutoSwitchHAConnection:
    """Models AutoSwitchHAConnection: one slave's stream, its read and write loops."""

    def __init__(self, stream_id: Any, client_addr: str, now_ms: int) -> None:
        self.stream_id = stream_id
        self.client_addr = client_addr
        self.state = HAConnectionState.TRANSFER  # Java's initial currentState; the first frame sets it
        self.parser = SlaveFrameParser()
        self.slave_id: int | None = None
        self.sync_from_last_file = False
        self.async_learner = False
        self.handshake_to_send = False  # isSlaveSendHandshake
        self.slave_request_offset = -1
        self.slave_ack_offset = -1
        self.next_transfer_from_where = -1
        self.transfer_start = -1
        self.window_blocked = False  # see rocketlab.ha.ha_connection.MAX_UNACKED_TRANSFER_BYTES
        self.current_transfer_epoch = -1
        self.current_transfer_epoch_end_offset = -1
        self.last_master_max_offset = -1
        self.last_transfer_time_ms = 0
        self.last_read_ms = now_ms
        self.last_write_ms = 0

    def change_transfer_epoch_to_next(self, entry: Any, epoch_cache: EpochFileCache) -> None:
        self.current_transfer_epoch = entry.epoch
        self.current_transfer_epoch_end_offset = -1 if entry.epoch == epoch_cache.last_epoch() else entry.end_offset


@dataclass
class _WaitingPut:
    next_offset: int
    deadline_ms: int
    token: Any
    ack_nums: int


class AutoSwitchHAService:
    """Models AutoSwitchHAService (the master part; :class:`AutoSwitchHAClient` is the slave's)."""

    def __init__(self, config: HAConfig, store: StoreView, epoch_cache: EpochFileCache, mapped_file_size: int,
                 local_broker_id: int | None = None, ha_max_time_slave_not_catchup: int = HA_MAX_TIME_SLAVE_NOT_CATCHUP,
                 synchronizing_union: bool = True) -> None:
        self.config = config
        self.store = store
        self.epoch_cache = epoch_cache
        self.mapped_file_size = mapped_file_size
        self.local_broker_id = local_broker_id
        self.ha_max_time_slave_not_catchup = ha_max_time_slave_not_catchup
        self.synchronizing_union = synchronizing_union
        """False: the behaviour before PR #5798 (RocketMQ 5.1.1), the fix of #5663 - a proposal does not
        count until the controller's answer sets it (so a lost answer leaves the master acking alone)."""
        self.connections: dict[Any, AutoSwitchHAConnection] = {}
        self.connection_caught_up_time_table: dict[int, int] = {}
        self.sync_state_set: set[int] = set()
        self.remote_sync_state_set: set[int] = set()
        self.is_synchronizing_sync_state_set = False
        self.push2_slave_max_offset = 0
        self.waiting: list[_WaitingPut] = []
        self.proposals: list[set[int]] = []  # notifySyncStateSetChanged, for the broker's ReplicasManager

    # ------------------------------------------------------------------ the SyncStateSet
    def get_local_sync_state_set(self) -> set[int]:
        return set(self.sync_state_set)

    def get_sync_state_set(self) -> set[int]:
        """The local set, or its union with the proposal while one is out (#5663)."""
        if self.is_synchronizing_sync_state_set and self.synchronizing_union:
            return self.sync_state_set | self.remote_sync_state_set
        return set(self.sync_state_set)

    def in_sync_replicas_nums(self) -> int:
        if self.is_synchronizing_sync_state_set and self.synchronizing_union:
            return max(len(self.sync_state_set), len(self.remote_sync_state_set))
        return len(self.sync_state_set)

    def set_sync_state_set(self, members: set[int] | frozenset[int]) -> None:
        """``setSyncStateSet``: the set the controller committed; ends a proposal; recomputes confirm."""
        self.is_synchronizing_sync_state_set = False
        self.sync_state_set = set(members)
        self.store.set_confirm_offset(self.compute_confirm_offset())

    def _mark_synchronizing(self, members: set[int], reason: str, out: OutputBuilder | None) -> None:
        self.is_synchronizing_sync_state_set = True
        self.remote_sync_state_set = set(members)
        self.proposals.append(set(members))
        if out is not None:
            out.trace("sync_state_set_proposed", members=sorted(members), reason=reason)

    def drain_proposals(self) -> list[set[int]]:
        """The sets proposed since the last call (Java: the listeners of notifySyncStateSetChanged)."""
        found, self.proposals = self.proposals, []
        return found

    def maybe_expand_in_sync_state_set(self, slave_id: int, slave_max_offset: int, out: OutputBuilder | None) -> None:
        current = self.get_local_sync_state_set()
        if slave_id in current:
            return
        last = self.epoch_cache.last_entry()
        if slave_max_offset >= self.store.get_confirm_offset() and last is not None \
                and slave_max_offset >= last.start_offset:
            current.add(slave_id)
            self._mark_synchronizing(current, f"slave {slave_id} caught up at {slave_max_offset}", out)

    def maybe_shrink_sync_state_set(self, now_ms: int, out: OutputBuilder | None = None) -> set[int]:
        """Members behind for ``haMaxTimeSlaveNotCatchup`` or without a connection leave (proposed)."""
        new = self.get_local_sync_state_set()
        changed = False
        for slave_id, caught_up in self.connection_caught_up_time_table.items():
            if slave_id in new and now_ms - caught_up > self.ha_max_time_slave_not_catchup:
                new.discard(slave_id)
                changed = True
        for member in sorted(new):
            if member != self.local_broker_id and member not in self.connection_caught_up_time_table:
                new.discard(member)
                changed = True
        if changed:
            self._mark_synchronizing(new, "shrink", out)
        return new

    def update_connection_last_caught_up_time(self, slave_id: int, caught_up_ms: int) -> None:
        self.connection_caught_up_time_table[slave_id] = max(self.connection_caught_up_time_table.get(slave_id, 0),
                                                             caught_up_ms)

    def compute_confirm_offset(self) -> int:
        members = self.get_sync_state_set()
        connected = {c.slave_id for c in self.connections.values()}
        for member in sorted(members):
            if member not in connected and self.local_broker_id is not None and member != self.local_broker_id:
                return self.store.get_confirm_offset_directly()  # #6662: a member is away, keep the old value
        confirm = self.store.get_max_phy_offset()
        for c in self.connections.values():
            if c.slave_id in members and c.slave_ack_offset > 0:
                confirm = min(confirm, c.slave_ack_offset)
        return confirm

    # ------------------------------------------------------------------ connections
    def accept(self, stream_id: Any, client_addr: str, now_ms: int) -> None:
        self.connections[stream_id] = AutoSwitchHAConnection(stream_id, client_addr, now_ms)

    def destroy_connections(self, out: OutputBuilder, reason: str) -> None:
        """``destroyConnections``: every slave's stream closes. The caught-up times stay (Java never clears
        ``connectionCaughtUpTimeTable``: a slave of an earlier mastership still counts as connected to
        :meth:`maybe_shrink_sync_state_set` until its time is ``haMaxTimeSlaveNotCatchup`` old)."""
        for conn in list(self.connections.values()):
            self.connections.pop(conn.stream_id, None)
            out.act(StreamClose(conn.stream_id, reason))

    def on_stream_data(self, stream_id: Any, data: bytes, now_ms: int, out: OutputBuilder) -> list[tuple[Any, bool]]:
        """The slave's frames; returns the waiting puts that completed ``(token, ok)``."""
        conn = self.connections.get(stream_id)
        if conn is None:
            return []
        conn.last_read_ms = now_ms
        conn.parser.receive_data(data)
        try:
            while (frame := conn.parser.next_event()) is not NEED_DATA:
                if isinstance(frame, SlaveHandshake):
                    conn.slave_id, conn.sync_from_last_file, conn.async_learner = (
                        frame.slave_broker_id, frame.sync_from_last_file, frame.async_learner)
                    conn.handshake_to_send = True
                    conn.state = HAConnectionState.HANDSHAKE
                    out.trace("ha_handshake", slave=conn.client_addr, slave_id=conn.slave_id)
                    self._pump(conn, now_ms, out)
                else:
                    self._on_ack(conn, frame, now_ms, out)
        except RemoteProtocolError as e:
            self._close(conn, str(e), out)
        return self._complete(now_ms)

    def _on_ack(self, conn: AutoSwitchHAConnection, frame: SlaveAck, now_ms: int, out: OutputBuilder) -> None:
        conn.state = HAConnectionState.TRANSFER
        conn.slave_ack_offset = frame.max_offset
        first = conn.slave_request_offset < 0
        if first:
            conn.slave_request_offset = frame.max_offset
        out.trace("ha_report", slave=conn.client_addr, offset=frame.max_offset)
        if conn.slave_id is not None and not conn.async_learner and frame.max_offset >= conn.last_master_max_offset:
            caught_up = now_ms if self.store.get_max_phy_offset() == frame.max_offset else conn.last_transfer_time_ms
            self.update_connection_last_caught_up_time(conn.slave_id, caught_up)
            self.maybe_expand_in_sync_state_set(conn.slave_id, frame.max_offset, out)
        if conn.slave_id in self.sync_state_set:  # updateConfirmOffsetWhenSlaveAck
            self.store.set_confirm_offset(self.compute_confirm_offset())
        if frame.max_offset > self.push2_slave_max_offset:
            self.push2_slave_max_offset = frame.max_offset
        if first or (conn.window_blocked and transfer_window_open(
                conn.next_transfer_from_where, conn.slave_ack_offset, conn.transfer_start)):
            self._pump(conn, now_ms, out)

    def on_stream_closed(self, stream_id: Any, out: OutputBuilder) -> None:
        conn = self.connections.pop(stream_id, None)
        if conn is not None:
            self._remove_connection(conn, out)

    def _close(self, conn: AutoSwitchHAConnection, reason: str, out: OutputBuilder) -> None:
        self.connections.pop(conn.stream_id, None)
        out.act(StreamClose(conn.stream_id, reason))
        out.trace("ha_close", slave=conn.client_addr, reason=reason)
        self._remove_connection(conn, out)

    def _remove_connection(self, conn: AutoSwitchHAConnection, out: OutputBuilder) -> None:
        """``removeConnection``: a member that lost its connection leaves the set at once (proposed)."""
        members = self.get_local_sync_state_set()
        if conn.slave_id in members:
            members.discard(conn.slave_id)
            self._mark_synchronizing(members, f"slave {conn.slave_id} disconnected", out)

    # ------------------------------------------------------------------ write loops
    def on_tick(self, now_ms: int, out: OutputBuilder) -> list[tuple[Any, bool]]:
        for conn in list(self.connections.values()):
            if now_ms - conn.last_read_ms > self.config.ha_housekeeping_interval:
                self._close(conn, f"housekeeping: nothing read from {conn.client_addr} for "
                                  f"{now_ms - conn.last_read_ms} ms", out)
            else:
                self._pump(conn, now_ms, out)
        return self._complete(now_ms)

    def wakeup_all(self, now_ms: int, out: OutputBuilder) -> None:
        """A put arrived: every write loop runs now."""
        for conn in list(self.connections.values()):
            self._pump(conn, now_ms, out)

    def next_deadline_ms(self) -> int | None:
        times = [d.deadline_ms for d in self.waiting]
        for conn in self.connections.values():
            times.append(conn.last_read_ms + self.config.ha_housekeeping_interval + 1)
            if conn.state == HAConnectionState.TRANSFER and conn.slave_request_offset >= 0:
                times.append(conn.last_write_ms + self.config.ha_send_heartbeat_interval + 1)
        return min(times, default=None)

    def _pump(self, conn: AutoSwitchHAConnection, now_ms: int, out: OutputBuilder) -> None:
        if conn.state == HAConnectionState.HANDSHAKE:
            if conn.handshake_to_send:
                entries = tuple((e.epoch, e.start_offset) for e in self.epoch_cache.get_all_entries())
                out.act(StreamWrite(conn.stream_id, encode_master_handshake(MasterHandshake(
                    self.store.get_max_phy_offset(), self.epoch_cache.last_epoch(), entries))))
                conn.handshake_to_send = False
                conn.last_write_ms = now_ms
            return
        if conn.slave_request_offset < 0:
            return
        if conn.next_transfer_from_where < 0:
            if conn.slave_request_offset == 0:
                if conn.sync_from_last_file:
                    top = self.store.get_max_phy_offset()
                    conn.next_transfer_from_where = max(0, top - top % self.mapped_file_size)
                else:
                    conn.next_transfer_from_where = self.store.get_min_phy_offset()
            else:
                conn.next_transfer_from_where = conn.slave_request_offset
            entry = self.epoch_cache.find_epoch_entry_by_offset(conn.next_transfer_from_where) \
                if conn.next_transfer_from_where >= 0 else None
            if entry is None:  # nothing to send yet (an empty log, or no epoch covers it): try again later
                conn.next_transfer_from_where = -1
                self._heartbeat_if_needed(conn, now_ms, out)
                return
            conn.change_transfer_epoch_to_next(entry, self.epoch_cache)
            conn.transfer_start = conn.next_transfer_from_where
        self._heartbeat_if_needed(conn, now_ms, out)
        conn.window_blocked = False
        while True:
            if not transfer_window_open(conn.next_transfer_from_where, conn.slave_ack_offset, conn.transfer_start):
                conn.window_blocked = True
                return
            data = self.store.get_commit_log_data(conn.next_transfer_from_where, self.config.ha_transfer_batch_size)
            if not data:
                if conn.slave_id is not None:  # nothing to send: the slave has everything
                    self.update_connection_last_caught_up_time(conn.slave_id, now_ms)
                return
            size = len(data)
            end = conn.current_transfer_epoch_end_offset
            if end != -1 and conn.next_transfer_from_where + size > end:
                following = self.epoch_cache.next_entry(conn.current_transfer_epoch)
                if following is None:
                    return
                size = end - conn.next_transfer_from_where
                conn.change_transfer_epoch_to_next(following, self.epoch_cache)
            offset = conn.next_transfer_from_where
            conn.next_transfer_from_where += size
            conn.last_master_max_offset, conn.last_transfer_time_ms = self.store.get_max_phy_offset(), now_ms
            self._write_transfer(conn, offset, data[:size], now_ms, out)

    def _heartbeat_if_needed(self, conn: AutoSwitchHAConnection, now_ms: int, out: OutputBuilder) -> None:
        if now_ms - conn.last_write_ms > self.config.ha_send_heartbeat_interval:
            self._write_transfer(conn, conn.next_transfer_from_where, b"", now_ms, out)

    def _write_transfer(self, conn: AutoSwitchHAConnection, offset: int, body: bytes, now_ms: int,
                        out: OutputBuilder) -> None:
        entry = self.epoch_cache.get_entry(conn.current_transfer_epoch)
        if entry is None:
            if body:
                return  # "Failed to find epochEntry with epoch N when build msg header" (#9689)
            entry = self.epoch_cache.first_entry()
        epoch, start = (entry.epoch, entry.start_offset) if entry is not None else (-1, 0)
        out.act(StreamWrite(conn.stream_id, encode_master_transfer(MasterTransfer(
            offset, epoch, start, self.store.get_confirm_offset(), body))))
        conn.last_write_ms = now_ms
        if body:
            out.trace("ha_transfer", slave=conn.client_addr, offset=offset, size=len(body), epoch=epoch)

    # ------------------------------------------------------------------ waiting puts
    def submit_replica_request(self, next_offset: int, token: Any, now_ms: int, ack_nums: int) -> None:
        self.waiting.append(_WaitingPut(next_offset, now_ms + self.config.slave_timeout, token, ack_nums))

    def _transfer_ok(self, put: _WaitingPut) -> bool:
        if put.ack_nums != ALL_ACK_IN_SYNC_STATE_SET and put.ack_nums <= 1:
            return self.push2_slave_max_offset >= put.next_offset
        if put.ack_nums == ALL_ACK_IN_SYNC_STATE_SET:
            members = self.get_sync_state_set()
            if len(members) <= 1:
                return True
            acks = 1 + sum(1 for c in self.connections.values()
                           if c.slave_id in members and c.slave_ack_offset >= put.next_offset)
            return acks >= len(members)
        acks = 1 + sum(1 for c in self.connections.values() if c.slave_ack_offset >= put.next_offset)
        return acks >= put.ack_nums

    def complete_waiting(self, now_ms: int) -> list[tuple[Any, bool]]:
        """The waiting puts that are done now (acked, or timed out) as ``(token, ok)``."""
        return self._complete(now_ms)

    def _complete(self, now_ms: int) -> list[tuple[Any, bool]]:
        done, still = [], []
        for put in self.waiting:
            if self._transfer_ok(put):
                done.append((put.token, True))
            elif now_ms >= put.deadline_ms:
                done.append((put.token, False))
            else:
                still.append(put)
        self.waiting = still
        return done
