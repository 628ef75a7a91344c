"""TraceRecorder: stamps events with the envelope, keeps them, streams them, feeds subscribers.

Both runtimes use it: the simulator stamps ``t`` with virtual time, the TCP runtime with monotonic wall
time. ``seq`` is the recorder's own counter, so within one recorder the order is total.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import IO, Any

Event = dict[str, Any]
Subscriber = Callable[[Event], None]


class TraceRecorder:
    """Collects trace events.

    ``enabled=False`` turns recording off entirely (benchmarks); ``kinds`` keeps only the named kinds;
    ``keep=False`` does not keep events in memory (they still reach ``sink`` and subscribers).
    ``sink`` is a text file that receives one JSON line per event, flushed by :meth:`flush`.
    """

    __slots__ = ("enabled", "kinds", "keep", "sink", "events", "seq", "_subscribers")

    def __init__(
        self,
        *,
        enabled: bool = True,
        kinds: Iterable[str] | None = None,
        keep: bool = True,
        sink: IO[str] | None = None,
    ) -> None:
        self.enabled = enabled
        self.kinds = frozenset(kinds) if kinds is not None else None
        self.keep = keep
        self.sink = sink
        self.events: list[Event] = []
        self.seq = 0
        self._subscribers: list[Subscriber] = []

    def wants(self, kind: str) -> bool:
        """True if an event of ``kind`` would be recorded (lets callers skip building it)."""
        return self.enabled and (self.kinds is None or kind in self.kinds)

    def emit(self, t: int, node: str | None, kind: str, fields: dict[str, Any]) -> Event | None:
        if not self.enabled or (self.kinds is not None and kind not in self.kinds):
            return None
        event: Event = {"t": t, "seq": self.seq, "node": node, "kind": kind, **fields}
        self.seq += 1
        if self.keep:
            self.events.append(event)
        if self.sink is not None:
            self.sink.write(json.dumps(event, separators=(",", ":")) + "\n")
        for subscriber in self._subscribers:
            subscriber(event)
        return event

    def subscribe(self, fn: Subscriber) -> None:
        """Call ``fn(event)`` after every recorded event (invariant checkers, live widgets)."""
        self._subscribers.append(fn)

    def unsubscribe(self, fn: Subscriber) -> None:
        self._subscribers.remove(fn)

    def flush(self) -> None:
        if self.sink is not None:
            self.sink.flush()


def describe(event: Event) -> str:
    """One stable line per event, e.g. ``t=1200 n1 role term=3 role=LEADER leader=n1``."""
    head = f"t={event['t']} {event.get('node') or '-'} {event['kind']}"
    rest = " ".join(
        f"{k}={_fmt(v)}" for k, v in event.items() if k not in ("t", "seq", "node", "kind")
    )
    return f"{head} {rest}" if rest else head


def _fmt(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(str(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
