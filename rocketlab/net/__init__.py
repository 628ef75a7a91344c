"""The real runtime: the same sans-IO cores on asyncio TCP sockets, one OS process per node if wanted.

* :mod:`~rocketlab.net.peers` — DLedger-style peer lists; :mod:`~rocketlab.net.framing` — frames;
* :mod:`~rocketlab.net.runtime` — NetRuntime hosting one core; :mod:`~rocketlab.net.node` — the
  ``rocketlab node --config FILE`` entry point and its node kinds.
"""
