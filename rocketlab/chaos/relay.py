"""A fault-injecting TCP relay: every connection into one node passes through it, and it delays, drops,
reorders or holds what crosses, per source node and direction.

The campaign gives each node one relay (in the node's own network namespace when there are namespaces,
so a kernel-level cut of the path to the node's address still cuts relayed traffic); every other node's
configuration names, for this node, a port of the relay that is that source's own, so the relay knows
who is talking. A port relays RocketMQ remoting frames (``frames``: the unit of every fault is a whole
frame, found by its length field) or a raw byte stream (``raw``: classic HA; only delay and hold apply,
in chunks as read).

Faults per direction (``src -> dst`` for what the connection's opener sends, ``dst -> src`` back):

* ``delay_ms`` + up to ``jitter_ms``: each frame is released that much later, in order (TCP keeps order);
* ``loss``: the probability that a frame vanishes (a request never arrives, or its response: the caller
  times out - harsher than TCP, which would retransmit; it is the message loss a lossy network makes
  of a protocol, as the simulator's ``drop``);
* ``reorder``: the probability that a frame is held back and released after the next one;
* ``hold``: nothing is released until healed, then everything in order (a partition without netns: TCP
  would retransmit across it; new connections are accepted and stall, as SYN retransmits would).

Run as ``python -m rocketlab.chaos.relay`` (inside a namespace with ``ip netns exec``): the ports and
the target come as arguments, faults as JSON lines on stdin (``{"set": {"src": "n1", "dir": "in",
"delay_ms": 50}}``, ``{"heal": true}``), each answered ``{"ok": true}`` on stdout. Its random choices
come from ``--seed``, so a run's faults are the same given the same traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Faults:
    """One direction's faults (see the module docstring)."""

    delay_ms: int = 0
    jitter_ms: int = 0
    loss: float = 0.0
    reorder: float = 0.0
    hold: bool = False

    def quiet(self) -> bool:
        return self == Faults()


@dataclass
class _Pipe:
    """One direction of one connection: frames waiting for their release time."""

    writer: asyncio.StreamWriter
    faults: Faults
    rng: random.Random
    queue: list[tuple[float, bytes]] = field(default_factory=list)
    held: bytes | None = None
    last_release: float = 0.0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    stats: dict[str, int] = field(default_factory=lambda: {"frames": 0, "lost": 0, "reordered": 0})

    def put(self, frame: bytes, now: float, framed: bool) -> None:
        f = self.faults
        self.stats["frames"] += 1
        if framed and f.loss and self.rng.random() < f.loss:
            self.stats["lost"] += 1
            return
        release = now + (f.delay_ms + (self.rng.uniform(0, f.jitter_ms) if f.jitter_ms else 0)) / 1000
        release = max(release, self.last_release)
        if framed and f.reorder and self.held is None and self.rng.random() < f.reorder:
            self.held = frame  # goes out right after the next frame
            self.stats["reordered"] += 1
            return
        self.last_release = release
        self.queue.append((release, frame))
        if self.held is not None:
            self.queue.append((release, self.held))
            self.held = None
        self.wake.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self.queue or self.faults.hold:
                if self.held is not None and not self.faults.hold:  # no next frame came: let it go
                    self.queue.append((loop.time(), self.held))
                    self.held = None
                    continue
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), 0.05)
                except asyncio.TimeoutError:
                    pass
                continue
            release, frame = self.queue[0]
            wait = release - loop.time()
            if wait > 0:
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), wait)
                except asyncio.TimeoutError:
                    pass
                continue
            self.queue.pop(0)
            self.writer.write(frame)
            await self.writer.drain()


