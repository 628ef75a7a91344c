"""Lab 05: a real RocketMQ producer's messages followed into the broker's files.

The unchanged 4.9.5 Java producer (:mod:`rocketlab.oracle.client_app`) sends a few messages of mixed shape to a
broker; each ``SendResult`` names its queue, its queue offset and its offset message id (the storing broker's
address and the record's physical offset). The helper then reads the broker's own files with the kit's readers:
the ConsumeQueue unit at that queue offset (physical offset, size, tags hash code) and the CommitLog record at
that physical offset (``MessageDecoder.decode``). The broker is the kit's DLedger group when the kit has its name
server, else the real Java broker (classic CommitLog). Without the Java client the helper says why and what to do.
"""

from __future__ import annotations

import struct
import tempfile
import time
from pathlib import Path
from typing import Any

from rocketlab.i18n import N_, _
from rocketlab.net.node import NODE_KINDS
from rocketlab.oracle.broker_group import Backend
from rocketlab.oracle.client_app import ClientApp
from rocketlab.oracle.client_jvm import find_broker_java
from rocketlab.store.message import MessageSysFlag, tags_string_to_tags_code
from rocketlab.store.message_codec import decode_message, decode_message_id
from rocketlab.trace.rundir import fresh_dir

TOPIC = "LabRealProducer"
UNIT = struct.Struct(">qiq")  # a ConsumeQueue unit: physical offset, size, tags code (20 bytes)
HOW_TO_GET = N_("""\
This section runs the real RocketMQ 4.9.5 Java client, and this machine cannot ({why}).
To see it: a JDK 17 and the RocketMQ 4.9.5 client, name server and broker jars with their dependencies on one
class path in ROCKETLAB_JAVA_BROKER (see docs/applications.md), then restart JupyterLab from that shell.
Nothing else in this lab needs it.""")


