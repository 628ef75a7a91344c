"""AutoSwitchBrokerCore: a broker of RocketMQ 5's controller mode (``enableControllerMode=true``), its store
and AutoSwitch HA, as a sans-IO core. Roles are given to it (:meth:`change_to_master`,
:meth:`change_to_slave`, as ``ReplicasManager`` does after the controller decides); until then the broker
is **fenced** (#6508): it neither takes puts nor serves reads.

Models the controller branches of ``BrokerController``/``ReplicasManager.changeToMaster/changeToSlave``,
``CommitLog.asyncPutMessage``/``handleHA`` and ``CommitLog.getConfirmOffset`` (RocketMQ 5.3.3):

* **put** (only as master, brokerId 0, role SYNC_MASTER whatever the config says): with
  ``waitStoreMsgOK``, fewer in-sync replicas than ``minInSyncReplicas`` -> IN_SYNC_REPLICAS_NOT_ENOUGH
  before anything is written; then ``needAckNums`` = ALL (``allAckInSyncStateSet``) or ``inSyncReplicas``
  (default 1: PUT_OK at once); otherwise the put waits for the acks (``slaveTimeout`` 3 s ->
  FLUSH_SLAVE_TIMEOUT), see :class:`~rocketlab.ha.autoswitch_service.AutoSwitchHAService`;
* **confirmOffset** (what the reput, so consumers, may see): a master whose local SyncStateSet is itself
  alone, or without ``allAckInSyncStateSet``, confirms everything it has; otherwise the tracked value (the
  least ack of the members); a slave takes the master's, capped at what it has. It is kept in the store's
  checkpoint (written with every flush) and, after a restart, the consume queues are cut back to it;
* **changeToMaster(epoch)**: refused below the last epoch of the epoch file; connections and the HA client
  go; a half-written tail behind the dispatch point is cut; the confirm offset is recomputed; the epoch
  file gets ``(epoch, maxPhyOffset)`` (after dropping entries of that epoch or later); the set is adopted.
  Already master: only the new epoch entry (no connection reset - the #9689 window);
* **changeToSlave(masterHaAddress, epoch, masterId)**: refused below the last epoch; connections go;
  the HA client follows the new master (handshake, truncation to the consistent point, transfer).

Trace events: ``role`` (term = master epoch, role MASTER/SLAVE, leader = master node), ``put``, and those of
:mod:`rocketlab.ha.autoswitch_service` and :mod:`rocketlab.ha.autoswitch_client`.

Simplified: no NameServer registration or ``stateVersion``; the HA address of a broker is its node id;
the store's threads are driven by the core (flush and reput after inputs), as for the classic broker. In the
TCP runtime (``NodeContext.threads``) an ASYNC_FLUSH store flushes on threads of its own instead
(FlushRealTimeService, then the checkpoint with its confirm offset; FlushConsumeQueueService), and a
truncation waits for a flush under way; SYNC_FLUSH stays on the core's thread.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rocketlab.broker.broker import (
    REPUT_INTERVAL_MS,
    REPUT_SLICE_BYTES,
    PutHandle,
    finish_put,
    message_of,
    pull_from_store,
)
from rocketlab.broker.protocol import PullMessageRequest, PullMessageResponse, SendMessageRequest
from rocketlab.broker.replicas_manager import ReplicasManager, ReplicasManagerConfig
from rocketlab.controller.wire import NotifyBrokerRoleChanged
from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.errors import ConfigError
from rocketlab.ha.autoswitch_client import AutoSwitchHAClient
from rocketlab.ha.autoswitch_service import ALL_ACK_IN_SYNC_STATE_SET, AutoSwitchHAService
from rocketlab.ha.config import HAConfig
from rocketlab.ha.epoch_file_cache import EpochEntry, EpochFileCache
from rocketlab.store import Message, MessageStore, PutMessageStatus
from rocketlab.store.config import BrokerRole, FlushDiskType
from rocketlab.store.crash import simulate_crash

ROCKETMQ_VERSIONS = ("5.3.3", "5.1.0")
"""``rocketmq_version``: "5.3.3" (the default) or "5.1.0", before #5663's fix (no synchronizing union)."""


