"""What a name server stores and answers, as RocketMQ 4.9.5's beans and their JSON (fastjson's form).

* :class:`QueueData`, :class:`BrokerData`, :class:`TopicRouteData` (``common/protocol/route``): a topic's
  route, GET_ROUTEINFO_BY_TOPIC's body; :class:`ClusterInfo` (GET_BROKER_CLUSTER_INFO) and
  :class:`TopicList` (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), ``common/protocol/body``;
* :class:`RegisterBrokerBody` (``TopicConfigSerializeWrapper``: the broker's topic config table and its
  ``DataVersion``, plus ``filterServerList``), plain JSON or Java's deflated layout (``compressed=true``:
  length-prefixed DataVersion JSON, topic count, each ``TopicConfig.encode()`` string, the filter list).

JSON is written as fastjson writes it: bean properties sorted by name, nulls left out, a ``HashMap``'s
keys in Java's iteration order (:mod:`rocketlab.remoting.fastjson`) and integer map keys UNQUOTED
(``"brokerAddrs":{0:"127.0.0.1:10911"}``); ``standard=True`` is 4.9.4's ``acceptStandardJsonOnly`` form
(``BrowserCompatible``, ``QuoteFieldNames``, ``MapSortField``: keys quoted and sorted, non-ASCII escaped).
Reading accepts both, quoted keys or not (:func:`rocketlab.remoting.fastjson.loads`).
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting.fastjson import hashmap_capacity, java_long_hash, java_string_hash, loads

PERM_PRIORITY, PERM_READ, PERM_WRITE, PERM_INHERIT = 8, 4, 2, 1  # PermName
TOPIC_FILTER_TYPES = ("SINGLE_TAG", "MULTI_TAG")


def java_map_order(keys: list[Any], initial: int = 16) -> list[Any]:
    """The iteration order of a ``HashMap``/``HashSet`` created with capacity ``initial`` into which
    ``keys`` (str or int = Long) were put in this order."""
    unique = list(dict.fromkeys(keys))
    cap = hashmap_capacity(len(unique), _table_size(initial))
    codes = [java_long_hash(k) if isinstance(k, int) else java_string_hash(k) for k in unique]

    def bucket(i: int) -> int:
        u = codes[i] & 0xFFFFFFFF
        return (u ^ (u >> 16)) & (cap - 1)

    return [unique[i] for i in sorted(range(len(unique)), key=lambda i: (bucket(i), i))]


def _table_size(initial: int) -> int:
    cap = 1
    while cap < initial:
        cap *= 2
    return cap


def dumps(value: Any, standard: bool = False) -> bytes:
    """``value`` (dicts with str or int keys in the order to write, lists, scalars) as fastjson writes
    it: compact, int keys unquoted; ``standard``: int keys quoted, maps sorted, non-ASCII escaped."""
    return _write(value, standard).encode("utf-8")


def _write(value: Any, standard: bool) -> str:
    if isinstance(value, dict):
        items = list(value.items())
        if standard:
            items.sort(key=lambda kv: (isinstance(kv[0], str), kv[0]))
        parts = []
        for k, v in items:
            key = json.dumps(k, ensure_ascii=standard) if isinstance(k, str) else (f'"{k}"' if standard else str(k))
            parts.append(f"{key}:{_write(v, standard)}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_write(v, standard) for v in value) + "]"
    return json.dumps(value, ensure_ascii=standard)


# ----------------------------------------------------------------------------------- the beans
@dataclass(frozen=True)
class QueueData:
    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "perm": self.perm, "readQueueNums": self.read_queue_nums,
                "topicSysFlag": self.topic_sys_flag, "writeQueueNums": self.write_queue_nums}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> QueueData:
        return cls(_str(d, "brokerName"), _int(d, "readQueueNums"), _int(d, "writeQueueNums"), _int(d, "perm"),
                   _int(d, "topicSysFlag"))


@dataclass(frozen=True)
class BrokerData:
    cluster: str
    broker_name: str
    broker_addrs: dict[int, str] = field(default_factory=dict)
    """brokerId -> address, in the ``HashMap<Long, String>``'s insertion order."""

    def to_json(self) -> dict[str, Any]:
        addrs = {k: self.broker_addrs[k] for k in java_map_order(list(self.broker_addrs))}
        return {"brokerAddrs": addrs, "brokerName": self.broker_name, "cluster": self.cluster}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BrokerData:
        raw = d.get("brokerAddrs") or {}
        if not isinstance(raw, dict):
            raise CodecError("BrokerData.brokerAddrs is not an object")
        try:
            addrs = {int(k): str(v) for k, v in raw.items()}
        except ValueError as e:
            raise CodecError(f"BrokerData.brokerAddrs has a key that is no broker id: {e}") from None
        return cls(_str(d, "cluster"), _str(d, "brokerName"), addrs)


