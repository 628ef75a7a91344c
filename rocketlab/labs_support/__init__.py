"""Small helpers the lab notebooks call, so that their cells stay one to three lines long.

Each module serves one lab (``tour`` for ``labs/00_tour.ipynb``, ``master_slave`` for
``labs/01_master_slave.ipynb``). The helpers only use the public API (:class:`rocketlab.sim.Cluster`,
the scenarios and stories of :mod:`rocketlab.scenarios`, the trace), and everything they do is
deterministic for a given seed. Run directories are emptied with :func:`rocketlab.trace.rundir.fresh_dir`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def kit_warnings_hidden(level: int = logging.ERROR) -> Iterator[None]:
    """Inside the block, the kit's ``rocketlab`` loggers pass on only records of ``level`` and above.

    The stores log what a broker logs (a recovery that cut bytes, for one) as warnings; with no logging
    configured, Python prints those on stderr. A helper that returns the same report for the lab to print
    runs the step inside this block, so that a notebook shows the report once, where the lab explains it.
    """
    logger = logging.getLogger("rocketlab")
    saved = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(saved)
