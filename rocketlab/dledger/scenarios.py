"""DLedger in the simulator: MIT 6.5840-style timers, the known behaviours of ``rocketmq-4.9.5`` as
readable schedules, and the ``rocketlab sim`` scenarios built on them.

Scenarios (``rocketlab sim NAME [--profile safe|rocketmq-4.9.5] [--nodes N] [--seed S] [--network M]``):

* ``dledger-election`` - DLedger's default timers: elect, write, crash the leader, fail over;
* ``dledger-figure8``  - Raft's Figure 8 (:data:`FIGURE_8`); under ``rocketmq-4.9.5`` an entry committed
  by counting replicas is overwritten later;
* ``dledger-247``      - issue #247 / #325 (:data:`ISSUE_247`): a follower with a bigger term never
  rejoins under ``rocketmq-4.9.5``;
* ``dledger-churn``    - random crashes, restarts and partitions under client load.

Every scenario checks all the DLedger invariants after every event - *committed entries never change*
included, whatever the profile - and records each violation as a ``violation`` event instead of
stopping, so a run under ``rocketmq-4.9.5`` that shows a known behaviour (Figure 8) is saved whole and
``rocketlab sim`` exits 1: the violation is the lesson.

Schedules are text, one step a line, ``AT_MS ACTION ARGS`` (``#`` starts a comment): the fault actions
of :mod:`rocketlab.sim.faults` (``crash``, ``restart``, ``partition A B | C``, ``heal``, ``pause``, ...),
plus ``append NODE BODY`` (a client append at that member, not waited for). Names such as ``S1`` or
``F`` stand for node ids (or groups of them) bound when the schedule starts; in a partition ``others``
means every node the line does not name. Times are ms after the schedule starts.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.dledger.config import PROFILES
from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.dledger.invariants import DLedgerInvariants
from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.faults import ACTIONS as FAULT_ACTIONS
from rocketlab.sim.faults import parse_fault
from rocketlab.sim.network import NetworkModel
from rocketlab.sim.scenarios import Scenario, ScenarioArgs, ScenarioResult, register, summarize

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
    group = [n for n in (among if among is not None else c.node_ids) if c.alive(n)]
    leaders = [n for n in group if c.node(n).role == "LEADER"]
    if len(leaders) != 1:
        return None
    lead = c.node(leaders[0])
    for n in group:
        core = c.node(n)
        if n != leaders[0] and (core.role != "FOLLOWER" or core.leader_id != leaders[0] or core.term != lead.term):
            return None
    return leaders[0]


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


class DLedgerViolations:
    """Every DLedger invariant after every event, committed entries included whatever the profile;
    a violation is reported once (the same detail seen again is not a new violation)."""

    name = "dledger"
    CORE_KINDS = frozenset({"append", "truncate", "commit", "role"})

    def __init__(self) -> None:
        self.invariants = DLedgerInvariants(committed_stable=True)
        self.seen: set[str] = set()

    def check(self, cluster: Cluster, event: Mapping[str, Any]) -> str | None:
        self.invariants.observe([event])
        if event.get("kind") not in self.CORE_KINDS and not self.invariants.pending:
            return None
        found = self.invariants.check({n: cluster.node(n) for n in cluster.live_nodes()})
        new = [f"{v.invariant}: {v.detail}" for v in found if f"{v.invariant}: {v.detail}" not in self.seen]
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


# ---------------------------------------------------------------------- schedules as text
SCRIPT_ACTIONS = ("append",)


@dataclass(frozen=True)
class Step:
    """One schedule line: at ``at_ms`` (after the schedule starts) do ``action`` with ``words``."""

    at_ms: int
    action: str
    words: tuple[str, ...]
    line: str


def parse_script(text: str) -> list[Step]:
    """Parse a schedule (see the module docstring); ConfigError names the bad line."""
    steps = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"schedule line {lineno} ({raw.strip()!r})"
        if len(words) < 2 or not words[0].isdigit():
            raise ConfigError(f"{where}: expected 'AT_MS ACTION ARGS'")
        action = words[1]
        if action not in FAULT_ACTIONS + SCRIPT_ACTIONS:
            raise ConfigError(f"{where}: unknown action {action!r} (one of {', '.join(FAULT_ACTIONS + SCRIPT_ACTIONS)})")
        if action == "append" and len(words) < 4:
            raise ConfigError(f"{where}: append takes NODE BODY")
        steps.append(Step(int(words[0]), action, tuple(words[2:]), raw.split("#", 1)[0].strip()))
    return sorted(steps, key=lambda s: s.at_ms)


@dataclass
class ScriptRun:
    """Plays a schedule on a cluster: ``names`` binds the schedule's names to a node id or a list of them
    (a name bound to an empty list drops out of the line, and a line left without nodes is skipped);
    ``start_ms`` is its time 0. ``futures`` holds each ``append``'s future by body (None when the node
    was down); ``played`` the steps as carried out, with node ids, as ``(t, text)``."""

    cluster: Cluster
    names: Mapping[str, str | list[str]]
    start_ms: int = 0
    futures: dict[str, AppendFuture | None] = field(default_factory=dict)
    played: list[tuple[int, str]] = field(default_factory=list)

    def schedule(self, steps: Sequence[Step]) -> None:
        for step in steps:
            self.cluster.scheduler.at(max(self.start_ms + step.at_ms, self.cluster.now_ms), self.play, step)

    def nodes(self, word: str) -> list[str]:
        bound = self.names.get(word, word)
        found = [bound] if isinstance(bound, str) else list(bound)
        for node in found:
            self.cluster.runtime.get(node)
        return found

    def play(self, step: Step) -> None:
        c = self.cluster
        if step.action == "append":
            node, body = self.nodes(step.words[0])[0], " ".join(step.words[1:])
            ok = c.alive(node) and not c.runtime.get(node).paused
            self.futures[body] = append_nowait(c, node, body.encode()) if ok else None
            self.played.append((c.now_ms, f"append {node} {body}" + ("" if ok else " (node down: skipped)")))
            return
        targets = self._targets(step)
        if targets is None:
            return
        text = " ".join([str(step.at_ms), step.action, *targets])
        c.apply(parse_fault(text))
        self.played.append((c.now_ms, text.split(" ", 1)[1]))

    def _targets(self, step: Step) -> list[str] | None:
        if step.action == "heal":
            return []
        if step.action == "drop":
            return [w if w in ("*", "->") else self.nodes(w)[0] for w in step.words]
        if step.action != "partition":
            found = [n for w in step.words for n in self.nodes(w)]
            return found or None
        groups = [g.split() for g in " ".join(step.words).split("|")]
        named = {n for g in groups for w in g if w != "others" for n in self.nodes(w)}
        others = [n for n in self.cluster.node_ids if n not in named]
        resolved = [others if g == ["others"] else [n for w in g for n in self.nodes(w)] for g in groups]
        resolved = [g for g in resolved if g]
        return [" | ".join(" ".join(g) for g in resolved)] if len(resolved) > 1 else None


def play(c: Cluster, text: str, names: Mapping[str, str | list[str]], start_ms: int | None = None) -> ScriptRun:
    """Schedule every step of ``text`` on ``c`` (time 0 = ``start_ms``, default now)."""
    run = ScriptRun(c, names, c.now_ms if start_ms is None else start_ms)
    run.schedule(parse_script(text))
    return run


# ---------------------------------------------------------------------- Figure 8
FIGURE_8 = """\
# Raft's Figure 8 (Ongaro & Ousterhout, section 5.4.2) on five DLedger members, SHORT_TIMERS.
# S1 is the first leader; S2..S5 are the other members in id order; entry "first" is committed on all.
# The story as rocketmq-4.9.5 (DLedger 0.3.1.2) plays it:
# (a) S1 leads. Entry W reaches S2 and S5 and commits; then entry X reaches S2 only; S1 crashes.
   0 partition S1 S2 S5 | S3 S4
   0 append S1 W
 100 partition S1 S2 | S3 S4 S5
 100 append S1 X
 150 crash S1
