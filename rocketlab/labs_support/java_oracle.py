"""Labs 01 and 02: the real RocketMQ 4.9.5 beside ours, where this machine has it (:mod:`rocketlab.oracle`).

Each helper returns the lines a cell prints. Without the oracle they say what it would show and how to get
it; the lab runs on either way.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rocketlab.i18n import N_, _
from rocketlab.oracle import find_oracle
from rocketlab.oracle.ha import CrossPair
from rocketlab.oracle.store import JavaStore, open_ours, put_result, store_files
from rocketlab.store.message import Message

HOW_TO_GET = N_("""\
This cell runs the real RocketMQ, and this machine does not have it ({why}).
To see it: install a JDK 17 (for example Debian's openjdk-17-jdk-headless) and put RocketMQ 4.9.5's store
and its dependencies on a class path. With Maven, a small pom.xml that depends on
org.apache.rocketmq:rocketmq-store:4.9.5 and io.openmessaging.storage:dledger:0.3.1.2, then
    mvn dependency:build-classpath -Dmdep.outputFile=cp4.txt
    export ROCKETLAB_JAVA_4=@$PWD/cp4.txt
and restart JupyterLab from that shell. Nothing else in this lab needs it.""")


def _oracle_or_explain(release: str = "4.9.5"):
    oracle, why = find_oracle(release)
    return oracle, ([] if oracle is not None else _(HOW_TO_GET).format(why=why).splitlines())


def lab_messages(n: int) -> list[Message]:
    """The messages both stores take: tags, keys and a property with non-ASCII text, bodies of 0-900 bytes."""
    return [Message("LabTopic", b"m%03d|" % i * (i % 10) * 18, i % 2, tags="TAG1", keys=[f"k{i}", "shared"],
                    properties={"city": "Zürich" if i % 3 else "東京"}, born_timestamp=1_700_000_000_000 + i,
                    born_host=("127.0.0.1", 50000)) for i in range(n)]


def same_bytes_as_java(n: int = 40, workdir: str | Path | None = None) -> list[str]:
    """Put the same ``n`` messages through the real ``DefaultMessageStore`` 4.9.5 and ours (4 KiB CommitLog
    files, so they roll; ours stamped with Java's store times), then compare the put results and every file
    byte for byte."""
    oracle, lines = _oracle_or_explain()
    if oracle is None:
        return lines
    work = Path(workdir or tempfile.mkdtemp(prefix="rocketlab-java-"))
    options = {"mapped_file_size_commit_log": 4096, "mapped_file_size_consume_queue": 16 * 20,
               "max_hash_slot_num": 16, "max_index_num": 64}
    messages = lab_messages(n)
    with JavaStore.start(oracle, work, work / "java", **options) as java:
        theirs = java.put_many(messages)
        java.wait_dispatch()
        java.shutdown()
    now = [0]
    ours_store = open_ours(work / "ours", clock=lambda: now[0], **options)
    ours = []
    for message, answer in zip(messages, theirs, strict=True):
        now[0] = answer["storeTimestamp"]  # the one thing Java takes from its clock
        ours.append(put_result(ours_store.put_message(message)))
    ours_store.reput()
    ours_store.shutdown()
    lines = [_("RocketMQ {release} (Java {jdk}) and rocketlab each stored the same {n} messages.").format(
                 release=oracle.release, jdk=oracle.jdk.version, n=n),
             _("put results (status, offsets, msgId, queue offset) identical: {same} ({n} of {n})").format(
                 same=ours == theirs, n=n)]
    java_files, our_files = store_files(work / "java"), store_files(work / "ours")
    for kind in sorted(java_files):
        same = sum(a == b for a, b in zip(java_files[kind], our_files.get(kind, []), strict=False))
        lines.append(_("{kind} {files} file(s), byte-identical: {same} of {files}").format(
            kind=f"{kind:<28}", files=len(java_files[kind]), same=same))
    return lines


def java_slave_of_our_master(puts: int = 60, workdir: str | Path | None = None) -> list[str]:
    """A real RocketMQ 4.9.5 store as the SLAVE of a rocketlab SYNC_MASTER (``rocketlab node``), each in its
    own process on 127.0.0.1: puts answered after the Java slave's report, a put while the slave is paused,
    and the two commit logs at the end."""
    oracle, lines = _oracle_or_explain()
    if oracle is None:
        return lines
    work = Path(workdir or tempfile.mkdtemp(prefix="rocketlab-java-ha-"))
    with CrossPair(oracle, work, java="slave", role="SYNC_MASTER", file_size=16 * 1024) as pair:
        waited = pair.wait_connected()
        statuses = [r["status"] for r in pair.put_all(lab_messages(puts))]
        pair.pause("slave")
        (paused,) = pair.put_all(lab_messages(1))
        pair.resume("slave")
        end = pair.wait_caught_up()
        pair.stop("slave")
        pair.stop("master")
    ours = {p.name: p.read_bytes() for p in sorted((pair.master_dir / "commitlog").iterdir())}
    theirs = {p.name: p.read_bytes() for p in sorted((pair.slave_dir / "commitlog").iterdir())}
    return [_("the Java slave reported its offset after {s} s (its haSendHeartbeatInterval here: 1 s)").format(
                s=f"{waited:.1f}"),
            _("{n} puts on our SYNC_MASTER: {statuses}").format(
                n=puts, statuses=", ".join(f"{s} x{statuses.count(s)}" for s in sorted(set(statuses)))),
            _("a put while the Java slave is paused (SIGSTOP): {status} after slaveTimeout (3 s)").format(
                status=paused["status"]),
            _("both commit logs end at {end}: {files} files, byte-identical: {same}").format(
                end=end, files=len(ours), same=ours.keys() == theirs.keys() and all(ours[k] == theirs[k] for k in ours))]


__all__ = ["HOW_TO_GET", "java_slave_of_our_master", "lab_messages", "same_bytes_as_java"]
