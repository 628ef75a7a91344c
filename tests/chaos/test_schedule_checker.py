"""The campaign's schedule (seeded: one seed, one schedule; every kind asked for; partitions, bridges and
one-way cuts as they should be) and its checker over histories and traces made by hand."""

from __future__ import annotations

import pytest

from rocketlab.chaos import checker, losses
from rocketlab.chaos.schedule import FAULTS, Step, make_schedule
from rocketlab.errors import ConfigError

NODES = ("n0", "n1", "n2", "n3", "n4")


@pytest.mark.parametrize("seed", range(20))
def test_a_seed_is_one_schedule_covering_every_kind(seed):
    steps = make_schedule(seed, "dledger/raft", NODES, FAULTS)
    assert steps == make_schedule(seed, "dledger/raft", NODES, FAULTS)
    assert sorted(s.fault for s in steps) == sorted(FAULTS)
    assert all(b.at_ms >= a.at_ms + a.duration_ms for a, b in zip(steps, steps[1:], strict=False))
    assert [Step.from_json(s.as_json()) for s in steps] == steps
    for s in steps:
        cuts = s.cuts(NODES)
        if s.fault == "partition":
            big, small = (set(g) for g in s.groups)
            assert len(big) > len(small) >= 1 and not big & small and big | small == set(NODES)
            assert len(cuts) == 2 * len(big) * len(small)
        elif s.fault == "bridge":
            left, right = (set(g) for g in s.groups)
            assert left & right == set(s.targets) and left | right == set(NODES)
            assert all(s.targets[0] not in pair for pair in cuts) and len(left) >= 3 and len(right) >= 3
        elif s.fault == "one-way":
            assert cuts == {(s.targets[0], n) for n in NODES if n != s.targets[0]}
        else:
            assert cuts == set()
    assert make_schedule(seed + 1, "dledger/raft", NODES, FAULTS) != steps


def test_two_nodes_have_no_bridge_and_unknown_kinds_are_refused():
    assert "bridge" not in {s.fault for s in make_schedule(1, "sync-pair", ("n0", "n1"), FAULTS)}
    with pytest.raises(ConfigError, match="unknown fault kind"):
        make_schedule(1, "x", NODES, ("partition", "meteor"))


def _history(*ops):
    out = []
    for op in ops:
        out.append({"type": "invoke", "id": op[0], "process": int(op[0][1])})
        out.append({"type": op[1], "id": op[0], "process": int(op[0][1]), "t": 0, **(op[2] if len(op) > 2 else {})})
    return out


def test_lost_duplicates_gaps_order_and_refused_but_stored():
    history = _history(("p0-0", "ok"), ("p0-1", "ok"), ("p0-2", "ok"), ("p0-3", "unknown"), ("p0-4", "fail"),
                       ("p0-5", "ok"), ("p1-0", "ok"), ("p1-1", "ok"))
    queues = {0: [(0, "p0-0"), (1, "p0-2"), (2, "p0-1"), (3, "p0-5"), (4, "p0-3"), (6, "p0-4")],
              1: [(0, "p1-0"), (1, "p1-0")]}
    v = checker.check_queues(history, queues)
    assert v["lost"] == ["p1-1"] and v["duplicates"] == ["p1-0"]
    assert v["gaps"] == [{"queue": 0, "after": 4, "next": 6}]
    assert v["order"] == [{"queue": 0, "body": "p0-1", "after": "p0-2"}]  # p0-3 (unknown) landing late is not
    assert v["refused_but_stored"] == ["p0-4"] and v["unknown_survived"] == 1
    assert (v["ok"], v["fail"], v["unknown"], v["invoked"]) == (6, 1, 1, 8)


def _attempts(*stored):
    return [{"broker_name": "b", "queue": i, "result": "timeout" if st else "connect", "stored": st}
            for i, st in enumerate(stored)]


