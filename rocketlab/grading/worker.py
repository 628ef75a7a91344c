"""The grader's worker process: imports one submission and runs graded tests on it, one at a time.

Started by :mod:`rocketlab.grading.runner` as ``python -m rocketlab.grading.worker``; reads one JSON
request on stdin and writes one JSON line per event to the file descriptor named by
``ROCKETLAB_GRADER_FD`` (``ready`` or ``import_error``, then ``start`` and ``result`` per test). The
submission's code only ever runs here, so a test that loops, sleeps, exits or crashes costs this
process, never the grader: the runner kills it at the time limit and starts another for the rest.

Guards: what the submission prints is counted and cut (sys.stdout and sys.stderr are replaced during
each test); the kit's functions and classes are fingerprinted before the submission is imported and
after every test, and a submission that replaced one (monkey-patching the grader, the checkers or the
cluster) fails with the name of what it changed. This stops mistakes and casual tricks, not a
determined attacker with the same interpreter (no in-process guard can).
"""

from __future__ import annotations

import importlib.util
import inspect
import io
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

PRINT_LIMIT = 2_000


class CappedWriter(io.TextIOBase):
    """A text stream keeping the first ``limit`` characters and counting the rest."""

    def __init__(self, limit: int = PRINT_LIMIT) -> None:
        self.limit, self.kept, self.total = limit, [], 0

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            s = str(s)
        room = self.limit - min(self.total, self.limit)
        if room > 0:
            self.kept.append(s[:room])
        self.total += len(s)
        return len(s)

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        return "".join(self.kept)


def fingerprint() -> dict[str, int]:
    """id() of every function and class of the kit's (and the hidden tests') modules, and of the
    methods of the classes they define."""
    out: dict[str, int] = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "rocketlab" or name.startswith(("rocketlab.", "rocketlab_hidden_tests"))):
            continue
        for attr, value in list(vars(mod).items()):
            if not (callable(value) or isinstance(value, type)):
                continue
            out[f"{name}.{attr}"] = id(value)
            if isinstance(value, type) and value.__module__ == name:
                for a, v in list(vars(value).items()):
                    if callable(v) or isinstance(v, (staticmethod, classmethod, property)):
                        out[f"{name}.{attr}.{a}"] = id(v)
    return out


def tampered(before: dict[str, int]) -> list[str]:
    """What of ``before`` is now missing or a different object."""
    now = fingerprint()
    return sorted(k for k, v in before.items() if now.get(k) != v)


def signature_problem(impl: Any, reference: Any, attribute: str) -> str | None:
    """None if ``impl`` can be called the way the kit calls ``reference``, else why not."""
    try:
        ref = inspect.signature(reference)
        mine = inspect.signature(impl)
    except (TypeError, ValueError):
        return None
    params = [p for p in ref.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        mine.bind(*[None] * len(params))
        required = [p for p in params if p.default is p.empty]
        mine.bind(*[None] * len(required))
    except TypeError:
        want = ", ".join(p.name for p in params)
        return f"{attribute} must take ({want}); yours takes {mine}"
    return None


def _close(cluster: Any) -> None:
    try:
        cluster.close()
    except Exception:  # noqa: BLE001 - a cluster broken by the learner's code may not close cleanly
        pass


def main() -> int:
    out_fd = int(os.environ["ROCKETLAB_GRADER_FD"])
    write, dumps = os.write, json.dumps  # bound before any submission code runs

    def emit(**event: Any) -> None:
        data = (dumps(event, default=str) + "\n").encode()
        while data:
            data = data[write(out_fd, data):]

    request = json.loads(sys.stdin.readline())
    # the kit's own log (a broker's recovery warnings) is not the learner's output: without a handler Python
    # would write it to sys.stderr, which is captured below as "your code printed"
    logging.getLogger("rocketlab").addHandler(logging.NullHandler())
    from rocketlab import plugs
    from rocketlab.grading import registry
    from rocketlab.grading.registry import learner_terms

    registry.load_builtin(request["lab"])
    if request.get("tests_dir"):
        registry.load_hidden(request["tests_dir"])
    tests = {t.name: t for t in registry.tests_of(request["lab"])}
    for name in request["tests"]:
        if name not in tests:
            raise SystemExit(f"worker: unknown test {name}")
    before = fingerprint()
    module = None
    if not request.get("reference"):
        path = Path(request["submission"])
        registry.submission_file = str(path)
        printed = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = printed
        try:
            spec = importlib.util.spec_from_file_location(f"submission_{request['lab']}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except BaseException as e:  # noqa: BLE001 - SyntaxError, SystemExit, anything at import
            sys.stdout, sys.stderr = saved
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            emit(event="import_error", message=f"your file {path.name} did not import: {detail}")
            return 0
        finally:
            sys.stdout, sys.stderr = saved
        changed = tampered(before)
        if changed:
            emit(event="import_error", message="your file changed the kit while it was imported "
                 f"(monkey-patching is not allowed): {', '.join(changed[:5])}")
            return 0
    emit(event="ready")
    seed_override = request.get("seed")
    for name in request["tests"]:
        test = tests[name]
        exercise = registry.EXERCISES[test.exercise]
        emit(event="start", test=name)
        started = time.perf_counter()
        result: dict[str, Any] = {"event": "result", "test": name, "passed": False, "seed": None}
        printed = CappedWriter()
        saved = sys.stdout, sys.stderr
        try:
            reference = exercise.reference()
            impl = reference if module is None else getattr(module, exercise.attribute, None)
            problem = None
            if impl is None:
                problem = f"your file has no {exercise.attribute} (the exercise {exercise.id} needs it)"
            elif not callable(impl):
                problem = f"{exercise.attribute} must be a function or class, not {type(impl).__name__}"
            else:
                problem = signature_problem(impl, reference, exercise.attribute)
            if problem:
                result["message"] = problem
            else:
                seeds = (None,) if test.seeds is None else \
                    ((seed_override,) if seed_override is not None else test.seeds)
                sys.stdout = sys.stderr = printed
                failure = None
                for seed in seeds:
                    ctx = registry.Ctx(impl, seed if seed is not None else 0)
                    try:
                        with plugs.plugged({exercise.id: impl}):
                            test.fn(ctx)
                    except AssertionError as e:
                        failure = (seed, str(e) or "assertion failed")
                    except BaseException as e:  # noqa: BLE001 - the learner's code may raise anything
                        # a template is not a failing scenario: no seed, nothing to replay
                        failure = (None if isinstance(e, NotImplementedError) else seed,
                                   learner_terms(e, exercise.id, exercise.attribute))
                    finally:
                        for cluster in ctx.clusters:
                            _close(cluster)
                    if failure:
                        break
                sys.stdout, sys.stderr = saved
                if failure:
                    result["seed"], result["message"] = failure
                    result["kept_cluster"] = bool(ctx.clusters)
                else:
                    result["passed"] = True
                    result["message"] = "passed" if test.seeds is None else f"passed for {len(seeds)} seed(s)"
                result["seeds_run"] = len(seeds)
        finally:
            sys.stdout, sys.stderr = saved
        changed = tampered(before)
        if changed:
            result["passed"] = False
            result["message"] = ("your code changed the kit during this test (monkey-patching is not allowed): "
                                 f"{', '.join(changed[:5])}")
            before = fingerprint()
        result["printed_chars"] = printed.total
        result["printed"] = printed.text()
        result["duration_s"] = round(time.perf_counter() - started, 3)
        emit(**result)
    emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
