"""Fixtures for the DLedger tests."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rocketlab.dledger import DLedgerConfig
from rocketlab.dledger.member_state import MemberState

from .helpers import make_config


@pytest.fixture
def config() -> DLedgerConfig:
    return make_config()


@pytest.fixture
def rng() -> random.Random:
    return random.Random("test")


@pytest.fixture
def member_state(tmp_path: Path, config: DLedgerConfig) -> MemberState:
    return MemberState(config, tmp_path)
