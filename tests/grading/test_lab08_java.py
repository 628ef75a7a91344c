"""Lab 08's references against RocketMQ 4.9.5 itself: the real client jar's ``AllocateMessageQueueAveragely`` and
``MQFaultStrategy`` (``tests/grading/lab08_oracle.java``, run with ``java -cp <ROCKETLAB_JAVA_BROKER>``) answer the
grader's allocation table and the latency table's states; the kit's reference answers the same, case by case.

The allocation table is the graded one (every queue count 0-16, groups of 1-10, every member and a stranger).
The queue choice is compared through the kit's :class:`~rocketlab.client.route.MQFaultStrategy` (which builds the
:class:`~rocketlab.client.route.LatencyView` of the graded function from a real latency table) on every route
shape of the graded tables, every set of brokers in the table, each available or in its fault window, counters
0..n+1 and at Java's int overflow, with the latency table off and on. Without Java (or the class path) the test
skips, saying why; under CI=true it fails.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
from pathlib import Path

import pytest

from rocketlab.client.consumer import allocate_averagely
from rocketlab.client.message import MessageQueue
from rocketlab.client.route import MQFaultStrategy, topic_route_data2_topic_publish_info
from rocketlab.grading.suites.lab08 import (
    GROUP,
    NO_MASTER,
    SHAPES,
    STRANGER,
    TOPIC,
    _route,
    allocate_cases,
    cid_all_of,
    mq_all_of,
)
from rocketlab.oracle.client_jvm import BrokerJava
from rocketlab.oracle.jvm import OracleUnavailable

ORACLE = Path(__file__).with_name("lab08_oracle.java")
SEED = 808


@pytest.fixture(scope="module")
def java() -> BrokerJava:
    try:
        return BrokerJava.find()
    except OracleUnavailable as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the RocketMQ 4.9.5 client jar is required under CI=true: {e}", pytrace=False)
        pytest.skip(str(e))


def run_java(java: BrokerJava, lines: list[str]) -> list[str]:
    proc = subprocess.run([java.jdk.java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
                           "-cp", java.class_path_text, str(ORACLE)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.splitlines()
    assert len(out) == len(lines), proc.stderr[-2000:]
    return out


def show(mqs: list[MessageQueue]) -> str:
    return ",".join(f"{q.broker_name}:{q.queue_id}" for q in mqs) or "-"


def java_int(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def test_allocate_table_is_rocketmqs(java):
    cases = [*allocate_cases(), *((GROUP, cid, [], cids) for cids in (cid_all_of(1), cid_all_of(3))
                                  for cid in (*cids, STRANGER)),
             (GROUP, "", mq_all_of(4), cid_all_of(2)), (GROUP, cid_all_of(2)[0], mq_all_of(4), [])]
    answers = run_java(java, [f"A {g} {c or '-'} {','.join(cids) or '-'} {show(mqs)}" for g, c, mqs, cids in cases])
    # RocketMQ first: each group's shares partition the queues, a stranger and empty input get nothing / refused
    for nq, nc in itertools.product(range(1, 17), range(1, 11)):
        owned = [answers[cases.index((GROUP, cid, mq_all_of(nq), cid_all_of(nc)))] for cid in cid_all_of(nc)]
        held = [q for share in owned if share != "-" for q in share.split(",")]
        assert sorted(held) == sorted(show(mq_all_of(nq)).split(",")), (nq, nc)
    assert {a for a, c in zip(answers, cases, strict=True) if c[1] == STRANGER and c[2]} == {"-"}
    assert {a for a, c in zip(answers, cases, strict=True) if not (c[1] and c[2] and c[3])} == {"!IllegalArgumentException"}
    # then the kit: the same answer, case by case (ValueError where Java throws IllegalArgumentException)
    for case, want in zip(cases, answers, strict=True):
        try:
            got = show(allocate_averagely(*case))
        except ValueError:
            got = "!IllegalArgumentException"
        assert got == want, (case[1], len(case[2]), case[3])
    print(f"{len(cases)} allocations equal to RocketMQ 4.9.5's")


def select_states(rnd: random.Random) -> list[tuple]:
    """(shape, counter, last broker, latency on, fault items [(name, latency, start offset)], whichItemWorst)."""
    states = []
    for shape in SHAPES:
        n = sum(shape.values())
        counters = [*range(n + 2), 2**31 - 2, 2**31 - 1, 2**32 - 1, 2**32 - 2]
        for counter, last in itertools.product(counters, (None, *shape, "broker-x")):
            states.append((shape, counter, last, False, (), 0))
        names = [*shape, NO_MASTER, "broker-x"]
        for k in range(len(names) + 1):
            for chosen in itertools.combinations(names, k):
                for down in itertools.product((False, True), repeat=k):
                    items = tuple((name, rnd.choice((20, 120, 600, 1500, 30000)),
                                   (1 if d else -1) * (10**7 + rnd.randint(0, 10**6)))
                                  for name, d in zip(chosen, down, strict=True))
                    for counter in rnd.sample(counters, 3):
                        states.append((shape, counter, rnd.choice((None, names[0])), True, items, rnd.randint(0, 5)))
    return states


def kit_select(state: tuple) -> str:
    shape, counter, last, on, items, worst = state
    tp = topic_route_data2_topic_publish_info(TOPIC, _route({**shape, NO_MASTER: 2}, frozenset({NO_MASTER})))
    tp.send_which_queue.index = counter & 0xFFFFFFFF
    strategy = MQFaultStrategy(on)
    lft = strategy.latency_fault_tolerance
    lft.which_item_worst.index = worst
    for name, latency, offset in items:
        lft.update_fault_item(name, latency, offset, 0)
    mq = strategy.select_one_message_queue(tp, last, 0)
    table = ",".join(sorted(lft.fault_item_table)) or "-"
    return (f"{show([mq])} {java_int(tp.send_which_queue.index)} {show(tp.message_queue_list)} {table} "
            f"{java_int(lft.which_item_worst.index)}")


def java_line(state: tuple) -> str:
    shape, counter, last, on, items, worst = state
    tp = topic_route_data2_topic_publish_info(TOPIC, _route({**shape, NO_MASTER: 2}, frozenset({NO_MASTER})))
    faults = ",".join(f"{n}:{lat}:{off}" for n, lat, off in items) or "-"
    nums = ",".join(f"{qd.broker_name}:{qd.write_queue_nums}" for qd in tp.route.queue_datas)
    return f"S {java_int(counter)} {last or '-'} {int(on)} {show(tp.message_queue_list)} {faults} {worst} {nums}"


def test_select_one_message_queue_is_rocketmqs(java):
    print(f"seed {SEED}")
    states = select_states(random.Random(SEED))
    answers = run_java(java, [java_line(s) for s in states])
    # RocketMQ first: with the table on and a broker of the route available, it never picks one in its window
    # (away from the int overflow: there Math.abs(MIN_VALUE) sends the walk back to position 0, and it can miss
    # the available broker, as the overflow cases below show Java doing)
    for state, answer in zip(states, answers, strict=True):
        shape, counter, _, on, items, _ = state
        down = {name for name, _, off in items if off > 0}
        if on and counter < 2**31 - 20 and any(b not in down for b in shape if shape[b] > 0):
            assert answer.split()[0].split(":")[0] not in down, (state, answer)
    # then the kit, every case: the queue, the counter, the route's list, the fault table, whichItemWorst
    wrong = [(s, a, kit_select(s)) for s, a in zip(states, answers, strict=True) if kit_select(s) != a]
    assert not wrong, f"{len(wrong)} of {len(states)} differ; first: {wrong[0]}"
    print(f"{len(states)} queue choices equal to RocketMQ 4.9.5's")
