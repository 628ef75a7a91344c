"""ClusterView's Python side: intents -> Cluster calls -> state, forks after scrubbing back, replay code that
rebuilds the identical trace, bad intents answered in words, and the "why" lines against the decision
tables they cite. The browser side is in tests/viz/test_cluster_view_browser.py."""

from __future__ import annotations

import json
import random

import pytest

from rocketlab import cli
from rocketlab.dledger.elector_decisions import (
    VOTE_CHECKS,
    VoteTally,
    VoteView,
    decide_vote,
    parse_vote_result,
)
from rocketlab.dledger.protocol import VoteRequest, VoteResponse, VoteResult
from rocketlab.errors import RocketlabError
from rocketlab.sim import Cluster
from rocketlab.viz.cluster_view import ClusterView, ViewSession, run_film, write_viewer
from rocketlab.viz.cluster_view.film import vote_round_rule, why
from rocketlab.viz.cluster_view.offline import read_timers

SEEDS = range(1, 7)


def errors_of(replies: list[dict]) -> list[str]:
    return [r["text"] for r in replies if r["type"] == "message" and r.get("level") == "error"]


def act(view: ClusterView, action: str, at: int | None = None, **args) -> list[dict]:
    return view.intent({"type": "act", "action": action, "args": args, "generation": view.session.generation,
                        "at": view.session.now_ms if at is None else at})


