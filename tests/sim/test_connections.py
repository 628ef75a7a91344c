"""The runtime's connections: a crashed process's peers are told (``on_peer_closed``), a failed host's
are not; closes wait for a heal and never reach a node restarted since; a request to a failed host fails
at its own timeout. The Java these model: a Netty channel closes when its peer process dies
(``ChannelEventListener.onChannelClose``); a dead host leaves it open until a timeout."""

from __future__ import annotations

import pytest

from rocketlab.core import EMPTY, Connect, Request, Send, StreamWrite
from rocketlab.sim import FaultSchedule
from tests.sim.cores import Recorder, inputs, recorder_cluster


class Closing(Recorder):
    def on_peer_closed(self, peer, now_ms):
        return self._do("peer_closed", peer, now_ms)


def closing_cluster(plans, **kwargs):
    from rocketlab.sim import Cluster
    from tests.sim.cores import JsonCodec

    return Cluster(list(plans), lambda ctx: Closing(ctx, plans[ctx.node_id]), JsonCodec(), **kwargs)


def _hello(to):
    return lambda core, now: [Send(t, {"hi": core.node_id}) for t in to]


def test_a_crash_tells_every_node_it_talked_with_and_only_them():
    c = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}, "c": {}}, latency="constant:2")
    c.run_for(10)
    c.crash("a")
    c.run_for(10)
    assert inputs(c, "b", "peer_closed") == [("peer_closed", "a", 12)]  # one stream delay after the crash
    assert inputs(c, "c", "peer_closed") == []  # never talked with a
    closed = [e for e in c.events if e["kind"] == "peer_closed"]
    assert closed == [{"t": 12, "seq": closed[0]["seq"], "node": "b", "kind": "peer_closed", "src": "a",
                       "dst": "b", "reason": "peer crashed"}]


def test_the_connection_counts_in_both_directions_and_a_receiver_crash_tells_the_sender():
    c = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:1")
    c.run_for(5)
    c.crash("b")
    c.run_for(5)
    assert [e[1] for e in inputs(c, "a", "peer_closed")] == ["b"]


def test_a_host_down_closes_nothing_and_requests_to_it_fail_at_their_timeout():
    c = closing_cluster({"a": {"start": _hello(["b"]),
                               "tick": lambda core, now: [Request("b", {"q": 1}, 1, 2000), Connect("b", "s")],
                               "first_tick": 20},
                         "b": {}}, latency="constant:1")
    c.run_for(10)
    c.host_down("b")
    c.run_for(5000)
    assert inputs(c, "a", "peer_closed") == []
    assert inputs(c, "a", "reply") == [("reply", "b", 1, None, 2020)]  # no fast failure: the timeout
    assert inputs(c, "a", "closed")[0][2] == "connect timed out"
    assert [e["action"] for e in c.events if e["kind"] == "fault"] == ["host_down"]
    assert [e["reason"] for e in c.events if e["kind"] == "msg_drop"] == ["host down"]


def test_a_host_down_leaves_its_streams_open_on_the_other_side():
    plan = {"start": lambda core, now: [Connect("b", "s")],
            "open": lambda core, sid, peer, acc, now: [StreamWrite(sid, b"x")],
            "tick": lambda core, now: [StreamWrite("s", b"more")], "first_tick": 50}
    c = closing_cluster({"a": plan, "b": {}}, latency="constant:1")
    c.run_for(20)
    assert inputs(c, "b", "data")
    c.host_down("b")
    c.run_for(1000)
    assert inputs(c, "a", "closed") == [] and inputs(c, "a", "peer_closed") == []
    c2 = closing_cluster({"a": dict(plan), "b": {}}, latency="constant:1")
    c2.run_for(20)
    c2.crash("b")
    c2.run_for(1000)
    assert [e[2] for e in inputs(c2, "a", "closed")] == ["peer crashed"]


def test_a_close_across_a_partition_waits_for_the_heal():
    c = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:1")
    c.run_for(5)
    c.partition(["a"], ["b"])
    c.crash("a")
    c.run_for(1000)
    assert inputs(c, "b", "peer_closed") == []
    c.heal()
    c.run_for(10)
    assert [e[1:] for e in inputs(c, "b", "peer_closed")] == [("a", 1006)]


def test_a_close_reaches_a_peer_that_restarted_itself_never_but_does_follow_a_restarted_dead_process():
    c = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:5")
    c.run_for(10)
    c.crash("a")
    c.crash("b")
    c.restart("b")
    c.run_for(20)
    assert inputs(c, "b", "peer_closed") == []  # b's old sockets died with it
    c2 = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:5")
    c2.run_for(10)
    c2.crash("a")
    c2.restart("a")  # the old connection still closes on b's side
    c2.run_for(20)
    assert [e[1] for e in inputs(c2, "b", "peer_closed")] == ["a"]


def test_a_paused_node_gets_the_close_when_it_resumes():
    c = closing_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:1")
    c.run_for(5)
    c.pause("b")
    c.crash("a")
    c.run_for(100)
    assert inputs(c, "b", "peer_closed") == []
    c.resume("b")
    assert [e[1:] for e in inputs(c, "b", "peer_closed")] == [("a", 105)]


def test_cores_without_the_input_are_untouched_and_schedules_name_host_down():
    c = recorder_cluster({"a": {"start": _hello(["b"])}, "b": {}}, latency="constant:1")
    c.run_for(5)
    c.crash("a")
    c.run_for(5)
    assert c.node("b").on_peer_closed("a", 0) is EMPTY  # BaseCore's default
    schedule = FaultSchedule.parse("10 host_down b\n20 restart b")
    assert [str(f) for f in schedule] == ["10 host_down b", "20 restart b"]
    c.apply_schedule(schedule)
    c.run_for(30)
    assert [e["action"] for e in c.events if e["kind"] == "fault"][-2:] == ["host_down", "restart"]


@pytest.mark.parametrize("seed", range(5))
def test_closes_draw_from_their_own_stream_so_other_runs_keep_their_timing(seed):
    """A crash adds peer_closed events but moves no message delay: the rest of the trace is the same as
    with a runtime that closes nothing (here: the close's delay stream is shared by nothing else)."""
    def trace(notify: bool):
        c = closing_cluster({"a": {"start": _hello(["b", "c"])}, "b": {"start": _hello(["c"])},
                             "c": {"start": _hello(["a"])}}, seed=seed, network="unreliable")
        c.run_for(50)
        if not notify:
            c.runtime._close_links_of = lambda node, reason: None
        c.crash("a")
        for _ in range(3):
            c.runtime.call("b", lambda core, now: type(EMPTY)((Send("c", {"x": now}),)))
        c.run_for(500)
        return [(e["t"], e["kind"], e.get("msg_id")) for e in c.events if e["kind"] != "peer_closed"]
    assert trace(True) == trace(False)


def test_the_close_comes_after_every_message_the_dead_process_sent():
    """TCP: what was written before the FIN arrives before it - a heartbeat in flight when its sender dies
    must not revive it after the close."""
    c = closing_cluster({"a": {"start": _hello(["b"]), "tick": _hello(["b"]), "first_tick": 20}, "b": {}},
                        latency="constant:50")
    c.run_for(21)  # a's second message leaves at 20 and arrives at 70
    c.crash("a")
    c.run_for(200)
    log = [e[0] for e in c.node("b").log if e[0] in ("message", "peer_closed")]
    assert log == ["message", "message", "peer_closed"]
    assert inputs(c, "b", "peer_closed")[0][2] >= 70