@dataclass(frozen=True)
class TopicRouteData:
    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...]
    filter_server_table: dict[str, tuple[str, ...]] = field(default_factory=dict)
    order_topic_conf: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"brokerDatas": [b.to_json() for b in self.broker_datas],
                               "filterServerTable": {k: list(v) for k, v in self.filter_server_table.items()}}
        if self.order_topic_conf is not None:
            out["orderTopicConf"] = self.order_topic_conf
        out["queueDatas"] = [q.to_json() for q in self.queue_datas]
        return out

    @classmethod
    def from_json(cls, d: Any) -> TopicRouteData:
        if not isinstance(d, dict):
            raise CodecError("TopicRouteData is not an object")
        fst = d.get("filterServerTable") or {}
        return cls(tuple(QueueData.from_json(q) for q in _list(d, "queueDatas")),
                   tuple(BrokerData.from_json(b) for b in _list(d, "brokerDatas")),
                   {str(k): tuple(v) for k, v in fst.items()}, d.get("orderTopicConf"))

    def decoded(self) -> dict[str, Any]:
        """Order-free form for comparisons: queue datas and broker datas by broker name."""
        return {"queueDatas": {q.broker_name: q for q in self.queue_datas},
                "brokerDatas": {b.broker_name: (b.cluster, dict(b.broker_addrs)) for b in self.broker_datas},
                "filterServerTable": {k: sorted(v) for k, v in self.filter_server_table.items()},
                "orderTopicConf": self.order_topic_conf}


@dataclass(frozen=True)
class ClusterInfo:
    broker_addr_table: dict[str, BrokerData]
    cluster_addr_table: dict[str, tuple[str, ...]]

    def to_json(self) -> dict[str, Any]:
        return {"brokerAddrTable": {n: self.broker_addr_table[n].to_json()
                                    for n in java_map_order(list(self.broker_addr_table), 128)},
                "clusterAddrTable": {c: java_map_order(list(self.cluster_addr_table[c]))
                                     for c in java_map_order(list(self.cluster_addr_table), 32)}}

    @classmethod
    def from_json(cls, d: Any) -> ClusterInfo:
        if not isinstance(d, dict):
            raise CodecError("ClusterInfo is not an object")
        return cls({str(k): BrokerData.from_json(v) for k, v in (d.get("brokerAddrTable") or {}).items()},
                   {str(k): tuple(v) for k, v in (d.get("clusterAddrTable") or {}).items()})

    def decoded(self) -> dict[str, Any]:
        return {"brokerAddrTable": {n: (b.cluster, dict(b.broker_addrs)) for n, b in self.broker_addr_table.items()},
                "clusterAddrTable": {c: sorted(v, key=str) for c, v in self.cluster_addr_table.items()}}


@dataclass(frozen=True)
class TopicList:
    topic_list: tuple[str, ...]
    broker_addr: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.broker_addr is not None:
            out["brokerAddr"] = self.broker_addr
        out["topicList"] = java_map_order(list(self.topic_list))
        return out

    @classmethod
    def from_json(cls, d: Any) -> TopicList:
        if not isinstance(d, dict):
            raise CodecError("TopicList is not an object")
        return cls(tuple(str(t) for t in _list(d, "topicList")), d.get("brokerAddr"))


# ----------------------------------------------------------------------------------- registration body
def topic_config(topic: str, read_queue_nums: int = 16, write_queue_nums: int = 16, perm: int = 6,
                 topic_filter_type: str = "SINGLE_TAG", topic_sys_flag: int = 0, order: bool = False) -> dict[str, Any]:
    """A ``TopicConfig`` as fastjson writes it (the defaults are Java's)."""
    return {"order": order, "perm": perm, "readQueueNums": read_queue_nums, "topicFilterType": topic_filter_type,
            "topicName": topic, "topicSysFlag": topic_sys_flag, "writeQueueNums": write_queue_nums}


