"""Failover as an application sees it (issue 39, item 3): the unchanged 4.9.5 producer and a push consumer
across the SIGKILL of the master, finding the new master through the name server; 0 acknowledged sends lost, and
tag-filtered push subscribers receive exactly their tags.

CI: the kit's DLedger broker group and its controller mode (no 4.9.5 twin). The same DLedger scenario on the
real Java brokers (five JVMs: name server, three brokers, the client) runs with ROCKETLAB_FULL=1; its figures
are in benchmarks/results/client_app.json (benchmarks/bench_client_app.py --failover).
"""

from __future__ import annotations

import os

import pytest

from rocketlab.oracle.failover import measure_failover
from tests.oracle.conftest import need_broker_java

pytestmark = pytest.mark.realnet
FULL = os.environ.get("ROCKETLAB_FULL") == "1"


def _check(result) -> None:
    print(result.as_dict())
    assert result.lost == 0, result
    assert result.new_master != result.killed
    assert result.send_ok > 0 and result.kill_to_first_send_ok_s < 30, result
    assert result.kill_to_first_consumed_s >= 0, result
    assert (result.tag_wrong, result.tag_lost) == (0, 0), result  # tag-filtered subscribers: exactly their tags


@pytest.mark.skipif(not FULL, reason="five JVMs for ~30 s: ROCKETLAB_FULL=1")
def test_java_dledger_group_failover_loses_no_acknowledged_send(tmp_path):
    _check(measure_failover(need_broker_java(), tmp_path, "java", "dledger"))


@pytest.mark.parametrize("layout", ["dledger", "controller"])
def test_kit_group_failover_loses_no_acknowledged_send(tmp_path, layout):
    _check(measure_failover(need_broker_java(), tmp_path, "kit", layout, before_s=2.0, after_s=1.0))
