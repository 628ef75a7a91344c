"""Classic HA across languages, over real TCP on 127.0.0.1: a real Java store and a rocketlab broker as
master and slave, in separate processes, speaking RocketMQ's HA wire (the slave's 8-byte offset reports,
the master's 12-byte-header transfers).

:class:`CrossPair` starts one side as the master and the other as the slave: ``java="slave"`` runs a real
``DefaultMessageStore`` with ``brokerRole=SLAVE`` and ``haMasterAddress`` against ``rocketlab node``
(brokerRole ASYNC_MASTER or SYNC_MASTER); ``java="master"`` runs the real store as the master
(``haListenPort``) and ``rocketlab node`` as its SLAVE. Puts go to whichever is the master; both sides are
stopped by PID. Both slaves report every ``heartbeat_ms`` (RocketMQ's ``haSendHeartbeatInterval``, 5 s by
default, is also how long a new 4.x slave waits before its first report) and a SYNC put waits
``slave_timeout_ms`` for the report (``slaveTimeout``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from rocketlab.broker.protocol import SendMessageRequest, broker_codec
from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient
from rocketlab.oracle.jvm import Oracle
from rocketlab.oracle.servers import Server, free_port, kit_node
from rocketlab.oracle.store import JavaStore
from rocketlab.sigstop import pause
from rocketlab.store.message import Message
from rocketlab.store.record_layout import BLANK_MAGIC_CODE


def run_coroutine(coro: Any) -> Any:
    """``asyncio.run(coro)``, on a thread of its own when this thread already runs an event loop (a Jupyter
    kernel does)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = asyncio.run(coro)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="rocketlab-oracle-client")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("result")


