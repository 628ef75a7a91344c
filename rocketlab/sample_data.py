"""The sample runs under ``data/``: small, deterministic run directories (trace + store files) that the labs
and tests read without running the simulator first. ``make data`` / ``rocketlab data regenerate`` rebuilds
them; the same code gives the same bytes (a test checks it).

Each run is a run directory (``meta.json``, ``events.parquet``, ``nodes/<id>/...`` with the store files):

* ``tour/`` - ``rocketlab demo``'s three runs: ``dledger-failover`` (a DLedger broker group loses its master),
  ``async-master-crash`` and ``sync-master-crash`` (classic pairs whose master dies after the same load);
* ``dledger-churn`` - a 5-member DLedger group under MIT-style churn (crashes, restarts, partitions, lossy
  network, three clients) on the shipped profile;
* ``figure8-<profile>`` - Raft's Figure 8 schedule under ``dledger-0.3.1.2``, ``dledger-0.3.2`` and ``raft``
  (the first two lose a committed entry: their runs record the violation);
* ``smooth-upgrade`` - a classic CommitLog of 120 messages restarted on DLedger (``dividedCommitlogOffset``),
  then 30 more messages.

Stores use small files (64 KiB commit-log and DLedger data files, consume queues of 1,000 units, index files
of 500 slots and 2,000 entries) so the whole folder stays a few MB; traces are Parquet, which the Spark readers prefer and
``load_events`` reads as well (``rocketlab sim`` writes JSON lines for people). rocketlab's own.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.cli_support import writable_dir
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.scenarios import ScenarioArgs, get_scenario
from rocketlab.scenarios.broker_on_dledger import new_broker_group, write_classic_store
from rocketlab.scenarios.tour import run_tour
from rocketlab.workspace import kit_root, require_home, resource

SMALL_STORE: dict[str, Any] = {"mapped_file_size_consume_queue": 1_000 * 20, "max_hash_slot_num": 500,
                               "max_index_num": 2_000}
"""Store options of every sample run: small consume-queue and index files."""
DEFAULT_ROOT = kit_root() / "data"
"""The sample runs as shipped (the checkout's ``data/``, or the installed kit's): read only."""


def data_root() -> Path:
    """The sample runs a learner reads: the workspace's ``data/`` (or the checkout's), else the shipped ones."""
    return resource("data")

README = """# data/: sample runs

Small, deterministic runs of the kit, read by the labs (lab 07) and the tests. Rebuild with `make data`
(or `rocketlab data regenerate`); the same code gives the same bytes. Each run directory holds
`meta.json`, `events.parquet` (the trace) and `nodes/<id>/` (each node's store files, small files so
that the folder stays a few MB). What each run is:

{table}

Read them with Spark (`rocketlab.analysis`): `read_events(spark, "data/dledger-churn")` for a trace,
`spark.read.format("rocketmq-commitlog").load("data/tour/async-master-crash")` for every record of every
node's commit log (also `rocketmq-consumequeue`), and `spark.read.format("rocketmq-index").load("data/smooth-upgrade")`
for the index entries of the one run whose messages carry keys (the index files hold entries only for keys).

## Which files the real RocketMQ opens as they are

The store files are RocketMQ's own formats, byte for byte (the test suite compares them with the real
RocketMQ 4.9.5 and 5.3.3 and DLedger 0.3.1.2: `tests/oracle/`). Given the same file sizes (64 KiB commit-log
and DLedger data files, consume queues of 1,000 units, index files of 500 slots and 2,000 entries, DLedger
index files of 32 KiB), the real code opens:

* the classic stores of `tour/async-master-crash/` and `tour/sync-master-crash/` (`nodes/<id>/store/`): a
  RocketMQ 4.9.5 `DefaultMessageStore` recovers each (the masters abnormally: they crashed, their `abort`
  file is there) to the records, consume queues and keys rocketlab reads;
* every DLedger member directory (`dledger-churn/nodes/<id>/`, `figure8-*/nodes/<id>/`, and
  `nodes/<id>/store/dledger-<id>/` of the broker runs): DLedger 0.3.1.2's `DLedgerMmapFileStore` recovers
  the same entries, committed index, term and vote as rocketlab. The `figure8-raft/` members are the
  exception: the `raft` profile matches no DLedger release and writes no-op entries of magic 2, and Java's
  recovery cuts each log at the first of them;
* not the broker runs on DLedger as a whole (`tour/dledger-failover/`, `smooth-upgrade/`): a 4.9.5 broker
  with `enableDLegerCommitLog` opens only DLedger index files of the default 160 MiB (its
  `DLedgerCommitLog` passes no size), and these have 32 KiB ones to keep the folder small. A group built
  with 160 MiB index files is read by the real broker store message for message (the test suite does it).
