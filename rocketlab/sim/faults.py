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

``FaultSchedule.parse(text)`` gives :class:`Fault` items; ``Cluster.apply_schedule`` plays them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketlab.errors import ConfigError

ACTIONS = ("crash", "crash!", "host_down", "restart", "partition", "heal", "pause", "resume", "drop")


@dataclass(frozen=True)
class Fault:
    """One fault at virtual time ``at_ms``; ``groups`` for partitions, ``targets`` otherwise."""

    at_ms: int
    action: str
    targets: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()

    def __str__(self) -> str:
        if self.action == "partition":
            return f"{self.at_ms} partition " + " | ".join(" ".join(g) for g in self.groups)
        if self.action == "drop":
            return " ".join([f"{self.at_ms} drop {self.targets[0]} -> {self.targets[1]}", *self.targets[2:]])
        return " ".join([str(self.at_ms), self.action, *self.targets])


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
    where = f"fault schedule line {lineno} ({line.strip()!r})"
    if len(words) < 2:
        raise ConfigError(f"{where}: expected 'AT_MS ACTION [TARGETS]'")
    try:
        at_ms = int(words[0])
    except ValueError:
        raise ConfigError(f"{where}: time {words[0]!r} is not a whole number of ms") from None
    if at_ms < 0:
        raise ConfigError(f"{where}: time must be >= 0")
    action, rest = words[1], words[2:]
    if action not in ACTIONS:
        raise ConfigError(f"{where}: unknown action {action!r} (one of {', '.join(ACTIONS)})")
    if action == "heal":
        if rest:
            raise ConfigError(f"{where}: heal takes no targets")
        return Fault(at_ms, action)
    if action == "partition":
        groups = tuple(tuple(g.split()) for g in " ".join(rest).split("|"))
        if len(groups) < 2 or any(not g for g in groups):
            raise ConfigError(f"{where}: partition needs groups separated by '|'")
        return Fault(at_ms, action, groups=groups)
    if action == "drop":
        if not 3 <= len(rest) <= 5 or rest[1] != "->":
            raise ConfigError(f"{where}: drop takes 'SRC -> DST [MESSAGE [CODE]]' (SRC, DST may be *)")
        return Fault(at_ms, action, targets=(rest[0], rest[2], *rest[3:]))
    if not rest:
        raise ConfigError(f"{where}: {action} needs at least one node")
    return Fault(at_ms, action, targets=tuple(rest))