def _file_at(directory: Path, position: int) -> tuple[Path, int]:
    """The file of a mapped-file queue (files named by their start position) that holds ``position``."""
    files = sorted((p for p in directory.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    start = max((int(p.name) for p in files if int(p.name) <= position), default=None)
    if start is None:
        raise FileNotFoundError(f"no file of {directory} holds position {position}")
    return directory / f"{start:020d}", position - start


def _log_dir(store: Path) -> Path:
    """The classic ``commitlog/`` or, on DLedger, the member's ``dledger-<id>/data/`` (same addressing)."""
    dledger = sorted(store.glob("dledger-*/data"))
    return dledger[0] if dledger else store / "commitlog"


def consume_queue_unit(store: Path, topic: str, queue: int, queue_offset: int) -> dict[str, int]:
    path, pos = _file_at(store / "consumequeue" / topic / str(queue), queue_offset * UNIT.size)
    with open(path, "rb") as f:
        f.seek(pos)
        phy, size, tags_code = UNIT.unpack(f.read(UNIT.size))
    return {"physical_offset": phy, "size": size, "tags_code": tags_code}


def commit_log_record(store: Path, physical_offset: int, size: int) -> dict[str, Any]:
    path, pos = _file_at(_log_dir(store), physical_offset)
    with open(path, "rb") as f:
        f.seek(pos)
        raw = f.read(size)
    m = decode_message(raw, 0)
    return {"file": f"{path.parent.name}/{path.name}", "position": pos, "store_size": m.store_size,
            "topic": m.topic, "queue_id": m.queue_id, "queue_offset": m.queue_offset,
            "commit_log_offset": m.commit_log_offset, "sys_flag": m.sys_flag,
            "compressed": bool(m.sys_flag & MessageSysFlag.COMPRESSED_FLAG), "body_length": len(m.body),
            "tags": m.properties.get("TAGS"), "keys": m.properties.get("KEYS"),
            "born_host": f"{m.born_host[0]}:{m.born_host[1]}"}


def _unit_when_dispatched(store: Path, send: dict[str, Any], timeout_s: float = 10.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout_s
    while True:  # the reput service writes the unit a moment after the put
        try:
            unit = consume_queue_unit(store, TOPIC, send["queue"], send["queue_offset"])
            if unit["size"] > 0:
                return unit
        except (FileNotFoundError, struct.error):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"no consume-queue unit for {send['uniq']}")
        time.sleep(0.1)


def follow_real_producer(count: int = 6, workdir: str | Path | None = None,
                         backend: str | None = None) -> list[str]:
    """Send ``count`` messages with the real Java producer, then find each in the ConsumeQueue and the
    CommitLog; the lines a cell prints."""
    java, why = find_broker_java()
    if java is None:
        return _(HOW_TO_GET).format(why=why).splitlines()
    name = backend or ("kit" if "namesrv" in NODE_KINDS else "java")
    layout = "dledger" if name == "kit" else "single"
    work = fresh_dir(workdir) if workdir else Path(tempfile.mkdtemp(prefix="rocketlab-real-producer-"))
    group = Backend(name, work, java, layout).start()
    lines = [_("broker: {name} ({layout}), name server {addr}").format(name=name, layout=layout,
                                                                       addr=group.namesrv_addr)]
    try:
        with ClientApp(java, work, name="lab-client") as app:
            app.create_topic(group.namesrv_addr, TOPIC)
            sends = app.produce(group.namesrv_addr, TOPIC, count, "lab", seed=5)
        for s in sends:
            host, phy = decode_message_id(s["offset_msg_id"])
            store = group.workdir / _broker_of(group, host[1]) / "store"
            unit = _unit_when_dispatched(store, s)
            lines += _send_lines(s, f"{host[0]}:{host[1]}", phy, unit, commit_log_record(store, phy, unit["size"]))
    finally:
        group.kill()
    return lines


def _send_lines(s: dict[str, Any], host: str, phy: int, unit: dict[str, int], rec: dict[str, Any]) -> list[str]:
    """One send followed: its SendResult, its ConsumeQueue unit and its CommitLog record, in the kernel's language."""
    record = (_("CommitLog {file} at {position}: TOTALSIZE {size}, topic {topic}, queue {queue}, queue offset "
                "{queue_offset}, PHYSICALOFFSET {phy}, sysFlag {flag} (compressed: {stored} B stored), born host {host}")
              if rec["compressed"] else
              _("CommitLog {file} at {position}: TOTALSIZE {size}, topic {topic}, queue {queue}, queue offset "
                "{queue_offset}, PHYSICALOFFSET {phy}, sysFlag {flag}, born host {host}"))
    return [
        _("send {i}: {status}, queue {queue}, queue offset {queue_offset}, {size} B body, tags {tags}; offsetMsgId "
          "{msg_id} = {host} + physical offset {phy}").format(
            i=s["i"], status=s["status"], queue=s["queue"], queue_offset=s["queue_offset"], size=s["size"],
            tags=s["tags"], msg_id=s["offset_msg_id"], host=host, phy=phy),
        "  " + _("ConsumeQueue {topic}/{queue} unit {queue_offset}: physical offset {phy}, size {size}, tags code "
                 "{code} (hashCode of {tags}: {hash})").format(
            topic=TOPIC, queue=s["queue"], queue_offset=s["queue_offset"], phy=unit["physical_offset"],
            size=unit["size"], code=unit["tags_code"], tags=repr(s["tags"]), hash=tags_string_to_tags_code(s["tags"])),
        "  " + record.format(file=rec["file"], position=rec["position"], size=rec["store_size"], topic=rec["topic"],
                             queue=rec["queue_id"], queue_offset=rec["queue_offset"], phy=rec["commit_log_offset"],
                             flag=rec["sys_flag"], stored=rec["body_length"], host=rec["born_host"])]


def _broker_of(group: Backend, port: int) -> str:
    return next(b.name for b in group.brokers() if b.port == port)
