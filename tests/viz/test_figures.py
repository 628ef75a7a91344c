"""rocketlab.viz.figures: each figure shows what the events say, and says so when they say nothing."""

from __future__ import annotations

import pytest

from rocketlab.scenarios import ScenarioArgs, get_scenario
from rocketlab.trace.rundir import load_events, write_run
from rocketlab.viz.figures.controller import epochs_and_sync_state_set
from rocketlab.viz.figures.latency import percentile, put_latency
from rocketlab.viz.figures.messages import message_flow
from rocketlab.viz.figures.offsets import commit_progress
from rocketlab.viz.figures.roles import FAULT_FONT_PX, FAULT_LABEL_PLOT_PX, role_timeline, violated_invariants
from rocketlab.viz.figures.votes import votes_per_term
from rocketlab.viz.style import is_empty_figure, nice_bin_ms
from tests.viz.sample_traces import TraceBuilder

ALL_FIGURES = (role_timeline, votes_per_term, commit_progress, message_flow, put_latency)


def trace(fig, name):
    """The one trace called ``name``."""
    (found,) = [t for t in fig.data if t.name == name]
    return found


def bars_of(fig, name):
    """(node, start, end, label) of a horizontal bar trace."""
    t = trace(fig, name)
    return [(y, b, b + x, txt) for y, b, x, txt in zip(t.y, t.base, t.x, t.text or [""] * len(t.y), strict=True)]


def annotation_texts(fig):
    return [a.text for a in fig.layout.annotations]


# --- role_timeline ------------------------------------------------------------------------------
def test_role_timeline_has_a_row_per_node_and_the_role_segments(dledger_events):
    fig = role_timeline(dledger_events)
    assert list(fig.layout.yaxis.categoryarray) == ["n0", "n1", "n2"]
    assert list(fig.layout.yaxis2.categoryarray) == ["faults", "faults 2"]  # lanes of their own, above
    assert list(fig.layout.yaxis2.ticktext) == ["faults", ""]
    assert fig.layout.yaxis2.domain[0] == fig.layout.yaxis.domain[1]
    assert bars_of(fig, "LEADER") == [("n1", 160, 1000, "T1"), ("n2", 1506, 3800, "T3")]
    assert ("n1", 1000, 2500, "") in bars_of(fig, "down (crashed)")
    assert ("n0", 1508, 3800, "T3") in bars_of(fig, "FOLLOWER")
    faults = trace(fig, "fault")
    assert list(faults.x) == [1000, 2500, 3000, 3500]
    assert list(faults.text) == ["crash n1", "restart n1", "partition n2 | n0,n1", "heal"]
    assert list(faults.y) == ["faults", "faults", "faults 2", "faults"]  # the partition's label needs a lane
    assert [(s.x0, s.x1) for s in fig.layout.shapes if s.type == "rect"] == [(3000, 3500)]
    assert "last term 3" in fig.layout.title.text


def label_boxes(fig, plot_px=FAULT_LABEL_PLOT_PX):
    """Each fault label's (row, left px, right px) in a plot area ``plot_px`` wide, from the drawn trace."""
    x0, x1 = fig.layout.xaxis.range
    boxes = []
    labelled = [t for t in fig.data if t.name in ("fault", "first violation")]
    for t, row, text, position in ((t, r, x, p) for tr in labelled
                                   for t, r, x, p in zip(tr.x, tr.y, tr.text, tr.textposition, strict=True)):
        at, width = (t - x0) * plot_px / (x1 - x0), len(text) * 0.6 * FAULT_FONT_PX
        left = {"top center": at - width / 2, "top right": at, "top left": at - width}[position]
        assert -1 <= left and left + width <= plot_px + 1, (text, position)  # inside the plot's width
        boxes.append((row, left, left + width, text))
    return boxes


def assert_no_label_collides(fig):
    for plot_px in (FAULT_LABEL_PLOT_PX, 2 * FAULT_LABEL_PLOT_PX):  # a wider cell only spreads them out
        boxes = label_boxes(fig, plot_px)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert a[0] != b[0] or a[2] <= b[1] or b[2] <= a[1], f"{a} collides with {b}"


