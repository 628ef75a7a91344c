"""rocketlab.viz.widget: buttons act on the cluster through its API, the panel shows the result, and a
seed plus the recorded clicks replays the same trace. Headless: no browser, no kernel."""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go
import pytest

from rocketlab.errors import RocketlabError
from rocketlab.sim import Cluster
from rocketlab.viz import widget as widget_module
from rocketlab.viz.widget import ClusterWidget, apply_action, last_lines, node_summary, replay


@pytest.fixture
def static_figure(monkeypatch):
    """Force the no-anywidget path (an Output with a static figure): fast, and what a bare install gets."""
    def no_anywidget(*_args, **_kwargs):
        raise ImportError("Please install anywidget to use the FigureWidget class")

    monkeypatch.setattr(widget_module.go, "FigureWidget", no_anywidget)


def log_text(w: ClusterWidget) -> str:
    return w.log.value


def test_crash_button_takes_the_node_down_and_the_panel_shows_it(static_figure):
    c = Cluster.pingpong(nodes=3, seed=1)
    w = ClusterWidget(c, log_lines=5)
    w.click("run_100ms")
    events_before = len(c.events)
    w.click("crash", "n1")
    assert not c.alive("n1")
    assert "<code>n1 down</code>" in w.state_labels["n1"].value
    assert w.buttons[("crash", "n1")].disabled and not w.buttons[("restart", "n1")].disabled
    assert len(c.events) == events_before + 1 and "fault action=crash targets=[n1]" in log_text(w)
    w.click("run_1s")
    assert len(c.events) > events_before + 1
    assert "t = 1100 ms" in w.header.value
    assert w.history == [("run_100ms", None), ("crash", "n1"), ("run_1s", None)]


def test_pause_isolate_heal_and_the_buttons_that_follow(static_figure):
    c = Cluster.pingpong(nodes=3, seed=2)
    w = ClusterWidget(c)
    assert w.buttons[("heal", None)].disabled  # nothing to heal yet
    w.click("pause", "n2")
    assert w.paused["n2"] and "paused" in w.state_labels["n2"].value
    assert w.buttons[("pause", "n2")].disabled and not w.buttons[("resume", "n2")].disabled
    w.click("isolate", "n0")
    assert not c.runtime.connected("n0", "n1") and not w.buttons[("heal", None)].disabled
    w.click("run_100ms")
    assert "msg_drop" in log_text(w) and "reason=partition" in log_text(w)
    w.click("heal")
    w.click("resume", "n2")
    assert c.runtime.connected("n0", "n1") and not w.paused["n2"]


def test_a_disabled_button_cannot_be_clicked(static_figure):
    w = ClusterWidget(Cluster.pingpong(nodes=3, seed=1))
    with pytest.raises(RocketlabError, match="cannot restart now: n0 NODE"):
        w.click("restart", "n0")
    with pytest.raises(RocketlabError, match="cannot heal now: no partition in force"):
        w.click("heal")
    with pytest.raises(RocketlabError, match="no 'explode' button"):
        w.click("explode", "n0")
    assert w.history == []


def test_seed_plus_clicks_replays_the_same_trace(static_figure):
    c = Cluster.pingpong(nodes=3, seed=7, network="unreliable")
    w = ClusterWidget(c)
    for action, node in [("run_100ms", None), ("crash", "n0"), ("isolate", "n2"), ("run_1s", None),
                         ("heal", None), ("restart", "n0"), ("run_100ms", None)]:
        w.click(action, node)
    again = replay(Cluster.pingpong(nodes=3, seed=7, network="unreliable"), w.history)
    assert again.events == c.events and again.now_ms == c.now_ms == 1200


def test_the_figure_follows_the_view_toggle_and_the_network_toggle(static_figure):
    c = Cluster.pingpong(nodes=3, seed=1)
    w = ClusterWidget(c, log_lines=3)
    assert w.view.value == "messages"  # pingpong has no role events
    assert isinstance(w.figure, widgets.Output) and len(w.figure.outputs) == 1
    w.click("run_100ms")
    assert "msg_send" not in log_text(w)
    w.network_toggle.value = True
    assert "msg_send" in log_text(w) or "msg_recv" in log_text(w)
    w.view.value = "roles"
    shown = w.figure.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert shown["layout"]["title"]["text"].startswith("Nodes over time")


def test_live_figure_widget_is_redrawn_after_each_action():
    try:
        go.FigureWidget()
    except ImportError:
        pytest.skip("anywidget is not installed: the widget uses the static figure path")
    c = Cluster.pingpong(nodes=3, seed=1)
    w = ClusterWidget(c, view="roles")
    assert isinstance(w.figure, go.FigureWidget)
    w.click("crash", "n2")
    w.click("run_100ms")
    names = [t.name for t in w.figure.data]
    assert "down (crashed)" in names and "fault" in names
    assert w.figure.layout.title.text == "Nodes over time: 1 fault"


def test_display_hooks_hand_over_the_ipywidgets_view(static_figure):
    w = ClusterWidget(Cluster.pingpong(nodes=2, seed=1))
    bundle = w._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == w.root.model_id
    assert callable(w._ipython_display_) and callable(w.display)


def test_helpers_work_on_any_cluster():
    c = Cluster.pingpong(nodes=2, seed=1)
    c.run_for(250)
    assert node_summary(c, "n0") == "n0 NODE"
    assert node_summary(c, "n0", paused=True) == "n0 NODE paused"
    apply_action(c, "crash", "n1")
    assert node_summary(c, "n1") == "n1 down"
    with pytest.raises(RocketlabError, match="needs one of the nodes"):
        apply_action(c, "crash", "n9")
    lines = last_lines(c.events, 2, hide=("msg_send", "msg_recv"))
    assert lines[-1] == "t=250 - fault action=crash targets=[n1]" and len(lines) == 2
    assert lines[0].startswith("t=200 n1 ping to=n0")


def test_the_put_button_appears_for_systems_with_a_store_and_replays():
    from rocketlab.sim import Cluster
    from rocketlab.viz.widget import ClusterWidget, replay

    assert ("put", None) not in ClusterWidget(Cluster.pingpong(nodes=3)).buttons
    c = Cluster.master_slave(role="SYNC_MASTER")
    widget = ClusterWidget(c)
    # run 10 s first: the (4.9.5) slave sends its first report about 5 s after it connects
    for action, node in [("run_10s", None), ("put", None), ("put", None), ("crash", "n1"), ("run_100ms", None),
                         ("put", None)]:
        widget.click(action, node)
    assert [e["status"] for e in c.events if e["kind"] == "put"] == ["PUT_OK", "PUT_OK", "SLAVE_NOT_AVAILABLE"]
    again = replay(Cluster.master_slave(role="SYNC_MASTER"), widget.history)
    assert again.events == c.events
    c.close()
    again.close()
