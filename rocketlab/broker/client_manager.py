"""The broker's table of connected clients: ``ProducerManager``, ``ConsumerManager`` and their parts.

Models RocketMQ 4.9.5's ``broker/client``: ``ClientChannelInfo`` (a client's channel, id, language,
version and last heartbeat), ``ConsumerGroupInfo`` (a group's channels, subscriptions, consume type,
message model, consume-from-where: ``updateChannel``, ``updateSubscription``), ``ConsumerManager``
(``registerConsumer``, ``unregisterConsumer``, ``doChannelCloseEvent``, ``scanNotActiveChannel``) and
``ProducerManager``. A channel is named by the client's connection (its remote ``host:port``, the
``src`` the runtime gives a request). A group change is returned as a :class:`GroupEvent` (Java's
``ConsumerIdsChangeListener.handle``); the caller notifies the group's channels.

Differences: the expiry scan drops an expired channel but cannot close its connection (a sans-IO core
has no action for that; Java's ``RemotingUtil.closeChannel``); the client's connection closing
removes it (``on_peer_closed``) as Java's ``onChannelClose`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketlab.broker.client_messages import ConsumerData, SubscriptionData

CHANNEL_EXPIRED_TIMEOUT_MS = 1000 * 120
"""``ConsumerManager`` / ``ProducerManager.CHANNEL_EXPIRED_TIMEOUT``."""
SCAN_INTERVAL_MS = 1000 * 10
"""``ClientHousekeepingService``: the scan every 10 s, first 10 s after start."""


@dataclass
class ClientChannelInfo:
    """``ClientChannelInfo``: ``channel`` names the client's connection."""

    channel: str
    client_id: str
    language: str = "JAVA"
    version: int = 0
    last_update_timestamp: int = 0


@dataclass(frozen=True)
class GroupEvent:
    """``ConsumerGroupEvent`` CHANGE (with the channels to notify), UNREGISTER or REGISTER."""

    kind: str
    group: str
    channels: tuple[str, ...] = ()


@dataclass
class ConsumerGroupInfo:
    """``ConsumerGroupInfo``."""

    group_name: str
    consume_type: str
    message_model: str
    consume_from_where: str
    channel_info_table: dict[str, ClientChannelInfo] = field(default_factory=dict)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict)
    last_update_timestamp: int = 0

    def all_channels(self) -> tuple[str, ...]:
        return tuple(self.channel_info_table)

    def all_client_ids(self) -> list[str]:
        return [info.client_id for info in self.channel_info_table.values()]

    def find_subscription_data(self, topic: str) -> SubscriptionData | None:
        return self.subscription_table.get(topic)

    def update_channel(self, info_new: ClientChannelInfo, data: ConsumerData, now_ms: int) -> bool:
        self.consume_type, self.message_model = data.consume_type, data.message_model
        self.consume_from_where = data.consume_from_where
        info_old = self.channel_info_table.get(info_new.channel)
        updated = False
        if info_old is None:
            self.channel_info_table[info_new.channel] = info_old = info_new
            updated = True
        elif info_old.client_id != info_new.client_id:  # "[BUG] consumer channel exist in broker, but clientId not equal"
            self.channel_info_table[info_new.channel] = info_new
        self.last_update_timestamp = now_ms
        info_old.last_update_timestamp = now_ms
        return updated

    def update_subscription(self, sub_list: tuple[SubscriptionData, ...], now_ms: int) -> bool:
        updated = False
        for sub in sub_list:
            old = self.subscription_table.get(sub.topic)
            if old is None:
                self.subscription_table[sub.topic] = sub
                updated = True
            elif sub.sub_version > old.sub_version:
                self.subscription_table[sub.topic] = sub  # a newer version: replaced, not "updated"
        topics = {sub.topic for sub in sub_list}
        for topic in [t for t in self.subscription_table if t not in topics]:
            del self.subscription_table[topic]
            updated = True
        self.last_update_timestamp = now_ms
        return updated


