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
  checkpoint (written with every flush); after an abnormal exit recovery dispatches no further than it;
* **changeToMaster(epoch, syncStateSet)**: the set is adopted first; then a master that stays master only
  appends the new epoch entry (no connection reset - the #9689 window); any other broker goes through the
  HA service - refused below the last epoch of the epoch file (the broker is master all the same, as in
  Java); else connections and the HA client go, a half-written tail behind the dispatch point is cut, the
  confirm offset is computed for the adopted set, the epoch file gets ``(epoch, maxPhyOffset)`` (after
  dropping entries of that epoch or later), everything up to the confirm offset is dispatched and only then
  the queue-offset table is rebuilt (with ``compensateForHA``);
* **changeToSlave(masterHaAddress, epoch, masterId)**: the same master only moves the epoch; otherwise
  connections go and the HA client follows the new master (handshake, truncation to the consistent point,
  transfer) - unless the HA service refuses the epoch, which leaves the broker a slave following nobody.

Differences from 5.3.3 that were fixed, and the kit switches (``before_5798``,
``cut_consume_queues_on_every_restart``): the list in :mod:`rocketlab.controller`.

Trace events: ``role`` (term = master epoch, role MASTER/SLAVE, leader = master node), ``put``, and those of
:mod:`rocketlab.ha.autoswitch_service` and :mod:`rocketlab.ha.autoswitch_client`.

Simplified: no NameServer registration or ``stateVersion``; the HA address of a broker is its node id;
``compensateForHA`` runs where the queue-offset table is used - at start-up and in changeToMaster (a slave's
truncation rebuilds the table without it: a slave takes no puts); retention runs when
:meth:`AutoSwitchBrokerCore.delete_expired_files` is called (the kit's clocks are not wall clocks);
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

from rocketlab.broker.auto_switch_recovery import compensate_for_ha, consume_queue_ends, truncate_invalid_msg
from rocketlab.broker.broker import (
    REPUT_INTERVAL_MS,
    REPUT_SLICE_BYTES,
    PutHandle,
    finish_put,
    message_of,
    pull_from_store,
)
from rocketlab.broker.broker_outer_api import BrokerOuterAPI
from rocketlab.broker.processors import BrokerProcessors, ClientServing, ProcessorConfig
from rocketlab.broker.protocol import PullMessageRequest, PullMessageResponse
from rocketlab.broker.replicas_manager import ReplicasManager, ReplicasManagerConfig
from rocketlab.broker.send_path import SEND_PATH_REQUESTS, SendPath, loaded_metadata, store_put
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.controller.wire import NotifyBrokerRoleChanged
from rocketlab.core import BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.errors import ConfigError
from rocketlab.ha.autoswitch_client import AutoSwitchHAClient
from rocketlab.ha.autoswitch_service import ALL_ACK_IN_SYNC_STATE_SET, AutoSwitchHAService
from rocketlab.ha.config import HAConfig
from rocketlab.ha.epoch_file_cache import EpochEntry, EpochFileCache
from rocketlab.i18n import _
from rocketlab.store import Message, MessageStore, PutMessageStatus
from rocketlab.store.config import BrokerRole, FlushDiskType
from rocketlab.store.crash import simulate_crash

ROCKETMQ_VERSIONS = ("5.3.3",)
"""``rocketmq_version``: the release controller mode is modelled on (its record format too: 5.3.3 keeps the
separator after the last property). For the SyncStateSet of the releases before #5663's fix use
``before_5798``."""


@dataclass(frozen=True)
class AutoSwitchBrokerConfig:
    """The controller-mode keys (RocketMQ names in snake_case) plus the store's.

    ``all_ack_in_sync_state_set`` (allAckInSyncStateSet, default False), ``in_sync_replicas`` (1),
    ``min_in_sync_replicas`` (1), ``ha_max_time_slave_not_catchup`` (15 s), ``enable_elect_unclean_master``
    is the controller's; ``ha`` holds the HA timers (heartbeat 5 s, housekeeping 20 s, slaveTimeout 3 s).
    ``rocketmq_version``: ``"5.3.3"`` (see :data:`ROCKETMQ_VERSIONS`). ``async_learner`` (asyncLearner): as
    a slave, replicate but never join the SyncStateSet. ``sync_from_last_file`` (syncFromLastFile): an empty
    slave starts at the master's last commit-log file instead of its first.

    Kit switches (off by default, listed in :mod:`rocketlab.controller`): ``before_5798`` - the master's SyncStateSet
    as before PR #5798 (RocketMQ 5.1.1, the fix of #5663): a proposal counts only once the controller's
    answer arrives; ``cut_consume_queues_on_every_restart`` - consume queues cut back to the confirm offset
    after any restart (5.3.3 only keeps recovery from dispatching beyond it after an abnormal exit).
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
    before_5798: bool = False
    cut_consume_queues_on_every_restart: bool = False
    flush_disk_type: str = "ASYNC_FLUSH"
    mapped_file_size_commit_log: int = 1024 * 1024
    flush_interval_commit_log: int = 500
    store_options: dict[str, Any] = field(default_factory=dict)
    ha: HAConfig = field(default_factory=HAConfig)
    send: SendConfig = field(default_factory=SendConfig)
    processors: ProcessorConfig = field(default_factory=ProcessorConfig)  # the client processors' keys

    def __post_init__(self) -> None:
        for name in ("in_sync_replicas", "min_in_sync_replicas", "ha_max_time_slave_not_catchup"):
            if getattr(self, name) < 1:
                raise ConfigError(_("{name} must be >= 1, got {value}").format(name=name, value=getattr(self, name)))
        if self.rocketmq_version not in ROCKETMQ_VERSIONS:
            raise ConfigError(_("rocketmq_version={value!r}: controller mode is modelled on {versions} (before_5798=true "
                                "gives the SyncStateSet before #5663's fix)").format(
                value=self.rocketmq_version, versions=", ".join(ROCKETMQ_VERSIONS)))

    @classmethod
    def load(cls, values: Mapping[str, Any]) -> AutoSwitchBrokerConfig:
        """From snake_case or RocketMQ's camelCase keys (``allAckInSyncStateSet``); ``ha`` may be a mapping
        of HAConfig fields."""
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in known else re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
            if name not in known:
                raise ConfigError(_("{key}: unknown controller-mode broker key").format(key=key))
            kwargs[name] = HAConfig(**value) if name == "ha" and isinstance(value, Mapping) else value
        return cls(**kwargs)


class AutoSwitchBrokerCore(ClientServing, BaseCore):
    """One controller-mode broker (see the module docstring). Inspection: :attr:`role`, :attr:`term`
    (master epoch), :attr:`broker_id`, :attr:`store`, :attr:`epoch_cache`, :attr:`ha_service`,
    :attr:`ha_client`, :attr:`fenced`."""

    def __init__(self, ctx: NodeContext, config: AutoSwitchBrokerConfig, broker_id: int | None = None,
                 controllers: tuple[str, ...] = ()) -> None:
        if ctx.data_dir is None:
            raise ConfigError(_("broker {node} needs a data directory").format(node=ctx.node_id))
        self.node_id = ctx.node_id
        self.config = config
        self.broker_id = broker_id  # the controller's id for this broker (brokerControllerId)
        self.now_ms = 0
        root = Path(ctx.data_dir) / "store"
        on_disk = consume_queue_ends(root / "consumequeue")  # before the store's recovery rebuilds them
        self.store = MessageStore.open(
            root, threads=False, clock=lambda: self.now_ms, broker_role=BrokerRole.SLAVE,
            flush_disk_type=FlushDiskType(config.flush_disk_type),
            mapped_file_size_commit_log=config.mapped_file_size_commit_log,
            **{"rocketmq_version": config.rocketmq_version, **config.store_options})
        self.epoch_cache = EpochFileCache(root / "epochFileCheckpoint")
        self.epoch_cache.init_cache_from_file()
        self.ha_service = AutoSwitchHAService(config.ha, self.store, self.epoch_cache,
                                              config.mapped_file_size_commit_log, broker_id,
                                              config.ha_max_time_slave_not_catchup,
                                              synchronizing_union=not config.before_5798)
        self.ha_client: AutoSwitchHAClient | None = None
        self.role = "SLAVE"
        self.fenced = True  # setFenced(true) before the store loads; ReplicasManager lifts it
        self.store.commit_log.confirm_offset_rule = self._confirm_offset
        self._recover_in_controller_mode(on_disk)
        self.term = 0  # the master epoch this broker acts under
        self.master_id: str | None = None
        self.tokens = itertools.count(1)
        self.outer_api = BrokerOuterAPI.of(ctx, config.broker_name,
                                           lambda: (self.broker_config_id, self.metadata.topic_config_manager),
                                           config.cluster_name)  # registers once the controller named its id
        self.pending: dict[int, PutHandle] = {}
        self.next_flush_ms = 0
        self.flush_on_threads = ctx.threads and config.flush_disk_type == "ASYNC_FLUSH"
        """The store's flushes run on its own threads (TCP runtime, from :meth:`on_start`)."""
        self.reput_at: int | None = None
        self.replicas = ReplicasManager(ctx.node_id, controllers, ReplicasManagerConfig(
            config.cluster_name, config.broker_name, config.election_priority,
            config.controller_heart_beat_timeout_mills), self, root / "brokerIdentity",
            ctx.rng("replicas")) if controllers else None
        self.metadata = loaded_metadata(root / "config")
        self.send_path = SendPath(config.send, config.broker_name, self.metadata, self.store, self.put_message,
                                  lambda: self.role == "MASTER" and not self.fenced, ctx.rng("send"), message_of,
                                  registrar=self.outer_api)
        self.processors = BrokerProcessors(self.store, self.metadata, config.processors, lambda: self.role != "MASTER")

    def _recover_in_controller_mode(self, on_disk: dict[tuple[str, int], int]) -> None:
        """What 5.3.3's recovery does in controller mode, on top of the store's own (which rebuilt the
        consume queues from the whole log): the confirm offset comes back from the checkpoint
        (``confirmPhyOffset``), kept within the log. After an **abnormal** exit ``recoverAbnormally``
        re-dispatches only records within the confirm offset (#6728's fix in 5.1.1): each queue keeps the
        units it had on disk (``on_disk``: where each ended before recovery) and those up to the confirm
        offset, nothing more. After a clean exit ``recoverNormally`` dispatched the whole log. The switch
        ``cut_consume_queues_on_every_restart`` cuts every queue back to the confirm offset instead, after
        either exit. The reput starts at the confirm offset (``start``); then the queue-offset table,
        compensated for the records beyond the confirm offset (``compensateForHA``, #7689's fix in 5.2.0)."""
        store = self.store
        assert store.store_checkpoint is not None and store.reput_message_service is not None
        confirm = store.store_checkpoint.confirm_phy_offset
        if confirm < store.get_min_phy_offset():
            confirm = store.get_min_phy_offset()
        elif confirm > store.get_max_phy_offset():
            confirm = store.get_max_phy_offset()
        store.set_confirm_offset(confirm)
        if self.config.cut_consume_queues_on_every_restart:
            store.truncate_dirty_logic_files(confirm)
        elif not store.last_exit_ok:
            for (topic, queue_id), cq in sorted(self._consume_queues().items()):
                keep = max(on_disk.get((topic, queue_id), -1), confirm)
                if cq.max_physic_offset > keep:
                    cq.truncate_dirty_logic_files(keep)
        reput = store.reput_message_service
        reput.reput_from_offset = min(reput.reput_from_offset, confirm)
        self._recover_topic_queue_table()

    def _consume_queues(self) -> dict[tuple[str, int], Any]:
        return {(topic, queue_id): cq for topic, queues in self.store.consume_queue_table.items()
                for queue_id, cq in queues.items()}

    def _recover_topic_queue_table(self) -> None:
        """``recoverTopicQueueTable`` in controller mode: each queue's next offset from its consume queue,
        then ``compensateForHA``."""
        self.store.recover_topic_queue_table()
        compensate_for_ha(self.store)

    # ------------------------------------------------------------------ what ReplicasManager drives
    def assign_broker_id(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.ha_service.local_broker_id = broker_id

    def set_fenced(self, fenced: bool) -> None:
        """``ReplicasManager.setFenced``: a fenced broker takes no puts, serves no reads, sends no periodic
        heartbeats (``BrokerController.isIsolated``)."""
        self.fenced = fenced

    def become_master(self, epoch: int, sync_state_set: set[int] | None, now_ms: int, out: OutputBuilder) -> None:
        out.extend(self.change_to_master(epoch, sync_state_set, now_ms))

    def become_slave(self, master: str, epoch: int, master_unchanged: bool, now_ms: int, out: OutputBuilder) -> None:
        out.extend(self.change_to_slave(master, epoch, now_ms, master_unchanged=master_unchanged))

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
        return self._clients_done(out)

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

    @property
    def broker_config_id(self) -> int | None:
        """``brokerConfig.brokerId``: 0 (``MixAll.MASTER_ID``) while master, whatever id the controller gave
        it (NameServer and clients still find the master by brokerId 0); the controller's id otherwise."""
        return 0 if self.role == "MASTER" else self.broker_id

    def describe(self) -> dict[str, Any]:
        return {"node": self.node_id, "role": self.role, "epoch": self.term, "broker_id": self.broker_id,
                "broker_config_id": self.broker_config_id, "fenced": self.fenced, "max_offset": self.max_offset,
                "confirm_offset": self.store.get_confirm_offset(),
                "sync_state_set": sorted(self.ha_service.get_sync_state_set()),
                "epochs": [(e.epoch, e.start_offset) for e in self.epoch_cache.get_all_entries()]}

    # ------------------------------------------------------------------ roles
    def change_to_master(self, epoch: int, sync_state_set: set[int] | frozenset[int] | None, now_ms: int) -> Output:
        """``ReplicasManager.changeToMaster``: adopt ``sync_state_set`` (None: keep the current one) first,
        then a master that stays master only appends an epoch entry (``changeToMasterWhenLastRoleIsMaster``),
        any other broker goes through ``AutoSwitchHAService.changeToMaster``; either way it is master
        (SYNC_MASTER, brokerId 0) afterwards, even if the HA service refused the epoch (as in Java, which
        ignores that answer)."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if sync_state_set is not None:
            self.ha_service.set_sync_state_set(sync_state_set)  # changeSyncStateSet: the confirm offset follows
        if self.role == "MASTER":  # changeToMasterWhenLastRoleIsMaster: no connection reset (#9689)
            if not self._epoch_refused(epoch, "MASTER", out):
                self._append_epoch(epoch)
        else:
            self._ha_change_to_master(epoch, out)
            self.role = "MASTER"
            self.store.update_config(broker_role=BrokerRole.SYNC_MASTER)
        if self.replicas is None:
            self.fenced = False  # without a controller nothing fences the store (AutoSwitchHATest)
        self.term, self.master_id = epoch, self.node_id
        out.trace("role", term=epoch, role="MASTER", leader=self.node_id)
        self.send_path.start(now_ms)
        return self._after(out)

    def _epoch_refused(self, epoch: int, role: str, out: OutputBuilder) -> bool:
        last = self.epoch_cache.last_epoch()
        if epoch < last:
            out.trace("role_refused", role=role, epoch=epoch, last_epoch=last)
            return True
        return False

    def _ha_change_to_master(self, epoch: int, out: OutputBuilder) -> None:
        """``AutoSwitchHAService.changeToMaster``: refused below the last epoch; else connections and the
        HA client go, a half-written tail behind the dispatch point is cut, the confirm offset is computed
        for the set just adopted, the epoch file gets ``(epoch, maxPhyOffset)``, everything up to the
        confirm offset is dispatched, and only then the queue-offset table is rebuilt."""
        if self._epoch_refused(epoch, "MASTER", out):
            return
        self.ha_service.destroy_connections(out, "changing to master")
        if self.ha_client is not None:
            self.ha_client.shutdown(out)
        cut = truncate_invalid_msg(self.store)
        self.store.set_confirm_offset(self.ha_service.compute_confirm_offset())
        if cut >= 0:
            self.epoch_cache.truncate_suffix_by_offset(cut)
        self._append_epoch(epoch)
        while self.store.dispatch_behind_bytes() > 0:  # "Waiting consume queue dispatch"
            if self.store.reput() == 0 and self.store.dispatch_behind_bytes() > 0:
                break  # nothing more can be dispatched (a record the reput cannot read)
        self._recover_topic_queue_table()

    def _append_epoch(self, epoch: int) -> None:
        if self.epoch_cache.last_epoch() >= epoch:
            self.epoch_cache.truncate_suffix_by_epoch(epoch)
        self.epoch_cache.append_entry(EpochEntry(epoch, self.store.get_max_phy_offset()))

    def change_to_slave(self, master_id: str, epoch: int, now_ms: int, master_unchanged: bool | None = None) -> Output:
        """``ReplicasManager.changeToSlave``: the same master (``master_unchanged``; by default: this broker
        already follows ``master_id``) only moves the epoch (``changeToSlaveWhenMasterNotChange``); otherwise
        the broker becomes SLAVE of ``master_id`` (its node id is its HA address) and
        ``AutoSwitchHAService.changeToSlave`` follows it (handshake, truncation, transfer) - unless that
        refuses the epoch, which Java ignores: the broker is then a slave whose HA client did not move."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if master_unchanged is None:
            master_unchanged = self.role == "SLAVE" and master_id == self.master_id
        if master_unchanged:
            self._epoch_refused(epoch, "SLAVE", out)
            self.term = epoch
            return self._after(out)
        self.role, self.term, self.master_id = "SLAVE", epoch, master_id
        self.store.update_config(broker_role=BrokerRole.SLAVE)
        if self.replicas is None:
            self.fenced = False
        if not self._epoch_refused(epoch, "SLAVE", out):
            self.ha_service.destroy_connections(out, "changing to slave")
            if self.ha_client is None:
                self.ha_client = AutoSwitchHAClient(self.config.ha, self.store, self.epoch_cache, self.broker_id,
                                                    self.node_id, async_learner=self.config.async_learner,
                                                    sync_from_last_file=self.config.sync_from_last_file)
            else:
                self.ha_client.reopen(now_ms)
            self.ha_client.update_ha_master_address(master_id)
            self.ha_client.on_tick(now_ms, out)
        out.trace("role", term=epoch, role="SLAVE", leader=master_id)
        return self._after(out)

    # ------------------------------------------------------------------ retention
    def delete_expired_files(self, now_ms: int) -> int:
        """``CleanCommitLogService.deleteExpiredFiles`` in controller mode: one clean round of the store
        (``now_ms`` a wall-clock time: file ages come from their modification times, see
        :class:`~rocketlab.store.clean_service.CleanCommitLogService`); if commit-log files went, the epoch
        file drops the entries that end below the new min offset (``truncateEpochFilePrefix(min - 1)``).
        Returns the number of commit-log files deleted."""
        deleted = self.store.delete_expired_files(now_ms)
        if deleted > 0:
            self.epoch_cache.truncate_prefix_by_offset(self.store.get_min_phy_offset() - 1)
        return deleted

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
        handle.result = result = store_put(self.store, msg)
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
        self.processors.start(now_ms)
        out.trace("role", term=0, role="FENCED", leader=None)
        if self.replicas is not None:
            self.replicas.on_start(now_ms, out)
        self.outer_api.start(now_ms, out)
        return out.build()

    def on_stop(self) -> None:
        self.send_path.stop()
        self.processors.shutdown()
        self.store.shutdown()

    def on_crash(self, lose_unflushed: bool = False) -> None:
        simulate_crash(self.store, lose_unflushed)

    def _flush_checkpoint(self) -> None:
        if self.store.store_checkpoint is not None:  # confirmPhyOffset with the flushed log
            self.store.store_checkpoint.flush()

    def next_deadline_ms(self) -> int | None:
        times = [None if self.flush_on_threads else self.next_flush_ms, self.ha_service.next_deadline_ms(),
                 self.reput_at, self.outer_api.next_deadline_ms(), self.processors.next_deadline_ms()]
        if self.ha_client is not None:
            times.append(self.ha_client.next_deadline_ms())
        if self.replicas is not None:
            times.append(self.replicas.next_deadline_ms())
        times.append(self.send_path.next_deadline_ms())
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
        self.outer_api.on_tick(now_ms, out)
        self.processors.on_tick(now_ms, out)
        return self._after(out) + self.send_path.on_tick(now_ms)

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
        out = OutputBuilder()
        if isinstance(msg, SEND_PATH_REQUESTS):
            out.extend(self.send_path.on_request(src, request_id, msg, now_ms))
        elif isinstance(msg, PullMessageRequest) and self.fenced:
            out.reply(src, request_id, self.pull_message(msg))
        else:
            self.processors.on_request(src, request_id, msg, now_ms, out)
        return self._after(out)

    def pull_message(self, req: PullMessageRequest) -> PullMessageResponse:
        """A fenced broker serves no reads; otherwise the consume queues, built up to the confirm offset."""
        if self.fenced:
            return PullMessageResponse("PULL_RETRY_IMMEDIATELY", suggest_which_broker_id=0)
        return pull_from_store(self.store, req, self.broker_config_id or 0)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if self.replicas is not None and self.replicas.owns(request_id):
            self.replicas.on_reply(request_id, msg, now_ms, out)
        self.outer_api.on_reply(request_id, msg, now_ms, out)  # the controller names its master
        return self._after(out)

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """NOTIFY_BROKER_ROLE_CHANGED from the controller leader; a oneway UPDATE_CONSUMER_OFFSET."""
        self.now_ms = now_ms
        out = OutputBuilder()
        if not self.processors.on_message(src, msg, now_ms, out) and self.replicas is not None \
                and isinstance(msg, NotifyBrokerRoleChanged):
            self.replicas.on_role_changed(msg.master_broker_id, msg.master_address, msg.master_epoch,
                                          msg.sync_state_set_epoch, set(msg.sync_state_set), now_ms, out)
        return self._after(out)
