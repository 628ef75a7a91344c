"""Recovery of a DLedger-backed commit log, with the smooth upgrade from a classic one.

Models ``DLedgerCommitLog.recover`` (RocketMQ 4.9.5; normal and abnormal alike, as 4.9.x). Smooth
upgrade: on the first start in DLedger mode (no DLedger data file yet) the old commit log is recovered classically, an old blank record closes its last file,
``divided_commitlog_offset`` = that file's end, and the first DLedger data file is created *at that
offset*: DLedger positions continue the old offset space. Offsets below the divide are read from the
old files, the rest from DLedger. Later starts recover DLedger only and take the divide from its
first data file.

Kit addition: a marker file ties a DLedger data directory to its group (:func:`check_group_marker`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.store.mmap_file_list import MmapFileList
from rocketlab.dledger.store.mmap_file_store import DLedgerMmapFileStore
from rocketlab.errors import ConfigError, StoreError
from rocketlab.i18n import _
from rocketlab.store.mapped_file_queue import MappedFileQueue
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, END_FILE_MIN_BLANK_LENGTH, TOTAL_SIZE_AND_MAGIC
from rocketlab.store.recovery import RecoveryReport, recover_normally

GROUP_MARKER = "rocketlab-group.properties"


def check_group_marker(store_dir: Path, config: DLedgerConfig) -> None:
    """Refuse a DLedger data directory written for another group or member set (kit addition).

    ``<storeRoot>/dledger-<selfId>/rocketlab-group.properties`` records ``group`` and the member ids the
    first time; a later start with a different ``dLegerGroup`` or member set raises ConfigError and
    touches nothing. A directory with data but no marker (written by an older kit) gets one.
    """
    path = store_dir / GROUP_MARKER
    members = ",".join(config.peer_ids)
    if path.exists():
        try:
            props = dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)
        except (OSError, UnicodeDecodeError) as e:
            raise StoreError(_("{path}: unreadable: {why}").format(path=path, why=e)) from e
        if props.get("group") != config.group or props.get("members") != members:
            raise ConfigError(
                f"{store_dir}: this DLedger data directory belongs to group {props.get('group')!r} with members "
                f"{props.get('members')!r}, but the broker is configured with dLegerGroup={config.group!r} and "
                f"members {members!r}; refusing to start (nothing was changed): fix dLegerGroup/dLegerPeers or "
                f"point storePathRootDir elsewhere")
        return
    store_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"group={config.group}\nmembers={members}\n", encoding="utf-8")
    tmp.replace(path)


def has_data_files(data_dir: Path) -> bool:
    return data_dir.is_dir() and any(p.is_file() and len(p.name) == 20 and p.name.isdigit()
                                     for p in data_dir.iterdir())


@dataclass
class DLedgerRecoveryReport(RecoveryReport):
    """RecoveryReport plus what the DLedger side did: its own report, the divide, the upgrade step."""

    divided_commitlog_offset: int = -1
    upgraded: bool = False
    blank_written_at: int | None = None
    old_recovery: RecoveryReport | None = None
    dledger: str = ""

    def as_dict(self) -> dict[str, object]:
        values = dict(self.__dict__)
        values["old_recovery"] = self.old_recovery.as_dict() if self.old_recovery is not None else None
        return values

    def summary(self) -> str:
        text = f"DLedger: {self.dledger}; divided commit log offset {self.divided_commitlog_offset}"
        if self.upgraded and self.old_recovery is not None:
            text += f"; upgraded from the old commit log ({self.old_recovery.summary()})"
            if self.blank_written_at is not None:
                text += f"; old blank written at {self.blank_written_at}"
        return text


class DLedgerCommitLogRecovery:
    """The recovery part of :class:`~rocketlab.broker.dledger_commit_log.DLedgerCommitLog` (a mixin: it
    reads the commit log's state, declared below, and starts its DLedger server)."""

    store_dir: Path
    dledger_config: DLedgerConfig
    mapped_file_queue: MappedFileQueue
    divided_commitlog_offset: int
    is_in_recovering_old_commitlog: bool
    upgraded_from_old: bool
    dledger_store: DLedgerMmapFileStore
    data_file_list: MmapFileList

    def recover(self, max_phy_offset_of_consume_queue: int, target: Any, check_crc: bool) -> DLedgerRecoveryReport:
        """``DLedgerCommitLog.recover`` (normal and abnormal alike, as 4.9.x): see the module docstring."""
        data_dir = self.store_dir / "data"
        had_data = has_data_files(data_dir)
        check_group_marker(self.store_dir, self.dledger_config)
        report = DLedgerRecoveryReport(normal=True)
        if not had_data:
            self._upgrade_from_old_commit_log(max_phy_offset_of_consume_queue, target, check_crc, report)
        self._start_dledger()
        if self.upgraded_from_old:
            self.dledger_store.clean_space_service.enable_disk_force_clean = False
        data = self.data_file_list
        first = data.first()
        if had_data and first is not None:
            self.divided_commitlog_offset = first.file_from_offset
            if self.mapped_file_queue.mapped_files:
                self.disable_delete_dledger()
            max_phy_offset = data.max_wrote_position
            if target is not None and max_phy_offset_of_consume_queue >= max_phy_offset:
                removed = target.truncate_dirty_logic_files(max_phy_offset)
                report.consume_queue_units_removed = {k: v for k, v in removed.items() if v}
        recovery = self.dledger_store.recovery_report
        report.dledger = recovery.describe() if recovery is not None else "empty"
        report.truncated = report.truncated or bool(recovery is not None and recovery.truncated)
        report.process_offset = max(data.max_wrote_position, self.divided_commitlog_offset, 0)
        report.divided_commitlog_offset = self.divided_commitlog_offset
        report.start_file = first.path.name if first is not None else None
        report.stop_reason = (recovery.reason or "end of data") if recovery is not None else "no DLedger data"
        return report

    def _upgrade_from_old_commit_log(self, max_phy_offset_of_cq: int, target: Any, check_crc: bool,
                                     report: DLedgerRecoveryReport) -> None:
        """First start in DLedger mode: recover the old log, close it with a blank, create the first
        DLedger data file at the next file boundary (``dividedCommitlogOffset``)."""
        self.is_in_recovering_old_commitlog = True
        try:
            old = recover_normally(self, max_phy_offset_of_cq, target, check_crc)
        finally:
            self.is_in_recovering_old_commitlog = False
        report.old_recovery = old
        report.truncated = old.truncated
        report.removed_files = old.removed_files
        report.consume_queue_units_removed = old.consume_queue_units_removed
        mfs = self.mapped_file_queue.mapped_files
        if not mfs:
            return
        last = mfs[-1]
        pos = last.wrote_position
        if pos < last.file_size:
            head = last.mm[pos:pos + 8] if last.file_size - pos >= 8 else b""
            if len(head) < 8 or TOTAL_SIZE_AND_MAGIC.unpack(head)[1] != BLANK_MAGIC_CODE:
                if last.file_size - pos >= END_FILE_MIN_BLANK_LENGTH:
                    last.mm[pos:pos + 8] = TOTAL_SIZE_AND_MAGIC.pack(last.file_size - pos, BLANK_MAGIC_CODE)
                    report.blank_written_at = last.file_from_offset + pos
        last.set_positions(last.file_size)
        last.mm.flush()
        self.upgraded_from_old = True  # Java: dLedgerConfig.setEnableDiskForceClean(false), applied at start
        self.divided_commitlog_offset = last.file_from_offset + last.file_size
        report.upgraded = True
        first_file = MmapFileList(self.store_dir / "data", self.dledger_config.mapped_file_size_for_entry_data, False)
        first_file.get_last_mapped_file(self.divided_commitlog_offset)
        first_file.close()