def test_fault_labels_never_overlap_however_close_the_faults():
    b = TraceBuilder().role(0, "n0", "LEADER", 1, "n0")
    times = [5, 10, 15, 300, 320, 5000, 9000, 9990, 9995]
    for i, t in enumerate(times):
        b.fault(t, "partition", f"n{i % 3}", "n3,n4") if i % 2 else b.fault(t, "crash", f"n{i % 5}")
    b.emit(10_000, "n0", "role", term=2, role="FOLLOWER", leader=None)
    fig = role_timeline(b.done())
    assert_no_label_collides(fig)
    lanes = {r for r, *_ in label_boxes(fig)}
    assert 3 <= len(lanes) and "faults" in lanes
    rows = list(fig.layout.yaxis2.categoryarray)
    assert rows == ["faults"] + [f"faults {k}" for k in range(2, len(lanes) + 1)]


def test_lab04_figure8_fault_labels_do_not_overlap(tmp_path):
    from rocketlab.scenarios.dledger_schedules import figure8_cluster, run_figure8

    fc = figure8_cluster(1, "dledger-0.3.1.2", tmp_path)
    run_figure8(fc)
    fig = role_timeline(fc.events)
    assert len(trace(fig, "fault").x) == 8
    assert_no_label_collides(fig)
    assert list(trace(fig, "first violation").text) == ["first violation: leader_completeness"]


def test_role_timeline_of_a_pingpong_run_shows_liveness_and_says_it_has_no_roles(pingpong_run):
    fig = role_timeline(pingpong_run.events)
    assert "no role events in this run: bars show only up / down / paused" in annotation_texts(fig)
    assert bars_of(fig, "down (crashed)") == [("n1", 1000, 1800, "")]
    assert bars_of(fig, "paused") == [("n2", 1800, 2000, "")]
    assert list(trace(fig, "fault").text) == ["crash n1", "partition n0 | n2", "heal; restart n1; pause n2",
                                              "resume n2"]


def test_a_checkers_violation_is_annotated_with_the_invariants_it_names():
    b = TraceBuilder().role(0, "n0", "LEADER", 1, "n0")
    b.emit(5, "n0", "violation", invariant="dledger",
           detail="leader_completeness: leader n0 (term 2) lacks committed index 3; "
                  "committed_entries_stable: n1 committed index 3 as b'x', now b'y'")
    fig = role_timeline(b.done())
    (label,) = trace(fig, "first violation").text
    assert label == "first violation: leader_completeness, committed_entries_stable"
    assert violated_invariants({"invariant": "election_safety", "detail": "n1: leader of term 2 twice"}) == [
        "election_safety"]  # a detail that does not name invariants leaves the event's own


def test_role_timeline_marks_violations():
    b = TraceBuilder().role(0, "n0", "LEADER", 1, "n0").role(0, "n1", "LEADER", 1, "n1")
    b.emit(0, "n1", "violation", invariant="election_safety", detail="two leaders in term 1")
    fig = role_timeline(b.done())
    marks = trace(fig, "violation")
    assert list(marks.y) == ["n1"] and "election_safety" in marks.text[0]
    assert list(trace(fig, "first violation").text) == ["first violation: election_safety"]


def test_role_timeline_reads_a_dataframe_like_a_list(tmp_path, dledger_events):
    write_run(tmp_path / "run", {}, dledger_events)
    from_frame = role_timeline(load_events(tmp_path / "run"))
    assert from_frame.to_plotly_json() == role_timeline(dledger_events).to_plotly_json()


# --- votes_per_term -----------------------------------------------------------------------------
def test_votes_per_term_counts_grants_and_rejections_by_reason(dledger_events):
    fig = votes_per_term(dledger_events)
    granted = trace(fig, "granted (ACCEPT)")
    assert (list(granted.x), list(granted.y)) == ([1, 2, 3], [3, 2, 2])
    rejected = trace(fig, "rejected: ALREADY_VOTED")
    assert (list(rejected.x), list(rejected.y)) == ([2], [2])
    assert sorted(rejected.customdata[0].split(", ")) == ["n0→n2", "n2→n0"]
    unanswered = trace(fig, "no answer (UNKNOWN)")
    assert (list(unanswered.x), list(unanswered.y)) == ([2, 3], [2, 1])
    requests = trace(fig, "requests sent")
    assert (list(requests.x), list(requests.y)) == ([1, 2, 3], [3, 6, 3])
    assert list(trace(fig, "round: PASSED").x) == [1, 3]
    assert list(trace(fig, "round: WAIT_TO_VOTE_NEXT").y) == [2]
    assert fig.layout.title.text == "Votes per term: 12 requests, 7 granted, 5 rejected or unanswered"


