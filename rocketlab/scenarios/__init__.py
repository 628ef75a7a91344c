"""Scenarios, schedules and stories: what runs *on* the cores and runtimes (they never import this).

* :mod:`~rocketlab.scenarios.registry` — the ``rocketlab sim`` registry (:class:`Scenario`,
  :class:`ScenarioArgs`, :class:`ScenarioResult`, :func:`register`, :func:`get_scenario`, :data:`SCENARIOS`,
  :func:`summarize`, :func:`node_table`);
* :mod:`~rocketlab.scenarios.smoke` — the pingpong smoke scenario;
* :mod:`~rocketlab.scenarios.master_slave` — classic HA losing its master (``ms-*``);
* :mod:`~rocketlab.scenarios.dledger_group` — looking at and driving a DLedger group (short timers,
  settled leader, appends, the recording checker);
* :mod:`~rocketlab.scenarios.schedules` — fault-and-append schedules as text;
* :mod:`~rocketlab.scenarios.dledger_schedules` — Figure 8 and DLedger #247 as schedules;
* :mod:`~rocketlab.scenarios.dledger` — the ``dledger-*`` scenarios (election, Figure 8, #247, churn);
* :mod:`~rocketlab.scenarios.controller_mode` — the ``controller-*`` scenarios (failover, #5663, the
  partitioned master, #9689, unclean election);
* :mod:`~rocketlab.scenarios.tour` — the stories of ``rocketlab demo`` and ``labs/00_tour.ipynb`` (their runs;
  the report is drawn above, in :mod:`rocketlab.labs_support.tour`);
* :mod:`~rocketlab.scenarios.broker_on_dledger`, :mod:`~rocketlab.scenarios.commitlog_store` — the builders
  that labs, graded tests and sample data share (a DLedger broker group and its classic store to upgrade
  from; the tick clock, a queue's messages, a record's fields).

Importing this package registers every scenario.
"""

from rocketlab.scenarios import (  # noqa: F401  (register their scenarios)
    client_failover,
    controller_mode,
    dledger,
    master_slave,
    smoke,
)
from rocketlab.scenarios.registry import (
    SCENARIOS,
    Scenario,
    ScenarioArgs,
    ScenarioResult,
    get_scenario,
    node_table,
    register,
    summarize,
)

__all__ = ["SCENARIOS", "Scenario", "ScenarioArgs", "ScenarioResult", "get_scenario", "node_table", "register",
           "summarize"]
