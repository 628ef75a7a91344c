"""DLedgerServer: one DLedger group member as a sans-IO core (``rocketlab.core`` contract).

Theory of operation
-------------------
The server owns MemberState, the store (file or memory), the elector, the entry pusher (dispatchers,
QuorumAckChecker, EntryHandler) and the outbound RPC bookkeeping. Inputs:

* ``on_request(src, request_id, msg, now_ms)``: the common checks DLedger does for every request
  (``remote_id`` is me: UNKNOWN_MEMBER; ``group`` is mine: UNKNOWN_GROUP) run once, then a handler
  chosen by message type answers with a ``Reply`` - at once (votes, heartbeats, gets) or later (pushes
  buffered by the follower, client appends waiting for a quorum, leadership transfers);
* ``on_reply(src, request_id, msg_or_None, now_ms)``: the answer to one of our ``Request`` actions
  (``None`` = lost or timed out) goes to the continuation that sent it;
* ``on_tick(now_ms)`` at or after ``next_deadline_ms()``: elector pass, store flush/checkpoint,
  preferred-leader check, replication timers;
* :meth:`append`: a local client append (what RocketMQ's DLedgerCommitLog does), returning an
  :class:`~rocketlab.dledger.entry_pusher.AppendFuture` completed later.

After every input the pusher is pumped until quiescent and the store's trace events are drained into
the Output, after the actions. Persisting (vote, entries) happens inside the input, before the messages
that depend on it are returned. Never reads a clock, never sleeps, never touches sockets; randomness
only from the RNG handed in. Java file: ``DLedgerServer.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.dledger.config import DLedgerConfig, members_peers
from rocketlab.dledger.entry import MAGIC_NOOP, DLedgerEntry
from rocketlab.dledger.entry_pusher import AppendFuture, DLedgerEntryPusher
from rocketlab.dledger.leader_elector import DLedgerLeaderElector
from rocketlab.dledger.member_state import MemberState, Role
from rocketlab.dledger.protocol import (
    AppendEntryRequest,
    AppendEntryResponse,
    BatchAppendEntryRequest,
    DLedgerException,
    DLedgerResponseCode,
    GetEntriesRequest,
    GetEntriesResponse,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    MetadataRequest,
    MetadataResponse,
    PushEntryRequest,
    PushEntryResponse,
    RequestOrResponse,
    VoteRequest,
    VoteResponse,
    check,
)
from rocketlab.dledger.raft_elector import RaftLeaderElector
from rocketlab.dledger.rpc import DLedgerRpcService, Responder, reply_to
from rocketlab.dledger.store import DLedgerMemoryStore, DLedgerMmapFileStore, DLedgerStore
from rocketlab.errors import ConfigError, LocalProtocolError, RemoteProtocolError
from rocketlab.i18n import _

Code = DLedgerResponseCode

RESPONSE_TYPES: dict[type, type[RequestOrResponse]] = {
    VoteRequest: VoteResponse, HeartBeatRequest: HeartBeatResponse, PushEntryRequest: PushEntryResponse,
    AppendEntryRequest: AppendEntryResponse, BatchAppendEntryRequest: AppendEntryResponse,
    GetEntriesRequest: GetEntriesResponse, MetadataRequest: MetadataResponse,
    LeadershipTransferRequest: LeadershipTransferResponse,
}


class DLedgerServer(BaseCore):
    """Models DLedgerServer, DLedger 0.3.1.2: one member, as a sans-IO core.

    Simplified: no Netty server or client; no state machine caller; ``handleGet`` returns the one entry
    at ``begin_index`` (as 0.3.1.2 does); ``handlePull`` is absent (unimplemented in Java). The
    preferred-leader check runs from :meth:`on_tick` every ``check_preferred_leader_interval_ms``.
    Inspection: :attr:`role`, :attr:`term`, :attr:`leader_id`, :attr:`voted_for`,
    :attr:`ledger_begin_index`, :attr:`ledger_end_index`, :attr:`ledger_end_term`,
    :attr:`committed_index`, :attr:`committed_pos`, :meth:`entries`, :meth:`snapshot`.
    """

    def __init__(self, config: DLedgerConfig, store_dir: Path | None, rng: random.Random) -> None:
        if config.store_type == "FILE" and store_dir is None:
            raise ConfigError(_("store_type: FILE needs a store directory (or use store_type=MEMORY)"))
        self.config = config
        self.node_id = config.self_id
        file_dir = store_dir if config.store_type == "FILE" else None
        self.member_state = MemberState(config, file_dir)
        self.store: DLedgerStore = (DLedgerMmapFileStore(config, self.member_state, file_dir) if file_dir is not None
                                    else DLedgerMemoryStore(config, self.member_state))
        self.store.startup()
        self.rpc = DLedgerRpcService(config.rpc_timeout_ms)
        elector = RaftLeaderElector if config.raft_election else DLedgerLeaderElector
        self.elector = elector(config, self.member_state, self.rpc, rng)
        self.pusher = DLedgerEntryPusher(config, self.member_state, self.store, self.rpc)
        self.elector.role_listeners.append(self._on_role_change)
        self.next_check_preferred_ms: int | None = None
        self.last_input_ms = 0
        self.started = False
        self.stopped = False
        self.failed: Exception | None = None
        self.pump_batched = False
        """True after :meth:`enable_threads`: an input leaves the pusher due instead of running it."""
        self._pump_due = False
        self._handlers: dict[type, Callable[[Any, Responder, int, OutputBuilder], None]] = {
            VoteRequest: self.handle_vote, HeartBeatRequest: self.handle_heart_beat,
            PushEntryRequest: self.handle_push, AppendEntryRequest: self.handle_append,
            BatchAppendEntryRequest: self.handle_append, GetEntriesRequest: self.handle_get,
            MetadataRequest: self.handle_metadata, LeadershipTransferRequest: self.handle_leadership_transfer,
        }

    # ------------------------------------------------------------------ inspection
    @property
    def role(self) -> str:
        return self.member_state.role._name_  # Enum.name without its descriptor (read after every event)

    @property
    def term(self) -> int:
        return self.member_state.curr_term

    @property
    def leader_id(self) -> str | None:
        return self.member_state.leader_id

    @property
    def voted_for(self) -> str | None:
        return self.member_state.curr_vote_for

    @property
    def is_leader(self) -> bool:
        return self.member_state.is_leader()

    @property
    def ledger_begin_index(self) -> int:
        return self.store.ledger_begin_index

    @property
    def ledger_end_index(self) -> int:
        return self.store.ledger_end_index

    @property
    def ledger_end_term(self) -> int:
        return self.store.ledger_end_term

    @property
    def committed_index(self) -> int:
        return self.store.committed_index

    @property
    def committed_pos(self) -> int:
        return self.store.committed_pos

    def entries(self, first: int | None = None, last: int | None = None) -> list[DLedgerEntry]:
        return self.store.entries(first, last)

    def snapshot(self) -> dict[str, Any]:
        """A plain dict of the member's state (for notebooks and ``Cluster.node``)."""
        return {"node": self.node_id, "role": self.role, "term": self.term, "leader": self.leader_id,
                "voted_for": self.voted_for, "ledger_begin_index": self.ledger_begin_index,
                "ledger_end_index": self.ledger_end_index, "ledger_end_term": self.ledger_end_term,
                "committed_index": self.committed_index, "committed_pos": self.committed_pos}

    def add_role_change_handler(self, handler: Any) -> None:
        """Register a RoleChangeHandler: ``handle(term, role)`` runs synchronously on every role change."""
        self.elector.add_role_change_handler(handler)

    # ------------------------------------------------------------------ core inputs
    def on_start(self, now_ms: int) -> Output:
        def start() -> Output:
            self.started = True
            out = OutputBuilder()
            self.elector.trace_role(out)
            if self.config.preferred_leader_id_list:
                self.next_check_preferred_ms = now_ms + self.config.check_preferred_leader_interval_ms
            return self.finish_input(self._tick(now_ms, out), now_ms)

        return self._guarded(start, now_ms)

    def on_tick(self, now_ms: int) -> Output:
        return self._guarded(lambda: self.finish_input(self._tick(now_ms, OutputBuilder()), now_ms, pump=True),
                             now_ms)

    def _tick(self, now_ms: int, out: OutputBuilder) -> OutputBuilder:
        self.store.on_tick(now_ms)
        self.elector.on_tick(now_ms, out)
        if self.next_check_preferred_ms is not None and now_ms >= self.next_check_preferred_ms:
            self.next_check_preferred_ms = now_ms + self.config.check_preferred_leader_interval_ms
            self.check_preferred_leader(now_ms, out)
        return out

    def next_deadline_ms(self) -> int | None:
        if self.stopped:
            return None
        if self._pump_due:
            return self.last_input_ms
        best = None
        for t in (self.elector.next_deadline_ms(), self.pusher.next_deadline_ms(), self.store.next_deadline_ms(),
                  self.next_check_preferred_ms):
            if t is not None and (best is None or t < best):
                best = t
        return best

    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        handler = self._handlers.get(type(msg))
        if handler is None:
            raise RemoteProtocolError(f"{self.node_id}: {src} sent an unexpected request {type(msg).__name__}")

        def handle() -> Output:
            out = OutputBuilder()
            respond = reply_to(src, request_id)
            try:
                if msg.remote_id != self.node_id:
                    raise DLedgerException(Code.UNKNOWN_MEMBER, f"{msg.remote_id} != {self.node_id}")
                if msg.group != self.member_state.group:
                    raise DLedgerException(Code.UNKNOWN_GROUP, f"{msg.group} != {self.member_state.group}")
                handler(msg, respond, now_ms, out)
            except DLedgerException as e:
                respond(self.error_response(msg, e.code), out)
            return self.finish_input(out, now_ms)

        return self._guarded(handle, now_ms)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        def handle() -> Output:
            out = OutputBuilder()
            self.rpc.on_reply(src, request_id, msg, now_ms, out)
            return self.finish_input(out, now_ms)

        return self._guarded(handle, now_ms)

    def on_stop(self) -> None:
        """Clean shutdown (DLedgerServer.shutdown): flush, write the checkpoint, release files."""
        self.shutdown()

    def enable_threads(self) -> None:
        """Do what Java does on threads of its own as the TCP runtime can (``NodeContext.threads``):

        * the file store's fsyncs and checkpoint writes run on a thread (Java's FlushDataService;
          :mod:`rocketlab.dledger.store.flush_data_service`); a memory store has nothing to flush;
        * the pusher (Java's EntryHandler, EntryDispatcher and QuorumAckChecker threads) runs once after
          the inputs that arrived together, not after each: an input leaves it due at once
          (:meth:`next_deadline_ms`) and the runtime's next tick runs it, after the other requests and
          replies already read. Java's threads take what queued up while they were busy in the same way,
          so batch push gets batches and a follower answers a run of pushes in one go.

        The simulator never calls this: there the pusher runs after every input, as the tests pin.
        """
        if isinstance(self.store, DLedgerMmapFileStore):
            self.store.start_flush_service()
        self.pump_batched = True

    def shutdown(self) -> None:
        """Clean shutdown (DLedgerServer.shutdown): flush, write the checkpoint, release files."""
        if not self.stopped:
            self.stopped = True
            self.store.shutdown()

    def on_crash(self, lose_unflushed: bool = False) -> None:
        """A crash: release files and persist nothing more; with ``lose_unflushed`` (a power loss) the
        store also forgets what it wrote after its last flush. Volatile state dies with this object."""
        if not self.stopped:
            self.stopped = True
            if lose_unflushed:
                self.store.lose_unflushed()
                self.member_state.lose_unsynced(self.last_input_ms)
            self.store.close()

    def _check_alive(self) -> None:
        if self.failed is not None:
            raise LocalProtocolError(f"{self.node_id}: the core failed earlier and takes no input: {self.failed!r}")
        if self.stopped:
            raise LocalProtocolError(f"{self.node_id}: input after on_stop/shutdown")

    def _guarded(self, fn: Callable[[], Any], now_ms: int) -> Any:
        """Run one input; an unexpected exception (a bug, a broken disk) puts the core in an error state
        that refuses further input, since its state may be half-updated."""
        self._check_alive()
        self.member_state.clock_ms = now_ms
        self.last_input_ms = now_ms
        try:
            return fn()
        except (LocalProtocolError, RemoteProtocolError):
            raise
        except Exception as e:
            self.failed = e
            raise

    def finish_input(self, out: OutputBuilder, now_ms: int, pump: bool = False) -> Output:
        """End an input: pump the pusher until quiescent, finish a pending take-leadership wait, add the
        store's trace events. A driver that calls a component directly (a test forcing a role) ends with it.
        With :attr:`pump_batched` only a tick (``pump``) pumps; another input leaves the pump due at once."""
        if pump or not self.pump_batched:
            self._pump_due = False
            self.pusher.pump(now_ms, out)
        else:
            self._pump_due = True
        self.elector.check_take_leadership_wait(now_ms, out)
        for event in self.store.drain_events():
            out.events.append(event)
        return out.build()

    def error_response(self, request: RequestOrResponse, code: DLedgerResponseCode) -> RequestOrResponse:
        """The answer DLedgerServer builds from a DLedgerException: base info copied, code, my leader."""
        response_type = RESPONSE_TYPES[type(request)]
        base = request.base_info() | {"code": code, "leader_id": self.member_state.leader_id}
        return response_type(**base)

    # ------------------------------------------------------------------ handlers
    def handle_vote(self, request: VoteRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        respond(self.elector.handle_vote(request, False, now_ms, out), out)

    def handle_heart_beat(self, request: HeartBeatRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        respond(self.elector.handle_heart_beat(request, now_ms, out), out)

    def handle_push(self, request: PushEntryRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        if isinstance(self.elector, RaftLeaderElector):  # Raft: an append from the leader counts as a heartbeat
            self.elector.observe_leader(request.term, request.leader_id, now_ms, out)
        self.pusher.entry_handler.handle_push(request, respond, now_ms, out)

    def handle_get(self, request: GetEntriesRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        check(self.member_state.is_leader(), Code.NOT_LEADER)
        entry = self.store.get(request.begin_index)
        respond(GetEntriesResponse(group=self.member_state.group, entries=(entry,)), out)

    def handle_metadata(self, request: MetadataRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        ms = self.member_state
        respond(MetadataResponse(group=ms.group, leader_id=ms.leader_id, term=ms.curr_term, peers=dict(ms.peer_map)),
                out)

    def handle_append(self, request: AppendEntryRequest, respond: Responder, now_ms: int, out: OutputBuilder) -> None:
        """handleAppend: leader, no transfer, pending not full; a batch waits only for its last entry."""
        future = self.append_entries(request, now_ms, out)

        def answer(f: AppendFuture, out2: OutputBuilder) -> None:
            assert f.response is not None
            respond(f.response, out2)

        future.add_done_callback(answer, out)

    def append_entries(self, request: AppendEntryRequest, now_ms: int, out: OutputBuilder) -> AppendFuture:
        ms = self.member_state
        try:
            check(ms.is_leader(), Code.NOT_LEADER)
            check(ms.transferee is None, Code.LEADER_TRANSFERRING)
            term = ms.curr_term
            if self.pusher.is_pending_full(term):
                future = self.pusher.new_future(now_ms, term=term)
                future.complete(AppendEntryResponse(group=ms.group, code=Code.LEADER_PENDING_FULL, term=term,
                                                    leader_id=ms.self_id), out)
                return future
            if isinstance(request, BatchAppendEntryRequest):
                check(bool(request.batch_msgs), Code.REQUEST_WITH_EMPTY_BODYS, "BatchAppendEntryRequest with empty bodys")
                placed = [self.store.append_as_leader(DLedgerEntry(body=b)) for b in request.batch_msgs]
                return self.pusher.wait_ack(placed[-1], now_ms, positions=tuple(e.pos for e in placed))
            return self.pusher.wait_ack(self.store.append_as_leader(DLedgerEntry(body=request.body)), now_ms)
        except DLedgerException as e:
            future = self.pusher.new_future(now_ms)
            future.complete(AppendEntryResponse(**request.base_info()).with_(code=e.code, leader_id=ms.leader_id), out)
            return future

    def append(self, body: bytes | Sequence[bytes], now_ms: int,
               callback: Callable[[AppendFuture, OutputBuilder], None] | None = None) -> tuple[AppendFuture, Output]:
        """A local client append (``remote_id`` = self), as RocketMQ's DLedgerCommitLog calls handleAppend.

        ``body`` is one body or a list of bodies (a batch: one entry each, the future waits for the last).
        Returns the :class:`AppendFuture` - completed now if refused (NOT_LEADER, LEADER_PENDING_FULL,
        ...), else later by a tick or reply - and this input's Output. Completion runs ``callback``.
        """
        ms = self.member_state
        if isinstance(body, bytes | bytearray):
            request: AppendEntryRequest = AppendEntryRequest(group=ms.group, remote_id=ms.self_id, body=bytes(body))
        else:
            request = BatchAppendEntryRequest(group=ms.group, remote_id=ms.self_id, batch_msgs=tuple(body))

        def handle() -> tuple[AppendFuture, Output]:
            out = OutputBuilder()
            future = self.append_entries(request, now_ms, out)
            if callback is not None:
                future.add_done_callback(callback, out)
            return future, self.finish_input(out, now_ms)

        return self._guarded(handle, now_ms)

    # ------------------------------------------------------------------ leadership transfer
    def handle_leadership_transfer(self, request: LeadershipTransferRequest, respond: Responder, now_ms: int,
                                   out: OutputBuilder) -> None:
        ms = self.member_state
        if request.transfer_id == ms.self_id:
            check(ms.is_peer_member(request.transferee_id), Code.UNKNOWN_MEMBER, f"transferee {request.transferee_id}")
            check(ms.curr_term == request.term, Code.INCONSISTENT_TERM, f"{ms.curr_term} != {request.term}")
            check(ms.is_leader(), Code.NOT_LEADER)
            assert request.transferee_id is not None
            behind = self.store.ledger_end_index - self.pusher.get_peer_water_mark(request.term, request.transferee_id)
            check(behind < self.config.max_leadership_transfer_wait_index, Code.FALL_BEHIND_TOO_MUCH,
                  f"transferee falls behind by {behind}")
            self.elector.handle_leadership_transfer(request, respond, out)
        elif request.transferee_id == ms.self_id:
            check(request.transfer_id == ms.leader_id, Code.INCONSISTENT_LEADER,
                  f"{request.transfer_id} != {ms.leader_id}")
            self.elector.begin_take_leadership(request, respond, now_ms, out)
        else:
            respond(LeadershipTransferResponse(code=Code.UNEXPECTED_ARGUMENT), out)

    def transfer_leadership(self, transferee_id: str, now_ms: int) -> Output:
        """Ask this leader to hand leadership to ``transferee_id`` (an admin's LeadershipTransferRequest)."""
        ms = self.member_state
        request = LeadershipTransferRequest(group=ms.group, remote_id=ms.self_id, term=ms.curr_term,
                                            transfer_id=ms.self_id, transferee_id=transferee_id)

        def handle() -> Output:
            out = OutputBuilder()
            try:
                self.handle_leadership_transfer(request, lambda resp, o: None, now_ms, out)
            except DLedgerException:
                pass  # refused (not leader, unknown member, lagging transferee): nothing happens
            return self.finish_input(out, now_ms)

        return self._guarded(handle, now_ms)

    def time_out_now(self, now_ms: int) -> Output:
        """Expire this member's election timer now (:meth:`DLedgerLeaderElector.time_out_now`)."""

        def handle() -> Output:
            out = OutputBuilder()
            self.elector.time_out_now(now_ms, out)
            return self.finish_input(out, now_ms)

        return self._guarded(handle, now_ms)

    def check_preferred_leader(self, now_ms: int, out: OutputBuilder) -> None:
        """0.2.3+: a leader not in preferredLeaderIds hands over to the live preferred member lagging least."""
        ms = self.member_state
        prefs = self.config.preferred_leader_id_list
        if not ms.is_leader() or not prefs or ms.transferee is not None or ms.self_id in prefs:
            return
        targets = [p for p in prefs if ms.is_peer_member(p) and ms.peers_live_table.get(p) is True]
        if not targets:
            return
        lag = {p: self.store.ledger_end_index - self.pusher.get_peer_water_mark(ms.curr_term, p) for p in targets}
        best = min(targets, key=lambda p: (lag[p], p))
        if lag[best] < self.config.max_leadership_transfer_wait_index:
            request = LeadershipTransferRequest(term=ms.curr_term, transferee_id=best)
            self.elector.handle_leadership_transfer(request, lambda resp, o: None, out)

    # ------------------------------------------------------------------ role changes
    def _on_role_change(self, term: int, role: Role, now_ms: int, out: OutputBuilder) -> None:
        """``append_noop_on_leadership``: a new leader with uncommitted entries appends a NOOP entry."""
        store = self.store
        if (role is Role.LEADER and self.config.append_noop_on_leadership
                and store.committed_index < store.ledger_end_index and self.member_state.transferee is None):
            store.append_as_leader(DLedgerEntry(magic=MAGIC_NOOP, body=b""))
            self.pusher.update_peer_water_mark(self.member_state.curr_term, self.node_id, store.ledger_end_index)


# ---------------------------------------------------------------------- hosting
def resolve_config(ctx: NodeContext, config: DLedgerConfig | Mapping[str, Any] | None) -> DLedgerConfig:
    """The member's config: ``self_id`` = ``ctx.node_id``; peers from ``ctx.peers`` unless the config
    names them; MEMORY store when ``ctx.data_dir`` is None; ``ctx.options["dledger"]`` (a mapping of
    field names to values) overrides both."""
    members = sorted(set(ctx.peers) | {ctx.node_id})
    option = ctx.options.get("dledger")
    values: dict[str, Any] = config.to_dict() if isinstance(config, DLedgerConfig) else dict(config or {})
    values.update(option if isinstance(option, Mapping) else {})
    if isinstance(config, DLedgerConfig) and values.get("peers") == DLedgerConfig().peers:
        values.pop("peers")
    values.setdefault("peers", members_peers(members))
    values["self_id"] = ctx.node_id
    if ctx.data_dir is None:
        values["store_type"] = "MEMORY"
    return DLedgerConfig.load(values)


def make_dledger_server(ctx: NodeContext, config: DLedgerConfig | Mapping[str, Any] | None = None) -> DLedgerServer:
    """The :data:`~rocketlab.core.CoreFactory` for DLedger: ``ctx.data_dir`` is the member's store directory
    (None -> memory store) and ``ctx.rng("elector")`` the vote-delay randomness; in the TCP runtime
    (``ctx.threads``) with :meth:`DLedgerServer.enable_threads`."""
    cfg = resolve_config(ctx, config)
    store_dir = Path(ctx.data_dir) if ctx.data_dir is not None and cfg.store_type == "FILE" else None
    server = DLedgerServer(cfg, store_dir, ctx.rng("elector"))
    if ctx.threads:
        server.enable_threads()
    return server


def dledger_factory(config: DLedgerConfig | Mapping[str, Any] | None = None) -> Callable[[NodeContext], DLedgerServer]:
    """``make_dledger_server`` with the config bound: what a runtime's ``CoreFactory`` slot takes."""
    return lambda ctx: make_dledger_server(ctx, config)


__all__ = ["DLedgerServer", "dledger_factory", "make_dledger_server", "resolve_config"]
