"""rocketlab.viz.graphs: vote graphs match the vote events; cluster graphs cut the right links."""

from __future__ import annotations

import math

import networkx as nx

from rocketlab.viz.graphs import (
    NO_ANSWER,
    NODE_RADIUS_PX,
    VOTE_PX_PER_UNIT,
    boxes_overlap,
    circular_layout,
    cluster_graph,
    cluster_graph_figure,
    text_box,
    vote_graph,
    vote_graph_figure,
    vote_terms,
)
from rocketlab.viz.style import GRANTED_COLOR, NO_ANSWER_COLOR, REJECTED_COLOR, is_empty_figure
from tests.viz.sample_traces import TraceBuilder


def edges(graph: nx.DiGraph) -> dict[tuple[str, str], str]:
    return {(u, v): d["result"] for u, v, d in graph.edges(data=True)}


def test_vote_graph_edges_match_the_split_vote_of_term_2(dledger_events):
    g = vote_graph(dledger_events, term=2)
    assert edges(g) == {
        ("n0", "n0"): "ACCEPT", ("n0", "n1"): "UNKNOWN", ("n0", "n2"): "REJECT_ALREADY_VOTED",
        ("n2", "n2"): "ACCEPT", ("n2", "n0"): "REJECT_ALREADY_VOTED", ("n2", "n1"): "UNKNOWN",
    }
    assert [g.nodes[n]["grants"] for n in ("n0", "n1", "n2")] == [1, 0, 1]
    assert [g.nodes[n]["role"] for n in ("n0", "n1", "n2")] == ["CANDIDATE", "DOWN", "CANDIDATE"]
    assert not any(a["elected"] for _, a in g.nodes(data=True))


def test_vote_graph_defaults_to_the_last_term_with_votes(dledger_events):
    assert vote_terms(dledger_events) == [1, 2, 3]
    g = vote_graph(dledger_events)
    assert g.graph["term"] == 3 and g.graph["terms"] == [1, 2, 3]
    assert g.nodes["n2"]["elected"] and g.nodes["n2"]["grants"] == 2
    assert g.edges["n2", "n0"]["granted"] and not g.edges["n2", "n1"]["granted"]


def test_a_request_without_an_answer_and_a_revote_in_the_same_term():
    b = TraceBuilder()
    for t in (0, 50):  # DLedger re-votes in the same term after WAIT_TO_REVOTE
        b.emit(t, "n0", "vote_request", term=4, candidate="n0", voter="n1", ledger_end_index=2, ledger_end_term=1)
    b.emit(1, "n0", "vote_response", term=4, candidate="n0", voter="n1", result="REJECT_TERM_NOT_READY")
    b.emit(51, "n0", "vote_response", term=4, candidate="n0", voter="n1", result="ACCEPT")
    b.emit(52, "n0", "vote_request", term=4, candidate="n0", voter="n2", ledger_end_index=2, ledger_end_term=1)
    g = vote_graph(b.done())
    assert g.edges["n0", "n1"]["results"] == ["REJECT_TERM_NOT_READY", "ACCEPT"]
    assert g.edges["n0", "n1"]["requests"] == 2 and g.edges["n0", "n1"]["granted"]
    assert g.edges["n0", "n2"]["result"] == NO_ANSWER


def test_vote_graph_figure_draws_one_coloured_arrow_per_vote(dledger_events):
    fig = vote_graph_figure(dledger_events, term=2)
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == 4  # self-votes are written under the node, not drawn as arrows
    colors = sorted(a.arrowcolor for a in arrows)
    assert colors == sorted([REJECTED_COLOR, REJECTED_COLOR, NO_ANSWER_COLOR, NO_ANSWER_COLOR])
    notes = [a.text for a in fig.layout.annotations if not a.showarrow]
    assert "candidate: 1 vote<br>self-vote ACCEPT" in notes and "down" in notes
    assert fig.layout.title.text == "Votes in term 2: nobody elected (n0 got 1, n2 got 1 of 3)"  # one round each
    won = vote_graph_figure(dledger_events, term=1)
    assert {a.arrowcolor for a in won.layout.annotations if a.showarrow} == {GRANTED_COLOR}
    assert won.layout.title.text == "Votes in term 1: n1 elected with 3 of 3"


def label_boxes(fig):
    """Every label of a vote graph (arrow labels and node notes) and every node disc, as boxes."""
    r = NODE_RADIUS_PX / VOTE_PX_PER_UNIT
    nodes = [t for t in fig.data if t.mode == "markers+text"][0]
    boxes = [(f"node {n}", (x - r, y - r, x + r, y + r)) for n, x, y in zip(nodes.text, nodes.x, nodes.y, strict=True)]
    for a in fig.layout.annotations:
        if not a.showarrow:
            boxes.append((a.text, text_box(a.x, a.y, a.text, yshift_px=a.yshift or 0)))
    return boxes


def assert_no_label_overlaps(fig):
    boxes = label_boxes(fig)
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1:]:
            if not (name_a.startswith("node") and name_b.startswith("node")):
                assert not boxes_overlap(a, b), f"{name_a!r} at {a} overlaps {name_b!r} at {b}"


