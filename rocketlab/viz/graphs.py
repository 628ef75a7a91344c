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

from rocketlab.i18n import N_, _, ngettext
from rocketlab.viz.style import (
    GRANTED_COLOR,
    LABEL_BOX,
    LABEL_TEXT,
    NO_ANSWER_COLOR,
    REJECTED_COLOR,
    base_layout,
    empty_figure,
    role_color,
    text_color_on,
    text_px,
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
NO_ANSWER_WORDS = N_("no answer")
LINK, CUT_BY_PARTITION, TO_A_DOWN_NODE = N_("link"), N_("cut by partition"), N_("to a down node")
"""The cluster graph's kinds of link: its legend's names (translated where shown)."""
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
    term), ``answers`` (``(round, result)`` per request, ``NO_ANSWER`` where none came), ``requests`` and
    ``granted`` (any ACCEPT). A candidate's *round* is one batch of requests (DLedgerLeaderElector's
    ``maintainAsCandidate`` asks every member at one instant); round 1 is its first in the term. Nodes
    carry ``role`` (their last role event in that term, or None), ``candidate`` (asked for votes),
    ``rounds`` (how many), ``grants`` (votes received) and ``elected``. Graph attributes: ``term`` (None
    if the run has no votes), ``terms`` and ``rounds`` (candidate → rounds in the term).
    """
    records = as_records(events)
    terms = vote_terms(records)
    chosen = term if term is not None else (terms[-1] if terms else None)
    graph = nx.DiGraph(term=chosen, terms=terms, rounds={}, later_requests=0)
    for node in node_ids(records):
        graph.add_node(node, role=None, candidate=False, grants=0, elected=False)
    for e in of_kind(records, "vote_request", "vote_response"):
        if e.get("term") == chosen:
            _add_vote(graph, e)
    _number_rounds(graph, [e for e in of_kind(records, "vote_request", "vote_response") if e.get("term") == chosen])
    for _src, _dst, data in graph.edges(data=True):
        data["result"] = data["results"][-1] if data["results"] else NO_ANSWER
        data["granted"] = "ACCEPT" in data["results"]
    for candidate, _voter, data in graph.edges(data=True):
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
            graph.graph.setdefault("elected_at", e["t"])
    elected_at = graph.graph.get("elected_at")
    graph.graph["later_requests"] = 0 if elected_at is None else sum(
        1 for e in votes if e["kind"] == "vote_request" and e["t"] > elected_at)
    for node, attrs in graph.nodes(data=True):
        down = node in states and not states[node].alive
        attrs["role"] = ("LEADER" if attrs["elected"] else "CANDIDATE" if attrs["candidate"]
                         else DOWN if down else VOTER)


def _number_rounds(graph: nx.DiGraph, votes: Sequence[Event]) -> None:
    """Each request's round (its candidate's n-th request instant in the term) and the answer it got
    (the first response after it and before the next request on that edge)."""
    instants: dict[str, list[int]] = {}
    for e in votes:
        if e["kind"] == "vote_request":
            seen = instants.setdefault(str(e.get("candidate")), [])
            if e["t"] not in seen:
                seen.append(e["t"])
    for node, attrs in graph.nodes(data=True):
        attrs["rounds"] = len(instants.get(node, ()))
    graph.graph["rounds"] = {n: len(ts) for n, ts in sorted(instants.items(), key=lambda kv: natural_key(kv[0]))}
    for (u, v), data in graph.edges.items():
        answers: list[list] = []
        for e in votes:
            if (str(e.get("candidate")), str(e.get("voter"))) != (u, v):
                continue
            if e["kind"] == "vote_request":
                answers.append([instants[u].index(e["t"]) + 1, NO_ANSWER])
            elif answers and answers[-1][1] == NO_ANSWER:
                answers[-1][1] = str(e.get("result"))
            else:  # an answer with no request seen (the trace starts mid-term)
                answers.append([0, str(e.get("result"))])
        data["answers"] = [tuple(a) for a in answers]


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
    """Draw :func:`vote_graph`: arrows candidate → voter, green granted, red rejected, grey unanswered,
    each labelled with every answer of the term in order (``r1 NOT_READY, then r2 ACCEPT`` where
    the candidate ran several rounds); nodes coloured by their role in that term, the elected leader
    ringed. Labels are placed so that none overlaps another, a node or a node's note."""
    graph = vote_graph(events, term)
    if graph.graph["term"] is None:
        return empty_figure(_("Votes"), ["vote_request", "vote_response"])
    pos = circular_layout(list(graph.nodes))
    fig = go.Figure()
    arrows = []
    for (u, v), data in sorted(graph.edges.items(), key=lambda kv: (natural_key(kv[0][0]), natural_key(kv[0][1]))):
        if u != v:
            start, tip = _add_vote_arrow(fig, pos, u, v, data, reverse=graph.has_edge(v, u))
            arrows.append((u, v, data, start, tip, vote_label(data, graph.nodes[u]["rounds"] > 1)))
    placed = _node_boxes(graph, pos)
    for u, v, data, start, tip, text in sorted(arrows, key=lambda a: -_area(text_box(0, 0, a[5]))):
        _add_vote_label(fig, u, v, _edge_color(data), text, _label_spots(start, tip), placed)
    _add_vote_nodes(fig, graph, pos)
    for name, color in ((N_("granted"), GRANTED_COLOR), (N_("rejected"), REJECTED_COLOR), (NO_ANSWER_WORDS, NO_ANSWER_COLOR)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=_("{name} (arrow labelled)").format(name=_(name)),
                                 line=dict(color=color, width=3)))
    several = {n: r for n, r in graph.graph["rounds"].items() if r > 1}
    if several:
        runs = _(", ").join(_("{node} ran {n}").format(node=n, n=r) for n, r in several.items())
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(opacity=0), name=_(
            "rN: the candidate's N-th vote round in this term ({runs})").format(runs=runs)))
    _square_axes(fig)
    return base_layout(fig, _vote_title(graph), VOTE_FIGURE_HEIGHT, legend="bottom")


