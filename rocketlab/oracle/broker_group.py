"""A name server and a broker group an application can use: the real 4.9.5 Java (``NamesrvController``,
``BrokerController``) or the kit's nodes (``rocketlab node``), started as separate processes on 127.0.0.1.

A :class:`Backend` pairs a name server of one kind with brokers of one kind: ``java`` (both Java), ``kit``
(both ours), and the cross pairs ``java-broker+kit-namesrv`` and ``kit-broker+java-namesrv``. Every broker
gets the same broker.conf keys, RocketMQ's own (``namesrvAddr``, ``listenPort``, ``brokerClusterName``,
``brokerName``, ``brokerId``, ``brokerRole``, ``storePathRootDir``, ``messageDelayLevel``, ...); the kit's
also get ``nodeKind=broker`` (and, in a DLedger or controller-mode group, its node keys ``selfId``/``peers``).
Java-only tuning keys (small index files) are not given to the kit. Layouts: ``single`` (one ASYNC_MASTER),
``dledger`` (three brokers, ``enableDLegerCommitLog``), ``controller`` (kit only: three controllers and
three ``enableControllerMode`` brokers; 4.9.5 has no controller). Processes are stopped by their PID only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rocketlab.oracle.client_jvm import BrokerJava
from rocketlab.oracle.servers import BackendError, Server, free_port, node_command, write_properties

BACKENDS = ("java", "kit", "java-broker+kit-namesrv", "kit-broker+java-namesrv")
"""Name-server kind and broker kind of each backend the client suite runs against."""
KINDS = {"java": ("java", "java"), "kit": ("kit", "kit"),
         "java-broker+kit-namesrv": ("kit", "java"), "kit-broker+java-namesrv": ("java", "kit")}
TEST_DELAY_LEVELS = " ".join(["1s"] * 18)
"""``messageDelayLevel`` for tests: 18 levels of one second (retries come back after ~1 s, not 10 s..2 h)."""
JAVA_ONLY = {"maxHashSlotNum", "maxIndexNum", "brokerIP1", "brokerIP2"}
DLEDGER_TIMERS = {"heartBeatTimeIntervalMs": "300", "maxHeartBeatLeak": "3", "minVoteIntervalMs": "150",
                  "maxVoteIntervalMs": "400"}
"""Kit DLedger timers for a short failover (the Java group keeps DLedger's defaults: 2 s heartbeats)."""


@dataclass
class Backend:
    """A name server and a broker group of ``name`` (one of :data:`BACKENDS`) in ``workdir``."""

    name: str
    workdir: Path
    java: BrokerJava | None
    layout: str = "single"
    servers: dict[str, Server] = field(default_factory=dict)
    namesrv_port: int = 0
    broker_extra: dict[str, str] = field(default_factory=dict)
    """broker.conf keys added to (or overriding) every broker's (e.g. ``messageDelayLevel``)."""
    short_dledger_timers: bool = True
    """The kit's DLedger brokers with :data:`DLEDGER_TIMERS`; False: DLedger's defaults, as the Java group has."""

    @property
    def namesrv_addr(self) -> str:
        return f"127.0.0.1:{self.namesrv_port}"

    @property
    def kinds(self) -> tuple[str, str]:
        return KINDS[self.name]

    def _java(self) -> BrokerJava:
        if self.java is None:
            raise BackendError(f"backend {self.name} needs the Java 4.9.5 servers (ROCKETLAB_JAVA_BROKER)")
        return self.java

    # ---------------------------------------------------------------------------------- building
    def _namesrv(self) -> Server:
        kind = self.kinds[0]
        self.namesrv_port = free_port()
        d = self.workdir / "namesrv"
        d.mkdir(parents=True, exist_ok=True)
        if kind == "java":
            return self._java().server("namesrv", str(self.namesrv_port), workdir=d, port=self.namesrv_port)
        conf = write_properties(d / "namesrv.conf", {"nodeKind": "namesrv", "listenPort": str(self.namesrv_port),
                                                     "runDir": str(d)})
        return Server("namesrv", kind, "namesrv", node_command(conf), d / "namesrv.log", self.namesrv_port)

    def broker_props(self, name: str, port: int, extra: dict[str, str]) -> dict[str, str]:
        store = self.workdir / name / "store"
        return {"brokerClusterName": "DefaultCluster", "brokerName": "broker-a", "brokerId": "0",
                "brokerRole": "ASYNC_MASTER", "flushDiskType": "ASYNC_FLUSH", "listenPort": str(port),
                "namesrvAddr": self.namesrv_addr, "storePathRootDir": str(store),
                "mappedFileSizeCommitLog": str(16 * 1024 * 1024), "messageDelayLevel": TEST_DELAY_LEVELS,
                "autoCreateTopicEnable": "true", "maxHashSlotNum": "10000", "maxIndexNum": "40000",
                "brokerIP1": "127.0.0.1", "brokerIP2": "127.0.0.1", **self.broker_extra, **extra}

    def _broker(self, name: str, props: dict[str, str]) -> Server:
        kind = self.kinds[1]
        d = self.workdir / name
        d.mkdir(parents=True, exist_ok=True)
        port = int(props["listenPort"])
        if kind == "java":
            conf = write_properties(d / "broker.properties", props)
            return self._java().server("broker", str(conf), workdir=d, port=port, name=name)
        kit = {k: v for k, v in props.items() if k not in JAVA_ONLY}
        conf = write_properties(d / "broker.conf", {"nodeKind": "broker", "runDir": str(d), **kit})
        return Server(name, kind, "broker", node_command(conf), d / "broker.log", port)

    def _dledger_group(self) -> list[Server]:
        ports = [free_port(spacing=2) for _ in range(3)]
        ids = ("n0", "n1", "n2")
        if self.kinds[1] == "java":
            dports = [free_port() for _ in ids]
            peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in zip(ids, dports, strict=True))
        else:  # the kit's DLedger RPCs travel on each node's message port
            peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in zip(ids, ports, strict=True))
        out = []
        for n, port in zip(ids, ports, strict=True):
            extra = {"brokerName": "broker-d", "enableDLegerCommitLog": "true", "dLegerGroup": "broker-d",
                     "dLegerSelfId": n, "dLegerPeers": peers}
            if self.kinds[1] == "kit":
                extra.update(selfId=n, peers=peers, **(DLEDGER_TIMERS if self.short_dledger_timers else {}))
            out.append(self._broker(f"broker-{n}", self.broker_props(f"broker-{n}", port, extra)))
        return out

    def _controller_group(self) -> list[Server]:
        """Kit only: controllers c0..c2 and brokers b0..b2 (``enableControllerMode``), the chaos campaign's
        configuration (:mod:`rocketlab.chaos.systems`) plus the broker.conf keys."""
        if self.kinds != ("kit", "kit"):
            raise BackendError("controller mode has no 4.9.5 twin: only the kit backend has it")
        ids = ("c0", "c1", "c2", "b0", "b1", "b2")
        ports = {n: free_port(spacing=2) for n in ids}
        ha = {n: free_port() for n in ids[3:]}
        peers = ";".join(f"{n}-127.0.0.1:{ports[n]}" for n in ids)
        out = []
        for n in ids[:3]:
            d = self.workdir / n
            conf = write_properties(d / "controller.conf", {
                "nodeKind": "controller", "selfId": n, "peers": peers, "controllerIds": "c0,c1,c2",
                "runDir": str(d), "scanNotActiveBrokerInterval": "1000", "scanInactiveMasterInterval": "1000",
                **DLEDGER_TIMERS})
            out.append(Server(n, "kit", "controller", node_command(conf), d / "controller.log", ports[n]))
        for n in ids[3:]:
            stream = ";".join(f"{b}-127.0.0.1:{ha[b]}" for b in ids[3:] if b != n)
            extra = {"brokerName": "broker-c", "selfId": n, "peers": peers, "controllerIds": "c0,c1,c2",
                     "enableControllerMode": "true", "haListenPort": str(ha[n]), "streamPeers": stream,
                     "controllerHeartBeatTimeoutMills": "3000", "haSendHeartbeatInterval": "1000"}
            out.append(self._broker(f"broker-{n}", self.broker_props(f"broker-{n}", ports[n], extra)))
        return out

    # ---------------------------------------------------------------------------------- running
    def start(self) -> Backend:
        self.workdir.mkdir(parents=True, exist_ok=True)
        ns = self._namesrv()
        ns.start()
        self.servers["namesrv"] = ns
        if self.layout == "single":
            brokers = [self._broker("broker-a", self.broker_props("broker-a", free_port(spacing=2), {}))]
        elif self.layout == "dledger":
            brokers = self._dledger_group()
        elif self.layout == "controller":
            brokers = self._controller_group()
        else:
            raise BackendError(f"unknown layout {self.layout}")
        try:
            for b in brokers:
                self.servers[b.name] = b
                b.start()
        except BaseException:
            self.kill()  # none left running behind the error
            raise
        return self

    def brokers(self) -> list[Server]:
        return [s for s in self.servers.values() if s.role == "broker"]

    def restart(self, name: str = "broker-a") -> None:
        """Stop ``name`` cleanly (SIGTERM) and start it again on the same store and ports."""
        server = self.servers[name]
        server.stop()
        server.start()

    def stop(self) -> None:
        """SIGTERM every server, brokers first (a Java broker's shutdown takes ~10 s)."""
        for s in reversed(list(self.servers.values())):
            s.stop()

    def kill(self) -> None:
        """SIGKILL every server (a test's teardown: nothing to keep)."""
        for s in self.servers.values():
            s.kill()

    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "layout": self.layout, "namesrv": self.namesrv_addr,
                "servers": {n: {"kind": s.kind, "role": s.role, "port": s.port} for n, s in self.servers.items()}}

    def __enter__(self) -> Backend:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def describe_json(backend: Backend) -> str:
    return json.dumps(backend.describe())


__all__ = ["BACKENDS", "Backend", "BackendError", "Server", "describe_json", "free_port", "write_properties"]
