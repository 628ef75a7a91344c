"""What can be graded: the labs, their exercises, and the graded tests (``@graded``).

A :class:`Lab` is a row of the lab table (:mod:`rocketlab.grading.suites.labs`, registered with
:func:`register_lab`): its exercise file, notebook, suite, what it needs, and its :class:`Exercise` rows,
each one function (or class) of ``labs/exercises/labNN_<topic>.py`` that plays a part of the kit at an
override point (:mod:`rocketlab.plugs`), with the kit's own version beside it. A
:class:`GradedTest` checks one exercise: a *unit* test calls it on a table of cases; a *scenario* test
plugs it into a simulated cluster and runs it for several seeds. The built-in tests live in
``rocketlab/grading/suites/labNN.py``; an instructor's hidden tests are Python files in a directory
given with ``--tests DIR`` that use the same decorator::

    from rocketlab.grading import graded

    @graded("lab03.handle_vote", points=2)
    def rejects_a_stale_candidate(ctx):
        ...  # ctx.impl is the learner's handle_vote; raise AssertionError("...") to fail

rocketlab's own addition: modelled on MIT 6.5840's tests and otter-grader's test files.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from rocketlab import plugs
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.workspace import home


@dataclass(frozen=True)
class Exercise:
    """One thing a learner writes: ``attribute`` of the lab's exercise file, plugged in at the override
    point ``id`` (declared by the component that calls it, :func:`rocketlab.plugs.point`)."""

    id: str
    attribute: str
    java: str
    """The Java method (or class) it models."""
    where: str
    """Where the kit calls it."""
    reference: Any
    """The kit's own version (what ``--reference`` grades, and what a submission may not delegate to)."""

    @property
    def lab(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Lab:
    """One graded lab: a row of the lab table (:mod:`rocketlab.grading.suites.labs`)."""

    id: str
    title: str
    exercise_file: str
    """The learner's file, in ``labs/exercises/``."""
    notebook: str
    """Its notebook, in ``labs/``."""
    suite: ModuleType
    """Its built-in graded tests (``rocketlab/grading/suites/labNN.py``)."""
    exercises: tuple[Exercise, ...]
    java: bool = False
    """Its graded tests start a JVM: the autograder's image gets Java, the sandbox a JVM's limits."""
    spark: Callable[..., Any] | None = None
    """``spark(app_name="...", **conf)``: a local Spark session, for labs whose functions take and return
    DataFrames (they cross the sandbox's boundary as rows); also keeps the lab out of the default mutation run."""


LABS: dict[str, Lab] = {}
"""Every graded lab by id, in the table's order."""
EXERCISES: dict[str, Exercise] = {}
"""Every exercise by id (its override point), derived from :data:`LABS`."""


def register_lab(lab: Lab) -> Lab:
    """Add a row of the lab table (its exercises' override points must have been declared)."""
    for e in lab.exercises:
        if e.lab != lab.id or e.id in EXERCISES:
            raise RocketlabError(f"lab table: exercise {e.id!r} of {lab.id} is misnamed or listed twice")
        if e.id not in plugs.points():
            raise RocketlabError(f"lab table: no component declares the override point {e.id!r}")
    LABS[lab.id] = lab
    EXERCISES.update((e.id, e) for e in lab.exercises)
    return lab


def load_labs() -> None:
    """Check, once the lab table has registered its rows (``rocketlab.grading`` imports the table,
    ``suites/labs.py``, and with it every built-in suite), that every test names a known exercise. The
    framework's modules never import the table: the table and the suites may use what each lab teaches
    (lab 07's Spark), the framework may not."""
    global _labs_loaded
    if not _labs_loaded:
        for test in TESTS.values():
            _known(test.exercise)
        _labs_loaded = True


def _known(exercise: str) -> None:
    if exercise not in EXERCISES:
        raise RocketlabError(_("graded: unknown exercise {exercise!r}; known: {known}").format(
            exercise=exercise, known=", ".join(EXERCISES)))


def learner_terms(exc: BaseException, exercise: str, attribute: str) -> str:
    """An exception raised while testing, in words a learner can act on."""
    text = getattr(exc, "text", None)
    if type(exc).__name__ == "SandboxError" and isinstance(text, str):
        return text  # already in the learner's terms, said by the sandbox
    if isinstance(exc, NotImplementedError):
        return _("{attribute} is not implemented yet (it raises NotImplementedError): write its body in "
                 "the lab's exercise file, then check it again.").format(attribute=attribute)
    tb = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in tb if submission_file is not None and f.filename == submission_file]
    where = _(" at line {line} of your file ({code})").format(line=mine[-1].lineno, code=mine[-1].line) if mine else ""
    last = tb[-1] if tb else None
    inside = _(" in {file}:{line} ({function})").format(file=Path(last.filename).name, line=last.lineno,
                                                        function=last.name) if last and not mine else ""
    return f"{type(exc).__name__}: {exc}{where}{inside}"


@dataclass
class Ctx:
    """What a graded test gets: the function under test, the seed (scenario tests), a place to keep
    the cluster it built (so a failure can be replayed in the viewer)."""

    impl: Any
    seed: int = 0
    clusters: list[Any] = field(default_factory=list)

    def keep(self, cluster: Any) -> Any:
        self.clusters.append(cluster)
        return cluster


