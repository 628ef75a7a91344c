"""The discrete-event kernel: a virtual clock in milliseconds and an event queue with a total order.

Events are ordered by ``(time_ms, seq)`` where ``seq`` is the scheduling order, so two events at the
same millisecond always run in the order they were scheduled: the same seed gives the same run. The
kernel knows nothing about nodes or networks; it runs callbacks.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from rocketlab.errors import LocalProtocolError


class HorizonReached(BaseException):  # noqa: N818 - a signal, not an error: no ``except Exception`` may swallow it
    """Raised by :class:`Scheduler` instead of running an event past ``horizon_ms``: the run stops there,
    with every event due at or before the horizon run (how a fork rebuilds a recorded run to an instant)."""


class Scheduler:
    """Virtual clock plus a heap of ``(time_ms, seq, fn, args)``; ``step`` runs the earliest event."""

    __slots__ = ("now_ms", "_queue", "_seq", "events_run", "horizon_ms")

    def __init__(self) -> None:
        self.now_ms = 0
        self._queue: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = 0
        self.events_run = 0
        self.horizon_ms: int | None = None  # when set, running past it raises HorizonReached

    def at(self, time_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` at virtual time ``time_ms`` (never in the past)."""
        if time_ms < self.now_ms:
            raise LocalProtocolError(f"cannot schedule at {time_ms} ms: the clock is at {self.now_ms} ms")
        self._seq += 1
        heapq.heappush(self._queue, (time_ms, self._seq, fn, args))

    def after(self, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        self.at(self.now_ms + delay_ms, fn, *args)

    def next_time(self) -> int | None:
        return self._queue[0][0] if self._queue else None

    def step(self) -> bool:
        """Run the earliest event; False when the queue is empty."""
        if not self._queue:
            return False
        if self.horizon_ms is not None and self._queue[0][0] > self.horizon_ms:
            self._stop_at_horizon()
        time_ms, _, fn, args = heapq.heappop(self._queue)
        self.now_ms = time_ms
        self.events_run += 1
        fn(*args)
        return True

    def run_until_time(self, end_ms: int) -> None:
        """Run every event due at or before ``end_ms``, then set the clock to ``end_ms``."""
        queue = self._queue
        pop = heapq.heappop
        horizon = self.horizon_ms
        beyond = horizon is not None and end_ms > horizon
        if beyond:
            end_ms = horizon
        while queue and queue[0][0] <= end_ms:
            time_ms, _, fn, args = pop(queue)
            self.now_ms = time_ms
            self.events_run += 1
            fn(*args)
        if end_ms > self.now_ms:
            self.now_ms = end_ms
        if beyond:
            self._stop_at_horizon()

    def _stop_at_horizon(self) -> None:
        assert self.horizon_ms is not None
        self.now_ms = max(self.now_ms, self.horizon_ms)
        raise HorizonReached(self.horizon_ms)

    def __len__(self) -> int:
        return len(self._queue)
