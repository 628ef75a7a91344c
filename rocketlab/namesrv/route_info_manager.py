"""RouteInfoManager (RocketMQ 4.9.5, ``namesrv/routeinfo/RouteInfoManager``): the name server's tables.

* ``topic_queue_table``: topic -> brokerName -> :class:`~rocketlab.namesrv.route.QueueData` (from the
  MASTER's registrations only, and only when its DataVersion changed or it registers first);
* ``broker_addr_table``: brokerName -> cluster and brokerId -> address (a registration removes the same
  address under another id first: a slave that became master moves from id 1 to id 0);
* ``cluster_addr_table``: cluster -> brokerNames;
* ``broker_live_table``: address -> last registration time, DataVersion, the connection it came on
  (``channel``: the runtime's name of that connection), haServerAddr;
* ``filter_server_table``: address -> filter servers.

:meth:`scan_not_active_broker` removes a broker not heard from for ``BROKER_CHANNEL_EXPIRED_TIME``
(120 s); :meth:`on_channel_destroy` removes the broker whose connection closed, as
``BrokerHousekeepingService`` does. Each removal leaves a broker name without addresses out of its
cluster and the topic table. Single-threaded (a sans-IO core): no locks. Iteration orders follow Java's
``HashMap`` where an answer shows them (:func:`~rocketlab.namesrv.route.java_map_order`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlab.namesrv.route import (
    BrokerData,
    ClusterInfo,
    QueueData,
    TopicList,
    TopicRouteData,
    java_map_order,
)

BROKER_CHANNEL_EXPIRED_TIME = 1000 * 60 * 2
MASTER_ID = 0


@dataclass
class BrokerLiveInfo:
    last_update_timestamp: int
    data_version: dict[str, int]
    channel: str | None
    ha_server_addr: str


@dataclass(frozen=True)
class RegisterBrokerResult:
    ha_server_addr: str | None = None
    master_addr: str | None = None
    first: bool = False
    """The broker's address was new under its id (Java's ``registerFirst``)."""


@dataclass(frozen=True)
class Removed:
    """A broker address the tables dropped: what a trace event reports."""

    broker_addr: str
    broker_name: str | None
    broker_id: int | None
    cluster: str | None


@dataclass
class RouteInfoManager:
    topic_queue_table: dict[str, dict[str, QueueData]] = field(default_factory=dict)
    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    cluster_addr_table: dict[str, list[str]] = field(default_factory=dict)
    broker_live_table: dict[str, BrokerLiveInfo] = field(default_factory=dict)
    filter_server_table: dict[str, list[str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ registration
    def register_broker(self, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int,
                        ha_server_addr: str, topic_config_table: dict[str, dict[str, Any]] | None,
                        data_version: dict[str, int], filter_server_list: list[str] | None,
                        channel: str | None, now_ms: int) -> RegisterBrokerResult:
        names = self.cluster_addr_table.setdefault(cluster_name, [])
        if broker_name not in names:
            names.append(broker_name)
        register_first = False
        broker_data = self.broker_addr_table.get(broker_name)
        if broker_data is None:
            register_first = True
            broker_data = BrokerData(cluster_name, broker_name, {})
            self.broker_addr_table[broker_name] = broker_data
        addrs = broker_data.broker_addrs
        for bid in [k for k, v in addrs.items() if v == broker_addr and k != broker_id]:
            del addrs[bid]  # the same IP:PORT has one record: slave -> master removes <1, addr> first
        old_addr = addrs.get(broker_id)
        addrs[broker_id] = broker_addr
        register_first = register_first or old_addr is None
        if topic_config_table is not None and broker_id == MASTER_ID:
            if self.is_broker_topic_config_changed(broker_addr, data_version) or register_first:
                for tc in topic_config_table.values():
                    self._create_and_update_queue_data(broker_name, tc)
        self.broker_live_table[broker_addr] = BrokerLiveInfo(now_ms, dict(data_version), channel, ha_server_addr)
        if filter_server_list is not None:
            if filter_server_list:
                self.filter_server_table[broker_addr] = list(filter_server_list)
            else:
                self.filter_server_table.pop(broker_addr, None)
        ha, master = None, None
        if broker_id != MASTER_ID:
            master_addr = addrs.get(MASTER_ID)
            live = self.broker_live_table.get(master_addr) if master_addr is not None else None
            if live is not None:
                ha, master = live.ha_server_addr, master_addr
        return RegisterBrokerResult(ha, master, register_first)

    def is_broker_topic_config_changed(self, broker_addr: str, data_version: dict[str, int]) -> bool:
        prev = self.broker_live_table.get(broker_addr)
        return prev is None or prev.data_version != data_version

    def _create_and_update_queue_data(self, broker_name: str, tc: dict[str, Any]) -> None:
        qd = QueueData(broker_name, int(tc["readQueueNums"]), int(tc["writeQueueNums"]), int(tc["perm"]),
                       int(tc.get("topicSysFlag", 0)))
        self.topic_queue_table.setdefault(str(tc["topicName"]), {})[broker_name] = qd

    def unregister_broker(self, cluster_name: str, broker_addr: str, broker_name: str,
                          broker_id: int) -> Removed | None:
        live = self.broker_live_table.pop(broker_addr, None)
        self.filter_server_table.pop(broker_addr, None)
        remove_broker_name = False
        broker_data = self.broker_addr_table.get(broker_name)
        removed = None
        if broker_data is not None:
            addr = broker_data.broker_addrs.pop(broker_id, None)
            if addr is not None:
                removed = Removed(addr, broker_name, broker_id, broker_data.cluster)
            if not broker_data.broker_addrs:
                del self.broker_addr_table[broker_name]
                remove_broker_name = True
        if remove_broker_name:
            names = self.cluster_addr_table.get(cluster_name)
            if names is not None and broker_name in names:
                names.remove(broker_name)
                if not names:
                    del self.cluster_addr_table[cluster_name]
            self._remove_topic_by_broker_name(broker_name)
        if removed is None and live is not None:
            removed = Removed(broker_addr, broker_name, broker_id, cluster_name)
        return removed

    def _remove_topic_by_broker_name(self, broker_name: str) -> None:
        for topic in list(self.topic_queue_table):
            queues = self.topic_queue_table[topic]
            queues.pop(broker_name, None)
            if not queues:
                del self.topic_queue_table[topic]

    # ------------------------------------------------------------------ expiry
    def scan_not_active_broker(self, now_ms: int) -> list[Removed]:
        """Brokers whose last registration is older than BROKER_CHANNEL_EXPIRED_TIME, removed."""
        out = []
        for addr, live in list(self.broker_live_table.items()):
            if live.last_update_timestamp + BROKER_CHANNEL_EXPIRED_TIME < now_ms:
                del self.broker_live_table[addr]
                out.append(self.on_channel_destroy(addr, None) or Removed(addr, None, None, None))  # Java: the channel
                # is no longer in the live table, so the address decides
        return out

    def on_channel_destroy(self, remote_addr: str, channel: str | None) -> Removed | None:
        """``onChannelDestroy``: the broker registered on ``channel`` (else the one at ``remote_addr``) goes."""
        found = None
        if channel is not None:
            found = next((a for a, live in self.broker_live_table.items() if live.channel == channel), None)
        found = found or remote_addr
        if not found:
            return None
        self.broker_live_table.pop(found, None)
        self.filter_server_table.pop(found, None)
        name_found, bid_found, cluster, remove_name = None, None, None, False
        for name, bd in list(self.broker_addr_table.items()):
            for bid, addr in list(bd.broker_addrs.items()):
                if addr == found:
                    name_found, bid_found, cluster = name, bid, bd.cluster
                    del bd.broker_addrs[bid]
                    break
            if not bd.broker_addrs:
                remove_name = True
                del self.broker_addr_table[name]
            if name_found is not None:
                break
        if name_found is not None and remove_name:
            for cluster_name, names in list(self.cluster_addr_table.items()):
                if name_found in names:
                    names.remove(name_found)
                    if not names:
                        del self.cluster_addr_table[cluster_name]
                    break
        if remove_name and name_found is not None:
            self._remove_topic_by_broker_name(name_found)
        return Removed(found, name_found, bid_found, cluster) if name_found is not None else None

    def channels(self) -> set[str]:
        return {live.channel for live in self.broker_live_table.values() if live.channel is not None}

    # ------------------------------------------------------------------ answers
    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        queues = self.topic_queue_table.get(topic)
        if queues is None:
            return None
        names = java_map_order(list(queues))
        broker_datas, filter_servers = [], {}
        for name in java_map_order(names):
            bd = self.broker_addr_table.get(name)
            if bd is None:
                continue
            broker_datas.append(BrokerData(bd.cluster, bd.broker_name, dict(bd.broker_addrs)))
            for addr in bd.broker_addrs.values():
                if addr in self.filter_server_table:
                    filter_servers[addr] = tuple(self.filter_server_table[addr])
        if not broker_datas:
            return None
        return TopicRouteData(tuple(queues[n] for n in names), tuple(broker_datas), filter_servers)

    def get_all_cluster_info(self) -> ClusterInfo:
        return ClusterInfo({n: BrokerData(b.cluster, b.broker_name, dict(b.broker_addrs))
                            for n, b in self.broker_addr_table.items()},
                           {c: tuple(names) for c, names in self.cluster_addr_table.items()})

    def get_all_topic_list(self) -> TopicList:
        return TopicList(tuple(self.topic_queue_table))

    def describe(self) -> dict[str, Any]:
        return {"brokers": {a: {"channel": live.channel, "ha_server_addr": live.ha_server_addr,
                                "last_update_timestamp": live.last_update_timestamp}
                            for a, live in self.broker_live_table.items()},
                "clusters": {c: list(n) for c, n in self.cluster_addr_table.items()},
                "topics": sorted(self.topic_queue_table)}
