"""Small helpers the lab notebooks call, so that their cells stay one to three lines long.

Each module serves one lab (``tour`` for ``labs/00_tour.ipynb``, ``master_slave`` for
``labs/01_master_slave.ipynb``). The helpers only use the public API (:class:`rocketlab.sim.Cluster`,
the scenarios and stories of :mod:`rocketlab.scenarios`, the trace), and everything they do is
deterministic for a given seed. Run directories are emptied with :func:`rocketlab.trace.rundir.fresh_dir`.
"""