class ConsumerManager:
    """``ConsumerManager``: group name -> :class:`ConsumerGroupInfo`."""

    def __init__(self) -> None:
        self.consumer_table: dict[str, ConsumerGroupInfo] = {}

    def get_consumer_group_info(self, group: str) -> ConsumerGroupInfo | None:
        return self.consumer_table.get(group)

    def register_consumer(self, info: ClientChannelInfo, data: ConsumerData, notify: bool,
                          now_ms: int) -> tuple[bool, list[GroupEvent]]:
        group = self.consumer_table.get(data.group_name)
        if group is None:
            group = self.consumer_table[data.group_name] = ConsumerGroupInfo(
                data.group_name, data.consume_type, data.message_model, data.consume_from_where)
        r1 = group.update_channel(info, data, now_ms)
        r2 = group.update_subscription(data.subscriptions, now_ms)
        events = []
        if (r1 or r2) and notify:
            events.append(GroupEvent("CHANGE", data.group_name, group.all_channels()))
        events.append(GroupEvent("REGISTER", data.group_name))
        return r1 or r2, events

    def unregister_consumer(self, group_name: str, channel: str, notify: bool) -> list[GroupEvent]:
        group = self.consumer_table.get(group_name)
        if group is None:
            return []
        group.channel_info_table.pop(channel, None)
        events = []
        if not group.channel_info_table and self.consumer_table.pop(group_name, None) is not None:
            events.append(GroupEvent("UNREGISTER", group_name))
        if notify:
            events.append(GroupEvent("CHANGE", group_name, group.all_channels()))
        return events

    def do_channel_close_event(self, channel: str) -> list[GroupEvent]:
        events = []
        for name, group in list(self.consumer_table.items()):
            if group.channel_info_table.pop(channel, None) is None:
                continue
            if not group.channel_info_table and self.consumer_table.pop(name, None) is not None:
                events.append(GroupEvent("UNREGISTER", name))
            events.append(GroupEvent("CHANGE", name, group.all_channels()))
        return events

    def scan_not_active_channel(self, now_ms: int) -> list[tuple[str, str]]:
        """Drop channels silent for over 120 s, and groups left empty: (group, channel) dropped."""
        dropped = []
        for name, group in list(self.consumer_table.items()):
            for channel, info in list(group.channel_info_table.items()):
                if now_ms - info.last_update_timestamp > CHANNEL_EXPIRED_TIMEOUT_MS:
                    del group.channel_info_table[channel]
                    dropped.append((name, channel))
            if not group.channel_info_table:
                del self.consumer_table[name]
        return dropped


class ProducerManager:
    """``ProducerManager``: group name -> channel -> :class:`ClientChannelInfo`."""

    def __init__(self) -> None:
        self.group_channel_table: dict[str, dict[str, ClientChannelInfo]] = {}

    def register_producer(self, group: str, info: ClientChannelInfo, now_ms: int) -> None:
        channels = self.group_channel_table.setdefault(group, {})
        old = channels.get(info.channel)
        if old is None:
            channels[info.channel] = old = info
        old.last_update_timestamp = now_ms

    def unregister_producer(self, group: str, channel: str) -> None:
        channels = self.group_channel_table.get(group)
        if channels is not None:
            channels.pop(channel, None)
            if not channels:
                del self.group_channel_table[group]

    def do_channel_close_event(self, channel: str) -> None:
        for group in list(self.group_channel_table):
            self.unregister_producer(group, channel)

    def scan_not_active_channel(self, now_ms: int) -> list[tuple[str, str]]:
        dropped = []
        for group, channels in list(self.group_channel_table.items()):
            for channel, info in list(channels.items()):
                if now_ms - info.last_update_timestamp > CHANNEL_EXPIRED_TIMEOUT_MS:
                    del channels[channel]
                    dropped.append((group, channel))
        return dropped
