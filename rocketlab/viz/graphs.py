"""Graphs from the trace: who voted for whom in a term, and the cluster's links at an instant.

``vote_graph`` / ``cluster_graph`` return networkx graphs (so a notebook can query them: in-degree,
``nx.get_edge_attributes``); the ``*_figure`` functions draw them with plotly on a deterministic circular
layout (node ids sorted naturally, the first at the top, going clockwise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import plotly.graph_objects as go

from rocketlab.viz.style import (
    GRANTED_COLOR,
    NO_ANSWER_COLOR,
    REJECTED_COLOR,
    base_layout,
    empty_figure,
    role_color,
    text_color_on,
)
from rocketlab.viz.timeline import (
    DOWN,
    UP,
    Event,
    Events,
    as_records,
    end_ms,
    groups_at,
    natural_key,
    node_ids,
    of_kind,
    states_at,
)

NO_ANSWER = "NO_ANSWER"  # a vote_request with no vote_response (yet)
VOTER = "VOTER"  # a live member that did not ask for votes in the term
Position = tuple[float, float]


def circular_layout(nodes: Sequence[str]) -> dict[str, Position]:
    """Nodes on the unit circle in natural order, the first at the top, clockwise."""
    ordered = sorted(nodes, key=natural_key)
    count = max(len(ordered), 1)
    return {n: (math.cos(math.pi / 2 - 2 * math.pi * i / count), math.sin(math.pi / 2 - 2 * math.pi * i / count))
            for i, n in enumerate(ordered)}


# --- votes --------------------------------------------------------------------------------------
def vote_terms(events: Events) -> list[int]:
    """The terms in which votes were requested or answered, ascending."""
    records = as_records(events)
    return sorted({e["term"] for e in of_kind(records, "vote_request", "vote_response") if e.get("term") is not None})


def vote_graph(events: Events, term: int | None = None) -> nx.DiGraph:
    """Who asked whom for a vote in ``term`` (default: the last term with votes), and the answer.

    Edge ``candidate → voter`` (a self-loop for the candidate's own vote) with ``result`` (the last
    VoteResponse result name, or ``NO_ANSWER``), ``results`` (all of them: DLedger re-votes within a
    term), ``requests`` and ``granted`` (any ACCEPT). Nodes carry ``role`` (their last role event in that
    term, or None), ``candidate`` (asked for votes), ``grants`` (votes received) and ``elected``.
    Graph attributes: ``term`` (None if the run has no votes) and ``terms``.
    """
    records = as_records(events)
    terms = vote_terms(records)
    chosen = term if term is not None else (terms[-1] if terms else None)
    graph = nx.DiGraph(term=chosen, terms=terms)
    for node in node_ids(records):
        graph.add_node(node, role=None, candidate=False, grants=0, elected=False)
    for e in of_kind(records, "vote_request", "vote_response"):
        if e.get("term") == chosen:
            _add_vote(graph, e)
    for _, _, data in graph.edges(data=True):
        data["result"] = data["results"][-1] if data["results"] else NO_ANSWER
        data["granted"] = "ACCEPT" in data["results"]
    for candidate, _, data in graph.edges(data=True):
        graph.nodes[candidate]["grants"] += int(data["granted"])
    _add_roles_in_term(graph, records, chosen)
    return graph


def _add_roles_in_term(graph: nx.DiGraph, records: Sequence[Event], term: int | None) -> None:
    """Role in the election: LEADER if elected, CANDIDATE if it asked for votes, otherwise the node's
    state at the term's last vote event (FOLLOWER, DOWN, ...)."""
    votes = [e for e in of_kind(records, "vote_request", "vote_response", "vote_round") if e.get("term") == term]
    if not votes:
        return
    states = states_at(records, max(e["t"] for e in votes))
    for e in of_kind(records, "role"):
        if e.get("term") == term and e.get("role") == "LEADER" and e.get("node") in graph:
            graph.nodes[e["node"]]["elected"] = True
    for node, attrs in graph.nodes(data=True):
        down = node in states and not states[node].alive
        attrs["role"] = ("LEADER" if attrs["elected"] else "CANDIDATE" if attrs["candidate"]
                         else DOWN if down else VOTER)


def _add_vote(graph: nx.DiGraph, e: Event) -> None:
    candidate, voter = str(e.get("candidate")), str(e.get("voter"))
    for node in (candidate, voter):
        if node not in graph:
            graph.add_node(node, role=None, candidate=False, grants=0, elected=False)
    if not graph.has_edge(candidate, voter):
        graph.add_edge(candidate, voter, term=e.get("term"), requests=0, results=[])
    graph.nodes[candidate]["candidate"] = True
    edge = graph.edges[candidate, voter]
    if e["kind"] == "vote_request":
        edge["requests"] += 1
    else:
        edge["results"].append(str(e.get("result")))