def _short_result(result: str) -> str:
    """``ACCEPT``, ``ALREADY_VOTED``, ``NOT_READY`` (REJECT_TERM_NOT_READY), ``no answer``."""
    if result in (NO_ANSWER, "UNKNOWN"):
        return _(NO_ANSWER_WORDS)
    return result.removeprefix("REJECT_").removeprefix("TERM_")


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


# label geometry: the figure is VOTE_FIGURE_HEIGHT px tall with 130 px of margins for a y range of 2.75
# (x follows at the same scale), so one data unit is ~ VOTE_PX_PER_UNIT px however wide the cell
VOTE_FIGURE_HEIGHT = 600
VOTE_PX_PER_UNIT = (VOTE_FIGURE_HEIGHT - 130) / 2.75
LABEL_FONT_PX = 10
LABEL_CHAR_PX = 0.62 * LABEL_FONT_PX
LABEL_LINE_PX = 1.35 * LABEL_FONT_PX
NODE_RADIUS_PX = 23


def note_yshift_px(note: str) -> float:
    """How far below its node's centre a node's note is centred: just under the disc (ring included)."""
    lines = note.count("<br>") + 1
    return -(NODE_RADIUS_PX + 4 + (lines * LABEL_LINE_PX + 6) / 2)
Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in data units


def text_box(x: float, y: float, text: str, *, yshift_px: float = 0.0, pad_px: float = 3.0) -> Box:
    """The box a centred text annotation covers, in data units (lines split at ``<br>``)."""
    lines = text.split("<br>")
    w = (max(text_px(line, LABEL_FONT_PX, LABEL_CHAR_PX) for line in lines) + 2 * pad_px) / VOTE_PX_PER_UNIT
    h = (len(lines) * LABEL_LINE_PX + 2 * pad_px) / VOTE_PX_PER_UNIT
    cy = y + yshift_px / VOTE_PX_PER_UNIT
    return x - w / 2, cy - h / 2, x + w / 2, cy + h / 2


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _node_boxes(graph: nx.DiGraph, pos: dict[str, Position]) -> list[Box]:
    """What labels must keep off: each node's disc and the note written under it."""
    r = NODE_RADIUS_PX / VOTE_PX_PER_UNIT
    boxes = []
    for n in graph.nodes:
        x, y = pos[n]
        boxes += [(x - r, y - r, x + r, y + r), text_box(x, y, note := _node_note(n, graph), yshift_px=note_yshift_px(note))]
    return boxes


def vote_label(data: dict, several_rounds: bool) -> str:
    """Every answer on the edge in order: ``ACCEPT``; ``NOT_READY,<br>then ACCEPT``; with round
    numbers (``r1 ...``) when the candidate ran more than one round in the term."""
    answers = data.get("answers") or [(0, data["result"])]
    parts = [(f"r{r} " if several_rounds and r else "") + _short_result(result) for r, result in answers]
    return _(",<br>then ").join(parts)


def _label_spots(start: Position, tip: Position) -> list[Position]:
    """Where an edge's label may go, best first: on the edge 40 % of the way from the candidate, then
    along it and off to its sides, nearest first."""
    dx, dy = tip[0] - start[0], tip[1] - start[1]
    length = math.hypot(dx, dy) or 1.0
    nx_, ny_ = -dy / length, dx / length
    grid = [(frac / 20, side / 20) for frac in range(3, 18) for side in range(-14, 15)]
    grid.sort(key=lambda fs: (abs(fs[0] - 0.4) * length) ** 2 + fs[1] ** 2)
    return [(start[0] + f * dx + s * nx_, start[1] + f * dy + s * ny_) for f, s in grid]


def _area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _add_vote_arrow(fig: go.Figure, pos: dict[str, Position], u: str, v: str, data: dict,
                    reverse: bool) -> tuple[Position, Position]:
    start, tip = _shortened(pos[u], pos[v], reverse)
    fig.add_annotation(x=tip[0], y=tip[1], ax=start[0], ay=start[1], xref="x", yref="y", axref="x", ayref="y",
                       showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=2.5, arrowcolor=_edge_color(data),
                       text="")
    return start, tip


