"""Lab 08's realistic wrong solutions (:mod:`tests.grading.lab08_wrong`): each is shown wrong against the kit's
reference by a direct check on one input (the consequence in words), and fails at least one of the graded tests
written for its class of input. That each loses points at all is ``test_grader.py``'s
``test_each_mutant_loses_points`` (they are lab 08's hand-written mutants); grading each on every test written
for its class takes a sandbox per solution (about 3 s each) and runs with ``-m slow`` / ROCKETLAB_FULL=1."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from rocketlab.client.consumer import allocate_averagely
from rocketlab.client.message import MessageQueue
from rocketlab.client.route import LatencyView, select_one_message_queue
from rocketlab.grading import grade
from tests.grading.lab08_wrong import MUTANTS8, WRONG8
from tests.grading.modules import load

MQS = [MessageQueue("T", b, q) for b in ("broker-a", "broker-b") for q in range(4)]
CIDS = ["c0", "c1", "c2"]
DOWN_A = LatencyView(frozenset({"broker-a"}), "broker-a", {"broker-a": 2, "broker-b": 2})
ALL_DOWN = LatencyView(frozenset({"broker-a", "broker-b"}), "broker-c", {"broker-a": 4, "broker-b": 4, "broker-c": 1})


def _choice(c: Any) -> tuple:
    return c.position, c.queue, c.index


def _broker(choose: Callable[..., Any], *args: Any) -> str:
    return choose(MQS, *args).queue.broker_name


DIRECT: dict[str, Callable[[ModuleType], Any]] = {
    # 7 queues, 3 members: 3, 2, 2. The off-by-one gives member 1 a third queue: member 2's first, consumed twice
    "extra_queue_off_by_one": lambda m: (m.allocate("G", "c1", MQS[:7], CIDS) != allocate_averagely("G", "c1", MQS[:7], CIDS)
                                         and set(m.allocate("G", "c1", MQS[:7], CIDS))
                                         & set(m.allocate("G", "c2", MQS[:7], CIDS))),
    # 8 queues, 3 members: Java gives the first member 3; here it has 2, and a Java member beside it disagrees
    "extra_queues_to_the_last": lambda m: (len(m.allocate("G", "c0", MQS, CIDS)) == 2
                                           and len(allocate_averagely("G", "c0", MQS, CIDS)) == 3),
    # a stranger sorting between c0 and c1 takes c1's queues: two consumers on them
    "stranger_ranked_in": lambda m: (m.allocate("G", "c0x", MQS, CIDS) == allocate_averagely("G", "c1", MQS, CIDS)
                                     and allocate_averagely("G", "c0x", MQS, CIDS) == []),
    # counter at 0: the next queue in turn is broker-a:1, on the broker that just failed
    "never_avoids_last_broker": lambda m: (_broker(m.select_one_message_queue, 0, "broker-a", None) == "broker-a"
                                           != _broker(select_one_message_queue, 0, "broker-a", None)),
    # broker-a in its fault window: the wrong choice sends there anyway
    "ignores_latency_table": lambda m: (_broker(m.select_one_message_queue, 0, None, DOWN_A) == "broker-a"
                                        != _broker(select_one_message_queue, 0, None, DOWN_A)),
    # the walk skips broker-a's three queues: the counter must move by one, not by four
    "counter_per_probe_with_table": lambda m: (_choice(m.select_one_message_queue(MQS, 0, None, DOWN_A))
                                               != _choice(select_one_message_queue(MQS, 0, None, DOWN_A))),
    # both brokers faulty, broker-c the least bad: Java sends to broker-c
    "fallback_plain_round_robin": lambda m: (_broker(m.select_one_message_queue, 0, None, ALL_DOWN) != "broker-c"
                                             == _broker(select_one_message_queue, 0, None, ALL_DOWN)),
}


def test_the_wrong_solutions_cover_the_briefs_classes_and_are_mutants():
    assert {w.name for w in WRONG8} == set(DIRECT)
    assert {w.exercise for w in WRONG8} == {"lab08.allocate", "lab08.select_one_message_queue"}
    assert all(len(w.edits) == 1 for w in WRONG8) and len(MUTANTS8) == len(WRONG8) + 3


@pytest.mark.parametrize("wrong", WRONG8, ids=lambda w: w.name)
def test_each_wrong_solution_is_wrong(wrong, tmp_path):
    module = load(wrong.write(tmp_path), f"wrong8_{wrong.name}")
    assert DIRECT[wrong.name](module), f"{wrong.name}: the direct check found no difference"


@pytest.mark.slow
@pytest.mark.parametrize("wrong", WRONG8, ids=lambda w: w.name)
def test_each_wrong_solution_fails_the_tests_of_its_class(wrong, tmp_path):
    path = wrong.write(tmp_path)
    report = grade("lab08", path, only=[f"{wrong.exercise}/{k}" for k in wrong.killers])
    failed = {t.name.split("/", 1)[1] for t in report.tests if not t.passed}
    print(wrong.name, "fails", sorted(failed))
    assert report.score < report.max_score and set(wrong.killers) <= failed, (wrong.name, failed)
