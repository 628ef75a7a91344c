"""Override points: where a learner's function replaces one of the kit's own (the graded labs).

A component declares each point it offers with :func:`point` (once, at import: ``HANDLE_VOTE_PLUG =
plugs.point("lab03.handle_vote")`` in the elector's module) and asks :func:`resolve` each time it needs the
piece, passing its own function as the default. A function plugged in with :func:`plugged` then runs inside
the real CommitLog, HA client, elector or pusher for the duration of a with-block; :func:`install` keeps it
until :func:`clear` (a replay opened in the cluster viewer, whose forks must run the same code). With nothing
plugged, :func:`resolve` is one lookup in an empty dict. Which exercise plays which point, and the kit's own
version of each, is the grader's table (:mod:`rocketlab.grading.suites.labs`); this module is only the mechanism.
:func:`uninstall` takes back one point installed earlier (a replay's cluster closed).

This module is rocketlab's own addition (nothing in RocketMQ or DLedger corresponds to it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F")

_points: set[str] = set()
_active: dict[str, Any] = {}


def point(name: str) -> str:
    """Declare the override point ``name`` (by the module that resolves it); returns ``name``."""
    _points.add(name)
    return name


def points() -> frozenset[str]:
    """Every override point declared so far (by the modules imported so far)."""
    return frozenset(_points)


def resolve(name: str, default: F) -> F:
    """The function plugged in at ``name``, else ``default`` (the kit's own)."""
    return _active.get(name, default)


def _check(overrides: Mapping[str, Any]) -> None:
    unknown = sorted(set(overrides) - _points)
    if unknown:
        raise KeyError(f"unknown override point(s) {unknown}; known: {sorted(_points)}")
    for name, fn in overrides.items():
        if not callable(fn):
            raise TypeError(f"override {name!r} must be callable, got {type(fn).__name__}")


@contextmanager
def plugged(overrides: Mapping[str, Callable[..., Any]]) -> Iterator[None]:
    """Use ``overrides`` (point name -> function) inside the block; the previous state after it."""
    _check(overrides)
    saved = dict(_active)
    _active.update(overrides)
    try:
        yield
    finally:
        _active.clear()
        _active.update(saved)


def install(overrides: Mapping[str, Callable[..., Any]]) -> None:
    """Use ``overrides`` from now on (until :func:`clear`)."""
    _check(overrides)
    _active.update(overrides)


def preset(overrides: Mapping[str, Any]) -> None:
    """Use ``overrides`` from now on, at points the components declaring them may not have declared yet (the
    grader's sandbox: a submission that calls the kit's component, not its reference, reaches its own code
    again); values that are not callable are left out."""
    _active.update({name: fn for name, fn in overrides.items() if callable(fn)})


def uninstall(names: list[str]) -> None:
    """Stop using what :func:`install` plugged in at ``names`` (the kit's own back there only)."""
    for name in names:
        _active.pop(name, None)


def clear() -> None:
    """Back to the kit's own functions everywhere."""
    _active.clear()


def active() -> dict[str, Any]:
    """What is plugged in now (a copy)."""
    return dict(_active)
