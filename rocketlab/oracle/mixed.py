"""A DLedger group of Java and Python members: real DLedger 0.3.1.2 members beside ours, each its own process.

Every member is started with ``rocketlab node --config FILE``: ``nodeKind=dledger`` is ours (profile
``dledger-0.3.1.2``, the release the Java members are), ``nodeKind=java-dledger`` a real
``DLedgerServer`` (:class:`~rocketlab.oracle` ``DLedgerMember``). They share one properties vocabulary -
DLedger's own keys - and one wire, RocketMQ remoting: votes, heartbeats and pushes go between languages
as between members of one. Clients: DLedger's own ``DLedgerClient`` (in a driver JVM) and ours
(:class:`~rocketlab.net.client.NetClient`).

:class:`MixedGroup` starts, SIGKILLs and restarts members, finds the leader, appends through either
client, reads every member's log from its files while it runs, and at the end reads each member's store
back with its own language (Java's ``DLedgerMmapFileStore`` for a Java member, ours for ours).
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.dledger.cli import iter_entries
from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.protocol import AppendEntryRequest, DLedgerResponseCode, MetadataRequest
from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient
from rocketlab.oracle.dledger import JavaDLedger, member_sizes, our_member
from rocketlab.oracle.ha import run_coroutine
from rocketlab.oracle.jvm import Oracle, OracleProcess
from rocketlab.oracle.servers import Server, free_port, kit_node

FAST_TIMERS = {"heartBeatTimeIntervalMs": "500", "maxHeartBeatLeak": "3", "mappedFileSizeForEntryData": "65536",
               "mappedFileSizeForEntryIndex": "32768"}
"""Settings both languages read (DLedgerConfig's own keys): a 500 ms heartbeat (a follower gives up after
1.5 s) and small files. Everything else stays at DLedger's defaults on both sides (the vote round's
2000 ms + up to 1000 ms, the 3000 ms RPC timeout: constants in Java, the same defaults in ours)."""


@dataclass
class MixedGroup:
    """Members ``kinds`` (id -> ``"python"`` or ``"java"``) under ``workdir`` (see the module docstring)."""

    workdir: Path
    kinds: dict[str, str]
    settings: dict[str, str] = field(default_factory=lambda: dict(FAST_TIMERS))
    group: str = "g1"
    java_release: str = "4.9.5"

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ports = {n: free_port() for n in self.kinds}
        self.peers = ";".join(f"{n}-127.0.0.1:{p}" for n, p in self.ports.items())
        self.run_dir = self.workdir / "run"
        self.store = self.workdir / "store"
        self.configs: dict[str, Path] = {}
        self.procs: dict[str, Server] = {}
        self._driver: OracleProcess | None = None
        for n, kind in self.kinds.items():
            lines = {"nodeKind": "java-dledger" if kind == "java" else "dledger", "group": self.group, "selfId": n,
                     "peers": self.peers, "runDir": str(self.run_dir), "storeBaseDir": str(self.store),
                     **({"javaRelease": self.java_release} if kind == "java" else {"profile": "dledger-0.3.1.2"}),
                     **self.settings}
            path = self.workdir / f"{n}.conf"
            path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
            self.configs[n] = path

    # ------------------------------------------------------------------ processes
    def start(self, node: str, timeout_s: float = 120.0) -> None:
        """``rocketlab node --config`` for ``node``; returns once it listens (a JVM takes a few seconds)."""
        member = kit_node(self.configs[node], node, "member").start(timeout_s)
        if member.ready.get("node") != node:
            member.kill()
            raise RocketlabError(f"member {node} printed {member.ready!r}")
        self.procs[node] = member

    def start_all(self) -> None:
        for node in self.kinds:
            self.start(node)

    def kill(self, node: str) -> None:
        """SIGKILL: a crash, nothing flushed or shut down."""
        self.procs[node].kill()

    def alive(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.alive]

    def stop_all(self) -> dict[str, int]:
        """SIGTERM every live member and wait; exit codes (a hung one is killed)."""
        for member in self.procs.values():
            member.terminate()
        codes = {n: member.stop() for n, member in self.procs.items()}
        self.close_driver()
        return codes

    def close_driver(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    # ------------------------------------------------------------------ clients
    def leader(self, timeout_s: float = 30.0) -> str:
        """The leader every live member names (``MetadataRequest``, answered by Java and ours alike)."""
        return run_coroutine(self._leader(timeout_s))

    async def _leader(self, timeout_s: float) -> str:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            seen = set()
            for n in self.alive():
                try:
                    client = await NetClient(("127.0.0.1", self.ports[n]), DLedgerCodec()).connect(1.0)
                    try:
                        seen.add((await client.request(MetadataRequest(group=self.group, remote_id=n),
                                                       timeout_s=1.0)).leader_id)
                    finally:
                        await client.close()
                except RocketlabError:
                    seen.add(None)
            if len(seen) == 1 and (leader := seen.pop()) in self.alive():
                return leader
            await asyncio.sleep(0.1)
        raise RocketlabError(f"no agreed leader among {self.alive()} within {timeout_s} s")

    def append_ours(self, bodies: list[bytes], timeout_s: float = 10.0) -> list[int]:
        """Append through our client to the leader, one at a time; the indexes (each answered SUCCESS)."""
        return run_coroutine(self._append_ours(bodies, timeout_s))

    async def _append_ours(self, bodies: list[bytes], timeout_s: float) -> list[int]:
        leader = await self._leader(30.0)
        client = await NetClient(("127.0.0.1", self.ports[leader]), DLedgerCodec()).connect()
        try:
            out = []
            for body in bodies:
                r = await client.request(AppendEntryRequest(group=self.group, remote_id=leader, body=body),
                                         timeout_s=timeout_s)
                if r.code is not DLedgerResponseCode.SUCCESS:
                    raise RocketlabError(f"append {body!r} to {leader}: {r.code.name}")
                out.append(r.index)
            return out
        finally:
            await client.close()

    def append_java(self, bodies: list[bytes], attempts: int = 10) -> list[dict[str, Any]]:
        """Append through DLedger's own ``DLedgerClient`` (it finds the leader itself); its answers. A body
        the client could not even send (INTERNAL_ERROR: its first guess of the leader, the first peer,
        refused the connection; DLedgerClient leaves the retry to its caller) is sent again, as a producer
        would, up to ``attempts`` times."""
        if self._driver is None:
            self._driver = Oracle.find(self.java_release).start(self.workdir, name="dledger-client", heap_mb=256)
        answers = []
        for body in bodies:
            for _ in range(attempts):
                reply = self._driver.request("dledgerClientAppend", group=self.group, peers=self.peers,
                                             bodies=[base64.b64encode(body).decode()])
                answer = reply["responses"][0]
                if not (answer["code"] == 500 and answer["index"] == -1):
                    break
                time.sleep(0.5)
            answers.append(answer)
        return answers

    # ------------------------------------------------------------------ logs
    def member_dir(self, node: str) -> Path:
        return self.store / f"dledger-{node}"

    def log(self, node: str) -> list[tuple[int, int, bytes]]:
        """(index, term, body) of every entry in ``node``'s files as they are now (a running member's mapped
        writes are visible to readers at once)."""
        try:
            return [(e["index"], e["term"], base64.b64decode(e["body_base64"]))
                    for e in iter_entries(str(self.member_dir(node)))]
        except RocketlabError:  # a file being written: try again
            return []

    def wait_caught_up(self, node: str, last_index: int, timeout_s: float = 30.0) -> bool:
        """Until ``node``'s files hold every entry up to ``last_index``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            log = self.log(node)
            if log and log[-1][0] >= last_index:
                return True
            time.sleep(0.1)
        return False

    def read_back(self, node: str) -> dict[str, Any]:
        """After :meth:`stop_all`: ``node``'s store read by its own language (Java's recovery for a Java
        member, ours for ours), on a copy: state and every entry (index, term, pos, size, magic, body)."""
        copy = self.workdir / "read-back" / node
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.member_dir(node), copy / f"dledger-{node}")
        if self.kinds[node] == "python":
            return our_member(copy / f"dledger-{node}", node)
        data_size, index_size = member_sizes(copy / f"dledger-{node}")
        with Oracle.find(self.java_release).start(self.workdir, name=f"read-{node}", heap_mb=256) as proc:
            java = JavaDLedger(proc, copy, node, data_file_size=data_size, index_file_size=index_size,
                               group=self.group, peers=self.peers)
            state = java.read()
            java.close()
            return state

