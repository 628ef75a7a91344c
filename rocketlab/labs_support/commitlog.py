"""Helpers of lab 02 (the CommitLog store from bytes up): tables of what the store's files hold.

Everything here reads the real files of a :class:`~rocketlab.store.MessageStore` opened on tiny mapped
files; nothing is simulated but the crash (``simulate_crash``: the process dies, the page cache
survives, the ``abort`` file stays). The store's clock, a queue's messages and a record's fields come from
:mod:`rocketlab.scenarios.commitlog_store`, which the grader shares.
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Any

from rocketlab.i18n import _
from rocketlab.labs_support import kit_warnings_hidden
from rocketlab.scenarios.commitlog_store import TOPIC, TickClock, queue_messages
from rocketlab.store import Message, MessageStore, PutMessageStatus
from rocketlab.store.consume_queue import unit_position
from rocketlab.store.crash import simulate_crash
from rocketlab.store.index_file import index_key_hash_method, index_positions
from rocketlab.store.message_codec import BLANK_MAGIC_CODE
from rocketlab.store.recovery import RecoveryReport
from rocketlab.viz.language import kernel_language

kernel_language()  # lab 02 draws no figure: settle the twin's language here, so that its lines speak it

TINY = {"mapped_file_size_commit_log": 4096, "mapped_file_size_consume_queue": 20 * 16,
        "max_hash_slot_num": 16, "max_index_num": 64}
"""The lab's store: 4 KiB CommitLog files, 16-unit consume-queue files, 16 slots and 64 entries per index file."""
BODY_POSITION_V4 = 88  # where the body starts in a record with IPv4 hosts (after BODY length at 84)


def golden_message() -> Message:
    """The digest's worked example: topic FooBar, a 32-byte body, KEYS and TAGS, IPv4 hosts (157 bytes as 4.9.5 writes it)."""
    return Message(topic="FooBar", body=b"Once, there was a chance for me!", properties={"KEYS": "1700000000000",
                   "TAGS": "TAG1"}, born_timestamp=1_700_000_000_000, born_host=("127.0.0.1", 8123))


def open_store(root: str | Path, **options: Any) -> MessageStore:
    """A single-threaded store on :data:`TINY` files (options override)."""
    return MessageStore.open(root, clock=TickClock(), threads=False, **{**TINY, **options})


def commitlog_files(store: MessageStore) -> list[dict[str, Any]]:
    """Each CommitLog file: name, first offset, records, bytes written, and the END_OF_FILE blank if any."""
    rows = []
    for mf in store.commit_log.mapped_file_queue.mapped_files:
        data = bytes(mf.mm[:mf.file_size])
        pos, records, blank = 0, 0, None
        while pos + 8 <= len(data):
            size, magic = struct.unpack_from(">ii", data, pos)
            if size <= 0:
                break
            if magic == BLANK_MAGIC_CODE:
                blank = {"at": pos, "bytes": size}
                break
            records += 1
            pos += size
        rows.append({"file": os.path.basename(mf.file_name), "from_offset": mf.file_from_offset, "records": records,
                     "wrote_position": mf.wrote_position,
                     "end_of_file_blank": f"{blank['bytes']} bytes at {blank['at']}" if blank else "-"})
    return rows


def consume_queue_units(store: MessageStore, topic: str = TOPIC, queue_id: int = 0) -> list[dict[str, Any]]:
    """The units of one queue: queue offset, which file and where (``unit_position``), and the unit."""
    cq = store.get_consume_queue(topic, queue_id)
    rows = []
    for index in range(cq.get_max_offset_in_queue()):
        file_from, pos = unit_position(index, cq.mapped_file_size)
        unit = cq.get_unit(index)
        if unit is None:
            continue
        rows.append({"queue_offset": index, "file": f"{file_from:020d}", "position": pos,
                     "commit_log_offset": unit[0], "size": unit[1], "tags_code": unit[2]})
    return rows


