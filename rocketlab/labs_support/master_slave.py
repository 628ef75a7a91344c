"""Helpers for ``labs/01_master_slave.ipynb``: classic master-slave replication (RocketMQ 4.x HA).

The lab drives :meth:`rocketlab.sim.Cluster.master_slave` directly; these functions hold the few loops
and tables that would otherwise crowd its cells:

* :func:`new_pair` — a master and one slave with their stores in a fresh run directory, replicating;
* :func:`offsets` — one row per broker: role, up or down, CommitLog min/max offset, push2SlaveMaxOffset;
* :func:`steady_load` — one producer putting messages one after another with seeded pauses;
* :func:`latency_table` / :func:`replication_lags` — put latency against "time until a slave acked it";
* :func:`status_runs` — the puts of a run grouped into stretches of the same PutMessageStatus;
* :func:`crash_master_under_load`, :func:`loss_table`, :func:`loss_summary` — the lab's lesson: how many
  acknowledged messages are missing on the slave when the master crashes, per role and seed;
* :func:`print_trace` — chosen trace events, one stable line each.

Every random choice comes from :func:`rocketlab.core.derive_rng` with the given seed, so a seed gives the
same numbers on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.core import derive_rng
from rocketlab.i18n import _
from rocketlab.scenarios.tour import LATENCY
from rocketlab.sim import Cluster
from rocketlab.trace.recorder import describe
from rocketlab.trace.rundir import fresh_dir
from rocketlab.viz.figures.latency import percentile
from rocketlab.viz.figures.offsets import WRITTEN_STATUSES

MASTER = "n0"


def slave_connected(cluster: Cluster, count: int = 1) -> bool:
    """True once the master's HAService has ``count`` slave connections (a ``run_until`` predicate)."""
    return cluster.alive(MASTER) and cluster.node(MASTER).ha_service.connection_count >= count


def slave_reported(cluster: Cluster, count: int = 1) -> bool:
    """True once ``count`` slaves have sent their first report, the request offset, so bytes flow (a
    ``run_until`` predicate). A 4.9.5 slave sends it about 5 s after it connects."""
    return cluster.alive(MASTER) and cluster.node(MASTER).ha_service.reported_connection_count >= count


def new_pair(role: str, run_dir: str | Path, *, seed: int = 1, latency: str = LATENCY,
             **kwargs: Any) -> Cluster:
    """``Cluster.master_slave(role, slaves=1)`` with its stores in a fresh ``run_dir``, run until the slave
    has sent its first report (about 5 s: RocketMQ 4.9.5's HAClient waits ``haSendHeartbeatInterval``
    after connecting). ``kwargs`` go to ``Cluster.master_slave`` (network, broker, ha, ...)."""
    cluster = Cluster.master_slave(role=role, slaves=1, seed=seed, latency=latency,
                                   data_dir=fresh_dir(run_dir), **kwargs)
    cluster.run_until(slave_reported, timeout_ms=10_000)
    return cluster


def slave_lag(cluster: Cluster, master: str = "n0") -> str:
    """One line: the master's CommitLog max offset and how far each live slave's trails it, in bytes
    (what ``HAConnection`` still has to ship), at the cluster's present instant."""
    head = cluster.node(master)
    if head is None or not cluster.alive(master):
        return _("t={t} ms: the master {master} is down").format(t=cluster.now_ms, master=master)
    end = head.max_offset
    parts = [_("{node} at {offset} ({behind} bytes behind)").format(
        node=n, offset=cluster.node(n).max_offset, behind=end - cluster.node(n).max_offset)
        for n in cluster.node_ids if n != master and cluster.alive(n)]
    return _("t={t} ms: master {master} ends at {end}; slave {slaves}").format(
        t=cluster.now_ms, master=master, end=end, slaves=_(", ").join(parts))


