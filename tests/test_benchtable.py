"""The table ``rocketlab bench`` ends with: ratios and met/missed computed from the recorded numbers."""

from __future__ import annotations

import json

import pytest

from rocketlab.benchtable import evaluate, event_budget_us, load_rows, render, summary_row
from rocketlab.errors import RocketlabError


def test_targets_on_the_value_and_on_the_ratio_are_judged_from_the_numbers():
    value = evaluate(summary_row("appends", 1300, "appends/s", 4700, "1 member", target=5000))
    assert value["met"] is False and value["ratio"] == pytest.approx(1300 / 4700)
    ratio = evaluate(summary_row("catch-up", 600, "MiB/s", 1000, "raw socket", target=0.5, target_on="ratio"))
    assert ratio["met"] is True and ratio["ratio"] == 0.6
    plain = evaluate(summary_row("off", 6.1, "sim ms/wall ms"))
    assert plain["met"] is None and plain["ratio"] is None


def test_a_ratio_target_needs_a_baseline_and_target_on_is_checked():
    with pytest.raises(RocketlabError, match="needs a baseline"):
        summary_row("x", 1, "u", target=0.5, target_on="ratio")
    with pytest.raises(RocketlabError, match="target_on"):
        summary_row("x", 1, "u", 1, target=1, target_on="median")


def test_load_rows_reads_the_named_results_and_render_shows_met_and_missed(tmp_path):
    rows = [summary_row("sim speed", 4.6, "sim ms/wall ms", 3.3, "serialised", target=10),
            summary_row("catch-up", 600, "MiB/s", 1000, "raw socket", target=0.5, target_on="ratio")]
    (tmp_path / "dledger.json").write_text(json.dumps({"name": "dledger", "summary": rows}))
    (tmp_path / "old.json").write_text(json.dumps({"name": "old", "results": {}}))  # before summaries
    loaded = load_rows(tmp_path, ["dledger", "old"])
    assert [r["met"] for r in loaded] == [False, True]
    table = render(loaded).splitlines()
    assert table[0].split() == ["benchmark", "figure", "value", "baseline", "(same", "run)", "ratio", "target", "met"]
    assert "MISSED" in table[2] and ">= 10 sim ms/wall ms" in table[2] and "1.39x" in table[2]
    assert table[3].rstrip().endswith("met") and ">= 0.5x baseline" in table[3]
    assert load_rows(tmp_path, ["other"]) == [] and render([]).count("\n") == 1


def test_an_unreadable_results_file_is_named(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(RocketlabError, match="broken.json: not a readable results file"):
        load_rows(tmp_path)


def test_the_recorded_results_of_the_repository_tabulate():
    from pathlib import Path

    results = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
    rows = load_rows(results)
    assert {r["benchmark"] for r in rows} >= {"sim", "dledger", "figure16", "ha", "store"}
    assert all(r["met"] in (True, False, None) for r in rows)


def test_a_before_package_comes_from_git_history_and_runs_beside_this_one(tmp_path):
    """The benchmarks' same-run "before": the package as of a commit, run in a subprocess (the helpers of
    ``benchmarks/_common.py``); an unknown commit gives None, not an error."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout: the benchmarks skip their 'before' rows too")
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        from _common import REPO_ROOT, package_at, run_with_package
    finally:
        sys.path.remove(str(root / "benchmarks"))
    before = package_at(head.stdout.strip(), tmp_path)
    assert before is not None and (before / "rocketlab" / "dledger" / "server.py").is_file()
    assert package_at(head.stdout.strip(), tmp_path) == before  # kept for later runs
    assert package_at("0" * 40, tmp_path) is None
    code = "import json, rocketlab; print('noise'); print(json.dumps({'at': rocketlab.__file__}))"
    assert run_with_package(before, code)["at"].startswith(str(before))
    assert run_with_package(REPO_ROOT, code)["at"].startswith(str(REPO_ROOT))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_with_package(before, "1 / 0")


def test_an_event_budget_shares_what_the_target_leaves_after_the_fixed_cost():
    # 100 trials/s: 10 ms a trial; 2 ms to build; 8 ms over 80 events = 100 us each
    assert event_budget_us(100, 80, fixed_s=0.002) == pytest.approx(100.0)
    # 10 sim ms per wall ms is 10,000 sim ms a second; at 10 events per sim ms, 10 us each
    assert event_budget_us(10_000, 10) == pytest.approx(10.0)
    assert event_budget_us(1000, 80, fixed_s=0.002) is None  # the build alone takes longer than 1 ms
    with pytest.raises(RocketlabError, match="positive"):
        event_budget_us(0, 80)