@dataclass(frozen=True)
class GradedTest:
    """One graded test: ``fn(ctx)`` raises AssertionError (a message in the learner's terms) to fail."""

    name: str
    exercise: str
    points: float
    fn: Callable[[Ctx], Any]
    seeds: tuple[int, ...] | None = None  # None: a unit test; else the scenario's seeds
    time_limit_s: float = 60.0
    hidden: bool = False
    about: str = ""

    @property
    def kind(self) -> str:
        return "unit" if self.seeds is None else "scenario"

    @property
    def lab(self) -> str:
        return self.exercise.split(".", 1)[0]


TESTS: dict[str, GradedTest] = {}
submission_file: str | None = None  # set by the worker: frames of this file are the learner's
_loading_hidden = False
_labs_loaded = False


def graded(exercise: str, points: float = 1.0, *, seeds: range | tuple[int, ...] | list[int] | None = None,
           time_limit_s: float | None = None, name: str | None = None,
           about: str | None = None) -> Callable[[Callable[[Ctx], Any]], Callable[[Ctx], Any]]:
    """Register ``fn(ctx)`` as a graded test of ``exercise`` (``"lab03.handle_vote"``): a unit test,
    or with ``seeds`` a scenario run once per seed. Its name is ``exercise/function name``. ``about`` is
    the line a learner reads (marked ``N_(...)`` for the catalogue; the runner shows it translated), else
    the first paragraph of ``fn``'s docstring."""
    if _labs_loaded:  # the built-in suites are checked once the table has registered their exercises
        _known(exercise)
    if points <= 0:
        raise RocketlabError(_("graded: points must be > 0, got {points}").format(points=points))

    def register(fn: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
        full = f"{exercise}/{name or fn.__name__}"
        if full in TESTS and TESTS[full].fn.__code__ is not fn.__code__ and not (_loading_hidden and TESTS[full].hidden):
            raise RocketlabError(_("graded: two tests are named {name!r}").format(name=full))
        summary = about or inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0].replace("\n", " ")
        limit = time_limit_s if time_limit_s is not None else (60.0 if seeds is None else 120.0)
        TESTS[full] = GradedTest(full, exercise, float(points), fn, None if seeds is None else tuple(seeds),
                                 limit, _loading_hidden, summary)
        return fn
    return register


def load_builtin(lab: str) -> None:
    """Check that ``lab`` is a graded lab (its suite was registered with the lab table)."""
    if lab not in LABS:
        raise RocketlabError(_("unknown lab {lab!r}; the graded labs are {labs}").format(lab=lab, labs=", ".join(LABS)))


_hidden_lock = threading.Lock()
_hidden_loaded: dict[str, list[str]] = {}  # the directory loaded last -> its modules


def load_hidden(tests_dir: str | Path) -> list[str]:
    """Import every ``*.py`` in ``tests_dir`` as hidden tests; returns the module names. Once per
    directory and process (bulk mode grades many submissions, on several threads, with the same tests)."""
    root = Path(tests_dir)
    if not root.is_dir():
        raise RocketlabError(_("--tests {path}: not a directory").format(path=root))
    key = str(root.resolve())
    with _hidden_lock:
        if key not in _hidden_loaded:  # another directory's hidden tests are dropped first
            for name in [n for n, t in TESTS.items() if t.hidden]:
                del TESTS[name]
            modules = _load_hidden(root)
            _hidden_loaded.clear()
            _hidden_loaded[key] = modules
        return list(_hidden_loaded[key])


def _load_hidden(root: Path) -> list[str]:
    global _loading_hidden
    names = []
    _loading_hidden = True
    try:
        for path in sorted(root.glob("*.py")):
            name = f"rocketlab_hidden_tests.{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                raise RocketlabError(_("hidden tests {path}: {error}").format(path=path, error=f"{type(e).__name__}: {e}")) from e
            names.append(name)
    finally:
        _loading_hidden = False
    return names


def tests_of(lab: str, only: list[str] | None = None) -> list[GradedTest]:
    """The lab's tests in registration order, narrowed to names or exercises listed in ``only``
    (``lab03.handle_vote`` selects all of that exercise's tests; a full name selects one)."""
    chosen = [t for t in TESTS.values() if t.lab == lab]
    if only:
        unknown = [o for o in only if not any(t.name == o or t.exercise == o for t in chosen)]
        if unknown:
            raise RocketlabError(_("--only {names}: no such test or exercise in {lab}; known: {known}").format(
                names=", ".join(unknown), lab=lab, known=", ".join(t.name for t in chosen)))
        chosen = [t for t in chosen if t.name in only or t.exercise in only]
    return chosen


def exercise_file(lab: str, labs_dir: str | Path | None = None) -> Path:
    """The learner's exercise file of ``lab``: ``labs/exercises/`` of the workspace (or the checkout) the
    current directory is in, else ``./exercises/`` or ``./labs/exercises/``; never the installed kit's."""
    name = LABS[lab].exercise_file
    if labs_dir is not None:
        return Path(labs_dir) / "exercises" / name
    where = home()
    candidates = ([where / "labs" / "exercises" / name] if where is not None else []) + [
        Path.cwd() / "exercises" / name,  # a notebook running in labs/
        Path.cwd() / "labs" / "exercises" / name]
    return next((c for c in candidates if c.is_file()), candidates[0])
