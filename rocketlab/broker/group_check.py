"""The DLedger broker group check (a kit addition) on RocketMQ remoting.

Before its DLedger member takes part, a broker asks its peers for their group name and member list
(:class:`~rocketlab.broker.dledger_broker.GroupCheck`). Kit request code 60101 (RocketMQ's and DLedger's
codes stay below 60000); the fields travel as ext fields, as a RocketMQ header's do, and the answer is
a response of code 0 with the responder's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.errors import CodecError
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts

GROUP_CHECK_CODE = 60101


@dataclass(frozen=True, slots=True)
class DLedgerGroupCheckRequest:
    """Kit addition: "which group and members do you have?" (sent by a broker before it joins)."""

    group: str
    members: str
    sender: str


@dataclass(frozen=True, slots=True)
class DLedgerGroupCheckResponse:
    group: str
    members: str
    responder: str


def _get(cmd: RemotingCommand, name: str) -> str:
    value = cmd.field(name)
    if value is None:
        raise CodecError(f"group check (code {cmd.code}): ext field {name} is missing")
    return value


class GroupCheckFamily(Family):
    name = "group-check"
    requests = {DLedgerGroupCheckRequest: GROUP_CHECK_CODE}
    responses = frozenset({DLedgerGroupCheckResponse})
    codes = frozenset({GROUP_CHECK_CODE})

    def encode(self, msg: Any) -> Parts:
        if type(msg) is DLedgerGroupCheckRequest:
            return Parts(GROUP_CHECK_CODE, None, {"group": msg.group, "members": msg.members, "sender": msg.sender},
                         None)
        return Parts(0, None, {"group": msg.group, "members": msg.members, "responder": msg.responder}, None)

    def decode_request(self, cmd: RemotingCommand) -> Any:
        return DLedgerGroupCheckRequest(_get(cmd, "group"), _get(cmd, "members"), _get(cmd, "sender"))

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        if cmd.code != 0:
            raise CodecError(f"group check answered with code {cmd.code} ({cmd.remark})")
        return DLedgerGroupCheckResponse(_get(cmd, "group"), _get(cmd, "members"), _get(cmd, "responder"))

    def sender(self, msg: Any) -> str | None:
        return msg.sender if type(msg) is DLedgerGroupCheckRequest else None


GROUP_CHECK_FAMILY = GroupCheckFamily()