# (b) S3, S4, S5 elect S5 (only S5 holds W, so S3 and S4 cannot win) in a new term. S5 copies W to
#     S3 and S4, takes entry Y at X's index, and is cut off before sending it; then S5 crashes.
1500 partition S5 | S2 S3 S4
1500 append S5 Y
1550 crash S5
# (c) S1 restarts and, with S3 and S4, is elected in a newer term (its log is the longest); it copies
#     X to S3 and S4. X, of an older term, is now on a majority: 0.3.1.2 commits it by counting
#     replicas (DLedger issue #4), and S1 crashes.
1600 partition S1 S3 S4 | S2 S5
1600 restart S1
4000 crash S1
# (d) S5 restarts; S2 and S3 vote for it, because its last entry Y has a newer term than X, and it
#     overwrites X with Y: a committed entry is lost.
4000 partition S2 S3 S5 | S1 S4
4000 restart S5
7000 heal
7000 restart S1
# safe never commits by counting: a new leader first appends a NOOP of its own term and commits through
# it. Either S5's NOOP in (b) makes S3's and S4's logs newer than S1's, so S1 cannot win in (c) and X is
# dropped uncommitted; or S1's NOOP commits X in (c) and makes S5's log the older one, so S5 cannot win
# in (d). Nothing committed is lost.
"""


@dataclass
class Figure8Report:
    """What the Figure-8 schedule did: the names, X's index, whether X was committed and then lost."""

    names: dict[str, str]
    x_index: int | None
    x_committed: bool
    x_lost: bool
    violations: dict[str, int]
    played: list[tuple[int, str]]

    def as_dict(self) -> dict[str, Any]:
        return {"names": self.names, "x_index": self.x_index, "x_committed": self.x_committed,
                "committed_entry_lost": self.x_lost, "violated": self.violations}


