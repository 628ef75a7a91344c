"""``rocketlab commitlog dump`` and ``rocketlab consumequeue dump``: decode store files, one record a line.

The main CLI calls :func:`register` with its subparsers; each subcommand sets ``func(args) -> int``.
Bad input raises :class:`~rocketlab.errors.RocketlabError` (the main CLI prints it and exits 2).
Files are mapped read-only and walked record by record; nothing is read whole and nothing is changed.
Run standalone with ``python -m rocketlab.store.cli commitlog dump PATH [--json]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import mmap
import os
import struct
import sys
import zlib
from collections.abc import Iterator
from typing import Any, TextIO

from rocketlab.errors import CodecError, RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.store.config import MessageStoreConfig
from rocketlab.store.consume_queue import INT_MAX, UNIT
from rocketlab.store.mapped_file import FILE_NAME_RE
from rocketlab.store.message import host_string
from rocketlab.store.message_codec import decode_message
from rocketlab.store.record_layout import BLANK_MAGIC_CODE

_HEAD = struct.Struct(">ii")
_TEXT_BODY_LIMIT = 64


# ------------------------------------------------------------------------------------ paths ----
_COMMIT_LOG_NAME = N_("{path}: not a commit log file (expected a 20-digit name)")
_CONSUME_QUEUE_NAME = N_("{path}: not a consume queue file (expected a 20-digit name)")


def _store_files(directory: str, what: str) -> list[str]:
    """The store files of ``directory``; ``what`` is the error for a stranger (one of the two above)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise RocketlabError(_("{path}: cannot read directory: {why}").format(path=directory, why=exc.strerror)) from exc
    files = []
    for name in names:
        if name.startswith("."):
            continue
        path = os.path.join(directory, name)
        if not FILE_NAME_RE.match(name) or not os.path.isfile(path):
            raise RocketlabError(_(what).format(path=path))
        files.append(path)
    return files


def _commit_log_files(path: str) -> list[str]:
    if os.path.isfile(path):
        if not FILE_NAME_RE.match(os.path.basename(path)):
            raise RocketlabError(_("{path}: a commit log file is named by its 20-digit start offset").format(path=path))
        return [path]
    if not os.path.isdir(path):
        raise RocketlabError(_("{path}: no such file or directory").format(path=path))
    if os.path.isdir(os.path.join(path, "commitlog")):
        path = os.path.join(path, "commitlog")
    files = _store_files(path, _COMMIT_LOG_NAME)
    sizes = {os.path.getsize(f) for f in files}
    if len(sizes) > 1:
        raise RocketlabError(_("{path}: commit log files differ in size ({sizes} bytes)").format(
            path=path, sizes=", ".join(map(str, sorted(sizes)))))
    return files


def _queue_dirs(path: str) -> list[tuple[str | None, int | None, list[str]]]:
    """(topic, queue_id, files) for a CQ file, a queue dir, a topic dir, consumequeue/ or a store root."""
    if os.path.isfile(path):
        parent = os.path.dirname(os.path.abspath(path))
        qid = os.path.basename(parent)
        topic = os.path.basename(os.path.dirname(parent))
        if not FILE_NAME_RE.match(os.path.basename(path)):
            raise RocketlabError(_("{path}: a consume queue file is named by its 20-digit logical offset").format(
                path=path))
        return [(topic, int(qid), [path])] if qid.lstrip("-").isdigit() else [(None, None, [path])]
    if not os.path.isdir(path):
        raise RocketlabError(_("{path}: no such file or directory").format(path=path))
    if os.path.isdir(os.path.join(path, "consumequeue")):
        path = os.path.join(path, "consumequeue")
    entries = [e for e in sorted(os.listdir(path)) if not e.startswith(".")]
    if entries and all(FILE_NAME_RE.match(e) for e in entries):  # a queue directory
        qid = os.path.basename(os.path.abspath(path))
        topic = os.path.basename(os.path.dirname(os.path.abspath(path)))
        if not qid.lstrip("-").isdigit():
            return [(None, None, _store_files(path, _CONSUME_QUEUE_NAME))]
        return [(topic, int(qid), _store_files(path, _CONSUME_QUEUE_NAME))]
    if entries and all(e.lstrip("-").isdigit() for e in entries):  # a topic directory
        topic = os.path.basename(os.path.abspath(path))
        return [(topic, int(q), _store_files(os.path.join(path, q), _CONSUME_QUEUE_NAME)) for q in sorted(entries, key=int)]
    out = []
    for topic in entries:  # the consumequeue directory
        tdir = os.path.join(path, topic)
        if not os.path.isdir(tdir):
            raise RocketlabError(_("{path}: unexpected file in a consume queue directory").format(path=tdir))
        for q in sorted((e for e in os.listdir(tdir) if not e.startswith(".")), key=lambda e: (len(e), e)):
            if not q.lstrip("-").isdigit():
                raise RocketlabError(_("{path}: a queue directory must be named by its id").format(
                    path=os.path.join(tdir, q)))
            out.append((topic, int(q), _store_files(os.path.join(tdir, q), _CONSUME_QUEUE_NAME)))
    return out


