"""Graded labs: the learner's exercises plugged into the real cluster, graded like MIT 6.5840's tests.

* :data:`LABS` / :data:`EXERCISES` - the graded labs and their exercises: one table,
  ``suites/labs.py``, loaded when this package is imported.
* :func:`graded` / :class:`Ctx` - declare a graded test (``registry.py``; built-in suites in ``suites/``).
* :func:`grade` - run a lab's tests on a submission (``runner.py``): a judge process runs the tests
  (``worker.py``), the submission runs in a sandbox process it calls across a pipe (the judge's end:
  ``sandbox.py``; the process: ``sandbox_child.py``, confined by ``sandbox_confine.py``; values as data:
  ``sandbox_codec.py``; delegation to the kit's own answer: ``sandbox_static.py``);
  results in Gradescope's shape (``results.py``); ``rocketlab grade`` is the command (``cli.py``).
* :func:`check` - a notebook cell's ``grader.check``: one exercise's public tests, shown as a table.
* :func:`replay` - rebuild a failing scenario's cluster with the learner's code plugged in, for the viewer.
"""

from __future__ import annotations

from rocketlab.grading.notebook import CheckResult, check, replay
from rocketlab.grading.registry import EXERCISES, LABS, Ctx, graded, load_labs
from rocketlab.grading.runner import GradeReport, TestResult, grade

load_labs()  # the lab table (rocketlab.grading.suites.labs) and every built-in suite

__all__ = ["EXERCISES", "LABS", "CheckResult", "Ctx", "GradeReport", "TestResult", "check", "grade", "graded",
           "replay"]
