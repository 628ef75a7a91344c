"""Grade a submission: run a lab's graded tests in a judge process, with a time limit per test.

:func:`grade` starts :mod:`rocketlab.grading.worker` (the judge, which runs the submission in a
sandbox of its own), hands it the tests and reads its events. Each test is timed by a
:class:`~rocketlab.grading.fair_time.TestClock`: its limit counts the submission's own CPU time (and time
with nothing running, for code that sleeps), scaled to this machine, with the wall clock as a backstop;
the judge's work and other programs' load do not count. A test past its limit gets the judge killed (its
process group, by PID; the sandbox's namespace dies with it) and is failed as "stopped" - after one re-run
in a fresh judge when the machine was loaded while it ran, which its message says; a judge that dies or
says something out of step fails the test it was running; either way a fresh judge grades the tests left.
A submission that does not import fails every test with the reason and is otherwise graded as usual (all
zero), so a results file is always written. A sandbox that cannot be set up is the grader's failure:
:class:`~rocketlab.grading.sandbox.SandboxSetupError`, no score.

rocketlab's own addition (Gradescope and otter-grader grade the same way: one process per submission).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocketlab import i18n, plugs
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry, worker
from rocketlab.grading.fair_time import LOADED, TestClock, machine_factor
from rocketlab.grading.sandbox import SandboxSetupError
from rocketlab.i18n import _

IMPORT_TIME_LIMIT_S = 30.0


@dataclass
class TestResult:
    """One graded test's outcome, in the learner's terms."""

    name: str
    exercise: str
    kind: str
    max_score: float
    score: float
    passed: bool
    message: str
    about: str = ""
    hidden: bool = False
    seed: int | None = None
    seeds_run: int = 0
    duration_s: float = 0.0
    printed_chars: int = 0
    printed: str = ""
    replay: str = ""
    viewer: str = ""

    def output(self) -> str:
        """The text a learner reads (Gradescope's ``output``)."""
        about = _(self.about) if self.about else ""  # marked N_() where the suite registers the test
        lines = [f"{_('PASS') if self.passed else _('FAIL')} {self.name}: {about}".rstrip(": "), self.message]
        if self.replay:
            lines.append(_("replay: {command}").format(command=self.replay))
        if self.viewer:
            lines.append(_("in the cluster viewer: {page}").format(page=self.viewer))
        if self.printed_chars:
            cut = _(" (first {shown} of {total} characters)").format(
                shown=len(self.printed), total=f"{self.printed_chars:,}") if self.printed_chars > len(self.printed) else ""
            lines.append(_("your code printed{cut}:").format(cut=cut) + "\n" + self.printed)
        return "\n".join(lines)


@dataclass
class GradeReport:
    """Every test of one grading run."""

    lab: str
    submission: str
    tests: list[TestResult] = field(default_factory=list)
    execution_time_s: float = 0.0

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 6)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 6)

    @property
    def all_passed(self) -> bool:
        return all(t.passed for t in self.tests)

    def as_dict(self) -> dict[str, Any]:
        return {"lab": self.lab, "submission": self.submission, "score": self.score, "max_score": self.max_score,
                "execution_time_s": self.execution_time_s, "tests": [asdict(t) for t in self.tests]}


def _replay_lines(test: registry.GradedTest, seed: int, submission: str | None, lab: str) -> tuple[str, str]:
    """The command and the notebook line that replay a failure. The learner's file is named whenever the
    default (the workspace's ``labs/exercises/`` file, seen from here) would be another file, or the file
    has another name than the exercise's: relative to the current directory when it lies under it, else by
    its name only (never the grader's paths). A file with the exercise's name graded where there is no
    workspace (Gradescope) is left to the default: in the learner's workspace that is their file."""
    sub = where = ""
    default = registry.exercise_file(lab)
    if submission is None:
        sub, where = " --reference", ", reference=True"
    elif Path(submission).name != default.name or (default.is_file()
                                                     and Path(submission).resolve() != default.resolve()):
        path, here = Path(submission).resolve(), Path.cwd().resolve()
        shown = str(path.relative_to(here)) if path.is_relative_to(here) else path.name
        sub, where = f" --submission {shlex.quote(shown)}", f", submission={shown!r}"
    command = f"rocketlab grade {lab} --only {test.name} --seed {seed}{sub}"
    viewer = (f"from rocketlab.grading import replay; from rocketlab.viz import ClusterView; "
              f"ClusterView(replay({test.name!r}, seed={seed}{where}))")
    return command, viewer


