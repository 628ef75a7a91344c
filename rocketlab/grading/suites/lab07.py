"""Lab 07's graded tests: ``acked_but_lost``, a Spark query over runs' traces and commit logs.

The tests start one local Spark session in the grader's worker (a JVM: about ten seconds, once). The
unit tests compare the learner's rows with the kit's on the sample runs in ``data/`` and on small runs
built to hit each rule (a restart after a crash, a second run with the same offsets, a record of another
size, a corrupt record, a put that was not acknowledged). The scenario test plugs the query into
``lost_messages`` and runs it over fresh master-slave crashes, where the simulator itself knows which
acknowledged messages the surviving slave lacks.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from rocketlab import plugs
from rocketlab.analysis.lost import ACKED_BUT_LOST_PLUG, acked_but_lost, lost_messages, read_commit_logs
from rocketlab.analysis.readers import read_events
from rocketlab.analysis.session import get_spark
from rocketlab.analysis.store_files import COMMIT_LOG_COLUMNS
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import expect, scratch_dir
from rocketlab.i18n import N_, _
from rocketlab.scenarios.tour import master_slave_crash
from rocketlab.trace.rundir import write_run
from rocketlab.workspace import kit_root

COLUMNS = ["run", "phy_offset", "size"]
DATA = kit_root() / "data"
"""The sample runs as shipped (read only)."""


_STARTING = threading.Lock()


def spark(app_name: str = "rocketlab-grader-lab07", **conf: str) -> Any:
    """The lab's local Spark session (the lab table's ``spark``: the judge's and the sandbox's; the
    worker starts it in a thread while the sandbox starts, so a test may ask while it is starting)."""
    with _STARTING:
        return get_spark(master="local[2]", app_name=app_name, **conf)


def rows_of(frame: Any, who: str) -> list[tuple]:
    expect(hasattr(frame, "columns") and hasattr(frame, "collect"),
           _("{who} returned {type}, not a Spark DataFrame").format(who=who, type=type(frame).__name__))
    expect(list(frame.columns) == COLUMNS, _("{who} returned the columns {got}; expected exactly {want}").format(
        who=who, got=list(frame.columns), want=COLUMNS))
    return [tuple(r) for r in frame.collect()]


def compare(ctx: Ctx, events: Any, records: Any, what: str) -> None:
    """The learner's query and the kit's on the same frames, cached: the rows read once (the commit logs
    through the data source's Python workers) serve the crossing to the sandbox and the reference."""
    events, records = events.cache(), records.cache()
    try:
        got = rows_of(ctx.impl(events, records), "acked_but_lost")
        want = [tuple(r) for r in acked_but_lost(events, records).collect()]
    finally:
        events.unpersist()
        records.unpersist()
    expect(sorted(got) == want, _("{what}: you found {n} lost message(s), expected {want}; first difference: "
                                  "{difference}").format(what=what, n=len(got), want=len(want),
                                                         difference=_first_difference(sorted(got), want)))
    expect(got == want, _("{what}: the right rows, but not sorted by run then phy_offset").format(what=what))


def _first_difference(got: list[tuple], want: list[tuple]) -> str:
    extra = [r for r in got if r not in want]
    missing = [r for r in want if r not in got]
    if extra:
        return _("{row} is not lost (a surviving replica holds it, or it was never acknowledged)").format(row=extra[0])
    if missing:
        return _("{row} is missing (acknowledged, and no surviving replica holds it)").format(row=missing[0])
    return _("duplicate rows")


@graded("lab07.acked_but_lost", points=3, time_limit_s=240,
        about=N_("The three runs of ``data/tour``: ASYNC_MASTER loses acknowledged messages, SYNC_MASTER and the "
                 "DLedger group do not; one query over all three."))
def sample_runs(ctx: Ctx) -> None:
    runs = [DATA / "tour" / name for name in ("async-master-crash", "sync-master-crash", "dledger-failover")]
    s = spark()
    # the kit's own runs and the suite's own (below) are read without the corrupt-line check: a Spark job
    # less per test, on inputs the kit wrote
    compare(ctx, read_events(s, runs, check=False), read_commit_logs(s, runs), "the tour's three runs")


def _event(t: int, seq: int, node: str | None, kind: str, **fields: Any) -> dict[str, Any]:
    return {"t": t, "seq": seq, "node": node, "kind": kind, **fields}


def edge_case_frames(root: Path) -> tuple[Any, Any]:
    """Two small runs with the same offsets: in ``one``, n1 crashed and came back, n2 crashed for good; in
    ``two``, n0 crashed, restarted and crashed again at the same instant (``seq`` decides)."""
    put = lambda t, seq, off, size, status="PUT_OK": _event(t, seq, "n0", "put", topic="T", queue_id=0,  # noqa: E731
                                                           queue_offset=off // 100, phy_offset=off, size=size,
                                                           status=status)
    fault = lambda t, seq, action, *nodes: _event(t, seq, None, "fault", action=action, targets=list(nodes))  # noqa: E731
    one = [put(1, 0, 0, 100), put(2, 1, 100, 100), put(3, 2, 200, 100), put(4, 3, 300, 100, "FLUSH_SLAVE_TIMEOUT"),
           put(5, 4, 400, 100), put(6, 5, 500, 100), fault(10, 6, "crash", "n1"), fault(11, 7, "partition", "n0", "n2"),
           fault(20, 8, "restart", "n1"), fault(30, 9, "crash", "n2"), fault(31, 10, "crash", "n0")]
    two = [put(1, 0, 0, 100), put(2, 1, 100, 100), put(3, 2, 200, 120), fault(9, 3, "crash", "n0"),
           fault(10, 4, "restart", "n0"), fault(10, 5, "crash", "n0")]
    write_run(root / "one", {"seed": 1}, one)
    write_run(root / "two", {"seed": 2}, two)
    s = spark()
    events = read_events(s, [root / "one", root / "two"], check=False)
    names = [n for n, _ in COMMIT_LOG_COLUMNS]

    def rec(run: str, node: str, off: int, size: int, corrupt: str | None = None) -> tuple:
        values = {"run": run, "node": node, "kind": "classic", "phy_offset": off, "total_size": size, "corrupt": corrupt}
        return tuple(values.get(n) for n in names)

    data = [rec("one", "n1", 0, 100), rec("one", "n1", 100, 100),  # n1 came back: it holds 0 and 100
            rec("one", "n2", 200, 100), rec("one", "n0", 400, 100),  # n2 and n0 are down at the end
            rec("one", "n1", 500, 90),  # another size at 500: not the acknowledged message
            # nothing at 300: that put was never acknowledged, so it is not lost either
            rec("two", "n1", 0, 100), rec("two", "n1", 100, 100, "corrupt: body CRC"), rec("two", "n0", 200, 120)]
    records = s.createDataFrame(data, ", ".join(f"{n} {t}" for n, t in COMMIT_LOG_COLUMNS))
    return events, records


@graded("lab07.acked_but_lost", points=3, time_limit_s=240,
        about=N_("Small runs that hit each rule: a crash followed by a restart (the node is back), a crash after a"
                 " restart at the same instant (``seq`` decides), a partition (not a crash), a record of another "
                 "size, a corrupt record, a put that was not acknowledged, two runs with the same offsets."))
def every_rule(ctx: Ctx) -> None:
    with scratch_dir("rocketlab-grade-") as root:
        events, records = edge_case_frames(root)
        compare(ctx, events, records, "the rule-by-rule runs")


OTHER_FAULTS = ("cut_link", "partition", "pause", "resume", "heal", "timeout")


def fault_order_frames(root: Path, seed: int = 7, runs: int = 8) -> tuple[Any, Any]:
    """Seeded runs of three nodes whose faults often share an instant (``seq`` orders them), in every
    order: a crash and a restart at once both ways round, partitions, cut links, pauses and heals after
    a crash (they do not bring a node back) and before one; puts acknowledged or not; records held,
    corrupt or of another size on each node."""

    rng = random.Random(f"lab07/fault-orders/{seed}")
    names = [n for n, _ in COMMIT_LOG_COLUMNS]
    nodes = ("n0", "n1", "n2")
    data, dirs = [], []
    for r in range(runs):
        run, events, seq = f"r{r}", [], 0
        for k in range(8):
            status = "PUT_OK" if rng.random() < 0.8 else "FLUSH_SLAVE_TIMEOUT"
            events.append(_event(k, seq, "n0", "put", topic="T", queue_id=0, queue_offset=k, phy_offset=100 * k,
                                 size=100, status=status))
            seq += 1
        scripted = [(("crash", "n1"), ("restart", "n1")), (("restart", "n1"), ("crash", "n1"))][r % 2]
        t = 20
        for action, node in scripted:  # two faults of one node at the same instant, both orders over the runs
            events.append(_event(t, seq, None, "fault", action=action, targets=[node]))
            seq += 1
        for _i in range(rng.randrange(2, 7)):
            t += rng.choice((0, 0, 1, 5))
            node = rng.choice(nodes)
            action = rng.choice(("crash", "restart", *OTHER_FAULTS))
            if action == "partition":
                rest = [n for n in nodes if n != node]
                targets = [node, ",".join(rest)] if rng.random() < 0.5 else [node, *rest]
            elif action == "cut_link":
                targets = [node, rng.choice([n for n in nodes if n != node])]
            elif action == "heal":
                targets = []
            else:
                targets = [node]
            events.append(_event(t, seq, None, "fault", action=action, targets=targets))
            seq += 1
        write_run(root / run, {"seed": r}, events)
        dirs.append(root / run)
        for node in nodes:
            for k in range(8):
                roll = rng.random()
                if roll < 0.4:
                    continue
                size = 100 if roll < 0.9 else 90
                corrupt = "corrupt: body CRC" if rng.random() < 0.1 else None
                values = {"run": run, "node": node, "kind": "classic", "phy_offset": 100 * k, "total_size": size,
                          "corrupt": corrupt}
                data.append(tuple(values.get(n) for n in names))
    s = spark()
    records = s.createDataFrame(data, ", ".join(f"{n} {t}" for n, t in COMMIT_LOG_COLUMNS))
    return read_events(s, dirs, check=False), records


@graded("lab07.acked_but_lost", points=2, time_limit_s=240,
        about=N_("Eight seeded runs whose faults share instants in every order: a crash and a restart at once "
                 "(``seq`` decides, both ways round), partitions, cut links, pauses and heals after a crash (a "
                 "crashed node stays down until it restarts)."))
def fault_orders(ctx: Ctx) -> None:
    with scratch_dir("rocketlab-grade-") as root:
        events, records = fault_order_frames(root)
        compare(ctx, events, records, "the fault-order runs")


@graded("lab07.acked_but_lost", points=4, seeds=range(1, 4), time_limit_s=300, name="crash_sweep",
        about=N_("Your query inside ``lost_messages`` over fresh runs: an ASYNC_MASTER and a SYNC_MASTER pair lose"
                 " their master under load; the messages you find lost must be exactly the acknowledged ones the "
                 "surviving slave does not have (the simulator counts them from the slave's max offset)."))
def crash_sweep(ctx: Ctx) -> None:
    with scratch_dir("rocketlab-grade-") as root:
        stories = [master_slave_crash(root / f"{role.lower()}-{ctx.seed}", role, seed=ctx.seed, puts=40,
                                      broker={"store_options": {"mapped_file_size_consume_queue": 20_000,
                                                                "max_hash_slot_num": 100, "max_index_num": 400}})
                   for role in ("ASYNC_MASTER", "SYNC_MASTER")]
        for story in stories:
            story.cluster.close()
        with plugs.plugged({ACKED_BUT_LOST_PLUG: ctx.impl}):
            found = rows_of(lost_messages(spark(), [s.run_dir for s in stories]), "lost_messages (your query)")
        for story in stories:
            truth = sorted((story.run_dir.name, h.wrote_offset, h.wrote_bytes) for h in story.handles
                           if h.status == "PUT_OK" and h.wrote_offset + h.wrote_bytes > story.slave_end)
            mine = sorted(r for r in found if r[0] == story.run_dir.name)
            expect(mine == truth, _("{role}, seed {seed}: the slave lacks {n} acknowledged message(s) (offsets "
                                    "{offsets}); your query found {found} ({found_offsets})").format(
                role=story.role, seed=ctx.seed, n=len(truth), offsets=[t[1] for t in truth][:5], found=len(mine),
                found_offsets=[m[1] for m in mine][:5]))
