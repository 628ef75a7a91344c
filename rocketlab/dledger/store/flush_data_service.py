"""FlushDataService: the store's fsyncs and checkpoint writes on a thread of their own (TCP runtime only).

Models the thread of ``DLedgerMmapFileStore.FlushDataService``: Java flushes the data and index files
and writes the checkpoint there, so a slow disk never holds up the threads that answer heartbeats,
votes and pushes. A node of the TCP runtime runs its core on one thread; without this service one
``fsync`` taking 0.3-0.65 s while the kernel writes back gigabytes (measured here) stopped a leader's
heartbeats long enough to lose leadership. The simulator never starts it: there the store flushes
inline and every run stays deterministic.

Jobs carry a key; a job submitted while another of the same key still waits replaces it (a newer
snapshot of the same files covers the older one), so a disk slower than ``flush_file_interval`` makes
the flushes coalesce instead of queueing. A job that fails is logged and counted in :attr:`errors`;
the store stays dirty and the next round tries again (Java logs and carries on, too).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from rocketlab.errors import StoreError

log = logging.getLogger(__name__)


class FlushDataService:
    """One daemon thread running keyed jobs in submission order (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._jobs: dict[str, Callable[[], None]] = {}
        self._busy = False
        self._stopped = False
        self.done = 0
        """Jobs run (failed ones included)."""
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, key: str, job: Callable[[], None]) -> None:
        """Queue ``job``, replacing a waiting job of the same ``key``."""
        with self._cond:
            if self._stopped:
                raise StoreError(f"{self.name}: stopped, cannot take a {key} job")
            self._jobs[key] = job
            self._cond.notify_all()

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until every submitted job has run; False if ``timeout_s`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._jobs and not self._busy, timeout_s)

    @property
    def idle(self) -> bool:
        with self._cond:
            return not self._jobs and not self._busy

    def stop(self) -> None:
        """Run what is queued, then end the thread."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._jobs or self._stopped)
                if not self._jobs:
                    return  # stopped and nothing left
                key = next(iter(self._jobs))
                job = self._jobs.pop(key)
                self._busy = True
            try:
                job()
            except Exception as exc:  # noqa: BLE001 - a failed flush must not kill the thread
                log.error("%s: %s job failed: %s", self.name, key, exc)
                self.errors.append(f"{key}: {exc}")
            finally:
                with self._cond:
                    self._busy = False
                    self.done += 1
                    self._cond.notify_all()


__all__ = ["FlushDataService"]
