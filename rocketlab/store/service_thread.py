"""A background loop that runs one step function every interval, or sooner when woken.

Models ``org.apache.rocketmq.common.ServiceThread`` (``waitForRunning``/``wakeup``/``shutdown``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class ServiceThread:
    """Models ``ServiceThread``: a daemon thread calling ``step()`` in a loop, sleeping
    ``interval_s`` between calls unless :meth:`wakeup` is called.

    The store's services (flush, group commit, reput, consume-queue flush, clean) are plain objects
    with step methods, so a simulator can call the same steps without any thread; this class is
    only the real-broker driver. A step that raises is logged and the loop goes on, as in Java.
    ``on_shutdown`` runs once in the thread after the loop ends (Java's final flush loops).
    """

    def __init__(
        self,
        name: str,
        step: Callable[[], object],
        interval_s: float,
        on_shutdown: Callable[[], object] | None = None,
    ) -> None:
        self.name = name
        self._step = step
        self._interval_s = interval_s
        self._on_shutdown = on_shutdown
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def wakeup(self) -> None:
        self._wake.set()

    def is_stopped(self) -> bool:
        return self._stopped

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._stopped = True
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def halt(self, timeout_s: float = 10.0) -> None:
        """Stop without the shutdown step (a crash): wait for a step under way, run nothing more."""
        self._on_shutdown = None
        self.shutdown(timeout_s)

    def _run(self) -> None:
        while not self._stopped:
            try:
                self._step()
            except Exception:  # noqa: BLE001 - a service keeps running, as in RocketMQ
                log.exception("%s: step failed", self.name)
            self._wake.wait(self._interval_s)
            self._wake.clear()
        if self._on_shutdown is not None:
            try:
                self._on_shutdown()
            except Exception:  # noqa: BLE001
                log.exception("%s: shutdown step failed", self.name)
