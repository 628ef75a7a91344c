"""The real ``DefaultMessageStore`` beside ours: the same messages in, put results and read-backs out.

:class:`JavaStore` drives a real RocketMQ store in an oracle JVM (:mod:`rocketlab.oracle.jvm`); :func:`read_back`
reads one of ours into the same shape, so a test compares two dicts: every record of the CommitLog from the
min to the max physical offset (and each END_OF_FILE blank), every non-empty ConsumeQueue's offsets and
units, and what ``queryMessage`` finds for each key. Hosts are normalised (Java prints IPv6 in full),
properties compared as maps (Java's decoder returns a ``HashMap``).
"""

from __future__ import annotations

import base64
import ipaddress
import os
from collections.abc import Iterable, Sequence
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.oracle.jvm import Oracle, OracleProcess
from rocketlab.store.config import MessageStoreConfig
from rocketlab.store.message import Host, Message, MessageExt
from rocketlab.store.message_codec import decode_message
from rocketlab.store.message_store import DefaultMessageStore
from rocketlab.store.record_layout import BLANK_MAGIC_CODE
from rocketlab.store.status import PutMessageResult

JAVA_NAMES = {
    "mapped_file_size_commit_log": "mappedFileSizeCommitLog",
    "mapped_file_size_consume_queue": "mappedFileSizeConsumeQueue",
    "max_hash_slot_num": "maxHashSlotNum",
    "max_index_num": "maxIndexNum",
    "max_message_size": "maxMessageSize",
    "flush_disk_type": "flushDiskType",
    "broker_role": "brokerRole",
    "auto_message_version_on_topic_len": "autoMessageVersionOnTopicLen",
    "message_index_enable": "messageIndexEnable",
    "check_crc_on_recover": "checkCRCOnRecover",
    "sync_flush_timeout": "syncFlushTimeout",
    "flush_interval_commit_log": "flushIntervalCommitLog",
}
"""Our MessageStoreConfig names -> Java's, for the settings the oracle tests set on both sides."""


def java_config(**options: Any) -> dict[str, Any]:
    """Java's MessageStoreConfig settings for our snake_case ``options`` (enums by name)."""
    out = {}
    for name, value in options.items():
        if name not in JAVA_NAMES:
            raise KeyError(f"no Java name known for MessageStoreConfig.{name}")
        out[JAVA_NAMES[name]] = getattr(value, "name", value)
    return out


def host_text(host: Host) -> str:
    ip, port = host
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def normal_host(text: str) -> str:
    """``[0:0:0:0:0:0:0:1]:99`` and ``[::1]:99`` alike."""
    ip, _, port = text.rpartition(":")
    addr = ipaddress.ip_address(ip.strip("[]"))
    return f"[{addr.compressed}]:{port}" if addr.version == 6 else f"{addr}:{port}"


# ------------------------------------------------------------------------------- messages as JSON
def message_spec(msg: Message) -> dict[str, Any]:
    """``msg`` as the driver builds a ``MessageExtBrokerInner`` from it (properties in order)."""
    return {"topic": msg.topic, "queueId": msg.queue_id, "flag": msg.flag,
            "body": base64.b64encode(msg.body).decode("ascii"),
            "properties": [[k, v] for k, v in msg.properties.items() if v is not None],
            "sysFlag": msg.sys_flag, "bornTimestamp": msg.born_timestamp or 0, "bornHost": host_text(msg.born_host),
            "reconsumeTimes": msg.reconsume_times, "preparedTransactionOffset": msg.prepared_transaction_offset}


