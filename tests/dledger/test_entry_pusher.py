"""The leader side of replication: doCompare's decision table, the EntryDispatcher state machine driven by
hand-made answers, the QuorumAckChecker and client futures (digest 5.1 - 5.3)."""

from __future__ import annotations

import random

import pytest

from rocketlab.core import OutputBuilder, Request
from rocketlab.dledger.entry_dispatcher import decide_compare
from rocketlab.dledger.protocol import DLedgerResponseCode, PushEntryRequest, PushEntryResponse, PushType
from rocketlab.dledger.server import DLedgerServer

from .helpers import make_config

Code = DLedgerResponseCode

COMPARE_TABLE = [
    # (case, compare_index, code, follower begin/end, leader begin/end, rule, action, index)
    ("match at the follower's end", 9, Code.SUCCESS, 0, 9, 0, 9, "match", "append", 9),
    ("match, follower longer", 9, Code.SUCCESS, 0, 12, 0, 9, "match-follower-longer", "truncate", 9),
    ("follower entirely below leader", 9, Code.INCONSISTENT_STATE, 0, 3, 5, 9, "no-intersection", "truncate", 5),
    ("empty follower", 9, Code.INCONSISTENT_STATE, -1, -1, 0, 9, "no-intersection", "truncate", 0),
    ("follower entirely above leader", 9, Code.INCONSISTENT_STATE, 12, 20, 0, 9, "no-intersection", "truncate", 0),
    ("compare below follower begin", 4, Code.INCONSISTENT_STATE, 5, 12, 0, 9, "below-follower-begin", "truncate", 0),
    ("compare above follower end", 9, Code.INCONSISTENT_STATE, 0, 6, 0, 9, "above-follower-end", "compare", 6),
    ("mismatch inside", 6, Code.INCONSISTENT_STATE, 0, 9, 0, 9, "mismatch-step-back", "compare", 5),
    ("walked below leader begin", 3, Code.INCONSISTENT_STATE, 0, 9, 3, 9, "mismatch-step-back+below-leader-begin",
     "truncate", 3),
]


@pytest.mark.parametrize("case, ci, code, fb, fe, lb, le, rule, action, index", COMPARE_TABLE,
                         ids=[r[0] for r in COMPARE_TABLE])
def test_do_compare_decision(case, ci, code, fb, fe, lb, le, rule, action, index):
    """doCompare (0.1 - 0.3.x): after a COMPARE answer, APPEND, TRUNCATE or walk the compare index."""
    d = decide_compare(ci, code, fb, fe, lb, le)
    assert (d.rule, d.action, d.index) == (rule, action, index)


class Leader:
    """n0 forced leader of term ``term`` over n1, n2 (memory store); its requests are answered by hand."""

    def __init__(self, term: int = 1, profile: str = "rocketmq-4.9.5", **overrides) -> None:
        config = make_config(enable_leader_elector=False, profile=profile, store_type="MEMORY", **overrides)
        self.core = DLedgerServer(config, None, random.Random(1))
        self.core.on_start(0)
        self.now = 0
        self.requests: list[Request] = []
        self.become_leader(term)

    def become_leader(self, term: int) -> None:
        ms, out = self.core.member_state, OutputBuilder()
        ms.change_to_candidate(term)
        while ms.curr_term < term:
            ms.next_term()
        self.core.elector.change_role_to_leader(term, self.now, out)
        self._collect(self.core.finish_input(out, self.now))

    def _collect(self, out) -> None:
        self.requests += [a for a in out.actions if isinstance(a, Request)]

    def append(self, body: bytes = b"x"):
        future, out = self.core.append(body, self.now)
        self._collect(out)
        return future

    def pushes(self, to: str, type_: PushType | None = None) -> list[Request]:
        return [r for r in self.requests if r.to == to and isinstance(r.msg, PushEntryRequest)
                and (type_ is None or r.msg.type is type_)]

    def answer(self, request: Request, code: Code = Code.SUCCESS, end: int | None = None, begin: int = 0) -> None:
        msg: PushEntryRequest = request.msg
        end = msg.last_entry_index if end is None else end
        response = PushEntryResponse(code=code, term=msg.term, index=msg.first_entry_index, count=msg.count,
                                     begin_index=begin, end_index=end)
        self.requests.remove(request)
        self._collect(self.core.on_reply(request.to, request.request_id, response, self.now))

    def tick(self, at: int) -> None:
        self.now = at
        self._collect(self.core.on_tick(at))


