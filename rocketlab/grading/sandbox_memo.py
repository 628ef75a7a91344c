"""The judge's memo of the learner's answers: the same call with the same arguments crosses the boundary once.

A simulated cluster asks the learner's decision function the same question many times (lab 04's churn
asks ``quorum_index`` 26,000 times, 7,000 of them distinct): each crossing is a round trip to the
sandbox, two context switches, most of a scenario's cost on a loaded machine. The exercises are
functions of their arguments (the boundary passes copies, so mutating them never changed what the judge
sees; a function that keeps state and answers the same question differently later is graded on its
first answer: ``docs/grading-trust.md``), so :class:`CallMemo` keeps
each ``call``'s reply, keyed by the request's own encoding, and answers the next identical request
without crossing.

A call that called back a function of the judge's (lab 04's ``term_of``) is kept with its call-backs
(arguments and the judge's answers, as encoded): on the next identical request the judge calls its own
functions again with the same arguments, and only if every answer is the same as before (so the
learner's function would have seen the same inputs and made the same calls) is the kept reply used;
otherwise the call crosses. What is kept is the reply the learner's function gave: no value computed in
the sandbox is trusted beyond that function's own answers. A kept reply is decoded afresh each time, so
the judge never shares one object between two answers. Only ``call`` is memoised: methods of a learner's
class (lab 01's parser) have state, and a table's batch (``map``) asks each case once anyway. What a
memoised call printed is printed once. rocketlab's own addition.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_CHARS = 64 * 1024 * 1024
"""Characters of keys kept before the memo starts afresh (a bound on the judge's memory)."""

Step = tuple[Any, Any, str]
"""One call-back: the handle, its arguments as encoded, the judge's reply as JSON text."""


class CallMemo:
    """Replies of ``call`` requests by their encoding, each with the call-backs it made."""

    def __init__(self) -> None:
        self.kept: dict[bytes, tuple[tuple[Step, ...], dict[str, Any]]] = {}
        self.chars = 0
        self.hits = 0
        self.misses = 0

    def replay(self, key: bytes, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any] | None:
        """The kept reply of request ``key`` if every call-back it made answers as before (``answer``: the
        judge's reply to a call-back message); None: the request must cross."""
        entry = self.kept.get(key)
        if entry is None:
            self.misses += 1
            return None
        steps, reply = entry
        for handle, args, said in steps:
            try:
                again = json.dumps(answer({"fn": handle, "args": args}))
            except Exception:  # noqa: BLE001 - a call-back that fails now: let the call cross and say so
                self.misses += 1
                return None
            if again != said:
                self.misses += 1
                return None
        self.hits += 1
        return reply

    def store(self, key: bytes, steps: list[Step], reply: dict[str, Any]) -> None:
        """Keep ``reply`` (a ``value`` or a ``raise``) of request ``key`` and the call-backs it made."""
        if set(reply) not in ({"value"}, {"raise"}):
            return
        if self.chars + len(key) > MAX_CHARS:
            self.kept.clear()
            self.chars = 0
        self.kept[key] = (tuple(steps), reply)
        self.chars += len(key)