MEMORY_SCRATCH = Path("/dev/shm")
SCRATCH_FREE = 2 * 1024**3


def judge_scratch() -> str | None:
    """A directory in memory (``/dev/shm``, when it is there with 2 GiB free) for the judge's temporary
    files - the simulated clusters' stores, a lab's scratch runs - removed after the grading (also when a
    time limit killed the judge), and hidden from the sandbox; None: the system's temporary directory. The
    stores still write and fsync real files, but an fsync costs nothing there: on a disk shared with other
    work a scenario waited on the disk, not on the submission (lab 04: 41 s for 6 s of CPU)."""
    try:
        if not (MEMORY_SCRATCH.is_dir() and os.access(MEMORY_SCRATCH, os.W_OK | os.X_OK)
                and shutil.disk_usage(MEMORY_SCRATCH).free >= SCRATCH_FREE):
            return None
        return tempfile.mkdtemp(prefix="rocketlab-judge-", dir=MEMORY_SCRATCH)
    except OSError:
        return None


def fork_safe() -> bool:
    """Whether the judge may be forked from this process rather than started afresh (the package and the
    lab table already imported: some 0.3 s less per grading): only with one thread (a notebook kernel's,
    or bulk mode's threads, could hold a lock the fork would copy held), nothing plugged into the kit
    (a notebook's ``replay``) and no Spark (its gateway's sockets would be shared with the copy)."""
    return (hasattr(os, "fork") and os.environ.get("ROCKETLAB_GRADER_FORK") != "0"
            and threading.active_count() == 1 and not plugs.active() and not _spark_started())


def _spark_started() -> bool:
    """Whether this process started Spark's gateway (a JVM pyspark keeps until the process ends)."""
    context = sys.modules.get("pyspark.context")
    return context is not None and getattr(context.SparkContext, "_gateway", None) is not None


class _Forked:
    """A judge forked from this process, with what the runner asks of a ``Popen``: pid, poll and wait."""

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("judge", timeout or 0.0)
            time.sleep(0.002)
        return int(self.returncode)  # type: ignore[arg-type]


def _fork_judge(request: dict[str, Any], write_fd: int, stderr_fd: int) -> _Forked:
    """Fork the judge: in the copy, a session of its own, stdin and stdout on /dev/null, stderr to
    ``stderr_fd``, :func:`rocketlab.grading.worker.serve`, then ``os._exit`` (never back into the caller)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return _Forked(pid)
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(stderr_fd, 2)
        code = worker.serve(request, write_fd)
    except BaseException:  # noqa: BLE001 - the judge's own failure: its traceback on its stderr, exit 1
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


class _Worker:
    """One worker process (started afresh, or forked: :func:`fork_safe`) and its event pipe."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.read_fd, write_fd = os.pipe()
        self.stderr = tempfile.TemporaryFile()
        self.proc: subprocess.Popen[bytes] | _Forked
        if fork_safe():
            self.proc = _fork_judge(request, write_fd, self.stderr.fileno())
            os.close(write_fd)
        else:
            env = {**os.environ, "ROCKETLAB_GRADER_FD": str(write_fd), "PYTHONDONTWRITEBYTECODE": "1"}
            env.pop("PYTHONSTARTUP", None)
            self.proc = subprocess.Popen([sys.executable, "-m", "rocketlab.grading.worker"], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=self.stderr, pass_fds=(write_fd,),
                                         env=env, start_new_session=True)
            os.close(write_fd)
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.close()
        self.buffer = b""
        self.closed = False  # the worker closed its end of the pipe (it exited or is exiting)
        # poll, not select: select() refuses descriptors above 1023, and a notebook or test process that has
        # opened many files would get one
        self.poller = select.poll()
        self.poller.register(self.read_fd, select.POLLIN)

    def exit_code(self) -> int | None:
        """The worker's exit code, or None while it runs. After the pipe closed, wait briefly for the
        exit: the end of the pipe arrives before the process can be reaped."""
        if self.closed:
            try:
                return self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return None
        return self.proc.poll()

    def next_event(self, deadline: float) -> dict[str, Any] | None:
        """The next event, or None at the deadline or when the worker is gone."""
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready = self.poller.poll(max(1, math.ceil(left * 1000)))
            if not ready:
                return None
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if type(event) is not dict:
            return {"event": "garbage", "line": line[:120].decode(errors="replace")}
        return event

    def stderr_tail(self, limit: int = 1500) -> str:
        """The end of the judge's stderr, without directories (a learner reads it: no grader's paths)."""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - limit))
        text = self.stderr.read().decode(errors="replace").strip()
        return re.sub(r"(?:/[^/\s'\"]+)+/", "", text)

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        code = self.proc.wait()
        os.close(self.read_fd)
        self.stderr.close()
        return code