def test_a_duplicate_is_the_systems_unless_the_clients_own_attempts_stored_it():
    """A client that retries after a timeout may store a send once per attempt (at-least-once): copies up
    to the attempts that may have stored it are ``retried_duplicates``; one more copy is the system's."""
    history = _history(("p0-0", "ok", {"queue": 1, "queue_offset": 0, "attempts": _attempts(True, True)}),
                       ("p0-1", "ok", {"queue": 2, "queue_offset": 0, "attempts": _attempts(False, True)}),
                       ("p0-2", "ok", {"queue": 3, "queue_offset": 0, "attempts": _attempts(True)}))
    queues = {0: [(0, "p0-0"), (1, "p0-1")], 1: [(0, "p0-0")], 2: [(0, "p0-1")], 3: [(0, "p0-2"), (1, "p0-2")]}
    v = checker.check_queues(history, queues)
    assert v["retried_duplicates"] == ["p0-0"]  # two attempts that may have stored it, two copies
    assert v["duplicates"] == ["p0-1", "p0-2"]  # the first attempt never connected; p0-2 was sent once
    assert not checker.expectation("sync-pair", "", {**v, "checks": {}, "lost_named": {}})[0]
    fine = checker.check_queues(history[:2], {0: [(0, "p0-0")], 1: [(0, "p0-0")]})
    assert fine["duplicates"] == [] and fine["retried_duplicates"] == ["p0-0"]
    assert checker.expectation("sync-pair", "", {**fine, "checks": {}, "lost_named": {}})[0]


def test_order_is_judged_on_the_acknowledged_copies():
    """An earlier attempt's copy of a retried send landing after later sends in the same queue is not out of
    order (the acknowledged copy is where the SendResult said); acknowledged copies out of order are."""
    history = _history(("p0-0", "ok", {"queue": 1, "queue_offset": 0, "attempts": _attempts(True, True)}),
                       ("p0-1", "ok", {"queue": 0, "queue_offset": 0}),
                       ("p0-2", "ok", {"queue": 0, "queue_offset": 1}))
    late_attempt = {0: [(0, "p0-1"), (1, "p0-2"), (2, "p0-0")], 1: [(0, "p0-0")]}
    assert checker.check_queues(history, late_attempt)["order"] == []
    swapped = {0: [(0, "p0-2"), (1, "p0-1")], 1: [(0, "p0-0")]}
    assert checker.check_queues(history, swapped)["order"] == [{"queue": 0, "body": "p0-1", "after": "p0-2"}]


def test_a_lost_entry_committed_by_counting_and_replaced_is_named_figure_8():
    history = _history(("p0-0", "ok", {"phy_offset": 48, "t": 100}), ("p0-1", "ok", {"phy_offset": 200, "t": 100}))
    events = [{"t": 40, "node": "n0", "kind": "role", "term": 2, "role": "LEADER", "leader": "n0"},
              {"t": 50, "node": "n0", "kind": "append", "index": 0, "term": 2, "pos": 0},
              {"t": 60, "node": "n0", "kind": "append", "index": 1, "term": 2, "pos": 152}]
    counting = [{"t": 150, "node": "n1", "kind": "role", "term": 3, "role": "LEADER", "leader": "n1"},
                {"t": 151, "node": "n1", "kind": "append", "index": 0, "term": 2, "pos": 0},
                {"t": 152, "node": "n1", "kind": "append", "index": 1, "term": 2, "pos": 152},
                {"t": 160, "node": "n1", "kind": "commit", "index": 1, "pos": 152}]
    logs = {"n0": [(0, 3, "p9-9")], "n1": [(0, 3, "p9-9")]}
    stores = {"n0": {"p9-9"}, "n1": {"p9-9"}}
    named = losses.name_losses(["p0-0", "p0-1"], history, "dledger", events + counting, logs, stores, "n0")
    assert named == {"p0-0": "figure-8: entry 0 of term 2 committed by counting at n1 in term 3 (t=160), then "
                             "replaced by term 3",
                     "p0-1": "figure-8: entry 1 of term 2 committed by counting at n1 in term 3 (t=160), then "
                             "truncated"}
    # without the commit by counting in a later term there is no Figure 8: unexplained
    assert losses.name_losses(["p0-0"], history, "dledger", events, logs, stores, "n0") == {"p0-0": "unexplained"}
    assert losses.name_losses(["p0-0"], history, "dledger", events + counting, {"n0": [(0, 2, "p0-0")]},
                              {"n0": set()}, "n0") == {"p0-0": "unexplained"}  # the entry is still there


