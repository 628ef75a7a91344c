"""The send path of a ``rocketlab node`` broker on TCP: bad input answered as Java's remoting answers it
(a malformed header: SYSTEM_ERROR with the reason; a truncated batch: MESSAGE_ILLEGAL), the connection
still serving afterwards, a delayed message delivered and ``delayOffset.json`` written in fastjson's form."""

from __future__ import annotations

import asyncio
import re
import signal
import time

import pytest

from rocketlab.broker.protocol import PullMessageRequest, SendMessageRequest, broker_codec
from rocketlab.net.client import NetClient
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.connection import NEED_DATA, RemotingConnection
from rocketlab.store.message import Message
from rocketlab.store.message_batch import pack_messages
from tests.realnodes import free_port, start_node

pytestmark = pytest.mark.realnet


async def _raw(port: int, cmd: RemotingCommand) -> RemotingCommand:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = RemotingConnection()
    writer.write(conn.send(cmd))
    while (got := conn.next_command()) is NEED_DATA:
        conn.receive_data(await asyncio.wait_for(reader.read(65536), 10))
    writer.close()
    return got


async def _session(port: int) -> dict:
    bad_header = await _raw(port, RemotingCommand(310, opaque=7, ext_fields={"a": "pg", "b": "T"}))
    client = await NetClient(("127.0.0.1", port), broker_codec()).connect()
    truncated = pack_messages([Message("T", b"abc")])[:-2]
    batch = await client.request(SendMessageRequest("T", truncated, 0, batch=True))
    later = await client.request(SendMessageRequest("T", b"later", 1, properties_string="DELAY\x011"))
    ok = await client.request(SendMessageRequest("T", b"now", 0))
    deadline, delivered = time.monotonic() + 10, ()
    while time.monotonic() < deadline and not delivered:
        await asyncio.sleep(0.2)
        delivered = (await client.request(PullMessageRequest("T", 1, 0))).messages
    await client.close()
    return {"bad_header": bad_header, "batch": batch, "later": later, "ok": ok, "delivered": delivered}


def test_bad_input_is_answered_and_a_delayed_message_is_delivered_over_tcp(tmp_path):
    port = free_port()
    conf = tmp_path / "n0.conf"
    conf.write_text(f"nodeKind=broker\nselfId=n0\npeers=n0-127.0.0.1:{port}\nrunDir={tmp_path / 'run'}\n"
                    f"storePathRootDir={tmp_path / 'store'}\nmappedFileSizeCommitLog=1048576\nmessageDelayLevel=1s\n")
    node = start_node(conf, "n0")
    try:
        got = asyncio.run(_session(port))
    finally:
        node.send_signal(signal.SIGTERM)
        assert node.wait(timeout=20) == 0
    assert got["bad_header"].code == 1 and got["bad_header"].opaque == 7
    assert "the custom field <c> is null" in got["bad_header"].remark
    assert got["batch"].status == "MESSAGE_ILLEGAL"
    assert got["later"].status == "PUT_OK" and got["later"].queue_id == 1 and got["ok"].status == "PUT_OK"
    assert [m["body"] for m in got["delivered"]] == [b"later"]
    assert got["later"].msg_id[8:16] == f"{port:08X}"  # the store host is the node's own address
    text = (tmp_path / "store" / "config" / "delayOffset.json").read_text()
    assert re.search(r"\b1\s*:\s*1\b", text) and '"1"' not in text
