"""Lab 08's realistic wrong solutions: the learner-style solution (``tests/grading/solutions/``) with one mistake
a learner makes, each with the class of input it hides in and the graded tests written for that class (one of
which must fail it). They are also lab 08's hand-written mutants (:data:`MUTANTS8`, joined to
``tests/grading/mutants.py``'s list), with three plain slips besides (five per exercise, as ``test_grader.py`` asks)."""

from __future__ import annotations

from tests.grading.wrong import Wrong

A = "lab08.allocate"
S = "lab08.select_one_message_queue"
WRONG8: tuple[Wrong, ...] = (
    Wrong("extra_queue_off_by_one", A, "queue counts that do not divide evenly",
          "the remainder compared with <= : one member too many gets an extra queue",
          (("size = base + 1 if me < extra else base", "size = base + 1 if me <= extra else base"),),
          ("allocation_table", "group_covers_every_queue_once")),
    Wrong("extra_queues_to_the_last", A, "queue counts that do not divide evenly",
          "the extra queues go to the last members (an even share, but not RocketMQ's: a Java member of the "
          "same group takes the same queues)",
          (("    size = base + 1 if me < extra else base\n    first = me * size if me < extra else me * size + extra\n",
            "    size = base + 1 if me >= members - extra else base\n"
            "    first = me * base + max(0, me - (members - extra))\n"),),
          ("allocation_table",)),
    Wrong("stranger_ranked_in", A, "a client id not in cid_all",
          "the member's place counted as the ids sorting before it: a stranger takes the place it would sort into",
          (("    if current_cid not in cid_all:\n        return []\n"
            "    me, queues, members = cid_all.index(current_cid), len(mq_all), len(cid_all)\n",
            "    me, queues, members = sum(c < current_cid for c in cid_all), len(mq_all), len(cid_all)\n"),),
          ("stranger_owns_nothing",)),
    Wrong("never_avoids_last_broker", S, "retries without the latency table",
          "last_broker_name ignored: a retry may go straight back to the broker that failed",
          (("        if last_broker_name is not None:\n", "        if False:\n"),),
          ("retry_avoids_last_broker", "retry_on_another_broker")),
    Wrong("ignores_latency_table", S, "sendLatencyFaultEnable on",
          "the latency table ignored: round robin avoiding only the last broker, as with the table off",
          (("    if latency is None:\n", "    if True:\n"),),
          ("latency_table", "every_broker_faulty", "dead_broker_avoided")),
    Wrong("counter_per_probe_with_table", S, "sendLatencyFaultEnable on, a broker in its window",
          "each probe of the latency walk takes the counter's next value (4.9.5 takes one and walks on privately)",
          (("        pos = position(walk + step, n)\n",
            "        pos = position(walk + step, n)\n        index = walk + step\n"),),
          ("latency_table",)),
    Wrong("fallback_plain_round_robin", S, "every broker in its fault window",
          "with every broker faulty the next queue in turn, the least bad broker never used",
          (("    if writable <= 0:\n", "    if True:\n"),),
          ("every_broker_faulty",)),
)

MUTANTS8: list[tuple[str, str, str, str]] = [
    *((w.exercise, w.mistake, *w.edits[0]) for w in WRONG8),
    (A, "empty input answered instead of refused",
     '        raise ValueError("currentCID, mqAll and cidAll must not be empty")', "        return []"),
    (A, "with fewer queues than members, each member one queue from the end",
     "        return [mq_all[me]] if me < queues else []", "        return [mq_all[-1 - me]] if me < queues else []"),
    (S, "the fallback's queue id from the counter before it moves",
     "    index += 1\n    return QueueChoice(pos, MessageQueue(queues[pos].topic, broker, (index & MASK) % writable), index)",
     "    return QueueChoice(pos, MessageQueue(queues[pos].topic, broker, (index & MASK) % writable), index)"),
]
"""Lab 08's hand-written mutants ((exercise, mistake, old, new), as ``tests/grading/mutants.py``'s)."""
