"""The lab table (rocketlab/grading/suites/labs.py): one row per lab, everything else derived from it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from rocketlab import plugs
from rocketlab.errors import RocketlabError
from rocketlab.grading import EXERCISES, LABS, registry
from rocketlab.grading.mutation import chosen_exercises
from rocketlab.grading.sandbox import JVM_LIMITS, PYTHON_LIMITS, limits_for
from rocketlab.grading.sandbox_static import references_of

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_names_files_that_exist_and_a_suite_that_tests_every_exercise():
    assert LABS and all(lab.id == key for key, lab in LABS.items())
    for lab in LABS.values():
        assert (ROOT / "labs" / "exercises" / lab.exercise_file).is_file(), lab.id
        assert (ROOT / "labs" / lab.notebook).is_file(), lab.id
        tested = {t.exercise for t in registry.TESTS.values() if t.lab == lab.id and not t.hidden}
        assert tested == {e.id for e in lab.exercises}, lab.id
        assert all(inspect.getmodule(t.fn) is lab.suite for t in registry.TESTS.values() if t.lab == lab.id
                   and not t.hidden)


def test_exercises_are_derived_from_the_rows_and_each_is_a_declared_point_with_the_kits_own_version():
    assert EXERCISES == {e.id: e for lab in LABS.values() for e in lab.exercises}
    for e in EXERCISES.values():
        assert e.id in plugs.points() and callable(e.reference) and e.java and e.where
        assert references_of(e.lab)[e.id] == (e.reference.__module__, e.reference.__name__)


def test_what_a_lab_needs_follows_from_its_row():
    assert limits_for("lab07") == JVM_LIMITS and limits_for("lab03") == PYTHON_LIMITS
    assert [lab for lab in LABS if LABS[lab].java] == ["lab07"] and LABS["lab07"].spark is not None
    assert not any(e.startswith("lab07.") for e in chosen_exercises([]))  # Spark labs: not in the default run


def test_a_row_whose_point_no_component_declares_is_refused():
    row = registry.Lab("lab99", "x", "lab99.py", "99.ipynb", LABS["lab01"].suite, (
        registry.Exercise("lab99.nothing", "nothing", "Nothing.nothing", "nowhere", print),))
    with pytest.raises(RocketlabError, match="no component declares"):
        registry.register_lab(row)
    assert "lab99" not in LABS
