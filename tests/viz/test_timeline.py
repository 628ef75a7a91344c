"""rocketlab.viz.timeline: the node histories every figure is drawn from."""

from __future__ import annotations

import pytest

from rocketlab.trace.rundir import load_events, write_run
from rocketlab.viz.timeline import (
    DOWN,
    UP,
    Segment,
    as_records,
    groups_at,
    natural_key,
    node_ids,
    partition_groups,
    partition_spans,
    paused_spans,
    role_segments,
    states_at,
)


def test_node_ids_sort_naturally_and_skip_drop_targets():
    events = [{"t": 0, "seq": 0, "node": "n10", "kind": "role"}, {"t": 0, "seq": 1, "node": "n2", "kind": "role"},
              {"t": 1, "seq": 2, "node": None, "kind": "fault", "action": "drop", "targets": ["*", "17"]}]
    assert node_ids(events) == ["n2", "n10"]
    assert sorted(["n10", "n9", "n1"], key=natural_key) == ["n1", "n9", "n10"]


def test_role_segments_follow_roles_terms_crash_and_restart(dledger_events):
    n1 = [s for s in role_segments(dledger_events) if s.node == "n1"]
    assert n1 == [
        Segment("n1", "CANDIDATE", 0, 150, 0, None),
        Segment("n1", "CANDIDATE", 150, 160, 1, None),  # the term event moved it to term 1
        Segment("n1", "LEADER", 160, 1000, 1, "n1"),
        Segment("n1", DOWN, 1000, 2500, 1, None),
        Segment("n1", "CANDIDATE", 2500, 2520, 1, None),  # UP at 2500 lasts 0 ms: dropped
        Segment("n1", "FOLLOWER", 2520, 3800, 3, "n2"),
    ]


def test_nodes_without_roles_are_up_or_down(pingpong_run):
    segments = [(s.node, s.state, s.start_ms, s.end_ms) for s in role_segments(pingpong_run.events)]
    assert ("n1", UP, 0, 1000) in segments
    assert ("n1", DOWN, 1000, 1800) in segments
    assert ("n1", UP, 1800, 2500) in segments
    assert {s[0] for s in segments} == {"n0", "n1", "n2"}


def test_paused_and_partition_spans(pingpong_run):
    assert [(s.start_ms, s.end_ms) for s in paused_spans(pingpong_run.events)["n2"]] == [(1800, 2000)]
    (span,) = partition_spans(pingpong_run.events)
    assert (span.start_ms, span.end_ms) == (1500, 1800)
    assert span.groups == (("n0",), ("n2",), ("n1",))  # the unnamed n1 forms a group of its own


def test_partition_groups_put_unnamed_nodes_together():
    assert partition_groups(["n2"], ["n0", "n1", "n2"]) == (("n2",), ("n0", "n1"))
    assert partition_groups(["n0", "n1,n2"], ["n0", "n1", "n2"]) == (("n0",), ("n1", "n2"))


def test_states_and_groups_at_an_instant(dledger_events):
    at_1200 = states_at(dledger_events, 1200)
    assert not at_1200["n1"].alive and at_1200["n2"].state == "FOLLOWER"
    at_3200 = states_at(dledger_events, 3200)
    assert (at_3200["n2"].state, at_3200["n2"].term) == ("LEADER", 3)
    assert groups_at(dledger_events, 3200) == (("n2",), ("n0", "n1"))
    assert groups_at(dledger_events, 3500) is None  # healed at 3500


def test_a_dataframe_gives_the_same_records(tmp_path, dledger_events):
    write_run(tmp_path / "run", {"seed": 1}, dledger_events)
    frame = load_events(tmp_path / "run")
    records = as_records(frame)
    without_nulls = [{k: v for k, v in e.items() if v is not None or k == "node"} for e in dledger_events]
    assert records == without_nulls  # NaN gone (a null field reads as absent), longs back to int, order kept
    assert [e for e in records if e["kind"] == "heartbeat" and e.get("code") is None]


def test_a_dataframe_of_several_runs_is_refused(tmp_path, dledger_events, ha_events):
    write_run(tmp_path / "a", {}, dledger_events)
    write_run(tmp_path / "b", {}, ha_events)
    with pytest.raises(ValueError, match="several runs"):
        as_records(load_events([tmp_path / "a", tmp_path / "b"]))
