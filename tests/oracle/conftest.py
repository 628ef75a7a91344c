"""The Java oracle's fixtures: the real RocketMQ 4.9.5 / 5.3.3 found through ``ROCKETLAB_JAVA_4`` /
``ROCKETLAB_JAVA_5`` (see :mod:`rocketlab.oracle`), and the 4.9.5 client, name server and broker through
``ROCKETLAB_JAVA_BROKER`` (:mod:`rocketlab.oracle.client_jvm`). Without it a test skips, saying why; under
``CI=true`` (where ``.ci/run`` sets them) it fails."""

from __future__ import annotations

import os
from typing import TypeVar

import pytest

from rocketlab.oracle.client_jvm import BrokerJava, find_broker_java
from rocketlab.oracle.jvm import Oracle, find_oracle

T = TypeVar("T")


def need(found: tuple[T | None, str], what: str) -> T:
    """What a ``find_*`` found, or skip saying why it is missing (fail under CI=true: ``what`` is required)."""
    value, why = found
    if value is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{what} required under CI=true: {why}", pytrace=False)
        pytest.skip(why)
    return value


def need_oracle(release: str) -> Oracle:
    return need(find_oracle(release), f"the RocketMQ {release} oracle is")


@pytest.fixture(scope="session")
def oracle4() -> Oracle:
    return need_oracle("4.9.5")


@pytest.fixture(scope="session")
def oracle5() -> Oracle:
    return need_oracle("5.3.3")


@pytest.fixture(scope="session", params=["4.9.5", "5.3.3"])
def oracle(request) -> Oracle:
    """Each release in turn."""
    return need_oracle(request.param)


# --------------------------------------------------------------------------------- 4.9.5 client, name server, broker
def need_broker_java() -> BrokerJava:
    return need(find_broker_java(), "the RocketMQ 4.9.5 client/name server/broker are")


@pytest.fixture(scope="session")
def broker_java() -> BrokerJava:
    return need_broker_java()
