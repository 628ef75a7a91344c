"""The lines ``labs/06_controller_mode.ipynb`` prints, in the kernel's language.

rocketlab's own (no RocketMQ counterpart). Each function turns what a helper of
:mod:`rocketlab.labs_support.controller_mode` returned (or the cluster's state) into the block a cell prints,
through the one catalogue (:mod:`rocketlab.i18n`), so that both twins of the lab run the same code cell and
each speaks its reader's language. The values stay in the cells' variables (``tests/test_labs.py`` reads
those); only the words are here. The designs and faults keep their English names in the tables (the cells
index them by those); the lines name them in the reader's language
(:func:`~rocketlab.labs_support.controller_mode.named`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rocketlab.i18n import N_, _
from rocketlab.labs_support.controller_mode import controller_calls, expansions, named
from rocketlab.sim import Cluster

__all__ = [
    "broker_ids_line", "election_lines", "far_ahead_line", "full_set_lines", "loss_lines", "median_lines",
    "start_up_lines", "three_ways_lines", "truncation_lines",
]

def _width(text: str) -> int:
    """The columns ``text`` takes in monospace output, a wide (CJK) character taking two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _padded(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns."""
    return text + " " * max(width - _width(text), 0)


def start_up_lines(c: Cluster, s: Mapping[str, int]) -> str:
    """Section 1: when the controllers and the brokers found each other
    (:func:`~rocketlab.labs_support.controller_mode.start_up`), then every controller call."""
    head = _("controllers' DLedger leader at {dledger} ms, controller leader at {controller} ms; brokers asked at "
             "{ask} ms (no leader yet) and again at {found} ms; first id request at {change} ms").format(
        dledger=s["dledger_leader"], controller=s["controller_leader"], ask=s["first_ask"], found=s["found"],
        change=s["first_change"])
    return "\n".join([head, *controller_calls(c)])


def broker_ids_line(c: Cluster, master: str, config_ids: Mapping[str, int]) -> str:
    """Section 1: the master's brokerControllerId and the brokerConfig.brokerId it and its slaves register with."""
    return _("the master {master} (brokerControllerId {controller_id}) registers with brokerConfig.brokerId "
             "{config_id}; its slaves with {slaves}").format(
        master=master, controller_id=c.node(master).broker_id, config_id=config_ids[master],
        slaves=sorted(i for n, i in config_ids.items() if n != master))


def full_set_lines(c: Cluster, f: Mapping[str, Any], members: list[int]) -> str:
    """Section 2: how the SyncStateSet grew back after the election
    (:func:`~rocketlab.labs_support.controller_mode.expansions`), and when it was full."""
    last = _("SyncStateSet {members} at t={t} ms, {after} ms after the election").format(
        members=members, t=c.now_ms, after=c.now_ms - f["elected_ms"])
    return "\n".join([*expansions(c, f["elected_ms"]), last])


def truncation_lines(f: Mapping[str, Any], point: int) -> str:
    """Section 2: both epoch caches, findConsistentPoint's answer, the old master's cut and what it removed
    (:func:`~rocketlab.labs_support.controller_mode.failover_with_in_flight`)."""
    return "\n".join([
        _("old master: {epochs}").format(epochs=f["old_epochs"]),
        _("new master: {epochs}").format(epochs=f["new_master_epochs"]),
        f"findConsistentPoint: {point}",
        _("the old master cut its log at {at} and removed {removed} bytes (it had {end}; epoch 2 starts at "
          "{start})").format(at=f["truncated_at"], removed=f["removed_bytes"], end=f["old_master_end"],
                             start=f["new_master_epochs"][-1][1]),
        _("messages cut: {n} {messages}; of them in another broker's log: {elsewhere}").format(
            n=len(f["removed_messages"]), messages=f["removed_messages"], elsewhere=len(f["removed_held_elsewhere"])),
        _("now: {state}").format(state=f["old_master_now"])])


def median_lines(times: Sequence[Mapping[str, Any]]) -> str:
    """Section 3: per design and fault, the median failover (min, max) of
    :func:`~rocketlab.labs_support.controller_mode.failover_times`' rows, then which design fails over first
    after each fault."""
    labels = [_("{design}, {fault}:").format(design=named(r["design"]), fault=named(r["fault"])) for r in times]
    width = max([36, *(_width(label) for label in labels)])  # 36: the English column
    lines = [_padded(label, width) + " " + _("median {median} ms (min {min}, max {max}) over {seeds} seeds").format(
                 median=f"{r['median (ms)']:.0f}", min=r["min (ms)"], max=r["max (ms)"], seeds=r["seeds"])
             for label, r in zip(labels, times, strict=True)]
    median = {(r["design"], r["fault"]): r["median (ms)"] for r in times}
    for fault in ("process crash", "host failure"):
        controller_first = median[("controller mode", fault)] < median[("DLedger commit log", fault)]
        lines.append((_("after a {fault}, controller mode fails over first") if controller_first
                      else _("after a {fault}, DLedger fails over first")).format(fault=named(fault)))
    return "\n".join(lines)


ELECTIONS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    (N_("SyncStateSet {members}:"), {"members": "{1,2,3}"}, {"sync": {1, 2, 3}}),
    (N_("SyncStateSet {members}:"), {"members": "{1,2,3,4}"}, {"sync": {1, 2, 3, 4}}),
    (N_("the same, old master {old} alive:"), {"old": 2}, {"sync": {1, 2, 3, 4}, "old": 2}),
    (N_("the same, broker {broker} designated:"), {"broker": 1}, {"sync": {1, 2, 3, 4}, "old": 2, "prefer": 1}),
    (N_("SyncStateSet {members}, {broker} dead, clean:"), {"members": "{1}", "broker": 1},
     {"sync": {1}, "alive": (2, 3, 4)}),
    (N_("SyncStateSet {members}, {broker} dead, unclean:"), {"members": "{1}", "broker": 1},
     {"sync": {1}, "unclean": {1, 2, 3, 4}, "alive": (2, 3, 4)}),
)
"""Section 4's cases: what each line says (its words and their values), and the arguments the lab's ``elect`` is
called with."""