def index_walk(store: MessageStore, key: str, topic: str = TOPIC) -> list[dict[str, Any]]:
    """A key's hash, its slot, and the chain of entries the slot leads to in the newest index file."""
    index_file = store.index_service.index_file_list[-1]
    key_hash = index_key_hash_method(f"{topic}#{key}")
    slot_pos = index_positions(key_hash, index_file.hash_slot_num, 0)[0]
    mm = index_file.mm
    nxt = struct.unpack_from(">i", mm, slot_pos)[0]
    rows = []
    while 0 < nxt <= index_file.index_header.index_count and len(rows) < 64:
        pos = index_positions(key_hash, index_file.hash_slot_num, nxt)[1]
        h, phy, diff, prev = struct.unpack_from(">iqii", mm, pos)
        rows.append({"entry": nxt, "position": pos, "key_hash": h, "same_key": h == key_hash, "phy_offset": phy,
                     "time_diff_s": diff, "prev_entry": prev, "slot": f"{slot_pos} (slot {key_hash % index_file.hash_slot_num})"})
        if prev == nxt:
            break
        nxt = prev
    return rows


def put_messages(store: MessageStore, count: int, body_size: int = 60, keys: int = 5) -> list[Any]:
    """``count`` messages to queue 0 of :data:`TOPIC`, bodies ``m-0000 ...`` of ``body_size`` bytes."""
    results = []
    for i in range(count):
        body = f"m-{i:04d} ".encode().ljust(body_size, b".")
        r = store.put_message(Message(TOPIC, body, keys=f"k{i % keys}", tags="T"))
        if r.status is not PutMessageStatus.PUT_OK:
            raise RuntimeError(f"put {i}: {r}")
        results.append(r)
    store.reput()
    return results


def flip_one_byte(root: str | Path, *, count: int = 60, victim: int = 30, body_size: int = 200) -> dict[str, Any]:
    """Put ``count`` messages, kill the store, flip one byte in the body of message ``victim``, restart:
    what recovery (abnormal, ``checkCRCOnRecover``) kept and cut."""
    store = open_store(root)
    results = put_messages(store, count, body_size)
    before = {"commit_log_bytes": store.get_max_phy_offset(), "files": len(commitlog_files(store)),
              "units": store.get_max_offset_in_queue(TOPIC, 0)}
    simulate_crash(store)
    target = results[victim].append_message_result
    size = TINY["mapped_file_size_commit_log"]
    path = Path(root) / "commitlog" / f"{target.wrote_offset // size * size:020d}"
    body_at = target.wrote_offset % size + BODY_POSITION_V4 + 10  # the 11th byte of the body
    with open(path, "r+b") as f:
        f.seek(body_at)
        byte = f.read(1)
        f.seek(body_at)
        f.write(bytes([byte[0] ^ 0x01]))
    with kit_warnings_hidden():  # the store logs the recovery it reports: the lab prints the report once
        store = open_store(root)
    try:
        report = store.recovery_report
        kept = [m.body[:6].decode() for m in queue_messages(store)]
        return {"before": before, "victim_offset": target.wrote_offset, "flipped_at": target.wrote_offset - target.wrote_offset % size + body_at,
                "summary": report.summary(), "report": report, "cut_bytes": report.truncated_bytes, "removed_files": report.removed_files,
                "units_trimmed": sum(report.consume_queue_units_removed.values()), "messages_left": len(kept),
                "last_message_left": kept[-1] if kept else None}
    finally:
        store.shutdown()


def flush_cost(root: str | Path, count: int = 200, body_size: int = 1024) -> dict[str, float]:
    """Mean wall time of a put under ASYNC_FLUSH and SYNC_FLUSH (an fsync per put) on this disk."""
    out = {}
    for mode in ("ASYNC_FLUSH", "SYNC_FLUSH"):
        store = MessageStore.open(Path(root) / mode, clock=TickClock(), threads=False, flush_disk_type=mode,
                                  mapped_file_size_commit_log=1024 * 1024)
        try:
            start = time.perf_counter()
            for i in range(count):
                store.put_message(Message(TOPIC, bytes(body_size), keys=f"k{i}"))
            out[mode] = (time.perf_counter() - start) / count * 1e6
        finally:
            store.shutdown()
    return out