@dataclass(frozen=True)
class AutoSwitchBrokerConfig:
    """The controller-mode keys (RocketMQ names in snake_case) plus the store's.

    ``all_ack_in_sync_state_set`` (allAckInSyncStateSet, default False), ``in_sync_replicas`` (1),
    ``min_in_sync_replicas`` (1), ``ha_max_time_slave_not_catchup`` (15 s), ``enable_elect_unclean_master``
    is the controller's; ``ha`` holds the HA timers (heartbeat 5 s, housekeeping 20 s, slaveTimeout 3 s).
    ``rocketmq_version`` (kit switch): ``"5.3.3"``, or ``"5.1.0"`` for the master's SyncStateSet before
    #5663's fix (a proposal counts only once the controller's answer arrives). ``async_learner``
    (asyncLearner): as a slave, replicate but never join the SyncStateSet. ``sync_from_last_file``
    (syncFromLastFile): an empty slave starts at the master's last commit-log file instead of its first.
    """

    broker_name: str = "broker-a"
    cluster_name: str = "DefaultCluster"
    election_priority: int | None = None
    all_ack_in_sync_state_set: bool = False
    in_sync_replicas: int = 1
    min_in_sync_replicas: int = 1
    ha_max_time_slave_not_catchup: int = 15_000
    controller_heart_beat_timeout_mills: int = 10_000
    rocketmq_version: str = "5.3.3"
    async_learner: bool = False
    sync_from_last_file: bool = False
    flush_disk_type: str = "ASYNC_FLUSH"
    mapped_file_size_commit_log: int = 1024 * 1024
    flush_interval_commit_log: int = 500
    store_options: dict[str, Any] = field(default_factory=dict)
    ha: HAConfig = field(default_factory=HAConfig)

    def __post_init__(self) -> None:
        for name in ("in_sync_replicas", "min_in_sync_replicas", "ha_max_time_slave_not_catchup"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.rocketmq_version not in ROCKETMQ_VERSIONS:
            raise ConfigError(f"rocketmq_version={self.rocketmq_version!r} is not one of {', '.join(ROCKETMQ_VERSIONS)}")

    @classmethod
    def load(cls, values: Mapping[str, Any]) -> AutoSwitchBrokerConfig:
        """From snake_case or RocketMQ's camelCase keys (``allAckInSyncStateSet``); ``ha`` may be a mapping
        of HAConfig fields."""
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in known else re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
            if name not in known:
                raise ConfigError(f"{key}: unknown controller-mode broker key")
            kwargs[name] = HAConfig(**value) if name == "ha" and isinstance(value, Mapping) else value
        return cls(**kwargs)


class AutoSwitchBrokerCore(BaseCore):
    """One controller-mode broker (see the module docstring). Inspection: :attr:`role`, :attr:`term`
    (master epoch), :attr:`broker_id`, :attr:`store`, :attr:`epoch_cache`, :attr:`ha_service`,
    :attr:`ha_client`, :attr:`fenced`."""

    def __init__(self, ctx: NodeContext, config: AutoSwitchBrokerConfig, broker_id: int | None = None,
                 controllers: tuple[str, ...] = ()) -> None:
        if ctx.data_dir is None:
            raise ConfigError(f"broker {ctx.node_id} needs a data directory")
        self.node_id = ctx.node_id
        self.config = config
        self.broker_id = broker_id  # the controller's id for this broker (brokerControllerId)
        self.now_ms = 0
        root = Path(ctx.data_dir) / "store"
        self.store = MessageStore.open(
            root, threads=False, clock=lambda: self.now_ms, broker_role=BrokerRole.SLAVE,
            flush_disk_type=FlushDiskType(config.flush_disk_type),
            mapped_file_size_commit_log=config.mapped_file_size_commit_log, **config.store_options)
        self.epoch_cache = EpochFileCache(root / "epochFileCheckpoint")
        self.epoch_cache.init_cache_from_file()
        self.ha_service = AutoSwitchHAService(config.ha, self.store, self.epoch_cache,
                                              config.mapped_file_size_commit_log, broker_id,
                                              config.ha_max_time_slave_not_catchup,
                                              synchronizing_union=config.rocketmq_version != "5.1.0")
        self.ha_client: AutoSwitchHAClient | None = None
        self.store.commit_log.confirm_offset_rule = self._confirm_offset
        self._recover_to_confirm_offset()
        self.fenced = True
        self.role = "SLAVE"
        self.term = 0  # the master epoch this broker acts under
        self.master_id: str | None = None
        self.tokens = itertools.count(1)
        self.pending: dict[int, PutHandle] = {}
        self.next_flush_ms = 0
        self.flush_on_threads = ctx.threads and config.flush_disk_type == "ASYNC_FLUSH"
        """The store's flushes run on its own threads (TCP runtime, from :meth:`on_start`)."""
        self.reput_at: int | None = None
        self.replicas = ReplicasManager(ctx.node_id, controllers, ReplicasManagerConfig(
            config.cluster_name, config.broker_name, config.election_priority,
            config.controller_heart_beat_timeout_mills), self, root / "brokerIdentity",
            ctx.rng("replicas")) if controllers else None

    def _recover_to_confirm_offset(self) -> None:
        """Start-up in controller mode: the confirm offset comes back from the checkpoint
        (``confirmPhyOffset``) and the consume queues, which the store's recovery rebuilt from the whole
        log, are cut back to it (RocketMQ 5.1.1's fix of #6728): consumers never see what was not confirmed."""
        store = self.store
        assert store.store_checkpoint is not None and store.reput_message_service is not None
        confirm = min(store.store_checkpoint.confirm_phy_offset, store.get_max_phy_offset())
        store.commit_log.confirm_offset = confirm
        reput = store.reput_message_service
        if reput.reput_from_offset > confirm:
            store.truncate_dirty_logic_files(confirm)
            reput.reput_from_offset = confirm
            store.recover_topic_queue_table()

    # ------------------------------------------------------------------ what ReplicasManager drives
    def assign_broker_id(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.ha_service.local_broker_id = broker_id

    def become_master(self, epoch: int, sync_state_set: set[int], now_ms: int, out: OutputBuilder) -> None:
        out.extend(self.change_to_master(epoch, sync_state_set, now_ms))

    def become_slave(self, master: str, epoch: int, now_ms: int, out: OutputBuilder) -> None:
        out.extend(self.change_to_slave(master, epoch, now_ms))

    def heartbeat_facts(self) -> tuple[int, int, int]:
        """(last epoch of the epoch file, max offset, confirm offset) for the controller heartbeat."""
        return self.epoch_cache.last_epoch(), self.max_offset, self.store.get_confirm_offset()

    def _after(self, out: OutputBuilder) -> Output:
        """End of an input: hand the HA service's proposals to ReplicasManager; if the confirm offset moved
        past what was dispatched (an ack, a frame), the reput runs 1 ms later (ReputMessageService's pause)."""
        if self.replicas is not None and self.ha_service.proposals:
            self.replicas.on_proposals(self.ha_service.drain_proposals())
        if self.reput_at is None and not self.fenced and self.store.dispatch_behind_bytes() > 0:
            self.reput_at = self.now_ms + REPUT_INTERVAL_MS
        return out.build()

    # ------------------------------------------------------------------ confirm offset
    def _confirm_offset(self) -> int:
        """``CommitLog.getConfirmOffset`` in controller mode."""
        cl = self.store.commit_log
        if self.role == "MASTER" and not self.fenced:
            if len(self.ha_service.get_local_sync_state_set()) == 1 or not self.config.all_ack_in_sync_state_set:
                return cl.get_max_offset()
            if cl.confirm_offset < 0:
                cl.confirm_offset = self.ha_service.compute_confirm_offset()
        return cl.confirm_offset if cl.confirm_offset >= 0 else 0

    @property
    def max_offset(self) -> int:
        return self.store.get_max_phy_offset()

    def describe(self) -> dict[str, Any]:
        return {"node": self.node_id, "role": self.role, "epoch": self.term, "broker_id": self.broker_id,
                "fenced": self.fenced, "max_offset": self.max_offset,
                "confirm_offset": self.store.get_confirm_offset(),
                "sync_state_set": sorted(self.ha_service.get_sync_state_set()),
                "epochs": [(e.epoch, e.start_offset) for e in self.epoch_cache.get_all_entries()]}

    # ------------------------------------------------------------------ roles
    def change_to_master(self, epoch: int, sync_state_set: set[int] | frozenset[int], now_ms: int) -> Output:
        """``ReplicasManager.changeToMaster`` + ``AutoSwitchHAService.changeToMaster``."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if epoch < self.epoch_cache.last_epoch():
            out.trace("role_refused", role="MASTER", epoch=epoch, last_epoch=self.epoch_cache.last_epoch())
            return out.build()
        if self.role == "MASTER" and not self.fenced:  # changeToMasterWhenLastRoleIsMaster
            self._append_epoch(epoch)
        else:
            self.ha_service.destroy_connections(out, "changing to master")
            if self.ha_client is not None:
                self.ha_client.shutdown(out)
            cut = self.store.truncate_invalid_msg()
            self.role, self.fenced = "MASTER", False
            self.store.update_config(broker_role=BrokerRole.SYNC_MASTER)
            self.store.set_confirm_offset(self.ha_service.compute_confirm_offset())
            if cut >= 0:
                self.epoch_cache.truncate_suffix_by_offset(cut)
            self._append_epoch(epoch)
            self.store.reput()
            self.store.recover_topic_queue_table()
        self.ha_service.set_sync_state_set(sync_state_set)
        self.term, self.master_id = epoch, self.node_id
        out.trace("role", term=epoch, role="MASTER", leader=self.node_id)
        return out.build()

    def _append_epoch(self, epoch: int) -> None:
        if self.epoch_cache.last_epoch() >= epoch:
            self.epoch_cache.truncate_suffix_by_epoch(epoch)
        self.epoch_cache.append_entry(EpochEntry(epoch, self.store.get_max_phy_offset()))

    def change_to_slave(self, master_id: str, epoch: int, now_ms: int) -> Output:
        """``ReplicasManager.changeToSlave`` + ``AutoSwitchHAService.changeToSlave``: follow ``master_id``
        (its node id is its HA address)."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if epoch < self.epoch_cache.last_epoch():
            out.trace("role_refused", role="SLAVE", epoch=epoch, last_epoch=self.epoch_cache.last_epoch())
            return out.build()
        if self.role == "SLAVE" and not self.fenced and master_id == self.master_id:
            self.term = epoch  # changeToSlaveWhenMasterNotChange
            return out.build()
        self.ha_service.destroy_connections(out, "changing to slave")
        self.role, self.fenced, self.term, self.master_id = "SLAVE", False, epoch, master_id
        self.store.update_config(broker_role=BrokerRole.SLAVE)
        if self.ha_client is None:
            self.ha_client = AutoSwitchHAClient(self.config.ha, self.store, self.epoch_cache, self.broker_id,
                                                self.node_id, async_learner=self.config.async_learner,
                                                sync_from_last_file=self.config.sync_from_last_file)
        else:
            self.ha_client.reopen(now_ms)
        self.ha_client.update_ha_master_address(master_id)
        self.ha_client.on_tick(now_ms, out)
        out.trace("role", term=epoch, role="SLAVE", leader=master_id)
        return out.build()

    # ------------------------------------------------------------------ puts
    def put_message(self, msg: Message, now_ms: int, reply_to: tuple[str, int] | None = None
                    ) -> tuple[PutHandle, Output]:
        self.now_ms = now_ms
        out = OutputBuilder()
        handle = PutHandle(next(self.tokens), msg.topic, msg.queue_id, now_ms, reply_to=reply_to)
        if self.fenced or self.role != "MASTER":
            finish_put(handle, PutMessageStatus.SERVICE_NOT_AVAILABLE.name, now_ms, out)
            return handle, out.build()
        need_ha = msg.is_wait_store_msg_ok()
        if need_ha and self.ha_service.in_sync_replicas_nums() < self.config.min_in_sync_replicas:
            finish_put(handle, PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH.name, now_ms, out)
            return handle, out.build()
        handle.result = result = self.store.put_message(msg)
        self.store.reput()
        status: PutMessageStatus | None = result.status
        if status is PutMessageStatus.PUT_OK and need_ha:
            need = ALL_ACK_IN_SYNC_STATE_SET if self.config.all_ack_in_sync_state_set else self.config.in_sync_replicas
            if need == ALL_ACK_IN_SYNC_STATE_SET or need > 1:
                self.ha_service.submit_replica_request(result.wrote_offset + result.wrote_bytes, handle.token,
                                                       now_ms, need)
                self.pending[handle.token] = handle
                status = None
            self.ha_service.wakeup_all(now_ms, out)
            self._completed(self.ha_service.complete_waiting(now_ms), now_ms, out)
        if status is not None:
            finish_put(handle, status.name, now_ms, out)
        return handle, self._after(out)

    def _completed(self, done: list[tuple[Any, bool]], now_ms: int, out: OutputBuilder) -> None:
        for token, ok in done:
            handle = self.pending.pop(token, None)
            if handle is not None:
                finish_put(handle, "PUT_OK" if ok else "FLUSH_SLAVE_TIMEOUT", now_ms, out)

    # ------------------------------------------------------------------ timers
    def on_start(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        self.next_flush_ms = now_ms + self.config.flush_interval_commit_log
        if self.flush_on_threads:
            self.store.start_flush_services(after_flush=self._flush_checkpoint)
        out = OutputBuilder()
        out.trace("role", term=0, role="FENCED", leader=None)
        if self.replicas is not None:
            self.replicas.on_tick(now_ms, out)
        return out.build()

    def on_stop(self) -> None:
        self.store.shutdown()

    def on_crash(self, lose_unflushed: bool = False) -> None:
        simulate_crash(self.store, lose_unflushed)

    def _flush_checkpoint(self) -> None:
        if self.store.store_checkpoint is not None:  # confirmPhyOffset with the flushed log
            self.store.store_checkpoint.flush()

    def next_deadline_ms(self) -> int | None:
        times = [None if self.flush_on_threads else self.next_flush_ms, self.ha_service.next_deadline_ms(),
                 self.reput_at]
        if self.ha_client is not None:
            times.append(self.ha_client.next_deadline_ms())
        if self.replicas is not None:
            times.append(self.replicas.next_deadline_ms())
        return min((t for t in times if t is not None), default=None)

    def on_tick(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if now_ms >= self.next_flush_ms and not self.flush_on_threads:
            self.next_flush_ms = now_ms + self.config.flush_interval_commit_log
            self.store.flush()
            self._flush_checkpoint()
        self._completed(self.ha_service.on_tick(now_ms, out), now_ms, out)
        if self.ha_client is not None:
            self.ha_client.on_tick(now_ms, out)
        if self.reput_at is not None and now_ms >= self.reput_at:
            self.reput_at = None
            self.store.reput(REPUT_SLICE_BYTES)
            if self.store.dispatch_behind_bytes() > 0:
                self.reput_at = now_ms + REPUT_INTERVAL_MS
        if self.replicas is not None:
            self.replicas.on_tick(now_ms, out)
        return self._after(out)

    # ------------------------------------------------------------------ HA streams
    def on_stream_open(self, stream_id: Any, peer: str, accepted: bool, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if accepted and self.role == "MASTER" and not self.fenced:
            self.ha_service.accept(stream_id, peer, now_ms)
        elif not accepted and self.ha_client is not None and self.ha_client.owns(stream_id):
            self.ha_client.on_stream_open(now_ms, out)
        return out.build()

    def on_stream_data(self, stream_id: Any, data: bytes, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if stream_id in self.ha_service.connections:
            self._completed(self.ha_service.on_stream_data(stream_id, data, now_ms, out), now_ms, out)
        elif self.ha_client is not None and self.ha_client.owns(stream_id):
            if self.ha_client.on_stream_data(data, now_ms, out) and self.reput_at is None:
                self.reput_at = now_ms + REPUT_INTERVAL_MS
        return self._after(out)

    def on_stream_closed(self, stream_id: Any, reason: str, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if stream_id in self.ha_service.connections:
            self.ha_service.on_stream_closed(stream_id, out)
        elif self.ha_client is not None and self.ha_client.owns(stream_id):
            self.ha_client.on_stream_closed(reason, now_ms)
        return self._after(out)

    # ------------------------------------------------------------------ requests
    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.now_ms = now_ms
        if isinstance(msg, SendMessageRequest):
            return self.put_message(message_of(msg), now_ms, reply_to=(src, request_id))[1]
        out = OutputBuilder()
        if isinstance(msg, PullMessageRequest):
            out.reply(src, request_id, self.pull_message(msg))
        return out.build()

    def pull_message(self, req: PullMessageRequest) -> PullMessageResponse:
        """A fenced broker serves no reads; otherwise the consume queues, built up to the confirm offset."""
        if self.fenced:
            return PullMessageResponse("PULL_RETRY_IMMEDIATELY", suggest_which_broker_id=0)
        return pull_from_store(self.store, req, 0 if self.role == "MASTER" else self.broker_id)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if self.replicas is not None and self.replicas.owns(request_id):
            self.replicas.on_reply(request_id, msg, now_ms, out)
        return self._after(out)

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """NOTIFY_BROKER_ROLE_CHANGED from the controller leader."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if self.replicas is not None and isinstance(msg, NotifyBrokerRoleChanged):
            self.replicas.on_role_changed(msg.master_broker_id, msg.master_address, msg.master_epoch,
                                          msg.sync_state_set_epoch, set(msg.sync_state_set), now_ms, out)
        return self._after(out)
