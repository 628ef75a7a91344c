"""What the sandbox says to a learner (and to the instructor when the grader itself fails), marked for the
message catalogue.

rocketlab's own (no RocketMQ counterpart). :mod:`rocketlab.grading.sandbox` is the judge's side of the sandbox;
its sentences live here as ``N_()`` templates, said with :func:`say` in the judge's language (the worker sets
it from the runner's request). The sandbox's child, whose environment is scrubbed, is told the same language
in its configuration (``"lang"``: :func:`language`), so its own sentences (:mod:`rocketlab.grading.sandbox_child`)
match.
"""

from __future__ import annotations

from typing import Any

from rocketlab.i18n import N_, _, language

SETUP_PREFIX = N_("the grader could not start its sandbox: ")
ENDED_BEFORE_READY = N_("its process ended (exit code {code}) before it was ready: {tail}")
PRINTED_NOTHING = N_("it printed nothing")
SAID = N_("it said {what}")
KILLED_BY = N_("was killed by signal {signal}")
EXITED = N_("exited (exit code {code})")
PROCESS_ENDED = N_("the process running your code {how}: does your code call os._exit or crash the "
                   "interpreter? (a resource limit? the sandbox allows {limits})")
LIMITS = N_("{gib} GiB of address space, {cpu} s of CPU, {nproc} processes, {fsize} MiB per file, {nofile} "
            "open files")
TOO_LONG = N_("your code sent more than 32 MiB in one answer")
GARBAGE = N_("garbage on the grader's channel: {what}")
UNKNOWN_CALLBACK = N_("garbage on the grader's channel: a call-back to an unknown function")
MALFORMED_ERROR = N_("garbage on the grader's channel: a malformed error")
BATCH_LENGTH = N_("garbage on the grader's channel: a batch of the wrong length")
MALFORMED_ANSWER = N_("garbage on the grader's channel: a malformed answer in a batch")
MALFORMED_DRAIN = N_("garbage on the grader's channel: a malformed drain")
MALFORMED_HANDLE = N_("garbage on the grader's channel: a malformed instance handle")
UNREADABLE = N_("your function returned something the grader cannot read: {why}")
NO_FRAMES = N_("{lab} passes no DataFrames")
CANNOT_PASS = N_("the grader could not pass an argument: {why}")


def say(template: str, **fields: Any) -> str:
    """``template`` (one of the above) in the current language, its fields filled."""
    return _(template).format(**fields)


__all__ = ["language", "say"]  # language: the judge's, which it tells the child
