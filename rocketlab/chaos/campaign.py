"""One chaos run, start to verdict: real ``rocketlab node`` processes, a seeded fault schedule, producers
recording a history, a consumer reading every queue after the heal, a checker, and a run directory.

A run (:func:`run`):

1. a fresh run directory; ``spec.json`` (what to run), ``schedule.json`` (the faults, from the seed);
2. the network: a namespace per node, veth pairs and a bridge (:mod:`rocketlab.chaos.netns`) - or, where
   this machine cannot (not root, no ``ip netns``), 127.0.0.1, said in the verdict and on stdout;
3. per node its relay (:mod:`rocketlab.chaos.relay`) and the node itself, each started inside its
   namespace (``ip netns exec``; the PID is the process's own, so SIGSTOP, SIGCONT and SIGKILL hit it);
4. producers put until the schedule is over; each step is applied and undone at its time, and traced as a
   ``fault`` event; then everything heals (cut routes restored, relays quiet, paused nodes resumed,
   killed nodes restarted) and the producers go on for the recovery time; a classic pair's master is
   then killed for good (what it had not replicated is what a lost master loses);
5. the consumer reads every queue from the master (a pair: from the slave), the nodes stop (SIGTERM),
   the network is removed, and the DLedger members' logs are read from their files;
6. ``history.jsonl``, ``reads.json``, ``events.jsonl`` (every node's trace and the faults, merged and
   timed from the start of the schedule), ``meta.json``, ``timeline.html`` (the offline cluster viewer)
   and ``verdict.json``; ``replay.sh`` re-runs the same seed and schedule with one command.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.chaos import acks, checker, losses
from rocketlab.chaos.clients import TOPIC, ClientProducer, create_topic, read_back
from rocketlab.chaos.history import History, load_history
from rocketlab.chaos.java_clients import JavaProducers
from rocketlab.chaos.netns import NetNamespaces, available
from rocketlab.chaos.schedule import FAULTS, LOCAL_FAULTS, Step, make_schedule
from rocketlab.chaos.stores import commit_log_end, member_logs, surviving_bodies
from rocketlab.chaos.systems import NAMESRV, System, Topology, configs, properties_text, system
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.trace.rundir import fresh_dir

RECOVERY_MS = 10_000


@dataclass
class RunSpec:
    """What one run runs (``spec.json``)."""

    system: str
    variant: str
    seed: int
    faults: tuple[str, ...] = FAULTS
    rounds: int = 1
    producers: int = 2
    recovery_ms: int = RECOVERY_MS
    step_ms: tuple[int, int] = (3000, 8000)
    quiet_ms: tuple[int, int] = (1000, 3000)
    netns: bool = True
    """Ask for network namespaces (used when this machine can make them)."""
    client: str = "kit"
    """The producers: ``kit`` (:mod:`rocketlab.chaos.clients`) or ``java`` (the Java 4.9.5 client,
    :mod:`rocketlab.chaos.java_clients`)."""
    node_module: str = ""
    """``MODULE[:ARG]`` run as ``python -m MODULE [ARG] node --config ...`` instead of ``rocketlab.cli``
    (the planted-bug suite's wrappers, tests/chaos/planted.py); empty: the kit's own command."""

    @classmethod
    def load(cls, path: Path) -> RunSpec:
        data = json.loads(Path(path).read_text())
        data["faults"] = tuple(data["faults"])
        data["step_ms"], data["quiet_ms"] = tuple(data["step_ms"]), tuple(data["quiet_ms"])
        return cls(**data)

    def replay_command(self, out: Path) -> str:
        args = ["rocketlab", "chaos", "run", "--system", self.system, "--seed", str(self.seed),
                "--faults", ",".join(self.faults), "--rounds", str(self.rounds),
                "--step-ms", f"{self.step_ms[0]}-{self.step_ms[1]}", "--quiet-ms", f"{self.quiet_ms[0]}-{self.quiet_ms[1]}",
                "--recovery-ms", str(self.recovery_ms), "--out", str(out)]
        if self.variant:
            args[5:5] = ["--variant", self.variant]
        if not self.netns:
            args.append("--local")
        if self.node_module:
            args += ["--node-module", self.node_module]
        if self.client != "kit":
            args += ["--client", self.client]
        return shlex.join(args)

    def node_command(self, config: Path) -> list[str]:
        """The node's command line after the interpreter (see :attr:`node_module`)."""
        module, _colon, arg = (self.node_module or "rocketlab.cli").partition(":")
        return ["-m", module, *([arg] if arg else []), "node", "--config", str(config)]


@dataclass
class _Node:
    name: str
    cmd: list[str]
    log: Path
    proc: subprocess.Popen | None = None
    paused: bool = False


class DiskPressure:
    """A thread that writes 8 MiB and fsyncs, again and again, into one 64 MiB file beside the stores
    (the kernel keeps writing back: every fsync of the members waits in the same queue); counts its
    fsyncs and the slowest."""

    def __init__(self, path: Path) -> None:
        self.path, self.stop, self.fsyncs, self.slowest_s = path, threading.Event(), 0, 0.0
        self.thread = threading.Thread(target=self._run, name="disk-pressure", daemon=True)

    def _run(self) -> None:
        chunk = os.urandom(1 << 20)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            offset = 0
            while not self.stop.is_set():
                for _attempt in range(8):
                    os.pwrite(fd, chunk, offset)
                    offset = (offset + len(chunk)) % (64 << 20)
                start = time.monotonic()
                os.fsync(fd)
                self.slowest_s = max(self.slowest_s, time.monotonic() - start)
                self.fsyncs += 1
        finally:
            os.close(fd)
            self.path.unlink(missing_ok=True)

    def start(self) -> None:
        self.thread.start()

    def end(self) -> None:
        self.stop.set()
        self.thread.join()


@dataclass
class Run:
    """The state of one run while it goes (see the module docstring)."""

    spec: RunSpec
    out: Path
    sys: System = field(init=False)
    steps: list[Step] = field(default_factory=list)
    nodes: dict[str, _Node] = field(default_factory=dict)
    relays: dict[str, subprocess.Popen] = field(default_factory=dict)
    net: NetNamespaces | None = None
    topo: Topology | None = None
    faults_log: list[dict[str, Any]] = field(default_factory=list)
    t0: float = 0.0
    disk: DiskPressure | None = None
    local_reason: str = ""

    def __post_init__(self) -> None:
        self.sys = system(self.spec.system, self.spec.variant or None)

    # ------------------------------------------------------------------ set up
    def prepare(self) -> None:
        fresh_dir(self.out)
        (self.out / "conf").mkdir()
        (self.out / "logs").mkdir()
        ok, why = available() if self.spec.netns else (False, "asked for 127.0.0.1 (--local)")
        kinds = self.spec.faults
        if ok:
            self.net = NetNamespaces(f"{os.getpid() % 100000:05d}" + str(self.spec.seed % 10),
                                     [*self.sys.nodes, NAMESRV])
        else:
            self.local_reason = why
            dropped = [k for k in kinds if k not in LOCAL_FAULTS]
            kinds = tuple(k for k in kinds if k in LOCAL_FAULTS)
            print(f"chaos: no network namespaces here ({why}); running on 127.0.0.1"
                  + (f" without {', '.join(dropped)}" if dropped else ""), flush=True)
        self.steps = make_schedule(self.spec.seed, self.sys.label, self.sys.nodes, kinds, self.spec.rounds,
                                   self.spec.step_ms, self.spec.quiet_ms)
        (self.out / "spec.json").write_text(json.dumps(asdict(self.spec), indent=2) + "\n")
        (self.out / "schedule.json").write_text(json.dumps([s.as_json() for s in self.steps], indent=1) + "\n")
        (self.out / "replay.sh").write_text("#!/bin/sh\n# re-runs this seed's schedule\nexec "
                                            + self.spec.replay_command(self.out) + "\n")
        (self.out / "replay.sh").chmod(0o755)

    def start_network(self) -> None:
        if self.net is None:
            self.topo = Topology(self.sys)
            return
        self.net.create()
        self.topo = Topology(self.sys, {n: self.net.address(n) for n in self.net.nodes})

    def _prefix(self, node: str) -> list[str]:
        return self.net.exec_prefix(node) if self.net is not None else []

    def start_relays(self) -> None:
        assert self.topo is not None
        for n in self.sys.nodes:
            cmd = [*self._prefix(n), sys.executable, "-m", "rocketlab.chaos.relay", *self.topo.relay_args(n),
                   "--seed", str(self.spec.seed)]
            with open(self.out / "logs" / f"relay-{n}.log", "ab") as log:
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
            line = proc.stdout.readline() if proc.stdout is not None else ""
            if not line:
                raise RocketlabError(f"the relay of {n} did not start (see {self.out / 'logs' / f'relay-{n}.log'})")
            self.relays[n] = proc

    def relay(self, node: str, **command: Any) -> None:
        proc = self.relays[node]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(command) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline() or "{}")
        if not answer.get("ok"):
            raise RocketlabError(f"relay of {node}: {answer.get('error', 'no answer')}")

    def write_configs(self) -> None:
        assert self.topo is not None
        for n, props in configs(self.sys, self.topo, str(self.out / "cluster")).items():
            props["seed"] = str(self.spec.seed)
            path = self.out / "conf" / f"{n}.conf"
            path.write_text(properties_text(props))
            self.nodes[n] = _Node(n, [*self._prefix(n), sys.executable, *self.spec.node_command(path)],
                                  self.out / "logs" / f"{n}.log")

    def start_node(self, n: str) -> None:
        self.start_nodes([n])

    def start_nodes(self, names: list[str], ready: bool = True) -> None:
        """Start the nodes together (each a Python process taking a second to start), then (``ready``) wait
        for each to say it listens (:meth:`wait_ready`)."""
        for n in names:
            node = self.nodes[n]
            with open(node.log, "ab") as log:
                node.proc = subprocess.Popen(node.cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        if ready:
            self.wait_ready(names)

    def wait_ready(self, names: list[str]) -> None:
        for n in names:
            node = self.nodes[n]
            line = node.proc.stdout.readline() if node.proc is not None and node.proc.stdout is not None else ""
            if not line:
                raise RocketlabError(f"{n} did not start: {node.log.read_text(errors='replace')[-1500:]}")
            node.paused = False

    def signal(self, n: str, sig: int) -> None:
        proc = self.nodes[n].proc
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, sig)
            if sig == signal.SIGKILL:
                proc.wait()

    def alive(self, n: str) -> bool:
        proc = self.nodes[n].proc
        return proc is not None and proc.poll() is None

    # ------------------------------------------------------------------ faults
    def now_ms(self) -> int:
        return int((time.monotonic() - self.t0) * 1000)

    def trace_fault(self, action: str, targets: list[str], detail: str = "") -> None:
        self.faults_log.append({"t": self.now_ms(), "seq": len(self.faults_log), "node": None, "kind": "fault",
                                "action": action, "targets": targets, **({"detail": detail} if detail else {})})

    def _cut(self, pairs: set[tuple[str, str]], on: bool) -> None:
        for src, dst in sorted(pairs):
            if self.net is not None:
                (self.net.cut if on else self.net.restore)(src, dst)
            else:  # the relays hold what src sends to dst, on connections either side opened
                self.relay(dst, set={"src": src, "dir": "in", "hold": on})
                self.relay(src, set={"src": dst, "dir": "out", "hold": on})

    def _links(self, on: bool, **values: Any) -> None:
        for dst in self.sys.nodes:
            for src in self.sys.nodes:
                if src != dst:
                    for direction in ("in", "out"):
                        self.relay(dst, set={"src": src, "dir": direction,
                                             **(values if on else {k: 0 for k in values})})

    def apply(self, step: Step, on: bool) -> None:
        f, t = step.fault, list(step.targets)
        if f in ("partition", "bridge", "one-way"):
            self._cut(step.cuts(self.sys.nodes), on)
            action = ("cut_link" if f == "one-way" else "partition") if on else ("heal_link" if f == "one-way" else "heal")
            self.trace_fault(action, t or sorted({n for g in step.groups for n in g}),
                             json.dumps({"fault": f, "groups": [list(g) for g in step.groups]}) if on else "")
        elif f == "isolate":
            assert self.net is not None
            (self.net.isolate if on else self.net.rejoin)(t[0])
            self.trace_fault("isolate" if on else "heal", t)
        elif f in ("latency", "loss", "reorder"):
            self._links(on, **step.params)
            self.trace_fault("network", list(self.sys.nodes), json.dumps({f: step.params} if on else {f: "off"}))
        elif f == "pause":
            self.signal(t[0], signal.SIGSTOP if on else signal.SIGCONT)
            self.nodes[t[0]].paused = on
            self.trace_fault("pause" if on else "resume", t)
        elif f == "kill":
            if on:
                self.signal(t[0], signal.SIGKILL)
                self.trace_fault("crash", t)
            else:
                self.start_node(t[0])
                self.trace_fault("restart", t)
        elif f == "disk":
            if on:
                self.disk = DiskPressure(self.out / "disk-pressure.bin")
                self.disk.start()
            elif self.disk is not None:
                self.disk.end()
                self.disk = None
            self.trace_fault("disk" if on else "heal", t)

    def heal_all(self) -> None:
        """Whatever is still on goes off; dead nodes come back, paused ones resume."""
        if self.net is not None:
            self.net.heal()
        for n in self.relays:
            self.relay(n, heal=True)
        if self.disk is not None:
            self.disk.end()
            self.disk = None
        for n, node in self.nodes.items():
            if node.paused:
                self.signal(n, signal.SIGCONT)
                node.paused = False
            if not self.alive(n):
                self.start_node(n)
        self.trace_fault("heal", list(self.sys.nodes), "everything")

    # ------------------------------------------------------------------ the run
    def _client_trace(self, name: str) -> Path:
        return self.out / "cluster" / f"events-client-{name}.jsonl"

    async def drive(self, history: History) -> None:
        assert self.topo is not None
        topo = self.topo
        deadline = time.monotonic() + 90
        while len(errors := await create_topic([topo.address(b) for b in self.sys.brokers])) == len(self.sys.brokers):
            if time.monotonic() > deadline:  # a master takes it (a slave refuses); none yet: no election yet
                raise RocketlabError(f"{self.sys.label}: topic {TOPIC} not created on any broker: {errors[0]}")
            await asyncio.sleep(0.5)
        stop = asyncio.Event()
        producers, tasks = await self._start_producers(history, stop)
        deadline = time.monotonic() + 90
        while not any(op["type"] == "ok" for op in history.ops):
            if time.monotonic() > deadline or any(t.done() for t in tasks):
                stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)
                for p in producers:
                    await p.close()
                raise RocketlabError(f"{self.sys.label}: no send was acknowledged in 90 s (see {self.out}/logs)")
            await asyncio.sleep(0.2)
        loop = asyncio.get_running_loop()
        start = self.now_ms()
        for step in self.steps:
            await asyncio.sleep(max(0.0, (start + step.at_ms - self.now_ms()) / 1000))
            await loop.run_in_executor(None, self.apply, step, True)
            await asyncio.sleep(step.duration_ms / 1000)
            await loop.run_in_executor(None, self.apply, step, False)
        await loop.run_in_executor(None, self.heal_all)
        await asyncio.sleep(self.spec.recovery_ms / 1000)
        if self.sys.name in ("sync-pair", "async-pair"):
            await loop.run_in_executor(None, self.signal, "n0", signal.SIGKILL)
            self.trace_fault("crash", ["n0"], "the master is lost for good")
            await asyncio.sleep(1.0)
        stop.set()
        await asyncio.gather(*tasks)
        for p in producers:
            await p.close()

    async def _start_producers(self, history: History, stop: asyncio.Event) -> tuple[list[Any], list[asyncio.Future]]:
        """The producers (the kit's client, or the Java client's runs behind one task), running until ``stop``."""
        assert self.topo is not None
        topo = self.topo
        if self.spec.client == "java":
            java = JavaProducers(self.out / "logs", topo.namesrv_addr, self.spec.producers, history, topo.node_at)
            java.start()
            return [_JavaTask(java)], [asyncio.ensure_future(_collect_java(java, stop))]
        producers = [ClientProducer(p, topo.namesrv_addr, history, topo.node_at, self._client_trace(f"p{p}"))
                     for p in range(self.spec.producers)]
        return producers, [asyncio.ensure_future(p.run(stop)) for p in producers]

    async def final_read(self) -> tuple[str | None, dict[int, list[tuple[int, str]]]]:
        """Every queue through the name server's route: from the master (a pair: the slave, its master lost)."""
        assert self.topo is not None
        pair = self.sys.name in ("sync-pair", "async-pair")
        return await read_back(self.topo.namesrv_addr, not pair, self.alive, self.topo.node_at)

    def stop_all(self) -> dict[str, int | None]:
        codes: dict[str, int | None] = {}
        for n in self.nodes:
            if self.nodes[n].paused:
                self.signal(n, signal.SIGCONT)
            self.signal(n, signal.SIGTERM)
        for n, node in self.nodes.items():
            if node.proc is None:
                continue
            try:
                codes[n] = node.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.proc.kill()
                codes[n] = node.proc.wait()
        for proc in self.relays.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.disk is not None:
            self.disk.end()
        if self.net is not None:
            self.net.destroy()
        return codes

    def merged_trace(self) -> list[dict[str, Any]]:
        """Every node's events and the faults, timed from the start (ms), in one order."""
        t0_ms = int(self.t0 * 1000)
        events = []
        for path in sorted((self.out / "cluster").glob("events-*.jsonl")):
            for line in path.read_text(errors="replace").splitlines():
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by SIGKILL
                e["t"] = e["t"] - t0_ms
                events.append(e)
        events += self.faults_log
        events.sort(key=lambda e: (e["t"], e.get("node") or "", e.get("seq", 0)))
        for i, e in enumerate(events):
            e["seq"] = i
        return events


