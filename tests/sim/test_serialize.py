"""The simulator's message path with and without the codec (``serialize``): the same trace either way, and
the sampled round trip catches a codec that lies."""

from __future__ import annotations

import json
import os

import pytest

from rocketlab.dledger import DLedgerCodec
from rocketlab.errors import LocalProtocolError
from rocketlab.scenarios.dledger import run_churn
from rocketlab.scenarios.dledger_group import SHORT_TIMERS, DLedgerViolations, wait_settled
from rocketlab.sim import Cluster
from rocketlab.sim.messages import SAMPLE_EVERY

MODES = ("always", "sampled", "never")


def _trace(c: Cluster) -> list[str]:
    return [json.dumps(e, sort_keys=True, default=str) for e in c.events]


def _churn(seed: int, serialize: str, profile: str) -> list[str]:
    c = Cluster.dledger(nodes=5, seed=seed, profile=profile, memory=True, config=SHORT_TIMERS,
                        checkers=[DLedgerViolations()], raise_on_violation=False, network="unreliable",
                        serialize=serialize)
    wait_settled(c)
    run_churn(c, rounds=6, settle_ms=3000)
    return _trace(c)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("profile", ["raft", "dledger-0.3.1.2"])
def test_dledger_churn_trace_is_the_same_with_and_without_serialisation(seed, profile):
    traces = {mode: _churn(seed, mode, profile) for mode in MODES}
    assert len(traces["always"]) > 1000, f"seed {seed}: too short a run to mean anything"
    assert traces["sampled"] == traces["always"], f"seed {seed} {profile}: sampled differs from always"
    assert traces["never"] == traces["always"], f"seed {seed} {profile}: never differs from always"


def test_broker_group_on_dledger_trace_is_the_same_with_and_without_serialisation(tmp_path):
    def run(mode: str) -> list[str]:
        c = Cluster.dledger_brokers(nodes=3, seed=5, data_dir=tmp_path / mode, serialize=mode,
                                    dledger={"heart_beat_time_interval_ms": 100, "max_heart_beat_leak": 3})
        c.run_for(3000)
        for i in range(5):
            c.put(b"m%d" % i)
        c.crash(c.leader())
        c.run_for(3000)
        c.put(b"after")
        c.close()
        return _trace(c)

    assert run("sampled") == run("always")


def test_pingpong_smoke_trace_is_the_same_with_and_without_serialisation():
    def run(mode: str) -> list[str]:
        c = Cluster.pingpong(nodes=4, seed=3, network="unreliable", serialize=mode)
        c.run_for(2000)
        c.crash("n1")
        c.run_for(2000)
        return _trace(c)

    assert run("never") == run("always")


class CountingCodec(DLedgerCodec):
    """DLedgerCodec that counts encodes; ``size_error`` / ``decode_twist`` make it lie."""

    def __init__(self, size_error: int = 0, decode_twist: bool = False) -> None:
        super().__init__()
        self.encoded = 0
        self.size_error, self.decode_twist = size_error, decode_twist

    def encode(self, msg):
        self.encoded += 1
        return super().encode(msg)

    def wire_size(self, msg):
        size = super().wire_size(msg)
        return None if size is None else size + self.size_error

    def decode(self, data, answers=None):
        msg = super().decode(data, answers)
        return msg.with_(term=msg.term + 1) if self.decode_twist and hasattr(msg, "with_") else msg


def _cluster_with(codec: DLedgerCodec, serialize: str) -> Cluster:
    from rocketlab.dledger import dledger_factory

    return Cluster(["n0", "n1", "n2"], dledger_factory({"profile": "raft", **SHORT_TIMERS}), codec, seed=1,
                   serialize=serialize)


def test_sampled_mode_encodes_one_message_in_sample_every_and_never_mode_none():
    for mode, expect in (("never", lambda sent: 0), ("sampled", lambda sent: sent // SAMPLE_EVERY),
                         ("always", lambda sent: sent)):
        codec = CountingCodec()
        c = _cluster_with(codec, mode)
        c.run_for(10_000)
        sent = c.runtime.counters["sent"]
        assert sent > 3 * SAMPLE_EVERY
        assert codec.encoded == expect(sent), mode


@pytest.mark.parametrize("lie", [{"size_error": 1}, {"decode_twist": True}])
def test_the_sampled_round_trip_catches_a_codec_that_lies(lie):
    c = _cluster_with(CountingCodec(**lie), "sampled")
    with pytest.raises(LocalProtocolError, match=f"codec check on message {SAMPLE_EVERY} "):
        c.run_for(5000)


def test_serialize_mode_is_checked_and_the_environment_sets_the_default(monkeypatch):
    with pytest.raises(LocalProtocolError, match="serialize must be one of always, sampled, never"):
        Cluster.pingpong(nodes=2, serialize="sometimes")
    monkeypatch.setitem(os.environ, "ROCKETLAB_SERIALIZE", "always")
    assert Cluster.pingpong(nodes=2).runtime.serialize == "always"
    monkeypatch.delitem(os.environ, "ROCKETLAB_SERIALIZE")
    assert Cluster.pingpong(nodes=2).runtime.serialize == "sampled"


def test_a_message_without_a_size_is_always_serialised():
    """A codec without ``wire_size`` (or a message it cannot size: DLedger's MetadataResponse carries a
    mutable map) goes through encode and decode even under ``never``: the receiver gets its own copy."""
    from rocketlab.core import Send
    from rocketlab.dledger.protocol import MetadataResponse
    from tests.sim.cores import inputs, recorder_cluster

    assert DLedgerCodec().wire_size(MetadataResponse(group="g", peers={"n0": "a"})) is None
    sent = {"peers": {"n0": "a"}}
    c = recorder_cluster({"a": {"start": lambda core, now: [Send("b", sent)]}, "b": {}}, serialize="never")
    c.run_for(10)
    ((_, _, received, _),) = inputs(c, "b", "message")
    assert received == sent and received is not sent
