"""SimRuntime: messages, requests resolved exactly once, byte streams, crash/restart/pause/partition."""

from __future__ import annotations

import pytest

from rocketlab.core import Connect, Reply, Request, Send, StreamClose, StreamWrite
from rocketlab.errors import LocalProtocolError, UnknownNodeError
from tests.sim.cores import inputs, recorder_cluster


def _ask(to, n=1, timeout_ms=1000):
    return lambda core, now: [Request(to, {"q": i}, i, timeout_ms) for i in range(1, n + 1)]


def _answer(core, src, request_id, msg, now):
    return [Reply(src, request_id, {"a": msg["q"]})]


def test_one_way_message_arrives_decoded_through_the_codec():
    c = recorder_cluster({"a": {"start": lambda core, now: [Send("b", {"hi": 1})]}, "b": {}},
                         latency="constant:3")
    c.run_for(10)
    assert inputs(c, "b", "message") == [("message", "a", {"hi": 1}, 3)]
    kinds = [e["kind"] for e in c.events]
    assert kinds == ["msg_send", "msg_recv"]


def test_request_gets_exactly_one_reply():
    c = recorder_cluster({"a": {"start": _ask("b", 3)}, "b": {"request": _answer}}, latency="constant:2")
    c.run_for(5000)
    replies = inputs(c, "a", "reply")
    assert sorted(r[2] for r in replies) == [1, 2, 3]
    assert all(r[3] == {"a": r[2]} and r[4] == 4 for r in replies)


def test_request_to_a_dead_peer_fails_fast_and_once():
    c = recorder_cluster({"a": {"tick": _ask("b"), "first_tick": 10}, "b": {}})
    c.crash("b")
    c.run_for(5000)
    (reply,) = inputs(c, "a", "reply")
    assert reply[3] is None and 10 <= reply[4] <= 10 + 99


def test_unanswered_request_times_out_once():
    c = recorder_cluster({"a": {"start": _ask("b", timeout_ms=700)}, "b": {}})
    c.run_for(5000)
    assert inputs(c, "a", "reply") == [("reply", "b", 1, None, 700)]


def test_request_lost_to_a_crash_mid_call_fails_the_caller():
    c = recorder_cluster({"a": {"start": _ask("b", timeout_ms=3000)}, "b": {}}, latency="constant:5")
    c.run_for(6)
    assert len(inputs(c, "b", "request")) == 1
    c.crash("b")
    c.run_for(5000)
    assert inputs(c, "a", "reply") == [("reply", "b", 1, None, 3000)]


def test_reused_request_id_and_unknown_reply_are_caller_errors():
    with pytest.raises(LocalProtocolError, match="reused request id 7"):
        recorder_cluster({"a": {"start": lambda core, now: [Request("b", 1, 7), Request("b", 2, 7)]},
                          "b": {}})
    with pytest.raises(LocalProtocolError, match="never received"):
        recorder_cluster({"a": {"start": lambda core, now: [Reply("b", 9, {})]}, "b": {}})


def test_send_to_unknown_node_is_a_caller_error():
    with pytest.raises(LocalProtocolError, match="unknown node 'zz'"):
        recorder_cluster({"a": {"start": lambda core, now: [Send("zz", 1)]}})


def test_partition_drops_and_heal_restores():
    every_10 = {"tick": lambda core, now: (setattr(core, "deadline", now + 10), [Send("b", now)])[1],
                "first_tick": 0}
    c = recorder_cluster({"a": every_10, "b": {}})
    c.run_for(95)
    c.partition(["a"], ["b"])
    c.run_for(100)
    c.heal()
    c.run_for(100)
    got = [m[2] for m in inputs(c, "b", "message")]
    assert got[:10] == list(range(0, 100, 10))
    assert not [t for t in got if 100 <= t < 190]
    assert [t for t in got if t >= 200]
    reasons = {e["reason"] for e in c.events if e["kind"] == "msg_drop"}
    assert reasons == {"partition"}


def test_pause_defers_inputs_until_resume_in_order():
    c = recorder_cluster({"a": {"start": lambda core, now: [Send("b", 1), Send("b", 2)]}, "b": {}})
    c.pause("b")
    c.run_for(50)
    assert inputs(c, "b", "message") == []
    c.resume("b")
    assert [m[2] for m in inputs(c, "b", "message")] == [1, 2]


