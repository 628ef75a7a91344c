"""The eleven realistic wrong solutions (``tests/grading/wrong/``): each is shown wrong against the kit's
reference by a direct check on one input, and the grader gives it less than full marks, failing the
graded test(s) written for its class of input. Lab 07's two (a Spark query) are marked ``spark``/``slow``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rocketlab.controller.elect_policy import elect_master
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo
from rocketlab.dledger.elector_decisions import VoteTally, VoteView, decide_vote, parse_vote_result
from rocketlab.dledger.entry_dispatcher import decide_compare
from rocketlab.dledger.entry_pusher import quorum_index
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteRequest, VoteResult
from rocketlab.errors import RemoteProtocolError
from rocketlab.grading import LABS, grade
from rocketlab.ha.wire import NEED_DATA, encode_transfer
from rocketlab.store.message import Message, MessageSysFlag
from rocketlab.store.message_codec import decode_message, encode_record
from tests.grading.modules import load
from tests.grading.wrong import WRONG, Wrong


# ---------------------------------------------------------------------- direct checks, one per wrong solution
def even_quorum_votes(m: ModuleType) -> None:
    tally = VoteTally(known_max_term_in_group=5, all_num=4, valid_num=4, accepted_num=2)
    assert m.parse_vote_result(tally, 5, 4).result is ParseResult.PASSED  # 2 of 4 votes: leader
    assert parse_vote_result(tally, 5, 4).result is not ParseResult.PASSED  # two such candidates: two leaders


def even_quorum_index(m: ModuleType) -> None:
    marks = {"n0": 9, "n1": 9, "n2": 3, "n3": 3}  # the leader and one follower hold 9
    assert m.quorum_index(dict(marks), 3, 3, False, lambda i: 3) == 9  # committed on 2 of 4
    assert quorum_index(dict(marks), 3, 3, False, lambda i: 3) == 3


def vote_equal_ledger_term(m: ModuleType) -> None:
    view = VoteView("n0", frozenset({"n0", "n1", "n2"}), 3, None, None, 4, 3)
    request = VoteRequest(group="g", remote_id="n0", leader_id="n1", term=3, ledger_end_index=4, ledger_end_term=3)
    assert m.handle_vote(view, request, False).result is VoteResult.REJECT_TERM_SMALL_THAN_LEDGER
    assert decide_vote(view, request, False).result is VoteResult.ACCEPT


def props_length_in_chars(m: ModuleType) -> None:
    msg = Message("TopicA", b"x", properties={"KEYS": "ключ"})
    mine = m.encode_record(msg, 1, ("127.0.0.1", 10911))
    assert mine != encode_record(msg, 1, ("127.0.0.1", 10911))
    with pytest.raises(Exception):  # noqa: B017 - the record cannot be read back as it was put
        assert decode_message(mine).properties == msg.properties


def v6_flags_kept(m: ModuleType) -> None:
    msg = Message("TopicA", b"x", born_host=("10.1.2.3", 4), sys_flag=MessageSysFlag.BORNHOST_V6_FLAG)
    mine, want = m.encode_record(msg, 1, ("127.0.0.1", 10911)), encode_record(msg, 1, ("127.0.0.1", 10911))
    assert mine != want and len(mine) == len(want)  # a v4 host flagged v6: a reader takes 20 bytes for 8


def header_checked_late(m: ModuleType) -> None:
    parser = m.TransferParser(1024)
    parser.receive_data(struct.pack(">qi", 0, 2**31 - 1))
    assert parser.next_event() is NEED_DATA  # waits for 2 GiB instead of closing the connection
    reference = __import__("rocketlab.ha.wire", fromlist=["TransferParser"]).TransferParser(1024)
    reference.receive_data(struct.pack(">qi", 0, 2**31 - 1))
    with pytest.raises(RemoteProtocolError):
        reference.next_event()


def shared_buffer(m: ModuleType) -> None:
    a, b = m.TransferParser(), m.TransferParser()
    a.receive_data(encode_transfer(0, b"abc")[:6])
    b.receive_data(encode_transfer(100, b"xyz"))
    event = b.next_event()
    assert event is NEED_DATA or (event.phy_offset, bytes(event.body)) != (100, b"xyz")


def touching_logs_disjoint(m: ModuleType) -> None:
    args = (-1, DLedgerResponseCode.INCONSISTENT_STATE, 0, 0, 0, 0)  # both logs hold index 0 only
    assert m.decide_compare(*args).rule.startswith("no-intersection")
    assert not decide_compare(*args).rule.startswith("no-intersection")


def set_order_ids(m: ModuleType) -> None:
    def live(b: int) -> BrokerLiveInfo:
        return BrokerLiveInfo("broker-a", f"127.0.0.1:{b}", b, 0, 10_000, None, 1, 100, 1)
    args = ({1, 1000}, None, None, None, lambda b: True, live)  # a full tie: the smallest id wins in Java
    assert m.elect_master(*args) == 1000 and elect_master(*args) == 1


def _lab07(m: ModuleType, wrong: Wrong) -> None:
    import tempfile

    from rocketlab.analysis.lost import acked_but_lost
    from rocketlab.grading.suites.lab07 import fault_order_frames

    with tempfile.TemporaryDirectory() as root:
        events, records = fault_order_frames(Path(root))
        mine = [tuple(r) for r in m.acked_but_lost(events, records).collect()]
        want = [tuple(r) for r in acked_but_lost(events, records).collect()]
    assert mine != want, wrong.name


DIRECT: dict[str, Callable[[ModuleType], Any]] = {
    "even_quorum_votes": even_quorum_votes, "even_quorum_index": even_quorum_index,
    "vote_equal_ledger_term": vote_equal_ledger_term, "props_length_in_chars": props_length_in_chars,
    "v6_flags_kept": v6_flags_kept, "header_checked_late": header_checked_late, "shared_buffer": shared_buffer,
    "touching_logs_disjoint": touching_logs_disjoint, "set_order_ids": set_order_ids,
    "same_instant_crash_wins": lambda m: _lab07(m, WRONG[7]), "partition_ends_crash": lambda m: _lab07(m, WRONG[8]),
}


def _marks(w: Wrong) -> list[Any]:
    return [pytest.mark.spark, pytest.mark.slow] if LABS[w.lab].spark else []


CASES = [pytest.param(w, id=w.name, marks=_marks(w)) for w in WRONG]


def test_eleven_wrong_solutions_from_the_issues_classes():
    assert len(WRONG) == 11 and set(DIRECT) == {w.name for w in WRONG}
    assert len({w.kind for w in WRONG}) == 10  # the issue's nine classes, its record class split in two
    from rocketlab.grading.registry import TESTS, load_builtin

    for lab in LABS:
        load_builtin(lab)
    names = {t.name.split("/", 1)[1] for t in TESTS.values()}
    assert NEW_TESTS <= names and all(set(w.killers) <= names for w in WRONG)


@pytest.mark.parametrize("wrong", CASES)
def test_the_wrong_solution_differs_from_the_reference(wrong, tmp_path):
    DIRECT[wrong.name](load(wrong.write(tmp_path), f"wrong_direct_{wrong.name}"))


@pytest.mark.parametrize("wrong", CASES)
def test_the_grader_fails_the_wrong_solution_on_its_classes_tests(wrong, tmp_path):
    names = [f"{wrong.exercise}/{k}" for k in wrong.killers]
    report = grade(wrong.lab, wrong.write(tmp_path), only=names)
    failed = [t.name for t in report.tests if not t.passed]
    assert report.score < report.max_score and failed, f"{wrong.name} got full marks on {names}"
    new = f"{wrong.exercise}/{wrong.killers[-1]}"  # the test written for this class
    assert new in failed, (new, failed, [t.message for t in report.tests])
    print(f"{wrong.name}: {report.score:g}/{report.max_score:g}; failed {failed}")


NEW_TESTS = {"header_alone", "two_connections", "any_transfer", "any_message_record", "any_position", "any_unit",
             "any_slot", "term_boundaries", "any_tally", "even_groups", "any_marks", "any_logs",
             "figure8_without_noop", "any_offset", "any_read", "any_epoch_files_table", "any_ids", "fault_orders"}


@pytest.mark.parametrize("wrong", CASES)
def test_the_tables_before_this_work_gave_it_full_marks(wrong, tmp_path):
    """Why these eleven matter: the decision tables the grader had before gave each one full marks."""
    from rocketlab.grading.registry import TESTS, load_builtin

    load_builtin(wrong.lab)
    old = [t.name for t in TESTS.values() if t.exercise == wrong.exercise and t.kind == "unit"
           and t.name.split("/", 1)[1] not in NEW_TESTS]
    report = grade(wrong.lab, wrong.write(tmp_path), only=old)
    assert old and report.all_passed, [(t.name, t.message) for t in report.tests if not t.passed]
