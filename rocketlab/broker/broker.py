"""BrokerCore: one broker — a MessageStore plus classic HA as master or slave — as a sans-IO core.

Models the parts of ``BrokerController`` and ``DefaultMessageStore`` that decide a put's fate in
RocketMQ 4.x (``handleHA``/``submitReplicaRequest``), ``SendMessageProcessor`` and ``SlaveSynchronize``;
a client's other requests (pulls with long polling, heartbeats, offsets, ...) go to the processors every
broker kind shares (:mod:`rocketlab.broker.processors`):

* roles ``ASYNC_MASTER`` / ``SYNC_MASTER`` (brokerId 0, trace role MASTER) and ``SLAVE`` (brokerId > 0,
  trace role SLAVE); a slave's store refuses puts (SERVICE_NOT_AVAILABLE);
* a SYNC_MASTER put that is stored waits for a slave's ack (GroupTransferService): PUT_OK, or
  FLUSH_SLAVE_TIMEOUT after ``slaveTimeout``; with no slave, or one more than
  ``haSlaveFallbehindMax`` behind, SLAVE_NOT_AVAILABLE at once. The message is stored in every case.
  The append lock is never held while waiting (pipelined, RocketMQ 4.7+);
* the slave pulls topics, consumer offsets, delay offsets and subscription groups from the master
  every 10 s (first after 3 s), gated by DataVersion, persisted as JSON;
* the store runs without threads: the core flushes (ASYNC_FLUSH every ``flushIntervalCommitLog``) and
  dispatches (reput) itself, so the simulator stays deterministic. A master dispatches right after each
  put; a slave 1 ms after bytes arrive, in slices of 256 KiB per ms (Java's ReputMessageService is a
  thread of its own beside the HAClient; slices keep our single thread's appends and acks flowing).
  In the TCP runtime (``NodeContext.threads``) the store flushes on threads of its own instead, Java's
  FlushRealTimeService (ASYNC_FLUSH) or GroupCommitService (SYNC_FLUSH) and FlushConsumeQueueService
  (:meth:`~rocketlab.store.message_store.DefaultMessageStore.start_flush_services`), so a slow fsync
  never holds up other puts, HA transfer or acks. A SYNC_FLUSH put then waits for its group commit (one
  fsync for every put appended before it, as in Java) and is answered at the core's next tick after it;
  the core looks every millisecond while flushes are pending, where Java's GroupCommitService wakes the
  waiting future itself. Simplified: a SYNC_MASTER put waits for the slave after its flush, where Java's
  asyncPutMessage waits for both at once.

Every finished put is a ``put`` trace event; HA adds ``ha_report``, ``ha_transfer`` and ``ha_close``.
With ``namesrvAddr`` the broker registers with its name servers
(:class:`~rocketlab.broker.broker_outer_api.BrokerOuterAPI`); a slave then follows the answer's
``masterAddr`` (SlaveSynchronize) and ``haServerAddr`` (its HA client, when ``haMasterAddress`` is not set).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.broker.broker_outer_api import BrokerOuterAPI
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.broker.processors import BrokerProcessors, ClientServing, ProcessorConfig
from rocketlab.broker.protocol import (
    GetAllMetadataRequest,
    GetAllMetadataResponse,
    PullMessageRequest,
    PullMessageResponse,
    SendMessageRequest,
    SendMessageResponse,
    UpdateConsumerOffsetRequest,
    UpdateConsumerOffsetResponse,
)
from rocketlab.broker.send_path import SEND_PATH_REQUESTS, SendPath
from rocketlab.broker.topic_config_rules import SendConfig
from rocketlab.core import EMPTY, BaseCore, NodeContext, Output, OutputBuilder
from rocketlab.errors import ConfigError
from rocketlab.ha.config import HAConfig
from rocketlab.ha.ha_client import HAClient
from rocketlab.ha.ha_service import HAService
from rocketlab.i18n import _
from rocketlab.store import Message, MessageStore, PutMessageStatus
from rocketlab.store.config import BrokerRole, FlushDiskType
from rocketlab.store.crash import simulate_crash
from rocketlab.store.flush import PutMessageFuture
from rocketlab.store.message_batch import MessageExtBatch

ROLES = ("ASYNC_MASTER", "SYNC_MASTER", "SLAVE")
REPUT_INTERVAL_MS = 1  # ReputMessageService's pause between rounds
REPUT_SLICE_BYTES = 256 * 1024  # a slave's dispatch per round, so appends and acks are not held up


@dataclass(frozen=True)
class BrokerConfig:
    """``BrokerConfig`` + the store keys a broker sets (RocketMQ names in snake_case).

    ``ha_master_address``: where a slave's HAClient connects — a node id in the simulator, host:port
    of the master's haListenPort on TCP. ``master_id``: the master's node id, for SlaveSynchronize.
    """

    broker_name: str = "broker-a"
    broker_id: int = 0
    broker_role: str = "ASYNC_MASTER"
    ha_master_address: str | None = None
    master_id: str | None = None
    slave_read_enable: bool = False
    flush_disk_type: str = "ASYNC_FLUSH"
    mapped_file_size_commit_log: int = 1024 * 1024
    flush_interval_commit_log: int = 500
    slave_sync_interval_ms: int = 10_000
    slave_sync_first_delay_ms: int = 3_000
    store_path_root_dir: str | None = None
    store_options: dict[str, Any] = field(default_factory=dict)
    ha: HAConfig = field(default_factory=HAConfig)
    send: SendConfig = field(default_factory=SendConfig)
    processors: ProcessorConfig = field(default_factory=ProcessorConfig)
    """The client processors' keys (long polling, ...): :mod:`rocketlab.broker.processor_config`."""

    def __post_init__(self) -> None:
        if self.broker_role not in ROLES:
            raise ConfigError(_("{key}={value!r} is not one of {choices}").format(
                key="brokerRole", value=self.broker_role, choices=", ".join(ROLES)))
        if self.broker_role == "SLAVE" and self.broker_id <= 0:
            raise ConfigError(_("a SLAVE needs brokerId > 0, got {value}").format(value=self.broker_id))
        if self.broker_role != "SLAVE" and self.broker_id != 0:
            object.__setattr__(self, "broker_id", 0)  # masters are forced to MixAll.MASTER_ID
        if self.flush_disk_type not in ("ASYNC_FLUSH", "SYNC_FLUSH"):
            raise ConfigError(_("flushDiskType={value!r} is not ASYNC_FLUSH or SYNC_FLUSH").format(value=self.flush_disk_type))

    @property
    def is_master(self) -> bool:
        return self.broker_role != "SLAVE"


