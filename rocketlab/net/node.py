"""``rocketlab node --config FILE``: one real node on TCP, configured by a properties file.

Common keys (RocketMQ/DLedger spelling): ``nodeKind`` (pingpong, broker, dledger), ``selfId``,
``peers`` (``n0-host:port;n1-host:port``), ``runDir`` (trace ``events-<selfId>.jsonl`` and the node's
data under ``nodes/<selfId>/``), ``seed``; for streams ``streamListenPort`` and ``streamPeers``.
Each kind adds its own keys. The process stops cleanly on SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.core import Codec, CoreFactory, NodeContext
from rocketlab.errors import ConfigError
from rocketlab.net.peers import parse_peers
from rocketlab.net.runtime import NetRuntime
from rocketlab.properties import load_properties
from rocketlab.trace.recorder import TraceRecorder


@dataclass
class NodeSpec:
    """What a node kind builds from its properties: the core factory, its codec, and the port for
    byte streams if the kind listens for them (a master's haListenPort)."""

    factory: CoreFactory
    codec: Codec
    stream_listen_port: int = 0


def _int(props: dict[str, str], key: str, default: int) -> int:
    text = props.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{key}={text!r} is not a whole number") from None


def build_pingpong(props: dict[str, str]) -> NodeSpec:
    from rocketlab.pingpong import PingPongCodec, PingPongConfig, make_pingpong_node

    config = PingPongConfig(
        heartbeat_interval_ms=_int(props, "heartbeatIntervalMs", 50),
        ping_interval_ms=_int(props, "pingIntervalMs", 200),
        ping_timeout_ms=_int(props, "pingTimeoutMs", 500),
        stream_frames=_int(props, "streamFrames", 0),
    )
    return NodeSpec(lambda ctx: make_pingpong_node(ctx, config), PingPongCodec())


def build_broker(props: dict[str, str]) -> NodeSpec:
    from rocketlab.broker.node import build_broker as build

    return build(props)


def build_dledger(props: dict[str, str]) -> NodeSpec:
    from rocketlab.dledger.node import build_dledger as build

    return build(props)


NODE_KINDS: dict[str, Callable[[dict[str, str]], NodeSpec]] = {
    "pingpong": build_pingpong, "broker": build_broker, "dledger": build_dledger}


def build_runtime(props: dict[str, str], source: str = "config") -> NetRuntime:
    kind = props.get("nodeKind", "pingpong")
    if kind not in NODE_KINDS:
        raise ConfigError(f"{source}: nodeKind={kind!r} is not one of {', '.join(NODE_KINDS)}")
    for key in ("selfId", "peers"):
        if key not in props:
            raise ConfigError(f"{source}: {key} is required")
    self_id = props["selfId"]
    peers = parse_peers(props["peers"])
    if self_id not in peers:
        raise ConfigError(f"{source}: selfId={self_id!r} is not in peers ({', '.join(peers)})")
    stream_peers = parse_peers(props["streamPeers"], "streamPeers") if "streamPeers" in props else {}
    spec = NODE_KINDS[kind](props)
    stream_port = spec.stream_listen_port or _int(props, "streamListenPort", 0)
    run_dir = Path(props.get("runDir", f"runs/node-{self_id}"))
    data_dir = run_dir / "nodes" / self_id
    data_dir.mkdir(parents=True, exist_ok=True)
    sink = open(run_dir / f"events-{self_id}.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - closed at exit
    ctx = NodeContext(self_id, tuple(peers), _int(props, "seed", 1), data_dir, dict(props))
    return NetRuntime(ctx, spec.factory, spec.codec, listen=peers[self_id], peers=peers,
                      stream_listen=(peers[self_id][0], stream_port) if stream_port else None,
                      stream_peers=stream_peers, recorder=TraceRecorder(keep=False, sink=sink),
                      trace_network=props.get("traceNetwork", "false") == "true")


async def run_node(props: dict[str, str], source: str = "config", ready: Callable[[Any], None] | None = None) -> None:
    runtime = build_runtime(props, source)
    await runtime.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: loop.create_task(runtime.stop()))
    host, port = runtime.listen
    print(json.dumps({"node": runtime.ctx.node_id, "listening": f"{host}:{port}"}), flush=True)
    if ready is not None:
        ready(runtime)
    flusher = loop.create_task(_flush_every(runtime, 0.2))
    await runtime.serve_forever()
    flusher.cancel()
    sink = runtime.recorder.sink
    if sink is not None:
        sink.close()
        final = Path(sink.name).with_name(f"final-{runtime.ctx.node_id}.json")
        final.write_text(json.dumps(runtime.final_state, indent=2) + "\n")


async def _flush_every(runtime: NetRuntime, seconds: float) -> None:
    while True:
        await asyncio.sleep(seconds)
        runtime.recorder.flush()


def main_node(config: str) -> int:
    props = load_properties(config)
    asyncio.run(run_node(props, config))
    print(json.dumps({"stopped": props.get("selfId")}), file=sys.stderr, flush=True)
    return 0
