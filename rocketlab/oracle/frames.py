"""RocketMQ remoting frames as the real Java sends them: captured from a running Java DLedger group.

:func:`capture_dledger_group` starts a real DLedger 0.3.1.2 group (one ``DLedgerMember`` JVM per member,
as ``rocketlab node`` runs ``nodeKind=java-dledger``) whose members reach each other through recording
TCP relays, lets it elect, appends through DLedger's own ``DLedgerClient`` (through relays too), and
returns every frame that crossed, split per connection and direction. :func:`exchanges` pairs each
response with the request it answers (same connection, same opaque).

:func:`java_header_frames` has the release's own ``RemotingCommand`` and header classes encode each of
:func:`header_cases` (broker requests and answers, controller RPCs), the frames to compare ours with.

``python -m rocketlab.oracle.frames DIR`` writes both as the test data in ``tests/data/remoting/``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.broker import protocol as b
from rocketlab.broker import send_protocol as s
from rocketlab.controller import protocol as p
from rocketlab.controller import wire as w
from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.net.families import ALL_FAMILIES
from rocketlab.oracle.jvm import Oracle
from rocketlab.oracle.servers import Server, free_port
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import encode_command, parse_frame
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection


@dataclass(frozen=True)
class CapturedFrame:
    conn: int
    """Which relayed connection (numbered as accepted)."""
    direction: str
    """``request`` (from the side that opened the connection) or ``response`` (back)."""
    src: str
    dst: str
    raw: bytes


class _Recorder:
    """Relays connections to ``target`` and records what crosses, per connection and direction."""

    def __init__(self) -> None:
        self.chunks: dict[tuple[int, str, str, str], bytearray] = {}
        self.next_id = 0
        self.servers: list[asyncio.base_events.Server] = []

    async def relay(self, src: str, dst: str, target: int) -> int:
        port = free_port()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.next_id += 1
            conn = self.next_id
            try:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", target)
            except OSError:
                writer.close()
                return
            await asyncio.gather(self._pump(reader, up_w, (conn, "request", src, dst)),
                                 self._pump(up_r, writer, (conn, "response", dst, src)))

        self.servers.append(await asyncio.start_server(handle, "127.0.0.1", port))
        return port

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    key: tuple[int, str, str, str]) -> None:
        buf = self.chunks.setdefault(key, bytearray())
        try:
            while data := await reader.read(65536):
                buf += data
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    def frames(self) -> list[CapturedFrame]:
        out = []
        for (conn, direction, src, dst), data in sorted(self.chunks.items()):
            proto = RemotingConnection()
            proto.receive_data(bytes(data))
            proto.awaiting = set(range(1 << 20))  # keep every response
            while True:
                start = proto.offset
                try:
                    cmd = proto.next_command()
                except Exception:  # noqa: BLE001 - a connection cut mid-frame at the end
                    break
                if cmd is NEED_DATA or cmd is CLOSED:
                    break
                out.append(CapturedFrame(conn, direction, src, dst, bytes(data[start:proto.offset])))
        return out


def capture_dledger_group(oracle: Oracle, workdir: str | os.PathLike[str], *, members: int = 3,
                          appends: int = 3, settle_s: float = 6.0) -> list[CapturedFrame]:
    """Run a real Java DLedger group through recording relays (see the module docstring)."""
    return asyncio.run(_capture(oracle, Path(workdir), members, appends, settle_s))


async def _capture(oracle: Oracle, work: Path, members: int, appends: int, settle_s: float) -> list[CapturedFrame]:
    ids = [f"n{i}" for i in range(members)]
    real = {n: free_port() for n in ids}
    rec = _Recorder()
    via = {(a, b): await rec.relay(a, b, real[b]) for a in ids for b in ids if a != b}
    client_peers = ";".join([f"{b}-127.0.0.1:{await rec.relay('client', b, real[b])}" for b in ids])
    procs: list[Server] = []
    loop = asyncio.get_running_loop()
    try:
        for n in ids:
            peers = ";".join(f"{m}-127.0.0.1:{real[m] if m == n else via[(n, m)]}" for m in ids)
            conf = work / f"{n}.conf"
            conf.write_text(f"nodeKind=java-dledger\ngroup=g1\nselfId={n}\npeers={peers}\nrunDir={work}\n"
                            f"storeBaseDir={work / 'store'}\nheartBeatTimeIntervalMs=500\n"
                            "mappedFileSizeForEntryData=65536\nmappedFileSizeForEntryIndex=32768\n")
            cmd = oracle.command("rocketlab.oracle.DLedgerMember", str(conf), home=work / f"{n}-home", heap_mb=256)
            procs.append(Server(n, "java", "member", cmd, work / f"{n}.log").launch())
        for proc in procs:  # each prints its JSON line once it listens
            await loop.run_in_executor(None, proc.wait_up)
        await asyncio.sleep(settle_s)
        driver = oracle.start(work, name="client")
        try:
            bodies = [base64.b64encode(b"captured %d" % i).decode() for i in range(appends)]
            await loop.run_in_executor(None, lambda: driver.request("dledgerClientAppend", group="g1",
                                                                    peers=client_peers, bodies=bodies))
        finally:
            await loop.run_in_executor(None, driver.close)
        await asyncio.sleep(1.0)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            await loop.run_in_executor(None, proc.stop)
        for server in rec.servers:
            server.close()
    return rec.frames()


def exchanges(frames: list[CapturedFrame]) -> list[tuple[CapturedFrame, CapturedFrame | None]]:
    """Each request with the response that answered it (same connection, same opaque), or None."""
    responses = {(f.conn, parse_frame(f.raw).opaque): f for f in frames if f.direction == "response"}
    return [(f, responses.get((f.conn, parse_frame(f.raw).opaque))) for f in frames if f.direction == "request"]


def sample(frames: list[CapturedFrame]) -> list[dict[str, Any]]:
    """One exchange per request kind (a PUSH per push type): the test data's shape."""
    codec = DLedgerCodec()
    out, seen = [], set()
    for request, response in exchanges(frames):
        msg = codec.decode(request.raw)
        kind = type(msg).__name__ + (f"/{msg.type.name}" if hasattr(msg, "commit_index") else "")
        if kind in seen or response is None:
            continue
        seen.add(kind)
        out.append({"kind": kind, "from": request.src, "to": request.dst,
                    "request": base64.b64encode(request.raw).decode(),
                    "response": base64.b64encode(response.raw).decode()})
    return out