def grade(lab: str, submission: str | Path | None = None, *, reference: bool = False,
          only: list[str] | None = None, seed: int | None = None, tests_dir: str | Path | None = None,
          public_only: bool = False, time_limit_s: float | None = None,
          progress: Callable[[str, TestResult], None] | None = None,
          hide: list[str | Path] | None = None, import_time_limit_s: float = IMPORT_TIME_LIMIT_S,
          stress: int | None = None) -> GradeReport:
    """Run ``lab``'s graded tests on ``submission`` (the learner's exercise file; default the repo's
    ``labs/exercises/labNN_*.py``) or, with ``reference``, on the kit's own functions. ``time_limit_s``
    lowers every test's own limit to at most that (seconds of the submission's CPU time, scaled to this
    machine: :mod:`rocketlab.grading.fair_time`). ``hide``: more paths the submission must not read
    (results files, other submissions); its own directory and ``tests_dir`` are always hidden.
    ``stress``: every scenario test runs for seeds ``0..stress-1`` (its time limit scaled to match),
    stopping at the first failing seed, whose replay line the result carries."""
    tests = _selected(lab, only, tests_dir, public_only)
    if stress is not None:
        if stress < 1:
            raise RocketlabError(_("--stress must be at least 1 seed, got {value}").format(value=stress))
        tests = [t if t.seeds is None else dataclasses.replace(
            t, time_limit_s=t.time_limit_s * max(1.0, stress / max(1, len(t.seeds)))) for t in tests]
    path = None if reference else Path(submission) if submission is not None else registry.exercise_file(lab)
    if path is not None and not path.is_file():
        raise RocketlabError(_("submission {path}: no such file").format(path=path))
    report = GradeReport(lab, "reference" if path is None else str(path))
    started = time.monotonic()
    todo = list(tests)
    reruns: dict[str, str] = {}
    sub_arg = None if path is None else str(path.resolve())
    hidden_paths = sorted({str(Path(p).resolve()) for p in [*(hide or []), *([] if tests_dir is None else [tests_dir]),
                                                           *([] if path is None else [path, path.parent])]})

    def record(result: TestResult) -> None:
        report.tests.append(result)
        if progress:
            progress(lab, result)

    scratch = judge_scratch()
    try:
        while todo:
            request = {"lab": lab, "submission": sub_arg, "reference": reference, "seed": seed, "stress": stress,
                       "hide": sorted({*hidden_paths, *([scratch] if scratch else [])}), "scratch": scratch,
                       "tests_dir": None if tests_dir is None else str(tests_dir), "tests": [t.name for t in todo],
                       "lang": i18n.language()}  # the judge's messages in the runner's language
            worker = _Worker(request)
            try:
                why = _import_failure(worker, import_time_limit_s)
                if why is not None:
                    for t in todo:
                        record(_failed(t, why))
                    break
                _run_tests(worker, todo, record, time_limit_s, sub_arg, lab, reruns)
            finally:
                worker.stop()
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    report.execution_time_s = round(time.monotonic() - started, 3)
    return report


def _selected(lab: str, only: list[str] | None, tests_dir: str | Path | None,
              public_only: bool) -> list[registry.GradedTest]:
    """The tests to run: the lab's, narrowed by ``only``; hidden ones only with their directory."""
    registry.load_builtin(lab)
    if tests_dir is not None:
        registry.load_hidden(tests_dir)
    tests = registry.tests_of(lab, only)
    if public_only or tests_dir is None:  # hidden tests only with their directory (one loaded earlier stays registered)
        tests = [t for t in tests if not t.hidden]
    if not tests:
        raise RocketlabError(_("{lab}: no tests selected").format(lab=lab))
    return tests


def _grader_failed(event: dict[str, Any] | None) -> None:
    """Raise SandboxSetupError for the judge's ``grader_error``: a failure of the grader is an error of the
    run (no score), never a 0 for the submission."""
    if event is not None and event.get("event") == "grader_error":
        reason = str(event.get("message", "")).removeprefix(_(SandboxSetupError.PREFIX))  # the judge's language
        raise SandboxSetupError(reason[:2000])


