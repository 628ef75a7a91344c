"""ClusterWidget: a RaftScope-style control panel for any simulated :class:`~rocketlab.sim.Cluster`.

One row per node (state, and buttons to crash / restart / pause / resume / isolate it), a heal button,
"run 100 ms / 1 s / 10 s" buttons, the last trace lines (``describe()``) and a live figure
(``role_timeline`` or ``message_flow``) redrawn after every action.

Deterministic by construction: every button goes through :func:`apply_action`, which only calls the
Cluster API, and is recorded in ``widget.history``; ``replay(Cluster.xxx(seed=S), history)`` rebuilds
the same trace event for event. Node state is read with ``getattr`` (role, term, leader_id,
ledger_end_index, committed_index), so pingpong nodes work as well as DLedger members and brokers;
"paused" comes from the trace's ``fault`` events.

The live figure is a plotly ``FigureWidget`` when ``anywidget`` is installed (plotly >= 6 needs it),
else an ``ipywidgets.Output`` that shows a static figure.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from rocketlab.errors import RocketlabError
from rocketlab.trace.recorder import describe
from rocketlab.viz.figures import message_flow, role_timeline
from rocketlab.viz.style import role_color
from rocketlab.viz.timeline import DOWN, groups_at, of_kind, states_at

NODE_ACTIONS = ("crash", "restart", "pause", "resume", "isolate")
RUN_ACTIONS = {"run_100ms": ("run 100 ms", 100), "run_1s": ("run 1 s", 1_000), "run_10s": ("run 10 s", 10_000)}
NETWORK_CHATTER = ("msg_send", "msg_recv")
VIEWS: dict[str, Callable[[Sequence[dict[str, Any]], int], go.Figure]] = {
    "roles": lambda events, now_ms: role_timeline(events, until_ms=now_ms),  # reaches "now" even when quiet
    "messages": lambda events, now_ms: message_flow(events),
}

_CLUSTER_CALLS: dict[str, Callable[[Any, str | None], None]] = {
    "crash": lambda c, n: c.crash(n),
    "restart": lambda c, n: c.restart(n),
    "pause": lambda c, n: c.pause(n),
    "resume": lambda c, n: c.resume(n),
    "isolate": lambda c, n: c.partition([n]),
    "heal": lambda c, n: c.heal(),
    "put": lambda c, n: _put_one(c),
    **{name: (lambda c, n, ms=ms: c.run_for(ms)) for name, (_, ms) in RUN_ACTIONS.items()},
}


def _put_one(cluster: Any) -> None:
    """One producer put through the leader or master; its body counts the puts so far (replayable)."""
    sent = sum(1 for e in cluster.events if e["kind"] in ("put", "append"))
    cluster.put(f"message-{sent}".encode(), topic="TopicTest")


def apply_action(cluster: Any, action: str, node: str | None = None) -> None:
    """Carry out one widget action through the Cluster API (the only way the widget changes a cluster)."""
    if action not in _CLUSTER_CALLS:
        raise RocketlabError(f"unknown action {action!r}: expected one of {', '.join(_CLUSTER_CALLS)}")
    if action in NODE_ACTIONS and node not in cluster.node_ids:
        raise RocketlabError(f"{action} needs one of the nodes {cluster.node_ids}, got {node!r}")
    _CLUSTER_CALLS[action](cluster, node if action in NODE_ACTIONS else None)


def replay(cluster: Any, history: Iterable[tuple[str, str | None]]) -> Any:
    """Apply a widget's recorded actions to a fresh cluster (same seed → same trace); returns it."""
    for action, node in history:
        apply_action(cluster, action, node)
    return cluster


def node_summary(cluster: Any, node_id: str, paused: bool = False) -> str:
    """One line of plain text about a node: ``n1 LEADER term 3 leader n1 ledger_end 7 committed 6``."""
    if not cluster.alive(node_id):
        return f"{node_id} down"
    core = cluster.node(node_id)
    parts = [node_id, str(getattr(core, "role", None) or "up")]
    for label, attr in (("term", "term"), ("leader", "leader_id"), ("ledger_end", "ledger_end_index"),
                        ("committed", "committed_index")):
        value = getattr(core, attr, None)
        if value is not None:
            parts.append(f"{label} {value}")
    if paused:
        parts.append("paused")
    return " ".join(parts)


def last_lines(events: Sequence[dict[str, Any]], count: int, hide: Sequence[str] = ()) -> list[str]:
    """The last ``count`` events as ``describe()`` lines, skipping kinds in ``hide``; oldest first."""
    lines: list[str] = []
    for event in reversed(events):
        if event.get("kind") not in hide:
            lines.append(describe(event))
            if len(lines) == count:
                break
    return lines[::-1]


def _figure_view() -> Any:
    try:
        return go.FigureWidget()
    except ImportError:  # plotly >= 6 without anywidget: fall back to a static figure in an Output
        return widgets.Output()


