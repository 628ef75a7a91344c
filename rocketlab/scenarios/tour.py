"""The first tour (``rocketlab demo`` and ``labs/00_tour.ipynb``): one workload, three broker groups.

The same producer (``puts`` messages of seeded sizes, a seeded 0-20 ms pause after each) writes to:

1. a **DLedger broker group** (``Cluster.dledger_brokers``, three brokers, DLedger's default timers): it
   elects a leader, which becomes SYNC_MASTER; it takes the writes; its master crashes right after the
   last acknowledgement; the others elect a new master by themselves; the old master comes back as a
   slave and catches up;
2. an **ASYNC_MASTER** and its slave, whose master crashes the same way;
3. a **SYNC_MASTER** and its slave, likewise.

For each, the tour counts the acknowledged (PUT_OK) messages that the survivors do not have - the
"lost acknowledged messages" - and, for DLedger, how long the group had no master. Each run is saved as a
run directory (``meta.json``, ``events.jsonl``, the stores under ``nodes/``). Nothing here draws: the HTML
report of ``rocketlab demo`` is written a layer up (:mod:`rocketlab.labs_support.tour`). Everything is
seeded: a seed gives the same numbers everywhere.

Java analogues: none - this is the kit's own scripted demo, built on the models of DLedgerCommitLog,
DLedgerRoleChangeHandler, HAService and friends.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.core import derive_rng
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.sim import Cluster
from rocketlab.trace.rundir import fresh_dir

LATENCY = "uniform:1:3"  # one-way network delay of every tour cluster, ms
TOPIC = "TopicTest"


def has_master(cluster: Cluster) -> bool:
    """``run_until`` predicate: some broker is MASTER."""
    return cluster.leader() is not None


def steady_puts(cluster: Cluster, count: int, *, seed: int = 1, gap_ms: tuple[int, int] = (0, 20),
                size: tuple[int, int] = (100, 1000)) -> list[Any]:
    """One producer: ``count`` puts through the current master, each answered before the next, a
    seeded pause after each (none after the last). Returns the put handles (``.status`` ...; ``.body`` is
    the message body)."""
    rng = derive_rng(seed, "tour", "producer")
    handles = []
    for i in range(count):
        body = f"m{i:04d} ".encode().ljust(rng.randint(*size), b".")
        handle = cluster.put(body, topic=TOPIC)
        handle.body = body
        handles.append(handle)
        if i < count - 1:
            cluster.run_for(rng.randint(*gap_ms))
    return handles


def readable_bodies(cluster: Cluster) -> list[bytes]:
    """Every message of the tour's queue, read from the master as a consumer would."""
    bodies: list[bytes] = []
    while (got := cluster.pull(TOPIC, 0, len(bodies), 32)).status == "FOUND":
        bodies += [m["body"] for m in got.messages]
    return bodies


def median_latency_ms(handles: Sequence[Any]) -> float:
    """The median latency of the acknowledged puts (0 if none)."""
    ok = [h.latency_ms for h in handles if h.status == "PUT_OK"]
    return float(statistics.median(ok)) if ok else 0.0


def first_event_after(events: Sequence[dict[str, Any]], t: int, kind: str, **fields: Any) -> dict[str, Any] | None:
    for e in events:
        if e["t"] >= t and e["kind"] == kind and all(e.get(k) == v for k, v in fields.items()):
            return e
    return None


