"""The safety invariants of controller mode, checked by the simulator after every trace event (observers).

* **I1 acknowledged messages survive** - a put answered PUT_OK while ``allAckInSyncStateSet`` is on was on
  every member of the SyncStateSet; so every broker that becomes master afterwards must hold its bytes,
  unchanged. (With ``allAckInSyncStateSet`` off - RocketMQ's default - or with unclean elections
  (``unsafe``), a PUT_OK promises less; the checker records what a new master lacks as
  ``acknowledged_message_lost`` events, so a lab can count them, instead of failing the run.)
* **I2 epoch files grow strictly** - in every broker's epoch file, epochs and start offsets strictly
  increase.
* **I3 a slave is a prefix of its master** - after the handshake, every byte a slave holds equals the
  master's at the same offset (checked over what was added since the last check).
* **I4 a stale master never changes the SyncStateSet** - every AlterSyncStateSet the controller accepts
  comes from the broker the controller names master, at the controller's master epoch.
* **I5 consumers never see beyond confirmOffset** - under ``allAckInSyncStateSet`` no broker dispatches
  (builds consume queues) past its confirm offset: a broker restarted after an abnormal exit starts with
  consume queues no further than what it had dispatched before or its restored confirm offset (RocketMQ
  5.3.3's ``recoverAbnormally`` re-dispatches only up to the confirm offset; with
  ``cut_consume_queues_on_every_restart`` no further than the confirm offset, after any exit; after a clean
  exit ``recoverNormally`` dispatches the whole log: 5.3.3's window, not checked), and each dispatch round
  stops at the confirm offset of that round
  (the confirm offset itself may later drop below what was dispatched, e.g. when a slave joins the set
  and its ack lags the master's end - the data was confirmed when it became visible). (Without it a master confirms everything it has, so
  consumers may read what was never replicated: RocketMQ's documented window, not checked.) Checked on a
  master, and on a slave once its handshake is done: after a restart the kit's store rebuilds the consume
  queues from its whole log (as Java did before #6728's fix in 5.1.1) and the handshake's truncation trims
  them; a fenced broker serves no reads.
* **I6 a queue offset is given once** - a put answered PUT_OK at queue offset ``q`` finds its master's
  consume queue either not yet at ``q`` or holding at ``q`` this very record; and once the master has
  dispatched past the record, the unit at ``q`` points to it: every acknowledged message is consumable at
  the queue offset it was given, and no two records share a unit. (Checked on the master that answered,
  while it lives and stays master at that epoch.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlab.ha.invariants import commit_log_chunks


@dataclass
class _Acked:
    offset: int
    data: bytes
    all_ack: bool


@dataclass
class ControllerModeChecker:
    """The checker :meth:`Cluster.controller_mode` installs; ``name`` is what a violation is reported as."""

    name: str = "controller_mode"
    unsafe: bool = False
    """Unclean elections are on: a new master may lack acknowledged messages - recorded, not a failure."""
    acked: list[_Acked] = field(default_factory=list)
    prefix_checked: dict[str, int] = field(default_factory=dict)
    lost_reported: set[tuple[str, int, int]] = field(default_factory=set)
    dispatched: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """broker -> (id of its core, dispatch point last seen, the furthest its consume queues reached): I5
    judges each move of the dispatch point, and a restarted broker's queues against the last two."""
    queued: dict[str, tuple[tuple[int, int], list[tuple[str, int, int, int]]]] = field(default_factory=dict)
    """broker -> ((id of its core, its master epoch), acknowledged (topic, queue id, queue offset, phy
    offset) not yet seen in its consume queue): I6, per mastership (a slave in between may truncate)."""

    def check(self, cluster: Any, event: dict[str, Any]) -> str | None:
        kind = event["kind"]
        node = event.get("node")
        if kind == "put" and event.get("status") == "PUT_OK" and node in cluster.leader_candidates:
            core = cluster.node(node)
            size = event.get("size") or 0
            data = core.store.commit_log.get_message(event["phy_offset"], size) if size else b""
            self.acked.append(_Acked(event["phy_offset"], bytes(data or b""), core.config.all_ack_in_sync_state_set))
            return self._queue_offset_given_once(core, node, event)
        if kind == "role" and event.get("role") == "MASTER":
            found = self._new_master_holds_acked(cluster, node)
            if found is not None:
                return found
        if kind == "epoch_append" or kind == "role":
            return self._epochs_grow(cluster, node)
        if kind == "ha_report":
            return self._slaves_are_prefixes(cluster)
        if kind == "controller_request" and event.get("request") == "AlterSyncStateSetRequest" and event.get("code") == 0:
            return self._alter_from_master(cluster, node, event.get("src"))
        for broker in sorted(cluster.leader_candidates or ()):
            if cluster.alive(broker):
                found = self._dispatch_within_confirm(cluster, broker)
                if found is not None:
                    return found
        return None

    def _queue_offset_given_once(self, core: Any, node: str, event: dict[str, Any]) -> str | None:
        """I6, at each acknowledgement: the new one against the consume queue, then the earlier ones the
        dispatch has passed since."""
        seen = self.queued.get(node)
        if seen is None or seen[0] != (id(core), core.term):
            seen = self.queued[node] = ((id(core), core.term), [])
        pending = seen[1]
        pending.append((event["topic"], event["queue_id"], event["queue_offset"], event["phy_offset"]))
        reput = core.store.reput_message_service
        dispatched = reput.reput_from_offset if reput is not None else 0
        still, found = [], None
        for topic, queue_id, queue_offset, phy_offset in pending:
            cq = core.store.get_consume_queue(topic, queue_id)
            unit = cq.get_unit(queue_offset) if cq is not None else None
            if unit is None:
                if phy_offset < dispatched and cq is not None and cq.get_max_offset_in_queue() <= queue_offset:
                    found = found or f"I6: {node} dispatched past the message acknowledged at phy offset " \
                                     f"{phy_offset}, but its consume queue {topic}/{queue_id} ends before queue " \
                                     f"offset {queue_offset}"
                else:
                    still.append((topic, queue_id, queue_offset, phy_offset))
            elif unit[0] != phy_offset:
                found = found or f"I6: {node} acknowledged the message at phy offset {phy_offset} with queue " \
                                 f"offset {queue_offset} of {topic}/{queue_id}, whose unit points to phy offset " \
                                 f"{unit[0]}: two records share that queue offset, consumers never see one of them"
        seen[1][:] = still  # each acknowledgement is judged (and reported) once
        return found

    def _new_master_holds_acked(self, cluster: Any, node: str) -> str | None:
        store = cluster.node(node).store.commit_log
        for acked in self.acked:
            if not acked.data:
                continue
            have = store.get_message(acked.offset, len(acked.data))
            if have == acked.data:
                continue
            if acked.all_ack and not self.unsafe:
                return (f"I1: new master {node} lacks the message acknowledged PUT_OK (allAckInSyncStateSet) at "
                        f"phy offset {acked.offset}")
            key = (node, acked.offset, len(acked.data))
            if key not in self.lost_reported:
                self.lost_reported.add(key)
                cluster.recorder.emit(cluster.now_ms, node, "acknowledged_message_lost",
                                      {"phy_offset": acked.offset, "size": len(acked.data)})
        return None

    @staticmethod
    def _epochs_grow(cluster: Any, node: str | None) -> str | None:
        if node is None or not cluster.alive(node) or not hasattr(cluster.node(node), "epoch_cache"):
            return None
        entries = cluster.node(node).epoch_cache.get_all_entries()
        for a, b in zip(entries, entries[1:], strict=False):
            if not (b.epoch > a.epoch and b.start_offset > a.start_offset):
                return f"I2: {node}'s epoch file does not grow strictly: {(a.epoch, a.start_offset)} then " \
                       f"{(b.epoch, b.start_offset)}"
        return None

    def _slaves_are_prefixes(self, cluster: Any) -> str | None:
        master = cluster.leader()
        if master is None:
            return None
        master_log = cluster.node(master).store.commit_log
        for n in sorted(cluster.leader_candidates):
            if n == master or not cluster.alive(n):
                self.prefix_checked.pop(n, None)
                continue
            core = cluster.node(n)
            client = core.ha_client
            if core.role != "SLAVE" or core.master_id != master or client is None or client.state.name != "TRANSFER":
                self.prefix_checked.pop(n, None)
                continue
            slave_log = core.store.commit_log
            start, end = self.prefix_checked.get(n, 0), slave_log.get_max_offset()
            if end > master_log.get_max_offset():
                return f"I3: slave {n} has {end} bytes, more than its master {master}'s {master_log.get_max_offset()}"
            for offset, data in commit_log_chunks(slave_log, max(start, slave_log.get_min_offset(), 0), end):
                if master_log.get_data(offset, len(data)) != data:
                    return f"I3: slave {n}'s log differs from master {master}'s in [{offset}, {offset + len(data)})"
            self.prefix_checked[n] = end
        return None

    @staticmethod
    def _alter_from_master(cluster: Any, controller: str | None, src: str | None) -> str | None:
        if controller is None or src is None or not cluster.alive(controller) or src not in cluster.leader_candidates:
            return None
        core = cluster.node(controller)
        broker = cluster.node(src)
        for info in core.manager.sync_state_set_info_table.values():
            if broker.broker_id is not None and info.master_broker_id != broker.broker_id:
                return f"I4: the controller accepted a SyncStateSet change from {src} (id {broker.broker_id}), " \
                       f"but the master is {info.master_broker_id}"
        return None

    def _dispatch_within_confirm(self, cluster: Any, node: str) -> str | None:
        core = cluster.node(node)
        if not core.config.all_ack_in_sync_state_set or core.fenced:
            return None
        if core.role == "SLAVE" and (core.ha_client is None or core.ha_client.state.name != "TRANSFER"):
            return None
        store = core.store
        reput = store.reput_message_service
        if reput is None:
            return None
        seen = self.dispatched.get(node)
        point = reput.reput_from_offset
        end = max((cq.max_physic_offset for queues in store.consume_queue_table.values() for cq in queues.values()),
                  default=-1)
        if seen is None or seen[0] != id(core):  # a (re)started broker: what recovery dispatched
            self.dispatched[node] = (id(core), point, end)
            confirm = store.get_confirm_offset()
            if core.config.cut_consume_queues_on_every_restart:
                allowed = confirm
            elif not store.last_exit_ok:
                allowed = max(confirm, seen[2] if seen is not None else 0)
            else:
                return None
            if end > allowed:
                return f"I5: {node} starts with consume queues up to {end}, beyond its confirm offset {confirm}" \
                       f" and what it had dispatched before ({allowed})"
            return None
        self.dispatched[node] = (id(core), point, max(end, seen[2]))
        if point > seen[1] and point > reput.last_end_offset:
            return f"I5: {node} dispatched up to {point}, beyond the confirm offset {reput.last_end_offset} " \
                   f"of that round"
        return None
