"""Safety invariants of a DLedger group, as reusable checks over trace events and member cores.

Checkers observe; they never participate. Each check returns a list of :class:`Violation` (empty when
all is well); a runtime turns them into ``violation`` trace events and exceptions.

Over trace events (dicts with the envelope of docs/trace.md: ``t``, ``seq``, ``node``, ``kind`` + fields):

* :func:`election_safety` - at most one member becomes LEADER in any term (``role`` events);
* :func:`commit_index_monotone` - a member's ``commit`` index never decreases within one incarnation
  (a ``fault`` event with action crash/restart naming the member starts a new incarnation), except
  where a ``truncate`` on that member cut its log below it: Java's ``updateCommittedIndex`` then caps
  the committed index at the new ledger end (a follower re-fetches entries it had already committed
  when the leader's COMPARE races with its appends); whether a *committed entry* changed is
  :class:`CommittedEntries`' business.

Over member cores (anything with ``ledger_begin_index``, ``ledger_end_index``, ``committed_index``,
``role``, ``entries()``, ``store.version`` - a :class:`~rocketlab.dledger.server.DLedgerServer`):

* :func:`log_matching` - two logs holding an entry with the same index and term are identical up to it;
* :class:`CommittedEntries` - an entry, once committed anywhere, never changes (same term, pos, body);
* :func:`leader_completeness` - every live leader holds every entry committed in its term or earlier
  (a deposed leader that has not noticed the newer term yet - paused, cut off - need not).

:class:`DLedgerInvariants` combines them incrementally for use after every event: :class:`LogCache`
reads only the entries appended since the last look, and each check looks only at what changed.
Under the DLedger profiles (``dledger-0.3.1.2``, ``dledger-0.3.2``) DLedger commits old-term entries by
counting replicas, so
"committed entries never change" can fail there (Raft's Figure 8, DLedger issue #4): that is the
known behaviour the profile reproduces, not a bug of the checker.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

V = TypeVar("V")
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
    """A member's commit index never decreases within one incarnation, except down to a truncation
    point (see the module docstring). ``last`` carries state."""
    seen = last if last is not None else {}
    found = []
    for e in events:
        kind = e.get("kind")
        if kind == "fault" and e.get("action") in ("crash", "restart"):
            for node in e.get("targets") or ():
                seen.pop(node, None)
        elif kind == "truncate" and e["node"] in seen:
            seen[e["node"]] = min(seen[e["node"]], e["index"] - 1)
        elif kind == "commit":
            node, index = e["node"], e["index"]
            if index < seen.get(node, -1):
                found.append(Violation("commit_index_monotone", f"{node} commit index went from {seen[node]} to {index}"))
            seen[node] = max(index, seen.get(node, -1))
    return found


# ---------------------------------------------------------------------- over cores
def entry_key(entry: Any) -> EntryKey:
    return entry.term, entry.pos, entry.size, entry.body


_GENERATIONS = itertools.count(1)


class CoreMap(Generic[V]):
    """``{core: value}`` by identity that does not keep a core alive (a crashed member's entry goes with
    it): a :class:`weakref.WeakKeyDictionary` without the weak reference it builds on every lookup (the
    checker looks up cores after every event)."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Any], V]] = {}

    def get(self, core: Any, default: Any = None) -> Any:
        hit = self._items.get(id(core))
        return hit[1] if hit is not None and hit[0]() is core else default

    def __contains__(self, core: Any) -> bool:
        hit = self._items.get(id(core))
        return hit is not None and hit[0]() is core

    def __setitem__(self, core: Any, value: V) -> None:
        key = id(core)
        hit = self._items.get(key)
        if hit is not None and hit[0]() is core:
            self._items[key] = (hit[0], value)
            return
        items = self._items

        def forget(ref: weakref.ref[Any]) -> None:
            if items.get(key, (None,))[0] is ref:
                del items[key]

        self._items[key] = (weakref.ref(core, forget), value)

    def pop(self, core: Any, default: Any = None) -> Any:
        hit = self._items.get(id(core))
        if hit is None or hit[0]() is not core:
            return default
        del self._items[id(core)]
        return hit[1]

    def __len__(self) -> int:
        return len(self._items)


