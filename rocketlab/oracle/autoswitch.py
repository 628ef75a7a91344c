"""Controller mode across languages: RocketMQ 5.3.3's ``AutoSwitchHAService`` beside ours over real TCP on
127.0.0.1, and the real ``DLedgerController``'s event log beside ours.

* :class:`JavaAutoSwitchStore` - a real 5.3.3 ``DefaultMessageStore`` of a broker with
  ``enableControllerMode=true`` (so ``AutoSwitchHAService``, the epoch file ``root/epochFileCheckpoint``), in
  an oracle JVM; roles as ``ReplicasManager`` gives them (``autoswitch*`` commands of the driver).
* :class:`OurAutoSwitchBroker` - our :class:`~rocketlab.broker.auto_switch_broker.AutoSwitchBrokerCore`
  without controllers, hosted by the TCP runtime (:class:`~rocketlab.net.runtime.NetRuntime`) on a thread of
  this process: its HA port accepts slaves, its HA client dials a ``host:port``; roles and puts are inputs
  to the core, run on the runtime's loop.
* :class:`JavaControllers` - real ``DLedgerController`` members in one JVM (``controller*`` commands): the
  requests a broker makes, and ``EventSerializer`` on entry bodies.

Either side can be master: a test gives roles and epochs to both, puts on the master, and compares the
commit logs, the epoch files and what a consumer reads.
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.protocol import broker_codec
from rocketlab.core import NodeContext, Output
from rocketlab.errors import RocketlabError
from rocketlab.ha.config import HAConfig
from rocketlab.net.runtime import NetRuntime
from rocketlab.oracle.jvm import Oracle, OracleProcess
from rocketlab.oracle.servers import free_port
from rocketlab.oracle.store import message_spec
from rocketlab.store.message import Message


class JavaAutoSwitchStore:
    """A real 5.3.3 controller-mode store in its own JVM (see the module docstring)."""

    def __init__(self, oracle: Oracle, workdir: str | os.PathLike[str], root: str | os.PathLike[str], broker_id: int,
                 ha_port: int, *, file_size: int = 64 * 1024, heartbeat_ms: int = 1000, fenced: bool = False,
                 settings: dict[str, Any] | None = None) -> None:
        self.root = Path(root)
        self.broker_id = broker_id
        self.ha_port = ha_port
        self.proc: OracleProcess = oracle.start(workdir, name=f"autoswitch-{self.root.name}")
        config = {"haListenPort": ha_port, "mappedFileSizeCommitLog": file_size, "haSendHeartbeatInterval": heartbeat_ms,
                  **(settings or {})}
        try:
            self.opened = self.proc.request("autoswitchOpen", root=str(self.root), brokerId=broker_id, config=config,
                                            fenced=fenced, timeout_s=120)
        except BaseException:
            self.proc.kill()
            raise

    @property
    def ha_address(self) -> str:
        return f"127.0.0.1:{self.ha_port}"

    def change_to_master(self, epoch: int, sync_state_set: Sequence[int]) -> dict[str, Any]:
        return self.proc.request("autoswitchChangeToMaster", epoch=epoch, syncStateSet=list(sync_state_set),
                                 timeout_s=60)

    def change_to_slave(self, master_ha_address: str, epoch: int) -> dict[str, Any]:
        return self.proc.request("autoswitchChangeToSlave", masterHaAddress=master_ha_address, epoch=epoch)

    def put_many(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return self.proc.request("autoswitchPutMany", msgs=[message_spec(m) for m in messages], timeout_s=120)["results"]

    def info(self) -> dict[str, Any]:
        return self.proc.request("autoswitchInfo")

    def queue(self, topic: str, queue_id: int = 0) -> dict[str, Any]:
        return self.proc.request("autoswitchQueue", topic=topic, queueId=queue_id)

    def fence(self, fenced: bool) -> dict[str, Any]:
        return self.proc.request("autoswitchFence", fenced=fenced)

    def epochs(self) -> list[tuple[int, int]]:
        return [tuple(e) for e in self.info()["epochs"]]  # type: ignore[misc]

    def shutdown(self) -> None:
        """The store's clean ``shutdown`` (flush, checkpoint, abort file removed), then the JVM exits.

        ``DefaultMessageStore.shutdown`` sleeps 3 s and joins each ``ServiceThread`` for up to its ``JOIN_TIME``
        (90 s), so a loaded machine can take minutes: the wait allows two such joins (CI once ran out at 60 s)."""
        if self.proc.alive():
            self.proc.request("autoswitchShutdown", timeout_s=200)
            self.proc.close()

    def kill(self) -> None:
        """SIGKILL: the store's files stay as the crash leaves them (the abort file too)."""
        self.proc.kill()


