"""Votes per term: DLedgerLeaderElector's vote requests, the answers handleVote gave (granted, rejected
by reason, lost) and the candidates' vote-round verdicts (parseVoteResult's ParseResult), per term.

Rocketlab's own figure, read from ``vote_request``, ``vote_response`` and ``vote_round`` events.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.i18n import _
from rocketlab.viz.style import (
    BAR_EDGE,
    GRANTED_COLOR,
    NO_ANSWER_COLOR,
    PAGE_TEXT,
    base_layout,
    empty_figure,
    overlay_pattern,
    whole_number_ticks,
)
from rocketlab.viz.timeline import (
    Event,
    Events,
    as_records,
    of_kind,
)

ROUND_COLORS = {"PASSED": GRANTED_COLOR, "WAIT_TO_REVOTE": "#E69F00", "REVOTE_IMMEDIATELY": "#CC79A7",
                "WAIT_TO_VOTE_NEXT": "#D55E00"}
REJECTION_PALETTE = ("#D55E00", "#E69F00", "#CC79A7", "#0072B2", "#F0E442", "#56B4E9", "#7a7a7a", "#000000")


def votes_per_term(events: Events) -> go.Figure:
    """Vote requests and answers per term (granted = ACCEPT, rejections by reason, lost answers) and,
    below, the candidates' vote-round verdicts (``vote_round`` ParseResult) per term."""
    records = as_records(events)
    requests = of_kind(records, "vote_request")
    responses = of_kind(records, "vote_response")
    rounds = of_kind(records, "vote_round")
    if not (requests or responses or rounds):
        return empty_figure(_("Votes per term"), ["vote_request", "vote_response", "vote_round"])
    panels = [p for p, present in (("votes", requests or responses), ("rounds", rounds)) if present]
    titles = {"votes": _("vote requests (◆) and answers by result"), "rounds": _("vote rounds by verdict")}
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=[titles[p] for p in panels])
    if "votes" in panels:
        _add_answer_bars(fig, responses, row=1)
        _add_request_marks(fig, requests, row=1)
    if "rounds" in panels:
        _add_round_bars(fig, rounds, row=len(panels))
    fig.update_xaxes(dtick=1, tickformat="d")
    fig.update_xaxes(title=_("term"), row=len(panels), col=1)
    fig.update_yaxes(title=_("count"), rangemode="tozero")
    per_term = Counter((e["kind"], e.get("term")) for e in [*requests, *responses, *rounds])
    whole_number_ticks(fig, max(per_term.values()))
    fig.update_layout(barmode="stack", bargap=0.3)
    granted = sum(1 for e in responses if e.get("result") == "ACCEPT")
    title = _("Votes per term: {requests} requests, {granted} granted, {other} rejected or unanswered").format(
        requests=len(requests), granted=granted, other=len(responses) - granted)
    return base_layout(fig, title, 260 + 220 * len(panels))


def _result_label(result: str) -> str:
    if result == "ACCEPT":
        return _("granted (ACCEPT)")
    if result in ("UNKNOWN", "None"):
        return _("no answer (UNKNOWN)")
    return _("rejected: {reason}").format(reason=result.removeprefix("REJECT_"))


def _result_order(result: str) -> tuple[int, str]:
    return (0 if result == "ACCEPT" else 2 if result in ("UNKNOWN", "None") else 1), result


def _add_answer_bars(fig: go.Figure, responses: Sequence[Event], row: int) -> None:
    pairs: dict[tuple[int, str], list[str]] = defaultdict(list)
    for e in responses:
        pairs[(e.get("term"), str(e.get("result")))].append(f"{e.get('candidate')}→{e.get('voter')}")
    results = sorted({r for _, r in pairs}, key=_result_order)
    rejections = [r for r in results if _result_order(r)[0] == 1]
    colors = {"ACCEPT": GRANTED_COLOR,
              **{r: REJECTION_PALETTE[i % len(REJECTION_PALETTE)] for i, r in enumerate(rejections)}}
    for result in results:
        cells = sorted((t, who) for (t, r), who in pairs.items() if r == result and t is not None)
        color = colors.get(result, NO_ANSWER_COLOR)
        fig.add_trace(go.Bar(
            x=[t for t, _ in cells], y=[len(who) for _, who in cells], name=_result_label(result),
            marker=dict(color=color, line=BAR_EDGE, pattern=overlay_pattern("" if result == "ACCEPT" else "/", color)),
            customdata=[", ".join(who) for _, who in cells],
            hovertemplate=_("term {term}: {n} × {result}").format(term="%{x}", n="%{y}", result=result)
            + "<br>%{customdata}<extra></extra>",
        ), row=row, col=1)


def _add_request_marks(fig: go.Figure, requests: Sequence[Event], row: int) -> None:
    per_term: dict[int, list[str]] = defaultdict(list)
    for e in requests:
        if e.get("term") is not None:
            per_term[e["term"]].append(str(e.get("candidate")))
    terms = sorted(per_term)
    fig.add_trace(go.Scatter(
        x=terms, y=[len(per_term[t]) for t in terms], mode="markers", name=_("requests sent"),
        marker=dict(symbol="diamond", size=10, color=PAGE_TEXT),
        customdata=[", ".join(sorted(set(per_term[t]))) for t in terms],
        hovertemplate=_("term {term}: {n} requests<br>candidates {candidates}").format(
            term="%{x}", n="%{y}", candidates="%{customdata}") + "<extra></extra>",
    ), row=row, col=1)


def _add_round_bars(fig: go.Figure, rounds: Sequence[Event], row: int) -> None:
    cells: dict[tuple[int, str], list[str]] = defaultdict(list)
    for e in rounds:
        cells[(e.get("term"), str(e.get("result")))].append(
            _("{node}: {accepted}/{all} accepted, {valid} valid").format(
                node=e.get("node"), accepted=e.get("accepted"), all=e.get("all"), valid=e.get("valid")))
    verdicts = sorted({r for _, r in cells}, key=lambda r: (r != "PASSED", r))
    for verdict in verdicts:
        items = sorted((t, who) for (t, r), who in cells.items() if r == verdict and t is not None)
        fig.add_trace(go.Bar(
            x=[t for t, _ in items], y=[len(who) for _, who in items], name=_("round: {verdict}").format(verdict=verdict),
            marker=dict(color=ROUND_COLORS.get(verdict, NO_ANSWER_COLOR), line=BAR_EDGE,
                        pattern=overlay_pattern("" if verdict == "PASSED" else "x",
                                                ROUND_COLORS.get(verdict, NO_ANSWER_COLOR))),
            customdata=["<br>".join(who) for _, who in items],
            hovertemplate=_("term {term}: {n} × {result}").format(term="%{x}", n="%{y}", result=verdict)
            + "<br>%{customdata}<extra></extra>",
        ), row=row, col=1)


__all__ = ["votes_per_term"]
