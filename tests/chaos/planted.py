"""Planted bugs for the campaign's checker: ``python -m tests.chaos.planted BUG node --config FILE``.

Each bug is a patch applied here, from outside the kit's code paths, before ``rocketlab.cli.main`` runs
the node as usual; a campaign runs it through ``RunSpec.node_module = "tests.chaos.planted:BUG"``. The
kit's own command is unchanged. :data:`BUGS` says what each one breaks and the check that must name it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from rocketlab import plugs
from rocketlab.broker import broker as broker_module
from rocketlab.cli import main
from rocketlab.controller import elect_policy
from rocketlab.core import OutputBuilder
from rocketlab.dledger.entry import INDEX_UNIT_SIZE
from rocketlab.dledger.store import mmap_file_store, mmap_recovery
from rocketlab.ha import ha_client
from rocketlab.ha.wire import NEED_DATA
from rocketlab.net import node as net_node
from rocketlab.store import PutMessageStatus
from rocketlab.trace.recorder import TraceRecorder


def _sync_ack_at_start(self: Any, handle: Any, now_ms: int, out: OutputBuilder) -> PutMessageStatus | None:
    """BrokerCore._handle_ha waiting for the slave to reach the put's *start* (no ``+ wrote_bytes``)."""
    next_offset = handle.result.wrote_offset  # the bug: the slave need not have the message
    if not self.ha_service.is_slave_ok(next_offset):
        return PutMessageStatus.SLAVE_NOT_AVAILABLE
    self.ha_service.submit_replica_request(next_offset, handle.token, now_ms)
    self.pending[handle.token] = handle
    self.ha_service.wakeup_all(now_ms, out)
    return None


def _self_quorum(water_marks: dict[str, int], term: int, committed_index: int, commit_only_current_term: bool,
                 term_of: Callable[[int], int]) -> int:
    """QuorumAckChecker's quorum index from the leader's own watermark alone (the highest)."""
    index = max(water_marks.values())
    if commit_only_current_term and index > committed_index and term_of(index) != term:
        index = min(index, committed_index)
    return index


def _slave_acks_before_writing(self: Any, data: bytes, now_ms: int, out: OutputBuilder) -> int:
    """HAClient.on_stream_data acknowledging what it received and writing it one read later."""
    self.last_read_timestamp = now_ms
    self.parser.receive_data(data)
    pending = getattr(self, "_planted_pending", [])
    for phy_offset, body in pending:  # last read's frames, written only now
        self.commit_log.append_data(phy_offset, body)
    received = []
    while (frame := self.parser.next_event()) is not NEED_DATA:
        if frame.body:
            received.append((frame.phy_offset, frame.body))
    self._planted_pending = received
    if received:
        end = received[-1][0] + len(received[-1][1])
        if end > self.current_reported_offset:
            self.current_reported_offset = end
            self._report(end, now_ms, out)
    return sum(len(b) for _, b in pending)


def _elect_outside(sync_state_brokers: set[int] | None, all_replica_brokers: set[int] | None,
                   old_master: int | None, prefer_broker_id: int | None, is_valid: Callable[[int], bool],
                   live_info: Any) -> int | None:
    """DefaultElectPolicy preferring a live broker *outside* the SyncStateSet (ids 0-9 tried)."""
    outside = [b for b in range(10) if b not in (sync_state_brokers or set()) and b != old_master and is_valid(b)]
    if sync_state_brokers and outside:
        return outside[0]
    return elect_policy.elect_master(sync_state_brokers, all_replica_brokers, old_master, prefer_broker_id,
                                     is_valid, live_info)


_recover = mmap_file_store.recover


def _recover_losing_tail(store: Any) -> Any:
    """DLedger store recovery that silently drops the last two entries on every restart."""
    report = _recover(store)
    end = store.ledger_end_index
    if end - 2 >= store.ledger_begin_index >= 0:
        cut = store.get(end - 1)
        mmap_recovery._cut(store.data_file_list, cut.pos)
        mmap_recovery._cut(store.index_file_list, cut.index * INDEX_UNIT_SIZE)
        store.ledger_end_index, store.ledger_end_term = cut.index - 1, store.get(cut.index - 1).term
        store.update_ledger_end_index_and_term()
    return report


async def _flush_every_only(runtime: Any, seconds: float) -> None:
    """The node's trace reaching its file only every ``seconds`` (the 200 ms of issue 40)."""
    while True:
        await asyncio.sleep(seconds)
        if runtime.recorder.sink is not None:
            runtime.recorder.sink.flush()


def _plant_trace_loss() -> None:
    TraceRecorder.flush = lambda self: None  # the runtime's flush before actions goes
    net_node._flush_every = _flush_every_only


def skipping_read_back(read_back: Callable[..., Any], every: int = 7) -> Callable[..., Any]:
    """A consumer that skips every ``every``-th message of each queue it reads back (planted in the campaign's
    own process: the messages stay in the store, so the checker must name them ``consumer-side``)."""
    async def read(*args: Any, **kw: Any) -> tuple[str | None, dict[int, list[tuple[int, str]]]]:
        node, reads = await read_back(*args, **kw)
        return node, {q: [m for i, m in enumerate(msgs) if i % every != every - 1] for q, msgs in reads.items()}
    return read


BUGS: dict[str, tuple[Callable[[], None], str]] = {
    "sync-ack-at-start": (lambda: setattr(broker_module.BrokerCore, "_handle_ha", _sync_ack_at_start), "early-ack"),
    "dledger-self-quorum": (lambda: plugs.install({"lab04.quorum_index": _self_quorum}), "early-ack"),
    "slave-ack-before-write": (lambda: setattr(ha_client.HAClient, "on_stream_data", _slave_acks_before_writing),
                               "slave-ack-before-write"),
    "controller-elect-outside": (lambda: plugs.install({"lab06.elect_master": _elect_outside}),
                                 "election-outside-sync-state-set"),
    "store-loses-tail": (lambda: setattr(mmap_file_store, "recover", _recover_losing_tail), "store-lost-entries"),
    "trace-loss-200ms": (_plant_trace_loss, "trace-lost"),
}
"""Bug -> (its patch, the verdict check that must name it)."""


if __name__ == "__main__":
    bug, *rest = sys.argv[1:]
    BUGS[bug][0]()
    sys.exit(main(rest))
