"""DLedger 0.3.1.2's ``DLedgerMmapFileStore`` and ``MemberState`` beside ours.

:class:`JavaDLedger` opens a member's directory with the real store (load + recover, ``currterm`` read by
``MemberState``), appends as leader of a term, commits, and reads every entry back; :func:`our_member`
reads the same directory with ours into the same shape: begin and end index, end term, committed index,
term and vote, and every entry (index, term, pos, size, magic, channel, the two CRCs, body).

Java's store lives in ``<storeBaseDir>/dledger-<selfId>``; a member of a bare rocketlab group keeps the
same files directly in its node directory, so :func:`java_layout` copies a member into that layout (the
copy is what Java recovers, never the original). File sizes come from the files themselves.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path
from typing import Any

from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.member_state import MemberState
from rocketlab.dledger.store import DLedgerMmapFileStore
from rocketlab.oracle.jvm import OracleProcess

DEFAULT_INDEX_FILE_SIZE = 32 * 5 * 1024 * 1024
"""DLedgerConfig's default ``mappedFileSizeForEntryIndex`` (160 MiB): the only one a 4.9.5 broker on DLedger
opens (``DLedgerCommitLog`` never sets it)."""


def file_size(directory: Path, default: int) -> int:
    """The size of the mapped files in ``directory`` (all the same), or ``default`` when there are none."""
    sizes = {p.stat().st_size for p in directory.iterdir() if p.is_file()} if directory.is_dir() else set()
    if len(sizes) > 1:
        raise ValueError(f"{directory}: mapped files of different sizes {sorted(sizes)}")
    return sizes.pop() if sizes else default


def member_sizes(member_dir: str | os.PathLike[str]) -> tuple[int, int]:
    """(data file size, index file size) of a member's directory."""
    d = Path(member_dir)
    return file_size(d / "data", 1024 * 1024 * 1024), file_size(d / "index", DEFAULT_INDEX_FILE_SIZE)


def java_layout(member_dir: str | os.PathLike[str], base: str | os.PathLike[str], self_id: str) -> Path:
    """Copy ``member_dir`` to ``base/dledger-<self_id>`` (DLedgerConfig's default path) and return ``base``."""
    target = Path(base) / f"dledger-{self_id}"
    shutil.copytree(member_dir, target)
    return Path(base)


def peers_of(self_id: str, port: int, others: tuple[str, ...] = ()) -> str:
    """A ``peers`` string with ``self_id`` on ``port`` and ``others`` on addresses nobody listens on."""
    return ";".join([f"{self_id}-127.0.0.1:{port}", *(f"{o}-127.0.0.1:1" for o in others)])


def _entry(e: dict[str, Any]) -> dict[str, Any]:
    out = {k: e[k] for k in ("index", "term", "pos", "size", "magic", "channel")}
    out.update(chain_crc=e["chainCrc"], body_crc=e["bodyCrc"])
    if "body" in e:
        out["body"] = base64.b64decode(e["body"])
    return out


def _state(reply: dict[str, Any]) -> dict[str, Any]:
    out = {"ledger_begin_index": reply["ledgerBeginIndex"], "ledger_end_index": reply["ledgerEndIndex"],
           "ledger_end_term": reply["ledgerEndTerm"], "committed_index": reply["committedIndex"],
           "curr_term": reply["currTerm"], "curr_vote_for": reply["currVoteFor"]}
    if "entries" in reply:
        out["entries"] = [_entry(e) for e in reply["entries"]]
    return out


class JavaDLedger:
    """A real ``DLedgerMmapFileStore`` of member ``self_id`` under ``base`` in ``proc``, started (load +
    recover). The elector is off: nothing but these commands touches the store."""

    def __init__(self, proc: OracleProcess, base: str | os.PathLike[str], self_id: str, *, data_file_size: int,
                 index_file_size: int = DEFAULT_INDEX_FILE_SIZE, group: str = "default", peers: str | None = None):
        self.proc = proc
        config = {"storeBaseDir": os.fspath(base), "selfId": self_id, "group": group,
                  "peers": peers or peers_of(self_id, 1), "mappedFileSizeForEntryData": data_file_size,
                  "mappedFileSizeForEntryIndex": index_file_size}
        self.opened = _state(proc.request("dledgerOpen", config=config, timeout_s=120))

    def append(self, term: int, bodies: list[bytes]) -> list[dict[str, Any]]:
        """``appendAsLeader`` of each body in ``term`` (reached as an elector does: candidate, nextTerm, vote)."""
        reply = self.proc.request("dledgerAppend", term=term,
                                  bodies=[base64.b64encode(b).decode("ascii") for b in bodies])
        return [_entry(e) for e in reply["entries"]]

    def commit(self, index: int) -> dict[str, Any]:
        return _state(self.proc.request("dledgerCommit", index=index))

    def read(self) -> dict[str, Any]:
        """State and every entry from the begin to the end index."""
        return _state(self.proc.request("dledgerRead", timeout_s=120))

    def close(self) -> None:
        """``shutdown``: flush, then the checkpoint."""
        self.proc.request("dledgerClose", timeout_s=60)


def our_member(member_dir: str | os.PathLike[str], self_id: str, *, entries: bool = True) -> dict[str, Any]:
    """Our store's reading of ``member_dir`` (recovered as Java recovers it) in :class:`JavaDLedger`'s shape.
    Opens the directory itself: give it a copy if it must not change."""
    data_size, index_size = member_sizes(member_dir)
    config = DLedgerConfig(self_id=self_id, peers=peers_of(self_id, 1), mapped_file_size_for_entry_data=data_size,
                           mapped_file_size_for_entry_index=index_size, fsync_policy="never")
    d = Path(member_dir)
    member_state = MemberState(config, d)
    store = DLedgerMmapFileStore(config, member_state, d)
    store.startup()
    try:
        out: dict[str, Any] = {"ledger_begin_index": store.ledger_begin_index, "ledger_end_index": store.ledger_end_index,
                               "ledger_end_term": store.ledger_end_term, "committed_index": store.committed_index,
                               "curr_term": member_state.curr_term, "curr_vote_for": member_state.curr_vote_for}
        if entries:
            rows = []
            for i in range(store.ledger_begin_index, store.ledger_end_index + 1) if store.ledger_begin_index >= 0 else ():
                e = store.get(i)
                rows.append({"index": e.index, "term": e.term, "pos": e.pos, "size": e.size, "magic": e.magic,
                             "channel": e.channel, "chain_crc": e.chain_crc, "body_crc": e.body_crc,
                             "body": bytes(e.body or b"")})
            out["entries"] = rows
        return out
    finally:
        store.close()


__all__ = ["DEFAULT_INDEX_FILE_SIZE", "JavaDLedger", "java_layout", "member_sizes", "our_member", "peers_of"]
