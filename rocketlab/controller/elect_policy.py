"""DefaultElectPolicy, RocketMQ 5.3.3 (``controller/.../elect/impl/DefaultElectPolicy.java``): who becomes
master of a broker set.

``elect`` tries the SyncStateSet first, then - only with ``enableElectUncleanMaster`` - every replica.
Within a candidate set: keep the brokers the valid predicate (the heartbeat table: alive) accepts; the old
master wins if it is among them and no other broker is designated; a designated broker wins if it is among
them, else nobody; otherwise the best by **epoch (higher first), then max offset (higher first), then
election priority (lower first)**; without live info, the first candidate.

Faithful to two quirks of the Java code (the digest lists them as unverified as reported bugs):

* the offset comparison is ``(int)(o2.maxOffset - o1.maxOffset)``: a difference of more than 2 GiB wraps
  around a 32-bit int, so a broker far *behind* can sort first (between 2 and 4 GiB behind, it does;
  :func:`java_int`);
* the candidates go into a ``TreeSet`` with that comparator, which keeps only the first of brokers that
  tie on all three keys.

Simplified: Java iterates a ``HashSet<Long>``, which for small broker ids is ascending order; we iterate
ascending ids. A sorted list with binary insertion stands in for the TreeSet's red-black tree (they can
order differently only when the comparator is inconsistent, i.e. offsets more than 2 GiB apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rocketlab import plugs
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo

ELECT_MASTER_PLUG = plugs.point("lab06.elect_master")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

BrokerValidPredicate = Callable[[str | None, str, int], bool]
BrokerLiveInfoGetter = Callable[[str | None, str, int], BrokerLiveInfo | None]


def java_int(value: int) -> int:
    """Java's ``(int)`` cast of a long, and int overflow: the low 32 bits as a signed number."""
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


def compare_live_info(o1: BrokerLiveInfo, o2: BrokerLiveInfo) -> int:
    """DefaultElectPolicy's comparator: negative when ``o1`` is the better master."""
    if o1.epoch == o2.epoch:
        if o1.max_offset == o2.max_offset:
            return java_int(o1.election_priority - o2.election_priority)
        return java_int(o2.max_offset - o1.max_offset)
    return java_int(o2.epoch - o1.epoch)


class DefaultElectPolicy:
    """Models DefaultElectPolicy (see the module docstring)."""

    def __init__(self, valid_predicate: BrokerValidPredicate | None = None,
                 broker_live_info_getter: BrokerLiveInfoGetter | None = None) -> None:
        self.valid_predicate = valid_predicate
        self.broker_live_info_getter = broker_live_info_getter

    def elect(self, cluster_name: str | None, broker_name: str, sync_state_brokers: Iterable[int] | None,
              all_replica_brokers: Iterable[int] | None, old_master: int | None,
              prefer_broker_id: int | None) -> int | None:
        """The new master's id, or None; ``all_replica_brokers`` is None unless unclean election is on.
        The decision is :func:`elect_master` (lab 06's exercise ``lab06.elect_master`` when plugged in)."""
        valid = self.valid_predicate
        getter = self.broker_live_info_getter
        decide = plugs.resolve(ELECT_MASTER_PLUG, elect_master)
        return decide(None if sync_state_brokers is None else set(sync_state_brokers),
                      None if all_replica_brokers is None else set(all_replica_brokers), old_master, prefer_broker_id,
                      (lambda b: True) if valid is None else (lambda b: valid(cluster_name, broker_name, b)),
                      None if getter is None else (lambda b: getter(cluster_name, broker_name, b)))


def elect_master(sync_state_brokers: set[int] | None, all_replica_brokers: set[int] | None, old_master: int | None,
                 prefer_broker_id: int | None, is_valid: Callable[[int], bool],
                 live_info: Callable[[int], BrokerLiveInfo | None] | None) -> int | None:
    """``DefaultElectPolicy.elect`` with the heartbeat table as two functions of a broker id: the
    SyncStateSet first, then (``all_replica_brokers`` given: unclean election on) every replica."""
    if sync_state_brokers is not None:
        chosen = try_elect(sync_state_brokers, old_master, prefer_broker_id, is_valid, live_info)
        if chosen is not None:
            return chosen
    if all_replica_brokers is not None:
        return try_elect(all_replica_brokers, old_master, prefer_broker_id, is_valid, live_info)
    return None


def try_elect(brokers: Iterable[int], old_master: int | None, prefer_broker_id: int | None,
              is_valid: Callable[[int], bool], live_info: Callable[[int], BrokerLiveInfo | None] | None) -> int | None:
    """``DefaultElectPolicy.tryElect``: one candidate set (see the module docstring)."""
    candidates = [b for b in sorted(set(brokers)) if is_valid(b)]
    if not candidates:
        return None
    if old_master in candidates and (prefer_broker_id is None or prefer_broker_id == old_master):
        return old_master
    if prefer_broker_id is not None:
        return prefer_broker_id if prefer_broker_id in candidates else None
    if live_info is not None:
        ordered = _tree_set([live_info(b) for b in candidates])
        if ordered:
            return ordered[0].broker_id
    return candidates[0]


def _tree_set(infos: list[BrokerLiveInfo | None]) -> list[BrokerLiveInfo]:
    """Insert into a list kept sorted by :func:`compare_live_info`, dropping an element that compares
    equal to one already there (a TreeSet's ``add``). Java's TreeSet throws on a null element; the heartbeat
    table has no entry for a broker that never sent a heartbeat, which the valid predicate filtered out."""
    ordered: list[BrokerLiveInfo] = []
    for info in infos:
        if info is None:
            raise ValueError("a candidate without live info (Java: NullPointerException in TreeSet.add)")
        lo, hi = 0, len(ordered)
        while lo < hi:
            mid = (lo + hi) // 2
            c = compare_live_info(info, ordered[mid])
            if c == 0:
                break
            if c < 0:
                hi = mid
            else:
                lo = mid + 1
        else:
            ordered.insert(lo, info)
    return ordered
