"""The controller node's codec: every RPC message round-trips; bad bytes are refused with the reason."""

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


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip(msg):
    data = CODEC.encode(msg)
    assert CODEC.decode(data) == msg
    size = CODEC.wire_size(msg)
    assert size is None or size == len(data)  # DLedger messages are sized, RPCs always serialised


@pytest.mark.parametrize(("data", "problem"), [
    (b"\x07{}", "unknown message family tag"),
    (b"\x02{}", "message has no .type."),
    (b"\x03{oops", "not JSON"),
    (b'\x03{"@":"Nope"}', "unknown controller message type 'Nope'"),
    (b'\x03{"@":"GetReplicaInfoRequestHeader","broker_name":"b","x":1}', r"no field\(s\) \['x'\]"),
    (b'\x03{"@":"GetNextBrokerIdRequestHeader","cluster_name":"c"}', "bad GetNextBrokerIdRequestHeader"),
    (b'\x03{"@":"SyncStateSet","sync_state_set":{"@set":[1]},"sync_state_set_epoch":1}', "not a message of its own"),
    (b'\x03{"@":"NotifyBrokerRoleChanged","master_address":"x","master_epoch":1,"sync_state_set_epoch":1,'
     b'"master_broker_id":1,"sync_state_set":{"@set":1}}', "a set must be"),
])
def test_bad_bytes_are_refused(data, problem):
    with pytest.raises(CodecError, match=problem):
        CODEC.decode(data)


def test_only_known_messages_are_encoded():
    with pytest.raises(CodecError, match="not a controller or DLedger message"):
        CODEC.encode(object())