def vote_graph_figure(events: Events, term: int | None = None) -> go.Figure:
    """Draw :func:`vote_graph`: arrows candidate → voter, green granted, red rejected (labelled with the
    reason), grey unanswered; nodes coloured by their role in that term, the elected leader ringed."""
    graph = vote_graph(events, term)
    if graph.graph["term"] is None:
        return empty_figure("Votes", ["vote_request", "vote_response"])
    pos = circular_layout(list(graph.nodes))
    fig = go.Figure()
    for (u, v), data in sorted(graph.edges.items()):
        if u != v:
            _add_vote_arrow(fig, pos, u, v, data, reverse=graph.has_edge(v, u))
    _add_vote_nodes(fig, graph, pos)
    for name, color in (("granted", GRANTED_COLOR), ("rejected", REJECTED_COLOR), ("no answer", NO_ANSWER_COLOR)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{name} (arrow labelled)",
                                 line=dict(color=color, width=3)))
    _square_axes(fig)
    return base_layout(fig, _vote_title(graph), 440, legend="bottom")


def _short_result(result: str) -> str:
    return "no answer" if result in (NO_ANSWER, "UNKNOWN") else result.removeprefix("REJECT_")


def _edge_color(data: dict) -> str:
    if data["granted"]:
        return GRANTED_COLOR
    return NO_ANSWER_COLOR if data["result"] in (NO_ANSWER, "UNKNOWN") else REJECTED_COLOR


