"""Safety invariants of a DLedger group, as reusable checks over trace events and member cores.

Checkers observe; they never participate. Each check returns a list of :class:`Violation` (empty when
all is well); a runtime turns them into ``violation`` trace events and exceptions.

Over trace events (dicts with the DESIGN.md envelope: ``t``, ``seq``, ``node``, ``kind`` + fields):

* :func:`election_safety` - at most one member becomes LEADER in any term (``role`` events);
* :func:`commit_index_monotone` - a member's ``commit`` index never decreases within one incarnation
  (a ``fault`` event with action crash/restart naming the member starts a new incarnation).

Over member cores (anything with ``ledger_begin_index``, ``ledger_end_index``, ``committed_index``,
``role``, ``entries()``, ``store.version`` - a :class:`~rocketlab.dledger.server.DLedgerServer`):

* :func:`log_matching` - two logs holding an entry with the same index and term are identical up to it;
* :class:`CommittedEntries` - an entry, once committed anywhere, never changes (same term, pos, body);
* :func:`leader_completeness` - every live leader holds every committed entry.

:class:`DLedgerInvariants` combines them incrementally (caching each log by store version) for use after
every event. Under the ``rocketmq-4.9.5`` profile DLedger commits old-term entries by counting
replicas, so "committed entries never change" can fail there (Raft's Figure 8, DLedger issue #4):
that is the known behaviour the profile reproduces, not a bug of the checker.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

EntryKey = tuple[int, int, int, bytes | None]
"""What identifies an entry's content: (term, pos, size, body)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: its name (as in the ``violation`` trace event) and what was seen."""

    invariant: str
    detail: str


class MemberView(Protocol):
    """What the core-based checks read of a member (DLedgerServer provides it)."""

    role: str
    ledger_begin_index: int
    ledger_end_index: int
    committed_index: int

    def entries(self, first: int | None = None, last: int | None = None) -> list[Any]: ...


# ---------------------------------------------------------------------- over events
def election_safety(events: Iterable[Mapping[str, Any]], leaders: dict[int, str] | None = None) -> list[Violation]:
    """At most one leader per term. ``leaders`` (term -> node) carries state across calls."""
    seen = leaders if leaders is not None else {}
    found = []
    for e in events:
        if e.get("kind") == "role" and e.get("role") == "LEADER":
            term, node = e["term"], e["node"]
            other = seen.setdefault(term, node)
            if other != node:
                found.append(Violation("election_safety", f"term {term} has two leaders: {other} and {node}"))
    return found


def commit_index_monotone(events: Iterable[Mapping[str, Any]], last: dict[str, int] | None = None) -> list[Violation]:
    """A member's commit index never decreases within one incarnation. ``last`` carries state."""
    seen = last if last is not None else {}
    found = []
    for e in events:
        kind = e.get("kind")
        if kind == "fault" and e.get("action") in ("crash", "restart"):
            for node in e.get("targets") or ():
                seen.pop(node, None)
        elif kind == "commit":
            node, index = e["node"], e["index"]
            if index < seen.get(node, -1):
                found.append(Violation("commit_index_monotone", f"{node} commit index went from {seen[node]} to {index}"))
            seen[node] = max(index, seen.get(node, -1))
    return found


# ---------------------------------------------------------------------- over cores
def entry_key(entry: Any) -> EntryKey:
    return entry.term, entry.pos, entry.size, entry.body


class LogCache:
    """Each member's log as ``{index: EntryKey}``, re-read only when its store version changes."""

    def __init__(self) -> None:
        self._cache: weakref.WeakKeyDictionary[Any, tuple[Any, dict[int, EntryKey]]] = weakref.WeakKeyDictionary()

    @staticmethod
    def version(core: Any) -> tuple[Any, int, int]:
        return (getattr(getattr(core, "store", None), "version", None), core.ledger_begin_index,
                core.ledger_end_index)

    def log(self, core: Any) -> dict[int, EntryKey]:
        version = self.version(core)
        cached = self._cache.get(core)
        if cached is None or cached[0] != version or version[0] is None:
            entries = {e.index: entry_key(e) for e in core.entries()} if core.ledger_end_index >= 0 else {}
            cached = (version, entries)
            self._cache[core] = cached
        return cached[1]


