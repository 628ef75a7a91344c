"""Colours and small plotly helpers shared by every figure: one look across figures, report and widget.

The palette is Okabe & Ito's (2008), safe for the common colour-vision deficiencies; where two states
differ by colour a second cue tells them apart too (a label, a dash, a marker). Figures force no light
template: transparent backgrounds and mid-grey text and grid read on JupyterLab's light and dark themes
alike (the kernel cannot know which the page shows)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from rocketlab.i18n import N_, _
from rocketlab.viz.timeline import DOWN, UP, Event, Span, fault_line

OKABE_ITO: dict[str, str] = {
    "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "black": "#000000",
}
ROLE_COLORS: dict[str, str] = {
    "LEADER": OKABE_ITO["vermillion"], "FOLLOWER": OKABE_ITO["sky_blue"], "CANDIDATE": OKABE_ITO["orange"],
    "MASTER": OKABE_ITO["reddish_purple"], "SLAVE": OKABE_ITO["bluish_green"], UP: "#b8dcb0", DOWN: "#8c8c8c",
}
OTHER_ROLE_COLOR = OKABE_ITO["yellow"]
GRANTED_COLOR = OKABE_ITO["bluish_green"]
REJECTED_COLOR = OKABE_ITO["vermillion"]
NO_ANSWER_COLOR = "#9e9e9e"
LABEL_BOX = "#ffffff"  # a label on a figure sits in a white box: the same on a light and a dark page
LABEL_TEXT: dict[str, str] = {  # the darker shade of an answer's colour its words take in a label box (>= 4.5:1)
    GRANTED_COLOR: "#006b4f", REJECTED_COLOR: "#a34400", NO_ANSWER_COLOR: "#595959",
}
GRANTED_DASH, REJECTED_DASH, NO_ANSWER_DASH = "solid", "dash", "dot"  # the second cue beside the colour
PARTITION_FILL = "rgba(213, 94, 0, 0.10)"
PALETTE = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["bluish_green"], OKABE_ITO["vermillion"],
           OKABE_ITO["reddish_purple"], OKABE_ITO["sky_blue"], OKABE_ITO["yellow"], "#7a7a7a")
PAGE_TEXT = "#7a7a7a"  # about 4.3:1 on white and on JupyterLab Dark's #111: readable on either theme
GRID = "rgba(128, 128, 128, 0.3)"
CJK_FONTS = ("Noto Sans CJK SC", "WenQuanYi Micro Hei", "PingFang SC", "Microsoft YaHei")
"""Fonts with Simplified Chinese, after the Latin ones: Debian's fonts-noto-cjk and fonts-wqy-microhei, macOS's
PingFang SC, Windows' Microsoft YaHei. A Chinese label takes the first one installed, never a box (the README
says which to install)."""
FONT_FAMILY = ", ".join(("Inter", "Segoe UI", "Helvetica", "Arial", *(f'"{f}"' for f in CJK_FONTS), "sans-serif"))
"""The font stack of every figure, and the cluster viewer's (viewer.css names the same: a test compares)."""
FONT = dict(family=FONT_FAMILY, size=12, color=PAGE_TEXT)
TIME_AXIS_TITLE = N_("t (ms)")  # translated where shown: _(TIME_AXIS_TITLE)
NOTE_TEXT = "#555555"  # notes beside a plot
FAULT_MARK = "#444444"  # the role timeline's fault markers and their labels
BAR_EDGE = dict(width=1, color="#767676")  # a bar's outline: 4.5:1 on white, 4.1:1 on #111, for pale fills
VIOLATION_COLOR = "#b00020"  # 7:1 on white; JupyterLab Dark shows its own lighter red instead (THEMED)
HOVER_LABEL = dict(bgcolor=LABEL_BOX, bordercolor="#595959", font=dict(color="#1a1a1a"))
"""Plotly's hover labels: words 17:1 in a white box with a 7:1 outline, the box 18:1 on JupyterLab Dark's page.
Plotly's own (the trace's colour, its text black or white by a brightness rule) gave white on vermillion (3.9:1),
and its dark text #444 took the theme's light text colour from THEMED (FAULT_MARK)."""
TOOLBAR = dict(bgcolor="rgba(0,0,0,0)", color="#808080", activecolor=OKABE_ITO["blue"])
"""Plotly's toolbar (the modebar), on the page itself: grey icons 3.9:1 on white and 4.8:1 on JupyterLab Dark's
#111, blue under the pointer (5.2:1 and 3.6:1). Plotly's default, rgba(68,68,68,0.3) on half-white, is 1.6:1."""