def figure8_cluster(seed: int = 1, profile: str = "safe", data_dir: str | Path | None = None,
                    network: str = "reliable", latency: str = DEFAULT_LATENCY) -> Cluster:
    """Five members with SHORT_TIMERS and the every-event checker that records (never raises)."""
    return Cluster.dledger(nodes=5, seed=seed, profile=profile, data_dir=data_dir, config=SHORT_TIMERS,
                           checkers=[DLedgerViolations()], raise_on_violation=False, network=network,
                           latency=latency, scenario="dledger-figure8")


def run_figure8(c: Cluster, schedule: str = FIGURE_8) -> Figure8Report:
    """Elect S1, commit ``first`` everywhere, then play ``schedule`` to its end plus 3 s of quiet."""
    first = commit(c, b"first")
    s1 = wait_settled(c)
    c.run_until(lambda c: all(c.node(n).committed_index >= first.response.index for n in c.node_ids), 2000)
    names = {"S1": s1, **{f"S{i}": n for i, n in enumerate((n for n in c.node_ids if n != s1), 2)}}
    run = play(c, schedule, names)
    c.run_for(max(s.at_ms for s in parse_script(schedule)) + 3000)
    committed = first_committed(c)
    x_index = next((i for i, key in sorted(committed.items()) if key[3] == b"X"), None)
    if x_index is None:
        x_index = next((e.index for n in c.live_nodes() for e in _entries(c, n) if e.body == b"X"), None)
    x_committed = x_index is not None and committed.get(x_index, (0, 0, 0, None))[3] == b"X"
    lost = x_committed and any(b"X" not in bodies(c, n) for n in c.live_nodes())
    return Figure8Report(names, x_index, x_committed, lost, dict(violated(c)), run.played)


def first_committed(c: Cluster) -> dict[int, tuple[int, int, int, bytes | None]]:
    """Index -> (term, pos, size, body) of each entry as it was first seen committed, from the cluster's
    DLedger checker (:class:`DLedgerViolations` or :class:`~rocketlab.dledger.invariants.DLedgerChecker`
    with ``committed_stable``)."""
    checker = next((k for k in c.checkers if hasattr(getattr(k, "invariants", None), "committed")), None)
    if checker is None:
        raise RocketlabError("this cluster has no DLedger checker to ask what was committed")
    return dict(checker.invariants.committed.entries)


def _entries(c: Cluster, node: str) -> list[Any]:
    core = c.node(node)
    return core.entries() if core.ledger_end_index >= 0 else []