def test_dispatcher_compares_then_appends_pipelined():
    lead = Leader()
    futures = [lead.append([b"e0", b"e1", b"e2"])]  # one batch, so COMPARE starts with three entries
    compare = lead.pushes("n1", PushType.COMPARE)
    assert len(compare) == 1 and compare[0].msg.entry.index == 2  # COMPARE starts at the leader's end
    lead.answer(compare[0], Code.SUCCESS, end=2)
    assert lead.core.pusher.dispatchers["n1"].type is PushType.APPEND
    lead.append(b"e3")
    lead.append(b"e4")
    appends = lead.pushes("n1", PushType.APPEND)
    assert [r.msg.entry.index for r in appends] == [3, 4]  # pipelined: both in flight
    assert all(f.code is Code.SUCCESS for f in futures)  # n0 + n1 hold 0..2
    lead.answer(appends[1])
    assert lead.core.pusher.get_peer_water_mark(1, "n1") == 4 and lead.core.committed_index == 4


def test_dispatcher_truncates_a_longer_follower():
    lead = Leader()
    lead.append([b"e0", b"e1", b"e2"])
    lead.answer(lead.pushes("n1", PushType.COMPARE)[0], Code.SUCCESS, end=7)
    truncate = lead.pushes("n1", PushType.TRUNCATE)
    assert len(truncate) == 1 and truncate[0].msg.entry.index == 2
    lead.answer(truncate[0], Code.SUCCESS, end=2)
    d = lead.core.pusher.dispatchers["n1"]
    assert (d.type, d.write_index) == (PushType.APPEND, 3)


def test_dispatcher_walks_back_and_fails_to_compare_after_a_bad_answer():
    lead = Leader()
    lead.append([b"e%d" % i for i in range(5)])
    lead.answer(lead.pushes("n1", PushType.COMPARE)[0], Code.INCONSISTENT_STATE, end=9)
    walked = lead.pushes("n1", PushType.COMPARE)
    assert walked[0].msg.entry.index == 3
    lead.answer(walked[0], Code.DISK_ERROR)
    d = lead.core.pusher.dispatchers["n1"]
    assert d.type is PushType.COMPARE and d.idle_until_ms == lead.core.config.dispatcher_error_backoff_ms
    lead.tick(d.idle_until_ms)
    assert lead.pushes("n1", PushType.COMPARE)[0].msg.entry.index == 3  # compare index kept in COMPARE


def test_inconsistent_state_on_append_goes_back_to_compare_and_lost_push_is_repushed():
    lead = Leader()
    lead.append(b"a")
    lead.answer(lead.pushes("n1", PushType.COMPARE)[0], Code.SUCCESS, end=0)
    lead.append(b"b")
    lead.append(b"c")
    first, second = lead.pushes("n1", PushType.APPEND)
    lead.requests.remove(first)  # lost
    lead.answer(second, Code.REPEATED_PUSH)  # only noted
    timeout = lead.core.config.max_push_time_out_ms
    lead.tick(timeout + 1)
    repushed = lead.pushes("n1", PushType.APPEND)
    assert [r.msg.entry.index for r in repushed] == [1]  # only watermark + 1
    lead.answer(repushed[0], Code.INCONSISTENT_STATE)
    assert lead.core.pusher.dispatchers["n1"].type is PushType.COMPARE


