"""The Python side of the cluster viewer: it owns the simulated cluster, turns intents into Cluster calls
and keeps the history that makes going back in time and forking deterministic.

Every change a learner makes is an :class:`Intent` (virtual time, action, arguments). The cluster runs
only forward; the browser scrubs through the film on its own. An intent at an instant before the
cluster's clock **forks**: a new cluster is built from the same recipe (same seed), the intents before
that instant are replayed at their times, the clock is run to the instant and the new intent applied
(RaftScope's behaviour). :meth:`ViewSession.replay_code` prints the Python lines that rebuild the
exact same trace. Bad intents (unknown node, a crash of a node that is down, a stale intent for a
history that was forked away) are answered with a message; the session stays as it was.

Not a Java class: the kit's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.network import NETWORK_MODES, Latency
from rocketlab.viz.cluster_view.film import election_timer, film_event, make_film

MAX_NODES = 9
MAX_STEP_SEARCH_MS = 60_000
MAX_ADVANCE_MS = 600_000


@dataclass(frozen=True)
class Intent:
    """One thing the learner did at virtual time ``at_ms``: a Cluster method and its arguments."""

    at_ms: int
    action: str
    args: dict[str, Any] = field(default_factory=dict)

    def code(self) -> str:
        spec = ACTIONS[self.action]
        method, call_args = spec.call(self.args)
        words = [repr(a) for a in call_args] + [f"{k}={v!r}" for k, v in spec.kwargs.items()]
        return f"cluster.{method}({', '.join(words)})"


@dataclass(frozen=True)
class ActionSpec:
    """How an action maps to a Cluster call: which arguments it needs and what it calls."""

    needs: tuple[str, ...]
    call: Callable[[dict[str, Any]], tuple[str, tuple[Any, ...]]]
    node_must_be: str | None = None  # "alive", "down", "running" (alive and not paused), "paused"
    kwargs: dict[str, Any] = field(default_factory=dict)  # fixed keyword arguments of the call


ACTIONS: dict[str, ActionSpec] = {
    "crash": ActionSpec(("node",), lambda a: ("crash", (a["node"],)), "alive"),
    "restart": ActionSpec(("node",), lambda a: ("restart", (a["node"],)), "down"),
    "pause": ActionSpec(("node",), lambda a: ("pause", (a["node"],)), "running"),
    "resume": ActionSpec(("node",), lambda a: ("resume", (a["node"],)), "paused"),
    "time_out": ActionSpec(("node",), lambda a: ("time_out", (a["node"],)), "running"),
    "isolate": ActionSpec(("node",), lambda a: ("isolate", (a["node"],))),
    "transfer_leadership": ActionSpec(("node",), lambda a: ("transfer_leadership", (a["node"],)), "running"),
    "heal": ActionSpec((), lambda a: ("heal", ())),
    "cut_link": ActionSpec(("src", "dst"), lambda a: ("cut_link", (a["src"], a["dst"]))),
    "heal_link": ActionSpec(("src", "dst"), lambda a: ("heal_link", (a["src"], a["dst"]))),
    "drop_next": ActionSpec(("src", "dst"), lambda a: ("drop_next", (a["src"], a["dst"]))),
    "put": ActionSpec(("body",), lambda a: ("put", (a["body"].encode(),)), kwargs={"wait": False}),
    "set_network": ActionSpec(("mode", "latency"), lambda a: ("set_network", (a["mode"], a["latency"]))),
}


class ViewSession:
    """A cluster under the viewer's control: its recipe, the intents so far, the timer samples."""

    def __init__(self, cluster: Cluster) -> None:
        if cluster.recipe is None:
            raise RocketlabError("the viewer needs a cluster built by a Cluster constructor "
                                 "(Cluster.dledger(...), .master_slave(...), .dledger_brokers(...), .pingpong(...))")
        if cluster.now_ms != 0 or any(e["kind"] == "fault" for e in cluster.events):
            raise RocketlabError(f"the viewer needs a fresh cluster (this one has run to t={cluster.now_ms} ms): "
                                 "hand it over before running it, so every instant can be replayed")
        if not 1 <= len(cluster.node_ids) <= MAX_NODES:
            raise RocketlabError(f"the viewer draws 1 to {MAX_NODES} nodes, this cluster has {len(cluster.node_ids)}")
        self.recipe = cluster.recipe
        self.cluster = cluster
        self.intents: list[Intent] = []
        self.timers: list[dict[str, Any]] = []
        self.generation = 0
        self._last_timer: dict[str, tuple[Any, ...] | None] = {}
        self.puts = 0
        self._sample_timers()

    # --- running ----------------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.cluster.now_ms

    def _sample_timers(self) -> None:
        now = self.cluster.now_ms
        for node_id in self.cluster.node_ids:
            core = self.cluster.node(node_id) if self.cluster.alive(node_id) else None
            timer = election_timer(core) if core is not None else None
            last = self._last_timer.get(node_id)
            if timer is None:
                if last is not None:
                    self._last_timer[node_id] = None
                    self.timers.append({"t": now, "node": node_id, "what": None})
                continue
            what, end, start = timer
            if last is not None and last[0] == what and last[1] == end:
                continue
            begin = start if start is not None else now
            self._last_timer[node_id] = (what, end, begin)
            self.timers.append({"t": now, "node": node_id, "what": what, "start": begin, "end": end})

    def advance(self, to_ms: int) -> None:
        """Run the cluster to virtual time ``to_ms`` (events due then included), sampling the election
        timers after every kernel event. Raises what the cluster raises (an invariant violation when
        the cluster was built to raise)."""
        to_ms = min(int(to_ms), self.cluster.now_ms + MAX_ADVANCE_MS)
        scheduler = self.cluster.scheduler
        while True:
            next_time = scheduler.next_time()
            if next_time is None or next_time > to_ms:
                break
            scheduler.step()
            self._sample_timers()
        scheduler.run_until_time(to_ms)

    def step_event(self) -> int:
        """Run until the trace has at least one more event (at most a minute of virtual time); returns
        the time of the first new event (or the clock when none came)."""
        seen = len(self.cluster.events)
        scheduler = self.cluster.scheduler
        end = self.cluster.now_ms + MAX_STEP_SEARCH_MS
        while len(self.cluster.events) == seen:
            next_time = scheduler.next_time()
            if next_time is None or next_time > end:
                scheduler.run_until_time(end)
                break
            scheduler.step()
            self._sample_timers()
        events = self.cluster.events
        if len(events) == seen:
            return self.cluster.now_ms
        scheduler.run_until_time(events[seen]["t"])  # finish that millisecond: an intent there replays alike
        return events[seen]["t"]

    # --- intents ----------------------------------------------------------------------------
    def act(self, at_ms: int, action: str, **args: Any) -> None:
        """Carry out ``action`` at virtual time ``at_ms``: now if the clock is there (or behind: it runs
        to it first), after a fork if ``at_ms`` is in the past. RocketlabError names what is wrong; the
        session is then unchanged."""
        intent = self._validate_shape(at_ms, action, args)
        if intent.at_ms >= self.cluster.now_ms:
            self.advance(intent.at_ms)
            self._apply(intent)
            return
        fork = self._rebuild(intent.at_ms)
        fork._apply(intent)  # raises before anything of ours changed
        self._adopt(fork)

    def _validate_shape(self, at_ms: Any, action: str, args: dict[str, Any]) -> Intent:
        if action not in ACTIONS:
            raise RocketlabError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
        spec = ACTIONS[action]
        if action == "put":
            args = {"body": args.get("body") or f"message-{self.puts}"}
        if action == "set_network":
            args = {"mode": args.get("mode"), "latency": args.get("latency") or "constant:0"}
            if args["mode"] not in NETWORK_MODES:
                raise RocketlabError(f"network {args['mode']!r} is not one of {', '.join(NETWORK_MODES)}")
            Latency.parse(str(args["latency"]))
        missing = [n for n in spec.needs if args.get(n) in (None, "")]
        if missing:
            raise RocketlabError(f"{action} needs {', '.join(missing)}")
        for name in ("node", "src", "dst"):
            if name in spec.needs and args[name] not in self.cluster.node_ids:
                raise RocketlabError(f"{action}: unknown node {args[name]!r} (this cluster has "
                                     f"{', '.join(self.cluster.node_ids)})")
        if "src" in spec.needs and args["src"] == args["dst"]:
            raise RocketlabError(f"{action}: a link joins two different nodes")
        if isinstance(at_ms, bool) or not isinstance(at_ms, int) or at_ms < 0:
            raise RocketlabError(f"{action}: the instant must be a whole number of ms >= 0, got {at_ms!r}")
        return Intent(at_ms, action, {k: args[k] for k in spec.needs})

    def _apply(self, intent: Intent) -> None:
        """Carry out ``intent`` on this session's cluster now and record it."""
        cluster, spec = self.cluster, ACTIONS[intent.action]
        node = intent.args.get("node")
        if spec.node_must_be is not None:
            sim_node = cluster.runtime.get(node)
            state = "down" if not sim_node.alive else "paused" if sim_node.paused else "running"
            wanted = spec.node_must_be
            ok = (state == wanted or (wanted == "alive" and state != "down"))
            if not ok:
                raise RocketlabError(f"cannot {intent.action.replace('_', ' ')} {node}: it is {state}")
        method, call_args = spec.call(intent.args)
        getattr(cluster, method)(*call_args, **spec.kwargs)
        if intent.action == "put":
            self.puts += 1
        self.intents.append(intent)
        self._sample_timers()

    def _rebuild(self, at_ms: int) -> ViewSession:
        """A new session replaying this one's intents before ``at_ms`` and run to ``at_ms``."""
        fork = ViewSession(self.recipe.build())
        for intent in self.intents:
            if intent.at_ms > at_ms:
                break
            fork.advance(intent.at_ms)
            fork._apply(intent)
        fork.advance(at_ms)
        fork.generation = self.generation + 1
        return fork

    def _adopt(self, fork: ViewSession) -> None:
        old = self.cluster
        self.cluster, self.intents, self.timers = fork.cluster, fork.intents, fork.timers
        self._last_timer, self.puts, self.generation = fork._last_timer, fork.puts, fork.generation
        old.close()

    # --- output -----------------------------------------------------------------------------
    def replay_code(self) -> str:
        """Python lines that rebuild this session's trace event for event."""
        lines = ["from rocketlab.sim import Cluster", "", f"cluster = {self.recipe.code()}"]
        now = 0
        for intent in self.intents:
            if intent.at_ms > now:
                lines.append(f"cluster.run_for({intent.at_ms - now})  # t = {intent.at_ms} ms")
                now = intent.at_ms
            lines.append(intent.code())
        if self.cluster.now_ms > now:
            lines.append(f"cluster.run_for({self.cluster.now_ms - now})  # t = {self.cluster.now_ms} ms")
        return "\n".join(lines) + "\n"

    def film(self) -> dict[str, Any]:
        return make_film(self.cluster.events, self.cluster.describe(), self.timers, end_ms=self.cluster.now_ms,
                         nodes=self.cluster.node_ids, live=True, generation=self.generation)

    def film_events(self, start: int) -> list[dict[str, Any]]:
        profile = self.cluster.meta.get("profile")
        size = len(self.cluster.node_ids)
        return [film_event(e, size, profile) for e in self.cluster.events[start:]]
