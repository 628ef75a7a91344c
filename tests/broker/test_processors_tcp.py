"""The client codes on real TCP: a broker started by ``rocketlab node``, raw remoting connections as a
consumer's (a pull held and woken, NOTIFY_CONSUMER_IDS_CHANGED on the consumer's own connection),
bad requests answered as ``NettyRemotingAbstract`` answers them, offsets surviving a restart."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketlab.broker import client_messages as m
from rocketlab.broker.protocol import (
    PullMessageRequest,
    PullSysFlag,
    SendMessageRequest,
    UpdateConsumerOffsetRequest,
)
from rocketlab.remoting import fastjson
from rocketlab.remoting.command import ONEWAY_FLAG, RemotingCommand
from tests.broker.rawconn import CODEC, Conn
from tests.realnodes import NodeProcesses, free_port

pytestmark = pytest.mark.realnet
PUSH = PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_COMMIT_OFFSET


class Broker(NodeProcesses):
    def __init__(self, tmp: Path) -> None:
        self.tmp, self.port = tmp, free_port()
        path = tmp / "broker.conf"
        path.write_text(f"nodeKind=broker\nselfId=n0\npeers=n0-127.0.0.1:{self.port}\nrunDir={tmp / 'run'}\n"
                        f"storePathRootDir={tmp / 'store'}\nmappedFileSizeCommitLog={64 * 1024}\n")
        self.configs = {"n0": path}
        super().__init__()


def _heartbeat(client_id: str) -> m.HeartbeatRequest:
    return m.HeartbeatRequest(client_id, (), (m.ConsumerData("g", subscriptions=(m.SubscriptionData("T", "*"),)),))


async def _until(predicate, timeout_s: float = 5.0) -> None:
    end = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.02)


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path)
    b.start("n0")
    yield b
    b.stop_all()


def test_a_pull_is_held_until_a_message_arrives_and_members_are_told_of_a_group_change(broker):
    async def run() -> tuple[float, float]:
        producer, a, b = [await Conn().open(broker.port) for _ in range(3)]
        assert (await producer.ask(SendMessageRequest("T", b"first", 0))).status == "PUT_OK"
        assert (await a.ask(_heartbeat("A@1"))).ok  # a new member: every member is told, itself too
        await _until(lambda: len(a.from_broker) == 1)
        assert (await b.ask(_heartbeat("B@1"))).ok
        await _until(lambda: len(a.from_broker) == 2)  # NOTIFY_CONSUMER_IDS_CHANGED on A's own connection
        notice = a.from_broker[1]
        assert notice.code == 40 and notice.is_oneway and notice.ext_fields == {"consumerGroup": "g"}
        pull = PullMessageRequest("T", 0, 1, 32, "g", sys_flag=PUSH, commit_offset=1, suspend_timeout_millis=15_000,
                                  subscription=None)
        started = time.monotonic()
        held = a.send(CODEC.command(pull))
        await asyncio.sleep(0.5)
        assert not held.done()  # no message: the broker holds the pull
        sent_at = time.monotonic()
        assert (await producer.ask(SendMessageRequest("T", b"second", 0))).status == "PUT_OK"
        answer = CODEC.message(await asyncio.wait_for(held, 5), answers=pull)
        woke = time.monotonic() - sent_at
        assert answer.status == "FOUND" and [x["body"] for x in answer.messages] == [b"second"]
        await b.close()  # the connection closes: A is told again
        await _until(lambda: len(a.from_broker) == 3)
        assert (await a.ask(m.GetConsumerListByGroupRequest("g"))).consumer_id_list == ("A@1",)
        assert (await a.ask(m.QueryConsumerOffsetRequest("g", "T", 0))).offset == 1  # the pull's commitOffset
        for c in (producer, a):
            await c.close()
        return sent_at - started, woke

    held_s, woke_s = asyncio.run(run())
    print(f"held {held_s:.2f} s, answered {woke_s * 1000:.0f} ms after the send")
    assert woke_s < 1.0


def test_bad_requests_get_one_clear_answer_and_lose_nothing(broker):
    async def run() -> None:
        c = await Conn().open(broker.port)
        assert (await c.ask(SendMessageRequest("T", b"kept", 0))).status == "PUT_OK"
        cases = [
            RemotingCommand(code=34, body=b"{not json"),  # HEART_BEAT with a broken body
            RemotingCommand(code=34, body=b'{"consumerDataSet":[{"groupName":7}]}'),
            RemotingCommand(code=41, body=b"[]"),  # LOCK_BATCH_MQ: not an object
            RemotingCommand(code=11, ext_fields={"consumerGroup": "g", "topic": "T", "queueId": "0"}),  # no offset
            RemotingCommand(code=30, ext_fields={"topic": "T", "queueId": "zero"}),
        ]
        for cmd in cases:
            answer = await asyncio.wait_for(c.send(cmd), 5)
            assert answer.code == 1 and answer.remark, (cmd.code, answer)  # SYSTEM_ERROR with the reason
            print(cmd.code, answer.remark)
        unserved = await asyncio.wait_for(c.send(RemotingCommand(code=28)), 5)  # GET_BROKER_RUNTIME_INFO
        assert (unserved.code, unserved.remark) == (3, " request type 28 not supported")  # as NettyRemotingAbstract
        c.send(RemotingCommand(code=15, flag=ONEWAY_FLAG, ext_fields={"topic": "T"}))  # a bad oneway: dropped
        assert (await c.ask(m.GetMaxOffsetRequest("T", 0))).offset == 1  # the same connection still serves
        c.writer.write(b"\x00\x00\x00\x05garbage")  # a broken frame: the broker closes the connection
        await asyncio.wait_for(c.closed.wait(), 5)
        d = await Conn().open(broker.port)
        assert (await d.ask(m.GetMaxOffsetRequest("T", 0))).offset == 1
        await d.close()

    asyncio.run(run())


def test_committed_offsets_survive_a_restart_in_fastjson_form(broker):
    async def commit() -> None:
        c = await Conn().open(broker.port)
        assert (await c.ask(SendMessageRequest("T", b"x", 2))).status == "PUT_OK"
        c.send(CODEC.command(UpdateConsumerOffsetRequest("g", "T", 2, 1)))  # oneway, as a push consumer
        assert (await c.ask(m.QueryConsumerOffsetRequest("g", "T", 2))).offset == 1
        await c.close()

    asyncio.run(commit())
    broker.stop_all()
    text = (broker.tmp / "store" / "config" / "consumerOffset.json").read_text()
    assert '"T@g":{2:1\n' in text and fastjson.loads(text.encode())["offsetTable"] == {"T@g": {"2": 1}}
    broker.start("n0")

    async def query() -> int:
        c = await Conn().open(broker.port)
        offset = (await c.ask(m.QueryConsumerOffsetRequest("g", "T", 2))).offset
        await c.close()
        return offset

    assert asyncio.run(query()) == 1
