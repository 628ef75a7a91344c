"""rocketlab: a faithful, teachable re-implementation of RocketMQ's store, HA replication and DLedger.

Subpackages (docs/architecture.md has the map): ``store`` (CommitLog and friends), ``ha`` (classic master-slave
replication), ``dledger`` (Raft election and replication), ``broker``, ``sim`` (deterministic runtime),
``net`` (real TCP runtime), ``trace`` (the event contract), ``analysis`` (Spark), ``viz``.
"""

__version__ = "0.1.0"
