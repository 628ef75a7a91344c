"""The name server tests' fixtures: the real 4.9.5 name server and the kit's, side by side, once per session."""

from __future__ import annotations

import pytest

from tests.namesrv.javaproc import java_namesrv
from tests.realnodes import free_port, start_node


@pytest.fixture(scope="session")
def both(tmp_path_factory) -> tuple[int, int]:
    """(the Java name server's port, the kit's): ``rocketlab node --config namesrv.conf``."""
    tmp = tmp_path_factory.mktemp("namesrv-oracle")
    java = java_namesrv(free_port(), tmp / "java")
    port = free_port()
    conf = tmp / "namesrv.conf"
    conf.write_text(f"nodeKind=namesrv\nlistenPort={port}\nrunDir={tmp / 'kit'}\n")
    kit = start_node(conf)
    yield int(java.ready["namesrv"].rsplit(":", 1)[1]), port
    java.stop()
    kit.terminate()
    kit.wait(timeout=15)