def log_matching(cores: Mapping[str, Any], cache: LogCache | None = None) -> list[Violation]:
    """If two logs have an entry with the same index and term, they are identical up to that index."""
    cache = cache or LogCache()
    logs = {n: cache.log(c) for n, c in sorted(cores.items())}
    found = []
    names = sorted(logs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            la, lb = logs[a], logs[b]
            common = sorted(set(la) & set(lb), reverse=True)
            top = next((k for k in common if la[k][0] == lb[k][0]), None)
            if top is None:
                continue
            bad = next((k for k in common if k <= top and la[k] != lb[k]), None)
            if bad is not None:
                found.append(Violation("log_matching", f"{a} and {b} agree on index {top} (term {la[top][0]}) "
                                                       f"but differ at index {bad}: {la[bad][:3]} vs {lb[bad][:3]}"))
    return found


@dataclass
class CommittedEntries:
    """Every entry seen committed on any member; :meth:`record` reports one that changed."""

    entries: dict[int, EntryKey] = field(default_factory=dict)
    recorded: weakref.WeakKeyDictionary[Any, tuple[Any, int]] = field(default_factory=weakref.WeakKeyDictionary)

    def record(self, cores: Mapping[str, Any], cache: LogCache) -> list[Violation]:
        found = []
        for name, core in sorted(cores.items()):
            log = cache.log(core)
            state = (cache.version(core), core.committed_index)
            if self.recorded.get(core) == state:
                continue
            self.recorded[core] = state
            for index in range(max(core.ledger_begin_index, 0), min(core.committed_index, core.ledger_end_index) + 1):
                key = log.get(index)
                if key is None:
                    continue
                known = self.entries.setdefault(index, key)
                if known != key:
                    found.append(Violation("committed_entries_stable", f"{name} committed index {index} as "
                                                                      f"{key[:3]} but it was committed as {known[:3]}"))
        return found

    @property
    def max_index(self) -> int:
        return max(self.entries, default=-1)


def leader_completeness(cores: Mapping[str, Any], committed: CommittedEntries, cache: LogCache) -> list[Violation]:
    """Every live leader holds every committed entry at or above its begin index, unchanged."""
    found = []
    for name, core in sorted(cores.items()):
        if core.role != "LEADER" or not committed.entries:
            continue
        log = cache.log(core)
        for index in sorted(committed.entries, reverse=True):
            if index < core.ledger_begin_index:
                break
            if log.get(index) != committed.entries[index]:
                have = log.get(index)
                found.append(Violation("leader_completeness", f"leader {name} (term {core.term}) lacks committed "
                                                              f"index {index}: has {have[:3] if have else None}"))
                break
    return found


class DLedgerInvariants:
    """All the checks, incrementally: :meth:`observe` each batch of events, :meth:`check` the cores."""

    def __init__(self, committed_stable: bool = True) -> None:
        self.leaders: dict[int, str] = {}
        self.commits: dict[str, int] = {}
        self.cache = LogCache()
        self.committed = CommittedEntries()
        self.committed_stable = committed_stable
        self.pending: list[Violation] = []

    def observe(self, events: Iterable[Mapping[str, Any]]) -> list[Violation]:
        """Event-based checks; their violations are also returned by the next :meth:`check`."""
        events = list(events)
        found = election_safety(events, self.leaders) + commit_index_monotone(events, self.commits)
        self.pending += found
        return found

    def check(self, cores: Mapping[str, Any]) -> list[Violation]:
        """Core-based checks over the live members, plus what :meth:`observe` found since the last call."""
        found, self.pending = self.pending, []
        found += log_matching(cores, self.cache)
        if self.committed_stable:
            found += self.committed.record(cores, self.cache)
            found += leader_completeness(cores, self.committed, self.cache)
        return found


class DLedgerChecker:
    """Adapter for a simulator's checker slot: ``check(cluster, event)`` -> a detail string or None.

    ``cores`` returns the live members (``{node_id: DLedgerServer}``) when called with the cluster, e.g.
    ``DLedgerChecker(lambda c: {n: c.node(n) for n in c.live_nodes()})``. Every event is observed; the
    core-based checks run after events that can change a log (append, truncate, commit, role).
    """

    name = "dledger"
    CORE_KINDS = frozenset({"append", "truncate", "commit", "role"})

    def __init__(self, cores: Any, committed_stable: bool = True) -> None:
        self.cores = cores
        self.invariants = DLedgerInvariants(committed_stable)

    def check(self, cluster: Any, event: Mapping[str, Any]) -> str | None:
        self.invariants.observe([event])
        if event.get("kind") not in self.CORE_KINDS and not self.invariants.pending:
            return None
        found = self.invariants.check(self.cores(cluster))
        return "; ".join(f"{v.invariant}: {v.detail}" for v in found) or None