def election_lines(elect: Callable[..., int | None]) -> str:
    """Section 4: the lab's ``elect`` (``ElectPolicy.elect`` over its heartbeats) called on each case of
    :data:`ELECTIONS`, one line each: the case, then the broker elected (None: nobody)."""
    labels = [_(label).format(**words) for label, words, _kwargs in ELECTIONS]
    width = max([40, *map(_width, labels)])  # 40: the English column
    return "\n".join(f"{_padded(label, width)} {elect(**kwargs)}"
                     for label, (_label, _words, kwargs) in zip(labels, ELECTIONS, strict=True))


def far_ahead_line(elected: int | None) -> str:
    """Section 4: whom the policy elects when broker 1 is 2.5 GiB ahead (the int wrap of the comparator)."""
    return _("broker 1 is 2.5 GiB ahead; elected: {elected}").format(elected=elected)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def three_ways_lines(w: Any, fastest: tuple[str, int], copy: int) -> str:
    """Section 5: from ``three_ways``' table indexed by (design, brokers): DLedger without a majority, the
    fastest failover, what controller mode stores against DLedger, and the bytes of one record."""
    after = w["new master after (ms)"]
    dledger_2 = after[("DLedger commit log", 2)]
    stored = w["stored bytes per put"]
    return "\n".join([
        (_("DLedger needs 3 brokers to fail over ({ms} ms); with 2 it has no majority left: a new master never came")
         if _missing(dledger_2) else
         _("DLedger needs 3 brokers to fail over ({ms} ms); with 2 it has no majority left: a new master came")
         ).format(ms=f"{after[('DLedger commit log', 3)]:.0f}"),
        _("fastest failover: {design} with {brokers} brokers ({ms} ms)").format(
            design=named(fastest[0]), brokers=fastest[1], ms=f"{after[fastest]:.0f}"),
        _("controller mode fails over with 2 brokers ({ms} ms) and stores {controller} bytes per put against "
          "DLedger's {dledger}").format(ms=f"{after[('controller mode, allAck', 2)]:.0f}",
                                        controller=stored[("controller mode, allAck", 2)],
                                        dledger=stored[("DLedger commit log", 3)]),
        _("one record is {copy} bytes; DLedger stores 3 x ({copy} + 48-byte entry header) = {total}").format(
            copy=copy, total=3 * (copy + 48))])


def loss_lines(losses: Sequence[Mapping[str, Any]]) -> str:
    """Section 6: per run of :func:`~rocketlab.labs_support.controller_mode.loss_table`, what was acknowledged,
    lost and flagged; then how often the cut-off master (defaults, the first run) answered PUT_OK."""
    island = losses[0]
    return "\n".join([
        *(_("{scenario} acked {acked}, lost {lost}, violations {violations}").format(
            scenario=f"{r['scenario']:<38}", acked=f"{r['acked']:>2}", lost=r["acked lost"], violations=r["violations"])
          for r in losses),
        _("the cut-off master (defaults) answered PUT_OK {n} times with its SyncStateSet still {members}").format(
            n=island["acked by the cut-off master"], members=island["master's SyncStateSet when it acked"])])
