"""The follower's EntryHandler, driven directly through DLedgerServer.on_request (digest 5.4)."""

from __future__ import annotations

import random

import pytest

from rocketlab.core import OutputBuilder, Reply
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.entry_handler import QUEUE_CAPACITY, PendingPush
from rocketlab.dledger.protocol import DLedgerResponseCode, PushEntryRequest, PushEntryResponse, PushType
from rocketlab.dledger.server import DLedgerServer

from .helpers import make_config
from .test_store import leader_log

Code = DLedgerResponseCode


class Follower:
    """n1 as a forced follower of n0 in term 1 (memory store), fed pushes by hand."""

    def __init__(self, profile: str = "raft", **overrides) -> None:
        config = make_config(self_id="n1", enable_leader_elector=False, profile=profile, store_type="MEMORY",
                             **overrides)
        self.core = DLedgerServer(config, None, random.Random(1))
        self.core.on_start(0)
        ms, out = self.core.member_state, OutputBuilder()
        ms.change_to_candidate(1)
        ms.next_term()
        self.core.elector.change_role_to_follower(1, "n0", 0, out)
        self.now = 0
        self.rid = 0
        self.replies: dict[int, PushEntryResponse] = {}

    def push(self, type_: PushType, entry: DLedgerEntry | None = None, batch=(), commit: int = -1, term: int = 1,
             leader: str = "n0", at: int | None = None) -> int:
        self.rid += 1
        self.now = self.now if at is None else at
        msg = PushEntryRequest(group="default", remote_id="n1", local_id=leader, leader_id=leader, term=term,
                               type=type_, entry=entry, batch_entry=tuple(batch), commit_index=commit)
        self._collect(self.core.on_request("n0", self.rid, msg, self.now))
        return self.rid

    def tick(self, at: int) -> None:
        self.now = at
        self._collect(self.core.on_tick(at))

    def _collect(self, out) -> None:
        for action in out.actions:
            if isinstance(action, Reply):
                assert action.request_id not in self.replies, "a push is answered once"
                self.replies[action.request_id] = action.msg

    def code(self, rid: int) -> Code | None:
        return self.replies[rid].code if rid in self.replies else None


LOG = leader_log(10)


def test_out_of_order_appends_are_applied_in_index_order():
    f = Follower()
    r2, r1 = f.push(PushType.APPEND, LOG[2]), f.push(PushType.APPEND, LOG[1])
    assert f.replies == {} and f.core.ledger_end_index == -1
    r0 = f.push(PushType.APPEND, LOG[0], commit=1)
    assert [f.code(r) for r in (r0, r1, r2)] == [Code.SUCCESS] * 3
    # the commit index a push carries is applied right after that push's entries: min(1, end 0)
    assert f.core.ledger_end_index == 2 and f.core.committed_index == 0
    response = f.replies[r1]
    assert (response.index, response.count, response.begin_index, response.end_index) == (1, 1, 0, 1)


def test_batch_push_applies_every_entry():
    f = Follower()
    rid = f.push(PushType.APPEND, batch=LOG[:4], commit=9)
    assert f.code(rid) is Code.SUCCESS and f.replies[rid].count == 4
    assert f.core.ledger_end_index == 3 and f.core.committed_index == 3


def test_a_second_push_of_a_buffered_index_is_repeated_push():
    f = Follower()
    first = f.push(PushType.APPEND, LOG[3])
    second = f.push(PushType.APPEND, LOG[3])
    assert f.code(first) is None and f.code(second) is Code.REPEATED_PUSH


def test_compare_and_truncate_are_barriers_that_drop_buffered_appends():
    f = Follower()
    f.push(PushType.APPEND, LOG[0])
    buffered = f.push(PushType.APPEND, LOG[5])
    cmp_ok = f.push(PushType.COMPARE, LOG[0])
    assert f.code(cmp_ok) is Code.SUCCESS and f.core.pusher.entry_handler.write_request_map == {}
    assert f.code(buffered) is None  # never answered: the leader's call times out
    assert f.code(f.push(PushType.COMPARE, LOG[1])) is Code.INCONSISTENT_STATE  # no such index
    assert f.code(f.push(PushType.COMPARE, LOG[0].with_(pos=7))) is Code.INCONSISTENT_STATE  # not equal


