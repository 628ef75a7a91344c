"""The chaos campaign's fixtures: network namespaces need root and ``ip netns``; without them a test skips
saying why (and fails under ``CI=true``, where ``.ci/run`` runs as root with iproute2)."""

from __future__ import annotations

import os

import pytest

from rocketlab.chaos.netns import available


def need_netns() -> None:
    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"network namespaces are required under CI=true: {why}", pytrace=False)
        pytest.skip(f"no network namespaces here: {why}")
