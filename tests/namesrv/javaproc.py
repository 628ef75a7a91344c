"""The real RocketMQ 4.9.5 name server and broker for tests, started by the kit's one launcher
(:meth:`rocketlab.oracle.client_jvm.BrokerJava.server`, a :class:`rocketlab.oracle.servers.Server`) from the
class path ``ROCKETLAB_JAVA_BROKER`` names (``.ci/oracle-classpath broker JARS_DIR``). Without it (or without
java) a test skips saying why; under CI=true it fails. Each process is stopped by its PID (TERM, then KILL)."""

from __future__ import annotations

from pathlib import Path

from rocketlab.oracle.servers import Server
from tests.oracle.conftest import need_broker_java


def java_namesrv(port: int, workdir: Path) -> Server:
    """The real name server on ``port``, up; ``.ready["namesrv"]`` is the address it printed."""
    return need_broker_java().server("namesrv", str(port), workdir=workdir, port=port).start(timeout_s=60.0)


def java_broker(properties: Path, workdir: Path, port: int) -> Server:
    """The real broker of ``properties`` (whose ``listenPort`` is ``port``), up and registered."""
    return need_broker_java().server("broker", str(properties), workdir=workdir, port=port).start(timeout_s=90.0)
