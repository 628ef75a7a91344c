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
    """One server process: ``kind`` java or kit, ``role`` namesrv/broker/controller/member, its command and
    log (stderr). Up once it printed its JSON line on stdout (``ready``; a kit node's says ``listening``), or
    with ``ready_text`` a line holding that text, and (``port`` not 0) accepts on ``port``."""

    name: str
    kind: str
    role: str
    command: list[str]
    log: Path
    port: int = 0
    ready_text: str | None = None
    proc: subprocess.Popen | None = None
    ready: dict[str, Any] = field(default_factory=dict)
    terminated: bool = False
    """SIGTERM was sent (once: a second one may find the handler gone and kill a process that was stopping)."""

    def start(self, timeout_s: float = 90.0) -> Server:
        """:meth:`launch`, then :meth:`wait_up`."""
        self.launch()
        return self.wait_up(timeout_s)

    def launch(self) -> Server:
        """Start the process in a session of its own (several can be launched, then waited for together)."""
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True, text=True)
        self.terminated = False
        return self

    def wait_up(self, timeout_s: float = 90.0) -> Server:
        """Return once the process is up (see the class docstring); :class:`BackendError` (and the process
        killed) if it exits first, prints something else or does not accept on its port in ``timeout_s``."""
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        line = self.proc.stdout.readline()
        while self.ready_text is not None and line and self.ready_text not in line and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self._close()
            raise BackendError(f"{self.kind} {self.role} {self.name} exited ({self.proc.returncode}) before it was "
                               f"up: {last_line(self.log)}")
        self.ready = self._ready(line)
        while self.port:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() >= deadline:
                    self.kill()
                    raise BackendError(f"{self.name} printed {line.strip()!r} but does not accept on {self.port}")\
                        from None
                time.sleep(0.1)
        return self

    def _ready(self, line: str) -> dict[str, Any]:
        if self.ready_text is not None:
            if self.ready_text in line:
                return {"line": line.strip()}
        else:
            try:
                ready = json.loads(line)
            except ValueError:
                ready = None
            if isinstance(ready, dict) and (self.kind != "kit" or ready.get("listening")):
                return ready
        self.kill()
        raise BackendError(f"{self.kind} {self.role} {self.name} printed {line.strip()!r}, not that it is up: "
                           f"{last_line(self.log)}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process's group (it leads a session of its own)."""
        if self.alive:
            os.killpg(self.pid, sig)

    def kill(self) -> int | None:
        """SIGKILL (a crash); the exit code."""
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._close()
        return None if self.proc is None else self.proc.returncode

    def terminate(self) -> None:
        """SIGTERM, once (the servers' shutdown hooks persist offsets); :meth:`stop` waits for the exit."""
        if self.alive and not self.terminated:
            self.terminated = True
            self.signal(signal.SIGTERM)

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """SIGTERM (unless :meth:`terminate` sent it), SIGKILL if it hangs after ``timeout_s``; the exit code."""
        self.terminate()
        if self.alive:
            assert self.proc is not None
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        return self.kill()

    def _close(self) -> None:
        if self.proc is not None and self.proc.stdout is not None and self.proc.poll() is not None:
            self.proc.stdout.close()


def kit_node(config: Path, name: str = "", role: str = "node", port: int = 0) -> Server:
    """The kit's node of ``config`` (``rocketlab node --config CONFIG``), not yet started; its log
    ``CONFIG.log`` beside the config."""
    config = Path(config)
    return Server(name or config.stem, "kit", role, node_command(config), config.with_suffix(".log"), port)