def batch_spec(messages: Sequence[Message], batch_properties: dict[str, str] | None = None) -> dict[str, Any]:
    """A batch of ``messages`` (one topic, queue id, born host and time: the first message's), packed by
    the driver with Java's own ``MessageDecoder.encodeMessages``."""
    first = messages[0]
    return {"topic": first.topic, "queueId": first.queue_id, "bornHost": host_text(first.born_host),
            "bornTimestamp": first.born_timestamp or 0, "sysFlag": first.sys_flag,
            "properties": [[k, v] for k, v in (batch_properties or {}).items()],
            "messages": [{"flag": m.flag, "body": base64.b64encode(m.body).decode("ascii"),
                          "properties": [[k, v] for k, v in m.properties.items() if v is not None]}
                         for m in messages]}


def put_result(r: PutMessageResult) -> dict[str, Any]:
    """Our put result in the driver's shape (what a test compares)."""
    out: dict[str, Any] = {"status": r.status.name}
    a = r.append_message_result
    if a is not None:
        out.update(appendStatus=a.status.name, wroteOffset=a.wrote_offset, wroteBytes=a.wrote_bytes,
                   msgId=a.msg_id, queueOffset=a.logics_offset, storeTimestamp=a.store_timestamp, msgNum=a.msg_num)
    return out


def java_put_result(reply: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in reply.items() if k != "ok"}