def test_truncate_then_commit_is_capped_at_the_local_end():
    f = Follower()
    for e in LOG[:6]:
        f.push(PushType.APPEND, e)
    other = leader_log(4, term=1, body=b"other")
    rid = f.push(PushType.TRUNCATE, other[3], commit=8)
    assert f.code(rid) is Code.SUCCESS and f.replies[rid].end_index == 3
    assert f.core.committed_index == 3
    assert f.code(f.push(PushType.COMMIT, commit=9)) is Code.SUCCESS and f.core.committed_index == 3


def test_commit_push_answer_has_no_index():
    f = Follower()
    f.push(PushType.APPEND, LOG[0])
    rid = f.push(PushType.COMMIT, commit=0)
    assert f.code(rid) is Code.SUCCESS and f.replies[rid].index is None and f.core.committed_index == 0


def test_append_from_a_stale_leader_or_term_is_inconsistent_state():
    f = Follower()
    assert f.code(f.push(PushType.APPEND, LOG[0], term=0)) is Code.INCONSISTENT_STATE
    assert f.code(f.push(PushType.APPEND, LOG[0], leader="n2")) is Code.INCONSISTENT_STATE
    assert f.core.ledger_end_index == -1


@pytest.mark.parametrize("type_, kwargs", [(PushType.APPEND, {}), (PushType.COMPARE, {}), (PushType.TRUNCATE, {}),
                                            (PushType.APPEND, {"batch": ()})])
def test_malformed_pushes_are_unexpected_argument(type_, kwargs):
    f = Follower()
    assert f.code(f.push(type_, None, **kwargs)) is Code.UNEXPECTED_ARGUMENT


@pytest.mark.parametrize(("profile", "compare_code"), [("dledger-0.3.1.2", Code.NOT_FOLLOWER), ("dledger-0.3.2", None)])
def test_not_a_follower_drains_compare_only_with_0_3_1_2s_queue_and_keeps_appends(profile, compare_code):
    """#282 (0.3.1.1/0.3.1.2): a member that is no longer a follower answers queued COMPAREs NOT_FOLLOWER;
    0.3.2 keeps them queued (its RPC thread blocks on the queue instead)."""
    f = Follower(profile=profile)
    f.core.elector.change_role_to_candidate(2, 0, OutputBuilder())
    assert f.code(f.push(PushType.COMPARE, LOG[0])) is compare_code
    buffered = f.push(PushType.APPEND, LOG[0])
    assert f.code(buffered) is None and 0 in f.core.pusher.entry_handler.write_request_map


def test_lost_ack_is_answered_success_by_the_abnormal_check():
    f = Follower()
    f.push(PushType.APPEND, LOG[0])
    f.push(PushType.APPEND, LOG[1])
    again = f.push(PushType.APPEND, LOG[0], at=10)  # the leader re-pushes an entry we already hold
    assert f.code(again) is None
    f.tick(10 + f.core.config.check_abnormal_future_interval_ms)
    assert f.code(again) is Code.SUCCESS


@pytest.mark.parametrize("profile, repush_code", [("rocketmq-4.9.5", Code.REPEATED_PUSH), ("raft", None)])
def test_stuck_buffered_push_issue_251(profile, repush_code):
    """checkAbnormalFuture answers the oldest timed-out push past a gap INCONSISTENT_STATE; 0.3.1.2 keeps
    it buffered, so the leader's re-push of that index is REPEATED_PUSH (issue #251)."""
    f = Follower(profile=profile)
    f.push(PushType.APPEND, LOG[0])
    stuck = f.push(PushType.APPEND, LOG[2], at=0)
    f.push(PushType.APPEND, LOG[3], at=50)
    timeout = f.core.config.follower_push_timeout_ms
    f.tick(timeout)
    assert f.code(stuck) is Code.INCONSISTENT_STATE
    assert (2 in f.core.pusher.entry_handler.write_request_map) == (profile == "rocketmq-4.9.5")
    repush = f.push(PushType.APPEND, LOG[2], at=timeout + 1)
    assert f.code(repush) is repush_code


def test_the_request_queue_is_bounded():
    f = Follower()
    handler = f.core.pusher.entry_handler
    answered: list[PushEntryResponse] = []
    filler = PushEntryRequest(type=PushType.COMMIT, term=1)
    handler.compare_or_truncate_requests.extend(
        PendingPush(filler, lambda r, o: answered.append(r), 0) for _ in range(QUEUE_CAPACITY))
    out = OutputBuilder()
    handler.handle_push(filler, lambda r, o: answered.append(r), 0, out)
    assert [r.code for r in answered] == [Code.PUSH_REQUEST_IS_FULL]
    handler.do_work(0, out)
    assert len(answered) == QUEUE_CAPACITY + 1 and not handler.compare_or_truncate_requests
