"""Helpers of the built-in graded tests: decision tables compared case by case, failures in words."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocketlab.grading.registry import learner_terms


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def compare_table(cases: Iterable[Any], call: Callable[[Any], Any], expected: Callable[[Any], Any],
                  describe: Callable[[Any], str], *, same: Callable[[Any, Any], bool] | None = None,
                  why: Callable[[Any, Any], str] | None = None) -> int:
    """Call the learner's function on every case; AssertionError naming the first wrong case (and how
    many were wrong) if any answer differs from the reference's. Returns the number of cases."""
    same = same or (lambda a, b: a == b)
    n, wrong, first = 0, 0, None
    for case in cases:
        n += 1
        want = expected(case)
        try:
            got = call(case)
        except NotImplementedError:
            raise
        except Exception as e:  # the learner's code: say which case broke it
            raise AssertionError(f"{describe(case)} raised {learner_terms(e, '', '')}") from e
        if not same(got, want):
            wrong += 1
            if first is None:
                first = (case, got, want)
    if first is not None:
        case, got, want = first
        reason = f" ({why(case, want)})" if why else ""
        raise AssertionError(f"{wrong} of {n} cases wrong. First: {describe(case)} returned {_shown(got)}, "
                             f"expected {_shown(want)}{reason}")
    return n


def expect(condition: bool, message: str) -> None:
    """Fail the test with ``message`` unless ``condition``."""
    if not condition:
        raise AssertionError(message)


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fields_of(obj: Any, names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """``obj``'s named attributes as a tuple (None if it lacks one): compares a learner's answer with
    the reference's whatever class it is."""
    try:
        return tuple(getattr(obj, n) for n in names)
    except AttributeError:
        return None


__all__ = ["compare_table", "expect", "fields_of", "scratch_dir"]
