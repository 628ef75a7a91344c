"""What a lab's check cell says when its answer is still ``...``, in the reader's language.

The check cells (:func:`rocketlab.grading.questions.check_question`) are code cells, the same in both twins of a
lab, so the line they print comes from the one catalogue rather than from the cell. rocketlab's own.
"""

from __future__ import annotations

from rocketlab.i18n import _


def not_answered(grade_id: str) -> str:
    """The line a check cell prints while its answer is ``...``: it prints rather than raises, so the
    student version of a lab runs top to bottom."""
    return _("{grade_id}: not answered yet: write your answer in place of ... above").format(grade_id=grade_id)