# ---------------------------------------------------------------------- issue #247
ISSUE_247 = """\
# DLedger issue #247 (RocketMQ #325, "Unable to auto recover after follower isolation"), SHORT_TIMERS
# with vote rounds that wait 500-600 ms for their answers (ISSUE_247_TIMERS).
# L leads; F is a follower that voted for L; V are the other followers L needs for a quorum (none in a
# 3-member group); O the rest. No test hook: ordinary faults leave F holding a stale vote result.
# (0) A rolling restart: the followers come back with fresh electors. O then stalls (a long GC pause)
#     and answers nothing until it resumes.
   0 crash F V O
   0 restart F V O
   0 pause O
# (1) Everyone is cut off: L loses its quorum and steps down, in the same term; F and V become
#     candidates, and alone none of them can start a new term.
 500 partition L | F | V | O
# (2) The cut heals and F restarts; a restarted member asks for votes at once. L and V answer
#     "already voted", O does not answer, so F's round waits for it (300 ms). Meanwhile L is
#     re-elected in the same term (F and V still vote for it) and F becomes its follower. Then F's
#     round ends: "already voted" from a quorum means WAIT_TO_VOTE_NEXT, and DLedger stores that
#     result although F is a follower by now.
1500 heal
1500 crash F
1500 restart F
2500 resume O
# (3) F is cut off while the log grows. When it gives up on its leader, F takes a new term at once -
#     the stored result says so - without asking anyone: its term is now bigger than the leader's and
#     its log is stale.
3000 partition F | others
3100 append L a
3200 append L b
3300 append L c
4500 heal
# (4) F's votes are refused (its log is stale) and F answers L's heartbeats EXPIRED_TERM.
#     rocketmq-4.9.5 (DLedger 0.3.1.2): L still hears SUCCESS from a quorum and never steps down, so F
#     stays a CANDIDATE at its bigger term for good and never gets the new entries (#325 shows such a
#     follower at term 2 beside its leader at term 1).
#     safe (the 0.3.2 fix, PR #248): L steps down on the bigger term, a leader is elected above it, and
#     F follows it and catches up.
"""


@dataclass
class Issue247Report:
    """Where F (the follower of the schedule) and the group ended: F's role, term and ledger end beside
    the leader's, and how many heartbeats F answered EXPIRED_TERM."""

    names: dict[str, str | list[str]]
    follower_role: str
    follower_term: int
    follower_end: int
    leader: str | None
    leader_term: int | None
    leader_end: int | None
    expired_term_answers: int

    @property
    def rejoined(self) -> bool:
        return self.follower_role == "FOLLOWER" and self.leader is not None and self.follower_end == self.leader_end

    def as_dict(self) -> dict[str, Any]:
        return {"names": self.names, "follower": f"{self.follower_role} t{self.follower_term} end={self.follower_end}",
                "leader": self.leader, "leader_term": self.leader_term, "leader_end": self.leader_end,
                "expired_term_answers": self.expired_term_answers, "follower_rejoined": self.rejoined}


ISSUE_247_TIMERS = {**SHORT_TIMERS, "vote_round_wait_base_ms": 500}
"""SHORT_TIMERS, but a vote round may wait 500 + up to 100 ms for its answers (Java: 2000 + up to 1000 ms
beside 300-1000 ms vote delays): in step (2) F's round then waits the whole 300 ms RPC timeout for O,
and L's next round surely starts and wins inside it."""


def issue247_cluster(seed: int = 1, profile: str = "safe", nodes: int = 3, data_dir: str | Path | None = None,
                     network: str = "reliable", latency: str = DEFAULT_LATENCY) -> Cluster:
    return Cluster.dledger(nodes=nodes, seed=seed, profile=profile, data_dir=data_dir, config=ISSUE_247_TIMERS,
                           checkers=[DLedgerViolations()], raise_on_violation=False, network=network,
                           latency=latency, scenario="dledger-247")


