"""Lab 04 exercises: DLedger's log replication.

``quorum_index`` and ``decide_compare`` are warm-ups (DLedger's rules, given); ``commit_rule`` asks
for a design of your own. Edit the bodies below, then check them from the notebook (``check("lab04.quorum_index")``) or from a
shell (``rocketlab grade lab04``). The grader plugs your code into the real leader (QuorumAckChecker,
EntryDispatcher) of simulated groups under crashes, partitions and lossy networks, judged by the
invariant checkers. Keep the names and signatures; you may add helpers.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketlab.dledger.entry_dispatcher import CompareDecision  # noqa: F401  (yours to use)
from rocketlab.dledger.protocol import DLedgerResponseCode


def quorum_index(water_marks: dict[str, int], term: int, committed_index: int, commit_only_current_term: bool,
                 term_of: Callable[[int], int]) -> int:
    """Warm-up: the QuorumAckChecker's commit index for the current ``term``.

    ``water_marks`` maps every member (the leader included) to the highest index it holds (-1: none).
    The quorum index is the highest index held by a majority: sort the marks from high to low and take
    the one at position ``len // 2``. DLedger commits that index as is (profiles ``dledger-0.3.1.2``
    and ``dledger-0.3.2``). With ``commit_only_current_term`` (profile ``raft``) the answer is the one
    your ``commit_rule`` below gives: design that one first, then call it here.
    """
    raise NotImplementedError("lab04.quorum_index")


def decide_compare(compare_index: int, code: DLedgerResponseCode, f_begin: int, f_end: int,
                   l_begin: int, l_end: int) -> CompareDecision:
    """The leader's EntryDispatcher after a follower answers a COMPARE push (``doCompare``, 0.1-0.3.x).

    The leader sent its entry at ``compare_index``; the follower answered ``code`` (SUCCESS: it holds
    that same entry; INCONSISTENT_STATE: it does not) with its log's first and last index ``f_begin``,
    ``f_end``. The leader's own log spans ``l_begin..l_end``. Return ``CompareDecision(rule, action,
    index)``, ``action`` being "append" (from ``index + 1``), "truncate" (the follower's log after
    ``index``) or "compare" (try ``index`` next):

    * SUCCESS and ``compare_index == f_end``: rule "match", append, ``compare_index``.
    * SUCCESS otherwise (the follower has more): "match-follower-longer", truncate at ``compare_index``.
    * INCONSISTENT_STATE, the two logs do not overlap (``f_end < l_begin`` or ``f_begin > l_end``):
      "no-intersection", truncate at ``l_begin``.
    * INCONSISTENT_STATE, the logs overlap, and ``compare_index < f_begin`` (the entry sent is below the
      follower's first entry, so the follower cannot compare it): "below-follower-begin", truncate at
      ``l_begin`` (the leader's first entry, not the follower's).
    * INCONSISTENT_STATE, ``compare_index > f_end`` (the follower's log is shorter): "above-follower-end",
      compare ``f_end`` next.
    * INCONSISTENT_STATE otherwise (``f_begin <= compare_index <= f_end``, a different entry there):
      "mismatch-step-back", compare ``compare_index - 1`` next.
    * Finally, for every rule but "match": take the compare index as it now stands (the new one after
      "above-follower-end" or "mismatch-step-back", the one sent after the others); if it is below
      ``l_begin``, append "+below-leader-begin" to the rule and truncate at ``l_begin``, even when the
      rule already truncates (``decide_compare(0, INCONSISTENT_STATE, 3, 9, 2, 9)`` is
      ``CompareDecision("below-follower-begin+below-leader-begin", "truncate", 2)``).
    """
    raise NotImplementedError("lab04.decide_compare")


def commit_rule(water_marks: dict[str, int], term: int, committed_index: int, term_of: Callable[[int], int]) -> int:
    """Design exercise: make Figure 8 safe. Return the leader's new commit index.

    The leader of ``term`` calls this on every pass of its QuorumAckChecker, in place of
    ``quorum_index``, on the ``dledger-0.3.1.2`` profile (no NOOP entry on leadership). ``water_marks``
    maps every member (the leader included) to the highest index it holds (-1: none);
    ``committed_index`` is what the leader has committed so far; ``term_of(index)`` is the term of the
    leader's entry at ``index`` (-1 if unreadable). DLedger commits the quorum index as ``quorum_index``
    does, and section 7 of the notebook shows a committed entry lost that way.

    Change the rule so that no committed entry is ever lost, whatever the crashes and elections, while
    writes still commit within a bound once a majority of members is up (a rule that never commits, or
    waits for every member, fails). The grader plays Figure 8, seeded schedules of its family and
    majority-only groups with your rule in every leader, judged by the invariant checkers; ``rocketlab
    grade lab04 --only lab04.commit_rule --stress 300`` tries 300 seeds.
    """
    raise NotImplementedError("lab04.commit_rule")

