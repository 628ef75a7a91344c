"""Lab 08's graded tests: ``allocate`` (``AllocateMessageQueueAveragely``) and ``select_one_message_queue``
(``MQFaultStrategy.selectOneMessageQueue``), in decision tables over their whole input domain and in scenarios.

The tables compare every answer with the kit's own (:func:`rocketlab.client.consumer.allocate_averagely`,
:func:`rocketlab.client.route.select_one_message_queue`), which ``tests/grading/test_lab08_java.py`` shows equal
to RocketMQ 4.9.5's on the same tables. The scenarios run the kit's real client cores with the learner's function
plugged in: a consumer group of :class:`~rocketlab.client.consumer.RebalanceImpl` members rebalancing as members
come and go (every queue owned by exactly one member), and a :class:`~rocketlab.client.producer.DefaultMQProducerImpl`
sending through two broker groups while a master dies and comes back. The brokers of the scenarios are played
by :class:`Brokers` (up or down, answering each request the client core yields): what is graded is where the
client sends and what it owns, not the broker. rocketlab's own addition (no Java class is modelled here).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Generator
from typing import Any

from rocketlab.client.consumer import RebalanceImpl, RemoteBrokerOffsetStore, allocate_averagely
from rocketlab.client.message import Message, MessageClientIDSetter, MessageQueue
from rocketlab.client.producer import (
    Call,
    DefaultMQProducerImpl,
    FindRoute,
    MQClientException,
    ProducerConfig,
    RemotingError,
)
from rocketlab.client.protocol import (
    ConsumerList,
    GetConsumerListRequest,
    OffsetAnswer,
    SendMessageRequest,
    SendMessageResponse,
)
from rocketlab.client.route import (
    BrokerAddrTable,
    LatencyView,
    MQFaultStrategy,
    TopicPublishInfo,
    select_one_message_queue,
    topic_route_data2_topic_publish_info,
    topic_route_data2_topic_subscribe_info,
)
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import Calls, compare_table, expect, fields_of
from rocketlab.namesrv.route import PERM_READ, PERM_WRITE, BrokerData, QueueData, TopicRouteData

TOPIC = "TopicTest"
GROUP = "GID_lab08"
STRANGER = "10.0.0.99@4242"
"""A client id in no group's list (a member the broker does not know yet, or one already gone)."""
MAX_QUEUES, MAX_CONSUMERS = 16, 10


