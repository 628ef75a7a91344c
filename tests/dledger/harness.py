"""A small deterministic harness for DLedger tests: a few DLedgerServer cores wired by a priority queue.

Deliveries are ``(time, seq)``-ordered events; message delays are drawn from one seeded RNG; every
message goes through :class:`DLedgerCodec`. Requests resolve exactly once at the caller (reply or
``None`` at the timeout), as the runtime contract says. Faults: drop (a predicate on
``(src, dst, msg)``), partition/heal, crash/restart (restart = a new core from the same data dir).
Invariants from :mod:`rocketlab.dledger.invariants` are checked after every input; a violation raises
``AssertionError`` naming the seed. This is a test tool; the real simulator is ``rocketlab.sim``.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from rocketlab.core import NodeContext, Output, OutputBuilder, Reply, Request
from rocketlab.dledger import DLedgerCodec, DLedgerServer, make_dledger_server
from rocketlab.dledger.invariants import DLedgerInvariants
from rocketlab.dledger.protocol import ParseResult

FAST = {
    "heart_beat_time_interval_ms": 100, "max_heart_beat_leak": 3, "min_vote_interval_ms": 30,
    "max_vote_interval_ms": 100, "vote_round_wait_base_ms": 200, "max_wait_ack_time_ms": 1000,
    "max_push_time_out_ms": 100, "rpc_timeout_ms": 300, "push_commit_interval_ms": 100,
    "follower_push_timeout_ms": 100, "check_abnormal_future_interval_ms": 100,
    "dispatcher_error_backoff_ms": 50, "leak_check_interval_ms": 100, "check_point_interval": 300,
    "check_preferred_leader_interval_ms": 100, "leadership_transfer_wait_timeout": 300,
    "mapped_file_size_for_entry_data": 4096, "mapped_file_size_for_entry_index": 32 * 64,
    "fsync_policy": "never",
}
"""Timers shrunk about 20x (heartbeat 100 ms, follower timeout 300 ms) and tiny files."""


class Harness:
    """Cores ``ids`` with config ``config`` (overrides on top of :data:`FAST`), seeded by ``seed``."""

    def __init__(self, ids: Iterable[str] = ("n0", "n1", "n2"), seed: int = 1,
                 config: Mapping[str, Any] | None = None, data_dir: Path | None = None,
                 delay_ms: tuple[int, int] = (1, 5), check: bool = True) -> None:
        self.ids = sorted(ids)
        self.seed = seed
        self.config = {**FAST, **(config or {})}
        self.data_dir = data_dir
        self.delay_ms = delay_ms
        self.rng = random.Random(f"{seed}/harness/net")
        self.codec = DLedgerCodec()
        self.now = 0
        self._seq = 0
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self.nodes: dict[str, DLedgerServer | None] = dict.fromkeys(self.ids)
        self.incarnation = dict.fromkeys(self.ids, 0)
        self._tick_gen = dict.fromkeys(self.ids, 0)
        self.cut: set[tuple[str, str]] = set()
        self.drop: Callable[[str, str, Any], bool] | None = None
        self.events: list[dict[str, Any]] = []
        self.invariants = DLedgerInvariants() if check else None
        self.futures: list[Any] = []
        self.pending_replies: dict[int, tuple[Callable[[Any | None], None], type]] = {}
        self._token = 0

    # ------------------------------------------------------------------ lifecycle
    def ctx(self, node_id: str) -> NodeContext:
        node_dir = self.data_dir / node_id if self.data_dir is not None else None
        return NodeContext(node_id, tuple(self.ids), self.seed, node_dir, {})

    def start(self, *ids: str) -> Harness:
        for node_id in ids or self.ids:
            core = make_dledger_server(self.ctx(node_id), self.config)
            self.nodes[node_id] = core
            self.apply(node_id, core.on_start(self.now))
        return self

    def crash(self, node_id: str, lose_unflushed: bool = False) -> None:
        core = self.nodes[node_id]
        if core is not None:
            core.on_crash(lose_unflushed)
        self.nodes[node_id] = None
        self.incarnation[node_id] += 1
        self.record(None, "fault", action="crash", targets=[node_id])

    def restart(self, node_id: str) -> None:
        self.crash(node_id)
        self.record(None, "fault", action="restart", targets=[node_id])
        self.start(node_id)

    def partition(self, *groups: Iterable[str]) -> None:
        sets = [set(g) for g in groups]
        self.cut = {(a, b) for g in sets for h in sets if g is not h for a in g for b in h}
        self.record(None, "fault", action="partition", targets=sorted(a for g in sets for a in g))

    def heal(self) -> None:
        self.cut = set()
        self.record(None, "fault", action="heal", targets=[])

    # ------------------------------------------------------------------ plumbing
    def schedule(self, at: int, fn: Callable[[], None]) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, fn))

    def record(self, node: str | None, kind: str, **fields: Any) -> dict[str, Any]:
        self._seq += 1
        event = {"t": self.now, "seq": self._seq, "node": node, "kind": kind, **fields}
        self.events.append(event)
        if node is None and self.invariants is not None:
            self.invariants.observe([event])
        return event

    def link_ok(self, src: str, dst: str) -> bool:
        return (src, dst) not in self.cut

    def apply(self, node_id: str, out: Output) -> None:
        recorded = [self.record(node_id, t.kind, **t.fields) for t in out.trace]
        if self.invariants is not None and recorded:
            self.invariants.observe(recorded)
        for action in out.actions:
            if isinstance(action, Request):
                self._send_request(node_id, action)
            elif isinstance(action, Reply):
                self._send_reply(node_id, action)
            else:
                raise AssertionError(f"unexpected action {action!r}")
        self._arm(node_id)
        if self.invariants is not None:
            problems = self.invariants.check(self.live())
            assert not problems, f"seed={self.seed} t={self.now}: {problems}"

    def _arm(self, node_id: str) -> None:
        core = self.nodes[node_id]
        deadline = core.next_deadline_ms() if core is not None else None
        self._tick_gen[node_id] += 1
        if deadline is None:
            return
        gen, inc = self._tick_gen[node_id], self.incarnation[node_id]

        def tick() -> None:
            c = self.nodes[node_id]
            if c is not None and self._tick_gen[node_id] == gen and self.incarnation[node_id] == inc:
                self.apply(node_id, c.on_tick(self.now))

        self.schedule(max(deadline, self.now), tick)

    def _delay(self) -> int:
        return self.rng.randint(*self.delay_ms)

    def _send_request(self, src: str, req: Request) -> None:
        data = self.codec.encode(req.msg)
        state = {"done": False}
        inc = self.incarnation[src]

        def resolve(msg: Any | None) -> None:
            core = self.nodes[src]
            if state["done"] or core is None or self.incarnation[src] != inc:
                return
            state["done"] = True
            self.apply(src, core.on_reply(req.to, req.request_id, msg, self.now))

        def deliver() -> None:
            dst = self.nodes[req.to]
            if dst is None or not self.link_ok(src, req.to):
                return
            self._token += 1  # the id the responder sees: unique across incarnations of the caller
            self.pending_replies[self._token] = (resolve, type(req.msg))
            self.apply(req.to, dst.on_request(src, self._token, self.codec.decode(data), self.now))

        self.schedule(self.now + req.timeout_ms, lambda: resolve(None))
        if self.link_ok(src, req.to) and not (self.drop is not None and self.drop(src, req.to, req.msg)):
            self.schedule(self.now + self._delay(), deliver)

    def _send_reply(self, src: str, rep: Reply) -> None:
        entry = self.pending_replies.pop(rep.request_id, None)
        if entry is None or not self.link_ok(src, rep.to):
            return
        resolve, answers = entry
        if self.drop is not None and self.drop(src, rep.to, rep.msg):
            return
        data = self.codec.encode(rep.msg)
        self.schedule(self.now + self._delay(), lambda: resolve(self.codec.decode(data, answers)))

    # ------------------------------------------------------------------ running
    def step(self) -> bool:
        if not self._queue:
            return False
        at, _seq, fn = heapq.heappop(self._queue)
        self.now = max(self.now, at)
        fn()
        return True

    def run_for(self, ms: int) -> None:
        end = self.now + ms
        while self._queue and self._queue[0][0] <= end:
            self.step()
        self.now = end

    def run_until(self, predicate: Callable[[Harness], bool], timeout_ms: int = 30_000) -> None:
        end = self.now + timeout_ms
        while not predicate(self):
            if not self._queue or self._queue[0][0] > end:
                raise AssertionError(f"seed={self.seed}: condition not reached by t={end} ms; "
                                     f"state={self.states()}")
            self.step()

    # ------------------------------------------------------------------ forcing roles (DLedger's test harness)
    def force(self, node_id: str, role: str, term: int = 0, leader: str | None = None) -> None:
        """Put a member in ``role`` at ``term`` by hand, as ServerTestHarness does with the elector off."""
        core = self.node(node_id)
        ms, out = core.member_state, OutputBuilder()
        if ms.curr_term < term:
            ms.change_to_candidate(term)
            while ms.curr_term < term:
                ms.next_term()
        if role == "LEADER":
            core.elector.change_role_to_leader(term, self.now, out)
        else:
            assert leader is not None
            core.elector.change_role_to_follower(term, leader, self.now, out)
        self.apply(node_id, core.finish_input(out, self.now))

    def revote(self, node_id: str, term: int) -> None:
        """DLedger's ``testRevote(term)``: candidate at ``term`` with WAIT_TO_VOTE_NEXT, vote at once."""
        core = self.node(node_id)
        out = OutputBuilder()
        core.elector.change_role_to_candidate(term, self.now, out)
        core.elector.last_parse_result = ParseResult.WAIT_TO_VOTE_NEXT
        core.elector.next_time_to_request_vote = -1
        core.elector.last_pass_ms = None
        self.apply(node_id, core.finish_input(out, self.now))

    # ------------------------------------------------------------------ queries and client
    def live(self) -> dict[str, DLedgerServer]:
        return {i: c for i, c in self.nodes.items() if c is not None}

    def node(self, node_id: str) -> DLedgerServer:
        core = self.nodes[node_id]
        assert core is not None, f"{node_id} is down"
        return core

    def leaders(self) -> list[str]:
        return [i for i, c in self.live().items() if c.role == "LEADER"]

    def leader(self) -> str | None:
        """The unique live leader that a majority of live members follows (None otherwise)."""
        leaders = self.leaders()
        if len(leaders) != 1:
            return None
        lid = leaders[0]
        followers = [i for i, c in self.live().items() if c.role == "FOLLOWER" and c.leader_id == lid]
        return lid if len(followers) + 1 >= len(self.ids) // 2 + 1 else None

    def wait_leader(self, timeout_ms: int = 10_000) -> str:
        self.run_until(lambda h: h.leader() is not None, timeout_ms)
        leader = self.leader()
        assert leader is not None
        return leader

    def wait_stable(self, timeout_ms: int = 10_000) -> str:
        """Wait until one leader is followed by every other live member; returns its id."""
        def stable(h: Harness) -> bool:
            leaders = h.leaders()
            return len(leaders) == 1 and all(c.role == "FOLLOWER" and c.leader_id == leaders[0]
                                             for i, c in h.live().items() if i != leaders[0])
        self.run_until(stable, timeout_ms)
        return self.leaders()[0]

    def append(self, body: bytes | list[bytes], node_id: str | None = None) -> Any:
        target = node_id or self.leader() or self.ids[0]
        future, out = self.node(target).append(body, self.now)
        self.futures.append(future)
        self.apply(target, out)
        return future

    def states(self) -> dict[str, Any]:
        return {i: (c.snapshot() if c is not None else "down") for i, c in self.nodes.items()}

    def kinds(self, kind: str, node: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind and (node is None or e["node"] == node)]