def _shortened(a: Position, b: Position, reverse: bool, trim: float = 0.17) -> tuple[Position, Position]:
    """The segment a→b trimmed by the node radius at both ends, shifted sideways if b→a is drawn too."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    shift = 0.05 if reverse else 0.0
    ox, oy = -uy * shift, ux * shift
    return (a[0] + ux * trim + ox, a[1] + uy * trim + oy), (b[0] - ux * trim + ox, b[1] - uy * trim + oy)


def _add_vote_arrow(fig: go.Figure, pos: dict[str, Position], u: str, v: str, data: dict, reverse: bool) -> None:
    start, tip = _shortened(pos[u], pos[v], reverse)
    color = _edge_color(data)
    fig.add_annotation(x=tip[0], y=tip[1], ax=start[0], ay=start[1], xref="x", yref="y", axref="x", ayref="y",
                       showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=2.5, arrowcolor=color, text="")
    at = (start[0] + 0.4 * (tip[0] - start[0]), start[1] + 0.4 * (tip[1] - start[1]))  # nearer the candidate
    tries = f" ×{data['requests']}" if data["requests"] > 1 else ""
    fig.add_annotation(x=at[0], y=at[1], xref="x", yref="y", showarrow=False, font=dict(size=10, color=color),
                       text=f"{_short_result(data['result'])}{tries}", bgcolor="rgba(255,255,255,0.85)")


def _add_vote_nodes(fig: go.Figure, graph: nx.DiGraph, pos: dict[str, Position]) -> None:
    nodes = sorted(graph.nodes, key=natural_key)
    attrs = [graph.nodes[n] for n in nodes]
    fig.add_trace(go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text", showlegend=False,
        text=[f"<b>{n}</b>" for n in nodes], textposition="middle center", textfont=dict(color=[text_color_on(_vote_role_color(a["role"])) for a in attrs], size=12),
        cliponaxis=False,
        marker=dict(size=46, color=[_vote_role_color(a["role"]) for a in attrs],
                    line=dict(width=[5 if a["elected"] else 1 for a in attrs],
                              color=["#222" if a["elected"] else "white" for a in attrs])),
        customdata=[[a["role"] or "-", a["grants"], "yes" if a["candidate"] else "no"] for a in attrs],
        hovertemplate="role %{customdata[0]}<br>candidate: %{customdata[2]}<br>votes received %{customdata[1]}"
                      "<extra></extra>",
    ))
    for n in nodes:
        fig.add_annotation(x=pos[n][0], y=pos[n][1], yshift=-31, showarrow=False, text=_node_note(n, graph),
                           font=dict(size=10, color="#333"), bgcolor="rgba(255,255,255,0.8)")


def _vote_role_color(role: str | None) -> str:
    return role_color("FOLLOWER") if role == VOTER else role_color(role) if role else "#9e9e9e"


def _node_note(node: str, graph: nx.DiGraph) -> str:
    attrs = graph.nodes[node]
    role = (attrs["role"] or "").lower()
    if not attrs["candidate"]:
        return role
    own = graph.edges[node, node]["result"] if graph.has_edge(node, node) else None
    self_vote = f", self-vote {_short_result(own)}" if own else ""
    return f"{role}: {attrs['grants']} vote{'s' if attrs['grants'] != 1 else ''}{self_vote}"


def _vote_title(graph: nx.DiGraph) -> str:
    term, members = graph.graph["term"], graph.number_of_nodes()
    elected = [n for n, a in graph.nodes(data=True) if a["elected"]]
    if elected:
        return f"Votes in term {term}: {elected[0]} elected with {graph.nodes[elected[0]]['grants']} of {members}"
    candidates = sorted((n for n, a in graph.nodes(data=True) if a["candidate"]), key=natural_key)
    best = ", ".join(f"{n} got {graph.nodes[n]['grants']}" for n in candidates)
    return f"Votes in term {term}: nobody elected ({best} of {members})"


def _square_axes(fig: go.Figure) -> None:
    fig.update_xaxes(visible=False, range=[-1.5, 1.5])
    fig.update_yaxes(visible=False, range=[-1.45, 1.3], scaleanchor="x", scaleratio=1)


# --- cluster links ---------------------------------------------------------------------------------
def cluster_graph(events: Events, at_ms: int | None = None) -> nx.Graph:
    """The cluster at ``at_ms`` (default: the end of the run): every pair of nodes linked.

    Node attributes: ``state`` (role, ``UP`` or ``DOWN``), ``term``, ``leader``, ``alive``, ``paused``.
    Edge attributes: ``cut`` (the ends are in different partition groups) and ``dead`` (an end is down).
    Graph attributes: ``at_ms`` and ``groups`` (the partition in force, or None).
    """
    records = as_records(events)
    at = end_ms(records) if at_ms is None else at_ms
    groups = groups_at(records, at)
    group_of = {n: i for i, g in enumerate(groups or ()) for n in g}
    graph = nx.Graph(at_ms=at, groups=groups)
    states = states_at(records, at)
    for node, st in states.items():
        graph.add_node(node, state=st.state, term=st.term, leader=st.leader, alive=st.alive, paused=st.paused)
    nodes = list(states)
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            cut = groups is not None and group_of.get(a) != group_of.get(b)
            graph.add_edge(a, b, cut=cut, dead=not (states[a].alive and states[b].alive))
    return graph


def cluster_graph_figure(events: Events, at_ms: int | None = None) -> go.Figure:
    """Draw :func:`cluster_graph`: nodes in role colours (grey when down, ⏸ when paused), links grey,
    links cut by the partition red and dashed, links to a dead node faint and dotted."""
    graph = cluster_graph(events, at_ms)
    if graph.number_of_nodes() == 0:
        return empty_figure("Cluster", ["role", "fault", "msg_send"])
    pos = circular_layout(list(graph.nodes))
    classes = {"link": ("#9e9e9e", "solid", 2), "cut by partition": (REJECTED_COLOR, "dash", 3),
               "to a down node": ("#d0d0d0", "dot", 2)}
    fig = go.Figure()
    for name, (color, dash, width) in classes.items():
        xs, ys = _edge_lines(graph, pos, name)
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                                     line=dict(color=color, dash=dash, width=width)))
    _add_cluster_nodes(fig, graph, pos)
    _square_axes(fig)
    groups = graph.graph["groups"]
    where = f"partition {' | '.join(','.join(g) for g in groups)}" if groups else "network whole"
    return base_layout(fig, f"Cluster at t={graph.graph['at_ms']} ms: {where}", 440, legend="bottom")


def _edge_class(data: dict) -> str:
    if data["dead"]:
        return "to a down node"
    return "cut by partition" if data["cut"] else "link"


def _edge_lines(graph: nx.Graph, pos: dict[str, Position], name: str) -> tuple[list, list]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for a, b, data in sorted(graph.edges(data=True), key=lambda e: (natural_key(e[0]), natural_key(e[1]))):
        if _edge_class(data) == name:
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
    return xs, ys


def _node_label(node: str, attrs: dict) -> str:
    if not attrs["alive"]:
        return f"<b>{node}</b><br>down"
    role = "" if attrs["state"] == UP else attrs["state"].lower()
    term = f" T{attrs['term']}" if attrs["term"] is not None else ""
    return f"<b>{node}</b><br>{role}{term}" + (" ⏸" if attrs["paused"] else "")


def _add_cluster_nodes(fig: go.Figure, graph: nx.Graph, pos: dict[str, Position]) -> None:
    nodes = sorted(graph.nodes, key=natural_key)
    attrs = [graph.nodes[n] for n in nodes]
    fills = [role_color(DOWN if not a["alive"] else a["state"]) for a in attrs]
    fig.add_trace(go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text", showlegend=False,
        text=[_node_label(n, a) for n, a in zip(nodes, attrs, strict=True)], textposition="middle center",
        textfont=dict(color=[text_color_on(c) for c in fills], size=11), cliponaxis=False,
        marker=dict(size=62, color=fills,
                    line=dict(width=[4 if a["paused"] else 1 for a in attrs], color="#222")),
        customdata=[[a["state"], a["term"] if a["term"] is not None else "-", a["leader"] or "-"] for a in attrs],
        hovertemplate="%{customdata[0]}, term %{customdata[1]}, leader %{customdata[2]}<extra></extra>",
    ))