@dataclass(eq=False)
class PutHandle:
    """A put in progress or done: ``status`` (PutMessageStatus name) is set once ``done``."""

    token: int
    topic: str
    queue_id: int
    start_ms: int
    result: Any = None
    status: str | None = None
    done: bool = False
    latency_ms: float = 0.0
    reply_to: tuple[str, int] | None = None
    answer: Any = None
    """``answer(status) -> response`` for ``reply_to`` when the request was no SEND_MESSAGE (a send-back)."""

    @property
    def wrote_offset(self) -> int | None:
        return self.result.wrote_offset if self.result is not None else None

    @property
    def wrote_bytes(self) -> int | None:
        return self.result.wrote_bytes if self.result is not None else None

    @property
    def queue_offset(self) -> int | None:
        return self.result.queue_offset if self.result is not None else None

    @property
    def msg_id(self) -> str | None:
        return self.result.msg_id if self.result is not None else None


class BrokerCore(ClientServing, BaseCore):
    """One broker (see module docstring)."""

    def __init__(self, ctx: NodeContext, config: BrokerConfig, wall_clock: bool = False) -> None:
        if ctx.data_dir is None and not config.store_path_root_dir:
            raise ConfigError(_("broker {node} needs a data directory (storePathRootDir)").format(node=ctx.node_id))
        self.node_id = ctx.node_id
        self.config = config
        self.role = "MASTER" if config.is_master else "SLAVE"
        self.term = 0
        self.now_ms = 0
        clock = None if wall_clock else (lambda: self.now_ms)
        root = Path(config.store_path_root_dir) if config.store_path_root_dir else Path(ctx.data_dir) / "store"
        self.store = MessageStore.open(
            root, threads=False, clock=clock,
            broker_role=BrokerRole(config.broker_role), flush_disk_type=FlushDiskType(config.flush_disk_type),
            mapped_file_size_commit_log=config.mapped_file_size_commit_log, **config.store_options)
        self.flush_on_threads = ctx.threads
        """The store's flushes run on its own threads (TCP runtime, from :meth:`on_start`), not on this
        core's ticks or in its puts."""
        self.flushing: list[tuple[PutHandle, PutMessageFuture, Message]] = []
        """SYNC_FLUSH puts appended and waiting for their group commit (flushes on threads only)."""
        self.metadata = BrokerMetadata(root / "config")
        self.metadata.load()
        size = config.mapped_file_size_commit_log
        self.ha_service = HAService(config.ha, self.store.commit_log, size) if config.is_master else None
        self.ha_client = None if config.is_master else HAClient(
            config.ha, self.store.commit_log, config.ha_master_address, ctx.node_id)
        self.tokens = itertools.count(1)
        self.pending: dict[int, PutHandle] = {}
        self.next_flush_ms = 0
        self.slave_synchronize = SlaveSynchronize(self.metadata, config.slave_sync_interval_ms,
                                                  config.slave_sync_first_delay_ms)
        self.reput_at: int | None = None
        self.master_id = config.master_id
        self.outer_api = BrokerOuterAPI.of(ctx, config.broker_name,
                                           lambda: (config.broker_id, self.metadata.topic_config_manager))
        self.send_path = SendPath(config.send, config.broker_name, self.metadata, self.store, self.put_message,
                                  lambda: self.config.is_master, ctx.rng("send"), message_of,
                                  registrar=self.outer_api)
        self.processors = BrokerProcessors(self.store, self.metadata, config.processors, lambda: not config.is_master,
                                           config.slave_read_enable)

    # --- inspection --------------------------------------------------------------------------
    @property
    def syncs(self) -> int:
        """How many metadata syncs from the master this slave has applied."""
        return self.slave_synchronize.syncs

    @property
    def max_offset(self) -> int:
        return self.store.get_max_phy_offset()

    def describe(self) -> dict[str, Any]:
        return {"node": self.node_id, "role": self.config.broker_role, "broker_id": self.config.broker_id,
                "max_offset": self.max_offset, "pending_puts": len(self.pending),
                "slaves": self.ha_service.connection_count if self.ha_service else "-",
                "push2_slave_max_offset": self.ha_service.push2_slave_max_offset if self.ha_service else "-"}

    # --- life cycle --------------------------------------------------------------------------
    def on_start(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        self.next_flush_ms = now_ms + self.config.flush_interval_commit_log
        self.slave_synchronize.start(now_ms)
        self.processors.start(now_ms)
        if self.flush_on_threads:
            self.store.start_flush_services()
        out = OutputBuilder()
        out.trace("role", term=0, role=self.role, leader=self.node_id if self.config.is_master else
                  self.config.master_id)
        if self.ha_client is not None:
            self.ha_client.on_tick(now_ms, out)
        self.outer_api.start(now_ms, out)
        if self.config.is_master:
            self.send_path.start(now_ms)
        return out.build()

    def on_stop(self) -> None:
        self.send_path.stop()
        self.processors.shutdown()
        self.store.shutdown()

    def on_crash(self, lose_unflushed: bool) -> None:
        simulate_crash(self.store, lose_unflushed)

    # --- puts ----------------------------------------------------------------------------------
    def put_message(self, msg: Message, now_ms: int,
                    reply_to: tuple[str, int] | None = None) -> tuple[PutHandle, Output]:
        """A producer's put; the handle is done now or once the slave acks (SYNC_MASTER).
        ``reply_to`` = (client, request id) answers a SEND_MESSAGE request when the put is done."""
        self.now_ms = now_ms
        out = OutputBuilder()
        handle = PutHandle(next(self.tokens), msg.topic, msg.queue_id, now_ms, reply_to=reply_to)
        if self.config.is_master:
            self.metadata.topic_config_manager.create_topic_if_absent(msg.topic, now_ms)
        if isinstance(msg, MessageExtBatch):
            handle.result = self.store.put_messages(msg)
            self.store.reput()
            self._stored(handle, msg, now_ms, out)
        elif self.flush_on_threads and self.config.flush_disk_type == "SYNC_FLUSH":
            future = self.store.async_put_message(msg)  # the group commit thread completes it
            handle.result = future.result_so_far()
            self.store.reput()
            self.flushing.append((handle, future, msg))
            self._flushed(now_ms, out)  # one already done (refused, not waiting) goes on now
        else:
            handle.result = self.store.put_message(msg)
            self.store.reput()
            self._stored(handle, msg, now_ms, out)
        return handle, out.build()

    def _stored(self, handle: PutHandle, msg: Message, now_ms: int, out: OutputBuilder) -> None:
        """The put is appended (and flushed, under SYNC_FLUSH): answer it, or wait for a slave."""
        status = handle.result.status
        if status is PutMessageStatus.PUT_OK and self.config.broker_role == "SYNC_MASTER" \
                and msg.is_wait_store_msg_ok():
            status = self._handle_ha(handle, now_ms, out)
        if status is not None:
            self._finish(handle, status.name, now_ms, out)

    def _flushed(self, now_ms: int, out: OutputBuilder) -> None:
        """Puts whose group commit completed (or timed out: FlushDiskWatcher) go on, in put order."""
        self.store.check_flush_timeouts()
        waiting, self.flushing = self.flushing, []
        for handle, future, msg in waiting:
            if future.done():
                handle.result = future.result()
                self._stored(handle, msg, now_ms, out)
            else:
                self.flushing.append((handle, future, msg))

    def _handle_ha(self, handle: PutHandle, now_ms: int, out: OutputBuilder) -> PutMessageStatus | None:
        """4.x submitReplicaRequest, or 5.x needAckNums when ``in_sync_replicas`` is set; None = wait."""
        next_offset = handle.result.wrote_offset + handle.result.wrote_bytes
        need = self.config.ha.in_sync_replicas
        if need is None:
            if not self.ha_service.is_slave_ok(next_offset):
                return PutMessageStatus.SLAVE_NOT_AVAILABLE
            self.ha_service.submit_replica_request(next_offset, handle.token, now_ms)
        elif need <= 1:
            return PutMessageStatus.PUT_OK
        else:
            self.ha_service.submit_replica_request(next_offset, handle.token, now_ms, ack_nums=need)
        self.pending[handle.token] = handle
        self.ha_service.wakeup_all(now_ms, out)
        return None

    def _finish(self, handle: PutHandle, status: str, now_ms: int, out: OutputBuilder) -> None:
        self.pending.pop(handle.token, None)
        finish_put(handle, status, now_ms, out)

    def _completed(self, done: list[tuple[Any, bool]], now_ms: int, out: OutputBuilder) -> None:
        for token, ok in done:
            handle = self.pending.get(token)
            if handle is not None:
                self._finish(handle, "PUT_OK" if ok else "FLUSH_SLAVE_TIMEOUT", now_ms, out)

    # --- timers ----------------------------------------------------------------------------------
    def next_deadline_ms(self) -> int | None:
        times = [] if self.flush_on_threads else [self.next_flush_ms]
        ha = self.ha_service.next_deadline_ms() if self.ha_service else self.ha_client.next_deadline_ms()
        if ha is not None:
            times.append(ha)
        if self.ha_client is not None:
            sync = self.slave_synchronize.next_deadline_ms(self.master_id)
            if sync is not None:
                times.append(sync)
        if self.outer_api.next_deadline_ms() is not None:
            times.append(self.outer_api.next_deadline_ms())
        if self.reput_at is not None:
            times.append(self.reput_at)
        if self.flushing:
            times.append(self.now_ms + 1)
        send = self.send_path.next_deadline_ms()
        if send is not None:
            times.append(send)
        clients = self.processors.next_deadline_ms()
        if clients is not None:
            times.append(clients)
        return min(times, default=None)

    def on_tick(self, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if now_ms >= self.next_flush_ms and not self.flush_on_threads:
            self.next_flush_ms = now_ms + self.config.flush_interval_commit_log
            self.store.flush()
        if self.flushing:
            self._flushed(now_ms, out)
        if self.ha_service is not None:
            self._completed(self.ha_service.on_tick(now_ms, out), now_ms, out)
        else:
            self.ha_client.on_tick(now_ms, out)
            self.slave_synchronize.on_tick(self.master_id, now_ms, out)
        self.outer_api.on_tick(now_ms, out)
        if self.reput_at is not None and now_ms >= self.reput_at:
            self.reput_at = None
            self.store.reput(REPUT_SLICE_BYTES)
            if self.store.dispatch_behind_bytes() > 0:
                self.reput_at = now_ms + REPUT_INTERVAL_MS
        self.processors.on_tick(now_ms, out)
        self.processors.after_input(now_ms, out)
        return out.build() + self.send_path.on_tick(now_ms)

    # --- HA streams ----------------------------------------------------------------------------
    def on_stream_open(self, stream_id: Any, peer: str, accepted: bool, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if accepted and self.ha_service is not None:
            self.ha_service.accept(stream_id, peer, now_ms)
        elif not accepted and self.ha_client is not None and self.ha_client.owns(stream_id):
            self.ha_client.on_stream_open(now_ms, out)
        return out.build()

    def on_stream_data(self, stream_id: Any, data: bytes, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if self.ha_service is not None:
            self._completed(self.ha_service.on_stream_data(stream_id, data, now_ms, out), now_ms, out)
        elif self.ha_client.owns(stream_id):
            if self.ha_client.on_stream_data(data, now_ms, out) and self.reput_at is None:
                self.reput_at = now_ms + REPUT_INTERVAL_MS  # the slave builds its own consume queues
        return out.build()

    def on_stream_closed(self, stream_id: Any, reason: str, now_ms: int) -> Output:
        self.now_ms = now_ms
        if self.ha_service is not None:
            self.ha_service.on_stream_closed(stream_id)
        elif self.ha_client.owns(stream_id):
            self.ha_client.on_stream_closed(reason, now_ms)
        return EMPTY

    # --- requests ------------------------------------------------------------------------------
    def on_request(self, src: str, request_id: int, msg: Any, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        if isinstance(msg, SEND_PATH_REQUESTS):  # a put dispatched at once wakes the pulls held for its queue
            out.extend(self.send_path.on_request(src, request_id, msg, now_ms))
        elif not self.processors.on_request(src, request_id, msg, now_ms, out):
            answer_metadata_request(self.metadata, src, request_id, msg, out)
        self.processors.after_input(now_ms, out)
        return out.build()

    def on_message(self, src: str, msg: Any, now_ms: int) -> Output:
        """A oneway request (UPDATE_CONSUMER_OFFSET as a push consumer sends it)."""
        self.now_ms = now_ms
        out = OutputBuilder()
        self.processors.on_message(src, msg, now_ms, out)
        return out.build()

    def pull_message(self, req: PullMessageRequest) -> PullMessageResponse:
        """The simulator's direct read of one queue (``Cluster.pull``); a slave answers only with
        slaveReadEnable. A PULL_MESSAGE request is answered by :mod:`rocketlab.broker.pull_message_processor`."""
        if not self.config.is_master and not self.config.slave_read_enable:
            return PullMessageResponse("PULL_RETRY_IMMEDIATELY", suggest_which_broker_id=0)
        return pull_from_store(self.store, req, self.config.broker_id)

    def on_reply(self, src: str, request_id: int, msg: Any | None, now_ms: int) -> Output:
        self.now_ms = now_ms
        out = OutputBuilder()
        answer = self.outer_api.on_reply(request_id, msg, now_ms, out)
        if answer is not None and not self.config.is_master:  # doRegisterBrokerAll's use of the result
            if self.config.ha_master_address is None and answer.ha_server_addr is not None:
                self.ha_client.update_master_address(answer.ha_server_addr)
            self.master_id = answer.master_addr
        self.slave_synchronize.on_reply(request_id, msg)
        return out.build()


# --- pieces shared with the broker on DLedger (rocketlab.broker.dledger_broker) --------------------

class SlaveSynchronize:
    """Models ``SlaveSynchronize.syncAll`` as BrokerController schedules it: the first sync
    ``first_delay_ms`` after start, then every ``interval_ms``, one GetAllMetadataRequest in flight at
    a time to the current master; the answer is applied to :class:`BrokerMetadata` (DataVersion-gated).

    Simplified: one round trip instead of Java's four requests. ``request_id_base`` keeps this
    component's request ids apart from other components of the same core.
    """

    def __init__(self, metadata: BrokerMetadata, interval_ms: int, first_delay_ms: int,
                 request_id_base: int = 0) -> None:
        self.metadata = metadata
        self.interval_ms = interval_ms
        self.first_delay_ms = first_delay_ms
        self.request_id = request_id_base
        self.next_sync_ms = first_delay_ms
        self.in_flight = False
        self.syncs = 0

    def start(self, now_ms: int) -> None:
        """(Re)start the schedule: the first sync ``first_delay_ms`` from now."""
        self.next_sync_ms = now_ms + self.first_delay_ms

    def next_deadline_ms(self, master_id: str | None) -> int | None:
        return self.next_sync_ms if master_id and not self.in_flight else None

    def on_tick(self, master_id: str | None, now_ms: int, out: OutputBuilder) -> None:
        if not master_id or self.in_flight or now_ms < self.next_sync_ms:
            return
        self.next_sync_ms = now_ms + self.interval_ms
        self.request_id += 1
        self.in_flight = True
        out.request(master_id, GetAllMetadataRequest(), self.request_id, timeout_ms=3000)

    def on_reply(self, request_id: int, msg: Any | None) -> bool:
        """True if the reply was this component's (applied when it carries metadata)."""
        if request_id != self.request_id or not self.in_flight:
            return False
        self.in_flight = False
        if isinstance(msg, GetAllMetadataResponse):
            self.metadata.sync_from(msg.snapshot)
            self.syncs += 1
        return True


def message_of(req: SendMessageRequest) -> Message:
    """The store's Message for a SEND_MESSAGE request as the kit put it before the send path: what a broker
    that is not master puts (its store refuses it) and the simulator's clients' shortcut."""
    return Message(topic=req.topic, body=req.body, queue_id=req.queue_id, tags=req.tags, keys=req.keys,
                   properties=dict(req.properties or {}), flag=req.flag, sys_flag=req.sys_flag,
                   reconsume_times=req.reconsume_times)


def finish_put(handle: PutHandle, status: str, now_ms: int, out: OutputBuilder) -> None:
    """A put is answered: set its status and latency, trace ``put``, reply to a SEND_MESSAGE request."""
    handle.status, handle.done = status, True
    handle.latency_ms = float(now_ms - handle.start_ms)
    out.trace("put", topic=handle.topic, queue_id=handle.queue_id, queue_offset=handle.queue_offset,
              phy_offset=handle.wrote_offset, size=handle.wrote_bytes or 0, status=status,
              latency_ms=handle.latency_ms)
    if handle.reply_to is not None and handle.answer is not None:
        out.reply(handle.reply_to[0], handle.reply_to[1], handle.answer(status))
    elif handle.reply_to is not None:
        src, request_id = handle.reply_to
        out.reply(src, request_id, SendMessageResponse(
            status, handle.msg_id, _or_minus_one(handle.queue_offset), _or_minus_one(handle.wrote_offset),
            queue_id=handle.queue_id))


def pull_from_store(store: Any, req: PullMessageRequest, broker_id: int) -> PullMessageResponse:
    """PULL_MESSAGE's read, simplified to one ``get_message`` of one queue: the records as stored."""
    got = store.get_message(req.topic, req.queue_id, offset=req.offset, max_msg_nums=req.max_msg_nums)
    return PullMessageResponse(got.status.name, b"".join(got.message_buffer_list), got.next_begin_offset, got.min_offset,
                               got.max_offset, broker_id)


def answer_metadata_request(metadata: BrokerMetadata, src: str, request_id: int, msg: Any,
                            out: OutputBuilder) -> bool:
    """GET_ALL_* (for SlaveSynchronize) and UPDATE_CONSUMER_OFFSET; False if ``msg`` is neither."""
    if isinstance(msg, GetAllMetadataRequest):
        out.reply(src, request_id, GetAllMetadataResponse(metadata.snapshot()))
    elif isinstance(msg, UpdateConsumerOffsetRequest):
        metadata.consumer_offset_manager.commit_offset(msg.group, msg.topic, msg.queue_id, msg.offset)
        metadata.consumer_offset_manager.persist()
        out.reply(src, request_id, UpdateConsumerOffsetResponse(True))
    else:
        return False
    return True


def _or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


def make_broker(ctx: NodeContext, config: BrokerConfig, wall_clock: bool = False) -> BrokerCore:
    return BrokerCore(ctx, config, wall_clock)