# ---------------------------------------------------------------------- the lab's printed lines
def record_size_line(record: bytes) -> str:
    """A record's length, as its TOTALSIZE field says it."""
    return _("{n} bytes").format(n=len(record))


def full_files_line(files: Any, full: Any, results: list[Any]) -> str:
    """What section 2's table of CommitLog files shows (pandas, :func:`commitlog_files`; ``full``: its files that
    end with a blank): how many records a full file holds and why the blank is there."""
    return _("{files} files; each full file holds {records} records and ends with a blank of {blank}: the next "
             "{size}-byte record did not fit in what was left with 8 bytes to spare.").format(
        files=len(files), records=full.records.iloc[0], blank=full.end_of_file_blank.iloc[0],
        size=results[0].append_message_result.wrote_bytes)


def recovery_line(report: RecoveryReport) -> str:
    """``report.summary()`` in the reader's language (the store logs it in English): how recovery went, where the
    CommitLog ends, what it cut, removed and trimmed. Why a record was invalid stays as the store says it."""
    head = (_("normal recovery from {start}: {records} valid records, commit log ends at {end}") if report.normal
            else _("abnormal (abort file found) recovery from {start}: {records} valid records, commit log ends at {end}"))
    parts = [head.format(start=report.start_file or "-", records=report.records, end=report.process_offset)]
    if report.truncated:
        parts.append(_("cut {n} bytes at {offset} ({why})").format(
            n=report.truncated_bytes, offset=report.process_offset, why=report.stop_reason))
    if report.removed_files:
        parts.append(_("removed files {files}").format(files=", ".join(report.removed_files)))
    if report.consume_queue_units_removed:
        parts.append(_("trimmed {n} consume queue units").format(n=sum(report.consume_queue_units_removed.values())))
    if report.index_files_dropped:
        parts.append(_("dropped index files {files}").format(files=", ".join(report.index_files_dropped)))
    return _("; ").join(parts)


def pulled_line(pulled: list[Any]) -> str:
    """How many messages a consumer can pull after the restart."""
    return _("{n} messages can be pulled after the restart").format(n=len(pulled))


def flip_line(flip: dict[str, Any]) -> str:
    """What one flipped byte (:func:`flip_one_byte`) left: the messages before and after, the last one left."""
    before = flip["before"]
    return _("messages before: {before}, after: {after} (last one left: {last}); commit log bytes before: "
             "{bytes}").format(before=before["units"], after=flip["messages_left"], last=flip["last_message_left"],
                               bytes=f"{before['commit_log_bytes']:,}")


def flip_cost_line(flip: dict[str, Any]) -> str:
    """What one flipped byte (:func:`flip_one_byte`) cost: the CommitLog bytes from the victim on, the files
    deleted, the consume-queue units trimmed, the messages lost with them."""
    before = flip["before"]
    lost = before["commit_log_bytes"] - flip["victim_offset"]
    return _("one bad byte cost {lost} bytes of CommitLog: {cut} cut in the victim's file, {files} later files "
             "deleted, {units} consume-queue units trimmed, i.e. {messages} messages, all but one of them intact.").format(
        lost=f"{lost:,}", cut=f"{flip['cut_bytes']:,}", files=len(flip["removed_files"]), units=flip["units_trimmed"],
        messages=before["units"] - flip["messages_left"])


def flush_cost_lines(cost: dict[str, float]) -> str:
    """The mean cost of a put per flush mode (:func:`flush_cost`) and how many times slower SYNC_FLUSH is."""
    lines = [_("{mode} {micros} µs per put").format(mode=f"{mode:12}", micros=f"{micros:10,.0f}")
             for mode, micros in cost.items()]
    lines.append(_("SYNC_FLUSH is {times}x slower per put here; group commit (many producers sharing one fsync) is "
                   "how a broker gets its throughput back.").format(times=f"{cost['SYNC_FLUSH'] / cost['ASYNC_FLUSH']:.0f}"))
    return "\n".join(lines)