def run_issue247(c: Cluster, schedule: str = ISSUE_247, quiet_ms: int = 5000) -> Issue247Report:
    """Elect L, play ``schedule``, then give the group ``quiet_ms`` of calm to recover (or not)."""
    lead = wait_settled(c)
    voters = [n for n in c.node_ids if n != lead and c.node(n).voted_for == lead]
    quorum = len(c.node_ids) // 2 + 1
    f, others = voters[0], voters[1:quorum - 1]
    names: dict[str, str | list[str]] = {"L": lead, "F": f, "V": others,
                                         "O": [n for n in c.node_ids if n not in (lead, f, *others)]}
    play(c, schedule, names)
    c.run_for(max(s.at_ms for s in parse_script(schedule)) + quiet_ms)
    core = c.node(f)
    leader = settled_leader(c, [n for n in c.live_nodes() if n != f]) or c.leader()
    answers = sum(1 for e in c.events if e["kind"] == "heartbeat" and e["to"] == f and e["code"] == "EXPIRED_TERM")
    lcore = c.node(leader) if leader is not None else None
    return Issue247Report(names, core.role, core.term, core.ledger_end_index, leader,
                          lcore.term if lcore else None, lcore.ledger_end_index if lcore else None, answers)


# ---------------------------------------------------------------------- election with DLedger's defaults
def run_election(c: Cluster, writes: int = 3, timeout_ms: int = 60_000) -> dict[str, Any]:
    """Elect, commit ``writes`` entries, crash the leader at a seed-chosen moment inside a heartbeat
    interval (as Figure 16 of the Raft paper does), and time the failover.

    ``failover_ms``: crash -> a new member is LEADER; ``settled_ms``: crash -> every live member follows
    it; both in simulated ms. With DLedger's defaults expect about 6-10 s (3 missed 2 s heartbeats, a
    failed same-term round, a 300-1000 ms vote delay, the vote); RocketMQ's docs say "about 10 s".
    """
    rng = random.Random(f"{c.seed}/election")
    first = wait_settled(c, timeout_ms=timeout_ms)
    elected_ms = c.now_ms
    acked = [c.put(b"before crash %d" % i) for i in range(writes)]
    c.run_for(rng.randrange(c.node(first).config.heart_beat_time_interval_ms))
    old_term = c.node(first).term
    crash_ms = c.now_ms
    c.crash(first)
    new = wait_settled(c, timeout_ms=timeout_ms)
    leader_events = [e for e in c.events if e["kind"] == "role" and e["role"] == "LEADER" and e["t"] >= crash_ms]
    after = c.put(b"after failover")
    on_new = set(bodies(c, new))
    acked_bodies = [b"before crash %d" % i for i, f in enumerate(acked) if f.code is Code.SUCCESS]
    return {"first_leader": first, "first_term": old_term, "elected_ms": elected_ms,
            "acked_before": len(acked_bodies), "crash_ms": crash_ms, "new_leader": new,
            "new_term": c.node(new).term, "failover_ms": leader_events[0]["t"] - crash_ms,
            "settled_ms": c.now_ms - crash_ms, "write_after": after.code.name if after.code else None,
            "acked_on_new_leader": sum(b in on_new for b in acked_bodies)}


# ---------------------------------------------------------------------- churn
@dataclass
class ChurnReport:
    acked: list[bytes]
    missing: list[bytes]
    converged: bool
    faults: int
    final_leader: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"acked": len(self.acked), "acked_missing": len(self.missing), "converged": self.converged,
                "churn_faults": self.faults, "final_leader": self.final_leader}


class ChurnClient:
    """One of MIT churn's clients: append a unique value to the current leader, wait for the answer
    (giving up after ``give_up_ms`` or when that leader crashes), repeat; remember every SUCCESS."""

    def __init__(self, c: Cluster, name: str, acked: list[bytes], give_up_ms: int = 3000,
                 poll_ms: int = 10) -> None:
        self.c, self.name, self.acked = c, name, acked
        self.give_up_ms, self.poll_ms = give_up_ms, poll_ms
        self.n = 0
        self.current: tuple[AppendFuture, bytes, str, int, int] | None = None
        self.stopped = False

    def start(self) -> None:
        self.c.scheduler.after(0, self.step)

    def step(self) -> None:
        c = self.c
        if self.current is not None:
            future, body, node, incarnation, sent_ms = self.current
            if future.done:
                if future.code is Code.SUCCESS:
                    self.acked.append(body)
                self.current = None
            elif c.runtime.get(node).incarnation != incarnation or not c.alive(node) \
                    or c.now_ms - sent_ms > self.give_up_ms:
                self.current = None  # the answer will never come: the value may or may not be in the log
        if self.current is None and not self.stopped:
            leader = c.leader()
            if leader is not None and not c.runtime.get(leader).paused:
                self.n += 1
                body = f"{self.name}-{self.n}".encode()
                future = append_nowait(c, leader, body)
                self.current = (future, body, leader, c.runtime.get(leader).incarnation, c.now_ms)
        if not self.stopped or self.current is not None:
            c.scheduler.after(self.poll_ms, self.step)


