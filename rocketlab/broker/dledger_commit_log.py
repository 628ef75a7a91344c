"""DLedgerCommitLog: RocketMQ's CommitLog on a DLedger log (RocketMQ 4.9.5 - 5.3, DLedger 0.3.1.2).

Theory of operation
-------------------
Every message becomes the *body* of one DLedger entry: the broker encodes the normal CommitLog record
(TOTALSIZE, MAGICCODE, ... PROPERTIES) and appends those bytes verbatim through
:meth:`DLedgerServer.append`; a batch is one entry per inner record, appended as a batch. So the data
files hold ``[48-byte DLedger header][RocketMQ record]`` back to back, and the *physical offset* of a
message is ``entry.pos + 48`` (where its record starts)::

    entry.pos                entry.pos + 48                                entry.pos + entry.size
    | magic size index term pos ... bodySize | TOTALSIZE MAGICCODE ... PROPERTIES |
                                             ^ PHYSICALOFFSET (body offset 28) = entry.pos + 48

* **Put**: under the put lock the broker takes the queue offset from ``topic_queue_table``, stamps
  QUEUEOFFSET and STORETIMESTAMP into the record and appends it. An *append hook* registered on the
  DLedger store writes ``entry.pos + 48`` into PHYSICALOFFSET inside the append, before the bytes are
  written and replicated, so every replica holds identical bytes. A refused append (pos -1: not
  leader, pending full, transferring, ...) answers OS_PAGECACHE_BUSY at once; otherwise the queue
  offset advances and the put completes when DLedger answers: :data:`CODE_TO_STATUS` per
  ``rocketmq_version`` (4.9.5: a quorum-ack timeout is OS_PAGECACHE_BUSY; 5.3.3:
  IN_SYNC_REPLICAS_NOT_ENOUGH).
* **Reads**: only committed bytes exist for RocketMQ. :meth:`get_max_offset` / :meth:`get_confirm_offset`
  are DLedger's ``committedPos``; :meth:`get_data` stops there, so the reput (consume queues, index)
  and consumers see committed entries only, on the leader and on followers alike. Because followers
  place every entry at the leader's ``pos``, consume queues are identical on every replica.
* **Two formats**: :func:`~rocketlab.broker.dledger_commit_log_check.check_message_and_return_size`
  tells an old CommitLog record from a DLedger entry by the record's second int (an old magic code)
  and skips the 48-byte header of an entry, reporting ``buffer_size = msg_size + 48``; the DLedger blank (first int -1) rolls to the next file.
* **Smooth upgrade** (:meth:`DLedgerCommitLog.recover`): the old commit log is closed and the DLedger
  positions continue its offset space (see :mod:`rocketlab.broker.dledger_commit_log_recovery`).
* **Retention** (:meth:`DLedgerCommitLog.delete_expired_file`, called by the store's clean service):
  while old files remain, DLedger's own CleanSpaceService is held back (ten years' reserve, no force
  clean) and the old files expire as a classic log's do, the last one included; once they are gone the
  call answers Integer.MAX_VALUE and DLedger deletes its files by the broker's ``fileReservedTime + 1``
  hours, ``deleteWhen`` and ``cleanFileForciblyEnable``, revising its ledger begin index
  (:mod:`rocketlab.dledger.store.clean_space_service`). The min offset is the old files' while they exist,
  else the first DLedger byte; the consume queues and index follow it.

Java file: ``store/dledger/DLedgerCommitLog.java`` (RocketMQ 4.9.5). Simplified: no transactional/delay
specifics beyond the batch check, no ``resetOffset``; retention rounds run when called, with a
wall-clock time (file ages are modification times, as in Java); abnormal recovery is the normal one,
as in 4.9.x. Kit additions: the entry header is validated (magic, size, pos) before its body is parsed,
DLedger's NOOP entries (``raft`` profile) are skipped by the reput, and a marker file ties a DLedger
data directory to its group (see :func:`~rocketlab.broker.dledger_commit_log_recovery.check_group_marker`).
The put-status mapping is in :mod:`rocketlab.broker.dledger_commit_log_status`.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence
from typing import Any

from rocketlab import plugs
from rocketlab.broker.dledger_commit_log_recovery import DLedgerCommitLogRecovery
from rocketlab.broker.dledger_commit_log_status import CODE_TO_STATUS, ROCKETMQ_VERSIONS, put_status_of
from rocketlab.core import Output, OutputBuilder
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.entry import BODY_OFFSET, MAGIC_1, DLedgerEntry
from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.dledger.server import DLedgerServer
from rocketlab.dledger.store.mmap_file_list import MmapFileList
from rocketlab.dledger.store.mmap_file_store import DLedgerMmapFileStore
from rocketlab.errors import CodecError, ConfigError, StoreError
from rocketlab.i18n import _
from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import MessageStoreConfig
from rocketlab.store.message import PROPERTY_DELAY_TIME_LEVEL, Message, MessageSysFlag
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.message_codec import create_message_id
from rocketlab.store.message_ext_encoder import MessageRejected
from rocketlab.store.record_layout import PHY_POS_POSITION, stamp_record
from rocketlab.store.status import (
    AppendMessageResult,
    AppendMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)

PHY_OFFSET_PLUG = plugs.point("lab05.phy_offset")
WHICH_LOG_PLUG = plugs.point("lab05.which_log")
"""The override points of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

