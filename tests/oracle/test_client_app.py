"""The unchanged RocketMQ 4.9.5 client (one JVM: producer and every consumer style) against a name server and a
broker: the real Java pair first, then the kit's, then the cross pairs, in this one module, so every assertion
is shown true of RocketMQ before it is asked of the kit (issue 39).

200 messages of mixed shape (1,000 with ROCKETLAB_FULL=1); test timers: pollNameServerInterval 1 s, the client's
rebalance wait 1 s, the broker's messageDelayLevel all 1 s, maxReconsumeTimes 2. Seed: 1 (printed).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter

import pytest

from rocketlab.oracle import client_app as ca
from rocketlab.oracle.broker_group import BACKENDS, Backend
from tests.oracle.conftest import need, need_broker_java

pytestmark = pytest.mark.realnet
FULL = os.environ.get("ROCKETLAB_FULL") == "1"
COUNT = 1000 if FULL else 200
SEED = 1
TOPIC = "AppMixed"


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request, tmp_path_factory):
    java = need_broker_java()
    b = Backend(request.param, tmp_path_factory.mktemp(request.param.replace("+", "_")), java).start()
    yield b
    b.kill()


@pytest.fixture(scope="module")
def app(backend):
    a = ca.ClientApp(need_broker_java(), backend.workdir)
    yield a
    a.close()


@pytest.fixture(scope="module")
def sends(backend, app):
    """COUNT messages of mixed shape to TOPIC (auto-created by the first send), batches of 4 every 10th step;
    then every consumer style started on it, each a group of its own, and the tag-filtered groups."""
    print(f"seed {SEED}, {COUNT} messages, backend {backend.describe()}")
    ns = backend.namesrv_addr
    app.create_topic(ns, "AppWarm")  # waits until the broker is registered (TBW102's route)
    out = app.produce(ns, TOPIC, COUNT, "r1", seed=SEED, big=True, batch_every=10, batch_size=4)
    for style in ca.STYLES:
        app.consume(style, style, ns, TOPIC)
    app.consume("tag_a", "push_first", ns, TOPIC, expr="TagA")
    app.consume("tag_bc", "push_first", ns, TOPIC, expr="TagB || TagC")
    return out


def test_the_client_refuses_an_empty_body(backend, app):
    r = app.request("empty_body", namesrv=backend.namesrv_addr, topic=TOPIC)
    assert r["refused"] and r["code"] == 13, r  # MESSAGE_ILLEGAL, before any request leaves the client


def test_every_shape_is_acknowledged_by_the_broker_it_names(backend, sends):
    assert Counter(s.get("status") or s.get("error") for s in sends) == {"SEND_OK": COUNT}
    broker = backend.servers["broker-a"]
    assert {s["store_host"] for s in sends} == {f"127.0.0.1:{broker.port}"}  # offsetMsgId names the real port
    sizes = {s["size"] for s in sends}
    assert {1, 4096, 4097, 1024 * 1024, 4 * 1024 * 1024} <= sizes
    assert any("größe" in s["props"] for s in sends) and sum(s["batch"] for s in sends) >= COUNT // 15
    for q, offsets in ca.per_queue(sends).items():
        assert sorted(offsets) == list(range(len(offsets))), q  # batches take consecutive offsets


@pytest.mark.parametrize("style", ca.STYLES)
def test_each_consumer_style_receives_every_message_once_in_queue_order(app, sends, style):
    recvs = [r for r in app.wait_for(COUNT, "recv", timeout_s=90, settle_s=0.5, consumer=style)
             if r["props"].get("run") == "r1"]
    assert ca.exactly_once(sends, recvs) == []
    assert ca.queue_order(recvs) == []
    assert ca.same_content(sends, recvs) == []
    assert app.events("consumer_error") == []


def test_tag_filtered_push_subscribers_receive_exactly_their_tags(app, sends):
    for name, tags in (("tag_a", {"TagA"}), ("tag_bc", {"TagB", "TagC"})):
        want = [s for s in sends if s["tags"] in tags]
        got = app.wait_for(len(want), "recv", timeout_s=60, settle_s=0.5, consumer=name)
        got = [r for r in got if r["props"].get("run") == "r1"]
        assert ca.exactly_once(want, got) == [], name
        assert {r["tags"] for r in got} == tags


def test_two_members_of_one_group_share_the_queues(backend, app, sends):
    ns = backend.namesrv_addr
    app.create_topic(ns, "AppShared")
    for m in ("member1", "member2"):
        app.consume(m, "push_first", ns, "AppShared", group="g_shared")
    deadline = time.monotonic() + 30
    while True:  # the group settles: each member holds some queues, together all four, none twice
        held = [set(app.request("allocation", name=m)["queues"]) for m in ("member1", "member2")]
        if all(held) and not held[0] & held[1] and len(held[0] | held[1]) == 4:
            break
        assert time.monotonic() < deadline, held
        time.sleep(0.2)
    shared = app.produce(ns, "AppShared", 40, "shared", seed=SEED)
    got = app.wait_for(40, "recv", timeout_s=60, settle_s=1.0, group="g_shared")
    assert ca.exactly_once(shared, got) == []
    by_member = {m: {(r["queue"]) for r in got if r["consumer"] == m} for m in ("member1", "member2")}
    assert all(by_member.values()) and not by_member["member1"] & by_member["member2"], by_member


def test_query_by_key_and_view_by_offset_id_find_the_message(backend, app, sends):
    ns = backend.namesrv_addr
    s = next(s for s in sends if s["size"] == 4097)
    key = s["keys"].split(" ")[0]
    deadline = time.monotonic() + 20
    while not (found := app.request("query", namesrv=ns, topic=TOPIC, key=key)["messages"]):
        assert time.monotonic() < deadline, "QUERY_MESSAGE found nothing"
        time.sleep(0.5)
    assert [m["uniq"] for m in found] == [s["uniq"]] and found[0]["sha"] == s["sha"]
    viewed = app.request("view", namesrv=ns, offset_msg_id=s["offset_msg_id"])
    assert (viewed["uniq"], viewed["queue_offset"], viewed["sha"]) == (s["uniq"], s["queue_offset"], s["sha"])


def test_a_failing_listener_gets_retries_then_the_dlq(backend, app, sends):
    ns = backend.namesrv_addr
    app.create_topic(ns, "AppRetry")
    app.consume("failing", "push_first", ns, "AppRetry", group="g_fail", fail=True, max_reconsume=2)
    failed = app.produce(ns, "AppRetry", 6, "retry", seed=SEED)
    got = app.wait_for(18, "recv", timeout_s=60, settle_s=1.5, consumer="failing")
    times = {s["uniq"]: sorted(r["reconsume"] for r in got if r["uniq"] == s["uniq"]) for s in failed}
    assert all(t == [0, 1, 2] for t in times.values()), times  # delivered, then 2 retries, then no more
    app.stop_consumer("failing")
    dlq = "%DLQ%g_fail"
    deadline = time.monotonic() + 20
    for s in failed:  # QUERY_MESSAGE by key on the DLQ topic (not readable: perm 2, as Java creates it)
        while not (found := app.request("query", namesrv=ns, topic=dlq, key=s["keys"].split(" ")[0])["messages"]):
            assert time.monotonic() < deadline, f"{s['uniq']} not in {dlq}"
            time.sleep(0.5)
        assert {m["uniq"] for m in found} == {s["uniq"]} and found[0]["sha"] == s["sha"]
        assert found[0]["topic"] == dlq and found[0]["reconsume"] == 3  # counted on the way in
    queues = app.request("offsets", namesrv=ns, topic=dlq, broker="broker-a", queues=1)["queues"]
    assert queues == [{"queue": 0, "min": 0, "max": 6}]


def test_pypi_rocketmq_sends_10_and_push_consumes_10(backend, app, tmp_path):
    """A second client nobody here wrote: PyPI's rocketmq 0.4.4 (rocketmq-client-cpp in its wheel)."""
    need((importlib.util.find_spec("rocketmq"), "PyPI's rocketmq 0.4.4 is not installed (the test extra)"),
         "PyPI's rocketmq 0.4.4 is")
    ns = backend.namesrv_addr
    app.create_topic(ns, "PyTopic")
    proc = subprocess.run([sys.executable, "-m", "rocketlab.oracle.pypi_client", ns, "PyTopic", "10", "g_pypi"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines and lines[-1] == {"sent": 10, "received": 10, "duplicates": 0, "unexpected": 0}, \
        (proc.stdout[-800:], proc.stderr[-800:])
    recvs = [e for e in lines if e.get("event") == "recv"]
    assert sorted(r["body"] for r in recvs) == sorted(f"pypi-{i}-größe" for i in range(10))
    assert proc.returncode == 0


def test_a_consumer_restarted_after_a_broker_restart_resumes_at_its_committed_offset(backend, app, sends):
    """Last in the module: it restarts the broker."""
    ns = backend.namesrv_addr
    app.consume("resume", "push_first", ns, TOPIC, group="g_resume")
    first = [r for r in app.wait_for(COUNT, "recv", timeout_s=90, consumer="resume") if r["props"]["run"] == "r1"]
    assert ca.exactly_once(sends, first) == []
    time.sleep(1.5)  # persistConsumerOffsetInterval (1 s here): the offsets reach the broker
    app.stop_consumer("resume")  # and shutdown sends them once more (oneway UPDATE_CONSUMER_OFFSET)
    backend.restart("broker-a")
    text = (backend.workdir / "broker-a" / "store" / "config" / "consumerOffset.json").read_text()
    offsets = json.loads(re.sub(r"([{,])\s*(-?\d+)\s*:", r'\1"\2":', text))  # fastjson's {0:12} or {"0":12}
    committed = offsets["offsetTable"][f"{TOPIC}@g_resume"]
    assert sum(int(v) for v in committed.values()) == COUNT, committed
    more = app.produce(ns, TOPIC, 20, "r2", seed=SEED + 1)
    assert Counter(s.get("status") or s.get("error") for s in more) == {"SEND_OK": 20}
    app.consume("resume2", "push_first", ns, TOPIC, group="g_resume")
    again = app.wait_for(20, "recv", timeout_s=60, settle_s=1.5, consumer="resume2")
    assert ca.exactly_once(more, again) == []  # nothing of r1 again: it resumed where it had committed
