"""rocketlab.plugs: override points declared by the components that call them, checked when plugged."""

from __future__ import annotations

import pytest

from rocketlab import plugs
from rocketlab.dledger.entry_dispatcher import DECIDE_COMPARE_PLUG, decide_compare


def test_a_component_declares_its_point_and_a_plugged_function_replaces_the_default_inside_the_block():
    assert DECIDE_COMPARE_PLUG == "lab04.decide_compare" and DECIDE_COMPARE_PLUG in plugs.points()
    mine = lambda *args: decide_compare(*args)  # noqa: E731
    assert plugs.resolve(DECIDE_COMPARE_PLUG, decide_compare) is decide_compare
    with plugs.plugged({DECIDE_COMPARE_PLUG: mine}):
        assert plugs.resolve(DECIDE_COMPARE_PLUG, decide_compare) is mine
    assert plugs.resolve(DECIDE_COMPARE_PLUG, decide_compare) is decide_compare and plugs.active() == {}


def test_an_undeclared_point_or_a_value_that_is_not_callable_is_refused():
    with pytest.raises(KeyError, match="unknown override point"), plugs.plugged({"lab04.no_such_point": print}):
        pass
    with pytest.raises(TypeError, match="must be callable"):
        plugs.install({DECIDE_COMPARE_PLUG: 3})
    assert plugs.active() == {}


def test_install_keeps_a_function_until_clear():
    plugs.install({DECIDE_COMPARE_PLUG: print})
    try:
        assert plugs.active() == {DECIDE_COMPARE_PLUG: print}
    finally:
        plugs.clear()
    assert plugs.active() == {}
