"""Small helpers shared by the DLedger tests: configs, a recording responder, and DLedger groups on the
simulator (``rocketlab.sim``) with the short timers and tiny files of the whole-cluster tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketlab.core import OutputBuilder
from rocketlab.dledger import DLedgerConfig
from rocketlab.dledger.config import DEFAULT_PROFILE
from rocketlab.dledger.invariants import DLedgerChecker
from rocketlab.scenarios.dledger_group import SHORT_TIMERS, states
from rocketlab.sim import Cluster

PEERS3 = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"

FAST: dict[str, Any] = {**SHORT_TIMERS, "mapped_file_size_for_entry_data": 4096,
                        "mapped_file_size_for_entry_index": 32 * 64}
"""DLedger's timers shrunk 20x (heartbeat 100 ms, a follower gives up after 3 x 100 ms: SHORT_TIMERS) and
tiny files (4 KiB data, 64-slot index), so that a few entries already roll files."""


def make_config(**overrides: Any) -> DLedgerConfig:
    """Three members, ``n0`` is self, 1 KiB data files, 8-slot index files, no fsync."""
    base = {"peers": PEERS3, "self_id": "n0", "mapped_file_size_for_entry_data": 1024,
            "mapped_file_size_for_entry_index": 32 * 8, "fsync_policy": "never"}
    return DLedgerConfig(**(base | overrides))


class Replies:
    """A responder that records what it was asked to answer."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def __call__(self, response: Any, out: OutputBuilder) -> None:
        self.sent.append(response)

    @property
    def last(self) -> Any:
        assert self.sent, "nothing was answered"
        return self.sent[-1]


def group(nodes: int = 3, seed: int = 1, data_dir: Path | None = None, *, profile: str = DEFAULT_PROFILE,
          delay_ms: tuple[int, int] = (1, 5), **config: Any) -> Cluster:
    """A DLedger group ``n0``.. on the simulator: :data:`FAST` with ``config`` on top, file stores under
    ``data_dir`` (memory stores when None), every message delayed ``delay_ms`` (whole ms, both ends
    included), and every DLedger invariant checked after every event, that committed entries never
    change included whatever the profile (a violation raises with the seed)."""
    low, high = delay_ms
    return Cluster.dledger(nodes=nodes, seed=seed, profile=profile, memory=data_dir is None, data_dir=data_dir,
                           config={**FAST, **config}, latency=f"uniform:{low}:{high + 1}",
                           checkers=[DLedgerChecker(Cluster.live_cores, committed_stable=True)])


def quorum_leader(c: Cluster) -> str | None:
    """The one live leader that a majority of the members follows (None otherwise)."""
    cores = c.live_cores()
    leaders = [n for n, core in cores.items() if core.role == "LEADER"]
    if len(leaders) != 1:
        return None
    lid = leaders[0]
    followers = [n for n, core in cores.items() if core.role == "FOLLOWER" and core.leader_id == lid]
    return lid if len(followers) + 1 >= len(c.node_ids) // 2 + 1 else None


def leaders(c: Cluster) -> list[str]:
    """Every live member whose role is LEADER."""
    return [n for n, core in c.live_cores().items() if core.role == "LEADER"]


def wait_leader(c: Cluster, timeout_ms: int = 10_000) -> str:
    """Run until :func:`quorum_leader` names a leader (within ``timeout_ms``) and return it."""
    assert c.run_until(lambda c: quorum_leader(c) is not None, timeout_ms), why(c, "no leader")
    leader = quorum_leader(c)
    assert leader is not None
    return leader


def why(c: Cluster, what: str) -> str:
    """An assertion's message: the seed, the time and every member's state."""
    return f"seed={c.seed} t={c.now_ms}: {what}; members: {states(c)}"
