"""The grader's judge process: runs graded tests, with the submission's functions across a boundary.

Started by :mod:`rocketlab.grading.runner` as ``python -m rocketlab.grading.worker`` (or forked from the
grading process, :func:`serve`); reads one JSON request on stdin and writes one JSON line per event to the
file descriptor named by ``ROCKETLAB_GRADER_FD`` (``ready`` or ``import_error``, then ``start`` and ``result`` per test;
``grader_error`` when a sandbox could not be set up: the grader's failure, which fails the run, not a test).

The judge never imports the submission. It reads its source, checks statically that no exercise is
delegated to the kit's own reference (:mod:`rocketlab.grading.sandbox_static`), and starts a
:class:`~rocketlab.grading.sandbox.Sandbox` that runs it; the tests, the simulated cluster, the
comparisons and the verdicts all run here, with proxies that call the learner's functions in the
sandbox and get plain data back. A test that loops or sleeps costs the time limit (the runner kills
this process, and the sandbox's namespace dies with it); a sandbox that dies or talks garbage fails the
test it was in, and a fresh one serves the rest.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rocketlab import i18n, plugs
from rocketlab.grading import registry, sandbox_cpu
from rocketlab.grading.registry import learner_terms
from rocketlab.grading.sandbox import RemoteClass, RemoteFunction, Sandbox, SandboxError, SandboxSetupError
from rocketlab.grading.sandbox_static import delegations

PRINT_LIMIT = 2_000


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
        return i18n._("{attribute} must take ({want}); yours takes {mine}").format(attribute=attribute, want=want,
                                                                                  mine=mine)
    return None


def _close(cluster: Any) -> None:
    try:
        cluster.close()
    except Exception:  # noqa: BLE001 - a cluster broken by the learner's code may not close cleanly
        pass


def _signature(params: Any) -> inspect.Signature | None:
    """The signature the sandbox described (``[[name, kind, has_default], ...]``)."""
    if type(params) is not list:
        return None
    try:
        return inspect.Signature([inspect.Parameter(str(n), inspect._ParameterKind(int(k)),
                                                    default=None if d else inspect.Parameter.empty)
                                  for n, k, d in params])
    except (TypeError, ValueError):
        return None


def signature_problem_of(params: Any, reference: Any, attribute: str, is_class: bool) -> str | None:
    """:func:`signature_problem` for a function described by the sandbox."""
    mine = _signature(params)
    if mine is None:
        return None
    try:
        ref = inspect.signature(reference)
    except (TypeError, ValueError):
        return None
    wanted = [p for p in ref.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if is_class:
        wanted = [p for p in wanted if p.name != "self"]
        mine = mine.replace(parameters=[p for p in mine.parameters.values() if p.name != "self"])
    try:
        mine.bind(*[None] * len(wanted))
        mine.bind(*[None] * len([p for p in wanted if p.default is p.empty]))
    except TypeError:
        return i18n._("{attribute} must take ({want}); yours takes {mine}").format(
            attribute=attribute, want=", ".join(p.name for p in wanted), mine=mine)
    return None


class Judge:
    """The submission's side of the grading, seen from here: a sandbox that has loaded it."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.lab = request["lab"]
        self.path = Path(request["submission"])
        self.source = self.path.read_text(errors="replace")
        self.filename = self.path.name
        self.hide = list(request.get("hide") or [])
        self.delegated = delegations(self.source, self.lab)
        self.sandbox: Any = None
        self.names: dict[str, Any] = {}

    def start(self) -> None:
        """A fresh sandbox with the submission loaded (SandboxError if it does not import)."""
        if self.sandbox is not None:
            self.sandbox.stop()
        self.sandbox = Sandbox(self.lab, hide=self.hide)
        lab = registry.LABS.get(self.lab)
        points = {ex.id: ex.attribute for ex in lab.exercises} if lab is not None else {}
        names = self.sandbox.load(self.source, self.filename, points)
        self.names = names if type(names) is dict else {}

    def impl(self, exercise: Any, reference: Any) -> tuple[Any, str | None]:
        """The proxy for ``exercise``, or why the exercise cannot be graded."""
        if exercise.id in self.delegated:
            return None, self.delegated[exercise.id]
        info = self.names.get(exercise.attribute)
        if type(info) is not dict:
            return None, i18n._("your file has no {attribute} (the exercise {exercise} needs it)").format(
                attribute=exercise.attribute, exercise=exercise.id)
        kind = info.get("kind")
        if kind not in ("function", "class"):
            return None, i18n._("{attribute} must be a function or class, not a plain value").format(
                attribute=exercise.attribute)
        is_class = isinstance(reference, type)
        problem = signature_problem_of(info.get("params"), reference, exercise.attribute, is_class)
        if problem:
            return None, problem
        if is_class:
            return RemoteClass(self.sandbox, exercise.attribute), None
        return RemoteFunction(self.sandbox, exercise.attribute), None

    def output(self) -> tuple[str, int]:
        return self.sandbox.take_output() if self.sandbox is not None else ("", 0)

    def broken(self) -> bool:
        return self.sandbox is not None and self.sandbox.broken is not None

    def stop(self) -> None:
        if self.sandbox is not None:
            self.sandbox.stop()
            self.sandbox = None


def warm_up_spark(lab: str) -> None:
    """A lab whose tests use Spark (the lab table's ``spark``): start the judge's session (a JVM, some ten
    seconds) in a thread now, beside the sandbox's start and its own session's, not in the first test.
    A failure here is met again, and reported, where a test asks for the session."""
    make = registry.LABS[lab].spark if lab in registry.LABS else None
    if make is not None:
        # imported before the thread starts, so no other import meets a half-imported pyspark
        import pyspark.sql.functions  # noqa: F401  # lazy: Spark, only for a lab that uses it
        threading.Thread(target=_quietly, args=(make,), name="spark-warm-up", daemon=True).start()


