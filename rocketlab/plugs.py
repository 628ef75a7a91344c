"""Override points: where a learner's function replaces one of the kit's own (the graded labs).

Each point is named after an exercise of ``labs/exercises/`` (``"lab03.handle_vote"``) and played by
default by the kit's own function (:data:`POINTS` says which, and where the real component calls it).
A component asks :func:`resolve` each time it needs the piece, so a function plugged in with
:func:`plugged` runs inside the real CommitLog, HA client, elector or pusher for the duration of a
with-block; :func:`install` keeps it until :func:`clear` (a replay opened in the cluster viewer, whose
forks must run the same code). With nothing plugged, :func:`resolve` is one lookup in an empty dict.

This module is rocketlab's own addition (nothing in RocketMQ or DLedger corresponds to it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F")

POINTS: dict[str, tuple[str, str]] = {
    "lab01.transfer_parser": ("rocketlab.ha.wire:TransferParser", "HAClient: one parser per connection"),
    "lab01.decide_wait_transfer": ("rocketlab.ha.group_transfer:decide_wait_transfer",
                                   "GroupTransferService.do_wait_transfer: each waiting put"),
    "lab02.encode_record": ("rocketlab.store.message_codec:encode_record",
                            "CommitLog: every put (MessageExtEncoder.encode)"),
    "lab02.is_end_of_file": ("rocketlab.store.commit_log:is_end_of_file",
                             "DefaultAppendMessageCallback.do_append / do_append_batch"),
    "lab02.unit_position": ("rocketlab.store.consume_queue:unit_position",
                            "ConsumeQueue.get_index_buffer: every unit read"),
    "lab02.index_positions": ("rocketlab.store.index_file:index_positions",
                              "IndexFile.put_key and select_phy_offset"),
    "lab03.handle_vote": ("rocketlab.dledger.elector_decisions:decide_vote", "DLedgerLeaderElector.handle_vote"),
    "lab03.parse_vote_result": ("rocketlab.dledger.elector_decisions:parse_vote_result",
                                "DLedgerLeaderElector.finish_vote_round"),
    "lab04.quorum_index": ("rocketlab.dledger.entry_pusher:quorum_index", "QuorumAckChecker.do_work"),
    "lab04.decide_compare": ("rocketlab.dledger.entry_dispatcher:decide_compare",
                             "EntryDispatcher: each COMPARE answer"),
    "lab05.phy_offset": ("rocketlab.broker.dledger_commit_log:phy_offset",
                         "DLedgerCommitLog.append_hook and async_put's wroteOffset"),
    "lab05.which_log": ("rocketlab.broker.dledger_commit_log:which_log",
                        "DLedgerCommitLog.get_data / get_message"),
    "lab06.find_consistent_point": ("rocketlab.ha.epoch_file_cache:find_consistent_point",
                                    "EpochFileCache.find_consistent_point: a returning slave's handshake"),
    "lab06.elect_master": ("rocketlab.controller.elect_policy:elect_master",
                           "DefaultElectPolicy.elect: every master election of the controller"),
    "lab07.acked_but_lost": ("rocketlab.analysis.lost:acked_but_lost",
                             "lost_messages: the Spark query over every run's trace and commit logs"),
}
"""Every override point: name -> (the kit's own function as ``module:attribute``, where it is called)."""

_active: dict[str, Any] = {}


def resolve(name: str, default: F) -> F:
    """The function plugged in at ``name``, else ``default`` (the kit's own)."""
    return _active.get(name, default)


def _check(overrides: Mapping[str, Any]) -> None:
    unknown = sorted(set(overrides) - set(POINTS))
    if unknown:
        raise KeyError(f"unknown override point(s) {unknown}; known: {sorted(POINTS)}")
    for name, fn in overrides.items():
        if not callable(fn):
            raise TypeError(f"override {name!r} must be callable, got {type(fn).__name__}")


@contextmanager
def plugged(overrides: Mapping[str, Callable[..., Any]]) -> Iterator[None]:
    """Use ``overrides`` (point name -> function) inside the block; the previous state after it."""
    _check(overrides)
    saved = dict(_active)
    _active.update(overrides)
    try:
        yield
    finally:
        _active.clear()
        _active.update(saved)


def install(overrides: Mapping[str, Callable[..., Any]]) -> None:
    """Use ``overrides`` from now on (until :func:`clear`)."""
    _check(overrides)
    _active.update(overrides)


def clear() -> None:
    """Back to the kit's own functions everywhere."""
    _active.clear()


def active() -> dict[str, Any]:
    """What is plugged in now (a copy)."""
    return dict(_active)
