"""MemberState: quorum rule, nextTerm, role transitions, the durable currterm file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.dledger.config import DLedgerConfig, members_peers
from rocketlab.dledger.member_state import MemberState, Role
from rocketlab.dledger.protocol import DLedgerException, DLedgerResponseCode
from rocketlab.errors import StoreError


@pytest.mark.parametrize("members, quorum", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)])
def test_is_quorum_is_half_plus_one(members, quorum):
    ms = MemberState(DLedgerConfig(peers=members_peers([f"n{i}" for i in range(members)])))
    assert ms.is_quorum(quorum) and not ms.is_quorum(quorum - 1)


def test_initial_state(member_state: MemberState):
    ms = member_state
    assert (ms.role, ms.curr_term, ms.curr_vote_for, ms.leader_id) == (Role.CANDIDATE, 0, None, None)
    assert (ms.ledger_end_index, ms.ledger_end_term, ms.known_max_term_in_group) == (-1, -1, -1)
    assert ms.term_to_take_leadership == -1 and ms.other_peer_ids() == ["n1", "n2"]


def test_next_term_increments_clears_vote_and_persists(member_state: MemberState, tmp_path: Path):
    ms = member_state
    ms.set_curr_vote_for("n1")
    assert ms.next_term() == 1 and ms.curr_vote_for is None
    assert (tmp_path / "currterm").read_text() == "currTerm=1\nvoteLeader=\n"
    assert MemberState(ms.config, tmp_path).curr_term == 1


def test_next_term_jumps_to_known_max_term(member_state: MemberState):
    ms = member_state
    ms.change_to_candidate(7)
    assert ms.curr_term == 0 and ms.known_max_term_in_group == 7
    assert ms.next_term() == 7
    assert ms.next_term() == 8


def test_next_term_requires_candidate(member_state: MemberState):
    ms = member_state
    ms.change_to_leader(0)
    with pytest.raises(DLedgerException) as info:
        ms.next_term()
    assert info.value.code is DLedgerResponseCode.ILLEGAL_MEMBER_STATE


def test_change_to_candidate_leaves_term_and_vote(member_state: MemberState):
    ms = member_state
    ms.set_curr_vote_for("n2")
    ms.change_to_follower(0, "n2")
    ms.transferee = "n1"
    ms.change_to_candidate(3)
    assert (ms.role, ms.curr_term, ms.curr_vote_for, ms.leader_id, ms.transferee) == (Role.CANDIDATE, 0, "n2",
                                                                                        None, None)
    with pytest.raises(DLedgerException):
        ms.change_to_candidate(-1)


def test_leader_and_follower_need_the_current_term(member_state: MemberState):
    ms = member_state
    ms.peers_live_table["n1"] = True
    with pytest.raises(DLedgerException):
        ms.change_to_leader(1)
    ms.change_to_leader(0)
    assert (ms.role, ms.leader_id, ms.peers_live_table) == (Role.LEADER, "n0", {})
    with pytest.raises(DLedgerException):
        ms.change_to_follower(5, "n1")
    ms.change_to_follower(0, "n1")
    assert (ms.role, ms.leader_id) == (Role.FOLLOWER, "n1")


def test_transferee_only_while_leader(member_state: MemberState):
    with pytest.raises(DLedgerException):
        member_state.set_transferee("n1")
    member_state.change_to_leader(0)
    member_state.set_transferee("n1")
    assert member_state.transferee == "n1"


def test_vote_is_persisted_with_tmp_and_bak(member_state: MemberState, tmp_path: Path):
    member_state.set_curr_vote_for("n1")
    member_state.set_curr_vote_for("n2")
    assert (tmp_path / "currterm").read_text() == "currTerm=0\nvoteLeader=n2\n"
    assert (tmp_path / "currterm.bak").read_text() == "currTerm=0\nvoteLeader=n1\n"
    assert not (tmp_path / "currterm.tmp").exists()
    reloaded = MemberState(member_state.config, tmp_path)
    assert (reloaded.curr_term, reloaded.curr_vote_for, reloaded.role) == (0, "n2", Role.CANDIDATE)


@pytest.mark.parametrize("text, message", [
    ("currTerm=abc\n", "not an integer"), ("currTerm=-3\n", "negative"), ("\xff", "unreadable"),
])
def test_malformed_term_file_is_a_clear_error(tmp_path: Path, config: DLedgerConfig, text, message):
    (tmp_path / "currterm").write_bytes(text.encode("latin-1"))
    with pytest.raises(StoreError, match=message):
        MemberState(config, tmp_path)


def test_memory_member_state_persists_nothing(config: DLedgerConfig):
    ms = MemberState(config, None)
    ms.set_curr_vote_for("n1")
    assert ms.next_term() == 1 and ms.term_file is None