# The colours a figure carries for text and small marks, and what the page's theme shows instead: plotly
# writes each colour into an element's inline style, chosen in the kernel, which cannot know the theme;
# THEME_CSS (on the page once per kernel, see export_friendly_figures) repaints them from JupyterLab's
# theme variables: (colour in the figure, in a light theme or None, in JupyterLab Dark or None, elements).
THEME_TEXT = "var(--jp-content-font-color1, #222)"
THEMED: tuple[tuple[str, str | None, str | None, tuple[str, ...]], ...] = (
    (PAGE_TEXT, THEME_TEXT, THEME_TEXT, ("text", "path")),  # 4.3:1 on white, 4.4:1 on #111 as it is
    (NOTE_TEXT, THEME_TEXT, THEME_TEXT, ("text", "path")),
    (FAULT_MARK, THEME_TEXT, THEME_TEXT, ("text", "path")),
    (VIOLATION_COLOR, None, "var(--jp-error-color2, #e57373)", ("text", "path")),  # 2.6:1 on #111 as it is
    (REJECTED_COLOR, LABEL_TEXT[REJECTED_COLOR], None, ("text",)),  # partition labels: 3.9:1 on white as they are
)
LIGHT_LINES: dict[str, str] = {  # a pale series' line in a light theme: its darker shade, 3:1 or more on white
    OKABE_ITO["orange"]: "#a66f00", OKABE_ITO["sky_blue"]: "#2f84b8", OKABE_ITO["yellow"]: "#8a8000",
}
_DARK = 'body[data-jp-theme-light="false"] '
_LIGHT = 'body:not([data-jp-theme-light="false"]) '


def _rgb(color: str) -> str:
    return "rgb({}, {}, {})".format(*(int(color[i:i + 2], 16) for i in (1, 3, 5)))


def theme_css() -> str:
    """The rules that give :data:`THEMED` colours the theme's (texts and marks of every plotly figure)."""
    rules = []
    for color, light, dark, tags in THEMED:
        picks = [f'.js-plotly-plot {tag}[style*="fill: {_rgb(color)}"]' for tag in tags]
        scoped = [("", light)] if light == dark else [(_LIGHT, light), (_DARK, dark)]
        for scope, fill in scoped:
            if fill:
                rules.append(", ".join(scope + p for p in picks) + f" {{ fill: {fill} !important; }}")
    for color, shade in LIGHT_LINES.items():  # lines (and their legend swatches) in a light theme
        line = f'.js-plotly-plot path.js-line[style*="stroke: {_rgb(color)}"]'
        rules.append(_LIGHT + line + f" {{ stroke: {shade} !important; }}")
        points = [f'.js-plotly-plot .{where}[style*="fill: {_rgb(color)}"]' for where in ("scatterlayer .points path",
                                                                                             "legendpoints path.scatterpts")]
        rules.append(", ".join(_LIGHT + p for p in points) + f" {{ fill: {shade} !important; }}")
    return "\n".join(rules)


EXPORT_RENDERER = "plotly_mimetype+notebook"