# ---------------------------------------------------------------------- 1. the DLedger group
@dataclass
class DLedgerStory:
    """What happened to the DLedger broker group (see :func:`dledger_failover`)."""

    cluster: Cluster
    run_dir: Path
    seed: int
    first_master: str
    first_master_ms: int
    first_term: int
    handles: list[Any]
    crash_ms: int
    new_master: str | None = None
    new_leader_ms: int | None = None
    new_master_ms: int | None = None
    new_term: int | None = None
    after: list[Any] = field(default_factory=list)
    lost: int = 0
    rejoined_as: str | None = None

    @property
    def acked(self) -> int:
        return sum(h.status == "PUT_OK" for h in self.handles + self.after)

    @property
    def failover_ms(self) -> int | None:
        return None if self.new_master_ms is None else self.new_master_ms - self.crash_ms

    @property
    def statuses(self) -> Counter:
        return Counter(h.status for h in self.handles + self.after)

    def lines(self) -> list[str]:
        fo = self.failover_ms
        return [
            _("{master} became LEADER of term {term} and SYNC_MASTER at {s} s").format(
                master=self.first_master, term=self.first_term, s=f"{self.first_master_ms / 1000:.1f}"),
            _("{n} puts {statuses}, median latency {median} ms (a majority must have each one); master {master} "
              "crashed at {s} s, right after the last acknowledgement").format(
                n=len(self.handles), statuses=dict(Counter(h.status for h in self.handles)),
                median=f"{median_latency_ms(self.handles):.0f}", master=self.first_master, s=f"{self.crash_ms / 1000:.1f}"),
            _("{master} became SYNC_MASTER (term {term}) {s} s later, by itself; {n} more puts {statuses}").format(
                master=self.new_master, term=self.new_term, s=f"{fo / 1000:.1f}", n=len(self.after),
                statuses=dict(Counter(h.status for h in self.after))) if fo is not None else _("no new master"),
            _("lost {lost} of {acked} acknowledged messages; {master} came back as {role}").format(
                lost=self.lost, acked=self.acked, master=self.first_master, role=self.rejoined_as),
        ]


def dledger_failover(run_dir: str | Path, *, seed: int = 1, puts: int = 60, puts_after: int = 20,
                     dledger: dict[str, Any] | None = None, latency: str = LATENCY, save: bool = True,
                     broker: dict[str, Any] | None = None, parquet: bool = False) -> DLedgerStory:
    """The DLedger part of the tour: elect, ``puts`` writes, crash the master right after the last
    acknowledgement, run until a new master, ``puts_after`` more writes, restart the old master and let it
    catch up. ``dledger`` overrides DLedgerConfig fields (Java's timers by default), ``broker`` the brokers'."""
    run_dir = fresh_dir(run_dir)
    c = Cluster.dledger_brokers(3, seed=seed, data_dir=run_dir, dledger=dledger, latency=latency, broker=broker,
                                scenario="dledger-failover")
    if not c.run_until(has_master, timeout_ms=60_000):
        raise RocketlabError(f"seed {seed}: no master was elected in 60 s")
    first = c.leader()
    assert first is not None
    story = DLedgerStory(c, run_dir, seed, first, c.now_ms, c.node(first).term, [], 0)
    story.handles = steady_puts(c, puts, seed=seed)
    acked = [h for h in story.handles if h.status == "PUT_OK"]
    story.crash_ms = c.now_ms
    c.crash(first)
    if c.run_until(lambda c: c.leader() not in (None, first), timeout_ms=60_000):
        new = c.leader()
        story.new_master, story.new_term = new, c.node(new).term
        story.new_master_ms = c.now_ms
        leader = first_event_after(c.events, story.crash_ms, "role", role="LEADER")
        story.new_leader_ms = leader["t"] if leader else None
        story.after = steady_puts(c, puts_after, seed=seed + 1)
        acked += [h for h in story.after if h.status == "PUT_OK"]
        readable = set(readable_bodies(c))
        story.lost = sum(h.body not in readable for h in acked)
    c.restart(first)
    c.run_until(lambda c: _caught_up(c, first), timeout_ms=30_000)
    story.rejoined_as = f"{c.node(first).broker_role} (brokerId {c.node(first).broker_id})"
    if save:
        c.save(run_dir, parquet=parquet)
    return story


def _caught_up(c: Cluster, node: str) -> bool:
    master = c.leader()
    core = c.node(node)
    return (master is not None and core is not None and core.master_id == master
            and core.max_offset == c.node(master).max_offset)


