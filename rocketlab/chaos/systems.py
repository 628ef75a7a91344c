"""What a campaign runs: the systems (their nodes and ``rocketlab node`` properties) and where they listen.

Systems (:data:`SYSTEMS`):

* ``sync-pair`` / ``async-pair`` - the classic pair: ``n0`` a SYNC_MASTER / ASYNC_MASTER, ``n1`` its SLAVE
  (HA stream from the slave to the master's haListenPort; metadata pulled from the master);
* ``dledger`` - a broker group on DLedger (``enableDLegerCommitLog``), three brokers ``n0..n2``, under a
  DLedger release profile (:data:`rocketlab.dledger.config.PROFILES`: ``raft``, ``dledger-0.3.1.2``, ...);
* ``controller`` - controller mode: controllers ``c0..c2`` (their own DLedger group) and brokers
  ``n0..n2``, with RocketMQ's defaults or ``allAckInSyncStateSet=true`` (variant ``all-ack``).

:class:`Topology` gives every node its own address: with network namespaces each node has its IP and the
same ports; on 127.0.0.1 every port is a fresh one. A node's configuration names every *other* node by a
port of that node's relay (:mod:`rocketlab.chaos.relay`) reserved for it, so the relay knows the source.

Every system also runs a name server, node :data:`NAMESRV` (``nodeKind=namesrv``, in a namespace of its own
where there are namespaces; no relay, no fault targets it), and every broker registers with it
(``namesrvAddr``, ``registerNameServerPeriod`` 10 s: Java's shortest): producers and the consumer find the
brokers through it (:mod:`rocketlab.chaos.clients`) and reach them directly.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

from rocketlab.dledger.config import PROFILES
from rocketlab.errors import ConfigError
from rocketlab.i18n import _

NODE_PORT, HA_PORT, RELAY_BASE, NAMESRV_PORT = 10911, 10912, 20000, 9876
NAMESRV = "ns"
FILE_SIZE = 1024 * 1024

DLEDGER_TIMERS = {"heartBeatTimeIntervalMs": "300", "maxHeartBeatLeak": "4", "minVoteIntervalMs": "100",
                  "maxVoteIntervalMs": "300", "voteRoundWaitBaseMs": "300", "maxWaitAckTimeMs": "2000",
                  "maxPushTimeOutMs": "300", "pushCommitIntervalMs": "300"}
"""DLedger timers shrunk about 6x (a follower gives up after 1.2 s) so a campaign sees many elections."""


@dataclass(frozen=True)
class System:
    """One system under test: its name, its variant (profile) and its nodes; brokers take the puts."""

    name: str
    variant: str
    brokers: tuple[str, ...]
    controllers: tuple[str, ...] = ()

    @property
    def nodes(self) -> tuple[str, ...]:
        return self.controllers + self.brokers

    @property
    def label(self) -> str:
        return f"{self.name}/{self.variant}" if self.variant else self.name

    def has_ha_stream(self, node: str) -> bool:
        return node in self.brokers and self.name in ("sync-pair", "async-pair", "controller")


SYSTEMS: dict[str, tuple[str, ...]] = {
    "sync-pair": ("",), "async-pair": ("",),
    "dledger": tuple(sorted(PROFILES, key=lambda profile: profile != "raft")),  # raft first: the default
    "controller": ("defaults", "all-ack"),
}
"""System name -> its variants (the first is the default); DLedger's are the release profiles of
:data:`rocketlab.dledger.config.PROFILES`, so a new profile is a campaign variant with no change here."""


def system(name: str, variant: str | None = None) -> System:
    if name not in SYSTEMS:
        raise ConfigError(_("unknown system {name!r} (one of {known})").format(name=name, known=", ".join(SYSTEMS)))
    variant = SYSTEMS[name][0] if variant is None else variant
    if variant not in SYSTEMS[name]:
        raise ConfigError(_("{name}: unknown variant {variant!r} (one of {known})").format(
            name=name, variant=variant, known=", ".join(v for v in SYSTEMS[name] if v)))
    if name in ("sync-pair", "async-pair"):
        return System(name, variant, ("n0", "n1"))
    if name == "dledger":
        return System(name, variant, ("n0", "n1", "n2"))
    return System(name, variant, ("n0", "n1", "n2"), ("c0", "c1", "c2"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Topology:
    """Addresses of a system's nodes and relays: ``host_of`` (namespaces) or everything on 127.0.0.1."""

    sys: System
    host_of: dict[str, str] | None = None
    ports: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.host_of is None:  # one fresh port per listening thing on 127.0.0.1
            self.ports[("node", NAMESRV)] = _free_port()
            for n in self.sys.nodes:
                self.ports[("node", n)] = _free_port()
                self.ports[("ha", n)] = _free_port()
                for src in self.sys.nodes:
                    if src != n:
                        self.ports[("relay", f"{n}<{src}")] = _free_port()
                        self.ports[("relay-raw", f"{n}<{src}")] = _free_port()

    def host(self, node: str) -> str:
        return self.host_of[node] if self.host_of is not None else "127.0.0.1"

    def node_port(self, node: str) -> int:
        if self.host_of is not None:
            return NAMESRV_PORT if node == NAMESRV else NODE_PORT
        return self.ports[("node", node)]

    @property
    def namesrv_addr(self) -> str:
        """The name server's ``host:port`` (what brokers and clients are given)."""
        host, port = self.address(NAMESRV)
        return f"{host}:{port}"

    def node_at(self, addr: str) -> str | None:
        """The node listening at ``host:port`` (a store host, a route's address), None if none."""
        return next((n for n in (*self.sys.nodes, NAMESRV) if f"{self.host(n)}:{self.node_port(n)}" == addr), None)

    def ha_port(self, node: str) -> int:
        return HA_PORT if self.host_of is not None else self.ports[("ha", node)]

    def relay_port(self, dst: str, src: str, raw: bool = False) -> int:
        if self.host_of is not None:
            return RELAY_BASE + 2 * self.sys.nodes.index(src) + (1 if raw else 0)
        return self.ports[("relay-raw" if raw else "relay", f"{dst}<{src}")]

    def address(self, node: str) -> tuple[str, int]:
        """Where ``node`` listens for messages (what clients dial)."""
        return self.host(node), self.node_port(node)

    def seen_by(self, src: str, dst: str, raw: bool = False) -> str:
        """``dst`` as ``src``'s configuration names it: ``dst``'s relay port for ``src``."""
        return f"{self.host(dst)}:{self.relay_port(dst, src, raw)}"

    def peers(self, me: str, ids: tuple[str, ...]) -> str:
        return ";".join(f"{n}-{self.host(n)}:{self.node_port(n)}" if n == me else f"{n}-{self.seen_by(me, n)}"
                        for n in ids)

    def relay_args(self, dst: str) -> list[str]:
        """``python -m rocketlab.chaos.relay`` arguments of ``dst``'s relay."""
        args = ["--dst", dst, "--listen", self.host(dst), "--target", f"{self.host(dst)}:{self.node_port(dst)}"]
        if self.sys.has_ha_stream(dst):
            args += ["--raw-target", f"{self.host(dst)}:{self.ha_port(dst)}"]
        for src in self.sys.nodes:
            if src != dst:
                args += ["--port", f"{src}={self.relay_port(dst, src)}:frames"]
                if self.sys.has_ha_stream(dst):
                    args += ["--port", f"{src}/ha={self.relay_port(dst, src, raw=True)}:raw"]
        return args


