"""The Python side of the cluster viewer: it owns the simulated cluster, turns intents into Cluster calls
and keeps the history that makes going back in time and forking deterministic.

A session opens a cluster as it stands: a fresh one (t = 0) or one that has run (its past is the film's
*base*, rebuilt on demand by its producer: the code that made it, or the calls made on it,
:attr:`Cluster.calls`, see :mod:`rocketlab.sim.replay`). Every change a learner makes is an
:class:`Intent` (virtual time, action, arguments). The cluster runs only forward; the browser scrubs
through the film on its own. An intent at an instant before the cluster's clock **forks**: a new cluster
is built from the same recipe (same seed), the base is rebuilt to the instant (or whole), the intents
before that instant are replayed at their times, the clock is run to the instant and the new intent
applied (RaftScope's behaviour). Every intent runs what is due at its instant first, so two intents at
one instant replay alike. :meth:`ViewSession.replay_code` prints the Python lines that rebuild the exact
same trace. Bad intents (unknown node, a crash of a node that is down, a stale intent for a history that
was forked away) are answered with a message; the session stays as it was.

Not a Java class: the kit's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.sim.cluster import Call, Cluster
from rocketlab.sim.network import NETWORK_MODES, Latency
from rocketlab.sim.replay import Producer, replay_calls, run_to, same_history
from rocketlab.trace.faults import FAULT_KINDS, FaultKind
from rocketlab.viz.cluster_view.film import election_timer, film_event, make_film

MAX_NODES = 9
MAX_APP_NODES = 16
"""An applications cluster (brokers, a name server, clients: ``meta["node_kinds"]``) is drawn smaller, so more fit."""
MAX_STEP_SEARCH_MS = 60_000
MAX_ADVANCE_MS = 600_000


@dataclass(frozen=True)
class Intent:
    """One thing the learner did at virtual time ``at_ms``: a Cluster method and its arguments."""

    at_ms: int
    action: str
    args: dict[str, Any] = field(default_factory=dict)

    def code(self) -> str:
        method, call_args, kwargs = ACTIONS[self.action].call(self.args)
        words = [repr(a) for a in call_args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return f"cluster.{method}({', '.join(words)})"


@dataclass(frozen=True)
class ActionSpec:
    """How an action maps to a Cluster call: the arguments it needs, those it may take, what it calls."""

    needs: tuple[str, ...]
    call: Callable[[dict[str, Any]], tuple[str, tuple[Any, ...], dict[str, Any]]]
    node_must_be: str | None = None  # "alive", "down", "running" (alive and not paused), "paused"
    optional: tuple[str, ...] = ()
    args: str = ""  # a fault kind's argument shape (rocketlab.trace.faults.ARG_SHAPES); "" for a put


# per argument shape of a fault kind: what the intent needs and the Cluster method's arguments from it
_INTENT_ARGS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], tuple[Any, ...]]]] = {
    "nodes": (("node",), lambda a: (a["node"],)),
    "node": (("node",), lambda a: (a["node"],)),
    "groups": (("groups",), lambda a: tuple(list(g) for g in a["groups"])),
    "none": ((), lambda a: ()),
    "link": (("src", "dst"), lambda a: (a["src"], a["dst"])),
    "message": (("src", "dst"), lambda a: (a["src"], a["dst"])),
    "network": (("mode", "latency"), lambda a: (a["mode"], a["latency"])),
}


def _fault_spec(kind: FaultKind) -> ActionSpec:
    """The intent of a fault kind the viewer offers: named after, and calling, its Cluster method."""
    needs, call_args = _INTENT_ARGS[kind.args]
    method, kwargs = kind.method or "", dict(kind.method_kwargs)
    node_must_be = kind.viewer.when if kind.viewer.menu == "node" else None
    return ActionSpec(needs, lambda a: (method, call_args(a), dict(kwargs)), node_must_be, args=kind.args)


def _put_call(a: dict[str, Any]) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    kwargs: dict[str, Any] = {"wait": False}
    if a.get("via"):
        kwargs["via"] = a["via"]
    return "put", (a["body"].encode(),), kwargs


ACTIONS: dict[str, ActionSpec] = {
    **{kind.method: _fault_spec(kind) for kind in FAULT_KINDS if kind.viewer.menu is not None and kind.method},
    # a client put (append) through the leader, or through the node ``via`` whatever it believes it is
    "put": ActionSpec(("body",), _put_call, optional=("via",)),
}
"""The learner's intents: the fault kinds the viewer offers (rows of
:data:`rocketlab.trace.faults.FAULT_KINDS` with a viewer menu), and a client put."""


def parse_groups(value: Any, nodes: list[str]) -> list[list[str]]:
    """A partition's sides from ``"n0 n1 | n2 n3"`` or ``[["n0", "n1"], ["n2", "n3"]]``; nodes named on
    no side form one more side. RocketlabError names what is wrong."""
    if isinstance(value, str):
        groups = [g.replace(",", " ").split() for g in value.split("|")]
    elif isinstance(value, (list, tuple)) and all(isinstance(g, (list, tuple)) for g in value):
        groups = [[str(n) for n in g] for g in value]
    else:
        raise RocketlabError(_("partition: sides are 'n0 n1 | n2 n3' or lists of node ids, got {value}").format(
            value=repr(value)))
    groups = [g for g in groups if g]
    named = [n for g in groups for n in g]
    unknown = [n for n in named if n not in nodes]
    if unknown:
        raise RocketlabError(_("partition: unknown node {node} (this cluster has {nodes})").format(
            node=repr(unknown[0]), nodes=", ".join(nodes)))
    if len(set(named)) != len(named):
        raise RocketlabError(_("partition: a node is on two sides"))
    rest = [n for n in nodes if n not in named]
    if rest:
        groups.append(rest)
    if len(groups) < 2:
        raise RocketlabError(_("partition: name at least two sides (or one side and leave the rest out)"))
    return groups


class ViewSession:
    """A cluster under the viewer's control: its recipe, its base (what it did before the viewer took
    it), the intents since, the timer samples."""

    def __init__(self, cluster: Cluster, *, producer: Producer | None = None,
                 base_code: Callable[[int], str] | None = None,
                 rebuild: Callable[[int], Cluster] | None = None) -> None:
        if cluster.recipe is None:
            raise RocketlabError("the viewer needs a cluster built by a Cluster constructor "
                                 "(Cluster.dledger(...), .master_slave(...), .dledger_brokers(...), .pingpong(...))")
        limit = MAX_APP_NODES if cluster.meta.get("node_kinds") else MAX_NODES
        if not 1 <= len(cluster.node_ids) <= limit:
            raise RocketlabError(f"the viewer draws 1 to {limit} nodes, this cluster has {len(cluster.node_ids)}")
        self.recipe = cluster.recipe
        self.cluster = cluster
        has_run = cluster.now_ms > 0 or bool(cluster.calls) or any(e["kind"] == "fault" for e in cluster.events)
        self.base_calls: list[Call] = list(cluster.calls) if producer is None else []
        self.producer: Producer | None = producer or (replay_calls(self.base_calls) if has_run else None)
        self.base_code = base_code or cluster.rebuild_code
        self.rebuild = rebuild or cluster.rebuild  # builds and runs the base to an instant itself
        self.base_end = cluster.now_ms  # the base is rebuilt up to here
        self.intents: list[Intent] = []
        self.timers: list[dict[str, Any]] = []
        self.generation = 0
        self._last_timer: dict[str, tuple[Any, ...] | None] = {}
        self.puts = 0
        self.marks: list[dict[str, Any]] = []  # moments to point at (a grader's failure)
        self.bookmarks: list[dict[str, Any]] = []  # named stops a lab sets: {"t", "name", "text"}
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
            raise RocketlabError(_("unknown action {action}: one of {actions}").format(
                action=repr(action), actions=", ".join(ACTIONS)))
        spec = ACTIONS[action]
        if action == "put":
            args = {"body": args.get("body") or f"message-{self.puts}", "via": args.get("via") or None}
            if args["via"] is not None and args["via"] not in self.cluster.node_ids:
                raise RocketlabError(_("{action}: unknown node {node} (this cluster has {nodes})").format(
                    action="put", node=repr(args["via"]), nodes=", ".join(self.cluster.node_ids)))
        if spec.args == "groups":
            args = {"groups": parse_groups(args.get("groups"), self.cluster.node_ids)}
        if spec.args == "network":
            args = {"mode": args.get("mode"), "latency": args.get("latency") or "constant:0"}
            if args["mode"] not in NETWORK_MODES:
                raise RocketlabError(_("network {mode} is not one of {modes}").format(
                    mode=repr(args["mode"]), modes=", ".join(NETWORK_MODES)))
            Latency.parse(str(args["latency"]))
        missing = [n for n in spec.needs if args.get(n) in (None, "")]
        if missing:
            raise RocketlabError(_("{action} needs {missing}").format(action=action, missing=", ".join(missing)))
        for name in ("node", "src", "dst"):
            if name in spec.needs and args[name] not in self.cluster.node_ids:
                raise RocketlabError(_("{action}: unknown node {node} (this cluster has {nodes})").format(
                    action=action, node=repr(args[name]), nodes=", ".join(self.cluster.node_ids)))
        if "src" in spec.needs and args["src"] == args["dst"]:
            raise RocketlabError(_("{action}: a link joins two different nodes").format(action=action))
        if isinstance(at_ms, bool) or not isinstance(at_ms, int) or at_ms < 0:
            raise RocketlabError(_("{action}: the instant must be a whole number of ms >= 0, got {at}").format(
                action=action, at=repr(at_ms)))
        kept = {k: args[k] for k in spec.needs}
        kept.update({k: args[k] for k in spec.optional if args.get(k) is not None})
        return Intent(at_ms, action, kept)

    def _apply(self, intent: Intent) -> None:
        """Carry out ``intent`` on this session's cluster now and record it."""
        cluster, spec = self.cluster, ACTIONS[intent.action]
        node = intent.args.get("node")
        if spec.node_must_be is not None:
            sim_node = cluster.runtime.get(node)
            state = N_("down") if not sim_node.alive else N_("paused") if sim_node.paused else N_("running")
            wanted = spec.node_must_be
            ok = (state == wanted or (wanted == "alive" and state != "down"))
            if not ok:
                raise RocketlabError(_("cannot {action} {node}: it is {state}").format(
                    action=intent.action.replace("_", " "), node=node, state=_(state)))
        method, call_args, kwargs = spec.call(intent.args)
        getattr(cluster, method)(*call_args, **kwargs)
        if intent.action == "put":
            self.puts += 1
        self.intents.append(intent)
        self._sample_timers()

    def _rebuild(self, at_ms: int) -> ViewSession:
        """A new session: the base rebuilt up to ``at_ms`` (checked against this history), this one's
        intents before ``at_ms`` replayed, run to ``at_ms``."""
        base_end = min(at_ms, self.base_end)
        cluster = self.rebuild(base_end) if self.rebuild is not None else self.recipe.build()
        if self.rebuild is not None:
            try:
                same_history(cluster, self.cluster.events, base_end)
            except BaseException:
                cluster.close()
                raise
        elif self.producer is not None:
            try:
                run_to(cluster, self.producer, base_end)
                same_history(cluster, self.cluster.events, base_end)
            except BaseException:
                cluster.close()
                raise
        fork = ViewSession.__new__(ViewSession)
        fork.recipe, fork.cluster, fork.base_calls, fork.producer = self.recipe, cluster, self.base_calls, self.producer
        fork.rebuild = self.rebuild
        fork.base_code, fork.base_end, fork.intents, fork.timers = self.base_code, base_end, [], []
        fork.generation, fork._last_timer, fork.marks = self.generation + 1, {}, self.marks
        fork.bookmarks = [b for b in self.bookmarks if b["t"] <= at_ms]  # later ones told the old story
        fork.puts = 0
        fork._sample_timers()
        try:
            for intent in self.intents:
                if intent.at_ms > at_ms:
                    break
                fork.advance(intent.at_ms)
                fork._apply(intent)
            fork.advance(at_ms)
            # whatever changed the cluster outside the viewer's intents (a direct call) would be lost: refuse
            same_history(cluster, self.cluster.events, at_ms)
        except BaseException:
            cluster.close()
            raise
        return fork

    def _adopt(self, fork: ViewSession) -> None:
        old = self.cluster
        self.cluster, self.intents, self.timers = fork.cluster, fork.intents, fork.timers
        self._last_timer, self.puts, self.generation = fork._last_timer, fork.puts, fork.generation
        self.base_end, self.bookmarks = fork.base_end, fork.bookmarks
        old.close()

    # --- output -----------------------------------------------------------------------------
    def replay_code(self) -> str:
        """Python lines that rebuild this session's trace event for event: the base (what the cluster
        did before the viewer took it, rebuilt to where this history leaves it), then every intent after
        what was due at its instant."""
        lines = ["from rocketlab.sim import Cluster"]
        if self.base_code is not None:
            lines += ["from rocketlab.sim.replay import run_to", "", self.base_code(self.base_end)]
        elif self.producer is not None:
            lines += ["from rocketlab.sim.replay import run_to", "", "", "def produce(cluster):",
                      "    \"\"\"What was done to the cluster before the viewer took it.\"\"\""]
            lines += ["    " + line for line in calls_code(self.base_calls)] or ["    pass"]
            lines += ["", "", f"cluster = run_to({self.recipe.code()}, produce, {self.base_end})"]
        else:
            lines += ["", f"cluster = {self.recipe.code()}"]
        now = self.base_end
        for intent in self.intents:
            lines.append(f"cluster.run_for({intent.at_ms - now})  # t = {intent.at_ms} ms (what is due then runs first)")
            now = intent.at_ms
            lines.append(intent.code())
        if self.cluster.now_ms > now:
            lines.append(f"cluster.run_for({self.cluster.now_ms - now})  # t = {self.cluster.now_ms} ms")
        return "\n".join(lines) + "\n"

    def film(self) -> dict[str, Any]:
        film = make_film(self.cluster.events, self.cluster.describe(), self.timers, end_ms=self.cluster.now_ms,
                         nodes=self.cluster.node_ids, live=True, generation=self.generation)
        film["marks"] = list(self.marks)
        film["bookmarks"] = list(self.bookmarks)
        return film

    def film_events(self, start: int) -> list[dict[str, Any]]:
        profile = self.cluster.meta.get("profile")
        size = len(self.cluster.node_ids)
        return [film_event(e, size, profile) for e in self.cluster.events[start:]]


def calls_code(calls: list[Call]) -> list[str]:
    """The lines making ``calls`` again at the positions they came: ``run_for`` to a drained instant,
    ``run_until`` the kernel's event count for a call made in the middle of a millisecond."""
    lines: list[str] = []
    now = 0
    for call in calls:
        if call.drained:
            lines.append(f"cluster.run_for({call.at_ms - now})  # t = {call.at_ms} ms")
        else:
            lines.append(f"cluster.run_until(lambda c: c.scheduler.events_run >= {call.events_run}, "
                         f"timeout_ms={call.at_ms - now + 1})  # t = {call.at_ms} ms, mid-millisecond")
        now = call.at_ms
        lines.append(call.code())
    return lines
