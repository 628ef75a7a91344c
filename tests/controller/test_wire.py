"""Controller RPCs on RocketMQ remoting (5.3.3 codes, header classes, fastjson bodies): every message
round-trips (an answer as the answer to its request), bad commands are refused with the reason."""

from __future__ import annotations

import pytest

from rocketlab.controller import protocol as p
from rocketlab.controller.wire import (
    AlterSyncStateSetRequest,
    ControllerMetadata,
    ControllerNodeCodec,
    ControllerResponse,
    GetMetadataInfoRequest,
    GetSyncStateDataRequest,
    NotifyBrokerRoleChanged,
)
from rocketlab.dledger.protocol import HeartBeatRequest
from rocketlab.errors import CodecError
from rocketlab.remoting.command import RemotingCommand, encode_command, parse_frame

CODEC = ControllerNodeCodec()
MESSAGES = [
    p.ElectMasterRequestHeader.of_admin_trigger("c", "b", 2),
    p.ElectMasterRequestHeader.of_controller_trigger("b"),
    AlterSyncStateSetRequest(p.AlterSyncStateSetRequestHeader("b", 1, 3), p.SyncStateSet(frozenset({1, 2}), 4)),
    p.ApplyBrokerIdRequestHeader("c", "b", 1, "10.0.0.1:10911;1700000000000"),
    p.RegisterBrokerToControllerRequestHeader("c", "b", 1, "10.0.0.1:10911"),
    p.GetReplicaInfoRequestHeader("b"), p.GetNextBrokerIdRequestHeader("c", "b"),
    p.CleanControllerBrokerDataRequestHeader(None, "b", "1;2", True),
    p.BrokerHeartbeatRequestHeader("c", "10.0.0.1:10911", "b", 1, 2, 4096, 4000, 10_000, 1),
    GetSyncStateDataRequest(("a", "b")), GetMetadataInfoRequest(),
    ControllerResponse(0, None, p.ElectMasterResponseHeader(2, "x", 3, 4), p.ElectMasterResponseBody(
        frozenset({2}), p.BrokerMemberGroup("c", "b", {1: "x", 2: "y"}))),
    ControllerResponse(2011, "still there", p.GetReplicaInfoResponseHeader(1, "x", 1), p.SyncStateSet(frozenset({1}), 1)),
    ControllerResponse(0, None, None, {"b": p.ReplicasInfo(1, "x", 1, 2, (p.ReplicaIdentity("b", 1, "x", True),), ())}),
    ControllerResponse(0, None, ControllerMetadata("controller", "c0", "c0", True, "c0-h:1")),
    NotifyBrokerRoleChanged("x", 2, 3, 1, frozenset({1, 3})),
    HeartBeatRequest(group="controller", remote_id="c1", local_id="c0", leader_id="c0", term=3),
]


ANSWERS = {0: p.ElectMasterRequestHeader, 1: p.GetReplicaInfoRequestHeader, 2: GetSyncStateDataRequest,
           3: GetMetadataInfoRequest}
"""Which request each ControllerResponse above answers (by its place among the responses)."""


def _answers(msg):
    responses = [m for m in MESSAGES if type(m) is ControllerResponse]
    return ANSWERS[responses.index(msg)] if type(msg) is ControllerResponse else None


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip(msg):
    data = CODEC.encode(msg)
    assert CODEC.decode(data, _answers(msg)) == msg
    size = CODEC.wire_size(msg)
    assert size is None or size == len(data)  # DLedger messages are sized, RPCs always serialised


def test_requests_carry_their_5_3_3_codes_and_notify_is_oneway():
    codes = {type(m).__name__: parse_frame(CODEC.encode(m)).code for m in MESSAGES if type(m) is not ControllerResponse}
    assert codes["BrokerHeartbeatRequestHeader"] == 904 and codes["AlterSyncStateSetRequest"] == 1001
    assert codes["ElectMasterRequestHeader"] == 1002 and codes["GetMetadataInfoRequest"] == 1005
    assert codes["ApplyBrokerIdRequestHeader"] == 1013 and codes["NotifyBrokerRoleChanged"] == 1008
    assert parse_frame(CODEC.encode(NotifyBrokerRoleChanged("x", 1, 1, 1, frozenset()))).is_oneway


def test_bodies_are_fastjson_beans():
    alter = parse_frame(CODEC.encode(MESSAGES[2]))
    assert alter.body == b'{"syncStateSet":[1,2],"syncStateSetEpoch":4}'
    assert alter.ext_fields == {"masterBrokerId": "1", "brokerName": "b", "masterEpoch": "3"}
    elect = parse_frame(CODEC.encode(MESSAGES[11]))
    assert elect.body == (b'{"brokerMemberGroup":{"brokerAddrs":{"1":"x","2":"y"},"brokerName":"b","cluster":"c"},'
                          b'"syncStateSet":[2]}')


def _cmd(code: int, ext=None, body: bytes | None = None, flag: int = 0) -> bytes:
    return encode_command(RemotingCommand(code, flag=flag, ext_fields=ext, body=body))


@pytest.mark.parametrize(("data", "answers", "problem"), [
    (_cmd(1002, {"brokerName": "b"}), None, "the custom field <clusterName> is null"),
    (_cmd(1002, {"clusterName": "c", "brokerName": "b", "brokerId": "x", "designateElect": "false"}), None,
     "brokerId: 'x' is not a valid Long"),
    (_cmd(904, {"clusterName": "c", "brokerName": "b"}), None, "<brokerAddr> is null"),
    (_cmd(1001, {"brokerName": "b", "masterBrokerId": "1", "masterEpoch": "1"}), None, "SyncStateSet: the command has no body"),
    (_cmd(1001, {"brokerName": "b"}, b"{oops"), None, "SyncStateSet body is not JSON"),
    (_cmd(1001, {"brokerName": "b"}, b'{"syncStateSet":{}}'), None, "must be a JSON array"),
    (_cmd(1006, None, b'{"a":1}'), None, "JSON list of broker names"),
    (_cmd(0, None, b'{"replicasInfoTable":[]}', flag=1), GetSyncStateDataRequest, "must be a JSON object"),
    (_cmd(0, None, b"[", flag=1), p.GetReplicaInfoRequestHeader, "SyncStateSet body is not JSON"),
])
def test_bad_commands_are_refused(data, answers, problem):
    with pytest.raises(CodecError, match=problem):
        CODEC.decode(data, answers)


def test_lenient_where_fastjson_is_a_java_map_with_bare_integer_keys():
    raw = _cmd(0, None, b'{"brokerMemberGroup":{"brokerAddrs":{1:"x"},"brokerName":"b","cluster":"c"},'
                        b'"syncStateSet":[1]}', flag=1)
    answer = CODEC.decode(raw, p.ElectMasterRequestHeader)
    assert answer.body.broker_member_group.broker_addrs == {1: "x"}


def test_only_known_messages_are_encoded():
    with pytest.raises(CodecError, match="no message family has it"):
        CODEC.encode(object())
