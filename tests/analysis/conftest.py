"""Small generated run directories for the Spark tests (deterministic, a few hundred events)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from rocketlab.trace import validate_event, write_run

NODES = ("n0", "n1", "n2")


def sample_events(seed: int = 7, *, with_violation: bool = False) -> list[dict[str, Any]]:
    """A DLedger-flavoured trace: an election, heartbeats, appends and commits, puts, network traffic,
    a crash and a restart; spread over about 4.5 s so that several 1 s windows are non-empty."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []

    def emit(t: int, node: str | None, kind: str, **fields: Any) -> None:
        event = {"t": t, "seq": len(events), "node": node, "kind": kind, **fields}
        validate_event(event)
        events.append(event)

    for term, candidate in ((1, "n0"), (2, "n1")):
        t0 = 100 + 400 * (term - 1)
        emit(t0, candidate, "term", term=term, prev=term - 1)
        for voter in NODES:
            emit(t0 + 1, candidate, "vote_request", term=term, candidate=candidate, voter=voter,
                 ledger_end_index=-1, ledger_end_term=-1)
            result = "ACCEPT" if term == 2 or voter == candidate else "REJECT_ALREADY_VOTED"
            emit(t0 + 2, voter, "vote_response", term=term, candidate=candidate, voter=voter, result=result)
    emit(902, "n1", "role", term=2, role="LEADER", leader="n1")
    msg_id = 0
    for i in range(120):
        t = 1000 + i * 25
        follower = NODES[i % 2 * 2]  # n0, n2 alternate
        emit(t, "n1", "heartbeat", term=2, leader="n1", to=follower, code="SUCCESS" if i % 7 else None)
        emit(t, "n1", "msg_send", src="n1", dst=follower, msg="HeartBeatRequest", channel="dledger",
             msg_id=msg_id, bytes=48)
        if rng.random() < 0.15:
            emit(t + 3, "n1", "msg_drop", src="n1", dst=follower, msg="HeartBeatRequest", channel="dledger",
                 msg_id=msg_id, reason=rng.choice(["loss", "partition"]))
        else:
            emit(t + 3, follower, "msg_recv", src="n1", dst=follower, msg="HeartBeatRequest",
                 channel="dledger", msg_id=msg_id, bytes=48)
        msg_id += 1
        if i % 3 == 0:
            index = i // 3
            for node in NODES:
                emit(t + 5, node, "append", index=index, term=2, pos=index * 100, size=100)
            emit(t + 8, "n1", "commit", index=index, pos=index * 100)
            status = rng.choice(["PUT_OK", "PUT_OK", "PUT_OK", "FLUSH_SLAVE_TIMEOUT"])
            emit(t + 9, "n1", "put", topic="T", queue_id=index % 2, queue_offset=index // 2,
                 phy_offset=index * 100, size=100, status=status, latency_ms=round(rng.uniform(0.5, 9.5), 3))
    emit(2500, None, "fault", action="crash", targets=["n2"])
    emit(3500, None, "fault", action="restart", targets=["n2"])
    emit(4400, None, "fault", action="partition", targets=["n0", "n1,n2"])
    if with_violation:
        emit(4500, "n2", "violation", invariant="log_matching", detail="index 3 differs")
    return events


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="session")
def jsonl_run(runs_root) -> Path:
    """Run directory ``alpha`` (JSON lines)."""
    return write_run(runs_root / "alpha", {"seed": 7, "scenario": "sample"}, sample_events(7))


@pytest.fixture(scope="session")
def parquet_run(runs_root) -> Path:
    """Run directory ``beta`` (Parquet, another seed)."""
    return write_run(runs_root / "beta", {"seed": 8, "scenario": "sample"}, sample_events(8), parquet=True)


@pytest.fixture(scope="session")
def violation_run(runs_root) -> Path:
    """Run directory ``gamma`` with one invariant violation."""
    return write_run(runs_root / "gamma", {"seed": 9}, sample_events(9, with_violation=True))


@pytest.fixture(scope="session")
def events_df(spark, jsonl_run, parquet_run):
    """Both sample runs read once and cached for the analysis tests."""
    from rocketlab.analysis import read_events

    frame = read_events(spark, [jsonl_run, parquet_run]).cache()
    yield frame
    frame.unpersist()
