"""Server processes on 127.0.0.1 for the oracle and its tests: the real 4.9.5 name server and broker
(``brokeroracle.NamesrvMain`` / ``BrokerMain``, the launchers standing for ``NamesrvStartup`` /
``BrokerStartup``, command lines from :meth:`rocketlab.oracle.client_jvm.BrokerJava.server_command`) or the
kit's nodes (``rocketlab node --config``), each a :class:`Server`: started in a session of its own, up once it
printed its one JSON line on stdout and accepts on its port, stopped by its PID only (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError


class BackendError(RocketlabError):
    """A server did not start or stop as expected (the message names its log)."""


def free_port(spacing: int = 0) -> int:
    """A free port ``p`` of 127.0.0.1 whose neighbours ``p-spacing..p+spacing`` are free too (a Java broker
    also listens on ``listenPort-2``, its VIP channel, and ``listenPort+1``, HA)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port - spacing < 1024 or port + spacing > 65000:
            continue
        try:
            for p in range(port - spacing, port + spacing + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    raise BackendError("no free block of ports on 127.0.0.1")


def write_properties(path: Path, props: dict[str, str]) -> Path:
    """``key=value`` lines (a broker.conf, a node's config), the parent folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def node_command(config: Path) -> list[str]:
    """The kit's node (``rocketlab node --config CONFIG``) run by this Python."""
    return [sys.executable, "-m", "rocketlab.cli", "node", "--config", str(config)]


def last_line(log: Path) -> str:
    """The last line of ``log`` that says something (or that it has none)."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return f"(no log {log})"
    return lines[-1][:300] if lines else f"(empty log {log})"


@dataclass
class Server:
    """One server process: ``kind`` java or kit, ``role`` namesrv/broker/controller, its command and log
    (stderr); ``ready`` is the JSON line it printed when up."""

    name: str
    kind: str
    role: str
    command: list[str]
    log: Path
    port: int
    proc: subprocess.Popen | None = None
    ready: dict[str, Any] = field(default_factory=dict)

    def start(self, timeout_s: float = 90.0) -> Server:
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout_s
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # Java's launchers and `rocketlab node` print one JSON line when up
        try:
            self.ready = json.loads(line) if line else {}
        except ValueError:
            self.kill()
            raise BackendError(f"{self.name} printed {line.strip()!r}, not its JSON line: {last_line(self.log)}") \
                from None
        if not line:
            self.proc.wait()
            self._close()
            raise BackendError(f"{self.kind} {self.role} {self.name} exited ({self.proc.returncode}) before it was "
                               f"up: {last_line(self.log)}")
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.kill()
        raise BackendError(f"{self.name} printed {line.strip()!r} but does not accept on {self.port}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL (a crash)."""
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._close()

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (the servers' shutdown hooks persist offsets), SIGKILL if it hangs."""
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def _close(self) -> None:
        if self.proc is not None and self.proc.stdout is not None and self.proc.poll() is not None:
            self.proc.stdout.close()