# ---------------------------------------------------------------------- 2. and 3. master-slave
@dataclass
class MasterSlaveStory:
    """A master-slave pair under the same workload, its master crashed (see :func:`master_slave_crash`)."""

    cluster: Cluster
    run_dir: Path
    role: str
    seed: int
    handles: list[Any]
    master_end: int
    slave_end: int
    lost: int

    @property
    def acked(self) -> int:
        return sum(h.status == "PUT_OK" for h in self.handles)

    @property
    def statuses(self) -> Counter:
        return Counter(h.status for h in self.handles)

    def lines(self) -> list[str]:
        return [_("{role}: {n} puts {statuses}, median latency {median} ms; master crashed; the slave has "
                  "{slave_end} of the master's {master_end} bytes: lost {lost} of {acked} acknowledged messages; "
                  "no new master (the slave stays SLAVE)").format(
            role=self.role, n=len(self.handles), statuses=dict(self.statuses),
            median=f"{median_latency_ms(self.handles):.0f}", slave_end=self.slave_end, master_end=self.master_end,
            lost=self.lost, acked=self.acked)]


def master_slave_crash(run_dir: str | Path, role: str, *, seed: int = 1, puts: int = 60,
                       latency: str = LATENCY, save: bool = True, broker: dict[str, Any] | None = None,
                       parquet: bool = False) -> MasterSlaveStory:
    """Classic HA: ``Cluster.master_slave(role)`` takes the tour's workload, then its master crashes
    right after the last acknowledgement; the slave gets 1 s to take in what is still on the wire."""
    run_dir = fresh_dir(run_dir)
    c = Cluster.master_slave(role=role, slaves=1, seed=seed, latency=latency, data_dir=run_dir, broker=broker,
                             scenario=f"{role.split('_')[0].lower()}-master-crash")
    # the load starts once the slave has sent its first report (a 4.9.5 slave does ~5 s after connecting)
    c.run_until(lambda c: c.node("n0").ha_service.reported_connection_count == 1, timeout_ms=10_000)
    handles = steady_puts(c, puts, seed=seed)
    master_end = c.node("n0").max_offset
    c.crash("n0")
    c.run_for(1_000)
    slave_end = c.node("n1").max_offset
    lost = sum(h.wrote_offset + h.wrote_bytes > slave_end for h in handles if h.status == "PUT_OK")
    if save:
        c.save(run_dir, parquet=parquet)
    return MasterSlaveStory(c, run_dir, role, seed, handles, master_end, slave_end, lost)


# ---------------------------------------------------------------------- the whole tour
@dataclass
class Tour:
    """The three stories of :func:`run_tour`, under ``out``, and the seconds they took."""

    out: Path
    dledger: DLedgerStory
    async_master: MasterSlaveStory
    sync_master: MasterSlaveStory
    seconds: float

    @property
    def stories(self) -> tuple[DLedgerStory, MasterSlaveStory, MasterSlaveStory]:
        return self.dledger, self.async_master, self.sync_master

    def lines(self) -> list[str]:
        out = ["1. DLedger broker group (3 brokers, DLedger's default timers):"]
        out += [f"   {line}" for line in self.dledger.lines()]
        out += ["2. master-slave, " + self.async_master.lines()[0], "3. master-slave, " + self.sync_master.lines()[0]]
        return out

    def close(self) -> None:
        for story in self.stories:
            story.cluster.close()


def run_tour(out: str | Path, *, seed: int = 1, puts: int = 60, broker: dict[str, Any] | None = None,
             parquet: bool = False) -> Tour:
    """The three runs under ``out`` (``dledger-failover``, ``async-master-crash``, ``sync-master-crash``).
    ``broker`` overrides the brokers' config fields (e.g. small ``store_options`` for the sample data);
    ``parquet`` writes the traces as Parquet."""
    start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dledger = dledger_failover(out / "dledger-failover", seed=seed, puts=puts, puts_after=max(puts // 3, 1),
                               broker=broker, parquet=parquet)
    async_master = master_slave_crash(out / "async-master-crash", "ASYNC_MASTER", seed=seed, puts=puts, broker=broker,
                                      parquet=parquet)
    sync_master = master_slave_crash(out / "sync-master-crash", "SYNC_MASTER", seed=seed, puts=puts, broker=broker,
                                     parquet=parquet)
    return Tour(out, dledger, async_master, sync_master, time.perf_counter() - start)


__all__ = [
    "DLedgerStory", "MasterSlaveStory", "Tour", "dledger_failover", "first_event_after", "has_master",
    "master_slave_crash", "median_latency_ms", "readable_bodies", "run_tour", "steady_puts",
]
