"""The RocketMQ 4.9.5 client, name server and broker JVMs (``lib-broker``): class path, compile, command lines.

The class path comes from one setting, ``ROCKETLAB_JAVA_BROKER`` (entries separated by ``:``, ``dir/*``, or
``@FILE``, as :mod:`rocketlab.oracle.jvm` reads ``ROCKETLAB_JAVA_4``): the unchanged
``rocketmq-client``/``namesrv``/``broker`` 4.9.5 jars with their dependencies and the launchers
``brokeroracle.NamesrvMain`` / ``brokeroracle.BrokerMain`` (they start ``NamesrvController`` and
``BrokerController`` as ``NamesrvStartup`` / ``BrokerStartup`` do, without logback). CI sets it with
``.ci/oracle-classpath broker``.

Our client application (``java/client``: :class:`rocketlab.oracle.client.ClientApp`) is compiled against it on
first use and cached like the store driver; it runs as an :class:`~rocketlab.oracle.jvm.OracleProcess` (JSON
lines, stopped by PID). The servers' JVM options are those of ``BrokerStartup``'s scripts trimmed for tests
(256 MiB heap, serial GC, C1 only); the client's add ``rocketmq.client.rebalance.waitInterval`` (the
``RebalanceService`` period, 20 s by default; tests use 1 s).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rocketlab.oracle.jvm import (
    JDK17_OPTIONS,
    JVM_OPTIONS,
    ClassPathJava,
    OracleProcess,
    OracleUnavailable,
    java_command,
)
from rocketlab.oracle.servers import Server

SETTING = "ROCKETLAB_JAVA_BROKER"
SOURCES = (Path(__file__).with_name("java") / "lines", Path(__file__).with_name("java") / "client")
"""The JSON-lines protocol the driver shares, and the client application."""
REQUIRED = (
    ("org/apache/rocketmq/client/producer/DefaultMQProducer.class", "rocketmq-client 4.9.5"),
    ("org/apache/rocketmq/namesrv/NamesrvController.class", "rocketmq-namesrv 4.9.5"),
    ("org/apache/rocketmq/broker/BrokerController.class", "rocketmq-broker 4.9.5"),
    ("brokeroracle/BrokerMain.class", "the BrokerMain / NamesrvMain launchers (broker-oracle.jar)"),
    ("com/fasterxml/jackson/databind/ObjectMapper.class", "jackson-databind"),
)
SERVER_OPTIONS = (
    *JDK17_OPTIONS, "--add-exports", "java.base/sun.security.x509=ALL-UNNAMED", "-XX:MaxDirectMemorySize=128m",
    "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.logFile=System.err",
)
"""What the 4.9.5 name server and broker need on JDK 17 (the TLS self-signed certificate's export too)."""
SERVER_MAINS = {"namesrv": "brokeroracle.NamesrvMain", "broker": "brokeroracle.BrokerMain"}


@dataclass(frozen=True)
class BrokerJava(ClassPathJava):
    """The 4.9.5 client, name server and broker on ``class_path``, runnable with ``jdk``."""

    @classmethod
    def find(cls) -> BrokerJava:
        return cls(*cls.resolve(SETTING, os.environ.get(SETTING, "").strip(), REQUIRED,
                                "the RocketMQ 4.9.5 client/name server/broker oracle is off "
                                "(see rocketlab.oracle.client_jvm)"))

    def classes(self) -> Path:
        """The client application compiled against this class path (once, then cached)."""
        return self._compile_once(SOURCES, label="client-4.9.5", marker="rocketlab/oracle/client/ClientApp.class",
                                  what=f"the client application against {SETTING}")

    def server_command(self, main: str, *args: str, home: Path, heap_mb: int = 256) -> list[str]:
        """``java`` running ``brokeroracle.NamesrvMain`` / ``BrokerMain`` (the real servers) with ``args``."""
        return java_command(self.jdk, main, *args, class_path=self.class_path, home=home, heap_mb=heap_mb,
                            options=SERVER_OPTIONS)

    def server(self, role: str, *args: str, workdir: Path, port: int, name: str = "") -> Server:
        """The real name server (``role`` ``namesrv``: ``NamesrvMain PORT``) or broker (``broker``:
        ``BrokerMain broker.conf``) as a :class:`~rocketlab.oracle.servers.Server` not yet started: its
        scratch home ``workdir/home``, its log ``workdir/ROLE.log``, up when it accepts on ``port``."""
        workdir.mkdir(parents=True, exist_ok=True)
        cmd = self.server_command(SERVER_MAINS[role], *args, home=workdir / "home")
        return Server(name or role, "java", role, cmd, workdir / f"{role}.log", port)

    def start_client(self, workdir: Path, *, name: str = "client", heap_mb: int = 384,
                     rebalance_wait_ms: int = 1000) -> OracleProcess:
        """A new JVM running :class:`ClientApp` (its log ``NAME.log`` and scratch home in ``workdir``)."""
        cmd = java_command(self.jdk, "rocketlab.oracle.client.ClientApp", class_path=(str(self.classes()),
                           *self.class_path), home=Path(workdir) / f"{name}-home", heap_mb=heap_mb,
                           options=(*JVM_OPTIONS, "-XX:TieredStopAtLevel=1",
                                    f"-Drocketmq.client.rebalance.waitInterval={rebalance_wait_ms}"))
        return OracleProcess(cmd, Path(workdir) / f"{name}.log", "4.9.5")


def find_broker_java() -> tuple[BrokerJava | None, str]:
    """``(java, "")`` where the 4.9.5 client/name server/broker can run, else ``(None, why not)``."""
    try:
        java = BrokerJava.find()
        java.classes()
        return java, ""
    except OracleUnavailable as exc:
        return None, str(exc)