def _import_failure(worker: _Worker, limit_s: float) -> str | None:
    """None once the judge is ready (the submission imported), else why every test fails."""
    first = worker.next_event(time.monotonic() + limit_s)
    _grader_failed(first)
    if first is not None and first.get("event") == "ready":
        return None
    if first is None:
        code = worker.exit_code()
        return (_("your file did not finish importing within {seconds} s").format(seconds=f"{limit_s:g}")
                if code is None else _("the grader's worker exited ({code}) while importing your file: {tail}")
                .format(code=code, tail=worker.stderr_tail()))
    if first.get("event") == "import_error":
        return str(first.get("message", ""))[:4000]
    return _("the grader's judge process did not start ({said})").format(said=_said(first))


def _run_tests(worker: _Worker, todo: list[registry.GradedTest], record: Callable[[TestResult], None],
               time_limit_s: float | None, submission: str | None, lab: str, reruns: dict[str, str]) -> None:
    """Run ``todo`` on ``worker``, taking each test off as it is graded; return early when the judge goes
    out of step or a test is stopped (a fresh judge grades the rest). A test stopped while the machine was
    loaded stays first in ``todo``, noted in ``reruns``: the fresh judge runs it once more before it counts."""
    factor = machine_factor()
    while todo:
        test = todo[0]
        event = worker.next_event(time.monotonic() + 30)
        _grader_failed(event)
        if event is None or event.get("event") != "start" or event.get("test") != test.name:
            todo.pop(0)
            record(_failed(test, _("the grader's judge process went out of step before this test ({said}); the "
                                   "tests left are graded by a fresh one").format(said=_said(event))))
            return
        t0 = time.monotonic()
        limit = test.time_limit_s if time_limit_s is None else min(test.time_limit_s, time_limit_s)
        clock = TestClock(worker.proc.pid, limit, test.time_limit_s, factor)
        event = _await_result(worker, clock)
        _grader_failed(event)
        if event is None and clock.why is not None and test.name not in reruns and clock.loaded() > LOADED:
            reruns[test.name] = _("re-run once: its first run was stopped while the machine was loaded ({share} "
                                  "of its time waiting for a CPU)").format(share=f"{clock.loaded():.0%}")
            return  # a fresh judge runs it again
        todo.pop(0)
        note = _(" ({note})").format(note=reruns[test.name]) if test.name in reruns else ""
        if event is None or event.get("event") != "result" or event.get("test") != test.name:
            why = clock.why if event is None and clock.why else _lost_why(worker, event)
            record(_failed(test, why + note, duration=time.monotonic() - t0))
            return  # a fresh judge for the rest
        result = _from_event(test, event, submission, lab)
        result.message += note
        record(result)


def _await_result(worker: _Worker, clock: TestClock) -> dict[str, Any] | None:
    """The judge's next event, or None when it ended or ``clock`` stopped the test (``clock.why``)."""
    while True:
        event = worker.next_event(clock.deadline())
        if event is not None or worker.closed:
            return event
        if clock.check() is not None:
            return None


def _lost_why(worker: _Worker, event: dict[str, Any] | None) -> str:
    """Why a test that started gave no result: out of step, or the judge ended."""
    if event is not None:
        return _("the grader's judge process went out of step ({said})").format(said=_said(event))
    code = worker.exit_code()
    return _("the grader's judge process ended (exit code {code}) while running this test: {tail}").format(
        code=code, tail=worker.stderr_tail(300))


def _said(event: dict[str, Any] | None) -> str:
    if event is None:
        return _("it said nothing")
    return _("it said {what}").format(what=json.dumps(event)[:160])


def _failed(test: registry.GradedTest, why: str, duration: float = 0.0) -> TestResult:
    return TestResult(test.name, test.exercise, test.kind, test.points, 0.0, False, why, test.about, test.hidden,
                      duration_s=round(duration, 3))


def _from_event(test: registry.GradedTest, event: dict[str, Any], submission: str | None, lab: str) -> TestResult:
    passed = event.get("passed") is True
    result = TestResult(test.name, test.exercise, test.kind, test.points, test.points if passed else 0.0, passed,
                        str(event.get("message", "")), test.about, test.hidden, event.get("seed"),
                        int(event.get("seeds_run", 0)), float(event.get("duration_s", 0.0)),
                        int(event.get("printed_chars", 0)), str(event.get("printed", "")))
    if not passed and test.seeds is not None and result.seed is not None:
        result.message = _("seed {seed}: {message}").format(seed=result.seed, message=result.message)
        result.replay, viewer = _replay_lines(test, result.seed, submission, lab)
        result.viewer = viewer if event.get("kept_cluster") else ""
    return result