def offsets(cluster: Cluster):
    """One row per broker (pandas DataFrame): brokerId, role, up, CommitLog min and max offset, and on
    the master the slave connections and ``push2SlaveMaxOffset`` (the highest offset a slave acked);
    "-" where a value does not apply (a slave) or is unknown (a crashed broker)."""
    import pandas as pd  # lazy: 0.3 s to import

    rows = []
    for node_id in cluster.node_ids:
        row: dict[str, Any] = {"node": node_id, "broker_id": "-", "role": "-", "up": cluster.alive(node_id),
                               "min_offset": "-", "max_offset": "-", "slaves": "-",
                               "push2_slave_max_offset": "-"}
        core = cluster.node(node_id)
        if core is not None:
            row.update(broker_id=core.config.broker_id, role=core.config.broker_role,
                       min_offset=core.store.get_min_phy_offset(), max_offset=core.max_offset)
            if core.ha_service is not None:
                row.update(slaves=core.ha_service.connection_count,
                           push2_slave_max_offset=core.ha_service.push2_slave_max_offset)
        rows.append(row)
    return pd.DataFrame(rows, dtype=object).set_index("node")


def steady_load(cluster: Cluster, puts: int | None = None, *, seed: int = 1, until_ms: int | None = None,
                gap_ms: tuple[int, int] = (0, 30), size: tuple[int, int] = (50, 500),
                topic: str = "T") -> list[Any]:
    """One producer: put a message, wait a seeded ``gap_ms`` pause, repeat; ``puts`` times or until
    virtual time ``until_ms``. Each put blocks until answered (a SYNC_MASTER put may wait for the slave).
    Bodies have seeded sizes in ``size`` bytes. Returns the put handles (``.status``, ``.latency_ms``...)."""
    if puts is None and until_ms is None:
        raise ValueError("steady_load needs puts or until_ms")
    rng = derive_rng(seed, "lab01", "steady_load")
    handles = []
    while (puts is None or len(handles) < puts) and (until_ms is None or cluster.now_ms < until_ms):
        body = f"m{len(handles)} ".encode().ljust(rng.randint(*size), b".")
        handles.append(cluster.put(body, topic=topic))
        cluster.run_for(rng.randint(*gap_ms))
    return handles


def _written_puts(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in events if e["kind"] == "put" and e.get("status") in WRITTEN_STATUSES]