def run_churn(c: Cluster, rounds: int = 20, interval_ms: int = 700, clients: int = 3,
              settle_ms: int = 20_000) -> ChurnReport:
    """MIT's TestReliableChurn / TestUnreliableChurn on DLedger: ``clients`` clients write while, every
    ``interval_ms`` for ``rounds`` rounds, a random member is cut off (20 %), a cut-off or crashed one
    comes back (50 %), a random member crashes (20 %). Then everything heals and restarts, one more write
    commits, and every value a client saw acknowledged must be in every member's log - in the leader's,
    if the group does not converge (rocketmq-4.9.5 may leave a member out, issue #247, or stop
    committing, issue #251)."""
    rng = random.Random(f"{c.seed}/churn")
    acked: list[bytes] = []
    workers = [ChurnClient(c, f"c{i}", acked) for i in range(clients)]
    for w in workers:
        w.start()
    cut: list[str] = []
    faults = 0
    for _ in range(rounds):
        if rng.random() < 0.2:
            victim = rng.choice(c.node_ids)
            if victim not in cut:
                cut.append(victim)
                c.partition(*([n] for n in cut))
                faults += 1
        if rng.random() < 0.5:
            back = rng.choice(c.node_ids)
            if not c.alive(back):
                c.restart(back)
                faults += 1
            if back in cut:
                cut.remove(back)
                if cut:
                    c.partition(*([n] for n in cut))
                else:
                    c.heal()
                faults += 1
        if rng.random() < 0.2:
            victim = rng.choice(c.node_ids)
            if c.alive(victim):
                c.crash(victim)
                faults += 1
        c.run_for(interval_ms)
    for w in workers:
        w.stopped = True
    c.heal()
    down = [n for n in c.node_ids if not c.alive(n)]
    if down:
        c.restart(*down)
    try:
        commit(c, b"final", timeout_ms=settle_ms)
        converged = c.run_until(caught_up, timeout_ms=settle_ms) and len({tuple(log_of(c, n)) for n in c.node_ids}) == 1
    except RocketlabError:  # no write commits any more (rocketmq-4.9.5 can livelock: issue #251)
        converged = False
    leader = c.leader()
    judged = c.node_ids if converged else [leader] if leader is not None else []
    logs = {n: set(bodies(c, n)) for n in judged}
    missing = [b for b in acked if any(b not in logs[n] for n in judged)]
    return ChurnReport(acked, missing, converged, faults, leader)


# ---------------------------------------------------------------------- rocketlab sim
def _profile(args: ScenarioArgs) -> str:
    profile = args.profile or "safe"
    if profile not in PROFILES:
        raise ConfigError(f"DLedger profiles are {' or '.join(PROFILES)}, not {profile!r}")
    return profile


def _nodes(args: ScenarioArgs, default: int, minimum: int = 1, exactly: int | None = None) -> int:
    nodes = args.nodes or default
    if exactly is not None and nodes != exactly:
        raise ConfigError(f"this scenario is written for {exactly} members, not {nodes}")
    if nodes < minimum:
        raise ConfigError(f"this scenario needs at least {minimum} members, got {nodes}")
    return nodes


def _short_timer_network(args: ScenarioArgs) -> str:
    """The network for a scenario on SHORT_TIMERS: labrpc's long reordering holds replies 0.2-2.2 s,
    longer than every one of those timers (a 300 ms RPC timeout), so the group could not even elect."""
    network = args.network or "reliable"
    if network == "reordering":
        raise ConfigError("this scenario runs on short timers (300 ms RPC timeout); the reordering network "
                          "holds replies up to 2.2 s: use reliable, unreliable or long-delays")
    return network


