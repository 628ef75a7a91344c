"""The name server tests' fixtures, one of each per session: the kit's name server (``rocketlab node --config
namesrv.conf``) and, beside it, the real 4.9.5 one. Tests sharing them use clusters and topics of their own."""

from __future__ import annotations

import pytest

from rocketlab.oracle.servers import free_port, kit_node
from tests.namesrv.javaproc import java_namesrv


@pytest.fixture(scope="session")
def kit_namesrv(tmp_path_factory) -> int:
    """The kit's name server's port."""
    tmp = tmp_path_factory.mktemp("kit-namesrv")
    port = free_port()
    conf = tmp / "namesrv.conf"
    conf.write_text(f"nodeKind=namesrv\nlistenPort={port}\nrunDir={tmp / 'run'}\n")
    kit = kit_node(conf, port=port).start(timeout_s=60.0)
    yield port
    kit.stop(timeout_s=15)


@pytest.fixture(scope="session")
def both(tmp_path_factory, kit_namesrv) -> tuple[int, int]:
    """(the Java name server's port, the kit's)."""
    java = java_namesrv(free_port(), tmp_path_factory.mktemp("java-namesrv"))
    yield int(java.ready["namesrv"].rsplit(":", 1)[1]), kit_namesrv
    java.stop()
