"""The kit's client as a simulated process (rocketlab.client.client_core, push_core): a name server with no
route, brokers cut off, a broker gone: one clear failure, no hang, at the Java client's timeouts."""

from __future__ import annotations

import pytest

from rocketlab.client.client_core import ClientNodeConfig, MQClientCore, client_node_codec
from rocketlab.client.message import Message
from rocketlab.client.producer import MQClientException
from rocketlab.client.protocol import PullMessageRequest
from rocketlab.core import NodeContext
from rocketlab.errors import CodecError
from rocketlab.sim.cluster import Cluster


@pytest.fixture
def apps():
    c = Cluster.applications(seed=5, messages=0, consumers=1, latency="uniform:1:3")
    c.run_for(8_000)
    yield c
    c.close()


def _send(c: Cluster, topic: str = "TopicTest") -> Message:
    msg = Message(topic, b"hello", keys="k")
    c.runtime.call("p0", lambda core, now: core.app_send(msg, now))
    return msg


def test_a_topic_the_name_server_does_not_know_fails_at_once_in_one_line(apps):
    began = apps.now_ms
    msg = _send(apps, "NoSuchTopic")
    apps.run_for(100)
    [failed] = [e for e in apps.events if e["kind"] == "client_send_failed"]
    assert failed["t"] - began < 20 and "No route info of this topic: NoSuchTopic" in failed["reason"]
    assert "\n" not in failed["reason"].split("(")[0]
    assert apps.node("p0").failed and msg.uniq_key is None  # never sent to any broker: no id given yet


def test_brokers_cut_off_fail_each_attempt_and_the_send_in_one_line(apps):
    _send(apps)
    apps.run_for(500)
    assert len(apps.node("p0").acked) == 1
    apps.partition(["p0"], [n for n in apps.node_ids if n[0] in "abc"])
    began = apps.now_ms
    _send(apps)
    apps.run_for(1_000)
    [failed] = [e for e in apps.events if e["kind"] == "client_send_failed"]
    attempts = [e for e in apps.events if e["kind"] == "client_send" and e["t"] >= began]
    assert [e["attempt"] for e in attempts] == [0, 1, 2]  # 1 + retryTimesWhenSendFailed
    assert len({e["broker_name"] for e in attempts[:2]}) == 2  # the retry avoids the broker that just failed
    assert failed["reason"].startswith("Send [3] times, still failed") and failed["t"] - began < 400


def test_hosts_that_went_silent_fail_the_send_at_its_timeout_not_later(apps):
    _send(apps)
    apps.run_for(500)
    apps.host_down(*[n for n in apps.node_ids if n[0] in "abc"])
    began = apps.now_ms
    _send(apps)
    apps.run_for(5_000)
    [failed] = [e for e in apps.events if e["kind"] == "client_send_failed"]
    attempts = [e for e in apps.events if e["kind"] == "client_send" and e["t"] >= began]
    # the first attempt waits sendMsgTimeout (3 s) for an answer that never comes; the send has no time left
    assert "timeout" in attempts[0]["reason"] and attempts[0]["t"] - began == 3_000
    assert failed["t"] - began == 3_000 and "still failed" in failed["reason"]


def test_a_crashed_broker_is_a_connect_failure_and_the_send_goes_elsewhere(apps):
    _send(apps)
    apps.run_for(500)
    masters = {e["broker_name"] for e in apps.events if e["kind"] == "client_send"}
    apps.crash("c0")
    for _ in range(12):  # round robin passes broker-c again within a few sends
        _send(apps)
        apps.run_for(300)
    failed = [e for e in apps.events if e["kind"] == "client_send" and e["status"] != "SEND_OK"]
    assert failed and all(e["broker_name"] == "broker-c" and "connect" in e["reason"] for e in failed)
    assert not apps.node("p0").failed and len(apps.node("p0").acked) == 13 and masters


def test_an_answer_that_does_not_decode_is_thrown_into_the_service_not_the_runtime(apps):
    codec = client_node_codec()
    for garbage in (b"\x00\x00\x00\x05garbage", b"\x00\x00\x00\x10\x00\x00\x00\x08{notjson}xxxx", b""):
        answer = codec.decode(garbage, PullMessageRequest)
        assert isinstance(answer, CodecError) and "\n" not in str(answer)
    # what a service does with one: a pull answered garbage is a pull error, retried after 3 s, the run goes on
    k0 = apps.node("k0")
    [(request_id, (task, step, _))] = [(r, w) for r, w in k0._waiting.items() if isinstance(w[1].request, PullMessageRequest)][:1]
    at = apps.now_ms
    apps.runtime.call("k0", lambda core, now: core.on_reply("a0", request_id, codec.decode(b"junk!!!!", step.request), now))
    assert k0.events[-1][0] == "pull_error" and "no remoting frame" in k0.events[-1][1]
    apps.run_for(4_000)
    again = [e["t"] - at for e in apps.events if e["kind"] == "msg_send" and e["src"] == "k0" and e["t"] > at
             and e["msg"] == "PullMessageRequest"]
    assert again == [3_000]  # PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION


def test_a_client_needs_a_name_server_and_a_producer_to_send():
    with pytest.raises(MQClientException, match="No name server address"):
        MQClientCore(NodeContext("p9", ("p9",), 1), ClientNodeConfig(" ; "))
    consumer_only = MQClientCore(NodeContext("k9", ("k9",), 1), ClientNodeConfig("ns:9876"))
    with pytest.raises(MQClientException, match="has no producer"):
        consumer_only.app_send(Message("T", b"x"), 0)