"""


@dataclass(frozen=True)
class SampleRun:
    """One run under ``data/``: its directory name, what it is, how to build it."""

    name: str
    about: str
    build: Callable[[Path], None]


def _tour(out: Path) -> None:
    run_tour(out, seed=1, puts=60, broker={"store_options": SMALL_STORE}, parquet=True).close()


def _scenario(name: str, profile: str | None = None, duration_ms: int | None = None) -> Callable[[Path], None]:
    def build(out: Path) -> None:
        result = get_scenario(name).run(ScenarioArgs(seed=1, profile=profile, duration_ms=duration_ms, data_dir=out))
        try:
            result.cluster.save(out, parquet=True)
        finally:
            result.cluster.close()
    return build


def _smooth_upgrade(out: Path) -> None:
    ticks = itertools.count(1_700_000_000_000, 7)  # a fixed clock: the old store's timestamps are the same each time
    write_classic_store(out, 120, store_options=SMALL_STORE, clock=lambda: next(ticks), keys=True)
    c = new_broker_group(out, seed=3, fresh=False, store_options=SMALL_STORE)
    try:
        for i in range(30):
            c.put(b"new-%03d" % i * 20, keys=f"new-{i:03d}")  # keys: the index files have entries
        c.run_for(2_000)
        c.save(out, parquet=True)
    finally:
        c.close()


RUNS: tuple[SampleRun, ...] = (
    SampleRun("tour", "`rocketlab demo`'s three runs (seed 1, 60 puts each): `dledger-failover` (a broker group on "
                      "DLedger loses its master and elects another), `async-master-crash` and `sync-master-crash` "
                      "(a classic pair loses its master: ASYNC loses acknowledged messages, SYNC does not)", _tour),
    SampleRun("dledger-churn", "a 5-member DLedger group (`dledger-0.3.1.2`) under 14 s of MIT-style churn: crashes, "
                               "restarts, partitions, a lossy network, three clients", _scenario("dledger-churn")),
    *(SampleRun(f"figure8-{p}", f"Raft's Figure 8 schedule under `{p}`" + (" (loses a committed entry: the "
                "violation is in the trace)" if p != "raft" else " (safe)"), _scenario("dledger-figure8", p))
      for p in ("dledger-0.3.1.2", "dledger-0.3.2", "raft")),
    SampleRun("smooth-upgrade", "three brokers with a classic CommitLog of 120 messages restarted on DLedger "
                                "(`dividedCommitlogOffset` = 2 files), then 30 new messages; every message has a key "
                                "(`old-NNN`, `new-NNN`), so its index files have entries", _smooth_upgrade),
)


def regenerate(root: str | Path | None = None, only: Iterable[str] | None = None) -> list[Path]:
    """Rebuild the sample runs under ``root`` (default: the workspace's or checkout's ``data/``; never the
    installed package), each in a fresh directory, and its README."""
    root = require_home("rocketlab data regenerate") / "data" if root is None else Path(root)
    chosen = [r for r in RUNS if only is None or r.name in set(only)]
    unknown = set(only or ()) - {r.name for r in RUNS}
    if unknown:
        raise _unknown_runs(sorted(unknown))
    root.mkdir(parents=True, exist_ok=True)
    built = []
    for run in chosen:
        target = root / run.name
        with tempfile.TemporaryDirectory(prefix="rocketlab-data-") as tmp:
            scratch = Path(tmp) / run.name
            run.build(scratch)
            for junk in scratch.rglob("view.html"):
                junk.unlink()
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch, target)
        built.append(target)
    table = "\n".join(f"* `{r.name}/`: {r.about}" for r in RUNS)
    (root / "README.md").write_text(README.format(table=table))
    return built


def _unknown_runs(names: list[str]) -> RocketlabError:
    return RocketlabError(_("no sample run named {names} (known: {known})").format(
        names=", ".join(names), known=", ".join(r.name for r in RUNS)))


def digest(root: str | Path) -> dict[str, str]:
    """SHA-256 of every file under ``root`` (relative path -> hex): what "the same bytes" compares."""
    root = Path(root)
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def register(subparsers: Any) -> None:
    """``rocketlab data regenerate [--root DIR] [--only NAME ...]``."""
    p = subparsers.add_parser("data", help=_("the sample runs under data/"))
    sub = p.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    r = sub.add_parser("regenerate", help=_("rebuild the sample runs (deterministic: the same bytes each time)"))
    r.add_argument("--root", type=Path, default=None,
                   help=_("where (default: data/ of the workspace or checkout you are in)"))
    r.add_argument("--only", nargs="+", metavar="NAME",
                   help=_("some runs only: {names}").format(names=", ".join(run.name for run in RUNS)))
    r.set_defaults(func=_cmd_regenerate)


def _cmd_regenerate(args: argparse.Namespace) -> int:
    unknown = sorted(set(args.only or ()) - {r.name for r in RUNS})
    if unknown:  # before anything is created
        raise _unknown_runs(unknown)
    if args.root is not None:
        writable_dir(args.root, "--root")
    for path in regenerate(args.root, args.only):
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        print(f"{path}: {size / 1e6:.2f} MB")
    return 0


__all__ = ["DEFAULT_ROOT", "RUNS", "SMALL_STORE", "SampleRun", "data_root", "digest", "regenerate"]