def elected(view: ClusterView, within_ms: int = 10_000) -> str:
    for _ in range(within_ms // 250):
        if view.cluster.leader():
            return view.cluster.leader()
        view.run_for(250)
    raise AssertionError(f"no leader within {within_ms} ms (seed {view.cluster.seed})")


# ------------------------------------------------------------------------------------ intents
def test_hello_sends_the_whole_film_and_advance_only_what_is_new():
    view = ClusterView.dledger(nodes=3, seed=2)
    [film] = view.intent({"type": "hello"})
    assert film["type"] == "film" and film["film"]["nodes"] == ["n0", "n1", "n2"]
    assert film["film"]["live"] and film["film"]["generation"] == 0
    sent = len(film["film"]["events"])
    [more] = view.intent({"type": "advance", "to": 2000, "generation": 0})
    assert more["type"] == "more" and more["start"] == sent and more["end_ms"] == 2000
    assert len(more["events"]) == len(view.cluster.events) - sent > 0
    assert any(e["kind"] == "role" and e.get("why", "").startswith("changeRoleToLeader") for e in more["events"])
    assert more["timers"], "the election timers are sampled while the cluster runs"
    [step] = view.intent({"type": "step", "generation": 0})
    assert step["goto"] == step["events"][0]["t"] > 2000


def test_intents_become_cluster_calls_and_state():
    view = ClusterView.dledger(nodes=5, seed=3)
    leader = elected(view)
    assert not errors_of(act(view, "crash", node=leader))
    assert not view.cluster.alive(leader)
    follower = next(n for n in view.cluster.node_ids if n != leader)
    assert not errors_of(act(view, "time_out", node=follower))
    view.run_for(20)
    assert view.cluster.node(follower).role == "CANDIDATE"
    other = next(n for n in view.cluster.live_nodes() if n != follower)
    assert not errors_of(act(view, "cut_link", src=follower, dst=other))
    view.run_for(3000)
    drops = [e for e in view.cluster.events if e["kind"] == "msg_drop" and e["src"] == follower and e["dst"] == other]
    assert drops and {d["reason"] for d in drops} == {"link cut"}
    assert not errors_of(act(view, "restart", node=leader))
    assert not errors_of(act(view, "set_network", mode="unreliable", latency="uniform:5:20"))
    assert view.cluster.model.mode == "unreliable"
    faults = [(e["action"], e["targets"]) for e in view.cluster.events if e["kind"] == "fault"]
    assert faults == [("crash", [leader]), ("timeout", [follower]), ("cut_link", [follower, other]),
                      ("restart", [leader]), ("network", ["unreliable", "uniform:5:20"])]


def test_put_isolate_transfer_and_drop_next():
    view = ClusterView.dledger(nodes=3, seed=4)
    leader = elected(view)
    act(view, "put")
    act(view, "put", body="hello")
    view.run_for(500)
    assert view.cluster.node(leader).committed_index == 1
    target = next(n for n in view.cluster.node_ids if n != leader)
    assert not errors_of(act(view, "transfer_leadership", node=target))
    view.run_for(2000)
    assert view.cluster.leader() == target
    assert not errors_of(act(view, "drop_next", src=target, dst=leader))
    assert not errors_of(act(view, "isolate", node=leader))
    assert not errors_of(act(view, "heal"))
    assert "cluster.put(b'hello', wait=False)" in view.replay_code()


# ------------------------------------------------------------------------------------ forks and replay
def test_acting_in_the_past_forks_history_at_that_instant():
    view = ClusterView.dledger(nodes=5, seed=5)
    leader = elected(view)
    view.run_for(1000)
    act(view, "crash", node=leader)
    view.run_for(4000)
    at = leader_at = view.session.intents[0].at_ms
    before = [e for e in view.cluster.events if e["t"] <= at - 1]
    victim = next(n for n in view.cluster.node_ids if n != leader)
    replies = act(view, "pause", at=at - 500, node=victim)
    [film] = replies
    assert film["type"] == "film" and film["goto"] == at - 500 and "1 later action(s) dropped" in film["say"]
    assert view.session.generation == 1 and view.cluster.now_ms == leader_at - 500
    assert [i.action for i in view.session.intents] == ["pause"]
    assert view.cluster.alive(leader)
    kept = [e for e in view.cluster.events if e["t"] <= at - 501]
    assert kept == [e for e in before if e["t"] <= at - 501]  # the past up to the fork is untouched
    # a stale intent, aimed at the history that was forked away, is answered with the fresh film
    [again] = view.intent({"type": "act", "action": "crash", "args": {"node": "n0"}, "at": 10, "generation": 0})
    assert again["type"] == "film" and "forked" in again["say"] and view.session.generation == 1


def test_put_bodies_stay_distinct_across_a_fork():
    view = ClusterView.dledger(nodes=3, seed=4)
    elected(view)
    act(view, "put")
    view.run_for(1000)
    act(view, "put", at=view.session.now_ms - 500)  # a fork that keeps the first put
    act(view, "put")
    bodies = [i.args["body"] for i in view.session.intents]
    assert bodies == ["message-0", "message-1", "message-2"]


@pytest.mark.parametrize("seed", SEEDS)
def test_replay_code_rebuilds_the_identical_trace(seed):
    """Random intents at random instants, with scrubs back (forks) in between: the printed code gives the
    same events, one for one."""
    rng = random.Random(seed)
    view = ClusterView.dledger(nodes=rng.choice([3, 5]), seed=seed)
    nodes = view.cluster.node_ids
    for _ in range(12):
        view.run_for(rng.randint(50, 2500))
        action = rng.choice(["crash", "restart", "pause", "resume", "time_out", "isolate", "heal", "cut_link",
                             "heal_link", "drop_next", "put", "transfer_leadership"])
        a, b = rng.sample(nodes, 2)
        args = {"node": a} if action in ("crash", "restart", "pause", "resume", "time_out", "isolate",
                                         "transfer_leadership") else {"src": a, "dst": b}
        at = view.session.now_ms if rng.random() < 0.7 else rng.randint(0, view.session.now_ms)
        act(view, action, at=at, **({} if action in ("heal", "put") else args))
    view.run_for(1500)
    namespace: dict = {}
    exec(view.replay_code(), namespace)  # noqa: S102 - the code the view prints for learners
    rebuilt = namespace["cluster"]
    assert rebuilt.events == view.cluster.events, f"seed {seed}: replay differs\n{view.replay_code()}"


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(("intent", "message"), [
    ({"type": "act", "action": "crash", "args": {"node": "n9"}, "at": 0}, "unknown node 'n9'"),
    ({"type": "act", "action": "restart", "args": {"node": "n1"}, "at": 0}, "cannot restart n1: it is running"),
    ({"type": "act", "action": "explode", "args": {}, "at": 0}, "unknown action 'explode'"),
    ({"type": "act", "action": "crash", "args": {}, "at": 0}, "crash needs node"),
    ({"type": "act", "action": "cut_link", "args": {"src": "n1", "dst": "n1"}, "at": 0}, "two different nodes"),
    ({"type": "act", "action": "crash", "args": {"node": "n1"}, "at": -5}, "whole number of ms"),
    ({"type": "act", "action": "crash", "args": "n1", "at": 0}, "'args' must be an object"),
    ({"type": "act", "action": "set_network", "args": {"mode": "carrier-pigeon"}, "at": 0}, "carrier-pigeon"),
    ({"type": "act", "action": "set_network", "args": {"mode": "reliable", "latency": "fast"}, "at": 0}, "latency"),
    ({"type": "advance", "to": "soon"}, "whole number of ms"),
    ({"type": "teleport"}, "unknown intent type 'teleport'"),
    ("garbage", "an intent is an object with a 'type'"),
])
def test_bad_intents_are_answered_in_words_and_change_nothing(intent, message):
    view = ClusterView.dledger(nodes=3, seed=1)
    view.run_for(1000)
    before = list(view.cluster.events)
    if isinstance(intent, dict):
        intent = {"generation": 0, **intent}
    replies = view.intent(intent)
    assert any(message in text for text in errors_of(replies)), replies
    assert replies[-1]["type"] == "more"  # the browser stays in step
    assert view.cluster.events == before and view.session.intents == []


def test_a_failed_fork_keeps_the_history_it_would_have_replaced():
    view = ClusterView.dledger(nodes=3, seed=1)
    leader = elected(view)
    act(view, "crash", node=leader)
    view.run_for(1000)
    events, intents = list(view.cluster.events), list(view.session.intents)
    replies = act(view, "restart", at=10, node=leader)  # at 10 ms the node was running: cannot restart
    assert errors_of(replies) == [f"cannot restart {leader}: it is running"]
    assert view.cluster.events == events and view.session.intents == intents and view.session.generation == 0


def test_the_time_out_of_a_leader_is_refused_with_a_reason():
    view = ClusterView.dledger(nodes=3, seed=1)
    leader = elected(view)
    assert errors_of(act(view, "time_out", node=leader)) == [
        f"{leader} is the leader: only a follower or candidate can time out"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seed": -1}, "seed must be a whole number"), ({"seed": "7"}, "seed must be a whole number"),
    ({"speed": 0.001}, "speed 0.001 is out of range"), ({"speed": 11}, "speed 11 is out of range"),
    ({"nodes": 10}, "1 to 9 nodes"), ({"profile": "dledger-9.9"}, "dledger-9.9"),
])
def test_bad_creation_arguments_name_the_problem(kwargs, message):
    with pytest.raises(RocketlabError, match=message):
        ClusterView.dledger(**kwargs)


