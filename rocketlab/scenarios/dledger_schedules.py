"""DLedger's known behaviours as readable, deterministic schedules (see :mod:`rocketlab.scenarios.schedules`
for the language): Raft's Figure 8 (:data:`FIGURE_8`), DLedger issue #247 (:data:`ISSUE_247`) and DLedger
issue #251 (:data:`ISSUE_251`), each with the cluster it runs on and a report of what happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.dledger.config import DEFAULT_PROFILE
from rocketlab.errors import RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.scenarios.dledger_group import (
    DEFAULT_LATENCY,
    SHORT_TIMERS,
    DLedgerViolations,
    bodies,
    commit,
    settled_leader,
    violated,
    wait_settled,
)
from rocketlab.scenarios.schedules import parse_script, play
from rocketlab.sim.cluster import Cluster

FIGURE_8 = """\
# Raft's Figure 8 (Ongaro & Ousterhout, section 5.4.2) on five DLedger members, SHORT_TIMERS.
# S1 is the first leader; S2..S5 are the other members in id order; entry "first" is committed on all.
# The story as dledger-0.3.1.2 (and 0.3.2) plays it:
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
# Under the kit's "raft" profile the same schedule loses nothing: the elections of (c) or (d) end
# differently, or X is never counted committed. Play both profiles in the viewer and compare where
# they part; which rule makes the difference is lab 04's design exercise.
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


