"""RouteTables: what ``MQClientInstance`` keeps of routes - ``topicRouteTable``, ``brokerAddrTable`` and each topic's
``TopicPublishInfo`` - and how a route read from a name server updates them (``updateTopicRouteInfoFromNameServer``),
shared by the asyncio client (:mod:`rocketlab.client.instance`) and the simulated one
(:mod:`rocketlab.client.client_core`); with the fields of the ``client_route`` and ``client_send`` trace events.
"""

from __future__ import annotations

from typing import Any

from rocketlab.client.protocol import SendMessageRequest
from rocketlab.client.route import BrokerAddrTable, TopicPublishInfo, topic_route_data2_topic_publish_info
from rocketlab.namesrv.route import TopicRouteData
from rocketlab.store.message import string_to_message_properties


def route_targets(route: TopicRouteData | None) -> tuple[str, ...]:
    """A route as the ``client_route`` event names it: ``brokerName@masterAddr`` (``-`` without a master)."""
    return () if route is None else tuple(sorted(f"{b.broker_name}@{b.broker_addrs.get(0, '-')}"
                                                 for b in route.broker_datas))


def send_attempt_fields(request: SendMessageRequest, attempt: int) -> dict[str, Any]:
    """The ``client_send`` fields of one SEND_MESSAGE attempt (its answer's are added by the caller)."""
    h = request.header
    props = string_to_message_properties(h["properties"]) if h["properties"] else {}
    return {"topic": h["topic"], "broker_name": h["brokerName"], "queue_id": h["queueId"],
            "uniq_key": props.get("UNIQ_KEY"), "attempt": attempt}


class RouteTables:
    """``topicRouteTable``, ``brokerAddrTable``, the publish infos; ``start_index``: where every ``sendWhichQueue``
    starts (Java: random)."""

    def __init__(self, start_index: int = 0) -> None:
        self.start_index = start_index
        self.broker_addrs = BrokerAddrTable()
        self.topic_route_table: dict[str, TopicRouteData] = {}
        self.publish_info: dict[str, TopicPublishInfo] = {}
        self.routes_seen: dict[str, tuple[str, ...]] = {}

    def route_changed(self, topic: str, route: TopicRouteData | None) -> bool:
        """True when ``route`` names other masters than the last one seen for ``topic`` (or none was given)."""
        targets = route_targets(route)
        if self.routes_seen.get(topic) != targets or route is None:
            self.routes_seen[topic] = targets
            return True
        return False

    def apply(self, topic: str, route: TopicRouteData) -> None:
        """The route replaces the topic's, the brokers' addresses and its publish info (keeping its queue counter)."""
        self.topic_route_table[topic] = route
        self.broker_addrs.update(route)
        old = self.publish_info.get(topic)
        info = topic_route_data2_topic_publish_info(topic, route, self.start_index)
        if old is not None:
            info.send_which_queue = old.send_which_queue
        self.publish_info[topic] = info