@dataclass(eq=False)
class CachedLog:
    """One member's log as read by :class:`LogCache`: ``entries`` ``{index: EntryKey}`` from ``begin``,
    ``chain[i - begin]`` a hash of every entry from ``begin`` to ``i`` (so two logs with the same begin
    agree up to ``i`` when their chains agree there), and ``generation``, which changes whenever the
    log had to be read again from scratch (a truncate, a new begin, a store without versions)."""

    key: tuple[Any, int, int]
    begin: int
    entries: dict[int, EntryKey]
    chain: list[int]
    generation: int

    @property
    def end(self) -> int:
        return self.begin + len(self.chain) - 1

    def extend(self, new_entries: Iterable[Any]) -> None:
        for e in new_entries:
            key = entry_key(e)
            self.entries[e.index] = key
            self.chain.append(hash((self.chain[-1] if self.chain else self.begin, key)))


class LogCache:
    """Each member's log, re-read only as far as it changed.

    A store bumps ``store.version`` once per ``append`` and once per ``truncate`` trace event, and only
    those change a log; so when the version grew by exactly the number of new entries at the end and
    the begin index is the same, only appends happened and only the new entries are read. Anything else
    (a truncate, a re-based log, a member without ``store.version``) reads the whole log again.
    """

    def __init__(self) -> None:
        self._cache: CoreMap[CachedLog] = CoreMap()
        # (member a, member b) -> the two logs' (key, generation) when the pair last passed log matching
        self.pairs_passed: dict[tuple[str, str], tuple[Any, ...]] = {}

    @staticmethod
    def version(core: Any) -> tuple[Any, int, int]:
        return (getattr(getattr(core, "store", None), "version", None), core.ledger_begin_index,
                core.ledger_end_index)

    def refresh(self, core: Any) -> CachedLog:
        key = self.version(core)
        cached = self._cache.get(core)
        if cached is not None and key[0] is not None:
            if cached.key == key:
                return cached
            (old_version, old_begin, old_end), (version, begin, end) = cached.key, key
            if begin == old_begin and end >= old_end and version - old_version == end - old_end and old_end >= 0:
                cached.extend(core.entries(old_end + 1, end) if end > old_end else [])
                cached.key = key
                return cached
        entries = core.entries() if core.ledger_end_index >= 0 else []
        begin = entries[0].index if entries else core.ledger_begin_index
        fresh = CachedLog(key, begin, {}, [], next(_GENERATIONS))
        fresh.extend(entries)
        self._cache[core] = fresh
        return fresh

    def knows(self, core: Any) -> bool:
        """Whether ``core``'s log was read before (a restarted member is a new core)."""
        return core in self._cache

    def peek(self, core: Any) -> CachedLog:
        """The cached log of ``core`` as last refreshed (read now if it was never read)."""
        cached = self._cache.get(core)
        return cached if cached is not None else self.refresh(core)

    def log(self, core: Any) -> dict[int, EntryKey]:
        return self.refresh(core).entries


