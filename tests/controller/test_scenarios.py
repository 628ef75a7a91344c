"""The controller-* scenarios do what ``rocketlab sim --list`` says (seed 1; the stories are deterministic)."""

from __future__ import annotations

import pytest

from rocketlab.scenarios import SCENARIOS, ScenarioArgs, get_scenario


def run(name: str, profile: str | None = None, seed: int = 1):
    result = get_scenario(name).run(ScenarioArgs(seed=seed, profile=profile))
    result.cluster.close()
    return result


def test_they_are_listed():
    assert {"controller-failover", "controller-5663", "controller-partition", "controller-9689",
            "controller-unclean"} <= set(SCENARIOS)


@pytest.mark.parametrize("seed", [1, 2])
def test_failover_loses_nothing_and_takes_a_heartbeat_timeout_and_a_scan(seed):
    s = run("controller-failover", seed=seed).summary
    assert s["violations"] == 0 and s["acknowledged"] == 10 and s["acknowledged_lost"] == 0
    assert 10_000 <= s["failover_ms"] <= 16_000 and s["new_epoch"] == 2
    assert s["old_master_truncated_at"] is not None


def test_5663_loses_acknowledged_messages_only_before_the_fix():
    before = run("controller-5663", "5.1.0")
    assert before.summary["acked_after_lost_answer"] == 5
    assert [v["detail"].split(":")[0] for v in before.cluster.violations] == ["I1"]
    fixed = run("controller-5663").summary
    assert fixed["acked_after_lost_answer"] == 0 and fixed["statuses"] == ["FLUSH_SLAVE_TIMEOUT"]
    assert fixed["violations"] == 0


def test_a_partitioned_master_loses_its_acks_with_the_defaults_and_times_out_with_all_ack():
    defaults = run("controller-partition").summary
    assert defaults["island_acked"] == 5 and defaults["acknowledged_lost"] == 5 and defaults["violations"] == 0
    all_ack = run("controller-partition", "allack").summary
    assert all_ack["island_acked"] == 0 and all_ack["acknowledged_lost"] == 0 and all_ack["violations"] == 0


def test_9689_the_slave_misses_the_epoch_of_a_self_reelected_master():
    s = run("controller-9689").summary
    assert s["master_epoch"] == 5 and s["slave_lacks_latest_epoch"]
    assert s["master_epochs"][-1][0] == 5 and all(e[0] == 1 for e in s["slave_epochs"])


def test_unclean_election_records_the_loss():
    s = run("controller-unclean").summary
    assert s["acked_on_a_alone"] == 5 and s["acknowledged_lost"] == 5 and s["violations"] == 0
    assert s["unclean_master"] != s["in_sync_master"]


def _churn(seed: int):
    result = get_scenario("controller-churn").run(ScenarioArgs(seed=seed))
    result.cluster.close()
    return result


@pytest.mark.parametrize("seed", range(1, 9))
def test_churn_with_all_ack_keeps_every_acknowledged_message(seed):
    """Crashes, restarts and partitions of brokers and controllers: no invariant is ever violated and the
    final master holds every message acknowledged PUT_OK. (Whether the slaves resync is reported, not
    asserted: a master restarted within the heartbeat timeout rewrites its epoch entry, as Java's
    changeToMaster does, and its old slaves then find no consistent point - see the scenario's docstring.)"""
    result = _churn(seed)
    assert not result.cluster.violations, f"seed {seed}: {result.cluster.violations[:2]}"
    assert result.summary["missing"] == [], f"seed {seed}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(9, 209))
def test_churn_with_all_ack_keeps_every_acknowledged_message_sweep(seed):
    test_churn_with_all_ack_keeps_every_acknowledged_message(seed)
