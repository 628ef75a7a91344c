"""Helpers of the built-in graded tests: decision tables compared case by case, failures in words."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.grading.registry import learner_terms
from rocketlab.grading.sandbox import RemoteInstance
from rocketlab.i18n import _


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


BATCH = 2_000
"""Cases per crossing of the sandbox's boundary (:class:`Calls`)."""


@dataclass(frozen=True)
class Calls:
    """The learner's function called on each case of a table: ``post(impl(*args(case)))``. Across the
    sandbox's boundary the cases cross in batches of :data:`BATCH` (one round trip each, not one per
    case: lab 03's vote table was 8,640); in-process (the reference) one call each."""

    impl: Any
    args: Callable[[Any], tuple[Any, ...]] = tuple
    post: Callable[[Any], Any] = lambda got: got

    def answers(self, cases: list[Any]) -> Iterator[tuple[Any, BaseException | None]]:
        """Each case's (answer, None) or (None, the exception it raised); NotImplementedError propagates."""
        many = getattr(self.impl, "map", None)
        for start in range(0, len(cases), BATCH if many else len(cases) or 1):
            chunk = cases[start:start + BATCH] if many else cases
            outcomes = many([self.args(c) for c in chunk]) if many else (self._one(c) for c in chunk)
            for ok, value in outcomes:
                if not ok and isinstance(value, NotImplementedError):
                    raise value
                if not ok:
                    yield None, value
                    continue
                try:
                    yield self.post(value), None
                except Exception as e:  # noqa: BLE001 - an answer of the wrong shape (tuple() of a number)
                    yield None, e

    def _one(self, case: Any) -> tuple[bool, Any]:
        try:
            return True, self.impl(*self.args(case))
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001 - the learner's code raised: that case's outcome
            return False, e


def compare_table(cases: Iterable[Any], call: Calls | Callable[[Any], Any], expected: Callable[[Any], Any],
                  describe: Callable[[Any], str], *, same: Callable[[Any, Any], bool] | None = None,
                  why: Callable[[Any, Any], str] | None = None) -> int:
    """Call the learner's function on every case (``call``: :class:`Calls`, batched across the sandbox, or
    a function of the case); AssertionError naming the first wrong case (and how many were wrong) if any
    answer differs from the reference's. Returns the number of cases."""
    same = same or (lambda a, b: a == b)
    cases = list(cases)
    answers = call.answers(cases) if isinstance(call, Calls) else (_single(call, c) for c in cases)
    n, wrong, first = 0, 0, None
    for case in cases:
        n += 1
        want = expected(case)
        try:
            got, error = next(answers)
        except NotImplementedError:
            raise
        except Exception as e:  # the sandbox broke down in this batch: name its first case
            raise AssertionError(_("{case} raised {error}").format(case=describe(case),
                                                                    error=learner_terms(e, '', ''))) from e
        if error is not None:  # the learner's code: say which case broke it
            raise AssertionError(_("{case} raised {error}").format(case=describe(case),
                                                                   error=learner_terms(error, '', ''))) from error
        if not same(got, want):
            wrong += 1
            if first is None:
                first = (case, got, want)
    if first is not None:
        case, got, want = first
        reason = f" ({why(case, want)})" if why else ""
        raise AssertionError(_("{wrong} of {n} cases wrong. First: {case} returned {got}, expected {want}{reason}")
                             .format(wrong=wrong, n=n, case=describe(case), got=_shown(got), want=_shown(want),
                                     reason=reason))
    return n


def _single(call: Callable[[Any], Any], case: Any) -> tuple[Any, BaseException | None]:
    try:
        return call(case), None
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001 - the learner's code raised: that case's outcome
        return None, e


def drain(parser: Any, chunks: list[Any], until: Any, *, feed: str = "receive_data", pull: str = "next_event",
          limit: int = 10_000) -> list[list[Any]]:
    """A sans-IO parser's reads: per chunk ``parser.feed(chunk)``, then ``parser.pull()`` until it returns
    ``until`` (NEED_DATA); what each chunk's pulls returned. Across the sandbox one crossing for all the
    chunks (a byte-at-a-time stream was thousands); an error the parser raised is raised here, and
    AssertionError if a chunk never reaches ``until`` within ``limit`` pulls."""
    if isinstance(parser, RemoteInstance):
        pulled, error, unfinished = parser._drain(feed, pull, chunks, until, limit)
    else:
        pulled, error, unfinished = _drain_here(parser, feed, pull, chunks, until, limit)
    if error is not None:
        raise error
    if unfinished:
        raise AssertionError(_("{pull} never returned {until} ({limit} events from one read)").format(
            pull=pull, until=repr(until), limit=f"{limit:,}"))
    return pulled


def _drain_here(parser: Any, feed: str, pull: str, chunks: list[Any], until: Any,
                limit: int) -> tuple[list[list[Any]], Exception | None, bool]:
    pulled: list[list[Any]] = []
    for chunk in chunks:
        getattr(parser, feed)(chunk)
        got: list[Any] = []
        pulled.append(got)
        for _pulled in range(limit):
            value = getattr(parser, pull)()
            if value is until:
                break
            got.append(value)
        else:
            return pulled, None, True
    return pulled, None, False


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


__all__ = ["Calls", "compare_table", "drain", "expect", "fields_of", "scratch_dir"]