def log_matching(cores: Mapping[str, Any], cache: LogCache | None = None, changed: str | None = None) -> list[Violation]:
    """If two logs have an entry with the same index and term, they are identical up to that index.

    With ``changed`` (a member whose log is the only one that changed since the last call with this
    ``cache``), only the pairs that include it are compared, and the other logs are taken from the
    cache as they are (see :meth:`DLedgerInvariants.check`)."""
    cache = cache or LogCache()
    found: list[Violation] = []
    if changed is not None:
        mine = cache.refresh(cores[changed])
        for other, core in cores.items():
            if other != changed:
                theirs = cache.peek(core)
                if changed < other:
                    _match_pair(cache, changed, mine, other, theirs, found)
                else:
                    _match_pair(cache, other, theirs, changed, mine, found)
        found.sort(key=lambda v: v.detail)
        return found
    logs = {n: cache.refresh(c) for n, c in sorted(cores.items())}
    names = sorted(logs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            _match_pair(cache, a, logs[a], b, logs[b], found)
    return found


def _match_pair(cache: LogCache, a: str, la: CachedLog, b: str, lb: CachedLog, found: list[Violation]) -> None:
    state = (la.key, la.generation, lb.key, lb.generation)
    passed = cache.pairs_passed.get((a, b))
    if passed is not None:
        if passed == state:  # neither log changed since this pair passed
            return
        # Same generations: both logs only grew at their ends since the pair passed. If the shorter end
        # is where it was, the entries compared then are the ones that would be compared now.
        if passed[1] == la.generation and passed[3] == lb.generation and \
                min(la.key[2], lb.key[2]) == min(passed[0][2], passed[2][2]):
            cache.pairs_passed[(a, b)] = state
            return
    lo, hi = max(la.begin, lb.begin, 0), min(la.end, lb.end)
    ea, eb = la.entries, lb.entries
    top = next((k for k in range(hi, lo - 1, -1) if ea[k][0] == eb[k][0]), None)
    if top is None or (la.begin == lb.begin and la.chain[top - la.begin] == lb.chain[top - lb.begin]):
        cache.pairs_passed[(a, b)] = state
        return
    bad = next((k for k in range(top, lo - 1, -1) if ea[k] != eb[k]), None)
    if bad is None:
        cache.pairs_passed[(a, b)] = state
    else:
        found.append(Violation("log_matching", f"{a} and {b} agree on index {top} (term {ea[top][0]}) "
                                               f"but differ at index {bad}: {ea[bad][:3]} vs {eb[bad][:3]}"))


@dataclass
class CommittedEntries:
    """Every entry seen committed on any member; :meth:`record` reports one that changed.

    ``terms[index]`` is the lowest term of a member that reported the entry committed: the entry was
    committed in that term or earlier, so every leader of that term or a later one must hold it.
    ``added`` lists the indices in the order they were first seen committed."""

    entries: dict[int, EntryKey] = field(default_factory=dict)
    terms: dict[int, int] = field(default_factory=dict)
    added: list[int] = field(default_factory=list)
    recorded: CoreMap[tuple[Any, int]] = field(default_factory=CoreMap)
    verified: CoreMap[tuple[int, int]] = field(default_factory=CoreMap)
    leaders: CoreMap[tuple[int, int]] = field(default_factory=CoreMap)

    def record(self, cores: Mapping[str, Any], cache: LogCache) -> list[Violation]:
        found = []
        for name, core in sorted(cores.items()):
            log = cache.refresh(core)
            state = (cache.version(core), core.committed_index)
            if self.recorded.get(core) == state:
                continue
            self.recorded[core] = state
            generation, done = self.verified.get(core, (None, -1))
            start = max(core.ledger_begin_index, 0, done + 1 if generation == log.generation else 0)
            upto = min(core.committed_index, core.ledger_end_index)
            term = getattr(core, "term", -1)
            for index in range(start, upto + 1):
                key = log.entries.get(index)
                if key is None:
                    continue
                known = self.entries.get(index)
                if known is None:
                    known = self.entries[index] = key
                    self.added.append(index)
                self.terms[index] = min(self.terms.get(index, term), term)
                if known != key:
                    found.append(Violation("committed_entries_stable", f"{name} committed index {index} as "
                                                                      f"{key[:3]} but it was committed as {known[:3]}"))
            self.verified[core] = (log.generation, max(upto, done if generation == log.generation else -1))
        return found

    @property
    def max_index(self) -> int:
        return max(self.entries, default=-1)


def leader_completeness(cores: Mapping[str, Any], committed: CommittedEntries, cache: LogCache) -> list[Violation]:
    """Every live leader holds every committed entry at or above its begin index, unchanged - every entry
    committed in the leader's term or an earlier one (a deposed leader that has not yet noticed a newer
    term need not hold what the newer leader committed). Each leader is checked against what was
    committed since it was last checked, or against everything when its log was re-read from scratch."""
    found = []
    for name, core in sorted(cores.items()):
        if core.role != "LEADER":
            committed.leaders.pop(core, None)
            continue
        if not committed.entries:
            continue
        log = cache.refresh(core)
        generation, seen = committed.leaders.get(core, (None, 0))
        fresh = committed.added[seen:] if generation == log.generation else committed.added
        committed.leaders[core] = (log.generation, len(committed.added))
        term = getattr(core, "term", None)
        for index in sorted(set(fresh), reverse=True):
            if index < core.ledger_begin_index or (term is not None and committed.terms.get(index, -1) > term):
                continue
            if log.entries.get(index) != committed.entries[index]:
                have = log.entries.get(index)
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

    def check(self, cores: Mapping[str, Any], changed: str | None = None, what: str = "log") -> list[Violation]:
        """Core-based checks over the live members, plus what :meth:`observe` found since the last call.

        ``changed`` names the one member whose state may have changed since the last call (the member
        of an ``append``, ``truncate``, ``commit`` or ``role`` event: every change of a log comes with
        such an event, and a restarted member is a new core, read afresh): then only its pairs are
        compared and only its committed entries recorded, so the cost of a check does not grow with the
        number of members or the length of the logs. ``what`` says what changed on that member: ``"log"``
        (everything is checked), ``"commit"`` (its commit index: no log matching) or ``"role"`` (only
        leader completeness). A member not read before is always checked in full. Without ``changed``,
        everything is looked at."""
        found, self.pending = self.pending, []
        if changed is not None and changed not in cores:
            changed = None
        if changed is None or not self.cache.knows(cores[changed]):
            what = "log"
        if what == "log":
            found += log_matching(cores, self.cache, changed)
        if self.committed_stable:
            if what != "role":
                found += self.committed.record(cores if changed is None else {changed: cores[changed]}, self.cache)
            found += leader_completeness(cores, self.committed, self.cache)
        return found


class DLedgerChecker:
    """Adapter for a simulator's checker slot: ``check(cluster, event)`` -> a detail string or None.

    ``cores`` returns the live members (``{node_id: DLedgerServer}``) when called with the cluster, e.g.
    ``DLedgerChecker(Cluster.live_cores)``. Every event is observed; the
    core-based checks run after events that can change a log (append, truncate, commit, role).
    """

    name = "dledger"
    CORE_KINDS = frozenset({"append", "truncate", "commit", "role"})
    ONE_MEMBER_KINDS = frozenset({"append", "truncate", "commit", "role"})
    CHANGES = {"append": "log", "truncate": "log", "commit": "commit", "role": "role"}
    """Events after which only their own member needs a look (see :meth:`DLedgerInvariants.check`)."""
    EVENT_KINDS = frozenset({"role", "commit", "truncate", "fault"})
    """The kinds the event-based checks read."""
    kinds = CORE_KINDS | EVENT_KINDS
    """Every kind :meth:`violations_at` acts on (the Cluster skips the others): an event of another kind
    finds nothing pending, since each call consumes what its own ``observe`` found."""

    def __init__(self, cores: Any, committed_stable: bool = True) -> None:
        self.cores = cores
        self.invariants = DLedgerInvariants(committed_stable)

    def check(self, cluster: Any, event: Mapping[str, Any]) -> str | None:
        return "; ".join(f"{v.invariant}: {v.detail}" for v in self.violations_at(cluster, event)) or None

    def violations_at(self, cluster: Any, event: Mapping[str, Any]) -> list[Violation]:
        """What is broken after ``event`` (observed in order, one call per event)."""
        kind = event.get("kind")
        if kind in self.EVENT_KINDS:
            self.invariants.observe((event,))
        if kind not in self.CORE_KINDS and not self.invariants.pending:
            return []
        changed = event.get("node") if kind in self.ONE_MEMBER_KINDS and not self.invariants.pending else None
        return self.invariants.check(self.cores(cluster), changed, self.CHANGES[kind])
