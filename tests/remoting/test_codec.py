"""RemotingCodec is given the families of its node kind: it encodes only their messages and serves only
the families named in ``serves``."""

from __future__ import annotations

import pytest

from rocketlab.broker.client_messages import GetMaxOffsetRequest
from rocketlab.broker.dledger_broker import dledger_broker_codec
from rocketlab.broker.group_check import DLedgerGroupCheckRequest
from rocketlab.broker.protocol import (
    BROKER_FAMILY,
    SendMessageRequest,
    auto_switch_broker_codec,
    broker_codec,
)
from rocketlab.broker.send_protocol import ConsumerSendMsgBackRequest
from rocketlab.controller import protocol as p
from rocketlab.controller.wire import NOTIFY_FAMILY, ControllerNodeCodec, NotifyBrokerRoleChanged
from rocketlab.dledger.codec import DLEDGER_FAMILY, DLedgerCodec
from rocketlab.dledger.protocol import HeartBeatRequest
from rocketlab.errors import CodecError
from rocketlab.namesrv.protocol import GetRouteInfoRequest, namesrv_codec
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.pingpong import Ping, PingPongCodec
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand, parse_frame
from rocketlab.remoting.family import Family, UnsupportedRequest

ONE_OF_EACH = {
    "dledger": HeartBeatRequest(group="g", remote_id="n1", leader_id="n0", term=2),
    "broker": SendMessageRequest("T", b"x", 0),
    "broker-send-back": ConsumerSendMsgBackRequest(120, "G", 0),
    "broker-client": GetMaxOffsetRequest("T", 1),
    "group-check": DLedgerGroupCheckRequest("g", "n0,n1", "n0"),
    "controller": p.ElectMasterRequestHeader.of_admin_trigger("c", "b", 2),
    "controller-notify": NotifyBrokerRoleChanged("n0:10911", 2, 2, 0, frozenset({0})),
    "pingpong": Ping(1, 5),
    "namesrv": GetRouteInfoRequest("T"),
}


def test_all_families_cover_every_family_once_and_a_codec_of_them_all_serves_every_request():
    assert [f.name for f in ALL_FAMILIES] == list(ONE_OF_EACH)
    codec = RemotingCodec(ALL_FAMILIES)
    assert codec.serves == tuple(ONE_OF_EACH)
    for msg in ONE_OF_EACH.values():
        assert codec.decode(codec.encode(msg)) == msg


@pytest.mark.parametrize(("codec", "families"), [
    (DLedgerCodec(), {"dledger"}),
    (PingPongCodec(), {"pingpong"}),
    (broker_codec(), {"broker", "broker-send-back", "broker-client", "namesrv"}),
    (dledger_broker_codec(), {"dledger", "broker", "broker-send-back", "broker-client", "group-check", "namesrv"}),
    (auto_switch_broker_codec(), {"broker", "broker-send-back", "broker-client", "controller", "controller-notify", "namesrv"}),
    (ControllerNodeCodec(), {"controller", "controller-notify", "dledger"}),
    (namesrv_codec(), {"namesrv"}),
], ids=["dledger", "pingpong", "broker", "dledger-broker", "auto-switch-broker", "controller", "namesrv"])
def test_a_node_kind_encodes_its_own_families_and_no_other(codec, families):
    for name, msg in ONE_OF_EACH.items():
        if name in families:
            assert parse_frame(codec.encode(msg)).code == parse_frame(RemotingCodec(ALL_FAMILIES).encode(msg)).code
        else:
            with pytest.raises(CodecError, match=f"cannot encode {type(msg).__name__}: no message family has it"):
                codec.encode(msg)


def test_a_request_of_a_family_known_but_not_served_is_unsupported():
    everything = RemotingCodec(ALL_FAMILIES)
    notify = everything.encode(ONE_OF_EACH["controller-notify"])
    elect = everything.encode(ONE_OF_EACH["controller"])
    assert auto_switch_broker_codec().decode(notify) == ONE_OF_EACH["controller-notify"]
    with pytest.raises(UnsupportedRequest, match="request type 1002 not supported"):
        auto_switch_broker_codec().decode(elect)
    controller = ControllerNodeCodec(serves=("controller", "dledger"))
    assert controller.decode(elect) == ONE_OF_EACH["controller"]
    with pytest.raises(UnsupportedRequest, match="request type 1008 not supported"):
        controller.decode(notify)
    with pytest.raises(UnsupportedRequest, match="request type 10 not supported"):
        DLedgerCodec().decode(everything.encode(ONE_OF_EACH["broker"]))
    for broker in (broker_codec(), dledger_broker_codec(), auto_switch_broker_codec()):  # they send it, not serve it
        with pytest.raises(UnsupportedRequest, match="request type 105 not supported"):
            broker.decode(everything.encode(ONE_OF_EACH["namesrv"]))


def test_serves_names_only_families_the_codec_was_given():
    assert RemotingCodec((DLEDGER_FAMILY, BROKER_FAMILY), serves=("broker",)).serves == ("broker",)
    with pytest.raises(CodecError, match=r"no message family 'controller' \(known: dledger, broker\)"):
        RemotingCodec((DLEDGER_FAMILY, BROKER_FAMILY), serves=("controller",))


def test_a_family_must_encode_and_decode_requests_and_a_oneway_family_answers_no_response():
    class Half(Family):
        def encode(self, msg):
            return None

    with pytest.raises(TypeError, match="decode_request"):
        Half()
    with pytest.raises(CodecError, match="oneway"):
        NOTIFY_FAMILY.decode_response(RemotingCommand(code=0), NotifyBrokerRoleChanged)
