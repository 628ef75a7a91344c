"""Lab 08 exercises: the client's side of a failover.

``allocate`` is the consumer group's share of a topic's queues (RocketMQ 4.9.5's
``AllocateMessageQueueAveragely``); ``select_one_message_queue`` is the producer's choice of a queue for each
send attempt, the first and every retry (``MQFaultStrategy.selectOneMessageQueue``). Edit the bodies below,
then check them from the notebook (``check("lab08.allocate")``) or from a shell (``rocketlab grade lab08``).
The grader compares your answers with RocketMQ's over every input of its tables, then plugs your code into
the kit's client (every member of a rebalancing consumer group, a producer whose broker dies). Keep the names
and signatures; you may add helpers.
"""

from __future__ import annotations

from rocketlab.client.message import MessageQueue
from rocketlab.client.route import LatencyView, QueueChoice, java_position  # noqa: F401  (yours to use)


def allocate(consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
             cid_all: list[str]) -> list[MessageQueue]:
    """The queues member ``current_cid`` of ``consumer_group`` consumes.

    Every member calls this on each rebalance with the same ``mq_all`` (the topic's readable queues) and
    ``cid_all`` (the client ids the broker lists for the group), both sorted; no member talks to another. So
    your answer must make the members' shares, taken together, a partition of ``mq_all``: every queue
    owned by exactly one listed member (a queue owned twice is consumed twice, one owned by nobody never).

    The shares are "averagely": sizes differ by at most one, each is one contiguous run of ``mq_all``,
    and the runs follow the members' order in ``cid_all`` (the first member the first run). When the
    queues do not divide evenly, RocketMQ 4.9.5 decides which members get the extra ones; the grader's
    table holds every queue count 1-16 for groups of 1-10 members, and its first wrong case shows who
    should have had the extra queue. Return the queues in ``mq_all``'s order. An empty ``mq_all``,
    ``cid_all`` or ``current_cid`` is a caller's bug: raise ``ValueError``, as Java's check throws
    IllegalArgumentException.
    """
    raise NotImplementedError("lab08.allocate")


def select_one_message_queue(queues: list[MessageQueue], index: int, last_broker_name: str | None,
                             latency: LatencyView | None) -> QueueChoice:
    """The queue of the producer's next send attempt.

    ``queues`` is the route's list of writable queues (brokers sorted by name); the producer keeps a
    counter, ``index`` (``sendWhichQueue``): to take "the next in turn" it adds one to the counter and uses
    the position ``counter % len(queues)``. Round robin spreads sends over every queue of every broker.
    The counter is a Java int that keeps counting past 2**31 - 1 (Java starts it at random): its
    ``incrementAndGet`` answers ``counter & 0x7FFFFFFF``, and ``java_position(value, n)`` (imported above)
    is Java's ``Math.abs(value) % n`` on an int, for where it wraps.
    ``last_broker_name`` is None for a first attempt, else the broker the previous attempt of this message
    failed on. ``latency`` is None unless the producer runs with ``sendLatencyFaultEnable``; then it tells
    which brokers are in their fault window (a broker that failed, or answered slowly, is put there for a
    time that grows with its latency: ``MQFaultStrategy.LATENCY_MAX`` / ``NOT_AVAILABLE_DURATION``), the
    broker its latency table finds least bad, and each route broker's write queue count.

    Return ``QueueChoice(position, queue, index)``: the position in ``queues`` you took, the queue the
    message goes to, and the counter after your choice (the producer keeps it for the next call).

    What RocketMQ 4.9.5 promises, and the grader checks over every route, counter and fault state:

    * no latency table: a retry goes to another broker than the one that failed whenever the route has
      one; a first attempt takes the next queue in turn;
    * with the table: never a queue of a broker in its fault window while another broker is available;
      the failed broker is in the table after a failure, so the table alone decides;
    * the producer always gets a queue: with every broker in its fault window the message still goes out
      (Java's fallback may even send to a broker that is no longer in ``queues``: the ``queue`` you return
      then differs from ``queues[position]``, and the producer rewrites its route's entry there, as Java
      mutates the MessageQueue object).

    How far the counter moves on each path, and what exactly the fallback does, are 4.9.5's
    (``MQFaultStrategy`` and ``TopicPublishInfo`` in the client's source are the authority); the
    table's first wrong case names the input and the choice expected.
    """
    raise NotImplementedError("lab08.select_one_message_queue")
