"""The Spark readers know the client's events: a lab 08 run saved and read back with the trace contract's schema
gives the same duplicates as the run's own trace (Spark needs Java 17 or 21: skipped without, failed under CI)."""

from __future__ import annotations

import pytest

from rocketlab.analysis.readers import read_events
from rocketlab.scenarios import client_failover as cf

pytestmark = pytest.mark.spark


def test_a_saved_consumer_leaving_run_reads_back_with_its_client_events(spark, tmp_path):
    c = cf.build(2, duration_ms=15_000)
    try:
        info = cf.run_fault(c, "consumer-leaves", 2, 15_000)
        run = c.save(tmp_path / "leaves", stores=False)
        expected = cf.duplicates(c.events)
    finally:
        c.close()
    frame = read_events(spark, run)
    kinds = {r.kind: r["count"] for r in frame.groupBy("kind").count().collect()}
    assert {"client_route", "client_send", "client_rebalance", "client_pull", "client_consume", "client_commit",
            "pull_held", "pull_woken", "broker_registered"} <= set(kinds)
    consumed = frame.where("kind = 'client_consume' AND status = 'CONSUME_SUCCESS' AND topic NOT LIKE '%\\%%'")
    twice = {r.uniq_key for r in consumed.groupBy("uniq_key").count().where("count > 1").collect()}
    assert twice == set(expected) and twice
    commits = frame.where("kind = 'client_commit'").select("offset", "reason", "broker_name").collect()
    assert commits and {r.reason for r in commits} <= {"persist", "pull"}
    assert all(isinstance(r.offset, int) for r in commits) and info["target"] == "k1"