def dledger_table(c: Cluster) -> list[dict[str, Any]]:
    """One row per member: alive, role, term, leader, ledger end index/term, committed index."""
    rows = []
    for n in c.node_ids:
        core = c.node(n)
        row: dict[str, Any] = {"node": n, "alive": c.alive(n)}
        if core is not None:
            row.update({"role": core.role, "term": core.term, "leader": core.leader_id,
                        "ledger_end_index": core.ledger_end_index, "ledger_end_term": core.ledger_end_term,
                        "committed_index": core.committed_index})
        rows.append(row)
    return rows


def _result(c: Cluster, extra: Mapping[str, Any]) -> ScenarioResult:
    summary = {**summarize(c), "profile": c.meta.get("profile"), **extra}
    if c.violations:
        summary["violated"] = dict(violated(c))
    return ScenarioResult(c, summary, dledger_table(c))


def scenario_election(args: ScenarioArgs) -> ScenarioResult:
    c = Cluster.dledger(nodes=_nodes(args, 3, 3), seed=args.seed, profile=_profile(args),
                        data_dir=args.data_dir, checkers=[DLedgerViolations()], raise_on_violation=False,
                        network=args.network or "reliable", latency=args.latency or DEFAULT_LATENCY,
                        scenario="dledger-election")
    report = run_election(c)
    if args.duration_ms:
        c.run_for(args.duration_ms)
    return _result(c, report)


def scenario_figure8(args: ScenarioArgs) -> ScenarioResult:
    _nodes(args, 5, exactly=5)
    c = figure8_cluster(args.seed, _profile(args), args.data_dir, _short_timer_network(args),
                        args.latency or DEFAULT_LATENCY)
    report = run_figure8(c)
    return _result(c, {**report.as_dict(), "schedule": [f"{t} {line}" for t, line in report.played]})


def scenario_247(args: ScenarioArgs) -> ScenarioResult:
    c = issue247_cluster(args.seed, _profile(args), _nodes(args, 3, 3), args.data_dir,
                         _short_timer_network(args), args.latency or DEFAULT_LATENCY)
    report = run_issue247(c, quiet_ms=args.duration_ms or 5000)
    return _result(c, report.as_dict())


def scenario_churn(args: ScenarioArgs) -> ScenarioResult:
    c = Cluster.dledger(nodes=_nodes(args, 5, 3), seed=args.seed, profile=_profile(args), data_dir=args.data_dir,
                        config=SHORT_TIMERS, checkers=[DLedgerViolations()], raise_on_violation=False,
                        network=_short_timer_network(args), latency=args.latency or DEFAULT_LATENCY,
                        scenario="dledger-churn")
    wait_settled(c)
    rounds = max(1, (args.duration_ms or 14_000) // 700)
    report = run_churn(c, rounds=rounds)
    if report.missing:  # a safety failure the per-event checkers cannot see: record it like theirs
        detail = f"acknowledged writes missing from the final log: {[b.decode() for b in report.missing[:5]]}"
        event = c.recorder.emit(c.now_ms, None, "violation", {"invariant": "acknowledged_writes_kept",
                                                               "detail": detail})
        c.violations.append(event or {"invariant": "acknowledged_writes_kept", "detail": detail})
    return _result(c, report.as_dict())


register(Scenario("dledger-election", "DLedger's default timers: elect, write, crash the leader, fail over "
                                      "(failover time, terms, new leader)", scenario_election))
register(Scenario("dledger-figure8", "Raft's Figure 8 as a fixed schedule on 5 members; under rocketmq-4.9.5 an "
                                     "entry committed by counting replicas is overwritten: the violation is "
                                     "recorded and the run exits 1, as expected", scenario_figure8))
register(Scenario("dledger-247", "issue #247/#325: a follower with a bigger term and a stale log never rejoins "
                                 "under rocketmq-4.9.5; under safe the leader steps down and it rejoins",
                  scenario_247))
register(Scenario("dledger-churn", "random crashes, restarts and partitions under client load (MIT churn); "
                                   "every invariant after every event, acknowledged writes must survive "
                                   "(a violation exits 1, also under rocketmq-4.9.5 where it is known)",
                  scenario_churn))
