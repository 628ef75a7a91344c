"""DLedger (openmessaging/dledger 0.3.1.2, as RocketMQ 4.9.5 - 5.3 ship it): leader election, log
replication and the DLedger store, as sans-IO cores.

Map (one module per Java class, names in snake_case)
----------------------------------------------------
==========================  ====================================================================================
``config``                  DLedgerConfig, profiles ``dledger-0.3.1.2`` (default) / ``dledger-0.3.2`` / ``raft``
``protocol``                request/response dataclasses, DLedgerResponseCode, VoteResponse.Result, ...
``codec``                   DLedgerCodec: messages <-> bytes (RocketMQ remoting frame, JSON body)
``member_state``            MemberState (role, term, vote; the ``currterm`` file)
``elector_decisions``       handleVote / handleHeartBeat / vote-round / heartbeat-round decision tables
``leader_elector``          DLedgerLeaderElector (maintain_as_leader/follower/candidate, transfers)
``entry``, ``entry_coder``  DLedgerEntry and its byte layout; index slots
``store``                   DLedgerStore, DLedgerMmapFileStore (+ recovery), DLedgerMemoryStore
``entry_dispatcher``        EntryDispatcher (leader, per follower: COMPARE -> TRUNCATE -> APPEND)
``entry_handler``           EntryHandler (follower: out-of-order buffer, ordered apply)
``entry_pusher``            DLedgerEntryPusher, QuorumAckChecker, AppendFuture
``server``                  DLedgerServer (the member) and ``make_dledger_server`` (the core factory)
``invariants``              election safety, log matching, leader completeness, committed entries stable,
                            commit index monotone - reusable by any runtime's checker
==========================  ====================================================================================

Hosting a member (what a runtime does)
--------------------------------------
::

    from rocketlab.core import NodeContext
    from rocketlab.dledger import DLedgerCodec, make_dledger_server

    ctx = NodeContext("n0", ("n0", "n1", "n2"), seed=7, data_dir=Path("run/nodes/n0"))  # None -> memory
    core = make_dledger_server(ctx, {"heart_beat_time_interval_ms": 200, "profile": "dledger-0.3.1.2"})
    codec = DLedgerCodec()                      # encode every message at the network boundary
    out = core.on_start(now_ms)                 # then after every input:
    deadline = core.next_deadline_ms()          # call core.on_tick(t) at some t >= deadline

* ``make_dledger_server(ctx, config)``: ``config`` is a :class:`DLedgerConfig`, a mapping of field
  names (snake_case or Java camelCase) or None; ``self_id`` becomes ``ctx.node_id``; peers default to
  ``ctx.peers`` (sorted; addresses ``127.0.0.1:40911+k``); ``ctx.data_dir`` is the member's store
  directory (``data/``, ``index/``, ``currterm``, ``checkpoint``), None selects the memory store;
  ``ctx.options["dledger"]`` may carry overrides; the vote-delay randomness is ``ctx.rng("elector")``.
  ``dledger_factory(config)`` binds the config and gives a ``CoreFactory``.
* Actions are ``Request(to, msg, request_id, timeout_ms)`` and ``Reply(to, request_id, msg)`` only; the
  runtime must answer every ``Request`` with exactly one ``on_reply(src, request_id, msg_or_None, now)``
  (``None`` = lost/timed out). Replies may come in a much later Output (buffered pushes, appends).
* Crash = ``core.on_crash(lose_unflushed)`` (files released, nothing more persisted; with
  ``lose_unflushed`` the bytes written after the last flush are zeroed, a power loss); restart = a new
  core from the same ``data_dir``. ``on_stop()`` (= ``shutdown()``) is the clean stop that flushes and
  writes the checkpoint.
* Client writes: ``future, out = core.append(b"body", now_ms)`` (or a list of bodies for a batch). The
  :class:`AppendFuture` has ``done``, ``code`` and ``response`` (an AppendEntryResponse with index and
  pos); it completes in the Output of a later input and then calls the callbacks given to ``append`` or
  ``future.add_done_callback(fn)`` with ``(future, out_builder)``. Remote clients send an
  ``AppendEntryRequest`` (``remote_id`` = the leader) and get the response as a ``Reply``.
* With ``rocketlab.sim``: ``Cluster(ids, dledger_factory(config), DLedgerCodec(), ...)`` hosts the
  members; a client write is ``runtime.call(node, lambda core, now: keep(core.append(body, now)))``
  where ``keep`` stores the future and returns the Output; the checkers are
  ``invariants.DLedgerChecker(Cluster.live_cores)``.
* Inspection: ``core.role`` ("LEADER", "FOLLOWER", "CANDIDATE"), ``term``, ``leader_id``, ``voted_for``,
  ``ledger_begin_index``, ``ledger_end_index``, ``ledger_end_term``, ``committed_index``,
  ``committed_pos``, ``entries()``, ``snapshot()``; role changes also reach
  ``core.add_role_change_handler(obj_with_handle)``.
* Trace kinds emitted (fields of docs/trace.md): ``role``, ``term``, ``vote_request``, ``vote_response``,
  ``vote_round``, ``heartbeat``, ``append``, ``commit``, ``truncate`` (a recovery cut adds ``pos`` and
  ``reason``). Vote and heartbeat events are emitted by the candidate / leader (the side that sent the
  request), ``result``/``code`` being what came back (UNKNOWN / null when lost).
"""

from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.config import PROFILES, DLedgerConfig, members_peers
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.entry_pusher import AppendFuture
from rocketlab.dledger.member_state import MemberState, Role
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, PushType, VoteResponse, VoteResult
from rocketlab.dledger.server import DLedgerServer, dledger_factory, make_dledger_server

__all__ = [
    "PROFILES", "AppendFuture", "DLedgerCodec", "DLedgerConfig", "DLedgerEntry", "DLedgerResponseCode",
    "DLedgerServer", "MemberState", "ParseResult", "PushType", "Role", "VoteResponse", "VoteResult",
    "dledger_factory", "make_dledger_server", "members_peers",
]