# --- commit_progress ------------------------------------------------------------------------------
def test_commit_progress_draws_append_commit_and_truncation_per_node(dledger_events):
    fig = commit_progress(dledger_events)
    names = {t.name for t in fig.data}
    assert {"n0 append", "n0 commit", "n1 append", "n1 commit", "n2 append", "n2 commit", "n1 truncate"} <= names
    n1_append = trace(fig, "n1 append")
    assert (2540, 3) in list(zip(n1_append.x, n1_append.y, strict=True))  # truncate at index 4: end is 3
    assert list(trace(fig, "n1 commit").y) == [0, 1, 2, 3, 6, 7, 7]  # the last carried on to the end
    assert list(trace(fig, "n1 commit").x)[-1] == max(e["t"] for e in dledger_events)
    assert list(trace(fig, "n1 truncate").y) == [4]
    assert "highest commit index 7" in fig.layout.title.text


def test_commit_progress_draws_master_offset_and_slave_acks(ha_events):
    fig = commit_progress(ha_events)
    master = trace(fig, "master max offset (m0)")
    assert list(master.y)[-1] == 3400  # 17 written puts of 200 bytes; MESSAGE_ILLEGAL wrote nothing
    acked = trace(fig, "acked by s1")
    end = max(e["t"] for e in ha_events)
    assert list(acked.y)[-1] == 2400 and sorted(acked.x)[-2] < 800  # no ack after the slave crashed...
    assert list(acked.x)[-1] == end and list(acked.y)[-2:] == [2400, 2400]  # ...its last ack carried on
    assert list(trace(fig, "pushed to s1").y)[0] == 200
    assert "master max offset 3400, highest slave ack 2400" in fig.layout.title.text


def test_commit_progress_carries_a_cut_off_followers_lines_to_the_end_and_can_bring_them_on_top():
    b = TraceBuilder()
    for n in ("n0", "n1", "n2"):
        b.emit(1, n, "append", index=0, term=1, pos=0, size=64).emit(1, n, "commit", index=0, pos=0)
    for i in range(3):
        for n in ("n0", "n1"):
            b.emit(50 + i, n, "append", index=i + 1, term=1, pos=64 * (i + 1), size=64)
            b.emit(50 + i, n, "commit", index=i + 1, pos=64 * (i + 1))
    events = b.done()
    plain = commit_progress(events)
    for name in ("n2 append", "n2 commit"):  # n2 stopped at t=1: its lines still reach the run's end
        assert (list(trace(plain, name).x), list(trace(plain, name).y)) == ([1, 52], [0, 0])
    assert list(trace(plain, "n0 commit").x)[-1] == 52  # a line whose last event ends the run is not padded
    top = commit_progress(events, highlight="n2")
    assert [tr.name for tr in top.data[-2:]] == ["n2 append", "n2 commit"]
    assert all(tr.mode == "lines+markers" and tr.line.width == 4 for tr in top.data[-2:])
    assert len(top.data) == len(plain.data)


def test_commit_progress_with_both_systems_has_two_panels(dledger_events, ha_events):
    fig = commit_progress(sorted(dledger_events + ha_events, key=lambda e: e["t"]))
    titles = [a.text for a in fig.layout.annotations if a.text and a.text.startswith(("DLedger", "CommitLog"))]
    assert len(titles) == 2


# --- message_flow ---------------------------------------------------------------------------------
def test_message_flow_counts_every_message_once(pingpong_run):
    events = pingpong_run.events
    fig = message_flow(events, bin_ms=100)
    sends = [e for e in events if e["kind"] == "msg_send"]
    for msg in ("Heartbeat", "Ping", "Pong"):
        assert sum(trace(fig, f"{msg} sent").y) == sum(1 for e in sends if e["msg"] == msg)
    drops = [e for e in events if e["kind"] == "msg_drop"]
    for reason in ("loss", "partition", "peer down"):
        count = sum(1 for e in drops if e["reason"] == reason)
        assert sum(trace(fig, f"lost: {reason} ({count})").y) == count
    assert fig.layout.title.text.startswith(f"Messages: {len(sends)} sent")
    assert "sent per message type (per 100 ms)" in annotation_texts(fig)


