"""The deterministic runtime: virtual clock, simulated network with faults, the Cluster facade.

* :mod:`~rocketlab.sim.kernel` — Scheduler (virtual ms clock, total event order);
* :mod:`~rocketlab.sim.network` — NetworkModel (labrpc's reliable / unreliable / reordering /
  long-delays modes, latency distributions);
* :mod:`~rocketlab.sim.runtime` — SimRuntime hosting sans-IO cores (connections a crash closes
  (``on_peer_closed``), crash / host down / restart / pause / partition / drop), with
  :mod:`~rocketlab.sim.messages` (messages, requests, replies), :mod:`~rocketlab.sim.streams` (byte
  streams) and :mod:`~rocketlab.sim.node` (SimNode, one simulated process);
* :mod:`~rocketlab.sim.faults` — fault schedules as data (the words: :mod:`rocketlab.trace.faults`);
* :mod:`~rocketlab.sim.cluster` — Cluster, the facade of docs/using.md;
* :mod:`~rocketlab.sim.systems` — the systems a Cluster is built as (``Cluster.dledger(...)`` and the
  others) and how each takes puts and pulls.

Named scenarios for ``rocketlab sim`` live above the runtime, in :mod:`rocketlab.scenarios`.
"""

from rocketlab.sim.cluster import Checker, Cluster
from rocketlab.sim.faults import Fault, FaultSchedule
from rocketlab.sim.network import NETWORK_MODES, Latency, NetworkModel

__all__ = ["Checker", "Cluster", "Fault", "FaultSchedule", "Latency", "NETWORK_MODES", "NetworkModel"]
