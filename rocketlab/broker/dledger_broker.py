"""DLedgerBrokerCore: a broker whose CommitLog is a DLedger log - RocketMQ's automatic failover.

Theory of operation
-------------------
One core per broker of a DLedger group (``enableDLegerCommitLog=true``). It owns a
:class:`~rocketlab.broker.dledger_message_store.DLedgerMessageStore`, whose commit log owns the
member's :class:`~rocketlab.dledger.DLedgerServer`; the core drives that server (ticks, DLedger
requests and replies) and everything a broker adds around it:

* **roles**: every member starts as SLAVE (brokerId ``digits(selfId)+1``); the
  :class:`~rocketlab.broker.dledger_role_change_handler.DLedgerRoleChangeHandler` makes the DLedger
  leader a SYNC_MASTER (brokerId 0) once its log is committed and dispatched, and every other member a
  SLAVE of that leader. Trace: DLedger's own ``role`` events (LEADER, FOLLOWER, CANDIDATE) and the
  broker's (MASTER, SLAVE, with ``leader`` = the master);
* **puts** (SEND_MESSAGE or :meth:`put_message`): through the store and DLedger; a put is answered when
  a majority has the entry (PUT_OK) or DLedger gives up (see
  :data:`~rocketlab.broker.dledger_commit_log_status.CODE_TO_STATUS`); every answer is a ``put`` event;
* **reads** (PULL_MESSAGE): the master answers; a slave only with ``slaveReadEnable``. Consume queues
  are built from committed bytes right after each input (the reput);
* **SlaveSynchronize**: a slave pulls topics and consumer offsets from the current master;
* **group check** (kit addition): before its DLedger member takes part, a broker asks its peers for
  their group name and member list and waits until a majority of its members (itself included) agree;
  a peer that disagrees is reported as a ``config_error`` event and never counted, so brokers with
  conflicting ``dLegerPeers`` cannot form two majorities.

DLedger messages and broker requests share the node's one message port: one RocketMQ remoting codec
routes them by request code (:func:`dledger_broker_codec`). The addresses in ``dLegerPeers`` are
therefore not used for connections (only its member ids, which must match the node's peers).

Java: ``BrokerController`` (changeToMaster/changeToSlave), ``DLedgerRoleChangeHandler``,
``DLedgerCommitLog``.

Differences from Java 4.9.5:

* no name server, no schedule or transaction services, no broker registration; the store runs without
  threads (the core drives it and dispatches after every input), so the simulator stays deterministic;
* the group check (above, kit request code 60101) is a kit addition;
* after DLedger truncates below what was dispatched, stale consume-queue units stay until the next
  start's recovery trims them, as in Java; ``trim_consume_queues_on_truncation=True`` (a kit switch,
  off by default) trims them at once instead;
* while such stale units are ahead, the reput waits for committed bytes beyond its offset; if a new
  entry straddles that offset, the reput stalls there ("waiting at ...") until the restart, where Java's
  DLedger reput skips the rest of the read buffer (``reputFromOffset += result.getSize() - readSize``)
  and never dispatches those messages (see :mod:`rocketlab.broker.dledger_message_store`);
* ``rocketmq_version="5.3.3"`` switches the put-status mapping to 5.3.3's (see
  :data:`~rocketlab.broker.dledger_commit_log_status.CODE_TO_STATUS`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.broker.broker import (
    PutHandle,
    SlaveSynchronize,
    answer_metadata_request,
    finish_put,
    message_of,
    pull_from_store,
)
from rocketlab.broker.broker_outer_api import BrokerOuterAPI
from rocketlab.broker.client_family import CLIENT_FAMILY
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.dledger_commit_log import broker_id_of
from rocketlab.broker.dledger_commit_log_status import ROCKETMQ_VERSIONS
from rocketlab.broker.dledger_message_store import DLedgerMessageStore
from rocketlab.broker.dledger_role_change_handler import DLedgerRoleChangeHandler
from rocketlab.broker.group_check import (
    GROUP_CHECK_FAMILY,
    DLedgerGroupCheckRequest,
    DLedgerGroupCheckResponse,
)
from rocketlab.broker.processors import BrokerProcessors, ClientServing, ProcessorConfig
from rocketlab.broker.protocol import (
    BROKER_FAMILY,
    PullMessageRequest,
    PullMessageResponse,
)
from rocketlab.broker.send_path import SEND_PATH_REQUESTS, SendPath
from rocketlab.broker.send_protocol import SEND_BACK_FAMILY
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.core import EMPTY, BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.dledger.codec import DLEDGER_FAMILY
from rocketlab.dledger.config import DLedgerConfig, members_peers
from rocketlab.dledger.protocol import MESSAGE_TYPES as DLEDGER_MESSAGES
from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.namesrv.protocol import NAMESRV_FAMILY
from rocketlab.remoting.codec import RemotingCodec
from rocketlab.store import Message, PutMessageResult
from rocketlab.store.config import BrokerRole
from rocketlab.store.message_batch import MessageExtBatch

SYNC_REQUEST_BASE = 1 << 40  # request ids of SlaveSynchronize (DLedger's own count up from 1)
CHECK_REQUEST_BASE = 1 << 41  # request ids of the group check
_DLEDGER_TYPES = frozenset(DLEDGER_MESSAGES)


def dledger_broker_codec() -> RemotingCodec:
    """The remoting codec of a broker on DLedger: it sends and serves DLedger's RPCs, the broker's requests
    and the group check on its one message port, and registers with name servers."""
    return RemotingCodec((DLEDGER_FAMILY, BROKER_FAMILY, SEND_BACK_FAMILY, CLIENT_FAMILY, GROUP_CHECK_FAMILY,
                          NAMESRV_FAMILY), serves=("dledger", "broker", SEND_BACK_FAMILY.name, CLIENT_FAMILY.name,
                                                   "group-check"))


# ---------------------------------------------------------------------- config
@dataclass(frozen=True)
class DLedgerBrokerConfig:
    """``BrokerConfig`` + ``MessageStoreConfig`` keys of a broker on DLedger (RocketMQ names, snake_case).

    ``dleger_group`` (default: ``broker_name``, as RocketMQ's docs recommend), ``dleger_peers`` (default:
    the node's peers) and ``dleger_self_id`` (default and required: the node id) are
    ``dLegerGroup``/``dLegerPeers``/``dLegerSelfId``. ``dledger`` overrides DLedgerConfig fields (timers,
    file sizes); ``profile`` is DLedger's (``dledger-0.3.1.2``, the default, ``dledger-0.3.2`` or ``raft``).

    Kit switches (no Java key):

    * ``trim_consume_queues_on_truncation`` (default False, as Java): when DLedger truncates its log
      below what was already dispatched, trim the consume queues there and dispatch again at once.
      Java (4.9.5 and 5.3.3) trims only in recovery (``DLedgerCommitLog.recover``,
      ``truncateDirtyLogicFiles``), so the stale units stay until the broker restarts;
    * ``rocketmq_version`` (``"4.9.5"``, the default, or ``"5.3.3"``): whose ``asyncPutMessage`` maps
      DLedger's WAIT_QUORUM_ACK_TIMEOUT (see :func:`~rocketlab.broker.dledger_commit_log_status.put_status_of`).
    """

    broker_name: str = "broker-a"
    dleger_group: str | None = None
    dleger_peers: str | None = None
    dleger_self_id: str | None = None
    profile: str = "dledger-0.3.1.2"
    dledger: Mapping[str, Any] = field(default_factory=dict)
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    slave_read_enable: bool = False
    slave_sync_interval_ms: int = 10_000
    slave_sync_first_delay_ms: int = 3_000
    role_change_poll_interval_ms: int = 100
    group_check_retry_ms: int = 1_000
    put_timeout_ms: int = 10_000
    store_path_root_dir: str | None = None
    store_options: dict[str, Any] = field(default_factory=dict)
    trim_consume_queues_on_truncation: bool = False
    rocketmq_version: str = "4.9.5"
    send: SendConfig = field(default_factory=SendConfig)
    processors: ProcessorConfig = field(default_factory=ProcessorConfig)
    """The client processors' keys (long polling, ...): :mod:`rocketlab.broker.processor_config`."""

    def __post_init__(self) -> None:
        if self.rocketmq_version not in ROCKETMQ_VERSIONS:
            raise ConfigError(_("{key}={value!r} is not one of {choices}").format(
                key="rocketmq_version", value=self.rocketmq_version, choices=", ".join(ROCKETMQ_VERSIONS)))

    def dledger_config(self, node_id: str, node_peers: tuple[str, ...]) -> DLedgerConfig:
        """The member's DLedgerConfig; ConfigError for a bad selfId or members that differ from the node's."""
        self_id = self.dleger_self_id or node_id
        broker_id_of(self_id)
        if self_id != node_id:
            raise ConfigError(_("dLegerSelfId={self_id!r} must equal the node's selfId={node_id!r}: DLedger RPCs "
                                "travel on the node's message port").format(self_id=self_id, node_id=node_id))
        members = sorted(set(node_peers) | {node_id})
        values = {"group": self.dleger_group or self.broker_name, "self_id": self_id,
                  "peers": self.dleger_peers or members_peers(members), "profile": self.profile,
                  "mapped_file_size_for_entry_data": self.mapped_file_size_commit_log, **self.dledger}
        config = DLedgerConfig.load(values)
        for member in config.peer_ids:
            broker_id_of(member)
        if sorted(config.peer_ids) != members:
            raise ConfigError(_("dLegerPeers members {members} differ from the node's peers {peers}: list the same ids "
                                "in both").format(members=sorted(config.peer_ids), peers=members))
        return config


# ---------------------------------------------------------------------- the group check
class GroupCheck:
    """Kit addition (see the module docstring): ask every peer for its group and members, retry every
    ``retry_ms`` until a majority (self included) agrees; disagreements are reported once per peer."""

    def __init__(self, node_id: str, group: str, members: tuple[str, ...], retry_ms: int) -> None:
        self.node_id = node_id
        self.group = group
        self.members = members
        self.retry_ms = retry_ms
        self.agreed: set[str] = {node_id}
        self.disagreed: dict[str, str] = {}
        self.ids = itertools.count(CHECK_REQUEST_BASE)
        self.in_flight: dict[int, str] = {}
        self.next_round_ms: int | None = 0

    @property
    def members_text(self) -> str:
        return ",".join(self.members)

    @property
    def confirmed(self) -> bool:
        return len(self.agreed) > len(self.members) // 2

    def on_tick(self, now_ms: int, out: OutputBuilder) -> None:
        if self.confirmed or self.next_round_ms is None or now_ms < self.next_round_ms:
            return
        self.next_round_ms = now_ms + self.retry_ms
        request = DLedgerGroupCheckRequest(self.group, self.members_text, self.node_id)
        asked = set(self.in_flight.values())
        for peer in self.members:
            if peer not in self.agreed and peer not in self.disagreed and peer not in asked:
                request_id = next(self.ids)
                self.in_flight[request_id] = peer
                out.request(peer, request, request_id, timeout_ms=self.retry_ms)

    def next_deadline_ms(self) -> int | None:
        return None if self.confirmed else self.next_round_ms

    def compare(self, peer: str, group: str, members: str, out: OutputBuilder) -> bool:
        """Record whether ``peer``'s view agrees; a new disagreement is a ``config_error`` event."""
        if (group, members) == (self.group, self.members_text):
            self.agreed.add(peer)
            return True
        if peer not in self.disagreed:
            detail = (f"{peer} has dLegerGroup={group!r} members [{members}] but {self.node_id} has "
                      f"dLegerGroup={self.group!r} members [{self.members_text}]: {peer} is not counted")
            self.disagreed[peer] = detail
            out.trace("config_error", detail=detail)
        return False

    def on_reply(self, request_id: int, msg: Any, out: OutputBuilder) -> bool:
        peer = self.in_flight.pop(request_id, None)
        if peer is None:
            return False
        if isinstance(msg, DLedgerGroupCheckResponse):
            self.compare(peer, msg.group, msg.members, out)
        return True


# ---------------------------------------------------------------------- the broker core
class DLedgerBrokerCore(ClientServing, BaseCore):
    """One broker on DLedger (see the module docstring). Inspection: :attr:`role` (MASTER/SLAVE, what
    ``Cluster.leader()`` reads), :attr:`term`, :attr:`broker_id`, :attr:`master_id`, :attr:`server`,
    :attr:`store`, :meth:`describe`."""

    def __init__(self, ctx: NodeContext, config: DLedgerBrokerConfig, wall_clock: bool = False) -> None:
        if ctx.data_dir is None and not config.store_path_root_dir:
            raise ConfigError(_("broker {node} needs a data directory (storePathRootDir)").format(node=ctx.node_id))
        self.node_id = ctx.node_id
        self.config = config
        dledger_config = config.dledger_config(ctx.node_id, ctx.peers)
        self.now_ms = 0
        clock = None if wall_clock else (lambda: self.now_ms)
        root = Path(config.store_path_root_dir) if config.store_path_root_dir else Path(ctx.data_dir) / "store"
        self.store = DLedgerMessageStore.open_dledger(
            root, dledger_config, ctx.rng("elector"), clock=clock, rocketmq_version=config.rocketmq_version,
            broker_role=BrokerRole.SLAVE,
            mapped_file_size_commit_log=config.mapped_file_size_commit_log, **config.store_options)
        self.commit_log = self.store.commit_log
        self.server = self.store.dledger_server
        if ctx.threads:
            self.server.enable_threads()
        self.metadata = BrokerMetadata(root / "config")
        self.metadata.load()
        self.broker_role = "SLAVE"
        self.broker_id = self.commit_log.id
        self.master_id: str | None = None
        self.role_change_handler = DLedgerRoleChangeHandler(self, config.role_change_poll_interval_ms)
        self.server.add_role_change_handler(self.role_change_handler)
        self.slave_synchronize = SlaveSynchronize(self.metadata, config.slave_sync_interval_ms,
                                                  config.slave_sync_first_delay_ms, SYNC_REQUEST_BASE)
        self.group_check = GroupCheck(ctx.node_id, self.server.config.group, self.server.config.peer_ids,
                                      config.group_check_retry_ms)
        self.server_started = False
        self.tokens = itertools.count(1)
        self.pending: dict[int, PutHandle] = {}
        self.outer_api = BrokerOuterAPI.of(ctx, config.broker_name,
                                           lambda: (self.broker_id, self.metadata.topic_config_manager))
        self.send_path = SendPath(
            config.send, config.broker_name, self.metadata, self.store,
            lambda m, now, r: self.put_message(m, now, r, batch=m if isinstance(m, MessageExtBatch) else None),
            lambda: self.broker_role != "SLAVE", ctx.rng("send"), message_of, registrar=self.outer_api)
        self.processors = BrokerProcessors(self.store, self.metadata, config.processors,
                                           lambda: self.broker_role == "SLAVE", config.slave_read_enable)

    # ------------------------------------------------------------------ inspection
    @property
    def role(self) -> str:
        return "SLAVE" if self.broker_role == "SLAVE" else "MASTER"

    @property
    def term(self) -> int:
        return self.server.term

    @property
    def max_offset(self) -> int:
        return self.store.get_max_phy_offset()

    @property
    def config_errors(self) -> list[str]:
        return list(self.group_check.disagreed.values())

    def describe(self) -> dict[str, Any]:
        s = self.server
        return {"node": self.node_id, "role": self.broker_role, "broker_id": self.broker_id,
                "dledger_role": s.role, "term": s.term, "leader": s.leader_id,
                "ledger_end_index": s.ledger_end_index, "committed_index": s.committed_index,
                "max_offset": self.max_offset, "pending_puts": len(self.pending),
                "config_errors": len(self.group_check.disagreed)}

    # ------------------------------------------------------------------ life cycle
    def on_start(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        self.slave_synchronize.start(now_ms)
        self.processors.start(now_ms)
        out = OutputBuilder()
        self._trace_role(out)
        self.group_check.on_tick(now_ms, out)
        self.outer_api.start(now_ms, out)
        return self._finish(EMPTY, out, now_ms)

    def on_stop(self) -> None:
        self.send_path.stop()
        self.processors.shutdown()
        self.store.shutdown()

    def on_crash(self, lose_unflushed: bool) -> None:
        self.store.crash(lose_unflushed)

    def next_deadline_ms(self) -> int | None:
        times = [self.role_change_handler.next_deadline_ms(), self.group_check.next_deadline_ms(),
                 self.outer_api.next_deadline_ms()]
        if self.pending:
            times.append(min(h.start_ms for h in self.pending.values()) + self.config.put_timeout_ms)
        if self.server_started:
            times.append(self.server.next_deadline_ms())
        if self.broker_role == "SLAVE":
            times.append(self.slave_synchronize.next_deadline_ms(self.master_id))
        times.append(self.send_path.next_deadline_ms())
        times.append(self.processors.next_deadline_ms())
        present = [t for t in times if t is not None]
        return min(present) if present else None

    def on_tick(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        self.group_check.on_tick(now_ms, out)
        self.outer_api.on_tick(now_ms, out)
        server_out = self.server.on_tick(now_ms) if self.server_started else EMPTY
        if self.broker_role == "SLAVE":
            self.slave_synchronize.on_tick(self.master_id, now_ms, out)
        self._time_out_puts(now_ms, out)
        self.processors.on_tick(now_ms, out)
        return self._finish(server_out, out, now_ms) + self.send_path.on_tick(now_ms)

    def _time_out_puts(self, now_ms: int, out: OutputBuilder) -> None:
        """``waitForPutResult``: a put unanswered after ``put_timeout_ms`` is UNKNOWN_ERROR."""
        for token, handle in list(self.pending.items()):
            if now_ms - handle.start_ms >= self.config.put_timeout_ms:
                del self.pending[token]
                finish_put(handle, "UNKNOWN_ERROR", now_ms, out)

    def time_out_now(self, now_ms: int) -> Output:
        """The member's election timer expires now (the kit's "time out", see DLedgerServer)."""
        self.now_ms = now_ms
        server_out = self.server.time_out_now(now_ms) if self.server_started else EMPTY
        return self._finish(server_out, OutputBuilder(), now_ms)

    def transfer_leadership(self, transferee_id: str, now_ms: int) -> Output:
        """Ask the DLedger member to hand leadership to ``transferee_id`` (the admin's request)."""
        self.now_ms = now_ms
        server_out = self.server.transfer_leadership(transferee_id, now_ms) if self.server_started else EMPTY
        return self._finish(server_out, OutputBuilder(), now_ms)

    def _finish(self, server_out: Output, out: OutputBuilder, now_ms: int) -> Output:
        """End of every input: start DLedger once the group check agrees, dispatch what was committed,
        run queued role changes."""
        if not self.server_started and self.group_check.confirmed:
            self.server_started = True
            server_out = server_out + self.server.on_start(now_ms)
        if self.config.trim_consume_queues_on_truncation:
            self._guard_truncated_log()
        if self.store.dispatch_behind_bytes() > 0:
            self.store.reput()
        self.role_change_handler.run(now_ms, out)
        self.processors.after_input(now_ms, out)
        return server_out + out.build()

    def _guard_truncated_log(self) -> None:
        """Kit addition, on only with ``trim_consume_queues_on_truncation``: if DLedger truncated its
        log below what was already dispatched (committed entries lost: the DLedger profiles allow it,
        Raft's Figure 8), trim the consume queues there and dispatch again from that point, as Java's
        recovery does with ``truncateDirtyLogicFiles`` (Java does it only there, at the next start)."""
        end = self.commit_log.data_file_list.max_wrote_position
        reput = self.store.reput_message_service
        if reput is not None and reput.reput_from_offset > end >= self.commit_log.divided_commitlog_offset:
            self.store.truncate_dirty_logic_files(end)
            reput.reput_from_offset = end

    # ------------------------------------------------------------------ roles
    def _trace_role(self, out: OutputBuilder) -> None:
        leader = self.node_id if self.broker_role != "SLAVE" else self.master_id
        out.trace("role", term=self.server.term, role=self.role, leader=leader)

    def change_to_slave(self, now_ms: int, out: OutputBuilder) -> None:
        """``BrokerController.changeToSlave(id)``: brokerId = digits(selfId)+1, role SLAVE, metadata
        sync from the master (the DLedger leader, when known)."""
        master = self.server.leader_id if self.server.leader_id != self.node_id else None
        changed = (self.broker_role, self.master_id) != ("SLAVE", master)
        was_slave = self.broker_role == "SLAVE"
        self.broker_id = self.commit_log.id
        self.broker_role = "SLAVE"
        self.master_id = master
        self.store.set_broker_role(BrokerRole.SLAVE)
        if not was_slave:
            self.slave_synchronize.start(now_ms)
        if changed:
            self._trace_role(out)

    def change_to_master(self, role: str, now_ms: int, out: OutputBuilder) -> None:
        """``BrokerController.changeToMaster(SYNC_MASTER)``: stop syncing, brokerId 0, role SYNC_MASTER."""
        self.broker_role = role
        self.broker_id = 0
        self.master_id = self.node_id
        self.store.set_broker_role(BrokerRole(role))
        self._trace_role(out)
        self.send_path.start(now_ms)

    # ------------------------------------------------------------------ puts
    def put_message(self, msg: Message, now_ms: int, reply_to: tuple[str, int] | None = None,
                    batch: list[Message] | None = None) -> tuple[PutHandle, Output]:
        """A producer's put (or, with ``batch``, a batch of one topic and queue): the handle is done
        when DLedger answers. ``reply_to`` = (client, request id) answers a SEND_MESSAGE request."""
        self.now_ms = now_ms
        handle = PutHandle(next(self.tokens), msg.topic, msg.queue_id, now_ms, reply_to=reply_to)
        if self.broker_role != "SLAVE":
            self.metadata.topic_config_manager.create_topic_if_absent(msg.topic, now_ms)
        self.pending[handle.token] = handle

        def done(result: PutMessageResult, out: OutputBuilder) -> None:
            if handle.done:  # timed out earlier (waitForPutResult)
                return
            handle.result = result
            self.pending.pop(handle.token, None)
            finish_put(handle, result.status.name, self.now_ms, out)

        if batch is not None:
            server_out = self.store.async_put_batch(batch, now_ms, done)
        else:
            server_out = self.store.async_put(msg, now_ms, done)
        return handle, self._finish(server_out, OutputBuilder(), now_ms)

    # ------------------------------------------------------------------ requests
    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.now_ms = now_ms
        if type(msg) in _DLEDGER_TYPES:
            if not self.server_started:
                return EMPTY  # not a member yet (group check pending): the caller times out
            return self._finish(self.server.on_request(src, request_id, msg, now_ms), OutputBuilder(), now_ms)
        if isinstance(msg, SEND_PATH_REQUESTS):
            return self.send_path.on_request(src, request_id, msg, now_ms)
        out = OutputBuilder()
        if self.processors.on_request(src, request_id, msg, now_ms, out):
            pass
        elif isinstance(msg, DLedgerGroupCheckRequest):
            self.group_check.compare(msg.sender, msg.group, msg.members, out)
            out.reply(src, request_id, DLedgerGroupCheckResponse(self.group_check.group,
                                                                 self.group_check.members_text, self.node_id))
        else:
            answer_metadata_request(self.metadata, src, request_id, msg, out)
        return self._finish(EMPTY, out, now_ms)

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """A oneway request (UPDATE_CONSUMER_OFFSET as a push consumer sends it)."""
        self.now_ms = now_ms
        out = OutputBuilder()
        self.processors.on_message(src, msg, now_ms, out)
        return self._finish(EMPTY, out, now_ms)

    def pull_message(self, req: PullMessageRequest) -> PullMessageResponse:
        """The simulator's direct read (``Cluster.pull``): from the master; a slave answers only with
        slaveReadEnable (else: retry, ask 0). PULL_MESSAGE requests go to the processors."""
        if self.broker_role == "SLAVE" and not self.config.slave_read_enable:
            return PullMessageResponse("PULL_RETRY_IMMEDIATELY", suggest_which_broker_id=0)
        return pull_from_store(self.store, req, self.broker_id)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        self.now_ms = now_ms
        if request_id >= SYNC_REQUEST_BASE:
            out = OutputBuilder()
            self.outer_api.on_reply(request_id, msg, now_ms, out)  # the DLedger leader is its master
            if not self.slave_synchronize.on_reply(request_id, msg):
                self.group_check.on_reply(request_id, msg, out)
            return self._finish(EMPTY, out, now_ms)
        return self._finish(self.server.on_reply(src, request_id, msg, now_ms), OutputBuilder(), now_ms)


def make_dledger_broker(ctx: NodeContext, config: DLedgerBrokerConfig, wall_clock: bool = False) -> DLedgerBrokerCore:
    return DLedgerBrokerCore(ctx, config, wall_clock)


__all__ = [
    "DLedgerBrokerConfig", "DLedgerBrokerCore", "DLedgerGroupCheckRequest",
    "DLedgerGroupCheckResponse", "GroupCheck", "dledger_broker_codec", "make_dledger_broker",
]
