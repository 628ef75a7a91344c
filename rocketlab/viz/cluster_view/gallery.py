"""The films a student opens without a kernel: Figure 8, DLedger #247 and #251, a failover of each system
and each lab's key run, as offline viewer pages (everything inlined: no server, no network).

:data:`FILMS` is the table (one row per film: what it shows, the labs that link it, where it comes from: a
registered scenario, run here with its seed, or a sample run under ``data/``); :func:`write_films` writes
one page per row and an index. The docs site publishes them (``docs/_ext``: ``films/`` beside the pages,
listed on the Films page); ``rocketlab view --films DIR`` writes the same pages anywhere.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.scenarios import dledger_schedules as ds
from rocketlab.scenarios.registry import SCENARIOS, ScenarioArgs
from rocketlab.templating import Markup, render
from rocketlab.viz.cluster_view.film import make_film
from rocketlab.viz.cluster_view.offline import run_film, viewer_page
from rocketlab.viz.language import page_context
from rocketlab.workspace import kit_root


@dataclass(frozen=True)
class FilmRow:
    """One film: ``scenario`` (a name of :data:`~rocketlab.scenarios.registry.SCENARIOS`, run with
    ``profile``, ``seed`` and ``duration_ms``) or ``run_dir`` (a sample run, relative to the kit)."""

    name: str
    title: str
    about: str
    labs: tuple[str, ...]
    scenario: str | None = None
    run_dir: str | None = None
    profile: str | None = None
    seed: int = 1
    duration_ms: int | None = None


FILMS: tuple[FilmRow, ...] = (
    FilmRow("figure8", "Raft's Figure 8 under dledger-0.3.1.2",
            "A committed entry lost: stops (a)-(e) of the schedule (Home, then the down arrow).", ("04",),
            scenario="dledger-figure8", profile="dledger-0.3.1.2"),
    FilmRow("issue247", "DLedger #247 under dledger-0.3.1.2",
            "A follower with a bigger term and a stale log never rejoins.", ("04",),
            scenario="dledger-247", profile="dledger-0.3.1.2"),
    FilmRow("issue251", "DLedger #251 under dledger-0.3.1.2",
            "A follower that lost acknowledged entries in a power failure answers REPEATED_PUSH forever.", ("04",),
            scenario="dledger-251", profile="dledger-0.3.1.2"),
    FilmRow("failover-master-slave", "Classic master-slave: a SYNC_MASTER crashes",
            "The slave holds every acknowledged message; nothing takes the master's place.", ("01", "02"),
            scenario="ms-sync-crash"),
    FilmRow("async-master-crash", "Classic master-slave: an ASYNC_MASTER crashes",
            "Acknowledged messages the slave never got are lost with the master.", ("01",),
            scenario="ms-async-crash"),
    FilmRow("failover-dledger", "DLedger: the leader crashes, a new one is elected",
            "Election, a write, the leader's crash and the failover with DLedger's default timers.", ("03",),
            scenario="dledger-election", profile="dledger-0.3.1.2"),
    FilmRow("failover-controller", "Controller mode: the master dies",
            "The controllers elect a new master; the old one rejoins as a slave and truncates.", ("06",),
            scenario="controller-failover"),
    FilmRow("tour-dledger-failover", "Brokers on DLedger lose their master: the tour's run",
            "RocketMQ's CommitLog on DLedger: the group elects another master under puts.", ("00", "05"),
            run_dir="data/tour/dledger-failover"),
    FilmRow("client-master-crash", "An application through a DLedger master's crash",
            "A producer and a consumer group behind a name server: sends refused and retried on another broker, the "
            "new master registering, the clients' route refresh and heartbeat; the name server and the clients are "
            "the boxes.", ("08",), scenario="client-master-crash", seed=3, duration_ms=30_000),
    FilmRow("dledger-churn", "DLedger under churn, 3 s",
            "Random crashes, restarts and partitions under client load, every invariant checked.", ("07",),
            scenario="dledger-churn", profile="dledger-0.3.1.2", duration_ms=3000),
)


def film_of(row: FilmRow, root: Path | None = None) -> dict[str, Any]:
    """The row's film (recorded: no kernel behind it), with Figure 8's stops as bookmarks; a sample run
    is read under ``root`` (default: the kit's files, a checkout's or the wheel's)."""
    if row.run_dir is not None:
        return {**run_film((root or kit_root()) / row.run_dir), "live": False}
    if row.scenario not in SCENARIOS:
        raise RocketlabError(f"film {row.name}: no scenario {row.scenario!r}")
    with tempfile.TemporaryDirectory(prefix="rocketlab-film-") as tmp:
        result = SCENARIOS[row.scenario].run(ScenarioArgs(seed=row.seed, profile=row.profile,
                                                          duration_ms=row.duration_ms, data_dir=Path(tmp)))
        c = result.cluster
        try:
            film = make_film(c.events, c.describe(), end_ms=c.now_ms, nodes=c.node_ids)
            if row.scenario == "dledger-figure8":
                film["bookmarks"] = ds.figure8_stops(c, result.summary["names"], result.summary["x_index"])
        finally:
            c.close()
    return film


def write_films(out: str | Path, root: Path | None = None) -> list[Path]:
    """One offline page per row of :data:`FILMS` in ``out`` (``NAME.html``) and ``index.html``."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    pages = []
    for row in FILMS:
        path = directory / f"{row.name}.html"
        path.write_text(viewer_page(film_of(row, root), row.title), encoding="utf-8")
        pages.append(path)
    index = directory / "index.html"
    index.write_text(render("rocketlab.viz", "films_index.html.j2", **page_context(), films=FILMS, about=Markup(__doc__.split("\n\n")[0])),
                     encoding="utf-8")
    return [*pages, index]
