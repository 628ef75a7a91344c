"""Lab 05 exercises: RocketMQ's CommitLog on DLedger.

Edit the bodies below, then check them from the notebook (``check("lab05.phy_offset")``) or from a
shell (``rocketlab grade lab05``). The grader plugs your code into the real DLedgerCommitLog of
simulated broker groups (puts, failovers, a smooth upgrade from an old CommitLog) and reads every
message back. Keep the names and signatures; you may add helpers.
"""

from __future__ import annotations


def phy_offset(entry_pos: int) -> int:
    """The physical offset of the message in the DLedger entry at ``entry_pos``.

    A DLedger data file holds entries back to back, each an entry header followed by its body, and a
    broker on DLedger puts one RocketMQ record in each body. A message's physical offset (what
    PHYSICALOFFSET inside the record says, what the consume queue points to and what the producer gets
    back as wroteOffset) is where its record starts. The AppendHook writes it while DLedger appends the
    entry. How long the header is, read it from the hex dump of lab 05, section 1 (or from
    ``DLedgerEntry`` in DLedger's sources); do it before the lab's answer below the dump.
    """
    raise NotImplementedError("lab05.phy_offset")


def which_log(offset: int, divided_commitlog_offset: int, committed_pos: int) -> str | None:
    """``DLedgerCommitLog.getData``: which log serves a read at physical ``offset``.

    A broker upgraded from a classic CommitLog keeps the old files below ``dividedCommitlogOffset``
    (-1 when there were none) and writes DLedger's files from there. Return "commitlog" for an offset
    in the old files, "dledger" for one in DLedger's, and None for an offset at or beyond DLedger's
    ``committed_pos``: bytes a majority does not hold yet are never served.
    """
    raise NotImplementedError("lab05.which_log")