log = logging.getLogger(__name__)
Code = DLedgerResponseCode
_I64 = struct.Struct(">q")
_TRAN_MASK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
INTEGER_MAX_VALUE = 2**31 - 1

PutDone = Callable[[PutMessageResult, OutputBuilder], None]
_NO_LIMIT = 2**63 - 1  # getMessage does not cut at committedPos (Java reads the DLedger file as is)


def phy_offset(entry_pos: int) -> int:
    """The physical offset of the message held by the DLedger entry at ``entry_pos``: where its record
    starts, after the entry's 48-byte header (``entry.pos + DLedgerEntry.BODY_OFFSET``, the value the
    AppendHook writes into PHYSICALOFFSET and ``asyncPutMessage`` answers as wroteOffset). Conversely
    the entry sits at ``phy_offset - 48``."""
    return entry_pos + BODY_OFFSET


def which_log(offset: int, divided_commitlog_offset: int, committed_pos: int) -> str | None:
    """Which log serves a read at physical ``offset`` (``DLedgerCommitLog.getData``): below
    ``dividedCommitlogOffset`` the old CommitLog files (``"commitlog"``; -1 when there are none); from
    there DLedger's data files (``"dledger"``), but nothing (None) at or beyond DLedger's ``committedPos``:
    uncommitted bytes are never served."""
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"


def broker_id_of(self_id: str) -> int:
    """``DLedgerCommitLog.id``: the digits of ``dLegerSelfId`` plus one (``n0`` -> 1), the broker id
    a member uses while it is a slave. The id must be one letter followed by digits, as RocketMQ
    requires (``Integer.valueOf(selfId.substring(1)) + 1``)."""
    if len(self_id) < 2 or self_id[0].isdigit() or not self_id[1:].isdigit() or not self_id[1:].isascii():
        raise ConfigError(_("dLegerSelfId={self_id!r} must be one letter followed by digits (n0, n1, ...): RocketMQ "
                            "derives the slave brokerId from the digits (n0 -> 1)").format(self_id=self_id))
    return int(self_id[1:]) + 1


