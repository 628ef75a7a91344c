"""Seeded schedules of Raft's Figure 8 family on five DLedger members, after MIT 6.5840's TestFigure8.

:func:`run_figure8_family` drives a group the way Figure 8 is built, with the seed choosing each move:
the leader takes a write or two that reach only part of the group (it is cut off with at most one
follower), then crashes or is cut off; crashed members restart while at most two are down; every few
rounds the group heals. Entries of older terms end up on majorities under leaders of newer terms, the
situation in which counting replicas commits an entry a later leader may overwrite (Figure 8 (c)-(d)).
At the end everything heals and restarts and one more write must commit within ``settle_ms``, and
another with two members down: a rule that stops committing, or waits for every member, fails there. The every-event invariant checker of the cluster
(:class:`~rocketlab.scenarios.dledger_group.DLedgerViolations`) judges safety; :class:`FamilyReport` says
what happened. rocketlab's own addition (no Java class modelled).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rocketlab.errors import RocketlabError
from rocketlab.scenarios.dledger_group import append_nowait, bodies, caught_up, commit, violated
from rocketlab.sim.cluster import Cluster


@dataclass
class FamilyReport:
    """What a seeded Figure 8 schedule did: its moves (``(t, text)``), the invariants broken (name ->
    count), whether the last write committed (and when, ms after the group healed), whether the logs
    then agreed, and the acknowledged writes missing from a member's log."""

    moves: list[tuple[int, str]] = field(default_factory=list)
    violations: dict[str, int] = field(default_factory=dict)
    final_committed: bool = False
    final_commit_ms: int | None = None
    converged: bool = False
    missing: list[bytes] = field(default_factory=list)


def _move(c: Cluster, rng: random.Random, report: FamilyReport, n: int) -> None:
    """One round: the leader (if any) writes to a minority and crashes or is cut off; members restart."""
    leader = c.leader()
    live = [x for x in c.node_ids if c.alive(x)]
    if leader is not None and c.alive(leader):
        mates = rng.sample([x for x in live if x != leader], k=min(rng.randrange(2), len(live) - 1))
        c.partition([leader, *mates], [x for x in c.node_ids if x not in (leader, *mates)])
        for i in range(rng.randrange(1, 3)):
            append_nowait(c, leader, b"r%d-%d" % (n, i))
        report.moves.append((c.now_ms, f"cut {leader} with {mates or 'nobody'}, append to {leader}"))
        c.run_for(rng.randrange(20, 120))
        if rng.random() < 0.6:
            c.crash(leader)
            report.moves.append((c.now_ms, f"crash {leader}"))
        c.heal()
    down = [x for x in c.node_ids if not c.alive(x)]
    while len(down) > 2 or (down and rng.random() < 0.5):
        back = down.pop(rng.randrange(len(down)))
        c.restart(back)
        report.moves.append((c.now_ms, f"restart {back}"))
    if rng.random() < 0.5:  # a majority of random members elects without the others
        side = rng.sample(c.node_ids, k=3)
        c.partition(side, [x for x in c.node_ids if x not in side])
        report.moves.append((c.now_ms, f"partition {' '.join(side)} | others"))


def run_figure8_family(c: Cluster, rounds: int = 12, round_ms: tuple[int, int] = (300, 1500),
                       settle_ms: int = 8_000) -> FamilyReport:
    """Play ``rounds`` seeded rounds (:func:`_move`, ``round_ms`` apart, drawn from the cluster's seed),
    then heal, restart everyone, and commit one write within ``settle_ms``; then crash two members and
    commit one more within ``settle_ms`` (``final_committed``: both did)."""
    rng = random.Random(f"{c.seed}/figure8-family")
    report = FamilyReport()
    commit(c, b"first", timeout_ms=settle_ms)
    acked: list[bytes] = [b"first"]
    for n in range(rounds):
        _move(c, rng, report, n)
        c.run_for(rng.randrange(*round_ms))
    c.heal()
    down = [x for x in c.node_ids if not c.alive(x)]
    if down:
        c.restart(*down)
    report.moves.append((c.now_ms, "heal, restart every member"))
    healed = c.now_ms
    try:
        commit(c, b"final", timeout_ms=settle_ms)
        report.final_committed, report.final_commit_ms = True, c.now_ms - healed
        acked.append(b"final")
        report.converged = c.run_until(caught_up, timeout_ms=settle_ms)
    except RocketlabError:
        pass
    if report.final_committed:  # once a majority is up, writes commit: two members down, one more write
        down = rng.sample(c.node_ids, k=2)
        c.crash(*down)
        report.moves.append((c.now_ms, f"crash {' '.join(down)}"))
        try:
            commit(c, b"majority", timeout_ms=settle_ms)
            acked.append(b"majority")
        except RocketlabError:
            report.final_committed = False
    report.violations = dict(violated(c))
    live = [x for x in c.node_ids if c.alive(x)]
    report.missing = [b for b in acked if any(b not in bodies(c, x) for x in live)] if report.final_committed else []
    return report
