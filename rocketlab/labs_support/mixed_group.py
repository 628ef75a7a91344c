"""Lab 04: a DLedger group of Java and Python members, where this machine has the real DLedger
(:mod:`rocketlab.oracle.mixed`). Without it the cell says what it would show and how to get it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rocketlab.i18n import _
from rocketlab.labs_support.java_oracle import _oracle_or_explain
from rocketlab.oracle.mixed import MixedGroup


def mixed_dledger_group(appends: int = 10, workdir: str | Path | None = None) -> list[str]:
    """Two rocketlab members and one real DLedger 0.3.1.2 member, each ``rocketlab node`` on 127.0.0.1:
    appends from Java's DLedgerClient and from ours, the leader SIGKILLed, the group re-elected, the killed
    member restarted until it caught up; then each member's store read back by its own language."""
    oracle, lines = _oracle_or_explain()
    if oracle is None:
        return lines
    kinds = {"n0": "python", "n1": "python", "n2": "java"}
    g = MixedGroup(Path(workdir or tempfile.mkdtemp(prefix="rocketlab-mixed-")), kinds)
    out = []
    try:
        g.start_all()
        first = g.leader()
        java = g.append_java([b"java %d" % i for i in range(appends)])
        ours = g.append_ours([b"ours %d" % i for i in range(appends)])
        out.append(_("members: n0 and n1 are ours, n2 is DLedger 0.3.1.2 in Java; leader {leader} ({kind})").format(
            leader=first, kind=kinds[first]))
        out.append(_("{appends} appends from Java's DLedgerClient, codes {codes}; {appends} from ours, indexes "
                     "{first}..{last}").format(appends=appends, codes=sorted({a["code"] for a in java}), first=ours[0],
                                               last=ours[-1]))
        g.kill(first)
        second = g.leader()
        g.close_driver()
        g.append_java([b"java after"])
        last = g.append_ours([b"ours after"])[-1]
        out.append(_("leader {leader} SIGKILLed: the group elected {elected} ({kind})").format(
            leader=first, elected=second, kind=kinds[second]))
        g.start(first)
        caught_up = g.wait_caught_up(first, last)
        out.append(_("{member} restarted and caught up to index {index} through {leader}'s pushes: {caught_up}").format(
            member=first, index=last, leader=second, caught_up=caught_up))
    finally:
        g.stop_all()
    logs = {n: [(e["index"], e["term"], bytes(e["body"])) for e in g.read_back(n)["entries"]] for n in kinds}
    same = all(log == logs[second] for log in logs.values())
    out.append(_("every member's log read back (Java's store by Java, ours by ours): {n} entries, identical: "
                 "{same}").format(n=len(logs[second]), same=same))
    return out


__all__ = ["mixed_dledger_group"]
