"""Routes as a RocketMQ 4.9.5 client keeps them, and how a producer picks a queue: plain objects, no I/O.

* :class:`TopicPublishInfo` and :func:`topic_route_data2_topic_publish_info` (``MQClientInstance``): the
  writable queues of the brokers that have a master, brokers sorted by name, and ``sendWhichQueue``;
* :func:`topic_route_data2_topic_subscribe_info`: the readable queues;
* :class:`BrokerAddrTable`: brokerName -> brokerId -> address, ``findBrokerAddressInPublish`` /
  ``findBrokerAddressInSubscribe``;
* :class:`ThreadLocalIndex`: Java starts it at a random value; here the start is an input (``start``) so the
  choices replay;
* :class:`LatencyFaultToleranceImpl` and :class:`MQFaultStrategy` (``client/latency``): the latency table,
  ``sendLatencyFaultEnable`` off by default, the not-available durations of 4.9.5. When it is on, Java's
  ``selectOneMessageQueue`` changes the brokerName and queueId of a MessageQueue object of the route
  (``pickOneAtLeast``'s branch); that mutation is modelled: the queue is replaced in the route's list, so
  later choices see it as Java's do. The fault table's iteration order is ``ConcurrentHashMap``'s (the
  bucket order of the names' hashes), as Java's ``pickOneAtLeast`` sees it before its stable sort.

Clocks are inputs (milliseconds), never read here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketlab.client.message import MessageQueue
from rocketlab.namesrv.route import PERM_READ, PERM_WRITE, TopicRouteData
from rocketlab.remoting.fastjson import hashmap_order

MASTER_ID = 0


class ThreadLocalIndex:
    """``ThreadLocalIndex``: ``incrementAndGet`` from ``start`` (Java: ``Math.abs(random.nextInt())``)."""

    def __init__(self, start: int = 0) -> None:
        self.index = abs(start) & 0x7FFFFFFF

    def increment_and_get(self) -> int:
        self.index = (self.index + 1) & 0xFFFFFFFF
        signed = self.index - (1 << 32) if self.index & 0x80000000 else self.index
        return abs(signed & 0x7FFFFFFF)


@dataclass
class TopicPublishInfo:
    message_queue_list: list[MessageQueue] = field(default_factory=list)
    send_which_queue: ThreadLocalIndex = field(default_factory=ThreadLocalIndex)
    route: TopicRouteData | None = None
    order_topic: bool = False

    def ok(self) -> bool:
        return bool(self.message_queue_list)

    def select_one_message_queue(self, last_broker_name: str | None = None) -> MessageQueue:
        """``selectOneMessageQueue(lastBrokerName)``: round robin, avoiding the broker that just failed."""
        n = len(self.message_queue_list)
        if last_broker_name is not None:
            for _ in range(n):
                pos = abs(self.send_which_queue.increment_and_get()) % n
                mq = self.message_queue_list[pos]
                if mq.broker_name != last_broker_name:
                    return mq
        return self.message_queue_list[abs(self.send_which_queue.increment_and_get()) % n]

    def get_queue_id_by_broker(self, broker_name: str | None) -> int:
        """The broker's write queue count in the route (-1 when it has none)."""
        for qd in (self.route.queue_datas if self.route else ()):
            if qd.broker_name == broker_name:
                return qd.write_queue_nums
        return -1


def topic_route_data2_topic_publish_info(topic: str, route: TopicRouteData, start_index: int = 0) -> TopicPublishInfo:
    info = TopicPublishInfo(send_which_queue=ThreadLocalIndex(start_index), route=route)
    brokers = {b.broker_name: b for b in route.broker_datas}
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        if not qd.perm & PERM_WRITE:
            continue
        bd = brokers.get(qd.broker_name)
        if bd is None or MASTER_ID not in bd.broker_addrs:
            continue
        info.message_queue_list.extend(MessageQueue(topic, qd.broker_name, i) for i in range(qd.write_queue_nums))
    return info


def topic_route_data2_topic_subscribe_info(topic: str, route: TopicRouteData) -> set[MessageQueue]:
    return {MessageQueue(topic, qd.broker_name, i) for qd in route.queue_datas if qd.perm & PERM_READ
            for i in range(qd.read_queue_nums)}


