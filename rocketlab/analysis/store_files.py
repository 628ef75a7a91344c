"""RocketMQ's store files as rows, one mapped file at a time: what the Spark data sources read (sans Spark).

Every row starts with ``run`` (the name of the run directory holding ``nodes/<id>/``, as ``read_events``
names a run), ``store`` and ``node``.

* :func:`find_commit_logs` - under a path (a run directory, a node or store directory, a ``commitlog/`` or
  DLedger ``data/`` directory, or one file), every commit log it holds: its kind (``classic`` records or
  ``dledger`` entries whose bodies are records), its files and the store directory they belong to.
* :func:`commit_log_rows` - the records of one commit-log file: every field of the record (``MessageExt``),
  the properties as a dict, the body as bytes, the file and physical offset; blanks skipped. For a DLedger
  data file, the entry's index, term and pos too; a DLedger entry whose body is not a record (a bare
  DLedger group's payload, a no-op entry) is a row with only the entry fields and the body.
* :func:`consume_queue_rows`, :func:`index_rows` - one consume-queue unit, one index entry per row (the
  slot table's size from an option or the file's size: :func:`index_slot_count`).

A record that does not decode is one row with ``corrupt`` set to "file at offset: reason" and the
reading of that file stops there, as recovery stops at the first invalid record (nothing after it can
be found without a valid length); the other files are read. All fields follow the decoders of
:mod:`rocketlab.store.message_codec`, :mod:`rocketlab.store.consume_queue`, :mod:`rocketlab.store.index_file`
and :mod:`rocketlab.dledger.entry`. rocketlab's own addition (RocketMQ has no such reader).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.dledger.entry import BLANK_MAGIC_CODE as DLEDGER_BLANK
from rocketlab.dledger.entry import BODY_OFFSET, VALID_MAGICS
from rocketlab.errors import CodecError, RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.store.consume_queue import INT_MAX, UNIT
from rocketlab.store.index_file import HASH_SLOT_SIZE, INDEX_HEADER_SIZE, INDEX_SIZE
from rocketlab.store.message import MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, host_string
from rocketlab.store.message_codec import decode_message
from rocketlab.store.record_layout import BLANK_MAGIC_CODE

FILE_NAME = re.compile(r"^\d{20}$")
_HEAD = struct.Struct(">ii")
_ENTRY_HEADER = struct.Struct(">iiqqqiiii")
_INDEX_HEADER = struct.Struct(">qqqqii")
_INDEX_ENTRY = struct.Struct(">iqii")
RECORD_MAGICS = (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2)

COMMIT_LOG_COLUMNS: list[tuple[str, str]] = [
    ("run", "string"), ("store", "string"), ("node", "string"), ("kind", "string"), ("file", "string"),
    ("phy_offset", "bigint"),
    ("total_size", "int"), ("magic_code", "int"), ("version", "int"), ("body_crc", "int"), ("body_crc_ok", "boolean"),
    ("queue_id", "int"), ("flag", "int"), ("queue_offset", "bigint"), ("physical_offset", "bigint"),
    ("sys_flag", "int"), ("born_timestamp", "bigint"), ("born_host", "string"), ("store_timestamp", "bigint"),
    ("store_host", "string"), ("reconsume_times", "int"), ("prepared_transaction_offset", "bigint"),
    ("topic", "string"), ("properties", "map<string,string>"), ("tags", "string"), ("keys", "string"),
    ("msg_id", "string"), ("body", "binary"), ("dledger_index", "bigint"), ("dledger_term", "bigint"),
    ("dledger_pos", "bigint"), ("corrupt", "string"),
]
"""The columns of ``rocketmq-commitlog``, with Spark SQL types."""

CONSUME_QUEUE_COLUMNS: list[tuple[str, str]] = [
    ("run", "string"), ("store", "string"), ("node", "string"), ("topic", "string"), ("queue_id", "int"),
    ("file", "string"),
    ("queue_offset", "bigint"), ("phy_offset", "bigint"), ("size", "int"), ("tags_code", "bigint"),
    ("filler", "boolean"), ("corrupt", "string"),
]
INDEX_COLUMNS: list[tuple[str, str]] = [
    ("run", "string"), ("store", "string"), ("node", "string"), ("file", "string"), ("begin_timestamp", "bigint"),
    ("end_timestamp", "bigint"), ("begin_phy_offset", "bigint"), ("end_phy_offset", "bigint"),
    ("hash_slot_count", "int"), ("index_count", "int"), ("index_no", "int"), ("key_hash", "int"),
    ("slot", "int"), ("phy_offset", "bigint"), ("time_diff", "int"), ("prev_index", "int"), ("corrupt", "string"),
]


@dataclass(frozen=True)
class StoreFile:
    """One mapped file of a store: where it is, which store (and node) it belongs to, what kind."""

    path: str
    store: str
    node: str | None
    kind: str  # "classic" | "dledger" | "consumequeue" | "index"
    topic: str | None = None
    queue_id: int | None = None

    @property
    def run(self) -> str | None:
        """The run directory's name (the one holding ``nodes/<id>/``), like ``read_events``' ``run``."""
        parts = Path(self.path).resolve().parts
        for i in range(len(parts) - 2, 0, -1):
            if parts[i] == "nodes":
                return parts[i - 1]
        return None


# ------------------------------------------------------------------------------ finding files
def _node_of(path: Path) -> str | None:
    parts = path.resolve().parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "nodes":
            return parts[i + 1]
    return None


_KIND_NAMES = {"commit log": N_("commit log"), "consume queue": N_("consume queue")}
"""The file kinds :func:`_numbered` and :func:`_same_size` check (the code branches on the key), each with the
name a message shows (the Chinese one says "file" too, so the sentences around it do not)."""


def _numbered(directory: Path, what: str) -> list[Path]:
    try:
        names = sorted(n for n in os.listdir(directory) if not n.startswith("."))
    except OSError as e:
        raise RocketlabError(_("{path}: cannot read directory: {why}").format(path=directory, why=e.strerror)) from None
    bad = [n for n in names if not FILE_NAME.match(n) or not (directory / n).is_file()]
    if bad:
        raise RocketlabError(_("{path}: not a {what} file (a store file is named by its 20-digit offset)").format(
            path=directory / bad[0], what=_(_KIND_NAMES[what])))
    return [directory / n for n in names]


def _same_size(files: list[Path], directory: Path, what: str, mapped_file_size: int | None) -> None:
    sizes = {f: f.stat().st_size for f in files}
    distinct = set(sizes.values())
    if len(distinct) > 1:
        raise RocketlabError(_("{path}: {what} files differ in size ({sizes} bytes)").format(
            path=directory, what=_(_KIND_NAMES[what]), sizes=", ".join(map(str, sorted(distinct)))))
    if mapped_file_size is not None and distinct and distinct != {mapped_file_size}:
        raise RocketlabError(_("{path}: {what} files are {size} bytes, not the mapped file size {mapped} given").format(
            path=directory, what=_(_KIND_NAMES[what]), size=distinct.pop(), mapped=mapped_file_size))
    if what == "commit log":
        for f, size in sizes.items():
            if int(f.name) % max(1, size):
                raise RocketlabError(_("{path}: its name (start offset {offset}) is not a multiple of the file size "
                                       "{size}").format(path=f, offset=int(f.name), size=size))


def _kind_of_log(first: Path) -> str:
    """``classic`` when the first file starts with a record (or is empty), ``dledger`` for an entry."""
    with open(first, "rb") as f:
        head = f.read(8)
    if len(head) < 8 or head == b"\0" * 8:
        return "classic"
    size, magic = _HEAD.unpack(head)
    if magic in RECORD_MAGICS or magic == BLANK_MAGIC_CODE:
        return "classic"
    if size in VALID_MAGICS or size == DLEDGER_BLANK:
        return "dledger"
    raise RocketlabError(_("{path}: starts with neither a commit-log record nor a DLedger entry (first 8 bytes "
                           "{head})").format(path=first, head=head.hex()))


def find_commit_logs(path: str | Path, mapped_file_size: int | None = None) -> list[StoreFile]:
    """Every commit-log file under ``path`` (see the module docstring), in store then offset order."""
    root = Path(path)
    if not root.exists():
        raise RocketlabError(_("{path}: no such file or directory").format(path=root))
    if root.is_file():
        if not FILE_NAME.match(root.name):
            raise RocketlabError(_("{path}: a commit log file is named by its 20-digit start offset").format(path=root))
        return [StoreFile(str(root), str(root.parent), _node_of(root), _kind_of_log(root))]
    logs = _log_dirs(root)
    if not logs:
        raise RocketlabError(_("{path}: no commit log here (looked for commitlog/ and DLedger data/ directories, "
                               "or 20-digit files)").format(path=root))
    out = []
    for directory in logs:
        files = _numbered(directory, "commit log")
        _same_size(files, directory, "commit log", mapped_file_size)
        if files:
            kind = _kind_of_log(files[0])
            store = directory.parent if directory.name in ("commitlog", "data") else directory
            out += [StoreFile(str(f), str(store), _node_of(f), kind) for f in files]
    return out


def _log_dirs(root: Path) -> list[Path]:
    """``root`` itself when it holds 20-digit files; else every ``commitlog/`` and DLedger ``data/`` directory
    (one with an ``index/`` beside it) below it: a run's ``nodes/<id>/store/commitlog``,
    ``nodes/<id>/store/dledger-<id>/data`` (a broker on DLedger), ``nodes/<id>/data`` (a bare DLedger
    member), in path order."""
    entries = [e for e in sorted(root.iterdir()) if not e.name.startswith(".")]
    if entries and all(FILE_NAME.match(e.name) and e.is_file() for e in entries):
        return [root]
    found = []
    for directory, subdirs, _files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("consumequeue", "index", "config") and not d.startswith("."))
        here = Path(directory)
        if here.name == "commitlog" or (here.name == "data" and (here.parent / "index").is_dir()):
            found.append(here)
            subdirs[:] = []
    return found


def find_consume_queues(path: str | Path) -> list[StoreFile]:
    """Every consume-queue file under ``path`` (a run, node or store directory, ``consumequeue/``, a topic
    or queue directory)."""
    root = Path(path)
    if not root.is_dir():
        raise RocketlabError(_("{path}: no such directory").format(path=root))
    tops = [root] if root.name == "consumequeue" else sorted(p for p in root.rglob("consumequeue") if p.is_dir())
    if not tops and root.parent.name == "consumequeue":  # a topic directory
        tops, only_topic = [root.parent], root.name
    else:
        only_topic = None
    if not tops and root.parent.parent.name == "consumequeue":  # a queue directory
        return [StoreFile(str(f), str(root.parent.parent.parent), _node_of(f), "consumequeue", root.parent.name,
                          int(root.name)) for f in _numbered(root, "consume queue")]
    if not tops:
        raise RocketlabError(_("{path}: no consumequeue/ directory here").format(path=root))
    out = []
    for top in tops:
        for topic_dir in sorted(p for p in top.iterdir() if p.is_dir()):
            if only_topic is not None and topic_dir.name != only_topic:
                continue
            for queue_dir in sorted((p for p in topic_dir.iterdir() if p.is_dir()), key=lambda p: (len(p.name), p.name)):
                if not queue_dir.name.lstrip("-").isdigit():
                    raise RocketlabError(_("{path}: a queue directory is named by its queue id").format(path=queue_dir))
                files = _numbered(queue_dir, "consume queue")
                _same_size(files, queue_dir, "consume queue", None)
                out += [StoreFile(str(f), str(top.parent), _node_of(f), "consumequeue", topic_dir.name,
                                  int(queue_dir.name)) for f in files]
    return out


def find_index_files(path: str | Path) -> list[StoreFile]:
    """Every index file under ``path`` (a run, node or store directory, or ``index/``)."""
    root = Path(path)
    if not root.is_dir():
        raise RocketlabError(_("{path}: no such directory").format(path=root))
    dirs = [root] if root.name == "index" else sorted(p for p in root.rglob("index")
                                                     if p.is_dir() and (p.parent / "commitlog").is_dir())
    if not dirs:
        raise RocketlabError(_("{path}: no index/ directory of a store here").format(path=root))
    out = []
    for d in dirs:
        names = sorted(n for n in os.listdir(d) if not n.startswith("."))
        bad = [n for n in names if not re.match(r"^\d{17}$", n)]
        if bad:
            raise RocketlabError(_("{path}: not an index file (named by its creation time, 17 digits)").format(
                path=d / bad[0]))
        out += [StoreFile(str(d / n), str(d.parent), _node_of(d / n), "index") for n in names]
    return out


# ------------------------------------------------------------------------------ rows
def _mapped(path: str) -> mmap.mmap | None:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return None
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def _record_fields(buf: Any, pos: int, limit: int) -> dict[str, Any]:
    m = decode_message(buf, pos, limit=limit)
    return {"total_size": m.store_size, "magic_code": m.magic_code, "version": m.version, "body_crc": m.body_crc,
            "body_crc_ok": (zlib.crc32(m.body) & 0x7FFFFFFF) == m.body_crc, "queue_id": m.queue_id, "flag": m.flag,
            "queue_offset": m.queue_offset, "physical_offset": m.commit_log_offset, "sys_flag": m.sys_flag,
            "born_timestamp": m.born_timestamp, "born_host": host_string(m.born_host),
            "store_timestamp": m.store_timestamp, "store_host": host_string(m.store_host),
            "reconsume_times": m.reconsume_times, "prepared_transaction_offset": m.prepared_transaction_offset,
            "topic": m.topic, "properties": dict(m.properties), "tags": m.tags, "keys": m.keys, "msg_id": m.msg_id,
            "body": bytes(m.body)}


def _row(columns: list[tuple[str, str]], values: dict[str, Any]) -> tuple:
    return tuple(values.get(name) for name, _ in columns)


def commit_log_rows(f: StoreFile, start: int = 0, end: int | None = None) -> Iterator[tuple]:
    """The rows of one commit-log file (columns :data:`COMMIT_LOG_COLUMNS`); from the record (entry) at
    ``start``, up to the one at ``end`` when given (a part of the file split at record boundaries)."""
    base = int(os.path.basename(f.path))
    common = {"run": f.run, "store": f.store, "node": f.node, "kind": f.kind, "file": os.path.basename(f.path)}
    mm = _mapped(f.path)
    if mm is None:
        return
    try:
        if f.kind == "dledger":
            yield from _dledger_rows(mm, base, common, start, end)
            return
        pos, size = start, len(mm)
        while pos + 8 <= size and (end is None or pos < end):
            total, magic = _HEAD.unpack_from(mm, pos)
            if (total, magic) == (0, 0) or magic == BLANK_MAGIC_CODE:
                return  # the end of the written data / the END_OF_FILE blank
            try:
                fields = _record_fields(mm, pos, size)
            except CodecError as e:
                yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + pos,
                                                "corrupt": f"{common['file']} at phy offset {base + pos}: {e}"})
                return
            yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + pos, **fields})
            pos += fields["total_size"]
    finally:
        mm.close()


def _dledger_rows(mm: mmap.mmap, base: int, common: dict[str, Any], start: int = 0,
                  end: int | None = None) -> Iterator[tuple]:
    pos, size = start, len(mm)
    while pos + 4 <= size and (end is None or pos < end):
        if struct.unpack_from(">i", mm, pos)[0] == DLEDGER_BLANK:
            return
        where = f"{common['file']} at pos {base + pos}"
        if pos + BODY_OFFSET > size:
            yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + pos,
                                            "corrupt": f"{where}: only {size - pos} bytes left for an entry header"})
            return
        magic, total, index, term, entry_pos, _channel, _chain, _crc, body_size = _ENTRY_HEADER.unpack_from(mm, pos)
        if (magic, total) == (0, 0):
            return
        problem = None
        if magic not in VALID_MAGICS:
            problem = f"entry magic {magic} is not one of {VALID_MAGICS}"
        elif total < BODY_OFFSET or body_size != total - BODY_OFFSET or pos + total > size:
            problem = f"entry size {total} does not match bodySize {body_size} + {BODY_OFFSET} within the file"
        elif entry_pos != base + pos:
            problem = f"the entry header says pos {entry_pos}"
        if problem is not None:
            yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + pos, "corrupt": f"{where}: {problem}"})
            return
        entry = {"dledger_index": index, "dledger_term": term, "dledger_pos": entry_pos}
        body_at, body_end = pos + BODY_OFFSET, pos + total
        record = body_size >= 8 and _HEAD.unpack_from(mm, body_at)[1] in RECORD_MAGICS
        if record:
            try:
                fields = _record_fields(mm, body_at, body_end)
            except CodecError as e:
                yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + body_at, **entry,
                                                "corrupt": f"{common['file']} at phy offset {base + body_at}: {e}"})
                return
            yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + body_at, **entry, **fields})
        else:  # a bare DLedger payload or a no-op entry
            yield _row(COMMIT_LOG_COLUMNS, {**common, "phy_offset": base + body_at, **entry,
                                            "body": bytes(mm[body_at:body_end])})
        pos += total


def consume_queue_rows(f: StoreFile) -> Iterator[tuple]:
    """The units of one consume-queue file up to its first empty unit (columns :data:`CONSUME_QUEUE_COLUMNS`)."""
    name = os.path.basename(f.path)
    common = {"run": f.run, "store": f.store, "node": f.node, "topic": f.topic, "queue_id": f.queue_id, "file": name}
    mm = _mapped(f.path)
    if mm is None:
        return
    try:
        if len(mm) % UNIT.size:
            yield _row(CONSUME_QUEUE_COLUMNS, {**common, "corrupt": f"{name}: size {len(mm)} is not a multiple of "
                                                                    f"{UNIT.size}-byte units"})
            return
        base = int(name)
        for pos in range(0, len(mm), UNIT.size):
            phy, size, tags_code = UNIT.unpack_from(mm, pos)
            if phy < 0 or size <= 0:
                return
            yield _row(CONSUME_QUEUE_COLUMNS, {**common, "queue_offset": (base + pos) // UNIT.size, "phy_offset": phy,
                                               "size": size, "tags_code": tags_code,
                                               "filler": size == INT_MAX and phy == 0})
    finally:
        mm.close()


def index_slot_count(file_size: int, hash_slot_num: int | None = None) -> int:
    """How many hash slots an index file of ``file_size`` bytes has: ``hash_slot_num`` when given (the
    store's ``maxHashSlotNum``), else what the size implies under RocketMQ's ratio of 4 entries per slot
    (``maxIndexNum = 4 * maxHashSlotNum``: 5,000,000 slots in a 420,000,040-byte file by default).

    The header's ``hashSlotCount`` is the number of slots *in use*, not the size of the slot table, so it
    cannot place the entries. Raises :class:`RocketlabError` when the size fits no such layout."""
    if hash_slot_num is not None:
        if hash_slot_num <= 0:
            raise RocketlabError(_("hashSlotNum must be positive, got {value}").format(value=hash_slot_num))
        return hash_slot_num
    per_slot = HASH_SLOT_SIZE + 4 * INDEX_SIZE
    if file_size <= INDEX_HEADER_SIZE or (file_size - INDEX_HEADER_SIZE) % per_slot:
        raise RocketlabError(_("an index file of {size} bytes does not have 4 entries per hash slot: give its "
                               "maxHashSlotNum (option hashSlotNum)").format(size=file_size))
    return (file_size - INDEX_HEADER_SIZE) // per_slot


def index_rows(f: StoreFile, hash_slot_num: int | None = None) -> Iterator[tuple]:
    """The entries 1..indexCount-1 of one index file (entry 0 is never used), with the header's fields.

    Entries start after the whole slot table, ``hash_slot_num`` slots (:func:`index_slot_count`); ``slot``
    is the slot a key hashes to (``keyHash % maxHashSlotNum``, as ``IndexFile.putKey``)."""
    name = os.path.basename(f.path)
    common = {"run": f.run, "store": f.store, "node": f.node, "file": name}
    mm = _mapped(f.path)
    if mm is None:
        return
    try:
        if len(mm) < INDEX_HEADER_SIZE:
            yield _row(INDEX_COLUMNS, {**common, "corrupt": f"{name}: {len(mm)} bytes, shorter than the 40-byte header"})
            return
        begin_ts, end_ts, begin_phy, end_phy, used_slots, count = _INDEX_HEADER.unpack_from(mm, 0)
        header = {"begin_timestamp": begin_ts, "end_timestamp": end_ts, "begin_phy_offset": begin_phy,
                  "end_phy_offset": end_phy, "hash_slot_count": used_slots, "index_count": count}
        try:
            slots = index_slot_count(len(mm), hash_slot_num)
        except RocketlabError as e:
            yield _row(INDEX_COLUMNS, {**common, **header, "corrupt": f"{name}: {e}"})
            return
        entries_at = INDEX_HEADER_SIZE + HASH_SLOT_SIZE * slots
        for n in range(1, count):
            at = entries_at + n * INDEX_SIZE
            if at + INDEX_SIZE > len(mm):
                yield _row(INDEX_COLUMNS, {**common, **header, "index_no": n,
                                           "corrupt": f"{name}: entry {n} of {count} lies beyond the file's end"})
                return
            key_hash, phy, time_diff, prev = _INDEX_ENTRY.unpack_from(mm, at)
            yield _row(INDEX_COLUMNS, {**common, **header, "index_no": n, "key_hash": key_hash,
                                       "slot": key_hash % slots, "phy_offset": phy,
                                       "time_diff": time_diff, "prev_index": prev})
    finally:
        mm.close()


__all__ = [
    "COMMIT_LOG_COLUMNS", "CONSUME_QUEUE_COLUMNS", "INDEX_COLUMNS", "StoreFile", "commit_log_rows",
    "consume_queue_rows", "find_commit_logs", "find_consume_queues", "find_index_files", "index_rows",
    "index_slot_count",
]
