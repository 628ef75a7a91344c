"""Fault schedules: the faults of a scenario written down as data, one line per fault.

Text form (``#`` starts a comment)::

    2000 crash n1            # crash (volatile state lost; flushed files stay)
    2000 crash! n1           # crash and lose what was written but not flushed
    2000 host_down n1        # the host fails: no connection closes, unflushed writes are lost
    4000 restart n1
    5000 partition n0 | n1 n2
    7000 heal
    8000 pause n2
    9000 resume n2
    9500 drop n0 -> n1       # the next message from n0 to n1 (either side may be *)
    9600 drop n1 -> n0 PushEntryResponse INCONSISTENT_STATE   # the next of that type (and code)

``FaultSchedule.parse(text)`` gives :class:`Fault` items; ``Cluster.apply_schedule`` plays them. The
words and the shapes of their arguments are the scheduled rows of :data:`rocketlab.trace.faults.FAULT_KINDS`
(rocketlab's own notation; no Java class).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.trace.faults import FAULT_KINDS, fault_kind

ACTIONS = tuple(kind.name for kind in FAULT_KINDS if kind.scheduled)
"""The words a schedule line may use: the rows of :data:`rocketlab.trace.faults.FAULT_KINDS` marked
``scheduled``."""


@dataclass(frozen=True)
class Fault:
    """One fault at virtual time ``at_ms``; ``groups`` for partitions, ``targets`` otherwise."""

    at_ms: int
    action: str
    targets: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()

    def __str__(self) -> str:
        shape = fault_kind(self.action).args if self.action in ACTIONS else "nodes"
        words = _FORMATS.get(shape, _nodes_text)(self)
        return " ".join([str(self.at_ms), self.action, *words])

    def call(self) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
        """The Cluster method that carries this fault out, its arguments and keyword arguments;
        ConfigError for an action that no schedule may name."""
        if self.action not in ACTIONS:
            raise ConfigError(_("unknown fault action {action!r} (one of {choices})").format(
                action=self.action, choices=", ".join(ACTIONS)))
        kind = fault_kind(self.action)
        args, kwargs = _CALLS[kind.args](self)
        return kind.method or "", args, {**dict(kind.method_kwargs), **kwargs}


class FaultSchedule(tuple):
    """An ordered tuple of :class:`Fault`; build with :meth:`parse` or from Fault items."""

    @classmethod
    def parse(cls, text: str) -> FaultSchedule:
        faults = [parse_fault(line, n) for n, line in enumerate(text.splitlines(), 1)
                  if line.split("#", 1)[0].strip()]
        return cls(sorted(faults, key=lambda f: f.at_ms))

    def __str__(self) -> str:
        return "\n".join(str(f) for f in self)


def parse_fault(line: str, lineno: int = 1) -> Fault:
    """Parse one schedule line; ConfigError names the line and what is wrong."""
    words = line.split("#", 1)[0].split()
    where = _("fault schedule line {lineno} ({line!r})").format(lineno=lineno, line=line.strip())
    if len(words) < 2:
        raise ConfigError(_("{where}: expected 'AT_MS ACTION [TARGETS]'").format(where=where))
    try:
        at_ms = int(words[0])
    except ValueError:
        raise ConfigError(_("{where}: time {time!r} is not a whole number of ms").format(where=where, time=words[0])) from None
    if at_ms < 0:
        raise ConfigError(_("{where}: time must be >= 0").format(where=where))
    action, rest = words[1], words[2:]
    if action not in ACTIONS:
        raise ConfigError(_("{where}: unknown action {action!r} (one of {choices})").format(
            where=where, action=action, choices=", ".join(ACTIONS)))
    return _PARSERS[fault_kind(action).args](at_ms, action, rest, where)


# --- one parser, text form and call per argument shape (rocketlab.trace.faults.ARG_SHAPES) ----------------
def _parse_none(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    if rest:
        raise ConfigError(_("{where}: {action} takes no targets").format(where=where, action=action))
    return Fault(at_ms, action)


def _parse_groups(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    groups = tuple(tuple(g.split()) for g in " ".join(rest).split("|"))
    if len(groups) < 2 or any(not g for g in groups):
        raise ConfigError(_("{where}: {action} needs groups separated by '|'").format(where=where, action=action))
    return Fault(at_ms, action, groups=groups)


def _parse_message(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    if not 3 <= len(rest) <= 5 or rest[1] != "->":
        raise ConfigError(_("{where}: {action} takes 'SRC -> DST [MESSAGE [CODE]]' (SRC, DST may be *)").format(
            where=where, action=action))
    return Fault(at_ms, action, targets=(rest[0], rest[2], *rest[3:]))


def _parse_link(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    if len(rest) != 3 or rest[1] != "->":
        raise ConfigError(_("{where}: {action} takes 'SRC -> DST'").format(where=where, action=action))
    return Fault(at_ms, action, targets=(rest[0], rest[2]))


def _parse_nodes(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    if not rest:
        raise ConfigError(_("{where}: {action} needs at least one node").format(where=where, action=action))
    return Fault(at_ms, action, targets=tuple(rest))


def _parse_node(at_ms: int, action: str, rest: list[str], where: str) -> Fault:
    if len(rest) != 1:
        raise ConfigError(_("{where}: {action} takes one node").format(where=where, action=action))
    return Fault(at_ms, action, targets=tuple(rest))


_PARSERS: dict[str, Callable[[int, str, list[str], str], Fault]] = {
    "none": _parse_none, "groups": _parse_groups, "message": _parse_message, "link": _parse_link,
    "nodes": _parse_nodes, "node": _parse_node,
}


def _nodes_text(fault: Fault) -> list[str]:
    return list(fault.targets)


_FORMATS: dict[str, Callable[[Fault], list[str]]] = {
    "groups": lambda f: [" | ".join(" ".join(g) for g in f.groups)],
    "message": lambda f: [f.targets[0], "->", *f.targets[1:]],
    "link": lambda f: [f.targets[0], "->", f.targets[1]],
}


def _message_call(fault: Fault) -> tuple[tuple[Any, ...], dict[str, Any]]:
    src, dst, msg, code = (None if t == "*" else t for t in (*fault.targets, None, None)[:4])
    return (src, dst, msg), {"code": code}


_CALLS: dict[str, Callable[[Fault], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "none": lambda f: ((), {}), "groups": lambda f: (f.groups, {}), "message": _message_call,
    "link": lambda f: (f.targets[:2], {}), "nodes": lambda f: (f.targets, {}), "node": lambda f: (f.targets, {}),
}
