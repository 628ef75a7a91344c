"""Helpers for ``labs/05_rocketmq_on_dledger.ipynb``: a RocketMQ broker group whose CommitLog is a
DLedger log (``enableDLegerCommitLog``), a record inside its entry, committed-only visibility, the
role change handler's wait, the stale consume-queue units a truncation leaves until restart, the smooth
upgrade from a classic commit log and the retention of old and DLedger files.

Everything here drives the real store, DLedger and broker cores in the simulator and reads them back;
the lab's cells only call these and print what they return. The lines they print come from the functions at
the end (``put_line``, ``failover_lines`` ...) through the one catalogue, so both twins run the same cells and
each speaks its reader's language (the stores' recovery summaries too: :func:`recovery_text`). The
group itself (``new_broker_group``, ``bodies``, ...) is built by :mod:`rocketlab.scenarios.broker_on_dledger`,
which the grader and the sample data share.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab.dledger.entry import BODY_OFFSET, DLedgerEntry
from rocketlab.i18n import N_, _
from rocketlab.labs_support import kit_warnings_hidden
from rocketlab.labs_support.dledger_replication import ENTRY_HEADER
from rocketlab.scenarios.broker_on_dledger import (
    FILE,
    TOPIC,
    bodies,
    new_broker_group,
    put_nowait,
    wait_for_master,
)
from rocketlab.sim import Cluster
from rocketlab.store.message_codec import decode_message

__all__ = [
    "cut_off_master_and_put", "cut_off_lines", "decoded_lines", "digest_lines", "entry_dump", "expire_dledger_files",
    "expire_old_files", "failover", "failover_lines", "file_layout", "healed_lines", "inflight_line", "new_log_lines",
    "put_line", "record_in_entry", "recovery_text", "replica_digests", "restart_all", "restart_lines", "retention_lines",
    "stale_lines", "stale_units_after_truncation", "upgrade_lines", "upgrade_report", "visibility", "which_log",
]

HOUR_MS = 3600 * 1000


# ---------------------------------------------------------------------- a record inside an entry
_RECORD_FIELDS = ("store_size", "magic_code", "queue_id", "queue_offset", "commit_log_offset", "store_timestamp")


def record_in_entry(c: Cluster, node: str, phy_offset: int) -> dict[str, Any]:
    """The bytes at ``phy_offset - 48`` in ``node``'s DLedger data file: the entry header's fields, the
    RocketMQ record decoded from the entry's body (TOTALSIZE, MAGICCODE, QUEUEID, QUEUEOFFSET,
    PHYSICALOFFSET, STORETIMESTAMP, body) and hex dumps of both."""
    cl = c.node(node).commit_log
    pos = phy_offset - BODY_OFFSET
    f = cl.data_file_list.find_file(pos)
    if f is None:
        raise ValueError(f"{node}: no DLedger data file holds position {pos}")
    header = f.read(pos - f.file_from_offset, BODY_OFFSET)
    fields, at = {}, 0
    for name, width in ENTRY_HEADER:
        fields[name] = int.from_bytes(header[at:at + width], "big", signed=True)
        at += width
    body = f.read(pos - f.file_from_offset + BODY_OFFSET, fields["body_size"])
    msg = decode_message(body)
    record = {name: getattr(msg, name) for name in _RECORD_FIELDS} | {"topic": msg.topic, "body": msg.body}
    return {"file": f"{f.path.parent.name}/{f.path.name}", "entry_pos": pos, "header": fields, "record": record,
            "header_hex": _hex(header), "record_hex": _hex(body[:64]) + "\n...",
            "header_dump": marked_hex(header, pos, ENTRY_HEADER),
            "record_dump": marked_hex(body[:64], pos + BODY_OFFSET, RECORD_PREFIX) + "\n..."}


RECORD_PREFIX = (("TOTALSIZE", 4), ("MAGICCODE", 4), ("BODYCRC", 4), ("QUEUEID", 4), ("FLAG", 4),
                 ("QUEUEOFFSET", 8), ("PHYSICALOFFSET", 8), ("SYSFLAG", 4), ("BORNTIMESTAMP", 8),
                 ("BORNHOST", 8), ("STORETIMESTAMP", 8))
"""The first 64 bytes of a CommitLog record with IPv4 hosts (``CommitLog.calMsgLength``'s order): name, width."""


def marked_hex(data: bytes, start: int, fields: Sequence[tuple[str, int]] = (), width: int = 16) -> str:
    """A hex dump of ``data``, 16 bytes a row: the file position of the row's first byte (decimal, as the
    lab's offsets are), the bytes, and the fields that start in that row (``name@position``)."""
    starts: dict[int, list[str]] = {}
    at = 0
    for name, size in fields:
        starts.setdefault(at // width, []).append(f"{name}@{start + at}")
        at += size
    return "\n".join(f"{start + i:>8}  {data[i:i + width].hex(' '):<{3 * width - 1}}  {' '.join(starts.get(i // width, []))}"
                     .rstrip() for i in range(0, len(data), width))


def _hex(data: bytes, width: int = 16) -> str:
    return "\n".join(data[i:i + width].hex(" ") for i in range(0, len(data), width))


def replica_digests(c: Cluster) -> dict[str, str]:
    """Per member, a digest of its DLedger bytes from the divide (or 0) up to its committed position:
    identical on every replica, because followers write each entry at the leader's ``pos``."""
    out = {}
    for n in c.live_nodes():
        cl = c.node(n).commit_log
        start = max(cl.divided_commitlog_offset, 0)
        end = max(cl.dledger_store.committed_pos, start)
        digest, pos = hashlib.sha256(), start
        while pos < end:
            f = cl.data_file_list.find_file(pos)
            if f is None:
                break
            chunk = f.read(pos - f.file_from_offset, min(end, f.file_from_offset + f.wrote_position) - pos)
            if not chunk:
                break
            digest.update(chunk)
            pos += len(chunk)
        out[n] = _("{size} bytes, sha256 {digest}").format(size=end - start, digest=digest.hexdigest()[:16])
    return out


# ---------------------------------------------------------------------- committed-only visibility
def visibility(c: Cluster, node: str, topic: str = TOPIC) -> dict[str, int]:
    """What ``node`` has written, committed, dispatched: DLedger's ledger end and committed index, its
    write position and committed position, the CommitLog's max offset (= committed position) and the
    consume queue's max offset (what a consumer can pull)."""
    core = c.node(node)
    ds = core.commit_log.dledger_store
    return {"ledger_end_index": ds.ledger_end_index, "committed_index": ds.committed_index,
            "write_pos": core.commit_log.data_file_list.max_wrote_position, "committed_pos": ds.committed_pos,
            "commit_log_max_offset": core.store.get_max_phy_offset(),
            "consume_queue_max_offset": core.store.get_max_offset_in_queue(topic, 0)}


def cut_off_master_and_put(c: Cluster, body: bytes, wait_ms: int = 300) -> tuple[str, Any]:
    """Cut the master off from the other members, send it one put and run ``wait_ms``: the entry is
    written on the master only, so it is never committed there. Returns (master, put handle)."""
    master = wait_for_master(c)
    c.partition([master], [n for n in c.node_ids if n != master])
    handle = put_nowait(c, master, body)
    c.run_for(wait_ms)
    return master, handle


# ---------------------------------------------------------------------- role change
def failover(c: Cluster, puts_in_flight: int = 20, crash_after_ms: int = 2) -> dict[str, Any]:
    """Send ``puts_in_flight`` puts to the master without waiting and crash it ``crash_after_ms`` later;
    run until a member leads DLedger, take a snapshot (:func:`visibility`), run until it is MASTER, take
    another. Returns the times, both snapshots, the role change handler's task log (with how many
    100 ms polls the LEADER task waited) and how many of the puts were acknowledged before the crash."""
    old = wait_for_master(c)
    handles = [put_nowait(c, old, f"inflight-{i:02d}".encode()) for i in range(puts_in_flight)]
    c.run_for(crash_after_ms)
    acked = sum(1 for h in handles if h.status == "PUT_OK")
    crashed_at = c.now_ms
    c.crash(old)
    c.run_until(lambda c: any(c.node(n).server.is_leader for n in c.live_nodes()), timeout_ms=10_000)
    new = next(n for n in c.live_nodes() if c.node(n).server.is_leader)
    leader_at = c.now_ms
    at_leader = visibility(c, new) | {"dispatch_behind_bytes": c.node(new).store.dispatch_behind_bytes(),
                                      "broker_role": c.node(new).broker_role}
    wait_for_master(c)
    return {"old_master": old, "acked_before_crash": acked, "crashed_at": crashed_at,
            "new_leader": new, "leader_at": leader_at, "at_leadership": at_leader,
            "master_at": c.now_ms, "at_master": visibility(c, new) | {"broker_role": c.node(new).broker_role},
            "handled": list(c.node(new).role_change_handler.handled)}


# ---------------------------------------------------------------------- stale units after a truncation
def stale_units_after_truncation(run_dir: str | Path, *, trim: bool = False, seed: int = 3) -> dict[str, Any]:
    """Three messages dispatched everywhere; then one follower, cut off, receives the TRUNCATE a new
    leader sends in Raft's Figure 8 under ``dledger-0.3.1.2`` (lab 04): an entry of the new leader's
    term at index 1, cutting the committed entries 1 and 2. (The TRUNCATE is applied directly to the
    follower's DLedger store: the schedule that produces it needs five members and puts no RocketMQ
    records in its entries.) Then the follower restarts. Returns the consume queue's max offset and
    where its units point, before and after the restart, the recovery report's summary and its trim."""
    c = new_broker_group(run_dir, seed=seed, trim_consume_queues_on_truncation=trim)
    for i in range(3):
        if c.put(f"m{i}".encode(), topic="T").status != "PUT_OK":
            raise RuntimeError(f"put {i} failed")
    follower = c.followers()[0]
    store = c.node(follower).store
    c.run_until(lambda c: store.get_max_offset_in_queue("T", 0) == 3, timeout_ms=2000)
    c.partition([follower], [n for n in c.node_ids if n != follower])
    server = c.node(follower).server
    old = server.store.get(1)
    server.store.truncate(DLedgerEntry(index=1, term=old.term + 1, pos=old.pos, body=b""), server.term,
                          server.leader_id)
    c.run_for(1000)
    before = _units(c.node(follower).store, c.node(follower).commit_log)
    c.crash(follower)
    with kit_warnings_hidden():  # the broker logs the recovery it reports: the lab prints it once
        c.restart(follower)
    core = c.node(follower)
    after = _units(core.store, core.commit_log)
    result = {"follower": follower, "before_restart": before, "after_restart": after,
              "ledger_end_index": core.server.ledger_end_index,
              "recovery": core.store.recovery_report.summary(),
              "recovery_shown": recovery_text(core.store.recovery_report, core.commit_log.dledger_store.recovery_report),
              "recovery_trimmed": core.store.recovery_report.consume_queue_units_removed}
    c.close()
    return result


def _units(store: Any, cl: Any) -> list[tuple[int, int, str]]:
    """(queue offset, physical offset, whether the DLedger log still holds a record there) per unit."""
    cq = store.find_consume_queue("T", 0)
    end = cl.data_file_list.max_wrote_position
    out = []
    for qo in range(cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue()):
        unit = cq.get_unit(qo)
        out.append((qo, unit[0], _("in the log") if unit[0] < end else _("points past the log's end")))
    return out


# ---------------------------------------------------------------------- smooth upgrade
def upgrade_report(c: Cluster) -> dict[str, str]:
    """Per member, the summary of its store's recovery report (what the first DLedger start did)."""
    return {n: c.node(n).store.recovery_report.summary() for n in c.live_nodes()}


def file_layout(c: Cluster, node: str) -> list[dict[str, Any]]:
    """``node``'s files, old commit log then DLedger: which log, the offsets each spans, bytes written
    (for :func:`rocketlab.viz.offset_space.offset_space`)."""
    cl = c.node(node).commit_log
    rows = [{"log": "old commit log", "name": mf.file_name.rsplit("/", 1)[-1], "start": mf.file_from_offset,
             "end": mf.file_from_offset + mf.file_size, "written": mf.wrote_position}
            for mf in cl.mapped_file_queue.mapped_files]
    rows += [{"log": "DLedger log", "name": f.path.name, "start": f.file_from_offset,
              "end": f.file_from_offset + f.file_size, "written": f.wrote_position}
             for f in cl.data_file_list.mapped_files]
    return rows


LOG_NAMES = {"old commit log": N_("old commit log"), "DLedger log": N_("DLedger log")}
"""The logs' names as printed (:func:`which_log` and :func:`file_layout` name them in English, as the exercise's
``which_log`` answers)."""


def which_log(c: Cluster, node: str, phy_offset: int) -> str:
    """Which log serves a read at ``phy_offset``: the old commit log below the divide, DLedger above."""
    divided = c.node(node).commit_log.divided_commitlog_offset
    return "old commit log" if phy_offset < divided else "DLedger log"


def restart_all(c: Cluster) -> None:
    """Crash every member and start them again (recovery runs), then wait for a master."""
    nodes = list(c.node_ids)
    c.crash(*nodes)
    c.restart(*nodes)
    wait_for_master(c)


# ---------------------------------------------------------------------- retention
def _wall_ms() -> int:
    return int(time.time() * 1000)


def expire_old_files(c: Cluster, node: str, hours_later: int = 73) -> list[dict[str, Any]]:
    """Run the store's clean rounds on ``node`` (CleanCommitLogService, which calls
    ``DLedgerCommitLog.deleteExpiredFile``, then CleanConsumeQueueService) with the clock ``hours_later``
    hours ahead (past ``fileReservedTime`` = 72 h), until ``deleteExpiredFile`` answers
    Integer.MAX_VALUE. One row per round: the answer, the old files left, the min physical offset, the
    queue's min offset and DLedger's retention settings after the round."""
    store = c.node(node).store
    cl = store.commit_log
    service = cl.dledger_store.clean_space_service
    now = _wall_ms() + hours_later * HOUR_MS
    rows = [_retention_row("before", None, store, cl, service)]
    for round_no in range(1, 10):
        store.execute_delete_files_manually()  # Java: it must be deleteWhen o'clock or the disk full
        answered = store.delete_expired_files(now)
        rows.append(_retention_row(f"round {round_no}", answered, store, cl, service))
        if answered == 2**31 - 1:
            break
    return rows


def _retention_row(label: str, answered: int | None, store: Any, cl: Any, service: Any) -> dict[str, Any]:
    return {"round": label, "deleteExpiredFile": answered, "old files": len(cl.mapped_file_queue.mapped_files),
            "min phy offset": store.get_min_phy_offset(),
            "queue min offset": store.get_min_offset_in_queue(TOPIC, 0),
            "DLedger fileReservedHours": service.file_reserved_hours,
            "DLedger force clean": service.enable_disk_force_clean}


def expire_dledger_files(c: Cluster, node: str, days_later: int = 5) -> dict[str, Any]:
    """Run DLedger's CleanSpaceService on ``node`` at 04:00 UTC ``days_later`` days from now (its
    ``deleteWhen`` hour; every file is past ``fileReservedHours``), then the store's clean round.
    Returns the round's report and the begin index, min offset and queue min offset after it."""
    store = c.node(node).store
    cl = store.commit_log
    day_ms = 24 * HOUR_MS
    at = (_wall_ms() // day_ms + days_later) * day_ms + 4 * HOUR_MS + 60_000
    files_before = len(cl.data_file_list.mapped_files)
    done = cl.clean_space(at)
    store.delete_expired_files(_wall_ms())
    return {"files before": files_before, "deleted": done.count, "time up (04 o'clock)": done.time_up,
            "ledger begin index": cl.dledger_store.ledger_begin_index,
            "min phy offset": store.get_min_phy_offset(), "first DLedger file": cl.data_file_list.min_offset,
            "queue min offset": store.get_min_offset_in_queue(TOPIC, 0)}


# ---------------------------------------------------------------------- the lines the cells print
def put_line(master: str, put: Any) -> str:
    """Section 1: the put's answer, with its physical and queue offsets."""
    return _("master {master}: {status}, physical offset {offset}, queue offset {queue_offset}").format(
        master=master, status=put.status, offset=put.wrote_offset, queue_offset=put.queue_offset)


def entry_dump(r: Mapping[str, Any]) -> str:
    """Section 1: the file and position of the entry, then the hex dumps of its header and of the record's
    first 64 bytes (:func:`~rocketlab.labs_support.rocketmq_on_dledger.record_in_entry`)."""
    return "\n".join([_("file {file} entry at position {pos}").format(file=r["file"], pos=r["entry_pos"]),
                      _("entry header:"), r["header_dump"], _("record (its first 64 bytes):"), r["record_dump"]])


def decoded_lines(r: Mapping[str, Any]) -> str:
    """Section 1: the decoded header and record, and the two sums a learner checks ``phy_offset`` against."""
    header, record = r["header"], r["record"]
    return "\n".join([
        _("entry header: {header}").format(header=header),
        _("record: {record}").format(record=record),
        _("entry pos + 48 = {sum}; PHYSICALOFFSET in the record = {phy}").format(
            sum=header["pos"] + 48, phy=record["commit_log_offset"]),
        _("entry size = 48 + bodySize: {size} = 48 + {body_size}; record TOTALSIZE = {total}").format(
            size=header["size"], body_size=header["body_size"], total=record["store_size"])])


def digest_lines(c: Cluster, digests: Mapping[str, str]) -> str:
    """Section 1: per member, its role and the digest of its committed DLedger bytes; whether they agree."""
    rows = [f"{node} {c.node(node).role} {digest}" for node, digest in digests.items()]
    same = len(set(digests.values())) == 1
    return "\n".join([*rows, _("identical on every replica: {same}").format(same=same)])


def _visibility_rows(c: Cluster, seen: Mapping[str, Mapping[str, int]]) -> list[str]:
    return [f"{node} {c.node(node).role} {dict(seen[node])}" for node in c.node_ids]


def cut_off_lines(c: Cluster, cut: str, answered: bool, seen: Mapping[str, Mapping[str, int]],
                  pulled: list[bytes]) -> str:
    """Section 2: the cut-off master's put unanswered, what each member has written, committed and
    dispatched (:func:`~rocketlab.labs_support.rocketmq_on_dledger.visibility`), what a consumer pulls."""
    return "\n".join([_("{cut} cut off; the put is answered: {answered}").format(cut=cut, answered=answered),
                      *_visibility_rows(c, seen),
                      _("a consumer pulls {n} messages; the last is {last}").format(n=len(pulled), last=pulled[-1])])


def healed_lines(c: Cluster, pending: Any, pulled: list[bytes]) -> str:
    """Section 2, after the heal: the put's answer, each member's visibility now, the last message pulled."""
    seen = {node: visibility(c, node) for node in c.node_ids}
    return "\n".join([_("the put is answered: {status}").format(status=pending.status), *_visibility_rows(c, seen),
                      _("the last message a consumer pulls: {last}").format(last=pulled[-1])])


def failover_lines(f: Mapping[str, Any]) -> str:
    """Section 3: the crash, the new DLedger leader's snapshot, the MASTER's, the wait between them and the
    role change handler's tasks (:func:`~rocketlab.labs_support.rocketmq_on_dledger.failover`)."""
    return "\n".join([
        _("crash of {old} at t={t} ms; puts acknowledged before the crash: {acked}").format(
            old=f["old_master"], t=f["crashed_at"], acked=f["acked_before_crash"]),
        _("{node} leads DLedger at t={t} ms: {state}").format(node=f["new_leader"], t=f["leader_at"],
                                                             state=f["at_leadership"]),
        _("{node} is MASTER at t={t} ms: {state}").format(node=f["new_leader"], t=f["master_at"],
                                                          state=f["at_master"]),
        _("the LEADER task waited {ms} ms").format(ms=f["master_at"] - f["leader_at"]),
        _("role change tasks (term, DLedger role, outcome): {tasks}").format(tasks=f["handled"])])


def inflight_line(inflight: list[bytes], sent: int) -> str:
    """Section 3: how many of the puts in flight at the crash a consumer reads after the failover."""
    return _("in-flight messages a consumer can read after the failover: {n} of {sent}").format(
        n=len(inflight), sent=sent)


def stale_lines(stale: Mapping[str, Any]) -> str:
    """Section 4: the follower's units before and after its restart, and what the recovery did
    (:func:`~rocketlab.labs_support.rocketmq_on_dledger.stale_units_after_truncation`)."""
    return "\n".join([
        _("follower {node} ledger end after the TRUNCATE: {index}").format(node=stale["follower"],
                                                                          index=stale["ledger_end_index"]),
        _("units before the restart: {units}").format(units=stale["before_restart"]),
        _("units after the restart:  {units}").format(units=stale["after_restart"]),
        _("recovery at the restart: {summary}").format(summary=stale["recovery_shown"]),
        _("trimmed by recovery: {trimmed}").format(trimmed=stale["recovery_trimmed"])])


def _classic_text(r: Any) -> str:
    """A classic commit log's ``RecoveryReport.summary()`` in the kernel's language (the reasons as the store
    gives them)."""
    text = (_("normal recovery from {file}: {records} valid records, commit log ends at {end}") if r.normal else
            _("abnormal recovery (abort file found) from {file}: {records} valid records, commit log ends at {end}")
            ).format(file=r.start_file or "-", records=r.records, end=r.process_offset)
    if r.truncated:
        text += _("; cut {size} bytes at {at} ({reason})").format(size=r.truncated_bytes, at=r.process_offset,
                                                                  reason=r.stop_reason)
    if r.removed_files:
        text += _("; removed files {files}").format(files=", ".join(r.removed_files))
    if r.consume_queue_units_removed:
        text += _("; trimmed {units} consume queue units").format(units=sum(r.consume_queue_units_removed.values()))
    if r.index_files_dropped:
        text += _("; dropped index files {files}").format(files=", ".join(r.index_files_dropped))
    return text


def recovery_text(report: Any, dledger: Any) -> str:
    """What a member's recovery did, in the kernel's language: the store's ``DLedgerRecoveryReport.summary()``
    (English: word for word the same), from ``report`` and the DLedger store's own recovery report ``dledger``
    (None: the store was empty). The reasons a check gives (``pos 4294967296 != 190``) stay as the store gives them."""
    if dledger is None:
        part = _("empty")
    else:
        part = _("recovered entries up to index {index} (term {term}), data end {end}").format(
            index=dledger.end_index, term=dledger.end_term, end=dledger.process_offset)
        if dledger.reason is not None:
            part += _("; cut the tail at {at}: {reason}").format(at=dledger.process_offset, reason=dledger.reason)
            if dledger.dropped_files:
                part += _("; dropped files {files}").format(files=dledger.dropped_files)
    text = _("DLedger: {dledger}; divided commit log offset {divided}").format(
        dledger=part, divided=report.divided_commitlog_offset)
    if report.upgraded and report.old_recovery is not None:
        text += _("; upgraded from the old commit log ({old})").format(old=_classic_text(report.old_recovery))
        if report.blank_written_at is not None:
            text += _("; old blank written at {at}").format(at=report.blank_written_at)
    return text


def _report_rows(c: Cluster) -> list[str]:
    """Per live member, what its store's recovery did (:func:`recovery_text`)."""
    return [f"{n} " + recovery_text(c.node(n).store.recovery_report, c.node(n).commit_log.dledger_store.recovery_report)
            for n in c.live_nodes()]


def upgrade_lines(c: Cluster, divided: int) -> str:
    """Section 5: what each member's first DLedger start did, and where the divide lies."""
    return "\n".join([*_report_rows(c), _("dividedCommitlogOffset = {divided} = file size {file} x {n}").format(
        divided=divided, file=FILE, n=divided // FILE)])


def new_log_lines(c: Cluster, master: str, first: Any, divided: int, got: list[bytes]) -> str:
    """Section 5: the first put after the upgrade, and which log serves the reads on either side of the divide."""
    return "\n".join([
        _("first new message: {status}, physical offset {offset} = {divided} + 48, queue offset {queue_offset}").format(
            status=first.status, offset=first.wrote_offset, divided=divided, queue_offset=first.queue_offset),
        _("a consumer reads {n} messages: queue offset 149 -> {old}... from the {old_log}, queue offset 150 -> "
          "{new}... from the {new_log}").format(
            n=len(got), old=got[149][:14], old_log=_(LOG_NAMES[which_log(c, master, 0)]), new=got[150][:14],
            new_log=_(LOG_NAMES[which_log(c, master, first.wrote_offset)]))])


def restart_lines(c: Cluster, same: bool) -> str:
    """Section 5, after restarting every member: each recovery, and whether a consumer reads the same messages."""
    return "\n".join([*_report_rows(c), _("same messages after the restart: {same}").format(same=same)])


def retention_lines(c: Cluster, after: Mapping[str, Any], pull_0: Any) -> str:
    """Section 6, after DLedger's own clean round: the first queue offset still readable, the answer to a
    pull from 0 and how many messages remain (:func:`~rocketlab.labs_support.rocketmq_on_dledger.expire_dledger_files`)."""
    first = after["queue min offset"]
    return "\n".join([
        _("first queue offset still readable: {first} = 150 old messages + ledger begin index {begin}").format(
            first=first, begin=after["ledger begin index"]),
        _("a pull from queue offset 0 answers {status}").format(status=pull_0.status),
        _("messages still readable: {n}").format(n=len(bodies(c, first)))])