def _mapped(path: str) -> mmap.mmap | None:
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise RocketlabError(_("{path}: cannot read: {why}").format(path=path, why=exc.strerror)) from exc


# ----------------------------------------------------------------------------- commit log ----
def iter_commit_log(path: str) -> Iterator[dict[str, Any]]:
    """Every record of a commit log directory or file as a dict (messages and blanks), in order.

    Raises RocketlabError at the first record that does not decode, after yielding all before it.
    """
    for file_path in _commit_log_files(path):
        base = int(os.path.basename(file_path))
        mm = _mapped(file_path)
        if mm is None:
            continue
        try:
            yield from _iter_file(mm, base, os.path.basename(file_path))
        finally:
            mm.close()


def _iter_file(mm: mmap.mmap, base: int, name: str) -> Iterator[dict[str, Any]]:
    pos, size = 0, len(mm)
    while pos + 8 <= size:
        total, magic = _HEAD.unpack_from(mm, pos)
        if total == 0 and magic == 0:
            return  # end of the written data
        if magic == BLANK_MAGIC_CODE:
            yield {"type": "blank", "file": name, "phy_offset": base + pos, "total_size": total, "magic_code": "0xCBD43194"}
            return
        try:
            m = decode_message(mm, pos, limit=size)
        except CodecError as exc:
            why = exc.detail if exc.offset is None else _("{why} (at offset {offset})").format(
                why=exc.detail, offset=exc.offset)
            raise RocketlabError(_("{file}: invalid record at phy offset {offset}: {why}").format(
                file=name, offset=base + pos, why=why)) from exc
        crc = zlib.crc32(m.body) & 0x7FFFFFFF
        try:
            body_text: str | None = m.body.decode("utf-8")
        except UnicodeDecodeError:
            body_text = None
        yield {
            "type": "message",
            "file": name,
            "phy_offset": base + pos,
            "total_size": m.store_size,
            "magic_code": f"0x{m.magic_code & 0xFFFFFFFF:08X}",
            "version": m.version,
            "body_crc": m.body_crc,
            "body_crc_ok": crc == m.body_crc,
            "queue_id": m.queue_id,
            "flag": m.flag,
            "queue_offset": m.queue_offset,
            "physical_offset": m.commit_log_offset,
            "sys_flag": m.sys_flag,
            "born_timestamp": m.born_timestamp,
            "born_host": host_string(m.born_host),
            "store_timestamp": m.store_timestamp,
            "store_host": host_string(m.store_host),
            "reconsume_times": m.reconsume_times,
            "prepared_transaction_offset": m.prepared_transaction_offset,
            "body_length": len(m.body),
            "body": body_text,
            "body_base64": base64.b64encode(m.body).decode("ascii"),
            "topic": m.topic,
            "properties": m.properties,
            "tags": m.tags,
            "keys": m.keys,
            "tags_code": m.tags_code,
            "msg_id": m.msg_id,
        }
        pos += m.store_size


def _text_line(rec: dict[str, Any]) -> str:
    if rec["type"] == "blank":
        return f"phy={rec['phy_offset']} BLANK size={rec['total_size']} (end of file {rec['file']})"
    body = base64.b64decode(rec["body_base64"])
    shown = repr(body[:_TEXT_BODY_LIMIT]) + (f"...({len(body)} bytes)" if len(body) > _TEXT_BODY_LIMIT else "")
    skip = {"type", "file", "phy_offset", "body", "body_base64", "tags", "keys", "properties"}
    fields = " ".join(f"{k}={v}" for k, v in rec.items() if k not in skip)
    return f"phy={rec['phy_offset']} {fields} properties={rec['properties']} body={shown}"


# --------------------------------------------------------------------------- consume queue ----
MAX_UNIT_SIZE = MessageStoreConfig().max_message_size + 2 * 32_767 + 1_024
"""The largest record a consume-queue unit can point at: a body of RocketMQ's ``maxMessageSize`` (4 MiB by
default), the longest topic and properties (32,767 chars each) and the fixed fields."""


