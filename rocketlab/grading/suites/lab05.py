"""Lab 05's graded tests: ``phy_offset`` and ``which_log`` in the DLedger-backed CommitLog.

Scenarios run a 3-broker DLedger group in the simulator (files on disk): producers' puts, a failover,
a smooth upgrade from a classic CommitLog; every message must come back to a consumer, from the right
log, with the offsets the producer was told.
"""

from __future__ import annotations

import itertools
import random

from rocketlab.broker.dledger_commit_log import phy_offset, which_log
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import Calls, compare_table, expect, scratch_dir
from rocketlab.i18n import N_, _
from rocketlab.scenarios.broker_on_dledger import (
    FILE,
    bodies,
    new_broker_group,
    put_nowait,
    wait_for_master,
)

NO_LIMIT = 2**63 - 1


@graded("lab05.phy_offset", points=2,
        about=N_("The physical offset of entries at the start of a file, in the middle, in later files."))
def offset_table(ctx: Ctx) -> None:
    cases = [0, 1, 48, 1000, FILE - 48, FILE, 5 * FILE + 4096, 2**40]
    compare_table(cases, Calls(ctx.impl, lambda c: (c,)), phy_offset, lambda c: f"phy_offset(entry_pos={c})",
                  why=lambda c, want: _("the record starts after the entry's 48-byte header"))


@graded("lab05.phy_offset", points=1,
        about=N_("2,000 seeded entry positions from 0 to 2^62 (files of any size and number)."))
def any_offset(ctx: Ctx) -> None:
    rng = random.Random("lab05/any-offset")
    cases = [rng.choice((rng.randrange(FILE), rng.randrange(2**62), rng.randrange(64) * FILE + rng.randrange(-1, 2)))
             for _i in range(2000)]
    compare_table([max(c, 0) for c in cases], Calls(ctx.impl, lambda c: (c,)), phy_offset, lambda c: f"phy_offset(entry_pos={c})",
                  why=lambda c, want: _("the record starts after the entry's 48-byte header"))


@graded("lab05.phy_offset", points=4, seeds=range(3), name="put_and_pull",
        about=N_("Your offsets in every broker: 40 puts (the producer's wroteOffset must point at its record), a "
                 "failover of the master, 20 more puts; a consumer pulls all 60 back, in order."))
def put_and_pull(ctx: Ctx) -> None:
    rng = random.Random(ctx.seed)
    with scratch_dir("rocketlab-grade-") as root:
        c = ctx.keep(new_broker_group(root / "run", seed=ctx.seed))
        sent = []
        for i in range(40):
            body = f"m{i}-".encode() * rng.randrange(1, 40)
            h = c.put(body)
            expect(h.status == "PUT_OK", _("put {i} answered {status}").format(i=i, status=h.status))
            record = c.node(wait_for_master(c)).store.look_message_by_offset(h.wrote_offset)
            expect(record is not None and record.body == body,
                   _("put {i}: the producer was told wroteOffset {offset}, but the message there is {there}, not "
                     "{body}").format(i=i, offset=h.wrote_offset, there=repr(None if record is None else record.body[:20]),
                                      body=repr(body[:20])))
            sent.append(body)
        old = wait_for_master(c)
        for i in range(5):
            put_nowait(c, old, b"in-flight-%d" % i)
        c.crash(old)
        wait_for_master(c, timeout_ms=10_000)
        got = bodies(c)
        expect(got[:40] == sent, _("after the failover a consumer pulled {n} messages; the first 40 puts are missing "
                                   "or different").format(n=len(got)))
        for i in range(20):
            body = f"after-{i}-".encode() * rng.randrange(1, 20)
            expect(c.put(body).status == "PUT_OK", _("put {i} after the failover failed").format(i=i))
            sent.append(body)
        got = [b for b in bodies(c) if not b.startswith(b"in-flight")]
        first = next((k for k, (a, b) in enumerate(zip(got, sent, strict=False)) if a != b), min(len(got), len(sent)))
        expect(got == sent, _("a consumer pulled {n} of the {sent} acknowledged messages back; first difference at "
                              "#{first}").format(n=len(got), sent=len(sent), first=first))


@graded("lab05.which_log", points=3,
        about=N_("Reads below, at and above the divide, with and without an old log, below and at committedPos."))
def log_table(ctx: Ctx) -> None:
    divides = (-1, 0, 2 * FILE)
    offsets = (0, 1, FILE, 2 * FILE - 1, 2 * FILE, 2 * FILE + 48, 3 * FILE, 4 * FILE)
    committed = (0, 2 * FILE, 2 * FILE + 48, 3 * FILE + 1, NO_LIMIT)
    cases = list(itertools.product(offsets, divides, committed))
    compare_table(cases, Calls(ctx.impl), lambda c: which_log(*c),
                  lambda c: f"which_log(offset={c[0]}, divided_commitlog_offset={c[1]}, committed_pos={c[2]})")


@graded("lab05.which_log", points=1,
        about=N_("3,000 seeded reads: offsets at, one below and one above the divide and committedPos, in any "
                 "order of the two (a divide above committedPos included), no old log (-1) and no limit."))
def any_read(ctx: Ctx) -> None:
    rng = random.Random("lab05/any-read")
    cases = []
    for _i in range(3000):
        divide = rng.choice((-1, 0, rng.randrange(1, 5 * FILE)))
        committed = rng.choice((0, NO_LIMIT, rng.randrange(1, 5 * FILE), max(divide, 0) + rng.randrange(-1, 2)))
        offset = max(0, rng.choice((divide, committed if committed < NO_LIMIT else 0, rng.randrange(6 * FILE)))
                     + rng.randrange(-1, 2))
        cases.append((offset, divide, committed))
    compare_table(cases, Calls(ctx.impl), lambda c: which_log(*c),
                  lambda c: f"which_log(offset={c[0]}, divided_commitlog_offset={c[1]}, committed_pos={c[2]})")


@graded("lab05.which_log", points=4, seeds=range(2), name="smooth_upgrade",
        about=N_("Your routing in every broker of a group upgraded from a classic CommitLog (120 old messages in "
                 "two files): old and new messages pulled back in order, before and after a restart of the group."))
def smooth_upgrade(ctx: Ctx) -> None:
    with scratch_dir("rocketlab-grade-") as root:
        c = ctx.keep(new_broker_group(root / "run", seed=ctx.seed, old_messages=120))
        expected = [f"old-{i:03d}".encode() * 100 for i in range(120)]
        for i in range(30):
            body = f"new-{i}".encode() * 20
            expect(c.put(body).status == "PUT_OK", _("put {i} after the upgrade failed").format(i=i))
            expected.append(body)
        got = bodies(c)
        expect(got == expected, _("after the upgrade a consumer pulled {n} of {want} messages ({old} old, {new} new): "
                                  "reads below dividedCommitlogOffset come from the old files, the rest from "
                                  "DLedger's").format(n=len(got), want=len(expected),
                                                      old=sum(g.startswith(b'old') for g in got),
                                                      new=sum(g.startswith(b'new') for g in got)))
        nodes = c.node_ids
        c.crash(*nodes)
        c.restart(*nodes)
        wait_for_master(c)
        got = bodies(c)
        expect(got == expected, _("after a restart of the upgraded group a consumer pulled {n} of {want} "
                                  "messages").format(n=len(got), want=len(expected)))