def export_friendly_figures() -> bool:
    """In a Jupyter kernel, show figures with plotly's mimetype (interactive in JupyterLab) *and* HTML
    (what ``jupyter nbconvert --to html`` and repository previews show, offline: the ``notebook``
    renderer embeds plotly.js once, in the output of the cell that first loads the kit's figures), and
    put :func:`theme_css` on the page there too, so the figures' text follows the theme.
    Outside a kernel nothing changes. True when the renderer was set."""
    try:
        from IPython import get_ipython  # lazy: the notebook kernel's own, absent outside Jupyter's installs
    except ImportError:  # pragma: no cover - IPython comes with every Jupyter install
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    if pio.renderers.default != EXPORT_RENDERER:
        pio.renderers.default = EXPORT_RENDERER
        from IPython.display import display  # lazy: as above

        display({"text/html": f"<style>{theme_css()}</style>"}, raw=True)  # once per kernel: THEMED colours
    return True


export_friendly_figures()


def role_color(role: str | None) -> str:
    return ROLE_COLORS.get(str(role), OTHER_ROLE_COLOR)


def series_colors(names: Sequence[str]) -> dict[str, str]:
    """A stable colour per name, in the given order."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


SERIES_PATTERNS = ("", "/", ".", "x", "\\", "+", "-", "|")


def overlay_pattern(shape: str, fill: str) -> dict[str, Any]:
    """A bar's pattern, the cue beside its colour: stripes over the solid ``fill`` (plotly's default,
    ``replace``, draws the stripes alone: near-black bars on a dark page), black or white, whichever stands
    out from the fill (3:1 or more at this opacity, measured by tests/viz/test_lab_figures_theme_browser)."""
    return dict(shape=shape, fillmode="overlay", fgcolor=text_color_on(fill), fgopacity=0.7, solidity=0.15, size=10)


def label_halo(fill: str) -> str:
    """A CSS text shadow of the bar's own ``fill`` around a label inside a patterned bar: the words sit on
    their fill (4.5:1 there), the stripes (3:1 on the fill) stop short of the letters."""
    rim = [f"{x}px {y}px 0 {fill}" for x in (-2, 0, 2) for y in (-2, 0, 2) if x or y]  # an outline of the fill
    return ", ".join([*rim, f"0 0 4px {fill}"])


def series_pattern(i: int) -> dict[str, Any]:
    """The ``i``-th series' pattern (:func:`overlay_pattern`) over its colour (:func:`series_colors`)."""
    return overlay_pattern(SERIES_PATTERNS[i % len(SERIES_PATTERNS)], PALETTE[i % len(PALETTE)])


def base_layout(fig: go.Figure, title: str, height: int, legend: str = "right") -> go.Figure:
    """Title, size, font and legend placement every figure shares (``legend``: right, top or bottom)."""
    if legend == "top":
        place = dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0)
    elif legend == "bottom":
        place = dict(orientation="h", yanchor="top", y=-0.02, xanchor="center", x=0.5)
    else:
        place = dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.01)
    fig.update_layout(
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=15)),
        height=height, template="none", font=FONT, margin=dict(l=70, r=30, t=80, b=50),
        paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
        legend=dict(traceorder="normal", bgcolor="rgba(0,0,0,0)", **place), hoverlabel=HOVER_LABEL, modebar=TOOLBAR,
    )
    fig.update_xaxes(gridcolor=GRID, zerolinecolor=GRID, linecolor=GRID)
    fig.update_yaxes(gridcolor=GRID, zerolinecolor=GRID, linecolor=GRID)
    return fig


def note_figure(title: str, text: str) -> go.Figure:
    """A figure holding only a centred note (no axes)."""
    fig = go.Figure()
    fig.add_annotation(text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=15, color=PAGE_TEXT))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return base_layout(fig, title, 230)


def empty_figure(title: str, kinds: Sequence[str]) -> go.Figure:
    """A figure that says which event kinds the run lacks, instead of raising or drawing blank axes."""
    names = _(", ").join(kinds[:-1]) + (_(" or ") if len(kinds) > 1 else "") + kinds[-1]
    return note_figure(title, _("no {kinds} events in this run").format(kinds=names))


