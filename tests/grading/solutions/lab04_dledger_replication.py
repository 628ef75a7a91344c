"""A learner's complete lab 04 (written from the exercise docstrings): full marks expected."""

from __future__ import annotations

from rocketlab.dledger.entry_dispatcher import CompareDecision
from rocketlab.dledger.protocol import DLedgerResponseCode


def quorum_index(water_marks, term, committed_index, commit_only_current_term, term_of):
    marks = sorted(water_marks.values(), reverse=True)
    index = marks[len(marks) // 2]
    if commit_only_current_term and index > committed_index and term_of(index) != term:
        return committed_index  # the rule of commit_rule below, for the quorum index
    return index


def commit_rule(water_marks, term, committed_index, term_of):
    """The highest index a majority holds whose entry is of the leader's own term; older entries below it
    commit with it (log matching), never by counting their own replicas (Raft's Figure 8)."""
    majority = len(water_marks) // 2 + 1
    for index in sorted(set(water_marks.values()), reverse=True):
        if index <= committed_index:
            break
        if sum(m >= index for m in water_marks.values()) >= majority and term_of(index) == term:
            return index
    return committed_index


def decide_compare(compare_index, code, f_begin, f_end, l_begin, l_end):
    if code == DLedgerResponseCode.SUCCESS and compare_index == f_end:
        return CompareDecision("match", "append", compare_index)
    truncate = None
    if code == DLedgerResponseCode.SUCCESS:
        rule, truncate = "match-follower-longer", compare_index
    elif f_end < l_begin or f_begin > l_end:
        rule, truncate = "no-intersection", l_begin
    elif compare_index < f_begin:
        rule, truncate = "below-follower-begin", l_begin
    elif compare_index > f_end:
        rule, compare_index = "above-follower-end", f_end
    else:
        rule, compare_index = "mismatch-step-back", compare_index - 1
    if compare_index < l_begin:
        rule, truncate = rule + "+below-leader-begin", l_begin
    if truncate is not None:
        return CompareDecision(rule, "truncate", truncate)
    return CompareDecision(rule, "compare", compare_index)