def set_checkpoint_confirm(oracle: Oracle, workdir: str | os.PathLike[str], root: str | os.PathLike[str],
                           offset: int) -> int:
    """Write ``offset`` as the confirm offset of the (closed) store's checkpoint with Java's StoreCheckpoint;
    returns the value it had."""
    proc = oracle.start(workdir, name="checkpoint")
    try:
        return int(proc.request("autoswitchSetCheckpointConfirm", root=os.fspath(root), offset=offset)["was"])
    finally:
        proc.close()


class OurAutoSwitchBroker:
    """Our controller-mode broker core (no controllers: roles are given) on the TCP runtime, in a thread of
    this process. ``ha_port`` accepts slaves; :meth:`change_to_slave` takes a master's ``host:port``."""

    def __init__(self, data_dir: str | os.PathLike[str], broker_id: int, ha_port: int, *, file_size: int = 64 * 1024,
                 heartbeat_ms: int = 1000, node_id: str = "ours") -> None:
        self.ha_port = ha_port
        self.data_dir = Path(data_dir)
        config = AutoSwitchBrokerConfig(mapped_file_size_commit_log=file_size,
                                        ha=HAConfig(ha_send_heartbeat_interval=heartbeat_ms))
        ctx = NodeContext(node_id, (node_id,), 1, self.data_dir)
        self.runtime = NetRuntime(ctx, lambda c: AutoSwitchBrokerCore(c, config, broker_id), broker_codec(),
                                  listen=("127.0.0.1", free_port()), peers={}, stream_listen=("127.0.0.1", ha_port))
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.error: BaseException | None = None

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(self.runtime.start())
            except BaseException as e:  # noqa: BLE001 - reported to the caller below
                self.error = e
                started.set()
                return
            started.set()
            self.loop.run_until_complete(self.runtime.serve_forever())

        self.thread = threading.Thread(target=serve, name=f"rocketlab-{node_id}", daemon=True)
        self.thread.start()
        started.wait(30)
        if self.error is not None:
            raise RocketlabError(f"our broker did not start: {self.error}")

    @property
    def ha_address(self) -> str:
        return f"127.0.0.1:{self.ha_port}"

    @property
    def store_dir(self) -> Path:
        return self.data_dir / "store"

    def _on_loop(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(core)`` on the runtime's loop and return what it returns."""
        async def call() -> Any:
            return fn(self.runtime.core)
        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(30)

    def _input(self, fn: Callable[[Any, int], Output]) -> None:
        """An input to the core (its output carried out by the runtime)."""
        self._on_loop(lambda core: self.runtime._input(lambda now: fn(core, now)))

    def change_to_master(self, epoch: int, sync_state_set: Sequence[int]) -> None:
        self._input(lambda core, now: core.change_to_master(epoch, set(sync_state_set), now))

    def change_to_slave(self, master_ha_address: str, epoch: int) -> None:
        self._input(lambda core, now: core.change_to_slave(master_ha_address, epoch, now, master_unchanged=False))

    def put_many(self, messages: Sequence[Message]) -> list[str]:
        """Put each message; waits (up to slaveTimeout) for the ones the HA service holds; their statuses."""
        handles: list[Any] = []
        for m in messages:
            def put(core: Any, now: int, m: Message = m) -> Output:
                handle, out = core.put_message(m, now)
                handles.append(handle)
                return out
            self._input(put)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(h.done for h in handles):
            time.sleep(0.02)
        return [h.status for h in handles]

    def info(self) -> dict[str, Any]:
        return self._on_loop(lambda core: {**core.describe(), "epochs": [
            (e.epoch, e.start_offset) for e in core.epoch_cache.get_all_entries()]})

    def epochs(self) -> list[tuple[int, int]]:
        return self.info()["epochs"]

    def close(self) -> None:
        """A clean shutdown of the runtime and the store."""
        if self.thread.is_alive():
            asyncio.run_coroutine_threadsafe(self.runtime.stop(), self.loop).result(30)
            self.thread.join(30)
        self.loop.close()


def wait_for(predicate: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    """Poll ``predicate`` every 50 ms until it holds; RocketlabError naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RocketlabError(f"not within {timeout_s} s: {what}")
        time.sleep(0.05)


class JavaControllers:
    """Real ``DLedgerController`` members ``ids`` in one JVM, their DLedger logs under ``store_root/<id>``."""

    def __init__(self, oracle: Oracle, workdir: str | os.PathLike[str], store_root: str | os.PathLike[str],
                 ports: dict[str, int], group: str = "controller") -> None:
        self.store_root = Path(store_root)
        self.group = group
        self.ids = tuple(ports)
        self.proc = oracle.start(workdir, name="controllers")
        peers = ";".join(f"{i}-127.0.0.1:{p}" for i, p in ports.items())
        try:
            for i in self.ids:
                self.proc.request("controllerStart", group=group, peers=peers, selfId=i,
                                  storePath=str(self.store_root / i), timeout_s=60)
        except BaseException:
            self.proc.kill()
            raise

    def member_dir(self, self_id: str) -> Path:
        """Where member ``self_id`` keeps its DLedger files (``storeBaseDir/dledger-<selfId>``)."""
        return self.store_root / self_id / f"dledger-{self_id}"

    def leader(self, timeout_s: float = 30.0) -> str:
        found: list[str] = []

        def ready() -> bool:
            lead = self.proc.request("controllerLeader")["leader"]
            if lead:
                found.append(lead)
            return bool(lead)

        wait_for(ready, "a controller in leader state", timeout_s)
        return found[-1]

    def alive(self, brokers: Sequence[tuple[str, str, int]]) -> None:
        """What the brokers' heartbeats would say: these (cluster, name, id) are alive."""
        self.proc.request("controllerAlive", brokers=[list(b) for b in brokers])

    def call(self, self_id: str, request: str, **fields: Any) -> dict[str, Any]:
        return self.proc.request("controllerCall", selfId=self_id, request=request, timeout_s=30, **fields)

    def shutdown(self) -> None:
        if self.proc.alive():
            self.proc.request("controllerShutdown", timeout_s=60)
            self.proc.close()


def java_decode_events(proc: OracleProcess, bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """``EventSerializer.deserialize`` of each body in ``proc`` (a 5.3.3 JVM): ``{"event": {getter: value},
    "reserialized": bytes}`` (``event`` None where Java decodes nothing)."""
    reply = proc.request("controllerDecodeEvents", bodies=[base64.b64encode(b).decode("ascii") for b in bodies],
                         timeout_s=60)
    return [{"event": e["event"], "reserialized": base64.b64decode(e["reserialized"]) if "reserialized" in e else None}
            for e in reply["events"]]


__all__ = ["JavaAutoSwitchStore", "JavaControllers", "OurAutoSwitchBroker", "java_decode_events",
           "set_checkpoint_confirm", "wait_for"]
