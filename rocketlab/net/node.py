"""``rocketlab node --config FILE``: one real node on TCP, configured by a properties file.

Common keys (RocketMQ/DLedger spelling): ``nodeKind`` (pingpong, broker, dledger, controller, or
``java-dledger``: a real DLedger 0.3.1.2 member, see :func:`exec_java_member`), ``selfId``,
``peers`` (``n0-host:port;n1-host:port``), ``runDir`` (trace ``events-<selfId>.jsonl`` and the node's
data under ``nodes/<selfId>/``), ``seed``; for streams ``streamListenPort`` and ``streamPeers``.
Each kind adds its own keys. The process stops cleanly on SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from rocketlab.core import NodeContext, NodeSpec
from rocketlab.errors import ConfigError
from rocketlab.net.runtime import NetRuntime
from rocketlab.peers import parse_peers
from rocketlab.properties import int_property, load_properties
from rocketlab.trace.recorder import TraceRecorder

T = TypeVar("T")

NODE_KINDS: dict[str, str] = {
    "pingpong": "rocketlab.pingpong:build_pingpong",
    "broker": "rocketlab.broker.node:build_broker",
    "dledger": "rocketlab.dledger.node:build_dledger",
    "controller": "rocketlab.controller.node:build_controller",
}
"""``nodeKind`` -> ``"module:function"`` building its :class:`~rocketlab.core.NodeSpec` from the node's
properties. Strings, imported only for the kind asked for, so the runtime imports no protocol package and
no protocol package imports the runtime; a new kind is one line here."""


def node_spec(kind: str, props: dict[str, str], source: str = "config") -> NodeSpec:
    """Build the NodeSpec of ``nodeKind=kind`` (ConfigError when the kind is unknown)."""
    if kind not in NODE_KINDS:
        raise ConfigError(f"{source}: nodeKind={kind!r} is not one of {', '.join(NODE_KINDS)}")
    module_name, _, function = NODE_KINDS[kind].partition(":")
    build: Callable[[dict[str, str]], NodeSpec] = getattr(importlib.import_module(module_name), function)
    return build(props)


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
    spec = node_spec(kind, props, source)
    stream_port = spec.stream_listen_port or int_property(props, "streamListenPort", 0)
    run_dir = Path(props.get("runDir", f"runs/node-{self_id}"))
    data_dir = run_dir / "nodes" / self_id
    data_dir.mkdir(parents=True, exist_ok=True)
    sink = open(run_dir / f"events-{self_id}.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - closed at exit
    ctx = NodeContext(self_id, tuple(peers), int_property(props, "seed", 1), data_dir, dict(props), threads=True)
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
    print(json.dumps({"node": runtime.ctx.node_id, "listening": f"{host}:{port}",
                      "event_loop": "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"}), flush=True)
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


#: ``ROCKETLAB_EVENT_LOOP=asyncio`` runs a node on asyncio's own event loop even where uvloop is installed.
EVENT_LOOP_ENV = "ROCKETLAB_EVENT_LOOP"


def event_loop_name(choice: str | None = None) -> str:
    """``"uvloop"`` where uvloop is installed (not on Windows) and not turned off by ``choice`` (default:
    :data:`EVENT_LOOP_ENV`, else uvloop), else ``"asyncio"``."""
    choice = choice or os.environ.get(EVENT_LOOP_ENV, "uvloop")
    if choice not in ("uvloop", "asyncio"):
        raise ConfigError(f"{EVENT_LOOP_ENV}={choice!r}: expected 'uvloop' or 'asyncio'")
    if choice == "uvloop" and importlib.util.find_spec("uvloop") is not None:
        return "uvloop"
    return "asyncio"


def run_event_loop(main: Callable[..., Coroutine[Any, Any, T]], *args: Any, loop: str | None = None) -> T:
    """Run ``main(*args)`` to completion on :func:`event_loop_name`'s loop for ``loop`` (chosen before the
    coroutine is made, so a bad choice leaves none unawaited). uvloop (libuv) runs the same asyncio
    code with cheaper socket reads, writes and timers: measured in ``bench_dledger.py`` beside asyncio's
    loop in the same run (issue #14). Added for speed; Java's nodes run on Netty's event loops."""
    if event_loop_name(loop) == "uvloop":
        import uvloop

        return uvloop.run(main(*args))
    return asyncio.run(main(*args))


JAVA_KINDS = {"java-dledger": "rocketlab.oracle.DLedgerMember"}
"""``nodeKind`` -> the Java class run in this process's place (our driver of the release's own classes)."""


def exec_java_member(props: dict[str, str], config: str) -> None:
    """Replace this process with a JVM running a real Java member on the same properties file: for
    ``java-dledger``, DLedger 0.3.1.2's ``DLedgerServer`` (the class path of ``javaRelease``, 4.9.5 by
    default: ``ROCKETLAB_JAVA_4``; see :mod:`rocketlab.oracle`). The JVM keeps this PID, prints the same
    "listening" line, writes ``events-<selfId>.jsonl`` (its role changes) and ``final-<selfId>.json``, and
    stops cleanly on SIGTERM - so a learner or a test runs it as it runs ours. ConfigError when the Java
    oracle is not there (the message says what to set)."""
    from rocketlab.oracle.jvm import Oracle, OracleUnavailable

    kind = props["nodeKind"]
    release = props.get("javaRelease", "4.9.5")
    for key in ("selfId", "peers"):
        if key not in props:
            raise ConfigError(f"{config}: {key} is required")
    try:
        oracle = Oracle.find(release)
    except OracleUnavailable as e:
        raise ConfigError(f"nodeKind={kind} needs the real Java: {e}") from None
    run_dir = Path(props.get("runDir", f"runs/node-{props['selfId']}"))
    home = run_dir / "nodes" / f"{props['selfId']}-jvm-home"
    cmd = oracle.command(JAVA_KINDS[kind], str(Path(config).resolve()), home=home, heap_mb=256)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)


def main_node(config: str) -> int:
    props = load_properties(config)
    if props.get("nodeKind") in JAVA_KINDS:
        exec_java_member(props, config)
    run_event_loop(run_node, props, config)
    print(json.dumps({"stopped": props.get("selfId")}), file=sys.stderr, flush=True)
    return 0
