"""The grader inside a notebook: ``check("lab03.handle_vote")`` and ``replay(test, seed)``.

:func:`check` is otter-grader's ``grader.check``: it grades one exercise's public tests on the
learner's file (its code in a sandbox process, so an endless loop only costs the time limit) and shows a compact
table, green for passed and red for failed, with the learner-terms explanation and, for a failed
scenario, the seed and the line that replays it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab import plugs
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry
from rocketlab.grading.runner import GradeReport, grade
from rocketlab.i18n import _
from rocketlab.sim.kernel import HorizonReached
from rocketlab.sim.replay import stop_at
from rocketlab.templating import render


@dataclass
class CheckResult:
    """What :func:`check` returns: the report, shown as a table in Jupyter and as text elsewhere."""

    exercise: str
    report: GradeReport

    @property
    def passed(self) -> bool:
        return self.report.all_passed

    def __repr__(self) -> str:
        r = self.report
        lines = [f"{self.exercise}: " + _("{score}/{max_score} points").format(score=f"{r.score:g}",
                                                                               max_score=f"{r.max_score:g}")]
        for t in r.tests:
            lines.append(f"  {_('PASS') if t.passed else _('FAIL')} {t.name.split('/', 1)[1]} "
                         f"({t.score:g}/{t.max_score:g}): {t.message}")
            if t.replay:
                lines.append("       " + _("replay: {command}").format(command=t.viewer or t.replay))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The table Jupyter shows (``templates/check.html.j2``)."""
        r = self.report
        tests = [{"passed": t.passed, "name": t.name.split("/", 1)[1], "score": f"{t.score:g}",
                  "max_score": f"{t.max_score:g}", "message": t.message, "replay": t.viewer or t.replay}
                 for t in r.tests]
        return render("rocketlab.grading", "check.html.j2", exercise=self.exercise, submission=r.submission,
                      java=registry.EXERCISES[self.exercise].java, score=f"{r.score:g}",
                      max_score=f"{r.max_score:g}", tests=tests).strip()


def check(exercise: str, submission: str | Path | None = None, *, reference: bool = False) -> CheckResult:
    """Grade ``exercise``'s public tests on ``submission`` (default: ``labs/exercises/`` file of its lab)."""
    if exercise not in registry.EXERCISES:
        raise RocketlabError(f"check: unknown exercise {exercise!r}; known: {', '.join(registry.EXERCISES)}")
    lab = registry.EXERCISES[exercise].lab
    report = grade(lab, submission, reference=reference, only=[exercise], public_only=True)
    return CheckResult(exercise, report)


def _load_submission(lab: str, submission: str | Path | None) -> Any:
    path = Path(submission) if submission is not None else registry.exercise_file(lab)
    spec = importlib.util.spec_from_file_location(f"submission_replay_{lab}", path)
    if spec is None or spec.loader is None:
        raise RocketlabError(f"replay: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replay(test: str, seed: int, submission: str | Path | None = None, *, reference: bool = False,
           at_ms: int | None = None) -> Any:
    """Run scenario ``test`` for ``seed`` in this process with the submission's function plugged in,
    and return the cluster it built (failure or not), e.g. for ``ClusterView(replay(...))``: the viewer
    opens where the test failed, the failure marked. ``at_ms`` stops the run at that instant (how the
    viewer goes back in it).

    It says what it plugged in (``rocketlab.plugs.install``, so the viewer's forks run the same code) and
    takes it back out when the cluster is closed - ``with replay(...) as cluster:``, or the viewer's
    ``close()`` - or at ``rocketlab.plugs.clear()``. Runs in this process: no time limit."""
    lab = test.split(".", 1)[0]
    registry.load_builtin(lab)
    spec = registry.TESTS.get(test)
    if spec is None or spec.seeds is None:
        raise RocketlabError(f"replay: {test!r} is not a scenario test")
    exercise = registry.EXERCISES[spec.exercise]
    path = None if reference else Path(submission) if submission is not None else registry.exercise_file(lab)
    impl = exercise.reference if path is None else getattr(_load_submission(lab, path), exercise.attribute)
    plugs.install({exercise.id: impl})
    if at_ms is not None:
        return _replay_to(spec.fn, impl, seed, at_ms)
    print(f"replay: {exercise.attribute} of {'the kit (reference)' if path is None else path} plugged in at "
          f"{exercise.id} until this cluster or its viewer is closed (or rocketlab.plugs.clear())")
    ctx = registry.Ctx(impl, seed)
    failure: str | None = None
    try:
        spec.fn(ctx)
        print(f"{test} seed {seed}: passed")
    except AssertionError as e:
        failure = str(e)
    except Exception as e:  # noqa: BLE001 - the learner's code may fail any way: show where, in the viewer
        failure = registry.learner_terms(e, exercise.id, exercise.attribute)
    if failure is not None:
        print(f"{test} seed {seed}: {failure}")
    for other in ctx.clusters[:-1]:
        other.close()
    if not ctx.clusters:
        _unplug(exercise.id, impl)
        raise RocketlabError(f"replay: {test} kept no cluster to show")
    cluster = ctx.clusters[-1]
    if failure is not None:  # the viewer opens here, the moment marked
        cluster.failure = {"t": cluster.now_ms, "text": failure}
    where = f", submission={str(path)!r}" if path is not None else ", reference=True"
    cluster.rebuild = lambda t: _replay_to(spec.fn, impl, seed, t)  # the same function object: one to unplug
    cluster.rebuild_code = lambda t: (f"from rocketlab.grading import replay\n\n"
                                      f"cluster = replay({test!r}, seed={seed}{where}, at_ms={t})")
    cluster.unplug = lambda: _unplug(exercise.id, impl)
    cluster.on_close.append(cluster.unplug)
    return cluster


def _unplug(point: str, impl: Any) -> None:
    """Take ``impl`` out of ``point`` if it is still what is plugged in there (a later replay's stays)."""
    if plugs.active().get(point) is impl:
        plugs.uninstall([point])
        print(f"replay: {point} unplugged (the kit's own runs again)")


def _replay_to(fn: Any, impl: Any, seed: int, at_ms: int) -> Any:
    """Run a graded test again and stop the last cluster it keeps at ``at_ms`` (kernel horizon)."""
    kept: list[Any] = []
    if impl not in plugs.active().values():  # a viewer's fork after the replay was unplugged: plug it again
        raise RocketlabError("replay: its cluster was closed and the learner's function unplugged: replay again")

    class StoppingCtx(registry.Ctx):
        def keep(self, cluster: Any) -> Any:
            kept.append(cluster)
            cluster.scheduler.horizon_ms = at_ms
            return super().keep(cluster)

    try:
        fn(StoppingCtx(impl, seed))
    except (HorizonReached, Exception):  # noqa: BLE001, S110 - the horizon, or the failure the first run ended with
        pass
    if not kept:
        raise RocketlabError("replay: the test kept no cluster to show")
    for other in kept[:-1]:
        other.scheduler.horizon_ms = None
    return stop_at(kept[-1], at_ms)