def figure8_cluster(seed: int = 1, profile: str = DEFAULT_PROFILE, data_dir: str | Path | None = None,
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


FIGURE_8_STOPS = {
    "(a)": N_("{S1} leads; W is committed, X reached {S2} only, and {S1} crashes"),
    "(b)": N_("{S5} is elected by {S3}, {S4} and itself (term {term}); it will take Y at X's index"),
    "(c)": N_("{S1} leads again (term {term}) and commits X, an entry of an older term, by counting replicas"),
    "(d)": N_("{S5} is elected again (term {term}), without the committed X: leader_completeness"),
    "(e)": N_("Y overwrites the committed X: committed_entries_stable"),
}
"""Figure 8's moments as the viewer's bookmarks (:func:`figure8_stops`): the schedule's (a)-(d) and the loss."""


def figure8_stops(c: Cluster, names: dict[str, str], x_index: int | None) -> list[dict[str, Any]]:
    """Where (a)-(e) of :data:`FIGURE_8_STOPS` happened in this run, read from its trace (``names`` and
    ``x_index`` as :class:`Figure8Report` has them): ``{"t", "name", "text"}`` each; a moment the run did
    not reach (the ``raft`` profile loses nothing) is left out."""
    words = {k: f"{k} ({v})" for k, v in names.items()}
    found: list[dict[str, Any]] = []

    def first(after: int, test: Any) -> dict[str, Any] | None:
        return next((e for e in c.events if e["t"] >= after and test(e)), None)

    def leader(node: str) -> Any:
        return lambda e: e["kind"] == "role" and e["node"] == node and e["role"] == "LEADER"

    crash = first(0, lambda e: e["kind"] == "fault" and e["action"] == "crash" and e["targets"] == [names["S1"]])
    events = [("(a)", crash)]
    if crash is not None:
        s5 = first(crash["t"], leader(names["S5"]))
        events.append(("(b)", s5))
        back = first(s5["t"] if s5 else crash["t"], leader(names["S1"]))
        x = back and first(back["t"], lambda e: e["kind"] == "commit" and e["node"] == names["S1"]
                           and e["index"] == x_index)
        events.append(("(c)", x and {**x, "term": back["term"]}))
        again = x and first(x["t"], leader(names["S5"]))
        events.append(("(d)", again))
        events.append(("(e)", again and first(again["t"], lambda e: e["kind"] == "violation"
                                              and e["detail"].startswith("committed_entries_stable"))))
    for name, event in events:
        if event:
            found.append({"t": event["t"], "name": name,
                          "text": _(FIGURE_8_STOPS[name]).format(term=event.get("term"), **words)})
    return found


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
#     dledger-0.3.1.2: L still hears SUCCESS from a quorum and never steps down, so F
#     stays a CANDIDATE at its bigger term for good and never gets the new entries (#325 shows such a
#     follower at term 2 beside its leader at term 1).
#     dledger-0.3.2 and raft (the 0.3.2 fix, PR #248): L steps down on the bigger term, a leader is elected above it, and
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


def issue247_cluster(seed: int = 1, profile: str = DEFAULT_PROFILE, nodes: int = 3, data_dir: str | Path | None = None,
                     network: str = "reliable", latency: str = DEFAULT_LATENCY) -> Cluster:
    return Cluster.dledger(nodes=nodes, seed=seed, profile=profile, data_dir=data_dir, config=ISSUE_247_TIMERS,
                           checkers=[DLedgerViolations()], raise_on_violation=False, network=network,
                           latency=latency, scenario="dledger-247")


def run_issue247(c: Cluster, schedule: str = ISSUE_247, quiet_ms: int = 5000, follower_last: bool = False
                 ) -> Issue247Report:
    """Elect L, play ``schedule``, then give the group ``quiet_ms`` of calm to recover (or not).

    F is the first member (in id order) that voted for L, or with ``follower_last`` the last one: the
    leader sends its heartbeats in id order, so under constant latency F's EXPIRED_TERM answer is then
    the last to arrive, after a quorum of SUCCESS has opened the heartbeat latch (the timing 0.3.2's
    10 ms grace exists for)."""
    lead = wait_settled(c)
    voters = [n for n in c.node_ids if n != lead and c.node(n).voted_for == lead]
    if follower_last:
        voters.reverse()
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


# ---------------------------------------------------------------------- issue #251
ISSUE_251 = """\
# DLedger issue #251 (fixed in 0.3.2 by 888883a), SHORT_TIMERS, three members, file stores.
# L leads, F is a follower (the first in id order), the third member keeps L's quorum.
# (1) L takes three entries; F appends them and acknowledges, and loses them in a power failure
#     9 ms later (its files were not flushed yet): L's water mark for F is past F's log end.
   0 append L a
   0 append L b
   0 append L c
   9 crash! F
  20 append L d
  20 append L e
# (2) F comes back with a shorter log. L, still in APPEND state for F, pushes the entries after its
#     water mark; F buffers them (they do not follow its log end) and after checkAbnormalFuture's
#     second answers the smallest one INCONSISTENT_STATE, which is lost on the way.
  40 restart F
  40 drop F -> L PushEntryResponse INCONSISTENT_STATE
# (3) L's push times out and it pushes that index again. dledger-0.3.1.2 kept the stuck push in
#     writeRequestMap, so F answers REPEATED_PUSH, every time, forever: F never catches up.
#     dledger-0.3.2 removed it when it answered, so F buffers the push again, answers it
#     INCONSISTENT_STATE a second later, L goes back to COMPARE, truncates and re-sends: F catches up.
"""


@dataclass
class Issue251Report:
    """Where F ended beside L, and what F's entry handler still holds (the stuck buffered pushes)."""

    names: dict[str, str]
    follower_end: int
    leader_end: int
    stuck_buffered: list[int]

    @property
    def caught_up(self) -> bool:
        return self.follower_end == self.leader_end

    def as_dict(self) -> dict[str, Any]:
        return {"names": self.names, "follower_end": self.follower_end, "leader_end": self.leader_end,
                "stuck_buffered": self.stuck_buffered, "follower_caught_up": self.caught_up}


def issue251_cluster(seed: int = 1, profile: str = DEFAULT_PROFILE, data_dir: str | Path | None = None,
                     latency: str = DEFAULT_LATENCY) -> Cluster:
    """Three members, file stores (a power loss needs files), SHORT_TIMERS, the recording checker."""
    if data_dir is None:
        raise RocketlabError("issue #251 needs file stores: pass data_dir")
    return Cluster.dledger(nodes=3, seed=seed, profile=profile, data_dir=data_dir, config=SHORT_TIMERS,
                           checkers=[DLedgerViolations()], raise_on_violation=False, latency=latency,
                           scenario="dledger-251")


def run_issue251(c: Cluster, schedule: str = ISSUE_251, quiet_ms: int = 3000) -> Issue251Report:
    """Elect L, play ``schedule`` with F = the first follower in id order, then ``quiet_ms`` of calm."""
    lead = wait_settled(c)
    f = sorted(n for n in c.node_ids if n != lead)[0]
    names = {"L": lead, "F": f}
    play(c, schedule, names)
    c.run_for(max(s.at_ms for s in parse_script(schedule)) + quiet_ms)
    core = c.node(f)
    stuck = sorted(core.pusher.entry_handler.write_request_map)
    return Issue251Report(names, core.ledger_end_index, c.node(lead).ledger_end_index, stuck)
