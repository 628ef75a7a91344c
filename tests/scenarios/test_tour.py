"""The tour of ``rocketlab demo`` and labs/00_tour.ipynb tells the story it claims, for a fixed seed, and
the demo's report (drawn above the scenarios, in labs_support.tour) shows its three runs."""

from __future__ import annotations

from rocketlab.dledger.cli import iter_entries
from rocketlab.labs_support.tour import run_demo
from rocketlab.scenarios.tour import run_tour
from rocketlab.trace.rundir import iter_events, read_meta


def test_the_tour_fails_over_on_dledger_and_only_the_async_master_loses_acknowledged_messages(tmp_path):
    demo = run_demo(tmp_path, seed=1, puts=30)
    tour = demo.tour
    try:
        d = tour.dledger
        assert d.lost == 0 and d.acked == 40 and d.new_master not in (None, d.first_master)
        assert 4_000 < d.failover_ms < 10_000  # DLedger's default timers: 3 missed 2 s heartbeats + a vote
        assert d.new_term > d.first_term and d.rejoined_as.startswith("SLAVE (brokerId")
        assert tour.async_master.lost > 0 and tour.sync_master.lost == 0
        assert tour.async_master.acked == tour.sync_master.acked == 30
        assert all(len(s.cluster.violations) == 0 for s in (d, tour.async_master, tour.sync_master))
        lines = tour.lines()
        assert lines[0].startswith("1. DLedger broker group") and "lost 0 of 40" in lines[4]
        assert demo.report == tmp_path / "report.html" and demo.seconds >= tour.seconds
        html = demo.report.read_text()
        assert html.count("<h2 id='run-") == 3 and "dledger-failover" in html
        roles = {(e["node"], e["role"]) for e in iter_events(tmp_path / "dledger-failover") if e["kind"] == "role"}
        assert (d.new_master, "MASTER") in roles and (d.new_master, "LEADER") in roles
        meta = read_meta(tmp_path / "dledger-failover")
        assert meta["seed"] == 1 and meta["profile"] == "dledger-0.3.1.2"
        # as RocketMQ ships DLedger: magic-1 entries only (no NOOP entry, which no release writes)
        stores = sorted((tmp_path / "dledger-failover" / "nodes").glob("*/store/dledger-*"))
        magics = {e["magic"] for store in stores for e in iter_entries(str(store))}
        assert len(stores) == 3 and magics == {1}
    finally:
        tour.close()


def test_the_tour_is_the_same_for_the_same_seed(tmp_path):
    first = run_tour(tmp_path / "a", seed=4, puts=10)
    second = run_tour(tmp_path / "b", seed=4, puts=10)
    try:
        assert first.lines() == second.lines()
        assert not (tmp_path / "a" / "report.html").exists()  # the scenario draws nothing
    finally:
        first.close()
        second.close()
