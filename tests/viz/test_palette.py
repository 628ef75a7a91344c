"""Every learner can read the figures: the palette stays apart under simulated colour-vision deficiencies
(Machado, Oliveira & Fernandes 2009, severity 1.0; CIE76 in CIELAB), a second cue tells apart what colour
does, and no figure forces a light template."""

from __future__ import annotations

import itertools

import pytest

from rocketlab.viz import put_latency, role_timeline, votes_per_term
from rocketlab.viz.style import GRANTED_COLOR, NO_ANSWER_COLOR, REJECTED_COLOR, ROLE_COLORS, base_layout
from tests.viz.sample_traces import dledger_failover

MACHADO = {  # linear RGB -> what the viewer with the deficiency sees
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def _linear(hex_color: str) -> list[float]:
    out = []
    for i in (1, 3, 5):
        v = int(hex_color[i:i + 2], 16) / 255
        out.append(v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4)
    return out


def _lab(rgb: list[float]) -> tuple[float, float, float]:
    r, g, b = (min(1.0, max(0.0, v)) for v in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str, deficiency: str | None = None) -> float:
    ra, rb = _linear(a), _linear(b)
    if deficiency:
        m = MACHADO[deficiency]
        ra, rb = ([sum(m[i][j] * c[j] for j in range(3)) for i in range(3)] for c in (ra, rb))
    return sum((p - q) ** 2 for p, q in zip(_lab(ra), _lab(rb), strict=True)) ** 0.5


@pytest.mark.parametrize("deficiency", [None, *MACHADO])
def test_the_pairs_the_issue_names_stay_apart(deficiency):
    """GRANTED vs REJECTED (also PUT_OK vs failures) was dE 7.3 under deuteranopia; LEADER vs MASTER 14 under
    protanopia. Now each pair is at least 20 apart for every deficiency."""
    for a, b in [(GRANTED_COLOR, REJECTED_COLOR), (ROLE_COLORS["LEADER"], ROLE_COLORS["MASTER"])]:
        assert delta_e(a, b, deficiency) >= 20, (a, b, deficiency, round(delta_e(a, b, deficiency), 1))


def test_the_roles_of_one_system_stay_apart_for_every_eye():
    for deficiency in (None, *MACHADO):
        for roles in (("LEADER", "FOLLOWER", "CANDIDATE"), ("MASTER", "SLAVE")):
            for a, b in itertools.combinations(roles, 2):
                d = delta_e(ROLE_COLORS[a], ROLE_COLORS[b], deficiency)
                assert d >= 10, (a, b, deficiency, round(d, 1))


def test_figures_force_no_light_template_and_draw_on_the_page():
    import plotly.graph_objects as go

    fig = base_layout(go.Figure(), "t", 300)
    assert fig.layout.template.layout.paper_bgcolor is None  # the "none" template: no white background
    assert fig.layout.paper_bgcolor == "rgba(0,0,0,0)" and fig.layout.plot_bgcolor == "rgba(0,0,0,0)"


def test_a_second_cue_beside_the_colour():
    events = dledger_failover()
    roles = {t.name: t.marker.pattern.shape for t in role_timeline(events).data if t.type == "bar"}
    leader = next(v for k, v in roles.items() if k == "LEADER")
    follower = next(v for k, v in roles.items() if k == "FOLLOWER")
    assert leader != follower, roles
    shapes = {t.name: t.marker.pattern.shape or "" for t in votes_per_term(events).data if t.type == "bar"}
    assert any(name.startswith("rejected") for name in shapes), shapes
    for name, shape in shapes.items():
        assert shape == ("/" if name.startswith("rejected") else "" if name.startswith("granted") else shape), shapes
    puts = [dict(t=i * 10, node="n0", kind="put", topic="T", queue_id=0, queue_offset=i, phy_offset=i * 100,
                 size=100, status="PUT_OK" if i % 2 else "FLUSH_SLAVE_TIMEOUT", latency_ms=5.0 + i) for i in range(8)]
    symbols = {t.name.split(" ")[0]: t.marker.symbol for t in put_latency(puts).data if t.type == "scatter"}
    assert symbols["PUT_OK"] != symbols["FLUSH_SLAVE_TIMEOUT"], symbols


def _luminance(rgb: tuple[float, float, float]) -> float:
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _rgb(color: str) -> tuple[float, float, float]:
    named = {"white": "#ffffff", "black": "#000000"}
    color = named.get(color, color)
    if len(color) == 4:
        color = "#" + "".join(c * 2 for c in color[1:])
    return tuple(int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_role_bars_are_solid_with_their_pattern_over_and_labels_that_read_on_both():
    """The patterned roles (LEADER, CANDIDATE, MASTER, SLAVE) keep their solid colour under the stripes
    (plotly's default ``replace`` drew the stripes alone: near-black bars under black labels, 1.1:1, on
    JupyterLab Dark); the stripes stand out from the fill (3:1) and each term label reads at 4.5:1 on the
    fill, which a halo of the fill keeps around its letters (the stripes stop short of them)."""
    fig = role_timeline(dledger_failover())
    bars = [t for t in fig.data if t.type == "bar" and t.name in ("LEADER", "CANDIDATE", "FOLLOWER")]
    assert {t.name for t in bars} == {"LEADER", "CANDIDATE", "FOLLOWER"}
    for trace in bars:
        pattern = trace.marker.pattern
        fill, text = _rgb(trace.marker.color), _rgb(trace.textfont.color)
        assert contrast(text, fill) >= 4.5, trace.name
        if pattern.shape:
            assert pattern.fillmode == "overlay", trace.name
            a, fg = pattern.fgopacity, _rgb(pattern.fgcolor)
            stripe = tuple(a * f + (1 - a) * c for f, c in zip(fg, fill, strict=True))
            assert contrast(stripe, fill) >= 3, trace.name
            assert trace.textfont.shadow and trace.marker.color in trace.textfont.shadow, trace.name
    from rocketlab.viz.figures.roles import ROLE_PATTERNS, role_pattern

    for role in ("MASTER", "SLAVE"):
        assert role_pattern(role)["fillmode"] == "overlay" and ROLE_PATTERNS[role]


def test_vote_labels_read_in_their_white_box_on_any_page():
    """The vote graph's answer labels were the arrow's colour on a translucent box: 1.5-3:1 on JupyterLab
    Dark. Now their words take a darker shade of that colour in an opaque white box: 4.5:1 or more."""
    from rocketlab.scenarios.dledger_schedules import figure8_cluster, run_figure8
    from rocketlab.viz import vote_graph_figure
    from rocketlab.viz.style import LABEL_BOX, LABEL_TEXT

    assert set(LABEL_TEXT) == {GRANTED_COLOR, REJECTED_COLOR, NO_ANSWER_COLOR}
    c = figure8_cluster(1)
    run_figure8(c)
    labels = [a for term in (2, 3, 4) for a in vote_graph_figure(c.events, term).layout.annotations
              if (a.name or "").startswith("vote ")]
    assert labels
    for a in labels:
        assert a.bgcolor == LABEL_BOX and contrast(_rgb(a.font.color), _rgb(LABEL_BOX)) >= 4.5, a.text


def test_lab03s_wait_histogram_has_the_kits_colours_and_a_second_cue():
    """Lab 03's histogram of re-vote waits was in plotly's default colours with nothing else to tell the
    rules apart: now each rule has a colour of the palette and a pattern of its own."""
    import pandas as pd

    from rocketlab.labs_support.dledger_election import waits_histogram
    from rocketlab.viz.style import PALETTE

    waits = pd.DataFrame({"rule": [2, 2, 3, 7, 7], "result": ["WAIT_TO_REVOTE"] * 3 + ["WAIT_TO_VOTE_NEXT"] * 2,
                          "wait_ms": [310, 420, 500, 650, 900]})
    bars = waits_histogram(waits).data
    assert len(bars) == 3
    assert all(b.marker.color in PALETTE for b in bars) and len({b.marker.color for b in bars}) == 3
    assert len({b.marker.pattern.shape for b in bars}) == 3 and all(b.marker.pattern.fillmode == "overlay" for b in bars)


def test_every_patterned_bar_keeps_its_colour_under_its_pattern():
    """No figure draws a pattern alone (plotly's ``replace``): every patterned bar is its colour with light
    stripes over it, so on a dark page it keeps its colour."""
    from rocketlab.scenarios.dledger_schedules import figure8_cluster, run_figure8

    c = figure8_cluster(1)
    run_figure8(c)
    patterned = [t for fig in (role_timeline(c.events), votes_per_term(c.events)) for t in fig.data
                 if t.type in ("bar", "histogram") and t.marker.pattern and t.marker.pattern.shape]
    assert len(patterned) >= 3
    assert all(t.marker.pattern.fillmode == "overlay" for t in patterned), [t.name for t in patterned]
