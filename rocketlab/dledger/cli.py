"""``rocketlab dledger dump PATH [--json]``: decode a DLedger data directory, one entry per line.

PATH is a member's store directory (the one holding ``data/``, ``index/``, ``currterm``), its ``data/``
directory, or one data file (named by its 20-digit start offset). Entries are walked file by file from
the headers alone - the index files are not needed - and checked as recovery checks them: a valid magic,
``size = 48 + bodySize``, ``pos`` = where the entry sits, indexes contiguous and terms never falling.
A blank (magic -1) ends a file; an all-zero header ends the log. The first entry that fails a check
stops the dump with a one-line error (exit 2) after the good entries before it were printed.

The main CLI calls :func:`register` with its subparsers; bad input raises
:class:`~rocketlab.errors.RocketlabError`. Files are read with ``pread``, never changed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import struct
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from rocketlab.dledger.entry import BLANK_MAGIC_CODE, BODY_OFFSET, MAGIC_NOOP, VALID_MAGICS
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _

FILE_NAME_RE = re.compile(r"^\d{20}$")
_HEADER = struct.Struct(">iiqqqiiii")
_PREVIEW = 48


def data_files(path: str) -> list[str]:
    """The data files under ``path`` (see the module docstring), in offset order."""
    if os.path.isfile(path):
        if not FILE_NAME_RE.match(os.path.basename(path)):
            raise RocketlabError(_("{path}: a DLedger data file is named by its 20-digit start offset").format(path=path))
        return [path]
    if not os.path.isdir(path):
        raise RocketlabError(_("{path}: no such file or directory").format(path=path))
    if os.path.isdir(os.path.join(path, "data")):
        path = os.path.join(path, "data")
    try:
        names = sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError as exc:
        raise RocketlabError(_("{path}: cannot read directory: {why}").format(path=path, why=exc.strerror)) from exc
    files = []
    for name in names:
        full = os.path.join(path, name)
        if not FILE_NAME_RE.match(name) or not os.path.isfile(full):
            raise RocketlabError(_("{path}: not a DLedger data file (expected a 20-digit name; give the member's "
                                   "store directory, its data/ directory or one data file)").format(path=full))
        files.append(full)
    sizes = {os.path.getsize(f) for f in files}
    if len(sizes) > 1:
        raise RocketlabError(_("{path}: data files differ in size ({sizes} bytes)").format(
            path=path, sizes=", ".join(map(str, sorted(sizes)))))
    return files


def iter_entries(path: str) -> Iterator[dict[str, Any]]:
    """Every entry under ``path`` as a dict (snake_case keys), in order; RocketlabError at the first bad one."""
    last: tuple[int, int] | None = None  # (index, term) of the previous entry
    for file_path in data_files(path):
        name = os.path.basename(file_path)
        base = int(name)
        try:
            with open(file_path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                pos = 0
                while pos < size:
                    head = os.pread(f.fileno(), BODY_OFFSET, pos)
                    if len(head) >= 4 and struct.unpack_from(">i", head)[0] == BLANK_MAGIC_CODE:
                        break  # the rest of this file is padding
                    if len(head) < BODY_OFFSET:
                        raise RocketlabError(_("{file}: only {n} bytes left for an entry header at pos {pos}").format(
                            file=name, n=len(head), pos=base + pos))
                    if struct.unpack_from(">ii", head) == (0, 0):
                        return  # magic and size 0: the end of the log, as recovery reads it
                    entry = _decode(f.fileno(), head, name, base, pos, size, last)
                    last = (entry["index"], entry["term"])
                    yield entry
                    pos += entry["size"]
        except OSError as exc:
            raise RocketlabError(_("{path}: cannot read: {why}").format(path=file_path, why=exc.strerror)) from exc


def _decode(fd: int, head: bytes, name: str, base: int, pos: int, size: int,
            last: tuple[int, int] | None) -> dict[str, Any]:
    magic, total, index, term, entry_pos, channel, chain_crc, body_crc, body_size = _HEADER.unpack(head)
    where = _("{file}: invalid entry at pos {pos}").format(file=name, pos=base + pos)
    if magic not in VALID_MAGICS:
        raise RocketlabError(_("{where}: magic {magic} is not one of {valid}").format(
            where=where, magic=magic, valid=VALID_MAGICS))
    if total < BODY_OFFSET or body_size != total - BODY_OFFSET:
        raise RocketlabError(_("{where}: size {total} does not match bodySize {body_size} + {header}").format(
            where=where, total=total, body_size=body_size, header=BODY_OFFSET))
    if pos + total > size:
        raise RocketlabError(_("{where}: size {total} runs past the end of the file").format(where=where, total=total))
    if entry_pos != base + pos:
        raise RocketlabError(_("{where}: the header says pos {pos}").format(where=where, pos=entry_pos))
    if last is not None and index != last[0] + 1:
        raise RocketlabError(_("{where}: index {index} follows index {previous}").format(
            where=where, index=index, previous=last[0]))
    if last is not None and term < last[1]:
        raise RocketlabError(_("{where}: term {term} is lower than the previous entry's {previous}").format(
            where=where, term=term, previous=last[1]))
    body = os.pread(fd, body_size, pos + BODY_OFFSET)
    try:
        text: str | None = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"index": index, "term": term, "pos": entry_pos, "size": total, "magic": magic,
            "noop": magic == MAGIC_NOOP, "channel": channel, "chain_crc": chain_crc, "body_crc": body_crc,
            "body_length": body_size, "body": text, "body_base64": base64.b64encode(body).decode("ascii"),
            "file": name}


def text_line(rec: dict[str, Any]) -> str:
    body = base64.b64decode(rec["body_base64"])
    preview = repr(body[:_PREVIEW]) + ("..." if len(body) > _PREVIEW else "")
    kind = " NOOP" if rec["noop"] else ""
    return (f"index={rec['index']} term={rec['term']} pos={rec['pos']} size={rec['size']} magic={rec['magic']}"
            f"{kind} body_length={rec['body_length']} body={preview}")


def dledger_dump(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # a closed pipe (| head) raises BrokenPipeError: the main CLI ends quietly in one line
    for rec in iter_entries(args.path):
        out.write((json.dumps(rec, ensure_ascii=False) if args.json else text_line(rec)) + "\n")
    out.flush()
    return 0


def register(subparsers: Any) -> None:
    """Add ``dledger dump`` to an argparse subparsers object."""
    p = subparsers.add_parser("dledger", help=_("inspect DLedger store files"))
    sub = p.add_subparsers(dest="dledger_command", required=True, metavar="SUBCOMMAND")
    d = sub.add_parser("dump", help=_("decode a DLedger data directory or file, one entry per line"))
    d.add_argument("path", help=_("a member's store directory, its data/ directory, or one data file"))
    d.add_argument("--json", action="store_true", help=_("one JSON object per line, snake_case keys"))
    d.set_defaults(func=dledger_dump)

