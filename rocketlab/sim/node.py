"""SimNode: one simulated process as the simulator's runtime keeps it (rocketlab's own; the Java side has
a process).

Its core lives only while the node is alive; a restart builds a new one from the same factory and
context (a new *incarnation*: messages, requests and streams of an old incarnation are lost).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab.core import Codec, Core, CoreFactory, NodeContext


@dataclass(eq=False)
class SimNode:
    """One simulated process: its factory, context, codec and (while alive) its core."""

    node_id: str
    factory: CoreFactory
    ctx: NodeContext
    codec: Codec
    core: Core | None = None
    alive: bool = False
    paused: bool = False
    incarnation: int = 0
    tick_at: int | None = None
    tick_gen: int = 0
    last_tick_ms: int = -1
    deferred: list[tuple[Callable[..., None], tuple[Any, ...]]] = field(default_factory=list)
    accepted: int = 0
    sizer: Callable[[Any], int | None] | None = None  # codec.wire_size, if the codec has one
    silent: bool = False
    """Down by a host failure (no connection of it closed) rather than a process crash."""
    links: set[str] = field(default_factory=set)
    """Peers this incarnation has a message connection with (a message left for the other, either way)."""


@dataclass(frozen=True)
class NodeSetup:
    """What one node of a mixed cluster has of its own (:mod:`rocketlab.sim.applications`): its peers
    (default: every node), options added to the cluster's, and its codec (default: the cluster's)."""

    peers: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    codec: Codec | None = None
