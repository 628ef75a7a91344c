"""Shared fixtures: one SparkSession for the whole run, seeds, temp run directories.

Long seed sweeps are marked ``slow`` and deselected; CI runs a bounded default. ``ROCKETLAB_FULL=1`` (or ``-m slow``)
runs the full sweeps.
"""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ["ROCKETLAB_LANG"] = "en"  # the tests read the kit's English, whatever the machine's locale (rocketlab.i18n);
# the language tests (tests/test_i18n*.py) set it themselves

FULL = os.environ.get("ROCKETLAB_FULL") == "1"


def pytest_collection_modifyitems(config, items):
    """Deselect ``slow`` tests unless asked for (``-m slow`` or ROCKETLAB_FULL=1)."""
    if FULL or "slow" in (config.getoption("-m") or ""):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession shared by every test that needs Spark (local[2])."""
    from rocketlab.analysis.session import get_spark

    session = get_spark(master="local[2]", app_name="rocketlab-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def wheel_env():
    """The kit installed from its wheel into a fresh venv outside the repository (tests/wheelenv.py), built
    once per session. Without a package index (pip cannot fetch the dependencies) it skips, except under
    CI=true."""
    from tests.wheelenv import wheel_venv

    try:
        return wheel_venv()
    except AssertionError as e:
        offline = ("No matching distribution", "Could not find a version", "Failed to establish a new connection",
                   "Network is unreachable", "Temporary failure in name resolution")
        if os.environ.get("CI") != "true" and any(text in str(e) for text in offline):
            pytest.skip(f"cannot install the wheel's dependencies here (no package index?): {str(e)[-300:]}")
        raise