def test_commit_push_when_idle():
    lead = Leader()
    lead.append(b"a")
    lead.answer(lead.pushes("n1", PushType.COMPARE)[0], Code.SUCCESS, end=0)
    commits = lead.pushes("n1", PushType.COMMIT)
    assert len(commits) == 1  # sent at once on entering APPEND, carrying the commit index known then
    interval = lead.core.config.push_commit_interval_ms
    lead.tick(interval // 2)
    assert len(lead.pushes("n1", PushType.COMMIT)) == 1
    lead.tick(interval + 1)
    commits = lead.pushes("n1", PushType.COMMIT)
    assert len(commits) == 2 and commits[-1].msg.commit_index == 0


def test_quorum_index_is_the_median_of_watermarks():
    lead = Leader(peers="n0-a:1;n1-a:2;n2-a:3;n3-a:4;n4-a:5")
    for i in range(10):
        lead.append(b"e%d" % i)
    pusher = lead.core.pusher
    for peer, mark in {"n1": 7, "n2": 5, "n3": 3, "n4": 1}.items():
        pusher.update_peer_water_mark(1, peer, mark)
    lead.tick(1)
    assert pusher.quorum_ack_checker.quorum_index(1) == 5 == lead.core.committed_index


def test_futures_of_an_old_term_complete_with_term_changed():
    lead = Leader()
    old = lead.append(b"old term")
    out = OutputBuilder()
    lead.core.elector.change_role_to_candidate(2, 0, out)
    lead.tick(5)
    assert not old.done  # 0.3.x: a deposed leader keeps its futures ...
    lead.become_leader(2)
    lead.tick(10)
    assert old.code is Code.TERM_CHANGED  # ... until it leads again


@pytest.mark.parametrize("profile, committed", [("rocketmq-4.9.5", 2), ("raft", -1)])
def test_old_term_entries_commit_by_counting_only_in_0_3_1_2(profile, committed):
    """Watermarks of the new term cover term-1 entries: 0.3.1.2 commits them (issue #4); ``raft`` with the
    NOOP disabled (master's testDisableFastAdvanceCommitIndex) waits for an entry of the current term."""
    lead = Leader(term=1, profile=profile, append_noop_on_leadership=False)
    for i in range(3):
        lead.append(b"t1-%d" % i)
    lead.core.elector.change_role_to_candidate(2, 0, OutputBuilder())
    lead.become_leader(2)
    lead.core.pusher.update_peer_water_mark(2, "n1", 2)
    lead.tick(2000)
    assert lead.core.committed_index == committed
    lead.append(b"t2")
    lead.core.pusher.update_peer_water_mark(2, "n1", 3)
    lead.tick(2001)
    assert lead.core.committed_index == 3


def test_safe_leader_appends_a_noop_when_its_log_is_not_committed():
    lead = Leader(term=1, profile="raft")
    lead.append(b"t1")
    lead.core.elector.change_role_to_candidate(2, 0, OutputBuilder())
    lead.become_leader(2)
    last = lead.core.entries()[-1]
    assert last.is_noop and (last.index, last.term, last.body) == (1, 2, b"")
    lead.core.pusher.update_peer_water_mark(2, "n1", 1)
    lead.tick(5)
    assert lead.core.committed_index == 1


def test_single_member_commits_at_once():
    lead = Leader(peers="n0-a:1")
    future = lead.append(b"alone")
    assert future.code is Code.SUCCESS and lead.core.committed_index == 0


@pytest.mark.parametrize(("profile", "first_compare"), [("rocketmq-4.9.5", 3), ("dledger-0.3.2", 3), ("raft", None)])
def test_a_new_term_compares_from_the_leader_end_only_under_raft(profile, first_compare):
    """Java resets compareIndex only when a dispatcher leaves APPEND: one still in COMPARE from an earlier
    leadership compares at that stale index in the next, gets SUCCESS from a follower whose log matches and
    is longer, and truncates it down to that index (committed entries too). ``fresh_compare_on_new_term``
    (the raft profile) starts every term's COMPARE from the leader's end."""
    lead = Leader(profile=profile)
    lead.append([b"e0", b"e1", b"e2", b"e3", b"e4"])
    d = lead.core.pusher.dispatchers["n1"]
    lead.answer(lead.pushes("n1", PushType.COMPARE)[0], Code.INCONSISTENT_STATE, end=9)
    stale = lead.pushes("n1", PushType.COMPARE)[0]
    assert d.compare_index == 3 and stale.msg.entry.index == 3  # walking back when the leadership ends
    lead.answer(stale, Code.NETWORK_ERROR)  # that push fails: back off, still in COMPARE at index 3
    assert (d.type, d.compare_index) == (PushType.COMPARE, 3)
    lead.now = d.idle_until_ms
    lead.become_leader(3)  # leads again, two terms later
    compare = lead.pushes("n1", PushType.COMPARE)
    end = lead.core.store.ledger_end_index
    assert [r.msg.entry.index for r in compare] == [end if first_compare is None else first_compare]
    lead.answer(compare[0], Code.SUCCESS, end=end)  # the follower holds the leader's whole log
    truncated = lead.pushes("n1", PushType.TRUNCATE)
    if first_compare is None:
        assert not truncated and d.type is PushType.APPEND
    else:
        assert [r.msg.entry.index for r in truncated] == [first_compare]  # a matching tail cut (Java's way)
