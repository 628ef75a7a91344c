"""The judge's memo (:mod:`rocketlab.grading.sandbox_memo`) on a real sandbox: an identical call crosses
once, a call whose call-backs now answer differently crosses again, a kept answer is rebuilt each time."""

from __future__ import annotations

import pytest

from rocketlab.grading.sandbox import Sandbox, SandboxError

SOURCE = '''
CALLS = []

def f(x):
    CALLS.append(x)
    return [x, len(CALLS)]

def g(x, look):
    return look(x) + len(CALLS)

def h(x):
    CALLS.append(x)
    raise ValueError(f"no {x} ({len(CALLS)} calls)")
'''


@pytest.fixture
def sandbox():
    box = Sandbox("lab05")
    box.load(SOURCE, "memo.py")
    yield box
    box.stop()


def test_an_identical_call_crosses_once_and_its_answer_is_rebuilt(sandbox):
    first = sandbox.call("f", (1,))
    again = sandbox.call("f", (1,))
    assert first == again == [1, 1]  # the second answer is the first one's: the function ran once
    assert first is not again  # rebuilt from the kept reply: the judge never shares one object
    first.append("changed by the judge")
    assert sandbox.call("f", (1,)) == [1, 1]
    assert sandbox.call("f", (2,)) == [2, 2]  # other arguments cross
    assert (sandbox.memo.hits, sandbox.memo.misses) == (2, 2)


def test_a_call_back_that_answers_differently_makes_the_call_cross_again(sandbox):
    table = {1: 10}
    look = table.__getitem__
    assert sandbox.call("g", (1, look)) == 10
    assert sandbox.call("g", (1, look)) == 10
    assert sandbox.memo.hits == 1
    table[1] = 20  # the learner's function would now see another input: it must be asked
    assert sandbox.call("g", (1, look)) == 20
    assert (sandbox.memo.hits, sandbox.memo.misses) == (1, 2)


def test_an_error_is_kept_as_the_functions_answer_too(sandbox):
    with pytest.raises(SandboxError, match=r"no 3 \(1 calls\)"):
        sandbox.call("h", (3,))
    with pytest.raises(SandboxError, match=r"no 3 \(1 calls\)"):
        sandbox.call("h", (3,))
    assert sandbox.memo.hits == 1
