"""A broker crash under the kit's client (issue 43, Tests): the one broker of the group is killed (SIGKILL) and
started again on its store while our producer sends and our push consumer (and, first, Java's in another group)
consumes. No acknowledged send is lost; sends during the outage fail with one error each; both consumers get
every acknowledged message, in queue order, and each exactly once (their pulls continue from the offset they
hold, so nothing committed is read again). Seed 1; messages 20 ms apart through the outage and 60 after it.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from rocketlab.client import MQClientException, Producer, PushConsumer
from rocketlab.oracle import client_app as ca
from rocketlab.oracle.broker_group import Backend
from rocketlab.trace.recorder import TraceRecorder
from tests.oracle.conftest import need_broker_java
from tests.oracle.test_kit_client import event, instance, shaped, wait_route

pytestmark = pytest.mark.realnet
AFTER = 60


@pytest.fixture(params=["java", "kit"])
def backend(request, tmp_path):
    if request.param == "kit" and os.environ.get("ROCKETLAB_FULL") != "1":
        pytest.skip("the kit's broker under a crash runs with ROCKETLAB_FULL=1 (CI's seconds for this issue: the "
                    "Java broker's run, 40 s, shows the same assertions)")
    b = Backend(request.param, tmp_path / request.param, need_broker_java()).start()
    yield b
    b.kill()


def test_a_broker_crash_loses_no_acknowledged_message(backend):
    ns = backend.namesrv_addr
    broker = backend.servers["broker-a"]
    app = ca.ClientApp(need_broker_java(), backend.workdir, name="crash")
    try:
        app.create_topic(ns, "KitCrash")
        asyncio.run(wait_route(ns, "KitCrash"))
        app.consume("java_crash", "push_first", ns, "KitCrash", group="g_crash_java")
        sends, got, rec = asyncio.run(crash_while_running(ns, broker))
        acked = [s for s in sends if s["status"] == "SEND_OK"]
        failed = [s for s in sends if s["status"] != "SEND_OK"]
        print(f"seed 1: {len(acked)} acknowledged, {len(failed)} failed during the outage")
        assert failed and len(acked) >= AFTER // 2
        java = [r for r in app.wait_for(len(acked), "recv", timeout_s=60, settle_s=2.0, consumer="java_crash")
                if r["props"].get("run") == "crash"]
        assert ca.exactly_once(acked, java) == [] and ca.queue_order(java) == []  # RocketMQ first
        assert ca.exactly_once(acked, got) == [] and ca.queue_order(got) == []
        pulls = [e for e in rec.events if e["kind"] == "client_pull"]
        assert pulls  # the consumer's pulls are in its trace, before and after the crash
    finally:
        app.close()


async def crash_while_running(ns, broker):
    rec = TraceRecorder()
    got: list = []

    def listener(msgs):
        got.extend(event(m, queue=m.queue_id, queue_offset=m.queue_offset, store_host="b") for m in msgs)
        return "CONSUME_SUCCESS"
    c = PushConsumer(instance(ns, "crash-c", recorder=rec), "g_crash",
                     listener, consume_from_where="CONSUME_FROM_FIRST_OFFSET", consume_thread_max=1,
                     rebalance_interval=1000, persist_consumer_offset_interval=500)
    c.subscribe("KitCrash")
    await c.start()
    p = await Producer(instance(ns, "crash-p")).start()
    sends: list = []

    back = asyncio.Event()

    async def producing():
        i = after = 0
        while not back.is_set() or after < AFTER:  # through the outage, then AFTER more
            m = shaped("KitCrash", "crash", i)
            i += 1
            after += back.is_set()
            try:
                r = await p.send(m)
                sends.append(event(m, status=r.send_status, queue=r.message_queue.queue_id,
                                   queue_offset=r.queue_offset))
            except MQClientException as e:
                sends.append(event(m, status="FAILED", error=str(e)))
            await asyncio.sleep(0.02)
    task = asyncio.get_running_loop().create_task(producing())
    await asyncio.sleep(1.0)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, broker.kill)
    await asyncio.sleep(1.0)
    await loop.run_in_executor(None, broker.start)
    back.set()
    await task
    want = {s["uniq"] for s in sends if s["status"] == "SEND_OK"}
    deadline = time.monotonic() + 60
    while not want <= {g["uniq"] for g in got} and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(2.0)
    await c.shutdown()
    await c.instance.shutdown()
    await p.instance.shutdown()
    return sends, [g for g in got if g["props"].get("run") == "crash"], rec