# ------------------------------------------------------------------------------- the Java store
class JavaStore:
    """A real ``DefaultMessageStore`` (4.9.5 or 5.3.3) in ``proc``, opened (load + start) on ``root``."""

    def __init__(self, proc: OracleProcess, root: str | os.PathLike[str], *, store_host: Host = ("127.0.0.1", 10911),
                 ha_master_address: str | None = None, java_settings: dict[str, Any] | None = None,
                 **options: Any) -> None:
        self.proc = proc
        self.root = os.fspath(root)
        config = {**java_config(**options), **(java_settings or {})}
        self.opened = proc.request("open", root=self.root, config=config, storeHost=host_text(store_host),
                                   haMasterAddress=ha_master_address or "")

    @classmethod
    def start(cls, oracle: Oracle, workdir: str | os.PathLike[str], root: str | os.PathLike[str],
              **kwargs: Any) -> JavaStore:
        """A new JVM with a store opened on ``root``; :meth:`close` stops both."""
        proc = oracle.start(workdir, name=f"store-{os.path.basename(os.fspath(root))}")
        try:
            return cls(proc, root, **kwargs)
        except BaseException:
            proc.kill()
            raise

    def put(self, msg: Message) -> dict[str, Any]:
        return java_put_result(self.proc.request("put", msg=message_spec(msg)))

    def put_many(self, msgs: Iterable[Message]) -> list[dict[str, Any]]:
        return [java_put_result(r) for r in self.proc.request("putMany", msgs=[message_spec(m) for m in msgs])["results"]]

    def put_stream(self, msgs: Iterable[Message]) -> None:
        """Start putting ``msgs`` one by one without waiting: each result arrives as an event
        (``proc.next_event()["result"]``), so a test can kill the JVM mid-stream."""
        self.proc.send("putMany", msgs=[message_spec(m) for m in msgs], progress=True)

    def put_batch(self, messages: Sequence[Message], batch_properties: dict[str, str] | None = None) -> dict[str, Any]:
        return java_put_result(self.proc.request("putBatch", batch=batch_spec(messages, batch_properties)))

    def wait_dispatch(self, timeout_ms: int = 30_000) -> dict[str, Any]:
        return self.proc.request("waitDispatch", timeoutMs=timeout_ms)

    def read_back(self, keys: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
        return normal_java_read_back(self.proc.request("readBack", keys=[list(k) for k in keys], timeout_s=300))

    def consume(self, batch: int = 32) -> dict[str, Any]:
        """What a consumer reads from every non-empty queue (``getMessage`` from the min offset on)."""
        return normal_java_consume(self.proc.request("consume", batch=batch, timeout_s=300))

    def ha_info(self) -> dict[str, Any]:
        return self.proc.request("haInfo")

    def shutdown(self) -> None:
        """``DefaultMessageStore.shutdown`` (clean: flushes, checkpoint, deletes ``abort``)."""
        self.proc.request("shutdown", timeout_s=120)

    def close(self) -> None:
        self.proc.close()

    def __enter__(self) -> JavaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------- read-backs
_RECORD_FIELDS = {"phyOffset": "phy_offset", "size": "size", "topic": "topic", "queueId": "queue_id",
                  "queueOffset": "queue_offset", "msgId": "msg_id", "bodyCrc": "body_crc", "flag": "flag",
                  "sysFlag": "sys_flag", "bornTimestamp": "born_timestamp", "storeTimestamp": "store_timestamp",
                  "reconsumeTimes": "reconsume_times", "preparedTransactionOffset": "prepared_transaction_offset"}


def _java_record(r: dict[str, Any]) -> dict[str, Any]:
    rec = {ours: r[theirs] for theirs, ours in _RECORD_FIELDS.items()}
    rec.update(born_host=normal_host(r["bornHost"]), store_host=normal_host(r["storeHost"]),
               properties=dict(r["properties"]), body=base64.b64decode(r["body"]))
    return rec


def _our_record(m: MessageExt) -> dict[str, Any]:
    return {"phy_offset": m.commit_log_offset, "size": m.store_size, "topic": m.topic, "queue_id": m.queue_id,
            "queue_offset": m.queue_offset, "msg_id": m.msg_id, "body_crc": m.body_crc, "flag": m.flag,
            "sys_flag": m.sys_flag, "born_timestamp": m.born_timestamp, "store_timestamp": m.store_timestamp,
            "reconsume_times": m.reconsume_times, "prepared_transaction_offset": m.prepared_transaction_offset,
            "born_host": normal_host(host_text(m.born_host)), "store_host": normal_host(host_text(m.store_host)),
            "properties": dict(m.properties), "body": bytes(m.body)}


def normal_java_read_back(reply: dict[str, Any]) -> dict[str, Any]:
    """The driver's ``readBack`` reply in :func:`read_back`'s shape."""
    records = [_java_record(r) for r in reply["records"]]
    queues = {}
    for name, q in reply["queues"].items():
        topic, _, qid = name.rpartition("/")
        if q["max"] > 0 or q["min"] > 0:  # 4.9.5's schedule service creates empty SCHEDULE_TOPIC queues
            queues[(topic, int(qid))] = {"min": q["min"], "max": q["max"], "units": [tuple(u) for u in q["units"]]}
    return {"min_phy_offset": reply["minPhyOffset"], "max_phy_offset": reply["maxPhyOffset"],
            "records": records, "blanks": [(b["phyOffset"], b["size"]) for b in reply["blanks"]],
            "queues": queues, "keys": {k: list(v) for k, v in reply["keys"].items()}}


def read_back(store: DefaultMessageStore, keys: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """Everything a reader of our ``store`` sees, in the shape of the Java driver's ``readBack``."""
    cl = store.commit_log
    assert cl is not None
    lo, hi = store.get_min_phy_offset(), store.get_max_phy_offset()
    size = store.config.mapped_file_size_commit_log
    records, blanks = [], []
    offset = lo
    while 0 <= offset < hi:
        head = cl.get_message(offset, 8)
        if head is None:
            raise CodecError(f"no CommitLog data at {offset}", offset)
        total, magic = int.from_bytes(head[:4], "big", signed=True), int.from_bytes(head[4:8], "big", signed=True)
        if magic == BLANK_MAGIC_CODE:
            blanks.append((offset, total))
            offset = (offset // size + 1) * size
            continue
        records.append(_our_record(decode_message(cl.get_message(offset, total))))
        offset += total
    queues = {}
    for topic, by_id in sorted(store.consume_queue_table.items()):
        for qid, cq in sorted(by_id.items()):
            q_min, q_max = cq.get_min_offset_in_queue(), cq.get_max_offset_in_queue()
            if q_max == 0 and q_min == 0:
                continue
            units = []
            for i in range(q_min, q_max):
                unit = cq.get_unit(i)
                if unit is None:
                    raise CodecError(f"no ConsumeQueue unit at {topic}/{qid} {i}", i)
                units.append((i, *unit))
            queues[(topic, qid)] = {"min": q_min, "max": q_max, "units": units}
    found = {}
    for topic, key in keys:
        result = store.query_message(topic, key, 64, 0, 2**63 - 1)
        found[f"{topic}#{key}"] = sorted(int.from_bytes(buf[28:36], "big", signed=True)
                                         for buf in result.message_buffer_list)
    return {"min_phy_offset": lo, "max_phy_offset": hi, "records": records, "blanks": blanks,
            "queues": queues, "keys": found}


def normal_java_consume(reply: dict[str, Any]) -> dict[str, Any]:
    """The driver's ``consume`` reply in :func:`consume`'s shape."""
    out = {}
    for name, q in reply["queues"].items():
        topic, _, qid = name.rpartition("/")
        out[(topic, int(qid))] = {"min": q["min"], "max": q["max"],
                                  "messages": [_java_record(r) for r in q["messages"]]}
    return out


def consume(store: DefaultMessageStore, batch: int = 32) -> dict[str, Any]:
    """What a consumer reads from every non-empty queue of our ``store`` (``get_message`` from the min
    offset until nothing more is found), in :meth:`JavaStore.consume`'s shape."""
    out = {}
    for topic, by_id in sorted(store.consume_queue_table.items()):
        for qid in sorted(by_id):
            offset, hi = store.get_min_offset_in_queue(topic, qid), store.get_max_offset_in_queue(topic, qid)
            if hi <= 0:
                continue
            q: dict[str, Any] = {"min": offset, "max": hi, "messages": []}
            while offset < hi:
                got = store.get_message(topic, qid, offset=offset, max_msg_nums=batch)
                if not got.message_buffer_list or got.next_begin_offset <= offset:
                    break
                q["messages"] += [_our_record(m) for m in got.messages]
                offset = got.next_begin_offset
            out[(topic, qid)] = q
    return out


def store_files(root: str | os.PathLike[str]) -> dict[str, list[bytes]]:
    """The bytes of a store's CommitLog files, each ConsumeQueue's files and its index files, by kind, in
    name order (index files are named by their creation time, which differs from run to run)."""
    root = os.fspath(root)
    out: dict[str, list[bytes]] = {}

    def files(directory: str) -> list[bytes]:
        if not os.path.isdir(directory):
            return []
        return [open(os.path.join(directory, n), "rb").read() for n in sorted(os.listdir(directory))
                if os.path.isfile(os.path.join(directory, n))]

    out["commitlog"] = files(os.path.join(root, "commitlog"))
    cq_root = os.path.join(root, "consumequeue")
    if os.path.isdir(cq_root):
        for topic in sorted(os.listdir(cq_root)):
            for qid in sorted(os.listdir(os.path.join(cq_root, topic)), key=int):
                got = files(os.path.join(cq_root, topic, qid))
                if got:
                    out[f"consumequeue/{topic}/{qid}"] = got
    out["index"] = files(os.path.join(root, "index"))
    return out


def open_ours(root: str | os.PathLike[str], *, clock: Any = None, threads: bool = False,
              **options: Any) -> DefaultMessageStore:
    """Our store on ``root`` with the settings the oracle tests give both sides (by default without its
    service threads: the caller reputs and flushes)."""
    config = MessageStoreConfig.from_options(store_path_root_dir=os.fspath(root), **options)
    return DefaultMessageStore.open(root, config=config, clock=clock, threads=threads)


__all__ = ["JAVA_NAMES", "JavaStore", "batch_spec", "consume", "java_config", "message_spec", "normal_host",
           "open_ours", "put_result", "read_back", "store_files"]