def _quietly(make: Any) -> None:
    try:
        make()
    except Exception:  # noqa: BLE001, S110 - said again where a test asks for the session
        pass


def main() -> int:
    """The judge started as ``python -m rocketlab.grading.worker``: the request on stdin, events to the
    descriptor ``ROCKETLAB_GRADER_FD`` names."""
    return serve(json.loads(sys.stdin.readline()), int(os.environ["ROCKETLAB_GRADER_FD"]))


def serve(request: dict[str, Any], out_fd: int) -> int:
    """Grade ``request``'s tests, one JSON event a line to ``out_fd`` (also the entry of a judge the
    runner forked from a process that has the package imported: :func:`rocketlab.grading.runner.grade`)."""

    def emit(**event: Any) -> None:
        data = (json.dumps(event, default=str) + "\n").encode()
        while data:
            data = data[os.write(out_fd, data):]

    i18n.set_language(request.get("lang"))  # the failure messages in the runner's language, whatever the env
    sandbox_cpu.enable()  # this process is a judge: it and its sandbox take turns on one CPU
    if request.get("scratch"):  # the runner's directory in memory for the clusters' files (judge_scratch)
        tempfile.tempdir = str(request["scratch"])
    # the kit's own log (a broker's recovery warnings) is not the learner's output: without a handler Python
    # would write it to sys.stderr, which is captured below as "your code printed"
    logging.getLogger("rocketlab").addHandler(logging.NullHandler())

    registry.load_builtin(request["lab"])
    if request.get("tests_dir"):
        registry.load_hidden(request["tests_dir"])
    tests = {t.name: t for t in registry.tests_of(request["lab"])}
    for name in request["tests"]:
        if name not in tests:
            raise SystemExit(f"worker: unknown test {name}")
    warm_up_spark(request["lab"])
    judge = None if request.get("reference") else Judge(request)
    if judge is not None:
        try:
            judge.start()
        except SandboxSetupError as e:  # the grader's failure: the runner reports it as such, never a 0
            emit(event="grader_error", message=str(e))
            return 0
        except SandboxError as e:
            text, _ = judge.output()
            detail = e.text if not text.strip() else i18n._("{error}; it printed: {text}").format(
                error=e.text, text=text.strip()[-500:])
            emit(event="import_error", message=i18n._("your file {file} did not import: {detail}").format(
                file=judge.filename, detail=detail))
            judge.stop()
            return 0
        judge.output()  # what it printed while importing is not a test's
    emit(event="ready")
    seed_override = request.get("seed")
    stress = request.get("stress")
    try:
        for name in request["tests"]:
            emit(event="start", test=name)
            test = tests[name]
            if stress and test.seeds is not None:  # stress mode: seeds 0..N-1, to the first failing one
                test = dataclasses.replace(test, seeds=tuple(range(int(stress))))
            emit(**run_test(test, judge, seed_override, registry, plugs, learner_terms, SandboxError))
    except SandboxSetupError as e:  # a fresh sandbox for the next test could not be made
        emit(event="grader_error", message=str(e))
        return 0
    finally:
        if judge is not None:
            judge.stop()
    emit(event="done")
    return 0


def run_test(test: Any, judge: Judge | None, seed_override: int | None, registry: Any, plugs: Any,
             learner_terms: Any, SandboxError: type) -> dict[str, Any]:  # noqa: N803
    """One graded test: its result event."""
    exercise = registry.EXERCISES[test.exercise]
    started = time.perf_counter()
    result: dict[str, Any] = {"event": "result", "test": test.name, "passed": False, "seed": None}
    reference = exercise.reference
    if judge is not None and judge.broken():
        try:
            judge.start()
        except SandboxError as e:
            result.update(message=i18n._("your file could not be loaded again after the last test: {error}").format(
                error=e.text), seeds_run=0)
            return result
    impl, problem = (reference, None) if judge is None else judge.impl(exercise, reference)
    seeds: tuple[Any, ...] = (None,) if test.seeds is None else \
        ((seed_override,) if seed_override is not None else test.seeds)
    kept = False
    if problem:
        result["message"] = problem
        seeds = ()
    else:
        failure = None
        for seed in seeds:
            ctx = registry.Ctx(impl, seed if seed is not None else 0)
            try:
                with plugs.plugged({exercise.id: impl}):
                    test.fn(ctx)
            except AssertionError as e:
                failure = (seed, str(e)[:4000] or i18n._("assertion failed"))
            except SandboxError as e:
                failure = (None if e.protocol else seed, e.text)
            except BaseException as e:  # noqa: BLE001 - the learner's answer may break the kit anywhere
                failure = (None if isinstance(e, NotImplementedError) else seed,
                           learner_terms(e, exercise.id, exercise.attribute))
            finally:
                for cluster in ctx.clusters:
                    _close(cluster)
            kept = bool(ctx.clusters)
            if failure:
                break
        if failure:
            result["seed"], result["message"] = failure
            result["kept_cluster"] = kept
        else:
            result["passed"] = True
            result["message"] = i18n._("passed") if test.seeds is None else i18n.ngettext(
                "passed for {n} seed", "passed for {n} seeds", len(seeds)).format(n=len(seeds))
    printed, total = judge.output() if judge is not None else ("", 0)
    result["seeds_run"] = len(seeds)
    result["printed_chars"] = total
    result["printed"] = printed[:PRINT_LIMIT]
    result["duration_s"] = round(time.perf_counter() - started, 3)
    return result


if __name__ == "__main__":
    sys.exit(main())
