"""Schedules as text: one step a line, ``AT_MS ACTION ARGS`` (``#`` starts a comment).

Actions are the fault actions of :mod:`rocketlab.sim.faults` (``crash``, ``restart``, ``partition A B |
C``, ``heal``, ``pause``, ``resume``, ``drop``...) plus ``append NODE BODY`` (a client append at that
member, not waited for). Names such as ``S1`` or ``F`` stand for node ids (or groups of them) bound
when the schedule starts; in a partition ``others`` means every node the line does not name. Times are
ms after the schedule starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.scenarios.dledger_group import append_nowait
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.faults import ACTIONS as FAULT_ACTIONS
from rocketlab.sim.faults import parse_fault
from rocketlab.trace.faults import fault_kind

SCRIPT_ACTIONS = ("append",)


@dataclass(frozen=True)
class Step:
    """One schedule line: at ``at_ms`` (after the schedule starts) do ``action`` with ``words``."""

    at_ms: int
    action: str
    words: tuple[str, ...]
    line: str


def parse_script(text: str) -> list[Step]:
    """Parse a schedule (see the module docstring); ConfigError names the bad line."""
    steps = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = _("schedule line {lineno} ({line!r})").format(lineno=lineno, line=raw.strip())
        if len(words) < 2 or not words[0].isdigit():
            raise ConfigError(_("{where}: expected 'AT_MS ACTION ARGS'").format(where=where))
        action = words[1]
        if action not in FAULT_ACTIONS + SCRIPT_ACTIONS:
            raise ConfigError(_("{where}: unknown action {action!r} (one of {choices})").format(
                where=where, action=action, choices=", ".join(FAULT_ACTIONS + SCRIPT_ACTIONS)))
        if action == "append" and len(words) < 4:
            raise ConfigError(_("{where}: append takes NODE BODY").format(where=where))
        steps.append(Step(int(words[0]), action, tuple(words[2:]), raw.split("#", 1)[0].strip()))
    return sorted(steps, key=lambda s: s.at_ms)


@dataclass
class ScriptRun:
    """Plays a schedule on a cluster: ``names`` binds the schedule's names to a node id or a list of them
    (a name bound to an empty list drops out of the line, and a line left without nodes is skipped);
    ``start_ms`` is its time 0. ``futures`` holds each ``append``'s future by body (None when the node
    was down); ``played`` the steps as carried out, with node ids, as ``(t, text)``."""

    cluster: Cluster
    names: Mapping[str, str | list[str]]
    start_ms: int = 0
    futures: dict[str, AppendFuture | None] = field(default_factory=dict)
    played: list[tuple[int, str]] = field(default_factory=list)

    def schedule(self, steps: Sequence[Step]) -> None:
        for step in steps:
            self.cluster.scheduler.at(max(self.start_ms + step.at_ms, self.cluster.now_ms), self.play, step)

    def nodes(self, word: str) -> list[str]:
        bound = self.names.get(word, word)
        found = [bound] if isinstance(bound, str) else list(bound)
        for node in found:
            self.cluster.runtime.get(node)
        return found

    def play(self, step: Step) -> None:
        c = self.cluster
        if step.action == "append":
            node, body = self.nodes(step.words[0])[0], " ".join(step.words[1:])
            ok = c.alive(node) and not c.runtime.get(node).paused
            self.futures[body] = append_nowait(c, node, body.encode()) if ok else None
            self.played.append((c.now_ms, f"append {node} {body}" + ("" if ok else " (node down: skipped)")))
            return
        targets = self._targets(step)
        if targets is None:
            return
        text = " ".join([str(step.at_ms), step.action, *targets])
        c.apply(parse_fault(text))
        self.played.append((c.now_ms, text.split(" ", 1)[1]))

    def _targets(self, step: Step) -> list[str] | None:
        """The step's words with the script's names resolved to node ids, by the argument shape of its fault
        kind (:data:`rocketlab.trace.faults.FAULT_KINDS`); None when the step names no node it needs."""
        shape = fault_kind(step.action).args
        if shape == "none":
            return []
        if shape == "message":  # SRC -> DST [MESSAGE [CODE]]: only the two ends are names
            ends = step.words[:3]
            return [w if w in ("*", "->") else self.nodes(w)[0] for w in ends] + list(step.words[3:])
        if shape != "groups":
            found = [n for w in step.words for n in self.nodes(w)]
            return found or None
        groups = [g.split() for g in " ".join(step.words).split("|")]
        named = {n for g in groups for w in g if w != "others" for n in self.nodes(w)}
        others = [n for n in self.cluster.node_ids if n not in named]
        resolved = [others if g == ["others"] else [n for w in g for n in self.nodes(w)] for g in groups]
        resolved = [g for g in resolved if g]
        return [" | ".join(" ".join(g) for g in resolved)] if len(resolved) > 1 else None


def play(c: Cluster, text: str, names: Mapping[str, str | list[str]], start_ms: int | None = None) -> ScriptRun:
    """Schedule every step of ``text`` on ``c`` (time 0 = ``start_ms``, default now)."""
    run = ScriptRun(c, names, c.now_ms if start_ms is None else start_ms)
    run.schedule(parse_script(text))
    return run
