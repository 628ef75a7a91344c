"""The kit's client (rocketlab.client) against a name server and broker, the real 4.9.5 Java pair first, beside the
unchanged Java client (rocketlab.oracle.client_app): our producer -> Java's consumer and the reverse, every message
with its body, keys, tags and properties; offsets committed by ours honoured by Java's and the other way round;
each consumer style of ours receives every message once per group, in queue order (issue 43 item 2).

Seed 1 (printed); 60 messages of mixed shape per direction (1 B .. 1 MiB, compressed ones, batches).
The kit's backend joins when its broker serves the client codes (issue 39's broker branches).
"""

from __future__ import annotations

import asyncio
import hashlib
import time

import pytest

from rocketlab.client import (
    Message,
    MQClientException,
    MQClientInstance,
    Producer,
    ProducerConfig,
    PullConsumer,
    PushConsumer,
)
from rocketlab.client.blocking import ClientThread, producer, pull_consumer
from rocketlab.client.message import user_properties
from rocketlab.oracle import client_app as ca
from rocketlab.oracle.broker_group import Backend
from rocketlab.trace.recorder import TraceRecorder
from rocketlab.trace.schema import validate_event
from tests.oracle.conftest import need_broker_java

pytestmark = pytest.mark.realnet
SEED, COUNT = 1, 60
SIZES = (1, 17, 100, 4096, 4097, 16384, 300, 65536, 1024 * 1024)


@pytest.fixture(scope="module", params=["java", "kit"])
def backend(request, tmp_path_factory):
    java = need_broker_java()
    b = Backend(request.param, tmp_path_factory.mktemp(request.param), java).start()
    yield b
    b.kill()


@pytest.fixture(scope="module")
def app(backend):
    a = ca.ClientApp(need_broker_java(), backend.workdir, name="kitclient")
    yield a
    a.close()


def instance(ns: str, name: str, **kw) -> MQClientInstance:
    """A client with the suite's timers: routes read every second (pollNameServerInterval 1 s, as the Java driver
    sets it), so a topic created a moment ago is seen at once."""
    return MQClientInstance(ns, name, poll_name_server_interval=1000, **kw)


def sha(body: bytes) -> str:
    return hashlib.sha256(body).digest()[:12].hex()


