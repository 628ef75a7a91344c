"""``rocketlab node --config FILE``: one real node on TCP, configured by a properties file.

Common keys (RocketMQ/DLedger spelling): ``nodeKind`` (pingpong, broker, dledger, controller, namesrv, or
``java-dledger``: a real DLedger 0.3.1.2 member, see :mod:`rocketlab.oracle.member_kind`), ``selfId``,
``peers`` (``n0-host:port;n1-host:port``), ``runDir`` (trace ``events-<selfId>.jsonl`` and the node's
data under ``nodes/<selfId>/``), ``seed``; for streams ``streamListenPort`` and ``streamPeers``.
Each kind adds its own keys. The process stops cleanly on SIGTERM or SIGINT.

A file that names neither ``selfId`` nor ``peers`` (a ``namesrv.conf`` or ``broker.conf`` as RocketMQ users
write them) is a node of its own: it listens on 127.0.0.1:``listenPort`` (default 9876 for a name server,
10911 for a broker, as in RocketMQ) and is named ``<nodeKind>_<listenPort>`` (``dLegerSelfId`` when set).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from rocketlab.broker.node import build_broker
from rocketlab.controller.node import build_controller
from rocketlab.core import NodeContext, NodeSpec
from rocketlab.dledger.node import build_dledger
from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.namesrv.node import DEFAULT_LISTEN_PORT as NAMESRV_PORT
from rocketlab.namesrv.node import build_namesrv
from rocketlab.net.runtime import NetRuntime
from rocketlab.peers import parse_peers
from rocketlab.pingpong import build_pingpong
from rocketlab.properties import int_property, load_properties
from rocketlab.trace.recorder import TraceRecorder

T = TypeVar("T")

NODE_KINDS: dict[str, Callable[[dict[str, str]], NodeSpec]] = {
    "pingpong": build_pingpong,
    "broker": build_broker,
    "dledger": build_dledger,
    "controller": build_controller,
    "namesrv": build_namesrv,
}
"""``nodeKind`` -> the function building its :class:`~rocketlab.core.NodeSpec` from the node's properties,
each imported from the core package that owns the kind (the runtime sits above the cores). A new kind
hosted by this runtime is one import and one line here."""

EXEC_KINDS: dict[str, Callable[[dict[str, str], str], NoReturn]] = {}
"""``nodeKind`` -> a function that replaces this process with another program serving that kind on the same
properties file (the real Java members). Registered with :func:`register_exec_kind` by the package that owns
the program (``java-dledger``: :mod:`rocketlab.oracle.member_kind`, imported by ``rocketlab.cli``), so the
runtime never imports the judge."""


def register_exec_kind(kind: str, run: Callable[[dict[str, str], str], NoReturn]) -> None:
    """Let ``rocketlab node`` serve ``nodeKind=kind`` by handing the process to ``run(props, config)``."""
    if kind in NODE_KINDS:
        raise ValueError(f"nodeKind={kind!r} is hosted by this runtime already")
    EXEC_KINDS[kind] = run


def _known_kinds() -> str:
    return ", ".join([*NODE_KINDS, *EXEC_KINDS])


def _unknown_kind(source: str, kind: str) -> ConfigError:
    return ConfigError(_("{source}: nodeKind={kind!r} is not one of {known}").format(
        source=source, kind=kind, known=_known_kinds()))


def node_spec(kind: str, props: dict[str, str], source: str = "config") -> NodeSpec:
    """Build the NodeSpec of ``nodeKind=kind`` (ConfigError when the kind is unknown)."""
    if kind not in NODE_KINDS:
        raise _unknown_kind(source, kind)
    return NODE_KINDS[kind](props)


def build_runtime(props: dict[str, str], source: str = "config") -> NetRuntime:
    kind = props.get("nodeKind", "pingpong")
    if kind not in NODE_KINDS:
        raise _unknown_kind(source, kind)
    props = with_own_address(props, source)
    self_id = props["selfId"]
    peers = parse_peers(props["peers"])
    if self_id not in peers:
        raise ConfigError(_("{source}: selfId={self_id!r} is not in peers ({peers})").format(
            source=source, self_id=self_id, peers=", ".join(peers)))
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


def with_own_address(props: dict[str, str], source: str = "config") -> dict[str, str]:
    """``props`` with ``selfId`` and ``peers`` as the module docstring derives them for a file naming
    neither (a RocketMQ-style ``broker.conf``); a file naming one of them must name both."""
    if "selfId" in props and "peers" in props:
        return props
    for key in ("selfId", "peers"):
        if key in props:
            other = "peers" if key == "selfId" else "selfId"
            raise ConfigError(_("{source}: {key} is set but {other} is not (name both, or neither for a node of "
                                "its own)").format(source=source, key=key, other=other))
    kind = props.get("nodeKind", "pingpong")
    port = int_property(props, "listenPort", NAMESRV_PORT if kind == "namesrv" else 10911)
    if not 0 < port < 65536:
        raise ConfigError(_("{source}: listenPort={port} is not a TCP port").format(source=source, port=port))
    self_id = props.get("dLegerSelfId") or f"{kind}_{port}"
    return {**props, "selfId": self_id, "peers": f"{self_id}-127.0.0.1:{port}"}


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
    """The trace reaches its file every ``seconds`` as well: the runtime writes a core's events before the
    actions they came with go out (a SIGKILL cannot cut one whose consequence another node saw); this
    catches the rest (the network's own events, a core's events that no action followed)."""
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
        raise ConfigError(_("{name}={choice!r}: expected 'uvloop' or 'asyncio'").format(name=EVENT_LOOP_ENV,
                                                                                          choice=choice))
    if choice == "uvloop" and importlib.util.find_spec("uvloop") is not None:
        return "uvloop"
    return "asyncio"


def run_event_loop(main: Callable[..., Coroutine[Any, Any, T]], *args: Any, loop: str | None = None) -> T:
    """Run ``main(*args)`` to completion on :func:`event_loop_name`'s loop for ``loop`` (chosen before the
    coroutine is made, so a bad choice leaves none unawaited). uvloop (libuv) runs the same asyncio
    code with cheaper socket reads, writes and timers: measured in ``bench_dledger.py`` beside asyncio's
    loop in the same run (issue #14). Added for speed; Java's nodes run on Netty's event loops."""
    if event_loop_name(loop) == "uvloop":
        import uvloop  # lazy: optional: absent on Windows

        return uvloop.run(main(*args))
    return asyncio.run(main(*args))


def main_node(config: str) -> int:
    props = load_properties(config)
    exec_kind = EXEC_KINDS.get(props.get("nodeKind", ""))
    if exec_kind is not None:
        exec_kind(props, config)
    run_event_loop(run_node, props, config)
    print(json.dumps({"stopped": props.get("selfId")}), file=sys.stderr, flush=True)
    return 0