def replication_lags(events: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """For each stored put (in order): ms from the put's arrival at the master until the master saw a
    slave ack (``ha_report``) covering it; None if no ack ever covered it."""
    reports = [(e["t"], e["offset"]) for e in events if e["kind"] == "ha_report"]
    lags: list[float | None] = []
    i, best, t = 0, -1, 0  # reports and puts are in time order: walk the reports once, keeping the
    # highest ack so far and the time it arrived
    for put in _written_puts(events):
        start = put["t"] - (put.get("latency_ms") or 0)
        end = put["phy_offset"] + put["size"]
        while best < end and i < len(reports):
            t, best = reports[i][0], max(best, reports[i][1])
            i += 1
        lags.append(max(0.0, float(t - start)) if best >= end else None)
    return lags


def latency_table(runs: Mapping[str, Sequence[Mapping[str, Any]]]):
    """Per run (name → events): how long producers waited (put latency) and how long until a slave
    acknowledged each message (replication lag), median and maximum, in ms."""
    import pandas as pd  # lazy: 0.3 s to import

    rows = []
    for name, events in runs.items():
        puts = _written_puts(events)
        waits = [float(e.get("latency_ms") or 0) for e in puts]
        lags = replication_lags(events)
        acked = [lag for lag in lags if lag is not None]
        rows.append({"run": name, "puts": len(puts),
                     "put latency p50": percentile(waits, 50) if waits else None,
                     "put latency max": max(waits, default=None),
                     "slave ack after p50": percentile(acked, 50) if acked else None,
                     "slave ack after max": max(acked, default=None),
                     "never acked": len(lags) - len(acked)})
    return pd.DataFrame(rows).set_index("run")


def status_runs(events: Iterable[Mapping[str, Any]]):
    """The puts grouped into stretches with the same status, in time order (pandas DataFrame): status,
    number of puts, first and last put time (ms, when the producer sent it), and the latency range."""
    import pandas as pd  # lazy: 0.3 s to import

    rows: list[dict[str, Any]] = []
    for put in (e for e in events if e["kind"] == "put"):
        start, latency = put["t"] - (put.get("latency_ms") or 0), float(put.get("latency_ms") or 0)
        if rows and rows[-1]["status"] == put["status"]:
            row = rows[-1]
            row.update(puts=row["puts"] + 1, last_sent_ms=start,
                       min_latency_ms=min(row["min_latency_ms"], latency),
                       max_latency_ms=max(row["max_latency_ms"], latency))
        else:
            rows.append({"status": put["status"], "puts": 1, "first_sent_ms": start, "last_sent_ms": start,
                         "min_latency_ms": latency, "max_latency_ms": latency})
    return pd.DataFrame(rows, columns=["status", "puts", "first_sent_ms", "last_sent_ms", "min_latency_ms",
                                       "max_latency_ms"])


def print_trace(events: Iterable[Mapping[str, Any]], *kinds: str) -> None:
    """Print the events of the given kinds (all if none), one ``describe()`` line each."""
    for e in events:
        if not kinds or e["kind"] in kinds:
            print(describe(e))


@dataclass
class CrashRun:
    """One "crash the master under load" run: what the producer was told and what the slave holds.

    ``acked``: puts answered PUT_OK; ``warned``: puts stored but answered FLUSH_SLAVE_TIMEOUT or
    SLAVE_NOT_AVAILABLE; ``lost``: PUT_OK messages whose bytes end beyond the slave's CommitLog once the
    master is down (the slave is the only copy a consumer can read then); ``master_end`` /
    ``slave_end``: the two CommitLogs' max offsets at that moment.
    """

    role: str
    seed: int
    acked: int
    warned: int
    lost: int
    master_end: int
    slave_end: int
    cluster: Cluster = field(repr=False)


def crash_master_under_load(role: str, seed: int, run_dir: str | Path, *, puts: tuple[int, int] = (20, 60),
                            network: str = "reliable", save: bool = True) -> CrashRun:
    """A connected pair (:func:`new_pair`) takes a seeded number of puts (within ``puts``) from
    :func:`steady_load`; right after the last one and a seeded pause of 0-30 ms the master crashes.
    The slave then gets 1 s to take in any bytes still on the wire. The run is saved to ``run_dir``
    (meta.json, events.jsonl, and the stores under nodes/) unless ``save`` is False."""
    cluster = new_pair(role, run_dir, seed=seed, network=network)
    count = derive_rng(seed, "lab01", "crash", "puts").randint(*puts)
    handles = steady_load(cluster, count, seed=seed)
    master_end = cluster.node(MASTER).max_offset
    cluster.crash(MASTER)
    cluster.run_for(1_000)
    slave_end = cluster.node("n1").max_offset
    ok = [h for h in handles if h.status == "PUT_OK"]
    run = CrashRun(role, seed, acked=len(ok), warned=sum(h.status in WRITTEN_STATUSES for h in handles) - len(ok),
                   lost=sum(h.wrote_offset + h.wrote_bytes > slave_end for h in ok),
                   master_end=master_end, slave_end=slave_end, cluster=cluster)
    if save:
        cluster.save(run_dir)
    cluster.close()
    return run


def loss_table(roles: Sequence[str], seeds: Iterable[int], runs_dir: str | Path, **kwargs: Any):
    """:func:`crash_master_under_load` for every role and seed, each saved under
    ``runs_dir/async-crash-07`` (role and seed); one row per run (pandas DataFrame)."""
    import pandas as pd  # lazy: 0.3 s to import

    rows = []
    for seed in seeds:
        for role in roles:
            name = f"{role.split('_')[0].lower()}-crash-{seed:02d}"
            run = crash_master_under_load(role, seed, Path(runs_dir) / name, **kwargs)
            rows.append({k: v for k, v in vars(run).items() if k != "cluster"})
    return pd.DataFrame(rows)


def loss_summary(table) -> str:
    """One line per role: lost acknowledged messages, out of how many, in how many runs."""
    lines = []
    for role, runs in table.groupby("role", sort=False):
        hit = int((runs["lost"] > 0).sum())
        lines.append(_("{role}: lost {lost} of {acked} acknowledged messages ({hit} of {runs} crashes lost some; "
                       "{warned} puts answered with a warning status)").format(
            role=role, lost=int(runs["lost"].sum()), acked=int(runs["acked"].sum()), hit=hit, runs=len(runs),
            warned=int(runs["warned"].sum())))
    return "\n".join(lines)