class Relay:
    """The relay of one destination node: ``ports`` = source -> (listen port, ``frames`` or ``raw``),
    each forwarded to ``target`` = (host, port) for ``frames`` and ``raw_target`` for ``raw``."""

    def __init__(self, dst: str, listen_host: str, ports: dict[str, tuple[int, str]],
                 target: tuple[str, int], raw_target: tuple[str, int] | None = None, seed: int = 1) -> None:
        self.dst, self.listen_host, self.ports = dst, listen_host, ports
        self.target, self.raw_target = target, raw_target
        self.rng = random.Random(f"{seed}/relay/{dst}")
        self.faults: dict[tuple[str, str], Faults] = {}
        """(source, ``in`` or ``out``) -> faults; ``in`` is source -> this node."""
        self.pipes: list[tuple[str, str, _Pipe]] = []
        self.totals = {"frames": 0, "lost": 0, "reordered": 0}
        """What the connections closed so far saw."""
        self.servers: list[asyncio.base_events.Server] = []
        self.tasks: set[asyncio.Task] = set()

    def faults_of(self, src: str, direction: str) -> Faults:
        return self.faults.setdefault((src, direction), Faults())

    async def start(self) -> None:
        for src, (port, mode) in self.ports.items():
            self.servers.append(await asyncio.start_server(
                lambda r, w, src=src, mode=mode: self._accept(src, mode, r, w), self.listen_host, port))

    async def _accept(self, src: str, mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = self.target if mode == "frames" else self.raw_target
        try:
            if target is None:
                raise OSError("no raw target")
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        framed = mode == "frames"
        who = src.split("/")[0]  # "n1/ha": n1's HA stream
        ins = _Pipe(up_writer, self.faults_of(who, "in"), self.rng)
        outs = _Pipe(writer, self.faults_of(who, "out"), self.rng)
        self.pipes += [(who, "in", ins), (who, "out", outs)]
        tasks = [asyncio.ensure_future(p.run()) for p in (ins, outs)]
        pumps = [asyncio.ensure_future(self._pump(reader, ins, framed)),
                 asyncio.ensure_future(self._pump(up_reader, outs, framed))]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            await asyncio.sleep(0.05)  # what is queued and due goes out first
        except asyncio.CancelledError:
            pass
        finally:
            for t in tasks + pumps:
                t.cancel()
            writer.close()
            up_writer.close()
            for pipe in (ins, outs):
                for k, v in pipe.stats.items():
                    self.totals[k] += v
            self.pipes = [p for p in self.pipes if p[2] not in (ins, outs)]

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, pipe: _Pipe, framed: bool) -> None:
        loop = asyncio.get_running_loop()
        buf = bytearray()
        try:
            while data := await reader.read(65536):
                if not framed:
                    pipe.put(data, loop.time(), False)
                    continue
                buf += data
                while len(buf) >= 4:
                    length = int.from_bytes(buf[:4], "big", signed=True)
                    if length < 0 or len(buf) < 4 + length:
                        break
                    pipe.put(bytes(buf[:4 + length]), loop.time(), True)
                    del buf[:4 + length]
        except OSError:
            pass

    def set(self, src: str, direction: str, **values: Any) -> None:
        f = self.faults_of(src, direction)
        for name, value in values.items():
            if not hasattr(f, name):
                raise ValueError(f"unknown relay fault {name!r}")
            setattr(f, name, type(getattr(f, name))(value))
        for s, d, pipe in self.pipes:
            if (s, d) == (src, direction):
                pipe.wake.set()

    def heal(self) -> None:
        for f in self.faults.values():
            f.__init__()  # type: ignore[misc]
        for _, _, pipe in self.pipes:
            pipe.wake.set()

    def close(self) -> None:
        for server in self.servers:
            server.close()

    def stats(self) -> dict[str, int]:
        """Frames seen, lost and reordered, on every connection so far."""
        out = dict(self.totals)
        for _, _, pipe in self.pipes:
            for k, v in pipe.stats.items():
                out[k] += v
        return out


async def _serve(args: argparse.Namespace) -> None:
    ports = {}
    for spec in args.port:
        src, _, rest = spec.partition("=")
        port, _, mode = rest.partition(":")
        ports[src] = (int(port), mode or "frames")
    host, _, port = args.target.rpartition(":")
    raw = None
    if args.raw_target:
        rh, _, rp = args.raw_target.rpartition(":")
        raw = (rh, int(rp))
    relay = Relay(args.dst, args.listen, ports, (host, int(port)), raw, args.seed)
    await relay.start()
    print(json.dumps({"relay": args.dst, "listening": sorted(p for p, _ in ports.values())}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        try:
            cmd = json.loads(line)
            if cmd.get("heal"):
                relay.heal()
            elif "set" in cmd:
                spec = dict(cmd["set"])
                relay.set(spec.pop("src"), spec.pop("dir", "in"), **spec)
            answer: dict[str, Any] = {"ok": True, "stats": relay.stats()}
        except (ValueError, KeyError, TypeError) as e:
            answer = {"ok": False, "error": str(e)}
        print(json.dumps(answer), flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rocketlab.chaos.relay")
    p.add_argument("--dst", required=True)
    p.add_argument("--listen", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--raw-target")
    p.add_argument("--port", action="append", default=[], help="SRC=PORT[:frames|raw]")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
