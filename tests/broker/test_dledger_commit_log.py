"""DLedgerCommitLog pieces in isolation: the two record formats, the append hook, DLedger codes to
PutMessageStatus, the broker id, the codec of its one message port, and the role change handler's LEADER wait.

Reference: the RocketMQ digest, section 6.2 (DLedgerCommitLog) and 6.3 (DLedgerRoleChangeHandler).
"""

from __future__ import annotations

import struct

import pytest

from rocketlab.broker.dledger_broker import DLedgerGroupCheckRequest, dledger_broker_codec
from rocketlab.broker.dledger_commit_log import DLedgerCommitLog, broker_id_of
from rocketlab.broker.dledger_commit_log_check import check_message_and_return_size
from rocketlab.broker.dledger_commit_log_status import CODE_TO_STATUS, put_status_of
from rocketlab.broker.dledger_role_change_handler import DLedgerRoleChangeHandler
from rocketlab.broker.protocol import SendMessageRequest
from rocketlab.core import OutputBuilder
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.entry_coder import encode
from rocketlab.dledger.member_state import Role
from rocketlab.dledger.protocol import DLedgerResponseCode, VoteRequest
from rocketlab.errors import CodecError, ConfigError
from rocketlab.remoting.command import RemotingCommand, encode_command, parse_frame
from rocketlab.remoting.family import UnsupportedRequest
from rocketlab.store import Message, PutMessageStatus, encode_message
from rocketlab.store.record_layout import PHY_POS_POSITION, encode_blank

Code = DLedgerResponseCode


def _entry_bytes(record: bytes, pos: int, index: int = 0, term: int = 1) -> bytearray:
    """A DLedger entry holding ``record`` at ``pos``, its PHYSICALOFFSET stamped by the append hook."""
    buf = encode(DLedgerEntry(body=record, index=index, term=term, pos=pos))
    entry = DLedgerEntry(body=record, index=index, term=term, pos=pos, size=len(buf))
    DLedgerCommitLog.append_hook(entry, buf, 48)
    return buf


RECORD = encode_message(Message(topic="T", body=b"hello", queue_id=0, tags="A"), queue_offset=7)


def test_an_old_format_record_is_parsed_classically():
    record = encode_message(Message(topic="T", body=b"x" * 10), physical_offset=4096)
    req, size = check_message_and_return_size(record, 0, len(record), base=4096)
    assert req.success and req.msg_size == len(record) == size and req.commit_log_offset == 4096


def test_the_old_blank_and_the_dledger_blank_both_roll_to_the_next_file():
    old = encode_blank(100) + bytes(92)
    req, size = check_message_and_return_size(old, 0, len(old))
    assert req.success and req.msg_size == 0 and size == 0
    dledger = struct.pack(">ii", -1, 100) + bytes(92)
    req, size = check_message_and_return_size(dledger, 0, len(dledger))
    assert req.success and req.msg_size == 0 and size == 0


def test_a_dledger_entry_is_skipped_over_its_48_byte_header():
    buf = _entry_bytes(RECORD, pos=1000)
    req, size = check_message_and_return_size(buf, 0, len(buf), base=1000)
    assert req.success and req.msg_size == len(RECORD) and size == len(RECORD) + 48
    assert req.commit_log_offset == 1048 and req.consume_queue_offset == 7 and req.topic == "T"


def test_the_append_hook_writes_pos_plus_48_into_physicaloffset():
    buf = _entry_bytes(RECORD, pos=123_456)
    assert struct.unpack_from(">q", buf, 48 + PHY_POS_POSITION)[0] == 123_456 + 48
    noop = bytearray(encode(DLedgerEntry(magic=2, body=b"", pos=5)))
    DLedgerCommitLog.append_hook(DLedgerEntry(magic=2, body=b"", pos=5, size=48), noop, 48)
    assert bytes(noop) == bytes(encode(DLedgerEntry(magic=2, body=b"", pos=5)))  # a NOOP is left alone


