"""Real processes on 127.0.0.1: two pingpong nodes, SIGKILL, restart, garbage, a port in use."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.realnodes import free_port
from tests.realnodes import start_node as start

pytestmark = pytest.mark.realnet


def write_config(path: Path, self_id: str, ports: dict[str, int], stream_ports: dict[str, int],
                 run_dir: Path) -> Path:
    peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in ports.items())
    stream_peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in stream_ports.items())
    path.write_text(f"nodeKind=pingpong\nselfId={self_id}\npeers={peers}\nrunDir={run_dir}\n"
                    f"streamListenPort={stream_ports[self_id]}\nstreamPeers={stream_peers}\nstreamFrames=3\n"
                    "heartbeatIntervalMs=20\npingIntervalMs=50\npingTimeoutMs=300\n")
    return path


def pings(run_dir: Path, node: str) -> list[dict]:
    path = run_dir / f"events-{node}.jsonl"
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["kind"] == "ping"]


def wait_for(predicate, timeout_s: float = 15.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def pair(tmp_path):
    ports = {"n0": free_port(), "n1": free_port()}
    stream_ports = {"n0": free_port(), "n1": free_port()}
    run_dir = tmp_path / "run"
    configs = {n: write_config(tmp_path / f"{n}.conf", n, ports, stream_ports, run_dir) for n in ports}
    procs: dict[str, subprocess.Popen] = {}
    yield configs, procs, run_dir, ports
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_two_processes_ping_survive_sigkill_and_restart(pair):
    configs, procs, run_dir, _ = pair
    procs["n0"], procs["n1"] = start(configs["n0"]), start(configs["n1"])
    assert wait_for(lambda: any(p["ok"] for p in pings(run_dir, "n0")))
    os.kill(procs["n1"].pid, signal.SIGKILL)
    procs["n1"].wait()
    seen = len(pings(run_dir, "n0"))
    assert wait_for(lambda: any(not p["ok"] for p in pings(run_dir, "n0")[seen:]))
    procs["n1"] = start(configs["n1"])
    mark = len(pings(run_dir, "n0"))
    assert wait_for(lambda: any(p["ok"] for p in pings(run_dir, "n0")[mark:]))
    for proc in procs.values():
        proc.send_signal(signal.SIGTERM)
    assert [proc.wait(timeout=10) for proc in procs.values()] == [0, 0]
    final = {n: json.loads((run_dir / f"final-{n}.json").read_text()) for n in procs}
    assert final["n1"]["frames_received"] > 0 and final["n0"]["frames_received"] > 0
    assert final["n0"]["frame_errors"] == final["n1"]["frame_errors"] == 0


def test_garbage_on_the_socket_closes_that_connection_only(pair):
    configs, procs, run_dir, ports = pair
    procs["n0"], procs["n1"] = start(configs["n0"]), start(configs["n1"])
    with socket.create_connection(("127.0.0.1", ports["n0"])) as s:
        s.sendall(b"\xff" * 64)
        s.settimeout(5)
        assert s.recv(10) == b""  # closed by n0
    mark = len(pings(run_dir, "n0"))
    assert wait_for(lambda: any(p["ok"] for p in pings(run_dir, "n0")[mark:]))
    assert procs["n0"].poll() is None
    procs["n0"].send_signal(signal.SIGTERM)
    assert procs["n0"].wait(timeout=10) == 0
    drops = [json.loads(line) for line in (run_dir / "events-n0.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "msg_drop" and "out of range" in e["reason"] for e in drops)


def test_port_in_use_is_one_clear_line_and_exit_2(pair):
    configs, _, _, ports = pair
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports["n0"]))
        s.listen()
        proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(configs["n0"])],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"rocketlab: port 127.0.0.1:{ports['n0']} is already in use"


def test_bad_node_config_is_exit_2(tmp_path):
    bad = tmp_path / "bad.conf"
    bad.write_text("selfId=n9\npeers=n0-127.0.0.1:1\n")
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "selfId='n9' is not in peers" in proc.stderr


def test_a_client_that_is_not_a_peer_gets_replies_on_its_own_connection(pair):
    import asyncio

    from rocketlab.net.client import NetClient
    from rocketlab.pingpong import Ping, PingPongCodec, Pong

    configs, procs, _, ports = pair
    procs["n0"] = start(configs["n0"])

    async def talk():
        client = await NetClient(("127.0.0.1", ports["n0"]), PingPongCodec(), "producer-1").connect()
        replies = await asyncio.gather(*(client.request(Ping(i, 0)) for i in range(5)))
        await client.close()
        return replies

    assert asyncio.run(talk()) == [Pong(i, 0) for i in range(5)]
    assert procs["n0"].poll() is None


def test_a_node_runs_on_uvloop_where_installed_and_on_asyncio_when_asked(pair):
    """uvloop is a dependency (not on Windows); ROCKETLAB_EVENT_LOOP=asyncio chooses asyncio's own loop and
    a wrong value is one clear line and exit 2. Every realnet test runs its nodes on the default loop."""
    configs, procs, _, ports = pair
    expected = "asyncio" if sys.platform == "win32" else "uvloop"  # pyproject installs it everywhere else
    for choice, loop in ((None, expected), ("asyncio", "asyncio")):
        env = {k: v for k, v in os.environ.items() if k != "ROCKETLAB_EVENT_LOOP"}
        if choice:
            env["ROCKETLAB_EVENT_LOOP"] = choice
        proc = subprocess.Popen([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(configs["n0"])],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        procs["n0"] = proc
        started = json.loads(proc.stdout.readline())
        assert started["event_loop"] == loop and started["listening"] == f"127.0.0.1:{ports['n0']}", started
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    bad = subprocess.run([sys.executable, "-m", "rocketlab.cli", "node", "--config", str(configs["n0"])],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "ROCKETLAB_EVENT_LOOP": "tokio"})
    assert bad.returncode == 2
    assert bad.stderr.strip() == "rocketlab: ROCKETLAB_EVENT_LOOP='tokio': expected 'uvloop' or 'asyncio'"
