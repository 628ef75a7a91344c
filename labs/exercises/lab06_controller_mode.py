"""Lab 06 exercises: RocketMQ 5's controller mode.

Edit the bodies below, then check them from the notebook (``check("lab06.find_consistent_point")``) or
from a shell (``rocketlab grade lab06``). The grader plugs your code into the real components of
simulated controller-mode clusters: your ``find_consistent_point`` into every returning slave's
handshake (``AutoSwitchHAClient``), your ``elect_master`` into every controller's election
(``DefaultElectPolicy``); then it crashes masters, restarts them and churns the cluster for several seeds,
judged by the controller-mode invariants (no acknowledged message lost under allAckInSyncStateSet, every
slave a byte prefix of its master). Keep the names and signatures; you may add helpers.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketlab.controller.elect_policy import java_int  # noqa: F401  (yours to use)
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo  # noqa: F401
from rocketlab.ha.epoch_file_cache import LONG_MAX, EpochEntry  # noqa: F401


def find_consistent_point(local: list[EpochEntry], other: list[EpochEntry]) -> int:
    """``EpochFileCache.findConsistentPoint``: up to where this broker's log and the master's agree.

    Each list is one broker's epoch file, oldest first: ``EpochEntry(epoch, start_offset, end_offset)``
    says that the master of ``epoch`` wrote the bytes ``[start_offset, end_offset)`` of that broker's log
    (the last entry's ``end_offset`` is the broker's max offset). Two logs hold the same bytes for an
    epoch when both have that epoch **with the same start offset**: then they agree up to the smaller of
    the two end offsets. Look for that epoch starting from ``local``'s newest; return the agreed offset,
    or -1 when no epoch matches (the slave cannot resynchronise). The slave truncates its log there.
    """
    raise NotImplementedError("lab06.find_consistent_point")


def elect_master(sync_state_brokers: set[int] | None, all_replica_brokers: set[int] | None,
                 old_master: int | None, prefer_broker_id: int | None, is_valid: Callable[[int], bool],
                 live_info: Callable[[int], BrokerLiveInfo] | None) -> int | None:
    """``DefaultElectPolicy.elect``: the broker id of the new master of a broker set, or None.

    Try the SyncStateSet (``sync_state_brokers``) first; only if that elects nobody and
    ``all_replica_brokers`` is given (``enableElectUncleanMaster``) try every replica. Within one
    candidate set (``tryElect``):

    1. keep the candidates ``is_valid(id)`` accepts (alive in the heartbeat table), in ascending id
       order; none left: None;
    2. the old master, if still a candidate and no *other* broker is preferred (``prefer_broker_id`` is
       None or equals it), stays master;
    3. a preferred broker wins if it is a candidate, else nobody (None);
    4. otherwise, with ``live_info``, the best candidate by its latest heartbeat: higher ``epoch``
       first, then higher ``max_offset``, then lower ``election_priority``; Java compares each pair as
       ``(int)(o2 - o1)`` (``java_int``: a difference beyond 2**31 wraps) and keeps the first of brokers
       that tie on all three;
    5. without ``live_info`` (None), the first candidate.
    """
    raise NotImplementedError("lab06.elect_master")
