"""Fixtures for the store tests: a fake millisecond clock and a factory of small, thread-free stores."""

from __future__ import annotations

import pytest

from rocketlab.store import MessageStore
from tests.store.helpers import SMALL, FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_store(tmp_path, clock):
    """``open_store(root=None, threads=False, **options)``: a store with small files (closed at teardown)."""
    opened = []

    def factory(root=None, threads=False, **options):
        store = MessageStore.open(root or tmp_path / "store", clock=clock, threads=threads, **{**SMALL, **options})
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.shutdown()