class CrossPair:
    """A master and a slave, one of them the real Java store (see the module docstring)."""

    def __init__(self, oracle: Oracle, workdir: str | os.PathLike[str], *, java: str, role: str = "SYNC_MASTER",
                 file_size: int = 64 * 1024, heartbeat_ms: int = 1000, slave_timeout_ms: int = 3000) -> None:
        if java not in ("master", "slave"):
            raise ValueError(f"java must be 'master' or 'slave', not {java!r}")
        self.work = Path(workdir)
        self.work.mkdir(parents=True, exist_ok=True)
        self.java_side, self.role, self.file_size = java, role, file_size
        self.ha_port, self.port = free_port(), free_port()
        self.master_dir, self.slave_dir = self.work / "master", self.work / "slave"
        self.node: Server | None = None
        self.java: JavaStore | None = None
        settings = {"haSendHeartbeatInterval": heartbeat_ms, "slaveTimeout": slave_timeout_ms}
        try:
            if java == "master":
                self.java = JavaStore.start(oracle, self.work, self.master_dir, mapped_file_size_commit_log=file_size,
                                            broker_role=role, java_settings={**settings, "haListenPort": self.ha_port})
                self.node = kit_node(self._config("n1", "SLAVE", f"brokerId=1\nhaMasterAddress=127.0.0.1:"
                                                                 f"{self.ha_port}\nmasterId=\n", self.slave_dir,
                                                  heartbeat_ms, slave_timeout_ms)).start(timeout_s=60.0)
            else:
                self.node = kit_node(self._config("n0", role, f"haListenPort={self.ha_port}\n", self.master_dir,
                                                  heartbeat_ms, slave_timeout_ms)).start(timeout_s=60.0)
                self.java = JavaStore.start(oracle, self.work, self.slave_dir, mapped_file_size_commit_log=file_size,
                                            broker_role="SLAVE", ha_master_address=f"127.0.0.1:{self.ha_port}",
                                            java_settings=settings)
        except BaseException:
            self.close()
            raise

    def _config(self, node: str, role: str, extra: str, store: Path, heartbeat_ms: int, slave_timeout_ms: int) -> Path:
        path = self.work / f"{node}.conf"
        path.write_text(f"nodeKind=broker\nselfId={node}\npeers={node}-127.0.0.1:{self.port}\nrunDir={self.work / 'run'}\n"
                        f"brokerRole={role}\nmappedFileSizeCommitLog={self.file_size}\nstorePathRootDir={store}\n"
                        f"haSendHeartbeatInterval={heartbeat_ms}\nslaveTimeout={slave_timeout_ms}\n{extra}")
        return path

    # ------------------------------------------------------------------ puts on the master
    def put_all(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Put ``messages`` one after the other on the master; each answer as ``{"status", "wroteOffset",
        ...}`` (ours gives status, wrote offset and queue offset)."""
        if self.java_side == "master":
            assert self.java is not None
            return self.java.put_many(messages)
        return run_coroutine(self._put_ours(messages))

    async def _put_ours(self, messages: list[Message], out: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        client = await NetClient(("127.0.0.1", self.port), broker_codec(), "oracle").connect()
        try:
            out = [] if out is None else out
            for m in messages:
                r = await client.request(SendMessageRequest(m.topic, m.body, m.queue_id, m.tags, m.keys))
                out.append({"status": r.status, "wroteOffset": r.phy_offset, "queueOffset": r.queue_offset})
            return out
        finally:
            await client.close()

    def stream(self, messages: list[Message], acked: list[dict[str, Any]]) -> None:
        """Put ``messages`` on the master one after the other, appending each answer to ``acked`` as it
        comes, until all are put or the master dies (call it in a thread and kill the master meanwhile)."""
        if self.java_side == "master":
            assert self.java is not None
            self.java.put_stream(messages)
            try:
                for _ in messages:
                    acked.append(self.java.proc.next_event(timeout_s=30)["result"])
            except RocketlabError:
                return
        else:
            try:
                run_coroutine(self._put_ours(messages, acked))
            except (RocketlabError, OSError):
                return

    def wait_connected(self, timeout_s: float = 30.0) -> float:
        """Put probe messages until a SYNC master answers PUT_OK (the slave is connected and has reported);
        an ASYNC master's slave until it has the first probe. Returns the seconds it took."""
        begin = time.monotonic()
        probe = Message("Probe", b"probe", 0, born_timestamp=1)
        while time.monotonic() - begin < timeout_s:
            result = self.put_all([probe])[0]
            if self.role == "SYNC_MASTER" and result["status"] == "PUT_OK":
                return time.monotonic() - begin
            if self.role != "SYNC_MASTER" and self.slave_max_offset() > 0:
                return time.monotonic() - begin
            time.sleep(0.2)
        raise RocketlabError(f"the slave did not connect in {timeout_s} s")

    # ------------------------------------------------------------------ state
    def master_max_offset(self) -> int:
        return self._max_offset(self.master_dir, "master")

    def slave_max_offset(self) -> int:
        return self._max_offset(self.slave_dir, "slave")

    def _max_offset(self, store: Path, side: str) -> int:
        if self.java is not None and self.java_side == side and self.java.proc.alive():
            return int(self.java.ha_info()["maxPhyOffset"])
        return written_length(store / "commitlog", self.file_size)

    def wait_caught_up(self, timeout_s: float = 30.0) -> int:
        """Until the slave's log is as long as the master's; returns that length."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            master, slave = self.master_max_offset(), self.slave_max_offset()
            if master == slave:
                return master
            time.sleep(0.1)
        raise RocketlabError(f"the slave is at {self.slave_max_offset()}, the master at {self.master_max_offset()}")

    def pause(self, side: str) -> None:
        """SIGSTOP (``pause``) one side's process: its HA connection stays open and silent (from the
        moment this returns: every thread has stopped, :func:`rocketlab.sigstop.pause`)."""
        self._signal(side, signal.SIGSTOP)

    def resume(self, side: str) -> None:
        self._signal(side, signal.SIGCONT)

    def _signal(self, side: str, sig: int) -> None:
        if side == self.java_side:
            assert self.java is not None
            self.java.proc.signal(sig)
        else:
            assert self.node is not None
            if sig == signal.SIGSTOP:
                pause(self.node.pid, group=True)
            else:
                self.node.signal(sig)

    def kill(self, side: str) -> None:
        """SIGKILL one side (a crash)."""
        if side == self.java_side:
            assert self.java is not None
            self.java.proc.kill()
        elif self.node is not None:
            self.node.kill()

    def stop(self, side: str) -> None:
        """Shut one side down cleanly (the Java store's ``shutdown``; SIGTERM to the node)."""
        if side == self.java_side:
            if self.java is not None and self.java.proc.alive():
                self.java.shutdown()
                self.java.close()
        elif self.node is not None:
            self.node.stop()

    def close(self) -> None:
        if self.node is not None:
            self.node.kill()
        if self.java is not None:
            self.java.proc.kill()

    def __enter__(self) -> CrossPair:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def written_length(commitlog: Path, file_size: int) -> int:
    """The end of the written data of a stopped store's commit log: the last file's start plus the position
    after its last record or blank (what recovery finds, without checking CRCs)."""
    files = sorted(p for p in commitlog.iterdir() if p.name.isdigit()) if commitlog.is_dir() else []
    end = 0
    for f in files:
        data = f.read_bytes()
        pos = 0
        while pos + 8 <= len(data):
            total = int.from_bytes(data[pos:pos + 4], "big", signed=True)
            magic = int.from_bytes(data[pos + 4:pos + 8], "big", signed=True)
            if total <= 0 or magic == 0:
                break
            pos += total
            if magic == BLANK_MAGIC_CODE:
                break
        if pos:
            end = int(f.name) + pos
    return end


def commit_log_bytes(store: Path, upto: int) -> bytes:
    """The first ``upto`` bytes of a store's commit log, files joined."""
    out = bytearray()
    for f in sorted(p for p in (store / "commitlog").iterdir() if p.name.isdigit()):
        out += f.read_bytes()
        if len(out) >= upto:
            break
    return bytes(out[:upto])


__all__ = ["CrossPair", "commit_log_bytes", "run_coroutine", "written_length"]