# ------------------------------------------------------------------------------------ header classes
_B4 = "org.apache.rocketmq.common.protocol.header."
_B5 = "org.apache.rocketmq.remoting.protocol.header."


def header_cases() -> dict[str, list[tuple[str, Any]]]:
    """Per release, (name, message) of every header-carrying message the kit sends: the broker's
    requests and answers (both releases; the send path's V2 and batch sends, send-back and topic creation:
    4.9.5), the controller RPCs and answers (5.3.3)."""
    broker = [
        ("send", b.SendMessageRequest("TopicTest", b"hello", 2, "TagA", "k1 k2", {"a": "b"}, "pg", 1700000000000)),
        ("pull", b.PullMessageRequest("TopicTest", 1, 5, 32, "cg", sys_flag=0)),
        ("update-offset", b.UpdateConsumerOffsetRequest("cg", "TopicTest", 1, 9)),
        ("send-ok", b.SendMessageResponse("PUT_OK", "7F00000100002A9F0000000000000C20", 3, 3104, None, 2)),
        ("send-flush-slave-timeout", b.SendMessageResponse("FLUSH_SLAVE_TIMEOUT", "7F00000100002A9F0000000000000C20",
                                                           4, 3104, None, 0)),
        ("send-unavailable", b.SendMessageResponse("SERVICE_NOT_AVAILABLE")),
        ("pull-found", b.PullMessageResponse("FOUND", b"", 8, 0, 8, 0)),
        ("pull-not-found", b.PullMessageResponse("OFFSET_OVERFLOW_ONE", b"", 8, 0, 8, 1)),
    ]
    send_path = [  # 4.9.5's send path (rocketlab.broker.send_path models that release)
        ("send-v2", b.SendMessageRequest("TopicTest", b"\x78\x9c", 1, "TagA", "k1", {"a": "b"}, "pg", 1700000000001,
                                         sys_flag=1, flag=5, reconsume_times=2, max_reconsume_times=3, v2=True)),
        ("send-batch", b.SendMessageRequest("TopicTest", b"packed", -1, None, None, {"WAIT": "true"}, "pg",
                                            1700000000002, batch=True)),
        ("send-refused", b.SendMessageResponse("NO_PERMISSION", remark="Sending message to topic[SCHEDULE_TOPIC_XXXX] "
                                               "is forbidden.", code=16)),
        ("send-back", s.ConsumerSendMsgBackRequest(3104, "cg", 0, "7F00000100002A9F0000000000000C20", "TopicTest",
                                                   False, 2)),
        ("create-topic", s.CreateTopicRequest("TopicNew", 4, 8, 6, "SINGLE_TAG", 0)),
        ("admin-answer", s.AdminResponse(0, "not set any response code")),
    ]
    controller = [
        ("elect-by-broker", p.ElectMasterRequestHeader.of_broker_trigger("c", "b", 2)),
        ("elect-by-controller", p.ElectMasterRequestHeader.of_controller_trigger("b")),
        ("alter-sync-state-set", w.AlterSyncStateSetRequest(p.AlterSyncStateSetRequestHeader("b", 1, 3),
                                                            p.SyncStateSet(frozenset({1, 2}), 4))),
        ("apply-broker-id", p.ApplyBrokerIdRequestHeader("c", "b", 1, "10.0.0.1:10911;1700000000000")),
        ("register", p.RegisterBrokerToControllerRequestHeader("c", "b", 1, "10.0.0.1:10911")),
        ("get-replica-info", p.GetReplicaInfoRequestHeader("b")),
        ("next-broker-id", p.GetNextBrokerIdRequestHeader("c", "b")),
        ("clean-broker-data", p.CleanControllerBrokerDataRequestHeader(None, "b", "1;2", True)),
        ("heartbeat", p.BrokerHeartbeatRequestHeader("c", "10.0.0.1:10911", "b", 1, 2, 4096, 4000, 10_000, 1)),
        ("notify-role-changed", w.NotifyBrokerRoleChanged("10.0.0.1:10911", 2, 3, 1, frozenset({1, 3}))),
        ("elect-answer", w.ControllerResponse(0, None, p.ElectMasterResponseHeader(2, "10.0.0.2:10911", 3, 4), None)),
        ("register-answer", w.ControllerResponse(0, None, p.RegisterBrokerToControllerResponseHeader(
            "c", "b", 1, "10.0.0.1:10911", 2, 3), None)),
        ("metadata-answer", w.ControllerResponse(0, None, w.ControllerMetadata("controller", "c0", "h:1", True,
                                                                               "c0-h:1"), None)),
        ("not-leader", w.ControllerResponse(2007, "The controller is not in leader state")),
    ]
    return {"4.9.5": broker + send_path, "5.3.3": broker + controller}