def iter_consume_queue(path: str) -> Iterator[dict[str, Any]]:
    """Every unit of the consume queue(s) under ``path``, stopping each file at its first empty unit.

    A unit that is neither a message's (a position >= 0 and a size from 1 to :data:`MAX_UNIT_SIZE`), nor a
    filler (0, ``Integer.MAX_VALUE``), nor the all-zero unwritten rest of a file is not a consume queue
    unit: RocketlabError after the units before it (random bytes are refused, not printed as rows)."""
    for topic, queue_id, files in _queue_dirs(path):
        sizes = {os.path.getsize(f) for f in files}
        if len(sizes) > 1:
            raise RocketlabError(_("consume queue {topic}/{queue_id}: files differ in size ({sizes})").format(
                topic=topic, queue_id=queue_id, sizes=sorted(sizes)))
        for file_path in files:
            name = os.path.basename(file_path)
            base = int(name)
            mm = _mapped(file_path)
            if mm is None:
                continue
            try:
                if len(mm) % UNIT.size:
                    raise RocketlabError(_("{path}: size {size} is not a multiple of {unit}-byte units").format(
                        path=file_path, size=len(mm), unit=UNIT.size))
                for pos in range(0, len(mm), UNIT.size):
                    phy, size, tags_code = UNIT.unpack_from(mm, pos)
                    if phy == 0 and size == 0 and tags_code == 0:
                        break  # the unwritten rest of the file (Java's recovery stops here too)
                    if not (size == INT_MAX and phy == 0) and (phy < 0 or not 0 < size <= MAX_UNIT_SIZE):
                        raise RocketlabError(_(
                            "{path}: the 20 bytes at {pos} are not a consume queue unit (commit log offset "
                            "{phy}, size {size}): a torn write, or not a consume queue file").format(
                                path=file_path, pos=pos, phy=phy, size=size))
                    yield {
                        "topic": topic,
                        "queue_id": queue_id,
                        "queue_offset": (base + pos) // UNIT.size,
                        "phy_offset": phy,
                        "size": size,
                        "tags_code": tags_code,
                        "filler": size == INT_MAX and phy == 0,
                        "file": name,
                    }
            finally:
                mm.close()


def _cq_text_line(rec: dict[str, Any]) -> str:
    kind = " FILLER" if rec["filler"] else ""
    return (
        f"{rec['topic']}:{rec['queue_id']} qoff={rec['queue_offset']} phy={rec['phy_offset']} "
        f"size={rec['size']} tags_code={rec['tags_code']}{kind}"
    )


# ------------------------------------------------------------------------------- handlers ----
def _emit(records: Iterator[dict[str, Any]], as_json: bool, text: Any, out: TextIO) -> int:
    """Write one line per record (a closed pipe raises BrokenPipeError, which the main CLI reports)."""
    for rec in records:
        out.write((json.dumps(rec, ensure_ascii=False) if as_json else text(rec)) + "\n")
    out.flush()
    return 0


def commitlog_dump(args: argparse.Namespace) -> int:
    return _emit(iter_commit_log(args.path), args.json, _text_line, sys.stdout)


def consumequeue_dump(args: argparse.Namespace) -> int:
    return _emit(iter_consume_queue(args.path), args.json, _cq_text_line, sys.stdout)


def register(subparsers: Any) -> None:
    """Add ``commitlog dump`` and ``consumequeue dump`` to an argparse subparsers object."""
    cl = subparsers.add_parser("commitlog", help=_("inspect CommitLog files"))
    cl_sub = cl.add_subparsers(dest="commitlog_command", required=True, metavar="SUBCOMMAND")
    d = cl_sub.add_parser("dump", help=_("decode a commit log directory or file, one message per line"))
    d.add_argument("path", help=_("a store root, its commitlog/ directory, or one commit log file"))
    d.add_argument("--json", action="store_true", help=_("one JSON object per line, every field"))
    d.set_defaults(func=commitlog_dump)

    cq = subparsers.add_parser("consumequeue", help=_("inspect ConsumeQueue files"))
    cq_sub = cq.add_subparsers(dest="consumequeue_command", required=True, metavar="SUBCOMMAND")
    d = cq_sub.add_parser("dump", help=_("decode consume queue units, one per line"))
    d.add_argument("path", help=_("a store root, consumequeue/, a topic or queue directory, or one file"))
    d.add_argument("--json", action="store_true", help=_("one JSON object per line"))
    d.set_defaults(func=consumequeue_dump)