def configs(sys: System, topo: Topology, run_dir: str) -> dict[str, dict[str, str]]:
    """Every node's ``rocketlab node`` properties (the name server's first)."""
    out: dict[str, dict[str, str]] = {NAMESRV: {"selfId": NAMESRV, "runDir": run_dir, "seed": "1",
                                                "traceNetwork": "false", "nodeKind": "namesrv",
                                                "peers": f"{NAMESRV}-{topo.namesrv_addr}"}}
    for n in sys.nodes:
        base = {"selfId": n, "runDir": run_dir, "seed": "1", "traceNetwork": "false"}
        if n in sys.brokers:
            base.update(namesrvAddr=topo.namesrv_addr, registerNameServerPeriod="10000")
        if sys.name in ("sync-pair", "async-pair"):
            role = {"n0": "SYNC_MASTER" if sys.name == "sync-pair" else "ASYNC_MASTER", "n1": "SLAVE"}[n]
            cfg = {**base, "nodeKind": "broker", "peers": topo.peers(n, sys.brokers), "brokerRole": role,
                   "storePathRootDir": f"{run_dir}/nodes/{n}/store", "mappedFileSizeCommitLog": str(FILE_SIZE),
                   "slaveReadEnable": "true", "haSendHeartbeatInterval": "1000", "haHousekeepingInterval": "5000"}
            if n == "n0":
                cfg["haListenPort"] = str(topo.ha_port(n))
            else:
                cfg.update(brokerId="1", masterId="n0", haMasterAddress=topo.seen_by(n, "n0", raw=True))
        elif sys.name == "dledger":
            cfg = {**base, "nodeKind": "broker", "peers": topo.peers(n, sys.brokers), "enableDLegerCommitLog": "true",
                   "brokerName": "ChaosGroup", "dLegerGroup": "ChaosGroup", "dLegerSelfId": n,
                   "profile": sys.variant, "slaveReadEnable": "true", "storePathRootDir": f"{run_dir}/nodes/{n}/store",
                   "mappedFileSizeCommitLog": str(FILE_SIZE), **DLEDGER_TIMERS}
        else:
            common = {**base, "peers": topo.peers(n, sys.nodes), "controllerIds": ",".join(sys.controllers)}
            if n in sys.controllers:
                cfg = {**common, "nodeKind": "controller", "scanNotActiveBrokerInterval": "1000",
                       "scanInactiveMasterInterval": "1000", "heartBeatTimeIntervalMs": "300", "maxHeartBeatLeak": "4",
                       "minVoteIntervalMs": "100", "maxVoteIntervalMs": "300"}
            else:
                stream = ";".join(f"{b}-{topo.seen_by(n, b, raw=True)}" for b in sys.brokers if b != n)
                cfg = {**common, "nodeKind": "broker", "enableControllerMode": "true",
                       "haListenPort": str(topo.ha_port(n)), "streamPeers": stream,
                       "allAckInSyncStateSet": "true" if sys.variant == "all-ack" else "false",
                       "controllerHeartBeatTimeoutMills": "3000", "haSendHeartbeatInterval": "1000",
                       "mappedFileSizeCommitLog": str(FILE_SIZE)}
        out[n] = cfg
    return out


def properties_text(props: dict[str, Any]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())