def test_a_noop_entry_is_stepped_over_without_a_message():
    buf = encode(DLedgerEntry(magic=2, body=b"", pos=0))
    req, size = check_message_and_return_size(buf, 0, len(buf), base=0)
    assert req.success and req.msg_size == 0 and size == 48


@pytest.mark.parametrize("at, value, reason", [
    (24, struct.pack(">q", 999), "says pos"),          # pos != where the entry sits
    (0, struct.pack(">i", 7), "no DLedger entry"),      # unknown magic
    (44, struct.pack(">i", 3), "no DLedger entry"),     # bodySize + 48 != size
])
def test_a_damaged_entry_header_stops_the_reader(at, value, reason):
    buf = _entry_bytes(RECORD, pos=0)
    buf[at:at + len(value)] = value
    req, size = check_message_and_return_size(buf, 0, len(buf), base=0)
    assert not req.success and size == -1 and reason in req.reason


def test_a_torn_entry_stops_and_a_record_with_the_wrong_physical_offset_is_refused():
    buf = _entry_bytes(RECORD, pos=0)
    req, size = check_message_and_return_size(buf, 0, len(buf) - 1, base=0)
    assert not req.success and size == -1
    stale = bytearray(buf)
    struct.pack_into(">q", stale, 48 + PHY_POS_POSITION, 4242)  # the hook never ran on these bytes
    req, size = check_message_and_return_size(stale, 0, len(stale), base=0)
    assert not req.success and "PHYSICALOFFSET" in req.reason


@pytest.mark.parametrize("version,quorum_timeout", [
    ("4.9.5", PutMessageStatus.OS_PAGECACHE_BUSY),  # DLedgerCommitLog.java 518-521 in rocketmq-all-4.9.5
    ("5.3.3", PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH),  # 638-640 in rocketmq-all-5.3.3
])
def test_dledger_codes_map_to_put_statuses_per_release(version, quorum_timeout):
    assert put_status_of(Code.SUCCESS, version) is PutMessageStatus.PUT_OK
    for code in (Code.INCONSISTENT_LEADER, Code.NOT_LEADER, Code.LEADER_NOT_READY, Code.DISK_FULL):
        assert put_status_of(code, version) is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert put_status_of(Code.WAIT_QUORUM_ACK_TIMEOUT, version) is quorum_timeout
    assert put_status_of(Code.LEADER_PENDING_FULL, version) is PutMessageStatus.OS_PAGECACHE_BUSY
    for code in (Code.TERM_CHANGED, Code.DISK_ERROR, Code.UNKNOWN, None):
        assert put_status_of(code, version) is PutMessageStatus.UNKNOWN_ERROR
    assert len(CODE_TO_STATUS[version]) == 7


def test_the_default_put_status_mapping_is_4_9_5s_and_an_unknown_version_is_refused():
    assert put_status_of(Code.WAIT_QUORUM_ACK_TIMEOUT) is PutMessageStatus.OS_PAGECACHE_BUSY
    from rocketlab.broker.dledger_broker import DLedgerBrokerConfig

    assert DLedgerBrokerConfig().rocketmq_version == "4.9.5"
    with pytest.raises(ConfigError, match="rocketmq_version='5.x' is not one of 4.9.5, 5.3.3"):
        DLedgerBrokerConfig(rocketmq_version="5.x")


@pytest.mark.parametrize("self_id, broker_id", [("n0", 1), ("n1", 2), ("b12", 13)])
def test_the_slave_broker_id_is_the_digits_of_self_id_plus_one(self_id, broker_id):
    assert broker_id_of(self_id) == broker_id


@pytest.mark.parametrize("self_id", ["node", "n", "0n", "n-1", "nx1", ""])
def test_a_self_id_without_digits_is_a_config_error(self_id):
    with pytest.raises(ConfigError, match="dLegerSelfId"):
        broker_id_of(self_id)


