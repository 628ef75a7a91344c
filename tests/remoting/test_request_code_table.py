"""The request-code table of docs/applications.md against the codecs: every code the kit's brokers (all three
kinds) or its name server serve has a row saying how (as Java, or a named difference), and every row that says
"not served" is a code they answer REQUEST_CODE_NOT_SUPPORTED. A code served without a row, or a row that
claims a code the kit does not serve, fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocketlab.broker.dledger_broker import dledger_broker_codec
from rocketlab.broker.protocol import auto_switch_broker_codec, broker_codec
from rocketlab.namesrv.protocol import namesrv_codec
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import RemotingCommand, encode_command
from rocketlab.remoting.family import UnsupportedRequest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "applications.md"
BROKER_CODECS = {"classic": broker_codec(), "dledger": dledger_broker_codec(), "controller mode": auto_switch_broker_codec()}
CLIENT_FAMILIES = ("broker", "broker-send-back", "broker-client")
"""The families of RocketMQ's own request codes a broker serves (the others are DLedger's, the controller's and
the kit's group check, each on a page of its own)."""
NOTIFY_CONSUMER_IDS_CHANGED = 40  # the broker sends it, and answers it REQUEST_CODE_NOT_SUPPORTED as Java does


def rows() -> list[tuple[set[int], str, str]]:
    """(codes, direction, kit) of each row of the table under "### Request codes"."""
    section = PAGE.read_text().split("### Request codes", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"\d+( / \d+)*", cells[0]):
            out.append(({int(c) for c in cells[0].split(" / ")}, cells[2], cells[3]))
    return out


def served(codec: RemotingCodec, families: tuple[str, ...]) -> set[int]:
    by_name = {f.name: f for f in ALL_FAMILIES}
    return set().union(*(by_name[n].codes for n in codec.serves if n in families))


def table(to: str) -> tuple[set[int], set[int]]:
    """(codes the table says are served, codes it says are not) for requests sent to ``to``."""
    yes, no = set(), set()
    for codes, direction, kit in rows():
        if re.search(rf"[→↔] (master )?{to}\b", direction):
            (no if kit.startswith("not served") else yes).update(codes)
    return yes, no


def unsupported(codec: RemotingCodec, code: int) -> bool:
    try:
        codec.decode(encode_command(RemotingCommand(code, opaque=1, ext_fields={})))
    except UnsupportedRequest:
        return True
    return False


def test_the_table_is_read_whole():
    codes = [c for r in rows() for c in r[0]]
    assert len(codes) == len(set(codes)) and {10, 11, 40, 103, 105, 320, 13, 100} <= set(codes)


@pytest.mark.parametrize("kind", BROKER_CODECS)
def test_every_code_a_broker_serves_has_its_row_and_the_rows_not_served_are_unsupported(kind):
    codec = BROKER_CODECS[kind]
    yes, no = table("broker")
    assert served(codec, CLIENT_FAMILIES) == yes
    assert no and all(unsupported(codec, code) for code in no)
    assert unsupported(codec, 105) and unsupported(codec, NOTIFY_CONSUMER_IDS_CHANGED)


def test_every_code_the_name_server_serves_has_its_row_and_the_rows_not_served_are_unsupported():
    codec = namesrv_codec()
    yes, no = table("name server")
    assert served(codec, ("namesrv",)) == yes
    assert no and all(unsupported(codec, code) for code in no | {NOTIFY_CONSUMER_IDS_CHANGED, 10})


def test_the_broker_sends_notify_consumer_ids_changed_and_registers_with_the_name_server():
    sent = {(frozenset(codes), kit.split(" ")[0]) for codes, _, kit in rows()}
    assert (frozenset({NOTIFY_CONSUMER_IDS_CHANGED}), "sent") in sent
    assert (frozenset({103}), "as") in sent  # REGISTER_BROKER: as Java, differences named