def test_every_answer_of_a_round_shows_with_its_round_number():
    b = TraceBuilder()
    for t in (0, 50):  # n0 asks twice in term 4: everyone answers NOT_READY, then ACCEPT
        for voter in ("n0", "n1", "n2"):
            b.emit(t, "n0", "vote_request", term=4, candidate="n0", voter=voter, ledger_end_index=2,
                   ledger_end_term=1)
        for voter in ("n0", "n1", "n2"):
            b.emit(t + 1, "n0", "vote_response", term=4, candidate="n0", voter=voter,
                   result="ACCEPT" if t or voter == "n0" else "REJECT_TERM_NOT_READY")
    b.role(52, "n0", "LEADER", 4, "n0")
    g = vote_graph(b.done())
    assert g.edges["n0", "n1"]["answers"] == [(1, "REJECT_TERM_NOT_READY"), (2, "ACCEPT")]
    assert g.nodes["n0"]["rounds"] == 2 and g.graph["rounds"] == {"n0": 2}
    fig = vote_graph_figure(b.done())
    labels = [a.text for a in fig.layout.annotations if not a.showarrow and a.text.startswith("r1")]
    assert labels == ["r1 NOT_READY,<br>then r2 ACCEPT"] * 2
    assert fig.layout.title.text.startswith("Votes in term 4 (several rounds: n0 2): n0 elected")
    assert any("N-th vote round" in (t.name or "") for t in fig.data)
    assert_no_label_overlaps(fig)


def test_lab03_vote_graphs_show_every_round_and_no_label_overlaps():
    """Lab 03's group (seed 7, five members, the first leader crashed at 2 s): term 1 holds n0's two
    rounds (each voter NOT_READY, then ACCEPT) and the survivors' rounds after n0 was elected."""
    from rocketlab.viz import ClusterView

    group = ClusterView.dledger(nodes=5, seed=7)
    group.run_for(2_000)
    group.act("crash", node=group.cluster.leader())
    group.run_for(12_000)
    events = group.cluster.events
    terms = vote_terms(events)
    for term in terms:
        assert_no_label_overlaps(vote_graph_figure(events, term))
    one = vote_graph_figure(events, 1)
    assert "several rounds, some after the election" in one.layout.title.text
    texts = [a.text for a in one.layout.annotations if not a.showarrow]
    assert texts.count("r1 NOT_READY,<br>then r2 ACCEPT") == 4
    assert not any("×" in t for t in texts)


def test_vote_graph_layout_is_circular_sorted_and_deterministic():
    pos = circular_layout(["n2", "n10", "n0", "n1"])
    assert list(pos) == ["n0", "n1", "n2", "n10"]
    assert pos["n0"] == (math.cos(math.pi / 2), 1.0)  # first at the top
    assert pos["n1"][0] > 0.99  # then clockwise: n1 to the right
    assert circular_layout(["n1", "n0", "n2", "n10"]) == pos


def test_no_votes_gives_an_empty_graph_and_a_note(pingpong_run):
    assert vote_graph(pingpong_run.events).graph["term"] is None
    fig = vote_graph_figure(pingpong_run.events)
    assert is_empty_figure(fig) and "vote_request" in fig.layout.annotations[0].text


def test_cluster_graph_cuts_links_across_the_partition(dledger_events):
    g = cluster_graph(dledger_events, at_ms=3250)
    assert g.graph["groups"] == (("n2",), ("n0", "n1"))
    cut = {tuple(sorted((a, b))) for a, b, d in g.edges(data=True) if d["cut"]}
    assert cut == {("n0", "n2"), ("n1", "n2")}
    assert g.nodes["n2"]["state"] == "LEADER" and g.nodes["n0"]["leader"] == "n2"
    healed = cluster_graph(dledger_events)  # the end: healed
    assert healed.graph["groups"] is None and not any(d["cut"] for _, _, d in healed.edges(data=True))


def test_cluster_graph_marks_down_and_paused_nodes(pingpong_run):
    g = cluster_graph(pingpong_run.events, at_ms=1650)
    assert not g.nodes["n1"]["alive"]
    assert all(d["dead"] for a, b, d in g.edges(data=True) if "n1" in (a, b))
    assert g.edges["n0", "n2"]["cut"] and not g.edges["n0", "n2"]["dead"]
    assert cluster_graph(pingpong_run.events, at_ms=1900).nodes["n2"]["paused"]


def test_cluster_graph_figure_draws_each_link_class(dledger_events):
    fig = cluster_graph_figure(dledger_events, at_ms=3250)
    cut = [t for t in fig.data if t.name == "cut by partition"][0]
    assert sum(1 for x in cut.x if x is None) == 2  # two cut links, each ended by None
    assert [t.name for t in fig.data if t.name == "link"] == ["link"]
    assert fig.layout.title.text == "Cluster at t=3250 ms: partition n2 | n0,n1"
    assert is_empty_figure(cluster_graph_figure([]))
