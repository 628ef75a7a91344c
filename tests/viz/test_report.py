"""rocketlab.viz.report: one offline HTML file with every figure a run can feed and its summary."""

from __future__ import annotations

import re

from rocketlab.viz.report import leaders_at_end, load_runs, write_report
from tests.viz.sample_traces import TraceBuilder

PLOTLY_BUNDLE = re.compile(r"plotly\.js v\d+\.\d+\.\d+")


def with_violation(events):
    b = TraceBuilder()
    b.events = [dict(e) for e in events]
    b.emit(3801, "n2", "violation", invariant="election_safety", detail="n0 and n2 both lead term 3")
    return b.done()


def test_report_holds_each_runs_figures_and_plotly_js_once(tmp_path, dledger_events, ha_events, pingpong_run):
    run_dir = pingpong_run.save(tmp_path / "pingpong-run")
    path = write_report(tmp_path / "out" / "report.html",
                        {"failover": with_violation(dledger_events), "sync": ha_events, "smoke": run_dir},
                        title="Three runs <check>")
    page = path.read_text()
    assert len(PLOTLY_BUNDLE.findall(page)) == 1
    assert page.count("window.PlotlyConfig") == 1
    assert "<script src=" not in page and "<link " not in page  # nothing fetched: opens offline
    assert "<title>Three runs &lt;check&gt;</title>" in page
    expected = {"run-0-roles", "run-0-votes", "run-0-progress", "run-0-messages", "run-0-votes-t1",
                "run-0-votes-t2", "run-0-votes-t3", "run-0-cluster", "run-1-roles", "run-1-progress",
                "run-1-latency", "run-2-roles", "run-2-messages", "run-2-cluster"}
    drawn = set(re.findall(r'<div id="(run-\d+-[\w-]+)"', page))
    assert drawn == expected
    assert page.count("Plotly.newPlot(") == len(expected)
    assert page.count("id='rocketlab-viewer-src'") == 1  # the viewer's code once, a viewer per run
    assert re.findall(r"data-rocketlab-film='(run-\d+-viewer)-film'", page) == ["run-0-viewer", "run-1-viewer",
                                                                                "run-2-viewer"]


def test_report_summary_counts_kinds_lists_faults_and_violations(tmp_path, dledger_events):
    page = write_report(tmp_path / "r.html", {"failover": with_violation(dledger_events)}).read_text()
    assert "<tr><td>vote_request</td><td class='num'>12</td></tr>" in page
    assert "Faults (4)" in page and "t=1000 - fault action=crash targets=[n1]" in page
    assert "Invariant violations (1)" in page and "n0 and n2 both lead term 3" in page
    assert "Not drawn, this run has no events for: put latency (put)." in page


def test_report_takes_run_directories_and_is_byte_for_byte_repeatable(tmp_path, pingpong_run):
    run_dir = pingpong_run.save(tmp_path / "seed-1")
    first = write_report(tmp_path / "a.html", [run_dir], "same").read_text()
    second = write_report(tmp_path / "b.html", [run_dir], "same").read_text()
    assert first == second
    assert "<a href='#run-0'>seed-1</a>" in first
    assert "seed <code>1</code>" in first and "scenario <code>viz-test</code>" in first
    assert "network <code>unreliable (" in first


def test_runs_load_from_clusters_and_event_lists(pingpong_run, ha_events):
    views = load_runs({"live": pingpong_run, "list": ha_events})
    assert [v.name for v in views] == ["live", "list"]
    assert views[0].meta["seed"] == 1 and len(views[0].records) == len(pingpong_run.events)
    assert leaders_at_end(views[1].records) == ["m0"]


def test_a_report_of_an_empty_run_draws_nothing_and_says_why(tmp_path):
    page = write_report(tmp_path / "empty.html", {"nothing": []}).read_text()
    assert "Plotly.newPlot(" not in page and "no faults injected" in page
