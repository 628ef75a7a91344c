"""The campaign's applications against bad input, on 127.0.0.1 with a real name server process: a name server
with no route, a broker that answers garbage, one that answers nothing. Each send ends within the client's
``sendMsgTimeout`` (3 s, Java's default) as one history outcome with one clear line, and the read-back ends
with one clear error, never a hang. And the Java driver's send lines as the same history."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from rocketlab.chaos.clients import QUEUES, TOPIC, ClientProducer, read_back
from rocketlab.chaos.history import History
from rocketlab.chaos.java_clients import record_send
from rocketlab.errors import RocketlabError
from rocketlab.namesrv.protocol import RegisterBrokerRequest
from rocketlab.namesrv.route import RegisterBrokerBody, topic_config
from rocketlab.net.client import NetClient
from rocketlab.store.message_codec import create_message_id

pytestmark = pytest.mark.realnet


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def namesrv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``rocketlab node`` name server on a free port (one for the module: a fake broker's registration
    ends with its connection); its ``host:port``."""
    port = _free_port()
    tmp_path = tmp_path_factory.mktemp("namesrv")
    conf = tmp_path / "namesrv.conf"
    conf.write_text(f"nodeKind=namesrv\nlistenPort={port}\nrunDir={tmp_path / 'ns'}\n")
    proc = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(conf)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline(), proc.stderr.read() if proc.stderr else ""
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def _bad_broker(answer: bytes | None) -> tuple[asyncio.AbstractServer, str]:
    """A TCP server that writes ``answer`` for every read (None: never answers)."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            if answer is not None:
                writer.write(answer)
        writer.close()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, f"127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def _register(namesrv: str, broker_addr: str) -> NetClient:
    """REGISTER_BROKER of a broker at ``broker_addr`` serving TOPIC; the connection stays open (a closed one
    unregisters it)."""
    host, _, port = namesrv.rpartition(":")
    client = await NetClient((host, int(port)), client_id="fake-broker").connect(2.0)
    body = RegisterBrokerBody({TOPIC: topic_config(TOPIC, QUEUES, QUEUES)}, {"counter": 1, "timestamp": 1})
    answer = await client.request(RegisterBrokerRequest("DefaultCluster", broker_addr, "fake", 0, broker_addr, body),
                                  5.0)
    assert answer.code == 0, answer
    return client


async def _sends(namesrv: str, history: History, count: int) -> list[dict]:
    producer = ClientProducer(0, namesrv, history, lambda addr: None, interval_ms=0)
    stop = asyncio.Event()
    task = asyncio.ensure_future(producer.run(stop))
    while sum(op["type"] != "invoke" for op in history.ops) < count:
        await asyncio.sleep(0.05)
    stop.set()
    await task
    await producer.close()
    return [op for op in history.ops if op["type"] != "invoke"]


def _timed(ops: list[dict]) -> list[int]:
    """How long each send took (ms, from its invoke)."""
    return [b["t"] - a["t"] for a, b in zip(ops[::2], ops[1::2], strict=True)]


def test_a_name_server_with_no_route(tmp_path, namesrv):
    history = History(tmp_path / "history.jsonl")
    outcomes = asyncio.run(_sends(namesrv, history, 3))
    history.close()
    assert all(op["type"] == "fail" and op["attempts"] == [] for op in outcomes), outcomes
    assert all(op["error"].startswith("No route info of this topic") and "\n" not in op["error"]
               for op in outcomes)
    assert max(_timed(history.ops)) < 3000
    started = time.monotonic()
    with pytest.raises(RocketlabError, match=r"read back of Chaos through the name server .*: nothing read in 2 s "
                                             r"\(No route info of this topic"):
        asyncio.run(read_back(namesrv, True, lambda n: True, lambda a: "n0", timeout_s=2))
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("answer, words, sends", [(b"\x00\x00\x00\x05garbage-garbage", "no RocketMQ remoting frame", 2),
                                                  (None, "timeout", 1)], ids=["garbage", "silent"])
def test_a_broker_answering_garbage_or_nothing(tmp_path, namesrv, answer, words, sends):
    async def scenario() -> tuple[list[dict], str]:
        server, addr = await _bad_broker(answer)
        registration = await _register(namesrv, addr)
        try:
            history = History(tmp_path / "history.jsonl")
            outcomes = await _sends(namesrv, history, sends)
            history.close()
            with pytest.raises(RocketlabError) as read_error:
                await read_back(namesrv, True, lambda n: True, lambda a: "n0", timeout_s=2)
            return outcomes, str(read_error.value)
        finally:
            await registration.close()
            server.close()
    started = time.monotonic()
    outcomes, read_error = asyncio.run(scenario())
    # the attempt may have stored the message (it was written to the broker): unknown, never ok or fail
    assert all(op["type"] == "unknown" and op["attempts"] and "\n" not in op["error"] for op in outcomes), outcomes
    assert all(words in op["error"] for op in outcomes), outcomes
    assert all(a["stored"] for op in outcomes for a in op["attempts"])
    assert "nothing read in 2 s" in read_error and "\n" not in read_error
    assert time.monotonic() - started < sends * 3.5 + 15  # sends of at most sendMsgTimeout each, one read back


def test_the_java_clients_send_lines_as_history(tmp_path):
    """What the Java driver prints for a send becomes the same history as the kit's producers write: the id
    from the run and index, the SendResult's fields, the store host's node from the offset msg id; a failure
    is ``fail`` only when its one attempt cannot have stored anything."""
    history = History(tmp_path / "history.jsonl")
    ok = {"run": "p1", "i": 7, "uniq": "U1", "status": "SEND_OK", "broker": "broker-a", "queue": 2, "queue_offset": 5,
          "offset_msg_id": create_message_id(bytes([10, 0, 0, 11]) + (10911).to_bytes(4, "big"), 4096)}
    record_send(history, ok, {"10.0.0.11:10911": "n1"}.get)
    record_send(history, {**ok, "i": 8, "status": "FLUSH_SLAVE_TIMEOUT"}, lambda addr: None)
    for i, error in enumerate(["MQBrokerException: CODE: 14  DESC: service not available now",
                               "RemotingConnectException: connect to 10.0.0.11:10911 failed",
                               "RemotingTimeoutException: wait response on the channel <10.0.0.11:10911> timeout"]):
        record_send(history, {"run": "p0", "i": i, "uniq": f"E{i}", "error": error + "\nat ..."}, lambda addr: None)
    history.close()
    ops = [op for op in history.ops if op["type"] != "invoke"]
    assert [op["type"] for op in ops] == ["ok", "unknown", "fail", "fail", "unknown"]
    first = ops[0]
    assert (first["id"], first["process"], first["msg_id"], first["queue"], first["queue_offset"]) == ("p1-7", 1, "U1", 2, 5)
    assert (first["broker"], first["phy_offset"], first["broker_name"]) == ("n1", 4096, "broker-a")
    assert all("\n" not in op.get("error", "") for op in ops)


def test_asking_for_the_java_client_where_it_cannot_run_is_one_line():
    env = {k: v for k, v in os.environ.items() if k != "ROCKETLAB_JAVA_BROKER"}
    bad = subprocess.run([sys.executable, "-m", "rocketlab.cli", "chaos", "run", "--system", "sync-pair", "--seed", "1",
                          "--client", "java"], capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert bad.stderr.startswith("rocketlab: --client java: the Java 4.9.5 client cannot run here (ROCKETLAB_JAVA_BROKER")