async def _collect_java(java: JavaProducers, stop: asyncio.Event) -> None:
    """The Java producers' send lines into the history every 0.2 s until ``stop``; then the runs stop."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        await loop.run_in_executor(None, java.collect)
        await asyncio.sleep(0.2)
    await loop.run_in_executor(None, java.stop)


@dataclass
class _JavaTask:
    java: JavaProducers

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.java.close)


def run(spec: RunSpec, out: str | Path) -> dict[str, Any]:
    """One run (see the module docstring); its verdict."""
    r = Run(spec, Path(out))
    r.prepare()
    verdict: dict[str, Any] = {}
    codes: dict[str, int | None] = {}
    try:
        r.start_network()
        r.write_configs()
        r.t0 = time.monotonic()
        r.start_nodes([NAMESRV], ready=False)  # first: a broker registers at its start (and again 10 s later)
        r.start_relays()
        r.wait_ready([NAMESRV])
        r.start_nodes([n for n in r.nodes if n != NAMESRV])
        history = History(r.out / "history.jsonl", r.t0)
        try:
            asyncio.run(r.drive(history))
            master, reads = asyncio.run(r.final_read())
        finally:
            history.close()
    finally:
        codes = r.stop_all()
    (r.out / "reads.json").write_text(json.dumps({"broker": master, "queues": reads}, indent=1) + "\n")
    events = r.merged_trace()
    with open(r.out / "events.jsonl", "w") as f:
        for e in events:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    logs = member_logs(r.out, r.sys)
    network = "netns" if r.net is not None else f"127.0.0.1 ({r.local_reason})"
    verdict = judge(spec, r.steps, network, load_history(r.out / "history.jsonl"), reads, events, logs, r.out,
                    master)
    verdict["exit_codes"] = codes
    meta = {"system": r.sys.label, "scenario": "chaos", "seed": spec.seed, "nodes": [*r.sys.nodes, NAMESRV],
            "profile": spec.variant if r.sys.name == "dledger" else None, "end_ms": r.now_ms(),
            "network": "netns" if r.net is not None else "127.0.0.1"}
    (r.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    (r.out / "verdict.json").write_text(json.dumps(verdict, indent=2) + "\n")
    try:
        from rocketlab.viz.cluster_view.offline import write_viewer  # lazy: loads networkx

        write_viewer(r.out, r.out / "timeline.html")
    except RocketlabError as e:
        verdict["timeline"] = f"not written: {e}"
    return verdict


def judge(spec: RunSpec, steps: list[Step], network: str, history: list[dict[str, Any]],
          reads: dict[int, list[tuple[int, str]]], events: list[dict[str, Any]],
          logs: dict[str, list[tuple[int, int, str]]], out: Path, read_from: str | None) -> dict[str, Any]:
    """The verdict of a run from its files (what ``rocketlab chaos check`` recomputes); ``read_from``: the
    broker the consumer read every queue back from."""
    sys_ = system(spec.system, spec.variant or None)
    verdict = checker.check_queues(history, reads)
    verdict["system"], verdict["variant"], verdict["seed"] = sys_.name, sys_.variant, spec.seed
    verdict["network"] = network
    verdict["faults"] = sorted({s.fault for s in steps})
    if sys_.name == "dledger":
        verdict["election_safety"] = checker.election_safety(events, "LEADER")
        verdict["log_matching"] = checker.log_matching(logs)
    if sys_.name == "controller":
        verdict["master_safety"] = checker.election_safety(
            [e for e in events if e.get("node") in sys_.brokers], "MASTER")
    slave_end = commit_log_end(out, sys_.brokers[1]) if sys_.name in ("sync-pair", "async-pair") else None
    verdict["checks"] = acks.run_checks(sys_.name, sys_.variant, sys_.brokers, events, logs, slave_end)
    verdict["lost_named"] = losses.name_losses(verdict["lost"], history, sys_.name, events, logs,
                                               surviving_bodies(out, sys_, logs), read_from)
    met, expected = checker.expectation(sys_.name, sys_.variant, verdict)
    verdict["expected"], verdict["met"] = expected, met
    verdict["replay"] = spec.replay_command(out)
    return verdict


def check_run_dir(out: Path) -> dict[str, Any]:
    """The verdict of a run directory, computed again from its files."""
    spec = RunSpec.load(out / "spec.json")
    steps = [Step.from_json(s) for s in json.loads((out / "schedule.json").read_text())]
    reads_doc = json.loads((out / "reads.json").read_text())
    reads = {int(q): [tuple(m) for m in msgs] for q, msgs in reads_doc["queues"].items()}
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]
    network = json.loads((out / "meta.json").read_text()).get("network", "?")
    return judge(spec, steps, network, load_history(out / "history.jsonl"), reads, events,
                 member_logs(out, system(spec.system, spec.variant or None)), out, reads_doc["broker"])


def summary_line(v: dict[str, Any]) -> str:
    label = v["system"] + (f"/{v['variant']}" if v["variant"] else "")
    named = sorted({n.split(":")[0] for n in v.get("lost_named", {}).values()})
    retried = len(v.get("retried_duplicates") or [])
    return (_("{label} seed {seed}: {ok} acknowledged, {lost} lost").format(
                label=label, seed=v["seed"], ok=v["ok"], lost=len(v["lost"]))
            + (f" ({', '.join(named)})" if named else "")
            + _(", {n} duplicated").format(n=len(v["duplicates"]))
            + (_(" ({n} more by the client's retries)").format(n=retried) if retried else "")
            + _(", {gaps} gaps, {order} out of order, {unknown} unknown ({kept} kept)").format(
                gaps=len(v["gaps"]), order=len(v["order"]), unknown=v["unknown"], kept=v["unknown_survived"])
            + "".join(_(", {name}: {count} (first: {why})").format(name=name, count=c["count"], why=c["first"]["why"])
                      for name, c in sorted(v.get("checks", {}).items()))
            + " - " + (_("as expected") if v["met"] else _("NOT AS EXPECTED")) + f": {v['expected']}")
