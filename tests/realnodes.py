"""Real node processes for the realnet tests: free ports, start (until listening), SIGKILL, clean stop, and
reading back what a broker serves."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from rocketlab.broker.protocol import PullMessageRequest
from rocketlab.net.client import NetClient


async def read_all(client: NetClient, expected: int, timeout_s: float = 20.0, topic: str = "TopicTest") -> list[bytes]:
    """Pull queue 0 of ``topic`` from the start through ``client`` until ``expected`` bodies came back or
    ``timeout_s`` passed: what a broker (or the master a group elected) serves, in order."""
    end = time.monotonic() + timeout_s
    bodies: list[bytes] = []
    while len(bodies) < expected and time.monotonic() < end:
        got = await client.request(PullMessageRequest(topic, 0, len(bodies), 32))
        if got.status == "FOUND":
            bodies += [m["body"] for m in got.messages]
        else:
            await asyncio.sleep(0.05)
    return bodies


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(config: Path, node: str | None = None) -> subprocess.Popen:
    """``rocketlab node --config CONFIG``; returns once it prints that it listens (as ``node``).

    Its stderr goes to ``CONFIG.log`` beside the config (a pipe nobody drains would fill and stall a
    chatty node)."""
    log = Path(config).with_suffix(".log")
    with open(log, "ab") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(config)],
                                stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = proc.stdout.readline()
    assert line, log.read_text()
    assert json.loads(line)["listening"] and (node is None or json.loads(line)["node"] == node), line
    return proc


class NodeProcesses:
    """Processes started from ``self.configs`` (node id -> config file), killed or stopped by PID."""

    configs: dict[str, Path]

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        # Write back what earlier tests left dirty first: while the kernel writes back gigabytes, one fsync
        # can take hundreds of ms. A DLedger store now flushes on its own thread (FlushDataService), but a
        # classic broker still flushes on the node's one thread and writes can stall under writeback too:
        # long enough for short test timers to see a dead leader.
        os.sync()

    def start(self, node: str) -> None:
        self.procs[node] = start_node(self.configs[node], node)

    def kill(self, node: str) -> None:
        os.kill(self.procs[node].pid, signal.SIGKILL)
        self.procs[node].wait()

    def stop_all(self) -> list[int]:
        """SIGTERM every live process and wait; returns the exit codes (a hung one is killed)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes = []
        for proc in self.procs.values():
            try:
                codes.append(proc.wait(timeout=15))
            except subprocess.TimeoutExpired:
                proc.kill()
                codes.append(proc.wait())
        return codes