def test_message_flow_without_drops_says_nothing_was_lost():
    b = TraceBuilder().message(0, "n0", "n1", "Ping", 1).message(30, "n1", "n0", "Pong", 2)
    fig = message_flow(b.done())
    assert "no msg_drop events: nothing was lost" in annotation_texts(fig)


def test_nice_bins():
    assert [nice_bin_ms(s) for s in (0, 49, 2500, 60_000)] == [1, 1, 50, 2000]


# --- put_latency ----------------------------------------------------------------------------------
def test_put_latency_groups_by_status_and_skips_missing_latency(ha_events):
    fig = put_latency(ha_events)
    assert len(trace(fig, "PUT_OK (12)").y) == 12  # the 13th PUT_OK has latency_ms null
    assert list(trace(fig, "FLUSH_SLAVE_TIMEOUT (2)").y) == [3000.0, 3000.0]
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.title.text.startswith("Put latency: 18 puts, 13 PUT_OK")


def test_put_latency_with_no_latency_at_all_says_so():
    b = TraceBuilder().emit(0, "m0", "put", topic="T", queue_id=0, queue_offset=0, phy_offset=0, size=10,
                            status="PUT_OK", latency_ms=None)
    fig = put_latency(b.done())
    assert is_empty_figure(fig) and "none with a latency_ms" in annotation_texts(fig)[0]


def test_percentile_is_nearest_rank():
    assert [percentile([5, 1, 3, 2, 4], q) for q in (0, 50, 99, 100)] == [1, 3, 5, 5]


# --- empty input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", ALL_FIGURES, ids=lambda f: f.__name__)
def test_empty_input_gives_a_note_not_an_exception(make):
    for empty in ([], None):
        fig = make(empty)
        assert is_empty_figure(fig)
        assert "events in this run" in annotation_texts(fig)[0]


@pytest.mark.parametrize("make,kind", [(put_latency, "put"), (votes_per_term, "vote_request"),
                                       (commit_progress, "commit")])
def test_a_run_lacking_the_kind_names_it(make, kind, pingpong_run):
    fig = make(pingpong_run.events)
    assert is_empty_figure(fig) and kind in annotation_texts(fig)[0]


@pytest.mark.parametrize("make", ALL_FIGURES, ids=lambda f: f.__name__)
def test_every_figure_draws_every_sample_run(make, dledger_events, ha_events, pingpong_run):
    for events in (dledger_events, ha_events, pingpong_run.events):
        make(events).to_json()  # builds and serialises without error


def test_epochs_and_sync_state_set_show_roles_crashes_and_the_committed_set():
    assert is_empty_figure(epochs_and_sync_state_set([]))
    result = get_scenario("controller-failover").run(ScenarioArgs(seed=1))
    events = result.cluster.events
    fig = epochs_and_sync_state_set(events)
    old, new = result.summary["old_master"], result.summary["new_master"]
    crash = next(e["t"] for e in events if e["kind"] == "fault" and e.get("action") == "crash")
    by_name = {t.name: t for t in fig.data}
    assert by_name[f"{old} master"].x[1] == crash  # the old master's line stops where it crashed
    assert round(max(y for y in by_name[f"{new} master"].y if y is not None)) == 2
    in_sync = [t for t in fig.data if t.name.endswith("in sync")]
    assert len(in_sync) == 3 and all(t.line.width == 10 for t in in_sync)
    assert "highest master epoch 2" in fig.layout.title.text
    result.cluster.close()


def test_fault_labels_close_in_time_take_lanes_of_their_own():
    """Lab 06's "crash n1" and "cut link" labels were drawn on top of each other (two lanes, alternating):
    now a label takes the first lane free where it starts, so labels close in time never overlap."""
    import plotly.graph_objects as go

    from rocketlab.viz.style import base_layout, mark_faults

    fig = base_layout(go.Figure(), "faults", 300)
    fig.update_xaxes(range=[0, 14_000])
    faults = [{"t": 6727, "node": None, "kind": "fault", "action": "cut_link", "targets": ["n1", "n0"]},
              {"t": 6728, "node": None, "kind": "fault", "action": "crash", "targets": ["n1"]},
              {"t": 6732, "node": None, "kind": "fault", "action": "restart", "targets": ["n1"]},
              {"t": 12_000, "node": None, "kind": "fault", "action": "crash", "targets": ["n2"]}]
    mark_faults(fig, faults)
    assert [a.yshift for a in fig.layout.annotations] == [-14, -28, -42, -14]
