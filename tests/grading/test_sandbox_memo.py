"""The judge's shortcuts across the boundary. The memo (:mod:`rocketlab.grading.sandbox_memo`) on a real
sandbox: an identical call crosses once, a call whose call-backs now answer differently crosses again, a
kept answer is rebuilt each time. A DataFrame answer is read without Spark until a test asks for more."""

from __future__ import annotations

import pytest

from rocketlab.grading.sandbox import Sandbox, SandboxError
from rocketlab.grading.sandbox_codec import CodecError, CollectedFrame

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


def test_a_dataframe_answer_is_read_without_spark_until_a_test_asks_for_more():
    data = {"schema": "{}", "columns": ["run", "phy_offset", "size"],
            "rows": [{"$t": ["one", 0, 100]}, {"$t": ["two", 200, 120]}]}
    built = []
    frame = CollectedFrame(data, lambda d: built.append(d) or type("Frame", (), {"count": lambda self: 2})())
    assert frame.columns == ["run", "phy_offset", "size"]
    rows = frame.collect()
    assert [tuple(r) for r in rows] == [("one", 0, 100), ("two", 200, 120)] and rows[1].size == 120
    assert built == []  # columns and rows: no DataFrame built
    assert frame.count() == 2 and built == [data]  # anything else: built once, in the judge's session
    for bad in ({**data, "rows": [{"$t": ["one", 0]}]}, {**data, "columns": [1, 2, 3]}, {**data, "rows": "x"}):
        with pytest.raises(CodecError):
            CollectedFrame(bad, lambda d: None)
