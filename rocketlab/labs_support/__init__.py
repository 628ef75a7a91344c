"""Small helpers the lab notebooks call, so that their cells stay one to three lines long.

Each module serves one lab (``master_slave`` for ``labs/01_master_slave.ipynb``). The helpers only use
the public API (:class:`rocketlab.sim.Cluster`, the broker and HA objects it exposes, the trace), and
everything they do is deterministic for a given seed.
"""
