"""The real runtime: the same sans-IO cores on asyncio TCP sockets, one OS process per node if wanted.

* :mod:`~rocketlab.net.framing` — frames (peer lists are parsed by :mod:`rocketlab.peers`);
* :mod:`~rocketlab.net.runtime` — NetRuntime hosting one core; :mod:`~rocketlab.net.node` — the
  ``rocketlab node --config FILE`` entry point and the registry of node kinds (``NODE_KINDS``).
"""
