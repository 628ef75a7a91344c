"""Graded labs: the learner's exercises plugged into the real cluster, graded like MIT 6.5840's tests.

* :data:`LABS` / :data:`EXERCISES` - the graded labs and their exercises: one table,
  ``suites/labs.py``, imported here (and only here: the framework's modules never import a suite, so
  they stay independent of what the labs teach; any of them is imported through this package).
* :func:`graded` / :class:`Ctx` - declare a graded test (``registry.py``; built-in suites in ``suites/``).
* :func:`grade` - run a lab's tests on a submission (``runner.py``): a judge process runs the tests
  (``worker.py``), the submission runs in a sandbox process it calls across a pipe (the judge's end:
  ``sandbox.py``; the process: ``sandbox_child.py``, confined by ``sandbox_confine.py``; values as data:
  ``sandbox_codec.py``; delegation to the kit's own answer: ``sandbox_static.py``); time limits that count
  the submission's CPU time, scaled to the machine (``fair_time.py``);
  results in Gradescope's shape (``results.py``); ``rocketlab grade`` is the command (``cli.py``).
* :func:`check` - a notebook cell's ``grader.check``: one exercise's public tests, shown as a table.
* :func:`replay` - rebuild a failing scenario's cluster with the learner's code plugged in, for the viewer.
"""

from __future__ import annotations

from rocketlab.grading.notebook import CheckResult, check, replay
from rocketlab.grading.registry import EXERCISES, LABS, Ctx, graded, load_labs
from rocketlab.grading.runner import GradeReport, TestResult, grade
from rocketlab.grading.suites import labs as lab_table  # noqa: F401 - its rows and suites register themselves

load_labs()

__all__ = ["EXERCISES", "LABS", "CheckResult", "Ctx", "GradeReport", "TestResult", "check", "grade", "graded",
           "replay"]