def test_the_codec_serves_dledger_broker_and_group_check_codes_and_refuses_the_rest():
    codec = dledger_broker_codec()
    for msg, code in ((VoteRequest(group="g", remote_id="n1", leader_id="n0", term=3, ledger_end_index=4,
                                   ledger_end_term=2), 51001),
                      (SendMessageRequest("T", b"\x00\xff", 1, tags="A"), 10),
                      (DLedgerGroupCheckRequest("g", "n0,n1", "n0"), 60101)):
        data = codec.encode(msg)
        assert parse_frame(data).code == code and codec.decode(data) == msg
    with pytest.raises(UnsupportedRequest, match="request type 1002 not supported"):
        codec.decode(encode_command(RemotingCommand(1002)))
    with pytest.raises(CodecError, match="ext field group is missing"):
        codec.decode(encode_command(RemotingCommand(60101)))


# ---------------------------------------------------------------------- role change handler
class _Server:
    def __init__(self) -> None:
        self.is_leader, self.ledger_end_index, self.committed_index = True, 5, 3


class _Store:
    def __init__(self) -> None:
        self.behind, self.recovered = 0, 0

    def dispatch_behind_bytes(self) -> int:
        return self.behind

    def recover_topic_queue_table(self) -> None:
        self.recovered += 1


class _Broker:
    def __init__(self) -> None:
        self.broker_role, self.server, self.store, self.calls = "SLAVE", _Server(), _Store(), []

    def change_to_slave(self, now_ms, out):
        self.broker_role = "SLAVE"
        self.calls.append(("slave", now_ms))

    def change_to_master(self, role, now_ms, out):
        self.broker_role = role
        self.calls.append((role, now_ms))


def test_leader_waits_polling_every_100_ms_until_committed_and_dispatched():
    broker = _Broker()
    handler = DLedgerRoleChangeHandler(broker)
    handler.handle(2, Role.LEADER)  # from inside the elector: only queued
    assert broker.calls == [] and handler.tasks
    out = OutputBuilder()
    handler.run(1000, out)
    assert broker.calls == [] and handler.next_deadline_ms() == 1100  # end 5 > committed 3
    broker.server.committed_index = 5
    broker.store.behind = 120
    handler.run(1050, out)  # not due yet
    handler.run(1100, out)
    assert broker.calls == [] and handler.next_deadline_ms() == 1200  # dispatch still behind
    broker.store.behind = 0
    handler.run(1200, out)
    assert broker.calls == [("SYNC_MASTER", 1200)] and broker.store.recovered == 1
    assert handler.next_deadline_ms() is None


def test_leader_wait_aborts_when_leadership_is_lost_and_later_tasks_wait_behind_it():
    broker = _Broker()
    handler = DLedgerRoleChangeHandler(broker)
    handler.handle(2, Role.LEADER)
    handler.run(0, OutputBuilder())
    handler.handle(3, Role.FOLLOWER)
    handler.run(50, OutputBuilder())
    assert broker.calls == []  # the FOLLOWER task waits behind the LEADER task
    broker.server.is_leader = False
    handler.run(100, OutputBuilder())
    assert broker.calls == [("slave", 100)]
    assert [h[2] for h in handler.handled] == ["aborted: no longer leader", "SLAVE"]


def test_an_empty_log_makes_a_leader_master_at_once_and_a_candidate_slave_only_if_it_was_not():
    broker = _Broker()
    broker.server.ledger_end_index = -1
    handler = DLedgerRoleChangeHandler(broker)
    handler.handle(1, Role.CANDIDATE)
    handler.handle(1, Role.LEADER)
    handler.run(7, OutputBuilder())
    assert broker.calls == [("SYNC_MASTER", 7)]
    handler.handle(2, Role.CANDIDATE)
    handler.run(8, OutputBuilder())
    assert broker.calls[-1] == ("slave", 8)
