"""DefaultMessageStore with its CommitLog on DLedger, and the reput that reads both formats.

Models what ``DefaultMessageStore`` does when ``enableDLegerCommitLog=true`` (RocketMQ 4.9.5): it builds
a :class:`~rocketlab.broker.dledger_commit_log.DLedgerCommitLog` instead of a CommitLog, never starts
classic HA, and its ``ReputMessageService`` walks ``commitLog.getData`` with the DLedger-aware
``checkMessageAndReturnSize`` (skipping the 48-byte entry headers, rolling at DLedger blanks). Consume
queues, index, checkpoint and the pull path are the classic ones, unchanged.

Puts are asynchronous only: :meth:`DLedgerMessageStore.async_put` returns the input's Output and calls
``on_done(result, out)`` when DLedger answers (the store is hosted by a sans-IO broker core, see
:mod:`rocketlab.broker.dledger_broker`). The broker role lives in the config (``set_broker_role``), as
``messageStoreConfig.setBrokerRole`` in Java: a SLAVE store refuses puts with SERVICE_NOT_AVAILABLE.

Differences from Java 4.9.5:

* the reput checks each record's PHYSICALOFFSET against where it sits (kit addition) and stops at a
  torn or garbage record and waits ("waiting at ..."); Java's DLedger reput has no such check and, on a
  record it cannot parse, skips the rest of what ``getData`` returned (``reputFromOffset +=
  result.getSize() - readSize``), so messages there are never dispatched;
* an empty-bodied DLedger entry (``raft``'s NOOP) is stepped over (kit addition; no release writes one);
* puts are asynchronous only and the store is driven by its broker core (no threads).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from rocketlab.broker.dledger_commit_log import DLedgerCommitLog, PutDone
from rocketlab.broker.dledger_commit_log_check import check_message_and_return_size
from rocketlab.core import EMPTY, Output, OutputBuilder
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.errors import StoreError
from rocketlab.store.config import BrokerRole, MessageStoreConfig
from rocketlab.store.crash import simulate_crash
from rocketlab.store.message import Message
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.message_store import DefaultMessageStore
from rocketlab.store.reput import (
    ReputMessageService,
)
from rocketlab.store.status import PutMessageResult

log = logging.getLogger(__name__)

READ_CHUNK = 1 << 20  # bytes the reput reads per getData (a record straddling it is read again)


class DLedgerReputMessageService(ReputMessageService):
    """Models ``ReputMessageService`` over a DLedgerCommitLog: ``getData(reputFromOffset)`` then
    ``checkMessageAndReturnSize`` per record, advancing by ``bufferSize`` (the record, plus 48 bytes of
    DLedger header); a blank rolls to the next file; a NOOP entry is stepped over. Only committed
    bytes are ever returned by ``getData``, so only committed messages are dispatched.

    As in the classic reput here, a torn or garbage record stops the round (it is never skipped), and
    ``max_bytes`` bounds one round (checked between reads of at most 1 MiB).
    """

    commit_log: DLedgerCommitLog

    def _do_reput(self, max_bytes: int | None = None) -> int:
        cl = self.commit_log
        self._skip_below_min_offset()
        dispatched, chunk = 0, READ_CHUNK
        budget_end = None if max_bytes is None else self.reput_from_offset + max_bytes
        while self.reput_from_offset < cl.get_confirm_offset():
            if budget_end is not None and self.reput_from_offset >= budget_end:
                break
            base = self.reput_from_offset
            data = cl.get_data(base, chunk)
            if data is None:
                break
            pos, stalled = self._walk(data, base)
            dispatched += stalled[1]
            if stalled[0] is not None:
                if len(data) == chunk:  # the chunk ended inside a record: read again from there
                    chunk = chunk if pos > 0 else chunk * 4
                    continue
                self.stalled_reason = stalled[0]
                self.dispatched_total += dispatched
                return dispatched
            chunk = READ_CHUNK
        self.stalled_reason = None
        self.dispatched_total += dispatched
        return dispatched

    def _walk(self, data: bytes, base: int) -> tuple[int, tuple[str | None, int]]:
        """Dispatch the records of one chunk; returns (bytes consumed, (stall reason or None, dispatched))."""
        cl = self.commit_log
        pos, dispatched = 0, 0
        old = base < cl.divided_commitlog_offset
        while pos < len(data):
            req, size = check_message_and_return_size(data, pos, len(data), base=base,
                                                      old_format_only=old and cl.is_in_recovering_old_commitlog)
            if req.success and size > 0:
                if req.msg_size > 0:
                    for dispatcher in self.dispatcher_list:
                        dispatcher.dispatch(req)
                    dispatched += 1
                pos += size
            elif req.success:  # a blank: roll to the next file
                self.reput_from_offset = cl.roll_next_file(base + pos)
                return pos, (None, dispatched)
            elif size > 0:
                log.error("[BUG] reput: %s; skipping %d bytes at %d", req.reason, size, base + pos)
                self.skipped_bytes += size
                pos += size
            else:
                self.reput_from_offset = base + pos
                return pos, (f"waiting at {base + pos}: {req.reason}", dispatched)
            self.reput_from_offset = base + pos
        return pos, (None, dispatched)


class DLedgerMessageStore(DefaultMessageStore):
    """Models ``DefaultMessageStore`` with ``enableDLegerCommitLog=true``; see the module docstring.

    ``dledger_config`` is the member's DLedgerConfig (``store_base_dir`` is set to the store root, the
    data file size to ``mapped_file_size_commit_log``); ``rng`` drives the elector's vote delays.
    Always ``threads=False``: the hosting core drives flush, reput and DLedger.
    """

    commit_log: DLedgerCommitLog | None
    enable_dleger_commit_log = True  # ConsumeQueue stamps physicMsgTimestamp (SLAVE or DLedger, as Java)

    def __init__(self, config: MessageStoreConfig, dledger_config: DLedgerConfig, rng: Any, *,
                 clock: Callable[[], int] | None = None, event_listener: Any = None) -> None:
        super().__init__(config, clock=clock, threads=False, event_listener=event_listener)
        self.dledger_config = dledger_config.replace(
            store_base_dir=config.store_path_root_dir,
            mapped_file_size_for_entry_data=config.mapped_file_size_commit_log)
        self.rng = rng

    @classmethod
    def open_dledger(cls, root_dir: str | os.PathLike[str], dledger_config: DLedgerConfig, rng: Any, *,
                     clock: Callable[[], int] | None = None, rocketmq_version: str = "4.9.5",
                     **options: Any) -> DLedgerMessageStore:
        """Open (load, recover, start) the store in ``root_dir``; ``options`` are MessageStoreConfig fields;
        ``rocketmq_version`` (the config's) chooses the put-status mapping (see DLedgerCommitLog) and the
        record bytes (see MessageStoreConfig)."""
        config = MessageStoreConfig.from_options(store_path_root_dir=os.fspath(root_dir),
                                                 rocketmq_version=rocketmq_version, **options)
        store = cls(config, dledger_config, rng, clock=clock)
        try:
            store.load()
            store.start()
        except BaseException:
            store.shutdown_flag = True
            if store.commit_log is not None:
                store.commit_log.crash(False)
            store._close_files()
            store._release()
            raise
        return store

    @property
    def dledger_server(self) -> Any:
        assert self.commit_log is not None
        return self.commit_log.dledger_server_or_fail()

    # ------------------------------------------------------------------ load and recover
    def _new_commit_log(self) -> DLedgerCommitLog:
        """``load`` as DefaultMessageStore's, with the DLedger commit log (``DLedgerCommitLog``) ..."""
        return DLedgerCommitLog(self.config, self.dledger_config, self.rng, clock=self.clock,
                                checkpoint=self.store_checkpoint)

    def _new_reput_service(self) -> DLedgerReputMessageService:
        """... and its reput (``DLedgerReputMessageService``)."""
        return DLedgerReputMessageService(self.commit_log, self.dispatcher_list)

    def _recover(self, last_exit_ok: bool, index_files_dropped: list[str]) -> None:
        """Consume queues, then ``DLedgerCommitLog.recover`` (the same after a clean stop or a crash,
        as in 4.9.x; the reput re-dispatches from the consume queues' end), then the offset table."""
        cl = self.commit_log
        assert cl is not None
        cq_files_removed, max_phy_offset_of_cq = self._recover_consume_queues()
        report = cl.recover(max_phy_offset_of_cq, self, self.config.check_crc_on_recover)
        report.normal = last_exit_ok
        report.index_files_dropped = index_files_dropped
        report.consume_queue_files_removed = cq_files_removed
        report.half_created_files_removed = list(cl.mapped_file_queue.removed_at_load)
        self.recovery_report = report
        self.recover_topic_queue_table()
        if report.truncated:
            log.warning("DLedger commit log recovery: %s", report.summary())

    # ------------------------------------------------------------------ role
    def set_broker_role(self, role: BrokerRole) -> None:
        """``messageStoreConfig.setBrokerRole``: a SLAVE store refuses puts."""
        self.update_config(broker_role=role)
        self._refuse_puts = role is BrokerRole.SLAVE

    # ------------------------------------------------------------------ puts
    def put_message(self, msg: Message) -> PutMessageResult:
        raise StoreError("a DLedger store has no synchronous put: use async_put(msg, now_ms, on_done)")

    def put_messages(self, batch: MessageExtBatch | Sequence[Message]) -> PutMessageResult:
        raise StoreError("a DLedger store has no synchronous put: use async_put_batch(batch, now_ms, on_done)")

    def async_put(self, msg: Message, now_ms: int, on_done: PutDone) -> Output:
        """``asyncPutMessage``: the store checks (shut down, SLAVE, not writeable, bad topic) answer at
        once; otherwise the DLedger commit log appends and ``on_done`` runs when DLedger answers."""
        refused = self._check_store_status() or self._check_topic(msg.topic)
        if refused is not None:
            return _answer(on_done, refused)
        assert self.commit_log is not None
        return self.commit_log.async_put(msg, now_ms, on_done)

    def async_put_batch(self, batch: MessageExtBatch | Sequence[Message], now_ms: int, on_done: PutDone) -> Output:
        topic = batch.topic if isinstance(batch, Message) else batch[0].topic if batch else ""
        refused = self._check_store_status() or self._check_topic(topic)
        if refused is not None:
            return _answer(on_done, refused)
        assert self.commit_log is not None
        return self.commit_log.async_put_batch(batch, now_ms, on_done)

    def crash(self, lose_unflushed: bool = False) -> None:
        """A simulated kill (or power loss): DLedger first, then the classic files (store.crash)."""
        if self.commit_log is not None:
            self.commit_log.crash(lose_unflushed)
        simulate_crash(self, lose_unflushed)


def _answer(on_done: PutDone, result: PutMessageResult) -> Output:
    out = OutputBuilder()
    on_done(result, out)
    return out.build() or EMPTY


__all__ = ["DLedgerMessageStore", "DLedgerReputMessageService"]