def header_class(msg: Any, release: str) -> str | None:
    """The Java header class ``msg`` carries, in ``release``'s package (None: no header)."""
    if type(msg) is b.SendMessageRequest and (msg.v2 or msg.batch):
        return _release_class(b.SEND_MESSAGE_REQUEST_HEADER_V2.java_class, release)
    if type(msg) is s.AdminResponse:
        return None
    by_type = {b.SendMessageRequest: b.SEND_MESSAGE_REQUEST_HEADER, b.PullMessageRequest: b.PULL_MESSAGE_REQUEST_HEADER,
               s.ConsumerSendMsgBackRequest: s.CONSUMER_SEND_MSG_BACK_REQUEST_HEADER,
               s.CreateTopicRequest: s.CREATE_TOPIC_REQUEST_HEADER,
               b.UpdateConsumerOffsetRequest: b.UPDATE_CONSUMER_OFFSET_REQUEST_HEADER,
               b.SendMessageResponse: b.SEND_MESSAGE_RESPONSE_HEADER, b.PullMessageResponse: b.PULL_MESSAGE_RESPONSE_HEADER,
               w.NotifyBrokerRoleChanged: w.NOTIFY}
    if type(msg) in by_type:
        name = by_type[type(msg)].java_class
    elif type(msg) is w.ControllerResponse:
        if msg.header is None:
            return None
        name = w._RESPONSE_HEADERS[type(msg.header)][0].java_class
    else:
        header = w._SPEC[type(msg)][1]
        if header is None:
            return None
        name = header.java_class
    return _release_class(name, release)


def _release_class(name: str, release: str) -> str:
    return name.replace(_B4, _B5) if release.startswith("5.") else name


def java_header_frames(oracle: Oracle, workdir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Each case of :func:`header_cases` for the oracle's release, as the release's own classes encode
    it (our command's fields set on the header class; opaque 7): name, Java's frame, our frame."""
    codec = RemotingCodec(ALL_FAMILIES)
    out = []
    with oracle.start(workdir, name=f"frames-{oracle.release}") as proc:
        for name, msg in header_cases()[oracle.release]:
            cmd = codec.command(msg, opaque=7)
            reply = proc.request("remotingEncode", code=cmd.code, flag=cmd.flag, opaque=7, remark=cmd.remark,
                                 headerClass=header_class(msg, oracle.release), header=cmd.ext_fields or {},
                                 body=base64.b64encode(cmd.body).decode() if cmd.body else None)
            out.append({"name": name, "java": reply["frame"],
                        "ours": base64.b64encode(encode_command(cmd)).decode()})
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m rocketlab.oracle.frames DIR", file=sys.stderr)
        return 2
    out_dir = Path(args[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        frames = capture_dledger_group(Oracle.find("4.9.5"), work)
        data = {"source": "a real DLedger 0.3.1.2 group (RocketMQ 4.9.5 remoting) of three members on 127.0.0.1 "
                          "and its DLedgerClient, captured by rocketlab.oracle.frames",
                "exchanges": sample(frames)}
        (out_dir / "dledger-0.3.1.2.json").write_text(json.dumps(data, indent=1) + "\n")
        print(f"{len(data['exchanges'])} exchanges from {len(frames)} frames")
        for release in ("4.9.5", "5.3.3"):
            cases = java_header_frames(Oracle.find(release), work)
            (out_dir / f"headers-{release}.json").write_text(json.dumps(
                {"source": f"RocketMQ {release}'s RemotingCommand and header classes, by rocketlab.oracle.frames",
                 "frames": [{"name": c["name"], "java": c["java"]} for c in cases]}, indent=1) + "\n")
            print(f"{release}: {len(cases)} header frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
