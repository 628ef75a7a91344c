"""The sentences ``labs/07_spark.ipynb`` prints, in the reader's language (the one catalogue, :mod:`rocketlab.i18n`).

The lab's code cells are the same in both twins, so a sentence written in a cell would print English in the
Chinese one; each cell computes its values and prints the line one of these functions makes of them. Every
function returns text and changes nothing. rocketlab's own (no RocketMQ counterpart).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from rich.cells import cell_len

from rocketlab.i18n import N_, _

_NOT_ELECTED_RANGES = ("150-150", "150-151", "150-155", "150-175", "150-200", "150-300")
"""The ranges whose trials without a leader lab 07 lists, in the order of the paper's legend."""
CURVE_NAMES = (N_("Raft 150-300 ms"), N_("DLedger 0.3.1.2, scaled to 150-300"), N_("DLedger 0.3.1.2, Java defaults"))
"""The curves lab 07's code cell names (the same in both twins): in the catalogue, so that the legend of
:func:`rocketlab.viz.figures.figure16.downtime_cdf` and :func:`curve_lines` speak the reader's language."""


def session_line(spark: Any, seconds: float) -> str:
    """The Spark session the lab runs on and how long it took to start."""
    return _("Spark {version} on {master}: the session took {seconds:.1f} s to start").format(
        version=spark.version, master=spark.sparkContext.master, seconds=seconds)


def partitions_line(partitions: int) -> str:
    return _("{partitions} partitions (one per mapped file)").format(partitions=partitions)


def index_line(entries: int, per_node: Mapping[str, int]) -> str:
    return _("{entries} index entries: {per_node}").format(entries=entries, per_node=dict(per_node))


def lost_lines(lost: pd.DataFrame) -> str:
    """One line per role of :func:`rocketlab.labs_support.spark_lab.lost_by_run`'s table."""
    return "\n".join(
        _("{role}: {lost} of {acked} acknowledged messages lost over {seeds} seeds; {losing} seeds lost at least "
          "one, the worst lost {worst}").format(
            role=role, lost=int(group["lost"].sum()), acked=int(group["acked"].sum()), seeds=len(group),
            losing=int((group["lost"] > 0).sum()), worst=int(group["lost"].max()))
        for role, group in lost.groupby("role"))


def cq_line(cq: pd.DataFrame) -> str:
    """The consume-queue cross-check summed over the broker stores."""
    return _("{units} units in {stores} broker stores: {consistent} consistent, {mismatched} mismatched, "
             "{dangling} dangling").format(
        units=int(cq["units"].sum()), stores=len(cq), consistent=int(cq["consistent"].sum()),
        mismatched=int(cq["mismatched"].sum()), dangling=int(cq["dangling"].sum()))


def trials_line(trials: int, seconds: float, master: str) -> str:
    return _("{trials} trials in {seconds:.1f} s on {master}").format(trials=trials, seconds=seconds, master=master)


def no_leader_lines(rows: pd.DataFrame, no_leader: Mapping[str, int], trials: Mapping[str, int]) -> str:
    """Per timeout range: trials that elected nobody within 60 s, and the median time without a leader."""
    return "\n".join(
        _("{range:>8}: {none:>3} of {trials:>4} trials without a leader after 60 s; median {median:.0f} ms").format(
            range=name, none=no_leader[name], trials=trials[name],
            median=rows.loc[rows["range"] == name, "downtime_ms"].median())
        for name in _NOT_ELECTED_RANGES)


def means_lines(ranges: Sequence[tuple[int, int]], means: Sequence[float]) -> str:
    """The mean time without a leader per range, then whether shorter ranges gave shorter failovers."""
    listed = ", ".join(_("{lo}-{hi}: mean {mean:.0f} ms").format(lo=lo, hi=hi, mean=m) for (lo, hi), m in
                       zip(ranges, means, strict=True))
    return listed + "\n" + _("shorter ranges, shorter failovers: {answer}").format(answer=list(means) == sorted(means))