class ClusterWidget:
    """The control panel; ``display()`` it in a notebook, or drive it with ``click()`` in tests."""

    def __init__(self, cluster: Any, *, log_lines: int = 14, show_network: bool = False,
                 view: str | None = None) -> None:
        self.cluster = cluster
        self.log_lines = log_lines
        self.history: list[tuple[str, str | None]] = []
        self.paused: dict[str, bool] = {}
        self.error: Exception | None = None
        self.buttons: dict[tuple[str, str | None], widgets.Button] = {}
        self.state_labels = {n: widgets.HTML() for n in cluster.node_ids}
        self.header, self.status, self.log = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.network_toggle = widgets.Checkbox(value=show_network, description="show msg_send / msg_recv",
                                               indent=False)
        default_view = view or ("roles" if of_kind(cluster.events, "role") else "messages")
        self.view = widgets.ToggleButtons(options=list(VIEWS), value=default_view, description="figure")
        self.network_toggle.observe(lambda _: self.refresh(), names="value")
        self.view.observe(lambda _: self.refresh(), names="value")
        self.figure = _figure_view()
        self.root = widgets.VBox([self.header, *self._node_rows(), self._control_row(), self.status,
                                  self.network_toggle, self.log, self.view, self.figure])
        self.refresh()

    # --- layout --------------------------------------------------------------------------------
    def _button(self, action: str, node: str | None, label: str, style: str = "") -> widgets.Button:
        button = widgets.Button(description=label, button_style=style, layout=widgets.Layout(width="auto"),
                                tooltip=f"{action} {node}" if node else action)
        button.on_click(lambda _b: self._on_click(action, node))
        self.buttons[(action, node)] = button
        return button

    def _node_rows(self) -> list[widgets.HBox]:
        rows = []
        styles = {"crash": "danger", "restart": "success", "pause": "warning", "resume": "info", "isolate": ""}
        for node in self.cluster.node_ids:
            self.state_labels[node].layout = widgets.Layout(width="430px")
            buttons = [self._button(a, node, a, styles[a]) for a in NODE_ACTIONS]
            rows.append(widgets.HBox([self.state_labels[node], *buttons]))
        return rows

    def _control_row(self) -> widgets.HBox:
        runs = [self._button(name, None, label, "primary") for name, (label, _) in RUN_ACTIONS.items()]
        extra = [self._button("heal", None, "heal partition", "")]
        if getattr(self.cluster, "_put_handler", None) is not None:  # systems with a store take puts
            extra.append(self._button("put", None, "put a message", "success"))
        return widgets.HBox([*runs, *extra])

    # --- actions -------------------------------------------------------------------------------
    def _on_click(self, action: str, node: str | None) -> None:
        self.error = None
        self.history.append((action, node))
        try:
            apply_action(self.cluster, action, node)
        except RocketlabError as e:  # InvariantViolation included: show it, keep the panel alive
            self.error = e
        self.refresh()

    def click(self, action: str, node: str | None = None) -> None:
        """Press a button as a learner would (tests, scripted demos); raises what the action raised."""
        button = self.buttons.get((action, node if action in NODE_ACTIONS else None))
        if button is None:
            raise RocketlabError(f"no {action!r} button" + (f" for node {node!r}" if node else ""))
        if button.disabled:
            why = (node_summary(self.cluster, node, self.paused.get(node, False)) if node
                   else "no partition in force")
            raise RocketlabError(f"cannot {action} now: {why}")
        button.click()
        if self.error is not None:
            raise self.error

    # --- drawing -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw everything from the cluster and its trace."""
        events = self.cluster.events
        states = states_at(events, self.cluster.now_ms) if events else {}
        self.paused = {n: n in states and states[n].paused for n in self.cluster.node_ids}
        for node in self.cluster.node_ids:
            self._draw_node(node, self.paused[node])
        self.buttons[("heal", None)].disabled = groups_at(events, self.cluster.now_ms) is None
        self._draw_header(events)
        hide = () if self.network_toggle.value else NETWORK_CHATTER
        lines = last_lines(events, self.log_lines, hide)
        self.log.value = ("<pre style='font-size:11px;line-height:1.35;max-height:260px;overflow:auto;"
                          "background:#f7f7f7;padding:6px'>" + html.escape("\n".join(lines) or "(no events yet)")
                          + "</pre>")
        self._draw_figure(VIEWS[self.view.value](events, self.cluster.now_ms))

    def _draw_node(self, node: str, paused: bool) -> None:
        alive = self.cluster.alive(node)
        core = self.cluster.node(node) if alive else None
        color = role_color(getattr(core, "role", None) if alive else DOWN)
        self.state_labels[node].value = (f"<span style='color:{color};font-size:18px'>●</span> "
                                         f"<code>{html.escape(node_summary(self.cluster, node, paused))}</code>")
        enabled = {"crash": alive, "restart": not alive, "pause": alive and not paused,
                   "resume": alive and paused, "isolate": True}
        for action in NODE_ACTIONS:
            self.buttons[(action, node)].disabled = not enabled[action]

    def _draw_header(self, events: Sequence[dict[str, Any]]) -> None:
        c = self.cluster
        violations = len(of_kind(events, "violation"))
        bad = f" · <b style='color:#b00020'>{violations} violation(s)</b>" if violations else ""
        self.header.value = (f"<b>t = {c.now_ms} ms</b> · seed {getattr(c, 'seed', '?')} · leader "
                             f"{html.escape(str(c.leader() or '-'))} · {len(events)} events{bad}")
        self.status.value = ("" if self.error is None else
                             f"<span style='color:#b00020'>{html.escape(str(self.error))}</span>")

    def _draw_figure(self, fig: go.Figure) -> None:
        fig.update_layout(height=max(fig.layout.height or 400, 260))
        if isinstance(self.figure, widgets.Output):  # set the output directly: works with or without a kernel
            bundle = {"application/vnd.plotly.v1+json": json.loads(fig.to_json()),
                      "text/plain": f"<Figure: {fig.layout.title.text}>"}
            self.figure.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)
            return
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.add_traces(list(fig.data))
            self.figure.layout = fig.layout

    # --- display -------------------------------------------------------------------------------
    def display(self) -> None:
        from IPython.display import display

        display(self.root)

    def _ipython_display_(self) -> None:
        self.display()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.root._repr_mimebundle_(**kwargs)