@pytest.mark.parametrize("nodes", [1, 9])
def test_one_and_nine_nodes_work(nodes):
    view = ClusterView.dledger(nodes=nodes, seed=3)
    leader = elected(view, 20_000)
    film = view.session.film()
    assert len(film["nodes"]) == nodes and any(e.get("node") == leader for e in film["events"])


def test_the_session_needs_a_cluster_built_by_a_constructor():
    hand_made = Cluster.pingpong(nodes=2)
    hand_made.recipe = None  # as a Cluster(...) built directly has
    with pytest.raises(RocketlabError, match="built by a Cluster constructor"):
        ViewSession(hand_made)


def test_other_systems_master_slave_and_brokers_on_dledger():
    view = ClusterView.master_slave(seed=2)
    view.run_for(500)
    act(view, "put")
    view.run_for(6000)  # the slave first reports its offset haSendHeartbeatInterval (5 s) after connecting
    kinds = {e["kind"] for e in view.session.film()["events"]}
    assert {"put", "ha_report"} <= kinds and not view.session.timers  # no election timers in classic HA
    assert errors_of(act(view, "time_out", node="n1")) == ["n1 cannot time out: its system has no leader election"]
    brokers = ClusterView.dledger_brokers(nodes=3, seed=2)
    leader = elected(brokers, 20_000)
    act(brokers, "put")
    brokers.run_for(500)
    assert any(e["kind"] == "put" and e["status"] == "PUT_OK" for e in brokers.cluster.events)
    assert any(t["node"] == leader and t["what"] == "next heartbeat" for t in brokers.session.timers)


# ------------------------------------------------------------------------------------ why lines
def _vote_cases():
    view = VoteView("n1", frozenset({"n0", "n1", "n2"}), curr_term=3, curr_vote_for=None, leader_id=None,
                    ledger_end_index=5, ledger_end_term=2)
    req = VoteRequest(leader_id="n0", term=3, ledger_end_index=5, ledger_end_term=2)
    yield view, req.with_(leader_id="n7"), False
    yield view, req.with_(leader_id="n1"), False
    yield view, req.with_(ledger_end_term=1), False
    yield view, req.with_(ledger_end_index=4), False
    yield view, req.with_(term=2), False
    yield view.__class__(**{**_fields(view), "curr_vote_for": "n2"}), req, False
    yield view.__class__(**{**_fields(view), "curr_vote_for": "n2", "leader_id": "n2"}), req, False
    yield view, req.with_(term=4), False
    yield view.__class__(**{**_fields(view), "curr_term": 1}), req.with_(term=1), False
    yield view.__class__(**{**_fields(view), "taking_leadership": True}), req, False
    yield view, req, False


