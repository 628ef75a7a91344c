"""The client codes against the real RocketMQ 4.9.5 broker (``brokeroracle.BrokerMain`` of the class path
``ROCKETLAB_JAVA_BROKER``, which CI sets, started by the kit's :class:`~rocketlab.oracle.broker_group.Backend`) and the kit's: the same requests get the same answers, shown of RocketMQ first; consumer offsets cross between
the two through ``config/consumerOffset.json`` (the Java broker reads the kit's file, the kit reads Java's);
bad input (malformed headers and JSON bodies, a code the broker does not serve, garbage, oversized, negative and
truncated frames) gets the same answers, closes the connection alike, and loses nothing stored.

The Java broker here runs on the shared jars' stand-in fastjson (Jackson underneath), which writes integer
map keys quoted and cannot read fastjson's unquoted ones: the kit's file is handed to it with its keys
quoted (the kit reads and writes fastjson's own form, ``tests/data/broker/consumerOffset-fastjson.json``).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from rocketlab.broker import client_messages as m
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.protocol import (
    PullMessageRequest,
    PullMessageResponse,
    PullSysFlag,
    SendMessageRequest,
    UpdateConsumerOffsetRequest,
)
from rocketlab.broker.send_protocol import CreateTopicRequest
from rocketlab.oracle.broker_group import Backend
from rocketlab.remoting import fastjson
from rocketlab.remoting.command import RemotingCommand, encode_command
from tests.badframes import answers, broken_frames
from tests.broker.rawconn import CODEC, Conn
from tests.oracle.conftest import need_broker_java
from tests.realnodes import NodeProcesses, free_port

pytestmark = pytest.mark.realnet


class KitBroker(NodeProcesses):
    def __init__(self, tmp: Path, extra: dict[str, str] | None = None) -> None:
        self.port = free_port()
        tmp.mkdir(parents=True, exist_ok=True)
        path = tmp / "broker.conf"
        path.write_text(f"nodeKind=broker\nselfId=n0\npeers=n0-127.0.0.1:{self.port}\nrunDir={tmp / 'run'}\n"
                        f"storePathRootDir={tmp / 'store'}\nmappedFileSizeCommitLog={1024 * 1024}\n"
                        + "".join(f"{k}={v}\n" for k, v in (extra or {}).items()))
        self.configs = {"n0": path}
        super().__init__()


UNIQ = "7F00000100002A9F0000000000000001"
"""An UNIQ_KEY property, for QUERY_MESSAGE by unique key (``_UNIQUE_KEY_QUERY``)."""


def _heartbeat() -> m.HeartbeatRequest:
    sub = m.SubscriptionData("TopicTest", "TagA", ("TagA",), (fastjson.java_string_hash("TagA"),), 1)
    return m.HeartbeatRequest("127.0.0.1@probe", (), (m.ConsumerData("g", subscriptions=(sub,)),))


def _view(answer):
    """What must match: the answer with its records decoded to (queue offset, body, tags, keys)."""
    records = getattr(answer, "records", None)
    if records is None:
        return answer
    decoded = [(x["queue_offset"], x["body"], x["tags"], x["keys"]) for x in PullMessageResponse("FOUND", records).messages]
    if isinstance(answer, PullMessageResponse):
        return (answer.response_code, answer.status, decoded, answer.next_begin_offset, answer.min_offset,
                answer.max_offset, answer.suggest_which_broker_id)
    return type(answer).__name__, decoded


async def _scenario(port: int) -> list:
    """Sends, then the client codes; every answer (decoded records where records come back)."""
    c = await Conn().open(port)
    sent, before_ms = [], int(time.time() * 1000)
    for i, tags in enumerate(["TagA", "TagB", "TagA"]):
        sent.append(await c.ask(SendMessageRequest("TopicTest", f"m{i}".encode(), 0, tags, f"key-{i}")))
    uniq = await c.ask(SendMessageRequest("TopicTest", b"u", 2, properties_string=f"UNIQ_KEY\x01{UNIQ}\x02WAIT\x01true"))
    assert all(s.status == "PUT_OK" for s in [*sent, uniq]), sent
    deadline = asyncio.get_running_loop().time() + 5  # Java's ReputMessageService dispatches after the answer
    while (await c.ask(m.GetMaxOffsetRequest("TopicTest", 0))).offset < 3 or \
            (await c.ask(m.GetMaxOffsetRequest("TopicTest", 2))).offset < 1:
        assert asyncio.get_running_loop().time() < deadline, "the three sends never reached the consume queue"
        await asyncio.sleep(0.01)
    answers = [
        await c.ask(m.GetMaxOffsetRequest("TopicTest", 0)),
        await c.ask(m.GetMinOffsetRequest("TopicTest", 0)),
        await c.ask(m.GetMaxOffsetRequest("NoSuchTopic", 0)),
        await c.ask(m.GetMinOffsetRequest("NoSuchTopic", 0)),
        await c.ask(m.GetEarliestMsgStoretimeRequest("NoSuchTopic", 0)),
        await c.ask(m.SearchOffsetRequest("NoSuchTopic", 0, 0)),
        await c.ask(m.SearchOffsetRequest("TopicTest", 0, 0)),  # before the first message
        await c.ask(m.SearchOffsetRequest("TopicTest", 0, 2**62)),  # after the last
        await c.ask(m.SearchOffsetRequest("TopicTest", 1, 2**62)),  # an empty queue
        await c.ask(m.QueryMessageRequest("TopicTest", "no-such-key", 32, 0, 2**62)),
        await c.ask(m.ViewMessageRequest(1 << 40)),
        await c.ask(m.QueryConsumerOffsetRequest("g", "NoSuchTopic", 0)),
        await c.ask(m.QueryConsumerOffsetRequest("g", "TopicTest", 0)),  # a new group, first message in memory
        await c.ask(m.GetConsumerListByGroupRequest("g")),
        await c.ask(_heartbeat()),
        await c.ask(m.GetConsumerListByGroupRequest("g")),
        await c.ask(UpdateConsumerOffsetRequest("g", "TopicTest", 0, 2)),
        await c.ask(m.QueryConsumerOffsetRequest("g", "TopicTest", 0)),
        await c.ask(PullMessageRequest("TopicTest", 0, 0, 32, "g", subscription="TagB")),
        await c.ask(PullMessageRequest("TopicTest", 0, 0, 32, "g", sys_flag=0, subscription=None)),  # heartbeat's
        await c.ask(PullMessageRequest("TopicTest", 0, 3, 32, "g")),
        await c.ask(PullMessageRequest("NoSuchTopic", 0, 0, 32, "g")),
        await c.ask(m.ViewMessageRequest(sent[1].phy_offset)),
        await c.ask(m.QueryMessageRequest("TopicTest", "key-2", 32, 0, 2**62)),
        await c.ask(m.QueryMessageRequest("TopicTest", UNIQ, 32, 0, 2**62, unique_key=True)),  # by UNIQ_KEY
        await c.ask(m.QueryMessageRequest("TopicTest", "0" * 32, 32, 0, 2**62, unique_key=True)),
        await c.ask(m.LockBatchRequest("g", "127.0.0.1@probe", (m.MessageQueue("TopicTest", "broker-a", 0),))),
        await c.ask(m.UnlockBatchRequest("g", "127.0.0.1@probe", (m.MessageQueue("TopicTest", "broker-a", 0),))),
    ]
    earliest = await c.ask(m.GetEarliestMsgStoretimeRequest("TopicTest", 0))  # the first message's store time
    after_ms = int(time.time() * 1000)
    await c.close()
    return [*(_view(a) for a in answers), before_ms <= earliest.timestamp <= after_ms]


async def _settle(expected, timeout_s: float = 5.0) -> None:
    """Wait for what the oneway notices should have done (at most ``timeout_s``), then a little more for
    any notice beyond them."""
    end = asyncio.get_running_loop().time() + timeout_s
    while not expected() and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)


async def _members_and_long_polling(port: int) -> list:
    """Two members join a group (the notices each connection gets), then a push consumer's pull with nothing
    new: held, and answered with the message a send adds; a member's connection closes, another member
    unregisters (UNREGISTER_CLIENT): the notices, the answer, the group left."""
    a, b, producer = [await Conn().open(port) for _ in range(3)]
    seen = []
    hb = _heartbeat()
    await a.ask(m.HeartbeatRequest("127.0.0.1@a", (), hb.consumers))
    await _settle(lambda: len(a.from_broker) >= 1)
    seen.append(("after A joined", [c.code for c in a.from_broker]))
    await b.ask(m.HeartbeatRequest("127.0.0.1@b", (), hb.consumers))
    await _settle(lambda: len(a.from_broker) >= 2 and len(b.from_broker) >= 1)
    seen.append(("after B joined", [c.code for c in a.from_broker], [c.code for c in b.from_broker]))
    pull = PullMessageRequest("TopicTest", 0, 3, 32, "g", sys_flag=PullSysFlag.FLAG_SUSPEND, suspend_timeout_millis=20_000,
                              subscription=None)
    held = a.send(CODEC.command(pull))
    await asyncio.sleep(0.5)
    seen.append(("held", not held.done()))
    await producer.ask(SendMessageRequest("TopicTest", b"late", 0, "TagA"))
    answer = CODEC.message(await asyncio.wait_for(held, 5), answers=pull)
    seen.append(("woken", _view(answer)))
    await b.close()
    await _settle(lambda: len(a.from_broker) >= 3)
    seen.append(("after B left", [c.code for c in a.from_broker]))
    c = await Conn().open(port)  # a third member joins, then leaves by UNREGISTER_CLIENT (a client's shutdown)
    await c.ask(m.HeartbeatRequest("127.0.0.1@c", (), hb.consumers))
    await _settle(lambda: len(a.from_broker) >= 4)
    left = await c.ask(m.UnregisterClientRequest("127.0.0.1@c", None, "g"))
    await _settle(lambda: len(a.from_broker) >= 5)
    seen.append(("after C unregistered", left, [x.code for x in a.from_broker],
                 await c.ask(m.GetConsumerListByGroupRequest("g"))))
    for conn in (a, producer, c):
        await conn.close()
    return seen


def _cmd(code: int, opaque: int, ext: dict[str, str], body: bytes | None = None) -> bytes:
    return encode_command(RemotingCommand(code, opaque=opaque, ext_fields=ext, body=body))


MALFORMED = {  # name -> frame; each answered, the connection left open
    "heartbeat body not JSON": _cmd(34, 1, {}, b"{not json"),
    "lock body not an object": _cmd(41, 2, {}, b"[]"),
    "pull without queueOffset": _cmd(11, 3, {"consumerGroup": "g", "topic": "BadIn", "queueId": "0"}),
    "queueId not a number": _cmd(30, 4, {"topic": "BadIn", "queueId": "zero"}),
    "send header cut short": _cmd(310, 5, {"a": "pg", "b": "BadIn"}, b"x"),
    "commit of queue x": _cmd(15, 6, {"consumerGroup": "g", "topic": "BadIn", "queueId": "x", "commitOffset": "1"}),
    "NOTIFY_CONSUMER_IDS_CHANGED sent to a broker": _cmd(40, 7, {"consumerGroup": "g"}),
    "unknown code": _cmd(9999, 8, {}),
}


async def _bad_input(port: int) -> dict:
    """A message stored, then malformed requests (their answer codes) and broken frames (whether each closed
    the connection); then whether the message is still there."""
    c = await Conn().open(port)
    assert (await c.ask(SendMessageRequest("BadIn", b"kept", 0))).status == "PUT_OK"
    await c.close()
    codes = dict(zip(MALFORMED, await answers(port, list(MALFORMED.values())), strict=True))
    closed = await broken_frames(port, _cmd(30, 9, {"topic": "BadIn", "queueId": "0"}))
    await asyncio.sleep(0.3)
    d = await Conn().open(port)
    kept = _view(await d.ask(PullMessageRequest("BadIn", 0, 0, 32, "g_bad")))
    await d.close()
    return {"codes": codes, "closed": closed, "kept": kept}


async def _ask(port: int, msg):
    c = await Conn().open(port)
    try:
        return await c.ask(msg)
    finally:
        await c.close()


def _java_backend(tmp: Path, extra: dict[str, str] | None = None) -> Backend:
    """The real name server and broker, the broker's store in ``tmp/broker-a/store``."""
    return Backend("java", tmp, need_broker_java(), broker_extra={"mappedFileSizeCommitLog": "1048576", **(extra or {})})