def worst_case_line(worst: Any, round_ms: int) -> str:
    """Our worst case of the 150-200 range beside the paper's, in election rounds."""
    return _("150-200 worst case: ours {ours:.0f} ms over {trials} trials, paper {paper} ms over 1000: "
             "{rounds:+.1f} election rounds of {round_ms} ms apart").format(
        ours=worst.ours_ms, trials=worst.trials, paper=worst.paper_ms,
        rounds=(worst.ours_ms - worst.paper_ms) / round_ms, round_ms=round_ms)


def write_lines(by_write: pd.Series) -> str:
    """The median per candidate's disk-write time, then whether it rises with the write."""
    lines = [_("150-155, candidate's disk write {write} ms: median {median:.0f} ms").format(write=w, median=m)
             for w, m in by_write.items()]
    rises = bool(by_write["0-0"] < by_write["2-4"] < by_write["3-5"])
    return "\n".join([*lines, _("the median rises with the write: {answer}").format(answer=rises)])


def reply_line(by_reply: pd.Series) -> str:
    return _("12-24, replies of 7-9 ms: mean {fast:.0f} ms; of 13-15 ms: mean {slow:.0f} ms").format(
        fast=by_reply["uniform:7:10"], slow=by_reply["uniform:13:16"])


def profiles_lines(by_version: Mapping[str, list], by_timers: pd.Series, raft_300: float) -> str:
    """DLedger's two releases on the same seeds, then DLedger's timers beside Raft's 150-300 ms."""
    scaled = by_timers["scaled to 150-300"]
    return "\n".join([
        _("0.3.1.2 and 0.3.2 elect alike on every seed: {answer}").format(
            answer=by_version["dledger-0.3.1.2"] == by_version["dledger-0.3.2"]),
        _("median time without a leader: DLedger 0.3.1.2, Java defaults {java:.0f} ms; DLedger scaled to 150-300 "
          "{scaled:.0f} ms; Raft 150-300 {raft:.0f} ms").format(java=by_timers["java defaults"], scaled=scaled,
                                                               raft=raft_300),
        _("DLedger scaled to 150-300 is slower than Raft") if scaled > raft_300 else
        _("DLedger scaled to 150-300 is not slower than Raft")])


def curve_lines(curves: Sequence[tuple[str, pd.DataFrame]]) -> str:
    """Minimum, median and maximum time without a leader of each curve of a CDF figure, the names padded to
    one width in monospace columns (a Chinese character takes two: ``rich.cells.cell_len``)."""
    width = max(cell_len(_(name)) for name, _trials in curves) + 2
    return "\n".join(
        _("{name} min {low:>5.0f}  median {mid:>5.0f}  max {high:>5.0f} ms").format(
            name=_(name) + " " * (width - cell_len(_(name))), low=d.min(), mid=d.median(), high=d.max())
        for name, d in ((name, trials["downtime_ms"]) for name, trials in curves))


def summary_lines(summary: pd.DataFrame) -> str:
    """One line per sample run of :func:`rocketlab.labs_support.spark_lab.events_per_run`'s table."""
    return "\n".join(
        _("{run:<24} {events:>6} events, {puts:>3} puts ({put_ok} PUT_OK), {faults:>2} faults, "
          "{violations} violations").format(run=row.run, events=row.events, puts=row.puts, put_ok=row.put_ok,
                                            faults=row.faults, violations=row.violations)
        for row in summary.itertuples())


def beside_lines(beside: pd.DataFrame) -> str:
    """The paper's Figure 16 statistics beside ours, one line per range and statistic
    (:func:`rocketlab.labs_support.dledger_election.paper_beside_ours`)."""
    return "\n".join(
        _("{range:>8} {statistic:>6}: paper {paper:>6} ms ({says}); ours {ours:>6.0f} ms over {trials} "
          "trials").format(range=r.range, statistic=r.statistic, paper=r.paper_ms, says=r.paper_says,
                           ours=r.ours_ms, trials=r.trials)
        for r in beside.itertuples())
