"""Fixtures for the viz tests: the hand-written traces and one short real pingpong run with faults."""

from __future__ import annotations

import pytest

from rocketlab.sim import Cluster
from tests.viz.sample_traces import dledger_failover, ha_sync_master


def faulty_pingpong() -> Cluster:
    """3 pingpong nodes on the unreliable network: crash n1, cut n0 from n2, heal, restart, pause n2."""
    c = Cluster.pingpong(nodes=3, seed=1, network="unreliable", scenario="viz-test")
    c.run_for(1000)
    c.crash("n1")
    c.run_for(500)
    c.partition(["n0"], ["n2"])
    c.run_for(300)
    c.heal()
    c.restart("n1")
    c.pause("n2")
    c.run_for(200)
    c.resume("n2")
    c.run_for(500)
    return c


@pytest.fixture(scope="session")
def pingpong_run() -> Cluster:
    return faulty_pingpong()


@pytest.fixture
def dledger_events() -> list[dict]:
    return dledger_failover()


@pytest.fixture
def ha_events() -> list[dict]:
    return ha_sync_master()
