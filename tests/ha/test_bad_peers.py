"""Bad HA peers: garbage, oversized bodies and offset jumps close the connection; nothing is appended."""

from __future__ import annotations

import json
import socket
import time

import pytest

from rocketlab.core import OutputBuilder, StreamClose
from rocketlab.ha.config import HAConfig
from rocketlab.ha.ha_client import HAClient
from rocketlab.ha.ha_service import HAService
from rocketlab.ha.wire import encode_report, encode_transfer
from rocketlab.store import MessageStore
from rocketlab.store.config import BrokerRole


@pytest.fixture
def slave_store(tmp_path):
    store = MessageStore.open(tmp_path / "slave", threads=False, broker_role=BrokerRole.SLAVE,
                              mapped_file_size_commit_log=64 * 1024)
    yield store
    store.shutdown()


def _client(store, behaviour="4.9.5") -> tuple[HAClient, OutputBuilder]:
    client = HAClient(HAConfig(ha_client_behaviour=behaviour), store.commit_log, "n0", "n1")
    out = OutputBuilder()
    client.on_tick(0, out)
    client.on_stream_open(0, out)
    return client, OutputBuilder()


@pytest.mark.parametrize("behaviour", ["4.9.5", "5.3.3"])
@pytest.mark.parametrize("garbage,reason", [
    (encode_transfer(0, b"")[:8] + (5_000_000).to_bytes(4, "big") + b"x" * 100, "bodySize 5000000"),
    ((-3).to_bytes(8, "big", signed=True) + bytes(4), "negative phyOffset"),
    (encode_transfer(0, b"ab") + encode_transfer(7, b"cd"), "not equal the max phy offset in slave 2"),
])
def test_the_slave_closes_on_a_bad_master_and_appends_nothing_bad(slave_store, garbage, reason, behaviour):
    client, out = _client(slave_store, behaviour)
    before = slave_store.get_max_phy_offset()
    client.on_stream_data(garbage, 5, out)
    closes = [a for a in out.actions if isinstance(a, StreamClose)]
    assert closes and reason in closes[0].reason
    appended = slave_store.get_max_phy_offset() - before
    assert appended == (2 if "not equal" in reason else 0)  # only the good first frame
    # 4.9.5's closeMaster is followed by connectMaster at once; 5.3.3's closeMasterAndWait waits 5 s
    assert client.stream_id is None and client.next_connect_ms == (5 if behaviour == "4.9.5" else 5 + 5000)


def test_a_frame_larger_than_the_slaves_own_batch_size_is_taken(slave_store):
    """Java's slave reads into a 4 MiB buffer whatever its own haTransferBatchSize: a master with a
    larger batch is served."""
    client, out = _client(slave_store)
    body = b"q" * (64 * 1024)  # twice the default haTransferBatchSize
    assert client.on_stream_data(encode_transfer(0, body), 5, out) == len(body)
    assert slave_store.get_max_phy_offset() == len(body) and client.stream_id is not None


def test_a_short_frame_waits_for_the_rest(slave_store):
    client, out = _client(slave_store)
    frame = encode_transfer(0, b"abcdef")
    client.on_stream_data(frame[:10], 1, out)
    assert slave_store.get_max_phy_offset() == 0 and not out.actions
    client.on_stream_data(frame[10:], 2, out)
    assert slave_store.get_max_phy_offset() == 6


def test_the_master_closes_on_a_report_beyond_its_end(tmp_path):
    with MessageStore.open(tmp_path / "m", threads=False, mapped_file_size_commit_log=64 * 1024) as store:
        service = HAService(HAConfig(), store.commit_log, 64 * 1024)
        service.accept("s1", "10.0.0.2:5555", 0)
        out = OutputBuilder()
        service.on_stream_data("s1", encode_report(0), 1, out)  # the request: anything goes
        service.on_stream_data("s1", encode_report(999), 2, out)  # an ack past the end: refused
        closes = [a for a in out.actions if isinstance(a, StreamClose)]
        assert closes and "beyond the master's max offset 0" in closes[0].reason
        assert service.connection_count == 0 and service.push2_slave_max_offset == 0


@pytest.mark.realnet
def test_garbage_on_a_real_masters_ha_port_is_refused_with_a_logged_reason(tmp_path):
    from tests.ha.test_real_brokers import Group

    group = Group(tmp_path, "ASYNC_MASTER")
    group.start("n0")
    try:
        with socket.create_connection(("127.0.0.1", group.ha_port)) as s:
            s.sendall(encode_report(0) + (-1).to_bytes(8, "big", signed=True))
            s.settimeout(5)
            assert s.recv(100) == b""  # closed by the master
        events_file = tmp_path / "run" / "events-n0.jsonl"
        deadline = time.monotonic() + 5
        closes = []
        while not closes and time.monotonic() < deadline:
            time.sleep(0.1)
            if events_file.exists():
                closes = [json.loads(line) for line in events_file.read_text().splitlines()
                          if '"ha_close"' in line]
        assert closes and "negative offset" in closes[0]["reason"]
    finally:
        group.stop_all()