def shaped(topic: str, run: str, i: int) -> Message:
    n = SIZES[(i * 7 + SEED) % len(SIZES)]
    unit = f"kit-{i}-größe-日本-".encode()
    body = (unit * (n // len(unit) + 1))[:n]
    keys = f"k-{run}-{i} order-{i % 7}" if i % 3 == 0 else f"k-{run}-{i}"
    props = {"i": str(i), "run": run}
    if i % 2:
        props["größe"] = f"Größe-{i}-日本語"
    return Message(topic, body, tags=("TagA", "TagB", "TagC", None)[i % 4], keys=keys, user_properties=props)


def event(m, **extra) -> dict:
    """What both sides report of a message (rocketlab.oracle.client_app's fields)."""
    return {"uniq": m.uniq_key, "size": len(m.body), "sha": sha(m.body), "tags": m.tags, "keys": m.keys,
            "props": user_properties(m.properties), "topic": m.topic, **extra}


async def produce(ns: str, topic: str, run: str) -> list[dict]:
    p = await Producer(instance(ns, f"p-{run}"), ProducerConfig(producer_group="kit_producer")).start()
    sends = []
    i = 0
    while i < COUNT:
        if i % 10 == 6:  # a batch of 3 (i = 6, 16, ...: ends at 9, 19, ...)
            msgs = [shaped(topic, run, i + k) for k in range(3)]
            r = await p.send_batch(msgs)
            sends += [event(m, status=r.send_status, queue=r.message_queue.queue_id, queue_offset=r.queue_offset + k)
                      for k, m in enumerate(msgs)]
            i += 3
            continue
        m = shaped(topic, run, i)
        r = await p.send(m)
        sends.append(event(m, status=r.send_status, queue=r.message_queue.queue_id, queue_offset=r.queue_offset))
        i += 1
    await p.instance.shutdown()
    return sends


async def wait_route(ns: str, topic: str) -> None:
    """Until the name server has the topic's route (a broker may answer UPDATE_AND_CREATE_TOPIC before it
    registered the topic; a client started before then finds no route, nor a broker to send heartbeats to)."""
    client = instance(ns, "route-wait")
    deadline = time.monotonic() + 30
    while True:
        try:
            await client.get_topic_route_info_from_name_server(topic)
            break
        except MQClientException as e:
            assert time.monotonic() < deadline, f"no route to {topic} in 30 s: {e}"
            await asyncio.sleep(0.2)
    await client.shutdown()


async def push_receive(ns: str, topic: str, group: str, want: int, from_where: str = "CONSUME_FROM_FIRST_OFFSET",
                       settle_s: float = 1.5) -> list[dict]:
    got: list[dict] = []

    def listener(msgs):
        got.extend(event(m, queue=m.queue_id, queue_offset=m.queue_offset, store_host=f"{m.store_host[0]}:"
                         f"{m.store_host[1]}") for m in msgs)
        return "CONSUME_SUCCESS"
    c = PushConsumer(instance(ns, f"c-{group}"), group, listener, consume_from_where=from_where,
                     consume_thread_max=1, rebalance_interval=1000, persist_consumer_offset_interval=500)
    c.subscribe(topic)
    await c.start()
    deadline = time.monotonic() + 60
    while len([g for g in got if g["props"].get("run")]) < want and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(settle_s)
    await c.shutdown()
    await c.instance.shutdown()
    return [g for g in got if g["props"].get("run")]


async def lite_receive(ns: str, topic: str, group: str, want: int, subscribe: bool) -> list[dict]:
    c = PullConsumer(instance(ns, f"l-{group}"), group, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                     rebalance_interval=1000)
    if subscribe:
        c.subscribe(topic)
        await c.start()
    else:
        await c.assign(await c.fetch_message_queues(topic))
    got: list[dict] = []
    deadline = time.monotonic() + 60
    while len(got) < want and time.monotonic() < deadline:
        got += [event(m, queue=m.queue_id, queue_offset=m.queue_offset,
                      store_host=f"{m.store_host[0]}:{m.store_host[1]}") for m in await c.poll(500)
                if m.properties.get("run")]
    got += [event(m, queue=m.queue_id, queue_offset=m.queue_offset, store_host="") for m in await c.poll(1000)
            if m.properties.get("run")]
    await c.shutdown()
    await c.instance.shutdown()
    return got


def test_our_producer_to_javas_consumer_and_ours(backend, app):
    print(f"seed {SEED}, {COUNT} messages, backend {backend.describe()}")
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitOut")
    asyncio.run(wait_route(ns, "KitOut"))
    sends = asyncio.run(produce(ns, "KitOut", "ours"))
    assert {s["status"] for s in sends} == {"SEND_OK"} and len(sends) == COUNT
    app.consume("java_of_ours", "push_first", ns, "KitOut")
    got = [r for r in app.wait_for(COUNT, "recv", timeout_s=60, settle_s=1.0, consumer="java_of_ours")
           if r["props"].get("run") == "ours"]
    assert ca.exactly_once(sends, got) == []
    assert ca.same_content(sends, got) == []
    assert ca.queue_order(got) == []
    for style in ("push", "lite_subscribe", "lite_assign"):
        if style == "push":
            ours = asyncio.run(push_receive(ns, "KitOut", f"g_ours_{style}", COUNT))
        else:
            ours = asyncio.run(lite_receive(ns, "KitOut", f"g_ours_{style}", COUNT, style == "lite_subscribe"))
        assert ca.exactly_once(sends, ours) == [], style
        assert ca.same_content(sends, ours) == [], style
        assert ca.queue_order(ours) == [], style


def test_javas_producer_to_our_consumers(backend, app):
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitIn")
    sends = app.produce(ns, "KitIn", COUNT, "java", seed=SEED, batch_every=10, batch_size=4)
    assert {s["status"] for s in sends} == {"SEND_OK"}
    ours = asyncio.run(push_receive(ns, "KitIn", "g_from_java", COUNT))
    assert ca.exactly_once(sends, ours) == []
    assert ca.same_content(sends, ours) == []
    assert ca.queue_order(ours) == []


def test_offsets_committed_by_ours_are_honoured_by_javas_and_back(backend, app):
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitOffsets")
    first = asyncio.run(produce(ns, "KitOffsets", "o1"))
    ours = asyncio.run(push_receive(ns, "KitOffsets", "g_shared_offsets", COUNT))
    assert ca.exactly_once(first, ours) == []
    second = asyncio.run(produce(ns, "KitOffsets", "o2"))
    app.consume("java_resumes", "push_first", ns, "KitOffsets", group="g_shared_offsets")
    got = app.wait_for(COUNT, "recv", timeout_s=60, settle_s=2.0, consumer="java_resumes")
    assert ca.exactly_once(second, got) == []  # nothing of o1: Java resumed where ours committed
    time.sleep(1.5)  # Java's persistConsumerOffsetInterval (1 s in the driver)
    app.stop_consumer("java_resumes")
    third = asyncio.run(produce(ns, "KitOffsets", "o3"))
    again = asyncio.run(push_receive(ns, "KitOffsets", "g_shared_offsets", COUNT))
    assert ca.exactly_once(third, again) == []  # nothing of o2: ours resumed where Java committed


def test_a_group_of_ours_and_javas_shares_the_queues_and_ours_rebalances_on_notify(backend, app):
    """AllocateMessageQueueAveragely of ours and of Java in one group: together every queue, none twice. Ours
    waits 20 s between rebalances (Java's default), so the quick change is NOTIFY_CONSUMER_IDS_CHANGED's."""
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitGroup", queues=8)
    asyncio.run(wait_route(ns, "KitGroup"))

    async def run() -> tuple[list, list, list]:
        ours = PushConsumer(instance(ns, "mixed-ours"), "g_mixed", lambda msgs: "CONSUME_SUCCESS",
                            consume_from_where="CONSUME_FROM_FIRST_OFFSET", rebalance_interval=20000)
        ours.subscribe("KitGroup")
        await ours.start()
        deadline = time.monotonic() + 20
        while len([q for q in ours.owned() if q.topic == "KitGroup"]) < 8 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        alone = [q for q in ours.owned() if q.topic == "KitGroup"]
        app.consume("mixed_java", "push_first", ns, "KitGroup", group="g_mixed")
        deadline = time.monotonic() + 10
        while True:
            mine = [q for q in ours.owned() if q.topic == "KitGroup"]
            java = app.request("allocation", name="mixed_java")["queues"]
            if len(mine) == 4 and len(java) >= 4:
                break
            assert time.monotonic() < deadline, (mine, java, ours.events)
            await asyncio.sleep(0.1)
        await ours.shutdown()
        await ours.instance.shutdown()
        return alone, mine, java
    alone, mine, java = asyncio.run(run())
    assert len(alone) == 8
    # Java reports "broker:queueId" of every topic it holds; the retry topic's one queue goes to the member first in
    # cid order, which holds queues 0..3 of KitGroup too, so its "broker-a:0" hides nothing
    java_ids = {int(q.rsplit(":", 1)[1]) for q in java}
    ours_ids = {q.queue_id for q in mine}
    assert java_ids == set(range(8)) - ours_ids and len(ours_ids) == 4, (ours_ids, java)
    app.stop_consumer("mixed_java")


def test_a_failing_listener_of_ours_gets_retries_then_the_dlq(backend, app):
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitRetry")
    sends = asyncio.run(produce_n(ns, "KitRetry", "retry", 4))

    async def run() -> list:
        seen: list = []

        def failing(msgs):
            seen.extend((m.uniq_key, m.reconsume_times, m.topic) for m in msgs)
            return "RECONSUME_LATER"
        c = PushConsumer(instance(ns, "failing"), "g_kit_fail", failing,
                         consume_from_where="CONSUME_FROM_FIRST_OFFSET", max_reconsume_times=2,
                         rebalance_interval=1000, persist_consumer_offset_interval=500)
        c.subscribe("KitRetry")
        await c.start()
        deadline = time.monotonic() + 60
        while len(seen) < 12 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)
        await c.shutdown()
        await c.instance.shutdown()
        return seen
    seen = asyncio.run(run())
    times = {s["uniq"]: sorted(r for u, r, _ in seen if u == s["uniq"]) for s in sends}
    assert all(t == [0, 1, 2] for t in times.values()), times
    assert {topic for _, _, topic in seen} == {"KitRetry"}  # retried messages show their own topic again
    deadline = time.monotonic() + 20
    for s in sends:
        key = s["keys"].split(" ")[0]
        while not (found := app.request("query", namesrv=ns, topic="%DLQ%g_kit_fail", key=key)["messages"]):
            assert time.monotonic() < deadline, f"{s['uniq']} not in the DLQ"
            time.sleep(0.5)
        assert {m["uniq"] for m in found} == {s["uniq"]} and found[0]["sha"] == s["sha"]


def test_consume_from_last_offset_as_javas_does_it(backend, app):
    """A new group on a young topic: QUERY_CONSUMER_OFFSET answers 0 while the queue's first message is in memory
    (ConsumerManageProcessor), so CONSUME_FROM_LAST_OFFSET reads from 0; Java's push consumer shows it first."""
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitLast")
    before = asyncio.run(produce_n(ns, "KitLast", "before", 8))
    app.consume("java_last", "push_last", ns, "KitLast")

    async def run() -> list:
        got: list = []
        c = PushConsumer(instance(ns, "last"), "g_kit_last",
                         lambda msgs: got.extend(event(m) for m in msgs) or "CONSUME_SUCCESS",
                         rebalance_interval=1000)  # CONSUME_FROM_LAST_OFFSET: Java's default
        c.subscribe("KitLast")
        await c.start()
        deadline = time.monotonic() + 20
        while len([q for q in c.owned() if q.topic == "KitLast"]) < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        after = await produce_n(ns, "KitLast", "after", 8)
        deadline = time.monotonic() + 30
        while len(got) < 16 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        await c.shutdown()
        await c.instance.shutdown()
        return [got, after]
    got, after = asyncio.run(run())
    java = app.wait_for(16, "recv", timeout_s=30, settle_s=0.5, consumer="java_last")
    assert ca.exactly_once(before + after, java) == []  # RocketMQ first
    assert ca.exactly_once(before + after, got) == []
    app.stop_consumer("java_last")


async def produce_n(ns: str, topic: str, run: str, n: int) -> list[dict]:
    p = await Producer(instance(ns, f"p-{run}"), ProducerConfig(producer_group="kit_producer")).start()
    out = []
    for i in range(n):
        m = shaped(topic, run, i)
        r = await p.send(m)
        out.append(event(m, status=r.send_status, queue=r.message_queue.queue_id, queue_offset=r.queue_offset))
    await p.instance.shutdown()
    return out


def test_the_blocking_facade_works_from_a_thread_that_runs_no_loop(backend, app):
    """What a notebook cell does: every call blocks on the client's own loop thread, none hangs."""
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitCell")
    thread = ClientThread()
    try:
        p = producer(thread, ns, instance_name="cell-p")
        results = [p.send(shaped("KitCell", "cell", i)) for i in range(8)]
        assert {r.send_status for r in results} == {"SEND_OK"}
        c = pull_consumer(thread, ns, "g_cell", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
        c.assign(c.fetch_message_queues("KitCell"))
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 8 and time.monotonic() < deadline:
            got += [m.uniq_key for m in c.poll(500)]
        assert sorted(got) == sorted(r.msg_id for r in results)
        c.shutdown()
        thread.run(p.instance.shutdown())
    finally:
        thread.close()


def test_consume_from_timestamp_on_a_young_topic_reads_from_0_as_rocketmq_answers(backend, app):
    """QUERY_CONSUMER_OFFSET answers 0 for a new group while the queue's first message is in memory, so the
    timestamp is never searched (the search itself: tests/client/test_client_cores.py)."""
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitTime")
    old = asyncio.run(produce_n(ns, "KitTime", "old", 8))
    time.sleep(1.0)
    since = time.time_ns() // 1_000_000
    time.sleep(0.2)
    new = asyncio.run(produce_n(ns, "KitTime", "new", 8))

    async def run() -> list:
        got: list = []
        c = PushConsumer(instance(ns, "since"), "g_kit_since",
                         lambda msgs: got.extend(event(m) for m in msgs) or "CONSUME_SUCCESS",
                         consume_from_where="CONSUME_FROM_TIMESTAMP", consume_timestamp_ms=since)
        c.subscribe("KitTime")
        await c.start()
        deadline = time.monotonic() + 20
        while len(got) < 16 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        await c.shutdown()
        await c.instance.shutdown()
        return got
    assert ca.exactly_once(old + new, asyncio.run(run())) == []


def test_the_client_traces_what_the_application_lived_through(backend, app):
    """Every event follows the one vocabulary table; the sends, the group's queues, the pulls the broker held and
    each message handed over are there."""
    ns = backend.namesrv_addr
    app.create_topic(ns, "KitTraced")
    asyncio.run(wait_route(ns, "KitTraced"))
    rec = TraceRecorder()
    member: list = []

    async def run() -> None:
        p = await Producer(instance(ns, "traced-p", recorder=rec)).start()
        got: list = []
        c = PushConsumer(instance(ns, "traced-c", recorder=rec), "g_traced",
                         lambda msgs: got.extend(msgs) or "CONSUME_SUCCESS",
                         consume_from_where="CONSUME_FROM_FIRST_OFFSET", rebalance_interval=1000)
        c.subscribe("KitTraced")
        member.append(c)
        await c.start()
        await asyncio.sleep(1.0)
        for i in range(5):
            await p.send(shaped("KitTraced", "traced", i))
        await p.send_oneway(shaped("KitTraced", "traced", 5))
        deadline = time.monotonic() + 20
        while len(got) < 6 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await c.shutdown()
        await c.instance.shutdown()
        await p.instance.shutdown()
    asyncio.run(run())
    for e in rec.events:
        validate_event(e)
    kinds = {e["kind"] for e in rec.events}
    assert {"client_route", "client_send", "client_rebalance", "client_pull", "client_consume"} <= kinds, \
        (member[0].events, member[0].instance.events, [e for e in rec.events if e["node"] == "127.0.0.1@traced-c"])
    sends = [e for e in rec.events if e["kind"] == "client_send"]
    assert [(e["status"], e["attempt"]) for e in sends] == [("SEND_OK", 0)] * 5 + [("ONEWAY", 0)]
    consumed = [e for e in rec.events if e["kind"] == "client_consume" and e["topic"] == "KitTraced"]
    assert sorted(e["uniq_key"] for e in consumed) == sorted(e["uniq_key"] for e in sends)
    owned = [e for e in rec.events if e["kind"] == "client_rebalance" and e["topic"] == "KitTraced"]
    assert sorted(owned[-1]["targets"]) == [f"broker-a:{i}" for i in range(4)]
    assert any(e["status"] == "FOUND" and e["latency_ms"] > 100 for e in rec.events
               if e["kind"] == "client_pull" and e["topic"] == "KitTraced")  # held until a message came