class BrokerAddrTable:
    """``brokerAddrTable``: brokerName -> {brokerId: address}, replaced from each route a client reads."""

    def __init__(self) -> None:
        self.table: dict[str, dict[int, str]] = {}

    def update(self, route: TopicRouteData) -> None:
        for bd in route.broker_datas:
            self.table[bd.broker_name] = dict(bd.broker_addrs)

    def find_broker_address_in_publish(self, broker_name: str) -> str | None:
        return self.table.get(broker_name, {}).get(MASTER_ID)

    def find_broker_address_in_subscribe(self, broker_name: str, broker_id: int = MASTER_ID,
                                         only_this_broker: bool = False) -> tuple[str, bool] | None:
        """The address and whether it is a slave's; another member when ``broker_id`` has none."""
        addrs = self.table.get(broker_name)
        if not addrs:
            return None
        addr = addrs.get(broker_id)
        if addr is None and not only_this_broker:
            broker_id, addr = next(iter(addrs.items()))
        return None if addr is None else (addr, broker_id != MASTER_ID)

    def any_broker_address(self) -> str | None:
        """A master's address, else any (``findBrokerAddrByTopic``'s fallback for a heartbeat)."""
        for addrs in self.table.values():
            if MASTER_ID in addrs:
                return addrs[MASTER_ID]
        return next((a for addrs in self.table.values() for a in addrs.values()), None)

    def masters(self) -> list[str]:
        """Every master's address (where heartbeats go)."""
        return [addrs[MASTER_ID] for addrs in self.table.values() if MASTER_ID in addrs]


# ------------------------------------------------------------------------------------------ latency
@dataclass
class FaultItem:
    name: str
    current_latency: int = 0
    start_timestamp: int = 0

    def is_available(self, now_ms: int) -> bool:
        return now_ms - self.start_timestamp >= 0


class LatencyFaultToleranceImpl:
    def __init__(self, which_item_worst_start: int = 0) -> None:
        self.fault_item_table: dict[str, FaultItem] = {}
        self.which_item_worst = ThreadLocalIndex(which_item_worst_start)

    def update_fault_item(self, name: str, current_latency: int, not_available_duration: int, now_ms: int) -> None:
        item = self.fault_item_table.setdefault(name, FaultItem(name))
        item.current_latency = current_latency
        item.start_timestamp = now_ms + not_available_duration

    def is_available(self, name: str, now_ms: int) -> bool:
        item = self.fault_item_table.get(name)
        return True if item is None else item.is_available(now_ms)

    def remove(self, name: str | None) -> None:
        self.fault_item_table.pop(name, None)  # type: ignore[arg-type]

    def pick_one_at_least(self, now_ms: int) -> str | None:
        items = [self.fault_item_table[n] for n in hashmap_order(list(self.fault_item_table))]
        if not items:
            return None
        items.sort(key=lambda f: (not f.is_available(now_ms), f.current_latency, f.start_timestamp))
        half = len(items) // 2
        if half <= 0:
            return items[0].name
        return items[self.which_item_worst.increment_and_get() % half].name


class MQFaultStrategy:
    LATENCY_MAX = (50, 100, 550, 1000, 2000, 3000, 15000)
    NOT_AVAILABLE_DURATION = (0, 0, 30000, 60000, 120000, 180000, 600000)

    def __init__(self, send_latency_fault_enable: bool = False, which_item_worst_start: int = 0) -> None:
        self.send_latency_fault_enable = send_latency_fault_enable
        self.latency_fault_tolerance = LatencyFaultToleranceImpl(which_item_worst_start)

    def select_one_message_queue(self, tp: TopicPublishInfo, last_broker_name: str | None,
                                 now_ms: int) -> MessageQueue:
        if not self.send_latency_fault_enable:
            return tp.select_one_message_queue(last_broker_name)
        lft = self.latency_fault_tolerance
        queues = tp.message_queue_list
        index = tp.send_which_queue.increment_and_get()
        for _ in range(len(queues)):
            pos = abs(index) % len(queues)
            index += 1
            if lft.is_available(queues[pos].broker_name, now_ms):
                return queues[pos]
        not_best = lft.pick_one_at_least(now_ms)
        write_queue_nums = tp.get_queue_id_by_broker(not_best)
        if write_queue_nums > 0:
            mq = tp.select_one_message_queue()
            if not_best is not None:  # Java mutates the route's MessageQueue object: so do we, in the list
                changed = MessageQueue(mq.topic, not_best, tp.send_which_queue.increment_and_get() % write_queue_nums)
                queues[queues.index(mq)] = changed
                mq = changed
            return mq
        lft.remove(not_best)
        return tp.select_one_message_queue()

    def update_fault_item(self, broker_name: str, current_latency: int, isolation: bool, now_ms: int) -> None:
        if self.send_latency_fault_enable:
            duration = self.compute_not_available_duration(30000 if isolation else current_latency)
            self.latency_fault_tolerance.update_fault_item(broker_name, current_latency, duration, now_ms)

    def compute_not_available_duration(self, current_latency: int) -> int:
        for i in range(len(self.LATENCY_MAX) - 1, -1, -1):
            if current_latency >= self.LATENCY_MAX[i]:
                return self.NOT_AVAILABLE_DURATION[i]
        return 0
