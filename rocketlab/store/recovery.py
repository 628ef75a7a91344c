"""CommitLog recovery after a clean stop (no ``abort`` file) or a crash (``abort`` file left behind).

Models ``CommitLog.recoverNormally`` and ``CommitLog.recoverAbnormally`` (4.x), with
``isMappedFileMatchedRecover``. Both scan records with ``checkMessageAndReturnSize`` (magic, body CRC
when ``check_crc_on_recover``, recomputed length), stop at the first invalid record, and cut the
CommitLog there; ConsumeQueues that point past the cut are trimmed. What was cut is reported in a
:class:`RecoveryReport`.

A limit shared with RocketMQ: a record torn inside its properties bytes (the last field) passes both
checks, because the CRC covers only the body and the lengths were written before the tear. 5.2's
optional whole-record CRC (``__CRC32#``) closes that gap; it is not modelled here.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.mapped_file import MappedFile
from rocketlab.store.message import MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2
from rocketlab.store.message_codec import check_message_and_return_size
from rocketlab.store.record_layout import store_timestamp_position

if TYPE_CHECKING:
    from rocketlab.store.checkpoint import StoreCheckpoint
    from rocketlab.store.commit_log import CommitLog

log = logging.getLogger(__name__)

_HEAD = struct.Struct(">ii")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


@dataclass
class RecoveryReport:
    """What a recovery found and what it cut. ``truncated`` is False after a clean stop at the end
    of the data; otherwise ``stop_reason`` says which record was invalid and why."""

    normal: bool
    process_offset: int = 0
    start_file: str | None = None
    records: int = 0
    stop_reason: str = "no commit log files"
    truncated: bool = False
    truncated_bytes: int = 0
    removed_files: list[str] = field(default_factory=list)
    consume_queue_units_removed: dict[str, int] = field(default_factory=dict)
    consume_queue_files_removed: dict[str, list[str]] = field(default_factory=dict)
    index_files_dropped: list[str] = field(default_factory=list)
    half_created_files_removed: list[str] = field(default_factory=list)
    redispatched: int = 0

    def summary(self) -> str:
        kind = "normal" if self.normal else "abnormal (abort file found)"
        text = (
            f"{kind} recovery from {self.start_file or '-'}: {self.records} valid records, "
            f"commit log ends at {self.process_offset}"
        )
        if self.truncated:
            text += f"; cut {self.truncated_bytes} bytes at {self.process_offset} ({self.stop_reason})"
        if self.removed_files:
            text += f"; removed files {', '.join(self.removed_files)}"
        if self.consume_queue_units_removed:
            units = sum(self.consume_queue_units_removed.values())
            text += f"; trimmed {units} consume queue units"
        if self.index_files_dropped:
            text += f"; dropped index files {', '.join(self.index_files_dropped)}"
        return text

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


class RecoveryTarget(Protocol):
    """What recovery needs from the store around the CommitLog (``DefaultMessageStore`` in Java)."""

    def do_dispatch(self, request: DispatchRequest) -> None: ...

    def truncate_dirty_logic_files(self, phy_offset: int) -> dict[str, int]: ...

    def destroy_logics(self) -> None: ...


def _nonzero_extent(mf: MappedFile, pos: int) -> int:
    """How many bytes from ``pos`` to the last non-zero byte of the file (backwards scan in chunks)."""
    chunk = 1 << 20
    end = mf.file_size
    mm = mf.mm
    while end > pos:
        start = max(pos, end - chunk)
        data = mm[start:end]
        stripped = data.rstrip(b"\x00")
        if stripped:
            return start + len(stripped) - pos
        end = start
    return 0


def _scan(
    commit_log: CommitLog, index: int, check_crc: bool, on_record: Callable[[DispatchRequest], None] | None
) -> tuple[int, int, str, bool]:
    """Walk records from file ``index``. Returns (process_offset, records, stop_reason, damaged)."""
    mfs = commit_log.mapped_file_queue.mapped_files
    mf = mfs[index]
    pos = 0
    records = 0
    while True:
        if pos >= mf.file_size:  # a file filled to the byte (only via append_data); go on
            if index + 1 >= len(mfs):
                return mf.file_from_offset + pos, records, "end of the last file", False
            index += 1
            mf, pos = mfs[index], 0
            continue
        req = check_message_and_return_size(
            mf.mm, pos, mf.file_size, check_crc=check_crc, read_body=check_crc, expected_offset=mf.file_from_offset + pos
        )
        if req.success and req.msg_size > 0:
            if on_record is not None:
                on_record(req)
            records += 1
            pos += req.msg_size
        elif req.success:  # the END_OF_FILE blank
            if index + 1 >= len(mfs):
                return mf.file_from_offset + pos, records, "blank at the end of the last file", False
            index += 1
            mf, pos = mfs[index], 0
        else:
            total, magic = _HEAD.unpack_from(mf.mm, pos) if mf.file_size - pos >= 8 else (0, 0)
            if total == 0 and magic == 0:
                return mf.file_from_offset + pos, records, "end of data", False
            return mf.file_from_offset + pos, records, f"invalid record at {mf.file_from_offset + pos}: {req.reason}", True


def _finish(
    commit_log: CommitLog, target: RecoveryTarget | None, report: RecoveryReport, max_phy_offset_of_cq: int, damaged: bool
) -> RecoveryReport:
    mfq = commit_log.mapped_file_queue
    process_offset = report.process_offset
    holder = mfq.find_mapped_file_by_offset(process_offset)
    if damaged and holder is not None:
        report.truncated = True
        report.truncated_bytes = _nonzero_extent(holder, process_offset - holder.file_from_offset)
    mfq.flushed_where = mfq.committed_where = process_offset
    report.removed_files = mfq.truncate_dirty_files(process_offset)
    if report.removed_files:
        report.truncated = True
    if target is not None and max_phy_offset_of_cq >= process_offset:
        report.consume_queue_units_removed = {k: v for k, v in target.truncate_dirty_logic_files(process_offset).items() if v}
    if report.truncated:
        log.warning("commit log recovery: %s", report.summary())
    return report


def recover_normally(
    commit_log: CommitLog, max_phy_offset_of_cq: int, target: RecoveryTarget | None, check_crc: bool
) -> RecoveryReport:
    """``recoverNormally`` (4.x): scan from the third-last file; nothing is dispatched here (the reput
    catches up at start)."""
    report = RecoveryReport(normal=True)
    mfs = commit_log.mapped_file_queue.mapped_files
    if not mfs:
        commit_log.mapped_file_queue.flushed_where = commit_log.mapped_file_queue.committed_where = 0
        if target is not None:
            target.destroy_logics()
        return report
    index = max(0, len(mfs) - 3)
    report.start_file = os.path.basename(mfs[index].file_name)
    report.process_offset, report.records, report.stop_reason, damaged = _scan(commit_log, index, check_crc, None)
    return _finish(commit_log, target, report, max_phy_offset_of_cq, damaged)


def is_mapped_file_matched_recover(mf: MappedFile, checkpoint: StoreCheckpoint, index_safe: bool) -> bool:
    """``isMappedFileMatchedRecover``: does this file start with a message stored before the last
    point known to be flushed and dispatched (checkpoint minimum, less 3 s)?"""
    mm = mf.mm
    magic = _I32.unpack_from(mm, 4)[0]
    if magic not in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2):
        return False
    sys_flag = _I32.unpack_from(mm, 36)[0]
    store_timestamp = _I64.unpack_from(mm, store_timestamp_position(sys_flag))[0]
    if store_timestamp == 0:
        return False
    limit = checkpoint.get_min_timestamp_index() if index_safe else checkpoint.get_min_timestamp()
    return store_timestamp <= limit


def recover_abnormally(
    commit_log: CommitLog,
    max_phy_offset_of_cq: int,
    target: RecoveryTarget | None,
    checkpoint: StoreCheckpoint,
    check_crc: bool,
    index_safe: bool,
) -> RecoveryReport:
    """``recoverAbnormally`` (4.x): start at the newest file whose first message is older than the
    checkpoint says is safe, and re-dispatch every valid record from there (dispatch is idempotent)."""
    report = RecoveryReport(normal=False)
    mfs = commit_log.mapped_file_queue.mapped_files
    if not mfs:
        commit_log.mapped_file_queue.flushed_where = commit_log.mapped_file_queue.committed_where = 0
        if target is not None:
            target.destroy_logics()
        return report
    index = len(mfs) - 1
    while index >= 0 and not is_mapped_file_matched_recover(mfs[index], checkpoint, index_safe):
        index -= 1
    index = max(index, 0)
    report.start_file = os.path.basename(mfs[index].file_name)

    def redispatch(req: DispatchRequest) -> None:
        report.redispatched += 1
        target.do_dispatch(req)  # type: ignore[union-attr]

    on_record = redispatch if target is not None else None
    report.process_offset, report.records, report.stop_reason, damaged = _scan(commit_log, index, check_crc, on_record)
    return _finish(commit_log, target, report, max_phy_offset_of_cq, damaged)