def _add_vote_label(fig: go.Figure, u: str, v: str, color: str, text: str, spots: Sequence[Position],
                    placed: list[Box]) -> None:
    """The label at the first spot where it overlaps nothing placed yet (largest labels go first)."""
    at = next((p for p in spots if not any(boxes_overlap(text_box(*p, text), b) for b in placed)), None)
    if at is None:  # nowhere free: the spot that overlaps the fewest
        at = min(spots, key=lambda p: sum(boxes_overlap(text_box(*p, text), b) for b in placed))
    placed.append(text_box(*at, text))
    fig.add_annotation(x=at[0], y=at[1], xref="x", yref="y", showarrow=False, text=text, name=f"vote {u}->{v}",
                       font=dict(size=LABEL_FONT_PX, color=LABEL_TEXT.get(color, "#222")), bgcolor=LABEL_BOX)


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
        customdata=[[a["role"] or "-", a["grants"], _("yes") if a["candidate"] else _("no")] for a in attrs],
        hovertemplate=_("role {role}<br>candidate: {candidate}<br>votes received {votes}").format(
            role="%{customdata[0]}", candidate="%{customdata[2]}", votes="%{customdata[1]}") + "<extra></extra>",
    ))
    for n in nodes:
        note = _node_note(n, graph)
        fig.add_annotation(x=pos[n][0], y=pos[n][1], yshift=note_yshift_px(note), showarrow=False, text=note,
                           font=dict(size=10, color="#333"), bgcolor="rgba(255,255,255,0.8)")


def _vote_role_color(role: str | None) -> str:
    return role_color("FOLLOWER") if role == VOTER else role_color(role) if role else "#9e9e9e"


def _node_note(node: str, graph: nx.DiGraph) -> str:
    attrs = graph.nodes[node]
    role = (attrs["role"] or "").lower()
    if not attrs["candidate"]:
        return role
    own = graph.edges[node, node] if graph.has_edge(node, node) else None
    self_vote = "<br>" + _("self-vote {result}").format(result=_short_result(own["result"])) if own else ""
    grants = attrs["grants"]
    return ngettext("{role}: {n} vote", "{role}: {n} votes", grants).format(role=role, n=grants) + self_vote


def _vote_title(graph: nx.DiGraph) -> str:
    term, members = graph.graph["term"], graph.number_of_nodes()
    rounds = graph.graph["rounds"]
    if any(r > 1 for r in rounds.values()) or graph.graph.get("later_requests"):
        said = ", ".join(f"{n} {r}" for n, r in rounds.items())
        if graph.graph.get("later_requests"):
            term = _("{term} (several rounds, some after the election: {said})").format(term=term, said=said)
        else:
            term = _("{term} (several rounds: {said})").format(term=term, said=said)
    elected = [n for n, a in graph.nodes(data=True) if a["elected"]]
    if elected:
        return _("Votes in term {term}: {node} elected with {grants} of {members}").format(
            term=term, node=elected[0], grants=graph.nodes[elected[0]]["grants"], members=members)
    candidates = sorted((n for n, a in graph.nodes(data=True) if a["candidate"]), key=natural_key)
    best = _(", ").join(_("{node} got {grants}").format(node=n, grants=graph.nodes[n]["grants"]) for n in candidates)
    return _("Votes in term {term}: nobody elected ({best} of {members})").format(term=term, best=best, members=members)


def _square_axes(fig: go.Figure) -> None:
    fig.update_xaxes(visible=False, range=[-1.5, 1.5], constrain="domain")
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
        return empty_figure(_("Cluster"), ["role", "fault", "msg_send"])
    pos = circular_layout(list(graph.nodes))
    classes = {LINK: ("#9e9e9e", "solid", 2), CUT_BY_PARTITION: (REJECTED_COLOR, "dash", 3),
               TO_A_DOWN_NODE: ("#d0d0d0", "dot", 2)}
    fig = go.Figure()
    for name, (color, dash, width) in classes.items():
        xs, ys = _edge_lines(graph, pos, name)
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=_(name), hoverinfo="skip",
                                     line=dict(color=color, dash=dash, width=width)))
    _add_cluster_nodes(fig, graph, pos)
    _square_axes(fig)
    groups = graph.graph["groups"]
    where = _("partition {groups}").format(groups=" | ".join(",".join(g) for g in groups)) if groups \
        else _("network whole")
    return base_layout(fig, _("Cluster at t={t} ms: {where}").format(t=graph.graph["at_ms"], where=where), 440,
                       legend="bottom")


def _edge_class(data: dict) -> str:
    if data["dead"]:
        return TO_A_DOWN_NODE
    return CUT_BY_PARTITION if data["cut"] else LINK


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
        return f"<b>{node}</b><br>" + _("down")
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
        hovertemplate=_("{state}, term {term}, leader {leader}").format(
            state="%{customdata[0]}", term="%{customdata[1]}", leader="%{customdata[2]}") + "<extra></extra>",
    ))