# ---------------------------------------------------------------------- the commit log
class DLedgerCommitLog(DLedgerCommitLogRecovery, CommitLog):
    """Models ``DLedgerCommitLog`` (RocketMQ 4.9.5, asyncPutMessage as 5.x): see the module docstring.

    It owns the :class:`DLedgerServer` (``dledger_server``), which the hosting broker core drives
    (ticks, requests, replies). ``mapped_file_queue`` is the *old* commit log (empty unless upgraded);
    ``dledger_store.data_file_list`` holds the DLedger entries. ``id`` is the broker id while slave.
    Simplified: see the module docstring.
    """

    def __init__(self, config: MessageStoreConfig, dledger_config: DLedgerConfig, rng: Any, *,
                 clock: Callable[[], int] | None = None, checkpoint: Any = None) -> None:
        super().__init__(config, clock=clock, checkpoint=checkpoint, threads=False)
        rocketmq_version = config.rocketmq_version  # the put-status mapping; the encoder takes the record bytes
        if rocketmq_version not in CODE_TO_STATUS:
            raise ConfigError(_("{key}={value!r} is not one of {choices}").format(
                key="rocketmq_version", value=rocketmq_version, choices=", ".join(ROCKETMQ_VERSIONS)))
        self.rocketmq_version = rocketmq_version
        self.dledger_config = dledger_config.replace(
            mapped_file_size_for_entry_data=config.mapped_file_size_commit_log,
            enable_disk_force_clean=config.clean_file_forcibly_enable, delete_when=config.delete_when,
            file_reserved_hours=config.file_reserved_time + 1,
            disk_space_ratio_to_check_expired=config.disk_max_used_space_ratio / 100)
        self.rng = rng
        self.id = broker_id_of(dledger_config.self_id)
        self.store_dir = dledger_config.default_path
        self.dledger_server: DLedgerServer | None = None
        self.divided_commitlog_offset = -1
        self.is_in_recovering_old_commitlog = False
        self.upgraded_from_old = False

    # ------------------------------------------------------------------ DLedger side
    @property
    def dledger_store(self) -> DLedgerMmapFileStore:
        server = self.dledger_server
        if server is None:
            raise StoreError("the DLedger server is not started (recover() first)")
        return server.store  # type: ignore[return-value]

    @property
    def data_file_list(self) -> MmapFileList:
        return self.dledger_store.data_file_list

    def _start_dledger(self) -> None:
        self.dledger_server = DLedgerServer(self.dledger_config, self.store_dir, self.rng)
        self.dledger_store.add_append_hook(self.append_hook)

    # ------------------------------------------------------------------ retention
    def refresh_config(self) -> None:
        """``refreshConfig``: DLedger deletes by the broker's rules again (``fileReservedTime + 1`` hours,
        ``cleanFileForciblyEnable``, ``deleteWhen``)."""
        service = self.dledger_store.clean_space_service
        service.enable_disk_force_clean = self.config.clean_file_forcibly_enable
        service.delete_when = self.config.delete_when
        service.file_reserved_hours = self.config.file_reserved_time + 1

    def disable_delete_dledger(self) -> None:
        """``disableDeleteDledger``: while old commit-log files remain, DLedger keeps everything (ten
        years' reserve, no force clean), so the offset space never gets a hole below the divide."""
        service = self.dledger_store.clean_space_service
        service.enable_disk_force_clean = False
        service.file_reserved_hours = 24 * 365 * 10

    def delete_expired_file(self, expired_time_ms: int, now_ms: int, clean_immediately: bool = False) -> int:
        """``DLedgerCommitLog.deleteExpiredFile``, called by the store's CleanCommitLogService.

        Without old files: :meth:`refresh_config` and answer ``2**31 - 1`` (Integer.MAX_VALUE, "to
        prevent too much log"); DLedger's own CleanSpaceService deletes DLedger files. With old files:
        :meth:`disable_delete_dledger`, delete expired old files as the classic log does (keeping the
        last), and when none went and exactly one is left, delete that last one too once it has
        expired; answer 1 then (expired or not, as Java)."""
        queue = self.mapped_file_queue
        if not queue.mapped_files:
            self.refresh_config()
            return INTEGER_MAX_VALUE
        self.disable_delete_dledger()
        count = super().delete_expired_file(expired_time_ms, now_ms, clean_immediately)
        if count > 0 or len(queue.mapped_files) != 1:
            return count
        last = queue.mapped_files[-1]
        if now_ms >= last.get_last_modified_timestamp() + expired_time_ms or clean_immediately:
            log.info("deleting the last old commit log file %s", last.file_name)
            queue.delete_mapped_files([last])
        return 1

    def clean_space(self, now_ms: int) -> Any:
        """One round of DLedger's CleanSpaceService (see :mod:`rocketlab.dledger.store.clean_space_service`)."""
        return self.dledger_store.clean_space(now_ms)

    @staticmethod
    def append_hook(entry: DLedgerEntry, buf: bytearray, body_offset: int) -> None:
        """The AppendHook: write ``entry.pos + 48`` (the message's physical offset) into PHYSICALOFFSET
        of the record in the entry body, inside the append, before the bytes are written and shipped."""
        if entry.magic == MAGIC_1 and len(buf) >= body_offset + PHY_POS_POSITION + 8:
            _I64.pack_into(buf, body_offset + PHY_POS_POSITION, plugs.resolve(PHY_OFFSET_PLUG, phy_offset)(entry.pos))

    # ------------------------------------------------------------------ reads
    def get_max_offset(self) -> int:
        """``getMaxOffset``: DLedger's committedPos, else the first DLedger byte, else 0."""
        committed = self.dledger_store.committed_pos
        if committed > 0:
            return committed
        min_offset = self.data_file_list.min_offset
        return min_offset if min_offset > 0 else 0

    def get_confirm_offset(self) -> int:
        """How far the reput may read: committed bytes only."""
        return self.get_max_offset()

    def get_min_offset(self) -> int:
        """``getMinOffset``: the old files while they exist, else the first DLedger byte (0 if none)."""
        if self.mapped_file_queue.mapped_files:
            return super().get_min_offset()
        min_offset = self.data_file_list.min_offset
        return min_offset if min_offset >= 0 else 0

    def get_data(self, offset: int, max_size: int | None = None) -> bytes | None:
        """``getData``: below the divide from the old files; above it the bytes of the DLedger file
        holding ``offset``, cut at ``committedPos`` (None at or beyond it)."""
        committed = self.dledger_store.committed_pos
        log = plugs.resolve(WHICH_LOG_PLUG, which_log)(offset, self.divided_commitlog_offset, committed)
        if log == "commitlog":
            return super().get_data(offset, max_size)
        if log is None:
            return None
        f = self.data_file_list.find_file(offset)
        if f is None:
            return None
        in_file = offset - f.file_from_offset
        end = min(f.wrote_position, committed - f.file_from_offset)
        if max_size is not None:
            end = min(end, in_file + max_size)
        if in_file < f.start_position or in_file >= end:
            return None
        return f.read(in_file, end - in_file)

    def get_message(self, offset: int, size: int) -> bytes | None:
        """``getMessage(offset, size)``: one record's bytes from whichever log holds ``offset``."""
        log = plugs.resolve(WHICH_LOG_PLUG, which_log)(offset, self.divided_commitlog_offset, _NO_LIMIT)
        if log == "commitlog":
            return super().get_message(offset, size)
        return None if log is None else self.data_file_list.get_data(offset, size)

    def append_data(self, start_offset: int, data: bytes) -> bool:
        """Classic HA's slave path is disabled on DLedger (Java returns false)."""
        return False

    # ------------------------------------------------------------------ puts
    def put_message(self, msg: Message) -> PutMessageResult:  # type: ignore[override]
        raise StoreError("a DLedger commit log has no synchronous put: use async_put(msg, now_ms, on_done)")

    def put_messages(self, batch: Any) -> PutMessageResult:  # type: ignore[override]
        raise StoreError("a DLedger commit log has no synchronous put: use async_put_batch(batch, now_ms, on_done)")

    def async_put(self, msg: Message, now_ms: int, on_done: PutDone) -> Output:
        """``asyncPutMessage``: encode with the next queue offset, append through DLedger; ``on_done``
        runs once, in this input's Output (refused) or in the one that completes the append."""
        born = msg.born_timestamp
        try:
            encoded = self.encoder.encode(msg, self.clock() if born is None else born)
        except MessageRejected as e:
            return _answer(on_done, PutMessageResult(e.status, None, str(e)))
        too_big = self._too_big(len(encoded) + BODY_OFFSET, "entry")
        if too_big is not None:
            return _answer(on_done, too_big)
        key = (msg.topic, msg.queue_id)
        tran = msg.sys_flag & _TRAN_MASK
        counted = tran == 0 or tran == MessageSysFlag.TRANSACTION_COMMIT_TYPE
        with self.put_message_lock:
            store_timestamp = self.clock()
            queue_offset = self.topic_queue_table.get(key, 0) if counted else 0
            stamp_record(encoded, queue_offset, 0, store_timestamp)
            length = len(encoded)
            host = self.encoder.store_host_raw

            def done(future: AppendFuture, out: OutputBuilder) -> None:
                if future.pos == -1:
                    on_done(PutMessageResult(PutMessageStatus.OS_PAGE_CACHE_BUSY, None,
                                             f"DLedger refused the append: {_code_name(future)}"), out)
                    return
                result = AppendMessageResult(AppendMessageStatus.PUT_OK,
                                             plugs.resolve(PHY_OFFSET_PLUG, phy_offset)(future.pos), length,
                                             store_timestamp, queue_offset, 1, host)
                on_done(PutMessageResult(put_status_of(future.code, self.rocketmq_version), result,
                                         _detail(future)), out)

            future, out = self.dledger_server_or_fail().append(bytes(encoded), now_ms, done)
            if future.pos != -1 and counted:
                self.topic_queue_table[key] = queue_offset + 1
        return out

    def async_put_batch(self, batch: MessageExtBatch | Sequence[Message], now_ms: int, on_done: PutDone) -> Output:
        """``asyncPutMessages``: one entry per record of the batch, appended as one batch request (the
        future waits for the last entry). Transactional or delayed batches are MESSAGE_ILLEGAL. Unlike the
        classic CommitLog, the batch's own properties (WAIT, CLUSTER) are not appended to the records (4.9.5
        and 5.3.3's ``DLedgerCommitLog.MessageSerializer``)."""
        illegal = PutMessageStatus.MESSAGE_ILLEGAL
        if not isinstance(batch, Message):
            try:
                batch = MessageExtBatch.from_messages(batch, last_property_separator=self.config.last_property_separator)
            except CodecError as e:
                return _answer(on_done, PutMessageResult(illegal, None, str(e)))
        if batch.sys_flag & _TRAN_MASK or PROPERTY_DELAY_TIME_LEVEL in batch.properties:
            return _answer(on_done, PutMessageResult(illegal, None, "batch messages cannot be transactional or delayed"))
        if batch.properties:  # MessageSerializer.serialize(MessageExtBatch) writes each record's own properties only
            batch = MessageExtBatch(batch.topic, batch.body, batch.queue_id, flag=batch.flag,
                                    born_timestamp=batch.born_timestamp, born_host=batch.born_host,
                                    sys_flag=batch.sys_flag, reconsume_times=batch.reconsume_times)
        try:
            encoded, starts = self.encoder.encode_batch(batch, self.clock())
        except MessageRejected as e:
            return _answer(on_done, PutMessageResult(e.status, None, str(e)))
        bounds = [*starts, len(encoded)]
        key = (batch.topic, batch.queue_id)
        with self.put_message_lock:
            store_timestamp = self.clock()
            first_queue_offset = self.topic_queue_table.get(key, 0)
            bodies = []
            for i, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
                record = bytearray(encoded[start:end])
                stamp_record(record, first_queue_offset + i, 0, store_timestamp)
                bodies.append(bytes(record))
            host = self.encoder.store_host_raw
            total = len(encoded)

            def done(future: AppendFuture, out: OutputBuilder) -> None:
                if future.pos == -1:
                    on_done(PutMessageResult(PutMessageStatus.OS_PAGE_CACHE_BUSY, None,
                                             f"DLedger refused the append: {_code_name(future)}"), out)
                    return
                to_phy = plugs.resolve(PHY_OFFSET_PLUG, phy_offset)
                offsets = [to_phy(p) for p in future.positions] or [to_phy(future.pos)]
                result = AppendMessageResult(
                    AppendMessageStatus.PUT_OK, offsets[0], total, store_timestamp, first_queue_offset,
                    len(bodies), host, lambda: ",".join(create_message_id(host, o) for o in offsets))
                on_done(PutMessageResult(put_status_of(future.code, self.rocketmq_version), result,
                                         _detail(future)), out)

            future, out = self.dledger_server_or_fail().append(bodies, now_ms, done)
            if future.pos != -1:
                self.topic_queue_table[key] = first_queue_offset + len(bodies)
        return out

    def dledger_server_or_fail(self) -> DLedgerServer:
        if self.dledger_server is None:
            raise StoreError("the DLedger server is not started (recover() first)")
        return self.dledger_server

    # ------------------------------------------------------------------ life cycle
    def shutdown(self) -> None:
        """Clean stop: DLedger flushes and writes its checkpoint; the old files are released."""
        if self.dledger_server is not None and not self.dledger_server.stopped:
            self.dledger_server.shutdown()
        super().shutdown()

    def crash(self, lose_unflushed: bool) -> None:
        """A crash of the DLedger side (the old files are closed by the store's crash)."""
        if self.dledger_server is not None and not self.dledger_server.stopped:
            self.dledger_server.on_crash(lose_unflushed)

    def __repr__(self) -> str:
        committed = self.dledger_server.committed_pos if self.dledger_server is not None else None
        return (f"DLedgerCommitLog(divided={self.divided_commitlog_offset}, min={self.get_min_offset()}, "
                f"committed_pos={committed})")


def _answer(on_done: PutDone, result: PutMessageResult) -> Output:
    out = OutputBuilder()
    on_done(result, out)
    return out.build()


def _code_name(future: AppendFuture) -> str:
    return future.code.name if future.code is not None else "no answer"


def _detail(future: AppendFuture) -> str | None:
    return None if future.code is Code.SUCCESS else f"DLedger answered {_code_name(future)}"


__all__ = [
    "DLedgerCommitLog", "PutDone", "broker_id_of", "phy_offset", "which_log",
]
"""The commit log and its override points (``phy_offset``, ``which_log``)."""