def test_a_loss_is_named_after_the_stores():
    history = _history(("p0-0", "ok", {"phy_offset": 0, "queue_offset": 0}),
                       ("p1-0", "ok", {"phy_offset": 100, "queue_offset": 0}))
    assert losses.name_losses(["p0-0"], history, "async-pair", [], None, {"n1": set()}, "n1") == \
        {"p0-0": "unreplicated"}
    assert losses.name_losses(["p0-0"], history, "async-pair", [], None, {"n1": {"p0-0"}}, "n1") == \
        {"p0-0": "consumer-side: in the store of n1, never read back"}
    stores = {"n0": set(), "n1": set(), "n2": {"p0-0"}}
    assert losses.name_losses(["p0-0"], history, "controller", [], None, stores, "n0") == \
        {"p0-0": "diverged: only in the store of n2, not of n0, which was read back"}
    reused = _history(("p0-0", "ok", {"queue_offset": 0}), ("p0-1", "ok", {"queue_offset": 0}))
    assert losses.name_losses(["p0-0"], reused, "controller", [], None, {"n0": set()}, "n0") == \
        {"p0-0": "queue-offset-reused"}


def test_expectations_of_each_system():
    clean = {"lost": [], "lost_named": {}, "duplicates": [], "gaps": [], "order": [], "refused_but_stored": []}
    assert checker.expectation("sync-pair", "", clean)[0]
    assert not checker.expectation("sync-pair", "", {**clean, "lost": ["p0-1"]})[0]
    figure8 = {**clean, "lost": ["p0-1"], "lost_named": {"p0-1": "figure-8: committed entry 3 of term 2 truncated"}}
    assert checker.expectation("dledger", "dledger-0.3.1.2", figure8)[0]
    assert not checker.expectation("dledger", "raft", figure8)[0]
    assert not checker.expectation("dledger", "dledger-0.3.2", {**figure8, "lost_named": {"p0-1": "unexplained"}})[0]
    assert checker.expectation("async-pair", "", {**clean, "lost": ["p0-1"], "lost_named": {"p0-1": "unreplicated"}})[0]
    assert not checker.expectation("controller", "all-ack", {**clean, "lost": ["p0-1"]})[0]
    assert not checker.expectation("dledger", "raft", {**clean, "election_safety": [{"term": 3, "nodes": ["a", "b"]}]})[0]
    early = {"early-ack": {"count": 1, "first": {"why": "PUT_OK at n0 for bytes up to 100"}}}
    assert not checker.expectation("sync-pair", "", {**clean, "checks": early})[0]
    consumer = {**clean, "lost": ["p0-1"], "lost_named": {"p0-1": "consumer-side: in the store of n1, never read back"}}
    assert not checker.expectation("async-pair", "", consumer)[0]
    assert not checker.expectation("controller", "defaults", {**consumer, "lost_named": {"p0-1": "unexplained"}})[0]


def test_election_safety_and_log_matching():
    events = [{"kind": "role", "role": "LEADER", "term": 2, "node": "n0"},
              {"kind": "role", "role": "LEADER", "term": 2, "node": "n1"},
              {"kind": "role", "role": "LEADER", "term": 3, "node": "n1"}]
    assert checker.election_safety(events) == [{"term": 2, "nodes": ["n0", "n1"]}]
    logs = {"a": [(0, 1, "x"), (1, 1, "y"), (2, 2, "z")], "b": [(0, 1, "x"), (1, 1, "q"), (2, 2, "z")],
            "c": [(0, 1, "x")]}
    assert checker.log_matching(logs) == [{"members": ["a", "b"], "index": 1, "up_to": 2}]