def is_empty_figure(fig: go.Figure) -> bool:
    """True for a figure made by :func:`note_figure` or :func:`empty_figure`: a note, no traces."""
    return not fig.data and len(fig.layout.annotations) > 0


def shade_partitions(fig: go.Figure, spans: Sequence[Span], label: bool = True, **where: Any) -> None:
    """A light red band over every partition, labelled with its groups (``where``: row/col of subplots)."""
    for span in spans:
        text = dict(annotation_text=_("partition {groups}").format(groups=span.label), annotation_position="top left",
                    annotation_font=dict(size=10, color=REJECTED_COLOR)) if label else {}
        fig.add_vrect(x0=span.start_ms, x1=span.end_ms, fillcolor=PARTITION_FILL, line_width=0, layer="below",
                      **text, **where)


def nice_bin_ms(span_ms: int, target_bins: int = 50) -> int:
    """A round bin width (1, 2, 5 × 10^k ms) giving about ``target_bins`` bins over ``span_ms``."""
    raw = max(span_ms / target_bins, 1)
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= raw:
                return step * scale
        scale *= 10


def text_px(text: str, font_px: float, char_px: float) -> float:
    """How wide ``text`` draws: a Chinese (East Asian wide) character takes a full em (``font_px``), any other
    ``char_px`` (a generous average Latin glyph)."""
    return sum(font_px if unicodedata.east_asian_width(c) in "WF" else char_px for c in text)


LABEL_PLOT_PX = 600  # labels are laid out for a plot area at least this wide (plotly's default figure: 700 px)
LABEL_CHAR_PX = 6.2  # a generous average glyph width of 10 px text: lanes err on the wide side


def mark_faults(fig: go.Figure, faults: Sequence[Event], limit: int = 40, **where: Any) -> int:
    """A dotted line at each crash / restart / pause / resume / drop, labelled at the top of the first
    panel (partitions are shaded instead; see :func:`shade_partitions`). ``where``: row/col of subplots.
    Labels go in lanes, each below the last, so that no two overlap: a label takes the first lane whose
    last label ends before it starts (widths estimated over the x axis's range, or the faults' own).
    Returns how many lanes the labels take (a figure can make room for them above its data)."""
    by_time: dict[int, list[str]] = {}
    for e in faults:
        if e.get("action") not in ("partition", "heal"):
            by_time.setdefault(e["t"], []).append(fault_line(e))
    times = sorted(by_time)[:limit]
    if not times:
        return 0
    shown = fig.layout.xaxis.range
    lo, hi = (shown[0], shown[1]) if shown else (times[0], times[-1])
    px_per_ms = LABEL_PLOT_PX / max(1.0, float(hi) - float(lo))
    lane_ends: list[float] = []
    for t in times:
        text = "; ".join(by_time[t])
        x0 = t * px_per_ms
        lane = next((k for k, end in enumerate(lane_ends) if x0 >= end), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(0.0)
        lane_ends[lane] = x0 + text_px(text, 10, LABEL_CHAR_PX) + 8
        fig.add_vline(x=t, line=dict(color=PAGE_TEXT, width=1, dash="dot"), **where)
        fig.add_annotation(x=t, y=1.0, xref="x", yref="y domain", yanchor="top", xanchor="left", xshift=2,
                           yshift=-14 * (1 + lane), showarrow=False, text=text,
                           font=dict(size=10, color=PAGE_TEXT), bgcolor="rgba(128,128,128,0.12)")
    return len(lane_ends)


def whole_number_ticks(fig: go.Figure, highest: int, **where: Any) -> None:
    """Counts are whole: tick every 1 while bars are short (plotly would show 0.5 steps)."""
    if highest <= 8:
        fig.update_yaxes(dtick=1, **where)


def text_color_on(fill: str) -> str:
    """Black text on the Okabe-Ito colours (each above 4.5:1 with black), white only on blue."""
    return "white" if fill.lower() in (OKABE_ITO["blue"].lower(), "#7a7a7a", "#000000") else "#000"
