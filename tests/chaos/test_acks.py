"""The acknowledgement checks over traces made by hand (rocketlab.chaos.acks): each finds the early
acknowledgement it is for, with its evidence, and nothing in a correct trace; the Figure 8 evidence of the
loss naming over the sample runs of data/."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlab.chaos import acks, losses
from rocketlab.trace.rundir import iter_events

DATA = Path(__file__).resolve().parents[2] / "data"


def _e(t, node, kind, **fields):
    return {"t": t, "node": node, "kind": kind, **fields}


def _put(t, node, phy, size=100, status="PUT_OK"):
    return _e(t, node, "put", topic="Chaos", queue_id=0, queue_offset=0, phy_offset=phy, size=size, status=status,
              latency_ms=1.0)


def test_a_sync_master_acks_only_after_its_slave_reported_the_end():
    good = [_e(1, "n0", "ha_report", slave="s", offset=100), _put(2, "n0", 0)]
    assert acks.pair_acks(good) == []
    early = [_e(1, "n0", "ha_report", slave="s", offset=0), _put(2, "n0", 0)]
    [found] = acks.pair_acks(early)
    assert found["end"] == 100 and found["reported"] == 0 and found["evidence"][0]["offset"] == 0
    # a report from before the master's crash does not count after it
    crashed = [_e(1, "n0", "ha_report", slave="s", offset=500),
               {"t": 2, "node": None, "kind": "fault", "action": "crash", "targets": ["n0"]}, _put(3, "n0", 0)]
    assert len(acks.pair_acks(crashed)) == 1


def test_a_slave_whose_store_ends_before_what_it_reported():
    events = [_e(1, "n0", "ha_report", slave="s", offset=300)]
    assert acks.slave_acks(events, "n0", 300) == []
    [found] = acks.slave_acks(events, "n0", 200)
    assert found["store_end"] == 200 and "never wrote" in found["why"]


def test_a_dledger_ack_needs_a_majority_of_appends_of_its_index_and_term():
    leader = [_e(1, "n0", "append", index=0, term=1, pos=0, size=148)]
    follower = [_e(2, "n1", "append", index=0, term=1, pos=0, size=148)]
    assert acks.dledger_acks(leader + follower + [_put(2, "n0", 48)], 3) == []  # same millisecond counts
    [found] = acks.dledger_acks(leader + [_put(2, "n0", 48)], 3)
    assert found["index"] == 0 and found["appended_by"] == ["n0"]
    late = leader + [_put(2, "n0", 48), _e(3, "n1", "append", index=0, term=1, pos=0, size=148)]
    assert len(acks.dledger_acks(late, 3)) == 1
    truncated = leader + follower + [_e(2, "n1", "truncate", index=0), _put(3, "n0", 48)]
    assert len(acks.dledger_acks(truncated, 3)) == 1
    other_term = leader + [_e(2, "n1", "append", index=0, term=2, pos=0, size=148), _put(3, "n0", 48)]
    assert len(acks.dledger_acks(other_term, 3)) == 1


def test_all_ack_needs_every_sync_state_set_member_and_elections_stay_inside_it():
    setup = [_e(0, "n0", "replicas_state", state="RUNNING", broker_id=1),
             _e(0, "c0", "controller_apply", index=1, event="ELECT_MASTER_EVENT", broker_name="b", master=1),
             _e(1, "c0", "controller_apply", index=2, event="ALTER_SYNC_STATE_SET_EVENT", broker_name="b",
                members=[1, 2, 3]),
             _e(1, "c1", "controller_apply", index=2, event="ALTER_SYNC_STATE_SET_EVENT", broker_name="b",
                members=[1, 2, 3]),
             _e(1, "n0", "ha_handshake", slave="a2", slave_id=2), _e(1, "n0", "ha_handshake", slave="a3", slave_id=3),
             _e(2, "n0", "ha_report", slave="a2", offset=100)]
    [found] = acks.all_ack_acks([*setup, _put(3, "n0", 0)], ("n0", "n1", "n2"))
    assert found["missing"] == [3] and found["sync_state_set"] == [1, 2, 3]
    assert acks.all_ack_acks([*setup, _e(3, "n0", "ha_report", slave="a3", offset=100), _put(3, "n0", 0)],
                             ("n0", "n1", "n2")) == []
    assert acks.elections_outside_sync_state_set(setup) == []
    outside = [*setup, _e(4, "c0", "controller_apply", index=3, event="ALTER_SYNC_STATE_SET_EVENT", broker_name="b",
                          members=[1, 3]),
               _e(5, "c0", "controller_apply", index=4, event="ELECT_MASTER_EVENT", broker_name="b", master=2)]
    [found] = acks.elections_outside_sync_state_set(outside)
    assert found["sync_state_set"] == [1, 3] and found["election"]["master"] == 2


def test_the_trace_against_the_stores():
    events = [_e(1, "n1", "append", index=0, term=1, pos=0, size=148),
              _e(2, "n1", "append", index=1, term=1, pos=148, size=148)]
    logs = {"n1": [(0, 1, "a"), (1, 1, "b")]}
    assert acks.trace_gaps(events, logs) == [] and acks.store_losses(events, logs) == []
    [gap] = acks.trace_gaps(events[:1], logs)
    assert gap["node"] == "n1" and gap["first"] == [1, 1]
    [lost] = acks.store_losses(events, {"n1": [(0, 1, "a")]})
    assert (lost["first"], lost["last"]) == (1, 1)
    again = [*events, _e(3, "n1", "append", index=1, term=1, pos=148, size=148)]  # the leader had to send it again
    assert len(acks.store_losses(again, logs)) == 1
    cut = [*events, _e(3, "n1", "truncate", index=1), _e(4, "n1", "append", index=1, term=1, pos=148, size=148)]
    assert acks.store_losses(cut, logs) == []


@pytest.mark.parametrize("sample, counted", [("figure8-dledger-0.3.1.2", True), ("figure8-raft", False)])
def test_commits_by_counting_are_found_in_the_figure_8_samples(sample, counted):
    """The loss naming's evidence for Figure 8 (a leader committing an older term's entry by counting) is
    in the sample run of DLedger 0.3.1.2's Figure 8 schedule, and never under ``raft``."""
    events = sorted(iter_events(DATA / sample), key=lambda e: (e["t"], e["seq"]))
    found = losses.counting_commits(events)
    assert bool(found) == counted
    assert all(c["entry_term"] < c["term"] for c in found)
