"""A campaign's fault schedule: seeded, so one seed is one schedule, and a failing seed re-runs exactly.

Fault kinds (:data:`FAULTS`): the rows of :data:`rocketlab.trace.faults.CAMPAIGN_FAULTS`, which say what
each does and which trace fault actions it records when it goes on and off (:mod:`rocketlab.chaos.campaign`
carries them out).

A schedule covers the asked kinds, each at least once, in a seeded order, each step lasting 3-8 s with
1-3 s of quiet between steps; the targets are drawn from the system's nodes (a majority and a minority,
a bridge, a victim). :class:`Step` serialises to JSON (``schedule.json`` of a run).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.trace.faults import CAMPAIGN_FAULTS

FAULTS = tuple(fault.name for fault in CAMPAIGN_FAULTS)
NETWORK_FAULTS = frozenset(fault.name for fault in CAMPAIGN_FAULTS if fault.network)
LOCAL_FAULTS = frozenset(fault.name for fault in CAMPAIGN_FAULTS if not fault.needs_netns)
"""What a campaign on 127.0.0.1 (no network namespaces) can do: cuts become the relays' holds, and a node
cannot lose its interface."""


@dataclass(frozen=True)
class Step:
    """One fault: from ``at_ms`` (after the start of the schedule) for ``duration_ms``."""

    at_ms: int
    fault: str
    duration_ms: int
    targets: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()
    """Partition sides (``partition``: two groups; ``bridge``: two groups sharing the bridge node)."""
    params: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["targets"], out["groups"] = list(self.targets), [list(g) for g in self.groups]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        return cls(data["at_ms"], data["fault"], data["duration_ms"], tuple(data.get("targets", ())),
                   tuple(tuple(g) for g in data.get("groups", ())), dict(data.get("params", {})))

    def cuts(self, nodes: tuple[str, ...]) -> set[tuple[str, str]]:
        """The (src, dst) pairs a network cut of this step blocks."""
        if self.fault == "partition":
            a, b = self.groups
            return {(x, y) for x in a for y in b} | {(y, x) for x in a for y in b}
        if self.fault == "bridge":
            left, right = (set(g) for g in self.groups)
            bridge = left & right
            only_left, only_right = left - bridge, right - bridge
            return {(x, y) for x in only_left for y in only_right} | {(y, x) for x in only_left for y in only_right}
        if self.fault == "one-way":
            (victim,) = self.targets
            return {(victim, n) for n in nodes if n != victim}
        return set()


def make_schedule(seed: int, label: str, nodes: tuple[str, ...], kinds: tuple[str, ...],
                  rounds: int = 1, step_ms: tuple[int, int] = (3000, 8000),
                  quiet_ms: tuple[int, int] = (1000, 3000)) -> list[Step]:
    """``rounds`` passes over ``kinds`` in a seeded order (see the module docstring)."""
    unknown = [k for k in kinds if k not in FAULTS]
    if unknown:
        raise ConfigError(_("unknown fault kind(s) {unknown} (known: {known})").format(unknown=unknown, known=", ".join(FAULTS)))
    rng = random.Random(f"{seed}/{label}/schedule")
    order: list[str] = []
    for _round in range(rounds):
        batch = [k for k in kinds if not (k == "bridge" and len(nodes) < 3)]
        rng.shuffle(batch)
        order += batch
    steps, at = [], rng.randint(*quiet_ms)
    for fault in order:
        duration = rng.randint(*step_ms)
        steps.append(_step(rng, at, fault, duration, nodes))
        at += duration + rng.randint(*quiet_ms)
    return steps


def _step(rng: random.Random, at: int, fault: str, duration: int, nodes: tuple[str, ...]) -> Step:
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    if fault == "partition":
        minority = max(1, (len(nodes) - 1) // 2)
        return Step(at, fault, duration, groups=(tuple(sorted(shuffled[minority:])), tuple(sorted(shuffled[:minority]))))
    if fault == "bridge":
        bridge, rest = shuffled[0], shuffled[1:]
        half = len(rest) // 2
        return Step(at, fault, duration, targets=(bridge,),
                    groups=(tuple(sorted([bridge, *rest[:half]])), tuple(sorted([bridge, *rest[half:]]))))
    if fault in ("one-way", "isolate", "pause", "kill", "disk"):
        return Step(at, fault, duration, targets=(shuffled[0],))
    if fault == "latency":
        return Step(at, fault, duration, params={"delay_ms": rng.randint(50, 200), "jitter_ms": rng.randint(0, 100)})
    if fault == "loss":
        return Step(at, fault, duration, params={"loss": round(rng.uniform(0.05, 0.2), 3)})
    return Step(at, fault, duration, params={"reorder": round(rng.uniform(0.1, 0.3), 3)})
