"""The kernel's total order and the network model's labrpc numbers."""

from __future__ import annotations

import random

import pytest

from rocketlab.errors import ConfigError, LocalProtocolError
from rocketlab.sim.kernel import Scheduler
from rocketlab.sim.network import Latency, NetworkModel


def test_events_at_the_same_ms_run_in_scheduling_order():
    s, seen = Scheduler(), []
    for name in "abc":
        s.at(5, seen.append, name)
    s.at(1, seen.append, "first")
    s.run_until_time(10)
    assert seen == ["first", "a", "b", "c"]
    assert s.now_ms == 10 and s.events_run == 4


def test_scheduling_in_the_past_is_refused():
    s = Scheduler()
    s.run_until_time(100)
    with pytest.raises(LocalProtocolError, match="clock is at 100"):
        s.at(99, print)


def test_step_reports_an_empty_queue():
    s = Scheduler()
    assert s.step() is False
    s.after(3, lambda: None)
    assert s.step() is True and s.now_ms == 3


@pytest.mark.parametrize("text", ["constant:2", "uniform:1:5", "exponential:3"])
def test_latency_round_trips_its_text(text):
    assert str(Latency.parse(text)) == text


@pytest.mark.parametrize("text,problem", [
    ("gauss:1", "kind must be"), ("uniform:5:1", "LO <= HI"), ("constant:x", "numbers expected"),
    ("uniform:1", "takes 2"), ("constant:-1", ">= 0"),
])
def test_bad_latency_is_named(text, problem):
    with pytest.raises(ConfigError, match=problem):
        Latency.parse(text)


def test_unknown_network_mode_is_named():
    with pytest.raises(ConfigError, match="network 'lossy'"):
        NetworkModel.named("lossy")


def test_unreliable_drops_about_ten_percent_and_delays_up_to_26_ms():
    model, rng = NetworkModel.named("unreliable"), random.Random(7)
    draws = [model.request_delay(rng) for _ in range(20_000)]
    dropped = sum(d is None for d in draws) / len(draws)
    assert 0.08 < dropped < 0.12
    delays = [d for d in draws if d is not None]
    assert min(delays) == 0 and max(delays) == 26


def test_long_reordering_holds_about_two_thirds_of_replies():
    model, rng = NetworkModel.named("reordering"), random.Random(3)
    kept = [d for d in (model.reply_delay(rng) for _ in range(20_000)) if d is not None]
    held = sum(d >= 200 for d in kept) / len(kept)
    assert 0.62 < held < 0.71
    assert max(kept) <= 2200


def test_long_delays_stretch_failures_to_seven_seconds():
    rng = random.Random(1)
    short = max(NetworkModel.named("reliable").failure_delay(rng) for _ in range(2000))
    long = max(NetworkModel.named("long-delays").failure_delay(rng) for _ in range(2000))
    assert short <= 99 and 5000 < long <= 6999


def test_reliable_has_no_loss_and_no_delay():
    model, rng = NetworkModel.named("reliable"), random.Random(1)
    assert {model.request_delay(rng) for _ in range(1000)} == {0}
    assert {model.reply_delay(rng) for _ in range(1000)} == {0}
