"""The per-event DLedger checker looks only at the member an event names (issue #14); it must report the
same violations at the same events as checking every member after every event did.

Mutation check: the known-bad schedules (Figure 8 under DLedger's releases, churn under the shipped
profile, the #247 and #251 schedules) run once with the incremental checker and once with a checker that
looks at everything after every core event (the behaviour before issue #14); the ``violation`` events
must be identical, and Figure 8's are pinned to the events where they were seen before the change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rocketlab.scenarios.dledger as dledger_scenarios
import rocketlab.scenarios.dledger_schedules as schedules
from rocketlab.scenarios.dledger_group import DLedgerViolations
from rocketlab.scenarios.registry import ScenarioArgs, get_scenario
from rocketlab.sim import Cluster


class EverythingViolations(DLedgerViolations):
    """Every member, every pair, every committed entry after every core event (no ``changed`` hint)."""

    def violations_at(self, cluster, event):
        kind = event.get("kind")
        if kind in self.EVENT_KINDS:
            self.invariants.observe((event,))
        if kind not in self.CORE_KINDS and not self.invariants.pending:
            return []
        return self.invariants.check(Cluster.live_cores(cluster))


def _violations(name: str, seed: int, profile: str | None, tmp: Path, monkeypatch, everything: bool):
    checker = EverythingViolations if everything else DLedgerViolations
    monkeypatch.setattr(schedules, "DLedgerViolations", checker)
    monkeypatch.setattr(dledger_scenarios, "DLedgerViolations", checker)
    result = get_scenario(name).run(ScenarioArgs(seed=seed, profile=profile, data_dir=tmp / ("all" if everything else "inc")))
    result.cluster.close()  # its file stores
    return [(e["seq"], e["t"], e.get("node"), e["detail"]) for e in result.cluster.events if e["kind"] == "violation"]


CASES = [("dledger-figure8", 1, "dledger-0.3.1.2"), ("dledger-figure8", 1, "dledger-0.3.2"),
         ("dledger-figure8", 2, "dledger-0.3.1.2"), ("dledger-figure8", 1, "raft"),
         ("dledger-247", 1, "dledger-0.3.1.2"), ("dledger-251", 1, "dledger-0.3.1.2"),
         ("dledger-churn", 1, "dledger-0.3.1.2"), ("dledger-churn", 3, "dledger-0.3.1.2"),
         ("dledger-churn", 2, "raft")]


@pytest.mark.parametrize(("name", "seed", "profile"), CASES)
def test_incremental_checker_reports_what_checking_everything_reports(name, seed, profile, tmp_path, monkeypatch):
    incremental = _violations(name, seed, profile, tmp_path, monkeypatch, everything=False)
    everything = _violations(name, seed, profile, tmp_path, monkeypatch, everything=True)
    assert incremental == everything, f"{name} seed {seed} {profile}"


# (seq, invariant) of the first violations of Figure 8, seed 1, as recorded before issue #14, each 2 events
# later since a crash tells its peers that its connections closed (issue #32): the peer_closed events of the
# crashes before them; the violations themselves did not move
FIGURE_8_BEFORE = {
    "dledger-0.3.1.2": [(2610, "leader_completeness"), (2708, "committed_entries_stable"),
                        (2712, "committed_entries_stable")],
    "dledger-0.3.2": [(2520, "leader_completeness"), (2585, "committed_entries_stable"),
                      (2589, "committed_entries_stable")],
}


@pytest.mark.parametrize("profile", sorted(FIGURE_8_BEFORE))
def test_figure8_violations_are_seen_at_the_same_events_as_before(profile, tmp_path, monkeypatch):
    found = _violations("dledger-figure8", 1, profile, tmp_path, monkeypatch, everything=False)
    assert [(seq, detail.split(":")[0]) for seq, _, _, detail in found[:3]] == FIGURE_8_BEFORE[profile]