SHORT_POLLING_NO_AUTO_CREATE = {"longPollingEnable": "false", "autoCreateTopicEnable": "false"}


async def _short_polling_no_auto_create(port: int) -> list:
    """A send to a topic nobody created; the topic created; a push consumer's pull on its empty queue (held
    15 s under long polling): the answers, and how long the pull was held, in whole seconds."""
    c = await Conn().open(port)
    seen = [await c.ask(SendMessageRequest("NoAutoTopic", b"x", 0)), await c.ask(CreateTopicRequest("Idle", 1, 1))]
    pull = PullMessageRequest("Idle", 0, 0, 32, "g_idle", sys_flag=PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_SUBSCRIPTION,
                              suspend_timeout_millis=15_000, subscription="*")
    started = asyncio.get_running_loop().time()
    answer = CODEC.message(await asyncio.wait_for(c.send(CODEC.command(pull)), 10), answers=pull)
    held_s = asyncio.get_running_loop().time() - started
    await c.close()
    return [*seen, _view(answer), 0.5 < held_s < 3.5]


def test_the_kit_answers_the_client_codes_as_the_java_broker_and_offsets_cross(tmp_path):
    java_backend = _java_backend(tmp_path / "java")
    kit = KitBroker(tmp_path / "kit")
    kit.start("n0")
    try:
        kit_answers = asyncio.run(_scenario(kit.port))
        kit_members = asyncio.run(_members_and_long_polling(kit.port))
        kit_bad = asyncio.run(_bad_input(kit.port))

        async def commit_for_java() -> None:  # the kit's offsets, for the Java broker to read
            c = await Conn().open(kit.port)
            assert (await c.ask(SendMessageRequest("TopicTest", b"q1", 1))).status == "PUT_OK"
            await c.ask(UpdateConsumerOffsetRequest("kitgroup", "TopicTest", 1, 1))
            await c.close()

        asyncio.run(commit_for_java())
    finally:
        kit.stop_all()
    kit_file = tmp_path / "kit" / "store" / "config" / "consumerOffset.json"
    assert '"TopicTest@kitgroup":{1:1\n' in kit_file.read_text()  # fastjson's form
    java_dir = tmp_path / "java" / "broker-a"
    (java_dir / "store" / "config").mkdir(parents=True)
    table = fastjson.loads(kit_file.read_bytes())
    del table["offsetTable"]["TopicTest@g"]  # the scenario's group starts new on both brokers
    quoted = json.dumps(table)  # the stand-in fastjson needs quoted keys
    (java_dir / "store" / "config" / "consumerOffset.json").write_text(quoted)
    java_backend.start()
    port = java_backend.servers["broker-a"].port
    try:
        java_answers = asyncio.run(_scenario(port))
        java_members = asyncio.run(_members_and_long_polling(port))
        java_bad = asyncio.run(_bad_input(port))
        read_back = asyncio.run(_ask(port, m.QueryConsumerOffsetRequest("kitgroup", "TopicTest", 1)))
    finally:
        java_backend.stop()
    for i, (java, ours) in enumerate(zip(java_answers, kit_answers, strict=True)):
        print(i, java)
        assert ours == java, f"answer {i}: Java {java!r}, kit {ours!r}"
    print(java_members)
    assert kit_members == java_members
    print(java_bad)  # bad input: SYSTEM_ERROR (1) or REQUEST_CODE_NOT_SUPPORTED (3), broken frames close
    assert set(java_bad["codes"].values()) == {1, 3} and all(java_bad["closed"].values())
    assert java_bad["kept"][2] == [(0, b"kept", None, None)]  # nothing stored was lost
    assert kit_bad == java_bad
    assert read_back == m.OffsetResponse(1)  # the Java broker read the kit's offset
    meta = BrokerMetadata(java_dir / "store" / "config")  # the kit reads Java's file
    meta.load()
    assert meta.consumer_offset_manager.query_offset("g", "TopicTest", 0) == 2
    assert meta.consumer_offset_manager.query_offset("kitgroup", "TopicTest", 1) == 1


def test_short_polling_and_no_topic_auto_creation_answer_as_the_java_broker(tmp_path):
    """``longPollingEnable=false``: a pull with nothing new is held shortPollingTimeMills (1 s; answered at the
    hold service's next check), not its suspend time; ``autoCreateTopicEnable=false``: a send to a topic nobody
    created is refused (TBW102 not inheritable)."""
    kit = KitBroker(tmp_path / "kit", SHORT_POLLING_NO_AUTO_CREATE)
    kit.start("n0")
    try:
        ours = asyncio.run(_short_polling_no_auto_create(kit.port))
    finally:
        kit.stop_all()
    java_backend = _java_backend(tmp_path / "java", SHORT_POLLING_NO_AUTO_CREATE)
    java_backend.start()
    try:
        java = asyncio.run(_short_polling_no_auto_create(java_backend.servers["broker-a"].port))
    finally:
        java_backend.stop()
    print(java)
    assert java[0].code == 17 and java[1].ok  # TOPIC_NOT_EXIST; then created
    assert java[2][:2] == (19, "NO_MESSAGE_IN_QUEUE") and java[3]  # PULL_NOT_FOUND after about a second
    assert ours == java
