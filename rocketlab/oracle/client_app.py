"""The Python side of the client application (:mod:`rocketlab.oracle.client_jvm`'s ``ClientApp``): commands to
the unchanged 4.9.5 producer and consumers in one JVM, the ``send``/``recv`` lines they print, and the checks
an application's view implies: every acknowledged message received exactly once per group, in queue order,
with the body, keys, tags and properties it was sent with.

Models what a RocketMQ application sees of ``DefaultMQProducer`` / ``DefaultMQPullConsumer`` /
``DefaultLitePullConsumer`` / ``DefaultMQPushConsumer``; the broker behind is whatever
:class:`~rocketlab.oracle.broker_group.Backend` started.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rocketlab.oracle.client_jvm import BrokerJava
from rocketlab.oracle.jvm import OracleDied, OracleError, OracleProcess

Event = dict[str, Any]
STYLES = ("pull", "lite_assign", "lite_subscribe", "push_first", "push_last")
"""The consumer styles, each a group of its own (push_first/push_last: DefaultMQPushConsumer from first/last)."""


class ClientApp:
    """One ClientApp JVM; its ``send`` and ``recv`` lines are gathered as they come."""

    def __init__(self, java: BrokerJava, workdir: Path, name: str = "client", heap_mb: int = 384) -> None:
        self.proc: OracleProcess = java.start_client(workdir, name=name, heap_mb=heap_mb)
        self._events: list[Event] = []
        self._cond = threading.Condition()
        self._closed = False
        threading.Thread(target=self._drain, name=f"client-app-{self.proc.pid}", daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                ev = self.proc.next_event(timeout_s=3600)
            except OracleDied:
                break
            with self._cond:
                self._events.append(ev)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def request(self, cmd: str, timeout_s: float = 180.0, **fields: Any) -> dict[str, Any]:
        return self.proc.request(cmd, timeout_s=timeout_s, **fields)

    def events(self, kind: str | None = None, **match: Any) -> list[Event]:
        with self._cond:
            evs = list(self._events)
        return [e for e in evs if (kind is None or e["event"] == kind)
                and all(e.get(k) == v for k, v in match.items())]

    def wait_for(self, count: int, kind: str, timeout_s: float = 60.0, settle_s: float = 0.0,
                 **match: Any) -> list[Event]:
        """The ``kind`` events matching ``match`` once there are at least ``count`` (or at the timeout), then
        ``settle_s`` more seconds, so a duplicate that follows is caught too."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while len(self.events(kind, **match)) < count and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.5))
        if settle_s:
            time.sleep(settle_s)
        return self.events(kind, **match)

    # ------------------------------------------------------------------------------------- producing
    def produce(self, namesrv: str, topic: str, count: int, run: str, seed: int = 1, big: bool = False,
                batch_every: int = 0, batch_size: int = 4, **fields: Any) -> list[Event]:
        """Send ``count`` messages of mixed shape (synchronously); their ``send`` events."""
        reply = self.request("produce", namesrv=namesrv, topic=topic, count=count, run=run, seed=seed, big=big,
                             batch_every=batch_every, batch_size=batch_size, **fields)
        return self.wait_for(reply["sent"], "send", timeout_s=30, run=run)

    def create_topic(self, namesrv: str, topic: str, queues: int = 4, timeout_s: float = 30.0) -> None:
        """UPDATE_AND_CREATE_TOPIC through TBW102's route; retried while the broker is not registered yet."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.request("create_topic", namesrv=namesrv, topic=topic, queues=queues)
                return
            except OracleError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def consume(self, name: str, style: str, namesrv: str, topic: str, group: str | None = None,
                **fields: Any) -> None:
        """Start consumer ``name`` (see :data:`STYLES`; ``push_first``/``push_last`` set ``from``)."""
        if style.startswith("push_"):
            fields.setdefault("from", style[len("push_"):])
            style = "push"
        self.request("consume", name=name, style=style, namesrv=namesrv, topic=topic, group=group or f"g_{name}",
                     **fields)

    def stop_consumer(self, name: str) -> None:
        self.request("stop_consumer", name=name)

    def close(self) -> None:
        self.proc.close()

    def __enter__(self) -> ClientApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------------- checks
def acknowledged(sends: list[Event]) -> list[Event]:
    return [s for s in sends if s.get("status") == "SEND_OK"]


def exactly_once(sends: list[Event], recvs: list[Event]) -> list[str]:
    """Problems (empty: none) with "every acknowledged message received exactly once, nothing else"."""
    want = {s["uniq"] for s in acknowledged(sends)}
    got = Counter(r["uniq"] for r in recvs)
    problems = []
    missing = want - set(got)
    if missing:
        problems.append(f"{len(missing)} of {len(want)} acknowledged never received, e.g. {sorted(missing)[:3]}")
    dup = {u: n for u, n in got.items() if n > 1}
    if dup:
        problems.append(f"{len(dup)} received more than once, e.g. {list(dup.items())[:3]}")
    extra = set(got) - want
    if extra:
        problems.append(f"{len(extra)} received that were not sent here, e.g. {sorted(extra)[:3]}")
    return problems


def queue_order(recvs: list[Event]) -> list[str]:
    """Problems with "each queue's messages handed over in queue-offset order"."""
    last: dict[tuple[str, int], int] = {}
    problems = []
    for r in recvs:
        q = (r["store_host"], r["queue"])
        if q in last and r["queue_offset"] <= last[q]:
            problems.append(f"queue {q}: offset {r['queue_offset']} after {last[q]}")
        last[q] = r["queue_offset"]
    return problems[:5]


FIELDS = ("size", "sha", "tags", "keys", "props", "topic", "queue", "queue_offset")


def same_content(sends: list[Event], recvs: list[Event], fields: tuple[str, ...] = FIELDS) -> list[str]:
    """Problems with "received as sent": body (length and digest), tags, keys, user properties, queue, offset."""
    by_uniq = {s["uniq"]: s for s in acknowledged(sends)}
    problems = []
    for r in recvs:
        s = by_uniq.get(r["uniq"])
        if s is None:
            continue
        for f in fields:
            if s.get(f) != r.get(f):
                problems.append(f"{r['uniq']} {f}: sent {str(s.get(f))[:80]} received {str(r.get(f))[:80]}")
    return problems[:5]


def per_queue(recvs: list[Event]) -> dict[tuple[str, int], list[int]]:
    out: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in recvs:
        out[(r["store_host"], r["queue"])].append(r["queue_offset"])
    return dict(out)