@dataclass(frozen=True)
class RegisterBrokerBody:
    """``RegisterBrokerBody``: the topic config table (topic -> TopicConfig JSON), the DataVersion
    (``{"counter", "timestamp"}``) and the filter server list."""

    topic_config_table: dict[str, dict[str, Any]] = field(default_factory=dict)
    data_version: dict[str, int] = field(default_factory=lambda: {"counter": 0, "timestamp": 0})
    filter_server_list: tuple[str, ...] = ()

    def encode(self, compressed: bool = False) -> bytes:
        if not compressed:
            table = {t: self.topic_config_table[t] for t in java_map_order(list(self.topic_config_table))}
            return dumps({"filterServerList": list(self.filter_server_list), "topicConfigSerializeWrapper": {
                "dataVersion": self.data_version, "topicConfigTable": table}})
        out = bytearray()
        version = dumps(self.data_version)
        out += struct.pack(">i", len(version)) + version
        out += struct.pack(">i", len(self.topic_config_table))
        for tc in self.topic_config_table.values():
            text = " ".join(str(tc.get(k, d)) for k, d in (("topicName", ""), ("readQueueNums", 16),
                            ("writeQueueNums", 16), ("perm", 6), ("topicFilterType", "SINGLE_TAG"))).encode()
            out += struct.pack(">i", len(text)) + text
        servers = dumps(list(self.filter_server_list))
        out += struct.pack(">i", len(servers)) + servers
        return zlib.compress(bytes(out), 9)

    @classmethod
    def decode(cls, data: bytes, compressed: bool, wrapper_only: bool = False) -> RegisterBrokerBody:
        """``RegisterBrokerBody.decode``; CodecError ("Failed to decode RegisterBrokerBody") on bad bytes.
        ``wrapper_only``: the body is a bare ``TopicConfigSerializeWrapper`` (a broker older than 3.0.11)."""
        try:
            if wrapper_only:
                return _decode_json(dumps({"topicConfigSerializeWrapper": loads(data)}))
            return _decode_compressed(data) if compressed else _decode_json(data)
        except (ValueError, KeyError, TypeError, struct.error, zlib.error) as e:
            raise CodecError(f"Failed to decode RegisterBrokerBody: {e}") from None


def _decode_json(data: bytes) -> RegisterBrokerBody:
    d = loads(data)
    if not isinstance(d, dict):
        raise ValueError("not a JSON object")
    wrapper = d.get("topicConfigSerializeWrapper") or {}
    if not isinstance(wrapper, dict):
        raise ValueError("topicConfigSerializeWrapper is not an object")
    table = wrapper.get("topicConfigTable") or {}
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise ValueError("topicConfigTable is not an object of TopicConfig")
    version = wrapper.get("dataVersion") or {"counter": 0, "timestamp": 0}
    servers = d.get("filterServerList") or []
    if not isinstance(servers, list):
        raise ValueError("filterServerList is not an array")
    return RegisterBrokerBody({str(k): _topic_config_of(v) for k, v in table.items()}, _version_of(version),
                              tuple(str(s) for s in servers))


def _decode_compressed(data: bytes) -> RegisterBrokerBody:
    raw = zlib.decompress(data)
    pos = 0

    def chunk() -> bytes:
        nonlocal pos
        (n,) = struct.unpack_from(">i", raw, pos)
        if n < 0 or pos + 4 + n > len(raw):
            raise ValueError("End of compressed data has reached")
        pos += 4 + n
        return raw[pos - n:pos]

    version = _version_of(loads(chunk()))
    (count,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    table: dict[str, dict[str, Any]] = {}
    for _ in range(count):
        parts = chunk().decode("utf-8").split(" ")
        if len(parts) != 5 or parts[4] not in TOPIC_FILTER_TYPES:  # Java: a null topic name, then an NPE
            raise ValueError(f"topic config {' '.join(parts)!r}")
        table[parts[0]] = topic_config(parts[0], int(parts[1]), int(parts[2]), int(parts[3]), parts[4])
    servers = loads(chunk())
    return RegisterBrokerBody(table, version, tuple(str(s) for s in servers or ()))


def _topic_config_of(d: dict[str, Any]) -> dict[str, Any]:
    if d.get("topicFilterType", "SINGLE_TAG") not in TOPIC_FILTER_TYPES:
        raise ValueError(f"topicFilterType {d.get('topicFilterType')!r}")
    return topic_config(str(d.get("topicName")), int(d.get("readQueueNums", 16)), int(d.get("writeQueueNums", 16)),
                        int(d.get("perm", 6)), d.get("topicFilterType", "SINGLE_TAG"), int(d.get("topicSysFlag", 0)),
                        bool(d.get("order", False)))


def _version_of(d: Any) -> dict[str, int]:
    if not isinstance(d, dict):
        raise ValueError("dataVersion is not an object")
    return {"counter": int(d.get("counter", 0)), "timestamp": int(d.get("timestamp", 0))}


def _str(d: dict[str, Any], key: str) -> str:
    value = d.get(key)
    if not isinstance(value, str):
        raise CodecError(f"{key} is {value!r}, not a string")
    return value


def _int(d: dict[str, Any], key: str) -> int:
    value = d.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool):
        raise CodecError(f"{key} is {value!r}, not an integer")
    return value


def _list(d: dict[str, Any], key: str) -> list[Any]:
    value = d.get(key) or []
    if not isinstance(value, list):
        raise CodecError(f"{key} is not an array")
    return value
