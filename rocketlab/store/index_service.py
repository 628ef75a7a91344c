"""The list of IndexFiles: build keys from dispatched messages, query keys in a time range.

Models ``org.apache.rocketmq.store.index.IndexService`` and ``QueryOffsetResult``.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketlab.errors import StoreError
from rocketlab.i18n import _
from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.index_file import IndexFile
from rocketlab.store.message import MessageSysFlag

log = logging.getLogger(__name__)

_INDEX_NAME_RE = re.compile(r"^\d{17}$")


def time_millis_to_human_string(ms: int) -> str:
    """``UtilAll.timeMillisToHumanString``: ``yyyyMMddHHmmssSSS`` (UTC here; Java uses local time)."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"


def build_key(topic: str, key: str) -> str:
    return f"{topic}#{key}"


@dataclass
class QueryOffsetResult:
    """Models ``QueryOffsetResult``."""

    phy_offsets: list[int] = field(default_factory=list)
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0


class IndexService:
    """Models ``IndexService``.

    :meth:`build_index` indexes ``topic#UNIQ_KEY`` and ``topic#k`` for each space-separated ``KEYS``
    entry, skipping ROLLBACK records and records already indexed. A full file is flushed and its
    end time goes to the checkpoint (``index_msg_timestamp``); a new file starts from the previous
    file's end offset and time. After a crash, files newer than that time are dropped at load and
    rebuilt by re-dispatch.

    Re-dispatch is skipped only below the last file's ``end_phy_offset`` (``<``, as Java): the message
    at that offset is indexed a second time when it is dispatched again, so after an abnormal recovery that
    dropped the newest index file, ``query_message`` finds it twice (the real 4.9.5 and 5.3.3 stores do the
    same: tests/oracle).

    Simplified: the full file is flushed synchronously (Java uses a short-lived thread); file names
    use UTC and, if two files would get the same millisecond, the later name is bumped by 1 ms.
    """

    def __init__(
        self,
        store_path: str,
        hash_slot_num: int,
        index_num: int,
        checkpoint: StoreCheckpoint,
        clock: Callable[[], int],
        max_msgs_num_batch: int = 64,
    ) -> None:
        self.store_path = store_path
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.checkpoint = checkpoint
        self.clock = clock
        self.max_msgs_num_batch = max_msgs_num_batch
        self.index_file_list: list[IndexFile] = []
        self._lock = threading.RLock()

    def load(self, last_exit_ok: bool) -> list[str]:
        """Open every index file, oldest first. After a crash drop those that end after the
        checkpoint's ``index_msg_timestamp``. Returns the names of dropped files."""
        try:
            os.makedirs(self.store_path, exist_ok=True)
            names = sorted(os.listdir(self.store_path))
        except OSError as exc:
            raise StoreError(_("{path}: cannot read index directory: {why}").format(
                path=self.store_path, why=exc.strerror)) from exc
        dropped = []
        for i, name in enumerate(names):
            path = os.path.join(self.store_path, name)
            if name.startswith("."):
                continue
            if name.endswith(".tmp") or (i == len(names) - 1 and os.path.getsize(path) == 0):
                os.unlink(path)  # creation interrupted by a crash
                dropped.append(name)
                continue
            if not _INDEX_NAME_RE.match(name) or not os.path.isfile(path):
                raise StoreError(_("{path}: unexpected entry in the index directory (files are named "
                                   "yyyyMMddHHmmssSSS)").format(path=path))
            f = IndexFile(path, self.hash_slot_num, self.index_num)
            if not last_exit_ok and f.get_end_timestamp() > self.checkpoint.index_msg_timestamp:
                f.destroy()
                dropped.append(name)
                continue
            self.index_file_list.append(f)
        return dropped

    # ---- build ----
    def _new_file_name(self) -> str:
        ms = self.clock()
        while True:
            path = os.path.join(self.store_path, time_millis_to_human_string(ms))
            if not os.path.exists(path) and all(f.file_name < path for f in self.index_file_list):
                return path
            ms += 1

    def get_and_create_last_index_file(self) -> IndexFile:
        """``getAndCreateLastIndexFile``: the last file if it has room, else a new one (the full one
        is flushed first)."""
        with self._lock:
            last = self.index_file_list[-1] if self.index_file_list else None
            if last is not None and not last.is_write_full():
                return last
            end_phy_offset = last.get_end_phy_offset() if last else 0
            end_timestamp = last.get_end_timestamp() if last else 0
            os.makedirs(self.store_path, exist_ok=True)
            f = IndexFile(self._new_file_name(), self.hash_slot_num, self.index_num, end_phy_offset, end_timestamp)
            self.index_file_list.append(f)
        if last is not None:
            self.flush(last)
        return f

    def flush(self, f: IndexFile) -> None:
        index_msg_timestamp = f.get_end_timestamp() if f.is_write_full() else 0
        f.flush()
        if index_msg_timestamp > 0:
            self.checkpoint.index_msg_timestamp = index_msg_timestamp
            self.checkpoint.flush()

    def _put_key(self, f: IndexFile, req: DispatchRequest, idx_key: str) -> IndexFile:
        while not f.put_key(idx_key, req.commit_log_offset, req.store_timestamp):
            f = self.get_and_create_last_index_file()
        return f

    def build_index(self, req: DispatchRequest) -> None:
        """``buildIndex``: index the unique key and every business key of one dispatched message."""
        if req.uniq_key is None and not req.keys:
            return
        if MessageSysFlag.get_transaction_value(req.sys_flag) == MessageSysFlag.TRANSACTION_ROLLBACK_TYPE:
            return
        with self._lock:
            f = self.get_and_create_last_index_file()
            if req.commit_log_offset < f.get_end_phy_offset():
                return
            topic = req.topic
            if req.uniq_key is not None:
                f = self._put_key(f, req, build_key(topic, req.uniq_key))
            if req.keys:
                for key in req.keys.split(" "):
                    if key:
                        f = self._put_key(f, req, build_key(topic, key))

    # ---- query ----
    def query_offset(self, topic: str, key: str, max_num: int, begin: int, end: int) -> QueryOffsetResult:
        """``queryOffset``: newest file first, only files whose time range overlaps ``[begin, end]``,
        at most ``min(max_num, max_msgs_num_batch)`` offsets."""
        result = QueryOffsetResult()
        max_num = min(max_num, self.max_msgs_num_batch)
        with self._lock:
            files = list(self.index_file_list)
        idx_key = build_key(topic, key)
        for i in range(len(files), 0, -1):
            f = files[i - 1]
            if i == len(files):
                result.index_last_update_timestamp = f.get_end_timestamp()
                result.index_last_update_phyoffset = f.get_end_phy_offset()
            if f.is_time_matched(begin, end):
                f.select_phy_offset(result.phy_offsets, idx_key, max_num, begin, end)
            if f.get_begin_timestamp() < begin or len(result.phy_offsets) >= max_num:
                break
        return result

    # ---- retention and lifecycle ----
    def delete_expired_file(self, offset: int) -> int:
        """``deleteExpiredFile``: drop leading files that end below the CommitLog's min offset."""
        with self._lock:
            files = []
            for f in self.index_file_list[:-1]:
                if f.get_end_phy_offset() < offset:
                    files.append(f)
                else:
                    break
            self.index_file_list = self.index_file_list[len(files) :]
        for f in files:
            f.destroy()
        return len(files)

    def flush_all(self) -> None:
        with self._lock:
            for f in self.index_file_list:
                f.flush()

    def shutdown(self) -> None:
        with self._lock:
            for f in self.index_file_list:
                f.flush()
                f.close()

    def destroy(self) -> None:
        with self._lock:
            for f in self.index_file_list:
                f.destroy()
            self.index_file_list = []
