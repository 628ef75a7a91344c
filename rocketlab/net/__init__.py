"""The real runtime: the same sans-IO cores on asyncio TCP sockets, one OS process per node if wanted.

* the wire is RocketMQ remoting (:mod:`rocketlab.remoting`), so Java members and clients talk to ours;
* :mod:`~rocketlab.net.runtime` — NetRuntime hosting one core; :mod:`~rocketlab.net.client` —
  NetClient, a client of a node's port; :mod:`~rocketlab.net.node` — the ``rocketlab node --config
  FILE`` entry point and the registry of node kinds (``NODE_KINDS``; ``EXEC_KINDS`` for programs that take
  the process over, such as the real Java DLedger member ``java-dledger`` that :mod:`rocketlab.oracle`
  registers); :mod:`~rocketlab.net.families` — ``ALL_FAMILIES``, every message family, for a codec
  that must read any node's messages. Peer lists are parsed by :mod:`rocketlab.peers`.
"""
