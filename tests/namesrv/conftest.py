"""The name server tests' fixtures, one of each per session: the kit's name server (``rocketlab node --config
namesrv.conf``) and, beside it, the real 4.9.5 one. Tests sharing them use clusters and topics of their own."""

from __future__ import annotations

import pytest

from tests.namesrv.javaproc import java_namesrv
from tests.realnodes import free_port, start_node


@pytest.fixture(scope="session")
def kit_namesrv(tmp_path_factory) -> int:
    """The kit's name server's port."""
    tmp = tmp_path_factory.mktemp("kit-namesrv")
    port = free_port()
    conf = tmp / "namesrv.conf"
    conf.write_text(f"nodeKind=namesrv\nlistenPort={port}\nrunDir={tmp / 'run'}\n")
    kit = start_node(conf)
    yield port
    kit.terminate()
    kit.wait(timeout=15)


@pytest.fixture(scope="session")
def both(tmp_path_factory, kit_namesrv) -> tuple[int, int]:
    """(the Java name server's port, the kit's)."""
    java = java_namesrv(free_port(), tmp_path_factory.mktemp("java-namesrv"))
    yield int(java.ready["namesrv"].rsplit(":", 1)[1]), kit_namesrv
    java.stop()