def test_restart_builds_a_new_incarnation_and_in_flight_messages_are_lost():
    c = recorder_cluster({"a": {"start": lambda core, now: [Send("b", "old")]}, "b": {}},
                         latency="constant:10")
    c.run_for(5)
    c.crash("b")
    c.restart("b")
    c.run_for(50)
    assert inputs(c, "b", "message") == []
    assert [e["reason"] for e in c.events if e["kind"] == "msg_drop"] == ["peer down"]


def test_drop_next_and_drop_by_id():
    c = recorder_cluster({"a": {"start": lambda core, now: [Send("b", 1), Send("b", 2), Send("b", 3)]},
                          "b": {}}, latency="constant:5")
    c.run_for(1)
    sent = [e["msg_id"] for e in c.events if e["kind"] == "msg_send"]
    c.drop(sent[1])
    c.run_for(10)
    assert [m[2] for m in inputs(c, "b", "message")] == [1, 3]
    c2 = recorder_cluster({"a": {"tick": lambda core, now: [Send("b", 1), Send("b", 2)], "first_tick": 5},
                           "b": {}})
    c2.drop_next("a", "b")
    c2.run_for(10)
    assert [m[2] for m in inputs(c2, "b", "message")] == [2]


def test_faults_on_unknown_nodes_are_named():
    c = recorder_cluster({"a": {}, "b": {}})
    for call in (lambda: c.crash("x"), lambda: c.pause("x"), lambda: c.partition(["x"]),
                 lambda: c.drop_next("x", "a"), lambda: c.node("x"), lambda: c.apply_schedule("5 crash x")):
        with pytest.raises(UnknownNodeError, match="unknown node 'x'"):
            call()


# --- byte streams ---------------------------------------------------------------------------------

def _stream_plan(chunks):
    def opened(core, stream_id, peer, accepted, now):
        if accepted:
            return []
        return [StreamWrite(stream_id, c) for c in chunks]
    return {"start": lambda core, now: [Connect("b", "s1")], "open": opened}


@pytest.mark.parametrize("seed", range(20))
def test_stream_bytes_arrive_in_order_however_reads_split_or_merge(seed):
    chunks = [bytes([i]) * (i + 1) for i in range(30)]
    c = recorder_cluster({"a": _stream_plan(chunks), "b": {}}, seed=seed, network="unreliable")
    c.run_for(1000)
    data = inputs(c, "b", "data")
    assert b"".join(d[2] for d in data) == b"".join(chunks), f"seed {seed}"


def test_streams_split_and_merge_across_seeds():
    chunks = [b"x" * 10] * 10
    write_ends = {10 * i for i in range(1, 11)}
    split = merged = False
    for seed in range(10):
        c = recorder_cluster({"a": _stream_plan(chunks), "b": {}}, seed=seed, network="unreliable")
        c.run_for(100)
        sizes = [len(d[2]) for d in inputs(c, "b", "data")]
        ends = {sum(sizes[: i + 1]) for i in range(len(sizes))}
        split |= bool(ends - write_ends)
        merged |= any(size > 10 for size in sizes)
    assert split and merged


def test_partition_holds_stream_bytes_until_heal():
    plan = {**_stream_plan([]), "tick": lambda core, now: [StreamWrite("s1", b"held")], "first_tick": 20}
    c = recorder_cluster({"a": plan, "b": {}}, latency="constant:1")
    c.run_for(10)
    c.partition(["a"], ["b"])
    c.run_for(100)
    assert inputs(c, "a", "tick") and inputs(c, "b", "data") == []
    c.heal()
    c.run_for(10)
    assert b"".join(d[2] for d in inputs(c, "b", "data")) == b"held"


def test_crash_closes_the_peers_stream_and_close_follows_data():
    c = recorder_cluster({"a": _stream_plan([b"abc"]), "b": {}}, latency="constant:1")
    c.run_for(10)
    c.crash("a")
    c.run_for(10)
    (closed,) = inputs(c, "b", "closed")
    assert closed[2] == "peer crashed"
    c2 = recorder_cluster({"a": {"start": lambda core, now: [Connect("b", "s")],
                                 "open": lambda core, sid, peer, acc, now: [StreamWrite(sid, b"x"),
                                                                            StreamClose(sid, "bye")]},
                           "b": {}})
    c2.run_for(10)
    log = [e[0] for e in c2.node("b").log]
    assert log.index("data") < log.index("closed")


def test_connect_to_a_dead_node_is_refused():
    c = recorder_cluster({"a": {"tick": lambda core, now: [Connect("b", "s")], "first_tick": 5}, "b": {}})
    c.crash("b")
    c.run_for(500)
    (closed,) = inputs(c, "a", "closed")
    assert closed[1:3] == ("s", "connection refused")
