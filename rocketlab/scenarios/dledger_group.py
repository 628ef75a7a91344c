"""Looking at and driving a simulated DLedger group: MIT 6.5840-style short timers, "one settled
leader", client appends with and without waiting, and the every-event checker that records violations.

Used by the DLedger schedules and scenarios, the labs and the graders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.errors import RocketlabError
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.network import NetworkModel

SHORT_TIMERS: dict[str, Any] = {
    "heart_beat_time_interval_ms": 100, "max_heart_beat_leak": 3, "min_vote_interval_ms": 30,
    "max_vote_interval_ms": 100, "vote_round_wait_base_ms": 200, "max_wait_ack_time_ms": 1000,
    "max_push_time_out_ms": 100, "rpc_timeout_ms": 300, "push_commit_interval_ms": 100,
    "follower_push_timeout_ms": 100, "check_abnormal_future_interval_ms": 100,
    "dispatcher_error_backoff_ms": 50, "leak_check_interval_ms": 100, "check_point_interval": 300,
    "check_preferred_leader_interval_ms": 100, "leadership_transfer_wait_timeout": 300,
    "mapped_file_size_for_entry_data": 64 * 1024, "mapped_file_size_for_entry_index": 32 * 1024,
    "fsync_policy": "never",
}
"""DLedger's timers shrunk 20x, in the spirit of MIT 6.5840 (heartbeats at most 10 a second, a new
leader well within 5 s): heartbeat 100 ms, a follower gives up on its leader after 3 x 100 ms, votes
wait 30-100 ms, a vote round 200-300 ms; small files (64 KiB data, 1024-slot index); no fsync (the
simulated crash still keeps only what was written)."""

DEFAULT_LATENCY = "uniform:1:3"
Code = DLedgerResponseCode


# ---------------------------------------------------------------------- looking at a group
def settled_leader(c: Cluster, among: Iterable[str] | None = None) -> str | None:
    """The leader that every other live member of ``among`` (default: all live members) follows at its
    term, or None: "one leader, terms agree" in MIT's words."""
    nodes = c.runtime.nodes  # read directly: run_until asks this after every event
    names = nodes if among is None else list(among)
    name = None
    for n in names:  # first the one live leader (most calls end here: none, or two)
        node = nodes[n]
        if node.alive and node.core.role == "LEADER":
            if name is not None:
                return None
            name = n
    if name is None:
        return None
    term = nodes[name].core.term
    for n in names:
        node = nodes[n]
        if n != name and node.alive:
            core = node.core
            if core.role != "FOLLOWER" or core.leader_id != name or core.term != term:
                return None
    return name


def wait_settled(c: Cluster, among: Iterable[str] | None = None, timeout_ms: int = 10_000) -> str:
    """Run until :func:`settled_leader` names a leader; RocketlabError (with the seed) if it does not."""
    group = list(among) if among is not None else None
    if not c.run_until(lambda c: settled_leader(c, group) is not None, timeout_ms=timeout_ms):
        raise RocketlabError(f"seed {c.seed}: no settled leader among {group or c.live_nodes()} within "
                             f"{timeout_ms} ms at t={c.now_ms}: {states(c)}")
    leader = settled_leader(c, group)
    assert leader is not None
    return leader


def states(c: Cluster) -> dict[str, Any]:
    """Each member's role, term, leader, ledger end and commit index (``down`` while crashed)."""
    out: dict[str, Any] = {}
    for n in c.node_ids:
        core = c.node(n)
        out[n] = "down" if core is None else (f"{core.role} t{core.term} leader={core.leader_id} "
                                              f"end={core.ledger_end_index} commit={core.committed_index}")
    return out


def caught_up(c: Cluster) -> bool:
    """Every member is up and has the same ledger end, end term and committed index (cheap to ask)."""
    marks = {(core.ledger_end_index, core.ledger_end_term, core.committed_index) if core is not None else None
             for core in (c.node(n) for n in c.node_ids)}
    return len(marks) == 1 and None not in marks


def log_of(c: Cluster, node: str) -> list[tuple[int, int, bytes | None]]:
    """A live member's log as ``(index, term, body)`` triples."""
    return [(e.index, e.term, e.body) for e in c.node(node).entries()] if c.node(node).ledger_end_index >= 0 else []


def bodies(c: Cluster, node: str) -> list[bytes]:
    """The client bodies in a member's log, in order (NOOP entries left out)."""
    return [e.body or b"" for e in c.node(node).entries() if not e.is_noop] if c.node(node).ledger_end_index >= 0 else []


def append_nowait(c: Cluster, node: str, body: bytes) -> AppendFuture:
    """A client append at ``node`` without running the simulation (completes in a later event)."""
    futures: list[AppendFuture] = []

    def append(core: Any, now_ms: int) -> Any:
        future, out = core.append(body, now_ms)
        futures.append(future)
        return out

    c.runtime.call(node, append)
    return futures[0]


def commit(c: Cluster, body: bytes, timeout_ms: int = 30_000) -> AppendFuture:
    """Append ``body`` through whoever leads, retrying until it is committed (a client that retries);
    RocketlabError, with the seed, when the group cannot commit it within ``timeout_ms``."""
    end = c.now_ms + timeout_ms
    while c.now_ms < end:
        if c.leader() is not None:
            future = c.put(body)
            if future.code is Code.SUCCESS:
                return future
        c.run_for(100)
    raise RocketlabError(f"seed {c.seed}: the group could not commit a write within {timeout_ms} ms on the "
                         f"{c.model.mode} network: {states(c)}")


def set_network(c: Cluster, mode: str, latency: str | None = DEFAULT_LATENCY) -> None:
    """Switch the simulated network's mode from now on (MIT's ``cfg.setunreliable``)."""
    c.model = NetworkModel.named(mode, latency)
    c.runtime.model = c.model


class DLedgerViolations(DLedgerChecker):
    """Every DLedger invariant after every event, committed entries included whatever the profile;
    a violation is reported once (the same detail seen again is not a new violation)."""

    def __init__(self) -> None:
        super().__init__(Cluster.live_cores, committed_stable=True)
        self.seen: set[str] = set()

    def check(self, cluster: Cluster, event: Mapping[str, Any]) -> str | None:
        found = [f"{v.invariant}: {v.detail}" for v in self.violations_at(cluster, event)]
        new = [d for d in found if d not in self.seen]
        self.seen.update(new)
        return "; ".join(new) or None


def violated(c: Cluster) -> Counter[str]:
    """How many times each invariant was reported as violated (from the ``violation`` events)."""
    counts: Counter[str] = Counter()
    for v in c.violations:
        if v.get("invariant") != DLedgerViolations.name:
            counts[str(v.get("invariant"))] += 1
            continue
        for part in str(v.get("detail", "")).split("; "):
            counts[part.split(":", 1)[0]] += 1
    return counts
