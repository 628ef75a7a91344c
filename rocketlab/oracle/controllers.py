"""Real RocketMQ 5.3.3 controllers over RocketMQ remoting, and RocketMQ's own client to talk to anyone's.

:class:`JavaControllerGroup` runs a controller group of the real thing: one JVM per controller, each
``org.apache.rocketmq.controller.ControllerStartup -c FILE`` (the release's own entry point: a
``ControllerManager`` on a ``DLedgerController``, whose DLedger server's remoting port also serves the
controller requests, as in the release). Our brokers (``rocketlab node``, controller mode) name these
controllers in ``peers`` and talk to them as to ours.

:class:`JavaRemotingClient` is 5.3.3's ``NettyRemotingClient`` in a driver JVM: it sends a request built
from the release's own header classes (and a body through the release's fastjson) to any address - a Java
controller or one of ours - and returns the response as Java reads it (response header class, body class).
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.oracle.jvm import Oracle, OracleProcess
from rocketlab.oracle.servers import Server, free_port

H = "org.apache.rocketmq.remoting.protocol.header."
B = "org.apache.rocketmq.remoting.protocol.body."
REQUESTS: dict[str, tuple[int, str | None, str | None, str | None]] = {
    "getMetadata": (1005, None, H + "controller.GetMetaDataResponseHeader", None),
    "getNextBrokerId": (1012, H + "controller.register.GetNextBrokerIdRequestHeader",
                        H + "controller.register.GetNextBrokerIdResponseHeader", None),
    "applyBrokerId": (1013, H + "controller.register.ApplyBrokerIdRequestHeader",
                      H + "controller.register.ApplyBrokerIdResponseHeader", None),
    "registerBroker": (1003, H + "controller.register.RegisterBrokerToControllerRequestHeader",
                       H + "controller.register.RegisterBrokerToControllerResponseHeader", B + "SyncStateSet"),
    "heartbeat": (904, H + "namesrv.BrokerHeartbeatRequestHeader", None, None),
    "electMaster": (1002, H + "controller.ElectMasterRequestHeader", H + "controller.ElectMasterResponseHeader",
                    B + "ElectMasterResponseBody"),
    "getReplicaInfo": (1004, H + "controller.GetReplicaInfoRequestHeader", H + "controller.GetReplicaInfoResponseHeader",
                       B + "SyncStateSet"),
    "alterSyncStateSet": (1001, H + "controller.AlterSyncStateSetRequestHeader",
                          H + "controller.AlterSyncStateSetResponseHeader", B + "SyncStateSet"),
    "getSyncStateData": (1006, None, None, None),
}
"""Request name -> (code, request header class, response header class, response body class), 5.3.3. A
BrokerReplicasInfo body comes back as JSON, unread: its nested classes have no constructor the driver's
fastjson stand-in can fill."""


class JavaRemotingClient:
    """RocketMQ's ``NettyRemotingClient`` (the release of ``oracle``) in a JVM of ours."""

    def __init__(self, oracle: Oracle, workdir: str | os.PathLike[str], name: str = "remoting-client") -> None:
        self.proc: OracleProcess = oracle.start(workdir, name=name, heap_mb=256)

    def call(self, address: str, request: str, header: dict[str, Any] | None = None, body: Any = None,
             body_class: str | None = None, timeout_ms: int = 5000) -> dict[str, Any]:
        """``invokeSync`` of ``request`` (a name of :data:`REQUESTS`); code, remark, the response header's
        fields and the body as Java decoded it (``body``: JSON)."""
        code, header_class, response_header, response_body = REQUESTS[request]
        fields: dict[str, Any] = {"addr": address, "code": code, "timeoutMs": timeout_ms, "header": header or {},
                                  "headerClass": header_class, "responseHeaderClass": response_header,
                                  "responseBodyClass": response_body}
        if body is not None:
            fields["bodyJson"] = json.dumps(body)
            fields["bodyClass"] = body_class
        reply = self.proc.request("remotingInvoke", timeout_s=60, **{k: v for k, v in fields.items() if v is not None})
        if "bodyJson" in reply:
            reply["body"] = json.loads(reply.pop("bodyJson"))
        elif "body" in reply:
            reply["body"] = json.loads(base64.b64decode(reply["body"]))
        return reply

    def close(self) -> None:
        self.proc.close()


class JavaControllerGroup:
    """Real 5.3.3 controllers ``ids`` under ``workdir`` (see the module docstring)."""

    def __init__(self, oracle: Oracle, workdir: str | os.PathLike[str], ids: tuple[str, ...] = ("c0", "c1", "c2"),
                 group: str = "controller") -> None:
        self.oracle, self.workdir, self.ids, self.group = oracle, Path(workdir), ids, group
        self.ports = {i: free_port() for i in ids}
        self.peers = ";".join(f"{i}-127.0.0.1:{p}" for i, p in self.ports.items())
        self.procs: dict[str, Server] = {}

    def address(self, controller: str) -> str:
        return f"127.0.0.1:{self.ports[controller]}"

    def start(self, controller: str, timeout_s: float = 120.0) -> None:
        home = self.workdir / f"{controller}-home"
        conf = self.workdir / f"{controller}.properties"
        conf.write_text(f"controllerDLegerGroup={self.group}\ncontrollerDLegerPeers={self.peers}\n"
                        f"controllerDLegerSelfId={controller}\ncontrollerStorePath={self.workdir / controller}\n"
                        f"configStorePath={home / 'controller.properties'}\nmappedFileSize={1024 * 1024}\n"
                        "scanNotActiveBrokerInterval=1000\nscanInactiveMasterInterval=1000\n")
        cmd = self.oracle.command("org.apache.rocketmq.controller.ControllerStartup", "-c", str(conf), home=home,
                                  heap_mb=256)
        server = Server(controller, "java", "controller", cmd, self.workdir / f"{controller}.log",
                        ready_text="boot success")  # ControllerStartup's line on stdout
        self.procs[controller] = server.start(timeout_s)

    def start_all(self) -> None:
        for c in self.ids:
            self.start(c)

    def leader(self, client: JavaRemotingClient, timeout_s: float = 60.0) -> str:
        """The controller that says it leads (GET_METADATA_INFO, asked with RocketMQ's own client)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            for c in self.ids:
                if c not in self.procs or not self.procs[c].alive:
                    continue
                try:
                    header = client.call(self.address(c), "getMetadata").get("header", {})
                except RocketlabError:
                    continue
                if header.get("isLeader") == "true":
                    return c
            time.sleep(0.3)
        raise RocketlabError(f"no Java controller leads within {timeout_s} s")

    def kill(self, controller: str) -> None:
        self.procs.pop(controller).kill()

    def stop_all(self) -> None:
        for server in self.procs.values():
            server.terminate()
        for server in self.procs.values():
            server.stop()
        self.procs.clear()


__all__ = ["REQUESTS", "JavaControllerGroup", "JavaRemotingClient", "free_port"]
