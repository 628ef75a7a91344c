"""The one launcher of server processes (:mod:`rocketlab.oracle.servers`), on small Python servers: up on its
JSON line (or a line with ``ready_text``) and once it accepts; one clear error, and nothing left running,
when a server exits first, prints something else or never accepts; SIGTERM sent once, then the exit code."""

from __future__ import annotations

import sys
import time

import pytest

from rocketlab.oracle.servers import BackendError, Server, free_port

SERVER = """
import json, signal, socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
terms = []
signal.signal(signal.SIGTERM, lambda *_: terms.append(1))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if mode != "deaf":
    s.bind(("127.0.0.1", port)); s.listen()
if mode == "chatty":
    print("starting...", flush=True); print("boot success", flush=True)
elif mode == "garbage":
    print("not json", flush=True)
elif mode == "exit":
    sys.exit(3)
else:
    print(json.dumps({"node": "x", "listening": f"127.0.0.1:{port}"}), flush=True)
while not terms:
    time.sleep(0.01)
time.sleep(0.3)  # a slow shutdown: a second SIGTERM now would find the handler still there, counted
sys.exit(10 + len(terms))
"""


def server(tmp_path, mode: str, port: int = 0, **kw) -> Server:
    port = port or free_port()
    return Server(mode, "kit", "node", [sys.executable, "-c", SERVER, mode, str(port)], tmp_path / f"{mode}.log",
                  port, **kw)


def test_a_server_is_up_on_its_json_line_and_stops_on_one_sigterm(tmp_path):
    s = server(tmp_path, "json").start(timeout_s=20)
    assert s.alive and s.ready["listening"] == f"127.0.0.1:{s.port}"
    s.terminate()
    s.terminate()  # sent once only
    assert s.stop(timeout_s=10) == 11 and not s.alive


def test_a_line_with_ready_text_counts_as_up(tmp_path):
    s = server(tmp_path, "chatty", ready_text="boot success").start(timeout_s=20)
    assert s.ready == {"line": "boot success"}
    assert s.stop(timeout_s=10) == 11


@pytest.mark.parametrize("mode,error", [
    ("exit", r"exited \(3\) before it was up"),
    ("garbage", "printed 'not json', not that it is up"),
    ("deaf", "does not accept on"),
])
def test_a_server_that_is_not_up_is_one_clear_error_and_is_not_left_running(tmp_path, mode, error):
    s = server(tmp_path, mode)
    started = time.monotonic()
    with pytest.raises(BackendError, match=error) as caught:
        s.start(timeout_s=2)
    assert "\n" not in str(caught.value) and time.monotonic() - started < 20
    assert not s.alive