def _fields(view: VoteView) -> dict:
    return {name: getattr(view, name) for name in view.__slots__}


def test_vote_why_lines_cite_the_check_that_decided():
    seen = set()
    for view, request, is_self in _vote_cases():
        decision = decide_vote(view, request, is_self)
        seen.add(decision.result.name)
        event = {"kind": "vote_response", "result": decision.result.name, "term": 3, "candidate": "n0", "voter": "n1"}
        assert VOTE_CHECKS[decision.result.name][0] == decision.check
        assert why(event, 3).startswith(f"handleVote check {decision.check}: {decision.result.name}")
    assert seen == set(VOTE_CHECKS)


@pytest.mark.parametrize("seed", range(20))
def test_vote_round_rules_are_recovered_from_the_event_counters(seed):
    """For old traces without ``rule``: exact whenever no voter knew a bigger term and none had a leader."""
    rng = random.Random(seed)
    for _ in range(200):
        peers = rng.choice([1, 3, 5, 7])
        tally = VoteTally(known_max_term_in_group=4)
        for _ in range(rng.randint(0, peers)):
            result = rng.choice([r for r in VoteResult if r is not VoteResult.REJECT_ALREADY_HAS_LEADER])
            tally.add(VoteResponse(term=rng.choice([3, 4]), vote_result=result))
        decision = parse_vote_result(tally, 4, peers)
        event = {"result": decision.result.name, "accepted": tally.accepted_num, "not_ready": tally.not_ready_term_num,
                 "bigger_ledger": tally.bigger_ledger_num, "valid": tally.valid_num, "all": tally.all_num}
        assert vote_round_rule(event, peers) == decision.rule, (seed, tally, decision)


def test_the_trace_names_the_vote_round_rule_and_the_why_line_cites_it():
    view = ClusterView.dledger(nodes=5, seed=8)
    elected(view)
    rounds = [e for e in view.cluster.events if e["kind"] == "vote_round"]
    assert rounds and all(isinstance(e["rule"], int) for e in rounds)
    passed = [e for e in rounds if e["result"] == "PASSED"]
    assert passed and all(e["rule"] == 5 for e in passed)
    assert why(passed[0], 5).startswith("parseVoteResult rule 5: PASSED")


def test_an_event_missing_fields_gets_no_why_line_and_no_error():
    from rocketlab.viz.cluster_view.film import film_event

    event = film_event({"t": 5, "seq": 1, "node": "n0", "kind": "put", "status": "PUT_OK"}, 3)
    assert "why" not in event and event["text"].startswith("t=5 n0 put")


# ------------------------------------------------------------------------------------ offline
def test_saved_view_and_rocketlab_view_make_an_offline_page(tmp_path, capsys):
    view = ClusterView.dledger(nodes=3, seed=6)
    elected(view)
    view.run_for(500)
    run = view.save(tmp_path / "run")
    assert read_timers(run) == view.session.timers
    film = run_film(run)
    assert film["timers"] == view.session.timers and not film["live"]
    assert len(film["events"]) == len(view.cluster.events)
    out = tmp_path / "view.html"
    assert cli.main(["view", str(run), "--html", str(out)]) == 0
    page = out.read_text()
    assert "rocketlab-viewer-src" in page and "mountOffline" in page and "<script src=" not in page
    start = page.index("id='viewer-0-film'>") + len("id='viewer-0-film'>")
    embedded = json.loads(page[start:page.index("</script>", start)])
    assert embedded["nodes"] == ["n0", "n1", "n2"] and embedded["end_ms"] == view.cluster.now_ms
    assert str(out) in capsys.readouterr().out


def test_rocketlab_view_bad_run_directories_exit_2(tmp_path, capsys):
    assert cli.main(["view", str(tmp_path / "nope")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "events.jsonl").write_text("")
    assert cli.main(["view", str(empty)]) == 2
    assert "no events to show" in capsys.readouterr().err
    (empty / "events.jsonl").write_text("{not json\n")
    assert cli.main(["view", str(empty)]) == 2
    assert "corrupt event at line 1" in capsys.readouterr().err


def test_write_viewer_default_place(tmp_path):
    c = Cluster.pingpong(nodes=2, seed=1)
    c.run_for(300)
    run = c.save(tmp_path / "pp")
    path = write_viewer(run, run / "view.html")
    assert path.exists() and "pingpong" in path.read_text()
