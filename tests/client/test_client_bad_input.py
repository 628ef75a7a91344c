"""Bad peers over real TCP on 127.0.0.1: a broker answering garbage or nothing, a name server with no route (the
kit's own name server, started as a node) or a malformed one: one clear error, never a hang."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from rocketlab.client import Message, MQClientException, MQClientInstance, Producer, ProducerConfig
from rocketlab.client.producer import RemotingError
from rocketlab.client.protocol import SendMessageRequest
from rocketlab.client.remoting_client import RemotingClient
from rocketlab.oracle.broker_group import free_port, write_properties
from rocketlab.remoting.command import RESPONSE_FLAG, RemotingCommand, encode_command
from rocketlab.remoting.connection import NEED_DATA, RemotingConnection

pytestmark = pytest.mark.realnet
ROUTE_TO = ('{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:%d"},"brokerName":"b","cluster":"c"}],'
            '"filterServerTable":{},"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":1,"topicSysFlag":0,'
            '"writeQueueNums":1}]}')


async def serve(answer, expect=()):
    """A TCP peer on 127.0.0.1 answering each request with ``answer(cmd)`` (bytes; None: silence; b"": close);
    ``expect``: the opaques of requests it sends, whose responses reach ``answer`` too."""
    async def handle(reader, writer):
        conn = RemotingConnection()
        conn.awaiting.update(expect)  # opaques of the requests this peer sends itself
        while data := await reader.read(65536):
            conn.receive_data(data)
            while (cmd := conn.next_command()) is not NEED_DATA:
                out = answer(cmd)
                if out == b"":  # close at once
                    writer.close()
                    return
                if out is not None:
                    writer.write(out)
        writer.close()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def response(cmd, code=0, body=None, ext=None):
    return encode_command(RemotingCommand(code=code, flag=RESPONSE_FLAG, opaque=cmd.opaque, body=body,
                                          ext_fields=ext))


async def send_through(route_answer, broker_answer, timeout_ms=3000):
    broker, bport = await serve(broker_answer)
    ns, nport = await serve(lambda cmd: route_answer(cmd, bport))
    p = await Producer(MQClientInstance(f"127.0.0.1:{nport}", "bad"), ProducerConfig(
        retry_times_when_send_failed=0)).start()
    start = time.monotonic()
    try:
        return await p.send(Message("T", b"x"), timeout_ms=timeout_ms)
    finally:
        elapsed = time.monotonic() - start
        assert elapsed < timeout_ms / 1000 + 2, elapsed
        await p.instance.shutdown()
        broker.close()
        ns.close()


def good_route(cmd, bport):
    return response(cmd, body=(ROUTE_TO % bport).encode())


def test_a_broker_answering_garbage_is_one_clear_error():
    with pytest.raises(MQClientException, match="no RocketMQ remoting frame") as e:
        asyncio.run(send_through(good_route, lambda cmd: b"\x00\x00\x00\x02garbage" * 3))
    assert "\n" not in str(e.value).split("(")[0]


def test_a_broker_answering_nothing_times_out_at_the_send_timeout():
    with pytest.raises(MQClientException, match="timeout") as e:
        asyncio.run(send_through(good_route, lambda cmd: None, timeout_ms=800))
    assert e.value.response_code == 10002


def test_a_broker_that_closes_at_once_fails_the_send():
    with pytest.raises(MQClientException, match="closed"):
        asyncio.run(send_through(good_route, lambda cmd: b""))


def test_a_malformed_route_is_one_clear_error():
    bad = [b'{"brokerDatas":[{"brokerAddrs":{x:"a"}}]}', b"not json", b'{"queueDatas":7}',
           b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:1"},"brokerName":5}]}']
    for body in bad:
        with pytest.raises(MQClientException, match="No route info of this topic: T") as e:
            asyncio.run(send_through(lambda cmd, port, body=body: response(cmd, body=body), lambda cmd: None))
        assert "decode" in str(e.value) or "not" in str(e.value), (body, str(e.value))


def test_a_silent_name_server_is_no_route_after_the_client_api_timeout():
    with pytest.raises(MQClientException, match="No route info of this topic: T.*3000"):
        asyncio.run(send_through(lambda cmd, port: None, lambda cmd: None))


def test_the_kits_name_server_without_the_topic_is_topic_not_exist(tmp_path):
    port = free_port()
    conf = write_properties(tmp_path / "namesrv.conf", {"nodeKind": "namesrv", "listenPort": str(port),
                                                        "runDir": str(tmp_path)})
    proc = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(conf)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline()

        async def go():
            p = await Producer(MQClientInstance(f"127.0.0.1:{port}", "nr")).start()
            try:
                await p.send(Message("Nowhere", b"x"))
            finally:
                await p.instance.shutdown()
        with pytest.raises(MQClientException, match="No route info of this topic: Nowhere ") as e:
            asyncio.run(go())
        assert e.value.response_code == 17
    finally:
        proc.kill()
        proc.wait()


def test_no_name_server_at_all_is_a_connect_error():
    async def go():
        p = await Producer(MQClientInstance(f"127.0.0.1:{free_port()}", "none")).start()
        try:
            await p.send(Message("T", b"x"))
        finally:
            await p.instance.shutdown()
    with pytest.raises(MQClientException, match="connect to 127.0.0.1"):
        asyncio.run(go())
    assert RemotingError("x").kind == "send"


def test_a_request_the_client_does_not_serve_is_answered_not_supported():
    """GET_CONSUMER_RUNNING_INFO (307) from a broker: REQUEST_CODE_NOT_SUPPORTED, as Java's remoting answers a code
    without a processor; the client's own request on the same connection still gets its answer."""
    answers: list = []

    def broker(cmd):
        if cmd.is_response:
            answers.append(cmd)
            return None
        ask = encode_command(RemotingCommand(code=307, opaque=4242, ext_fields={"consumerGroup": "g"}))
        return ask + response(cmd, ext={"msgId": "7F000001000027AF0000000000000000", "queueId": "0",
                                        "queueOffset": "0"})

    async def go():
        server, port = await serve(broker, expect={4242})
        client = RemotingClient()
        try:
            header = {"producerGroup": "p", "topic": "T", "defaultTopic": "TBW102", "defaultTopicQueueNums": 4,
                      "queueId": 0, "sysFlag": 0, "bornTimestamp": 0, "flag": 0, "properties": ""}
            answer = await client.invoke(f"127.0.0.1:{port}", SendMessageRequest(header, b"x"), 3000)
            deadline = time.monotonic() + 3
            while not answers and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            return answer
        finally:
            client.close()
            server.close()
    answer = asyncio.run(go())
    assert answer.status == "SEND_OK"
    assert [(a.code, a.opaque, a.remark) for a in answers] == [(3, 4242, " request type 307 not supported")]