# ---------------------------------------------------------------------- allocate: tables
def mq_all_of(n: int, brokers: tuple[str, ...] = ("broker-a", "broker-b")) -> list[MessageQueue]:
    """``n`` queues spread over ``brokers`` (the first ones one more), sorted as RebalanceImpl sorts them."""
    counts = [n // len(brokers) + (i < n % len(brokers)) for i in range(len(brokers))]
    return sorted(MessageQueue(TOPIC, b, q) for b, c in zip(brokers, counts, strict=True) for q in range(c))


def cid_all_of(m: int) -> list[str]:
    """``m`` client ids as ``ClientConfig.buildMQClientId`` makes them (ip@pid), sorted."""
    return sorted(f"10.0.0.{i + 1}@{4000 + 7 * i}" for i in range(m))


def allocate_cases() -> list[tuple[str, str, list[MessageQueue], list[str]]]:
    """Every queue count 1..16, every group of 1..10 members, every member and one stranger."""
    cases = []
    for nq, nc in itertools.product(range(1, MAX_QUEUES + 1), range(1, MAX_CONSUMERS + 1)):
        mqs, cids = mq_all_of(nq), cid_all_of(nc)
        cases.extend((GROUP, cid, mqs, cids) for cid in [*cids, STRANGER])
    return cases


def _describe_allocate(case: tuple[str, str, list[MessageQueue], list[str]]) -> str:
    _, cid, mqs, cids = case
    where = f"member {cids.index(cid)} of {len(cids)}" if cid in cids else f"{cid!r}, in no member's place"
    return f"allocate({GROUP!r}, {where}, {len(mqs)} queues {_queues(mqs)}, cid_all={cids})"


def _queues(mqs: list[MessageQueue]) -> str:
    return "[" + ", ".join(f"{q.broker_name}:{q.queue_id}" for q in mqs) + "]"


def _allocation(got: Any) -> tuple[MessageQueue, ...]:
    return tuple(got)


@graded("lab08.allocate", points=3)
def allocation_table(ctx: Ctx) -> None:
    """Every queue count 1-16 with every group of 1-10 members: each member's queues, in order, as
    RocketMQ 4.9.5's AllocateMessageQueueAveragely gives them."""
    compare_table([c for c in allocate_cases() if c[1] != STRANGER], Calls(ctx.impl, post=_allocation),
                  lambda c: tuple(allocate_averagely(*c)), _describe_allocate)


@graded("lab08.allocate", points=1)
def stranger_owns_nothing(ctx: Ctx) -> None:
    """A client id that is not in cid_all (the broker does not list it yet) owns no queue."""
    compare_table([c for c in allocate_cases() if c[1] == STRANGER], Calls(ctx.impl, post=_allocation),
                  lambda c: tuple(allocate_averagely(*c)), _describe_allocate,
                  why=lambda c, want: "a member not in the list has no place in it")


@graded("lab08.allocate", points=1)
def group_covers_every_queue_once(ctx: Ctx) -> None:
    """Across each whole group (every member's answer together): every queue owned, none twice, and no
    member with two more queues than another."""
    cases = [c for c in allocate_cases() if c[1] != STRANGER]
    answers = iter(Calls(ctx.impl, post=_allocation).answers(cases))
    for (nq, nc) in itertools.product(range(1, MAX_QUEUES + 1), range(1, MAX_CONSUMERS + 1)):
        owned: dict[str, tuple[MessageQueue, ...]] = {}
        for cid in cid_all_of(nc):
            got, error = next(answers)
            if error is not None:
                raise AssertionError(f"allocate of member {cid} ({nq} queues, {nc} members) raised {error}")
            owned[cid] = got
        _check_partition(owned, mq_all_of(nq), f"{nq} queues, {nc} members")


def _check_partition(owned: dict[str, tuple[MessageQueue, ...]], mqs: list[MessageQueue], where: str) -> None:
    seen: dict[MessageQueue, str] = {}
    for cid, queues in owned.items():
        for q in queues:
            expect(q in mqs, f"{where}: {cid} owns {q.broker_name}:{q.queue_id}, which is not a queue of the topic")
            expect(q not in seen, f"{where}: {q.broker_name}:{q.queue_id} is owned twice ({seen.get(q)} and {cid}): "
                                  "both consume its messages")
            seen[q] = cid
    nobody = [q for q in mqs if q not in seen]
    expect(not nobody, f"{where}: nobody owns {_queues(nobody)}: their messages are never consumed")
    sizes = [len(v) for v in owned.values()]
    expect(max(sizes) - min(sizes) <= 1, f"{where}: members own {sizes} queues: not an even share")


@graded("lab08.allocate", points=1)
def empty_input_refused(ctx: Ctx) -> None:
    """No queue, no member or an empty client id is refused with an exception (Java's check throws
    IllegalArgumentException), never answered."""
    mqs, cids = mq_all_of(4), cid_all_of(2)
    for args, what in (((GROUP, cids[0], [], cids), "no queue"), ((GROUP, cids[0], mqs, []), "no member"),
                       ((GROUP, "", mqs, cids), "an empty client id")):
        ((got, error),) = list(Calls(ctx.impl).answers([args]))
        expect(error is not None, f"allocate with {what} returned {got!r}; Java's check refuses it "
                                  "(IllegalArgumentException: raise ValueError)")


# ---------------------------------------------------------------------- allocate: a live group
def _route(brokers: dict[str, int], dead: frozenset[str] = frozenset()) -> TopicRouteData:
    return TopicRouteData(
        tuple(QueueData(b, n, n, PERM_READ | PERM_WRITE) for b, n in sorted(brokers.items())),
        tuple(BrokerData("DefaultCluster", b, {} if b in dead else {0: _addr(b)}) for b in sorted(brokers)))


def _addr(broker: str) -> str:
    return f"127.0.0.1:{10911 + 100 * (ord(broker[-1]) - ord('a'))}"


def _answer_rebalance(gen: Generator[Call, Any, Any], listed: list[str]) -> Any:
    """Run one member's rebalance, the broker answering its requests (the group's member list, offsets 0)."""
    try:
        call = next(gen)
        while True:
            answer = ConsumerList(tuple(listed)) if isinstance(call.request, GetConsumerListRequest) else OffsetAnswer(0)
            call = gen.send(answer)
    except StopIteration as stop:
        return stop.value


@graded("lab08.allocate", points=3, seeds=range(4))
def group_rebalance(ctx: Ctx) -> None:
    """A consumer group of RebalanceImpl members (your allocate in each) on a topic of 1-3 brokers while
    members join and leave: after each round every queue is owned by exactly one member, and a member the
    broker does not list yet owns nothing."""
    rnd = random.Random(ctx.seed)
    brokers = {f"broker-{c}": rnd.choice((1, 2, 4, 8)) for c in "abc"[:rnd.randint(1, 3)]}
    route = _route(brokers)
    addrs = BrokerAddrTable()
    addrs.update(route)
    mqs = topic_route_data2_topic_subscribe_info(TOPIC, route)
    members: dict[str, RebalanceImpl] = {}
    pool = [f"10.0.{rnd.randint(0, 9)}.{rnd.randint(1, 250)}@{rnd.randint(1000, 99999)}" for _ in range(12)]
    history = []
    for _ in range(10):
        if members and (len(members) >= 7 or rnd.random() < 0.4):
            gone = rnd.choice(sorted(members))
            del members[gone]
            history.append(f"-{gone}")
        else:
            cid = rnd.choice([p for p in pool if p not in members])
            members[cid] = RebalanceImpl(GROUP, cid, RemoteBrokerOffsetStore(GROUP, addrs), addrs)
            members[cid].topic_subscribe_info_table[TOPIC] = set(mqs)
            history.append(f"+{cid}")
        listed = sorted(members)
        late = rnd.choice(listed) if len(listed) > 1 and rnd.random() < 0.3 else None
        for _cid, member in sorted(members.items()):  # "late": a newcomer the broker does not list yet
            _answer_rebalance(member.rebalance_by_topic(TOPIC), [c for c in listed if c != late])
        where = f"{sum(brokers.values())} queues on {len(brokers)} brokers, after {' '.join(history)}"
        if late is not None:
            expect(not members[late].process_queue_table,
                   f"{where}: {late} is not in the broker's list yet but owns "
                   f"{_queues(sorted(members[late].process_queue_table))}")
        owned = {cid: tuple(m.process_queue_table) for cid, m in members.items() if cid != late}
        if owned:  # a group with no member left owns nothing, rightly
            _check_partition(owned, sorted(mqs), where)


# ---------------------------------------------------------------------- select_one_message_queue: tables
SHAPES: tuple[dict[str, int], ...] = (
    {"broker-a": 2, "broker-b": 2}, {"broker-a": 4, "broker-b": 4}, {"broker-a": 1, "broker-b": 3},
    {"broker-a": 3}, {"broker-a": 2, "broker-b": 2, "broker-c": 2}, {"broker-a": 2, "broker-b": 3, "broker-c": 0},
)
"""Routes: brokers and their write queue counts (broker-c with 0: in the route's queue data, no queue to send to)."""
NO_MASTER = "broker-d"
"""In the route's queue data of every shape (2 write queues) but without a master: not in the queue list."""


def publish_queues(shape: dict[str, int]) -> list[MessageQueue]:
    return topic_route_data2_topic_publish_info(TOPIC, _route({**shape, NO_MASTER: 2}, frozenset({NO_MASTER}))
                                                ).message_queue_list


SelectCase = tuple[list[MessageQueue], int, "str | None", "LatencyView | None"]


def select_off_cases(*, with_last: bool) -> list[SelectCase]:
    """sendLatencyFaultEnable off: every route shape, counter values 0..2n+1, no last broker or each one."""
    cases: list[SelectCase] = []
    for shape in SHAPES:
        queues = publish_queues(shape)
        lasts = [*shape, NO_MASTER, "broker-x"] if with_last else [None]
        cases.extend((queues, index, last, None) for index in range(2 * len(queues) + 2) for last in lasts)
    return cases


def select_on_cases(*, all_down: bool) -> list[SelectCase]:
    """sendLatencyFaultEnable on: every set of brokers in their fault window, every least-bad broker (one of
    the route, one not in it, none), counter values 0..2n+1, no last broker or the first one."""
    cases: list[SelectCase] = []
    for shape in SHAPES:
        queues = publish_queues(shape)
        names = [*shape, NO_MASTER]
        nums = {**shape, NO_MASTER: 2}
        for k in range(len(names) + 1):
            for down in itertools.combinations(names, k):
                if all(q.broker_name in down for q in queues) != all_down:
                    continue
                for least in [*names, "broker-x", None] if all_down else [names[0], None]:
                    view = LatencyView(frozenset(down), least, dict(nums))
                    cases.extend((queues, index, last, view) for index in range(2 * len(queues) + 2)
                                 for last in (None, names[0]))
    return cases


def _describe_select(case: SelectCase) -> str:
    queues, index, last, view = case
    latency = "off" if view is None else (f"on: unavailable {sorted(view.unavailable)}, least bad {view.least_bad!r}, "
                                          f"write queues {view.write_queue_nums}")
    return f"select_one_message_queue({_queues(queues)}, index={index}, last_broker_name={last!r}, latency {latency})"


CHOICE_FIELDS = ("position", "queue", "index")


def _choice(got: Any) -> tuple[Any, ...] | None:
    """The choice's fields, the counter as the 32 bits Java keeps (2**32 and 0 are the same int)."""
    fields = fields_of(got, CHOICE_FIELDS)
    return fields if fields is None or not isinstance(fields[2], int) else (*fields[:2], fields[2] & 0xFFFFFFFF)


def _select_table(ctx: Ctx, cases: list[SelectCase], why: str) -> None:
    compare_table(cases, Calls(ctx.impl, post=_choice), lambda c: _choice(select_one_message_queue(*c)),
                  _describe_select, why=lambda c, want: why)


@graded("lab08.select_one_message_queue", points=1)
def round_robin(ctx: Ctx) -> None:
    """A first attempt, no latency table: the queues in turn from the counter, position, queue and counter."""
    _select_table(ctx, select_off_cases(with_last=False), "round robin from the counter")


@graded("lab08.select_one_message_queue", points=2)
def retry_avoids_last_broker(ctx: Ctx) -> None:
    """A retry, no latency table: a queue of another broker than the one that just failed, whenever the
    route has one, for every route shape and counter value."""
    _select_table(ctx, select_off_cases(with_last=True), "a retry avoids the broker that just failed")


@graded("lab08.select_one_message_queue", points=2)
def latency_table(ctx: Ctx) -> None:
    """With sendLatencyFaultEnable: a queue whose broker is out of its fault window, for every set of
    brokers in it (at least one broker of the route still available)."""
    _select_table(ctx, select_on_cases(all_down=False), "the latency table: skip brokers in their fault window")


@graded("lab08.select_one_message_queue", points=2)
def every_broker_faulty(ctx: Ctx) -> None:
    """With sendLatencyFaultEnable and every broker of the route in its fault window: the least bad
    broker still gets the message (or, when it has no write queue in the route, the next queue in turn)."""
    _select_table(ctx, select_on_cases(all_down=True), "every broker in its fault window: the least bad one")


WRAPS = (2**31 - 3, 2**31 - 2, 2**31 - 1, 2**32 - 3, 2**32 - 1)
"""Counters where Java's int wraps within one choice: past 2**31 - 1 (negative) and past 2**32 - 1 (back to 0)."""


def wrap_cases() -> list[SelectCase]:
    """The tables' inputs at the counters of :data:`WRAPS`, the latency table off and on."""
    cases: list[SelectCase] = []
    for queues, _, last, view in [*select_off_cases(with_last=True), *select_off_cases(with_last=False),
                                  *select_on_cases(all_down=False)[::7], *select_on_cases(all_down=True)[::7]]:
        cases.extend((queues, index, last, view) for index in WRAPS)
    return list({_describe_select(c): c for c in cases}.values())  # each input once


@graded("lab08.select_one_message_queue", points=1)
def counter_wraps(ctx: Ctx) -> None:
    """The counter near and past Java's int limits (2**31 - 1, 2**32 - 1): positions as Java computes them
    there, for every path of the choice."""
    _select_table(ctx, wrap_cases(), "an input of the other tables with the counter at Java's int limits: where the "
                                     "counter wraps, positions are java_position(value, n)")


# ---------------------------------------------------------------------- select_one_message_queue: a producer
class Brokers:
    """Two broker groups answering a producer core's requests: up (SEND_OK, a per-queue offset, 1-20 ms) or
    down (the connection refused at once). The clock is theirs (milliseconds)."""

    def __init__(self, rnd: random.Random, shape: dict[str, int]) -> None:
        self.rnd, self.now = rnd, 0
        self.route = _route(shape)
        self.down: set[str] = set()
        self.offsets: dict[tuple[str, int], int] = {}
        self.attempts: list[tuple[int, str, bool]] = []  # (time, broker, delivered)

    def broker_of(self, addr: str) -> str:
        return next(bd.broker_name for bd in self.route.broker_datas if bd.broker_addrs.get(0) == addr)

    def answer(self, call: Call) -> SendMessageResponse:
        broker = self.broker_of(call.addr)
        if broker in self.down:
            self.now += 1
            self.attempts.append((self.now, broker, False))
            raise RemotingError(f"connect to {call.addr} failed", "connect")
        self.now += self.rnd.randint(1, 20)
        request: SendMessageRequest = call.request
        key = (broker, int(request.header["queueId"]))
        self.offsets[key] = self.offsets.get(key, -1) + 1
        self.attempts.append((self.now, broker, True))
        return SendMessageResponse("SEND_OK", f"{self.offsets[key]:032X}", key[1], self.offsets[key])

    def send(self, producer: DefaultMQProducerImpl, info: TopicPublishInfo, body: bytes) -> Any:
        gen = producer.send_default_impl(Message(TOPIC, body))
        value: Any = None
        error: Exception | None = None
        while True:
            try:
                step = gen.throw(error) if error is not None else gen.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if isinstance(step, FindRoute):
                value = info
                continue
            try:
                value = self.answer(step)
            except RemotingError as e:
                error = e


def _producer(rnd: random.Random, brokers: Brokers, latency: bool) -> tuple[DefaultMQProducerImpl, TopicPublishInfo]:
    addrs = BrokerAddrTable()
    addrs.update(brokers.route)
    producer = DefaultMQProducerImpl(ProducerConfig(send_latency_fault_enable=latency), MessageClientIDSetter(),
                                     lambda: brokers.now, addrs, rnd.randint(0, 1000))
    return producer, topic_route_data2_topic_publish_info(TOPIC, brokers.route, rnd.randint(0, 1000))


def _send_all(brokers: Brokers, producer: DefaultMQProducerImpl, info: TopicPublishInfo, count: int,
              gap_ms: int, what: str) -> None:
    for i in range(count):
        brokers.now += gap_ms
        try:
            brokers.send(producer, info, b"m%d" % i)
        except MQClientException as e:
            raise AssertionError(f"{what}: send {i} at t={brokers.now} ms failed although broker-b was up: "
                                 f"{e}") from None


@graded("lab08.select_one_message_queue", points=3, seeds=range(3))
def dead_broker_avoided(ctx: Ctx) -> None:
    """A producer with sendLatencyFaultEnable (your choice in it) sending through broker-a and broker-b while
    broker-a's master is down: every send succeeds, none is tried on broker-a within its fault window after
    the first failure, and once broker-a is back and the window over, sends go to both brokers again."""
    rnd = random.Random(ctx.seed)
    brokers = Brokers(rnd, {"broker-a": rnd.choice((2, 4)), "broker-b": rnd.choice((2, 4))})
    producer, info = _producer(rnd, brokers, True)
    _send_all(brokers, producer, info, 20, 50, "all up")
    brokers.down.add("broker-a")
    _send_all(brokers, producer, info, 40, rnd.randint(100, 5_000), "broker-a down")
    failures = [t for t, b, ok in brokers.attempts if b == "broker-a" and not ok]
    expect(bool(failures), "broker-a was down but no send tried it: the test saw no failure to avoid")
    window = MQFaultStrategy.NOT_AVAILABLE_DURATION[-1]  # an isolated broker: 30 000 ms taken as its latency
    again = [t for t, b, ok in brokers.attempts if b == "broker-a" and failures[0] < t < failures[0] + window]
    expect(not again, f"broker-a failed at t={failures[0]} ms and was tried again at t={again[:3]} ms, inside "
                      f"its fault window of {window} ms")
    brokers.down.clear()
    brokers.now = failures[-1] + window + 1
    start = len(brokers.attempts)
    _send_all(brokers, producer, info, 16, 50, "both up again")
    used = {b for _, b, ok in brokers.attempts[start:] if ok}
    expect(used == {"broker-a", "broker-b"}, f"after broker-a recovered and its window ended, 16 sends went to "
                                             f"{sorted(used)} only: round robin over both brokers again")


@graded("lab08.select_one_message_queue", points=2, seeds=range(3))
def retry_on_another_broker(ctx: Ctx) -> None:
    """A producer without the latency table (your choice in it) while broker-a is down: each send that
    fails on broker-a is retried on broker-b at once, never on broker-a again, and every send succeeds."""
    rnd = random.Random(ctx.seed)
    brokers = Brokers(rnd, {"broker-a": rnd.choice((2, 4)), "broker-b": rnd.choice((1, 2, 4))})
    producer, info = _producer(rnd, brokers, False)
    brokers.down.add("broker-a")
    for i in range(30):
        brokers.now += 100
        start = len(brokers.attempts)
        try:
            brokers.send(producer, info, b"r%d" % i)
        except MQClientException as e:
            raise AssertionError(f"send {i} failed although broker-b was up: {e}") from None
        tried = [b for _, b, _ in brokers.attempts[start:]]
        expect(tried.count("broker-a") <= 1, f"send {i} tried broker-a {tried.count('broker-a')} times in a row "
                                             f"({' -> '.join(tried)}): a retry must avoid the broker that failed")

