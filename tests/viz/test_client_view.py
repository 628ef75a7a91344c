"""The cluster viewer with an application's processes (Cluster.applications): the film names which nodes are
no brokers, their messages get their own classes, client events have a filter group; in Chromium the name server
and the clients are drawn as boxes, not broker circles, and their events are listed."""

from __future__ import annotations

import os

import pytest

from rocketlab.trace.schema import KINDS, VIEW_GROUPS, VIEW_KINDS
from rocketlab.viz.cluster_view import ClusterView
from rocketlab.viz.cluster_view.film import MESSAGE_COLORS, message_class
from tests.viz.test_cluster_view_browser import _scrub, opened


@pytest.fixture(scope="module")
def view():
    v = ClusterView.applications(seed=1, messages=20)
    v.run_for(9_000)
    leader = next(n for n in ("a0", "a1", "a2") if v.cluster.node(n).role == "MASTER")
    v.act("crash", node=leader)
    v.run_for(3_000)
    yield v, leader
    v.close()
    v.session.cluster.close()


def test_the_film_says_which_nodes_are_no_brokers(view):
    v, _ = view
    film = v.session.film()
    assert film["system"] == "applications"
    assert film["node_kinds"] == {"ns": "namesrv", "p0": "producer", "k0": "consumer", "k1": "consumer",
                                  "k2": "consumer"}
    classes = {e["msg"]: e["cls"] for e in film["events"] if e["kind"] == "msg_send"}
    assert classes["SendMessageRequest"] == classes["PullMessageRequest"] == "app"
    assert classes["RegisterBrokerRequest"] == classes["GetRouteInfoRequest"] == "route"
    assert classes["PushEntryRequest"] == "push"
    assert {"app", "route"} <= set(MESSAGE_COLORS) and message_class("NotifyConsumerIdsChanged") == "app"


def test_every_client_event_kind_has_a_filter_group_shown_by_default():
    client_kinds = [k for k in KINDS if k.startswith("client_")]
    assert {"client_send_failed", "client_commit"} <= set(client_kinds)
    for kind in [*client_kinds, "pull_held", "pull_woken", "consumer_group"]:
        assert VIEW_GROUPS[VIEW_KINDS[kind]], kind
    for kind in ("broker_registered", "broker_unregistered", "route_query"):
        assert VIEW_KINDS[kind] == "routes" and VIEW_GROUPS["routes"]


@pytest.mark.browser
def test_the_viewer_draws_the_name_server_and_clients_as_their_own_shapes(view, tmp_path):
    v, leader = view
    page_path = v.save_html(tmp_path / "apps.html", "applications")
    with opened(page_path) as page:
        page.wait_for_selector(".rl-node", timeout=10_000)
        assert page.locator(".rl-node").count() == 13
        kinds = page.evaluate("() => Object.fromEntries([...document.querySelectorAll('.rl-node')]"
                              ".map(g => [g.dataset.node, [g.dataset.kind, g.querySelector('.rl-node-body').tagName]]))")
        assert kinds["ns"] == ["namesrv", "rect"] and kinds["p0"] == ["producer", "rect"]
        assert all(kinds[k] == ["consumer", "rect"] for k in ("k0", "k1", "k2"))
        assert all(kinds[b] == ["broker", "circle"] for b in ("a0", "a1", "a2", "b0", "b1", "b2", "c0", "c1"))
        assert page.locator(f".rl-node[data-node='{leader}']").get_attribute("data-role") == "DOWN"
        words = _texts(page, ".rl-node[data-node='p0'] .rl-node-info")
        assert words[0] == "producer" and words[1].endswith("sends acked")
        ns = _texts(page, ".rl-node[data-node='ns'] .rl-node-info")
        assert ns[:2] == ["name server", "7 brokers registered"]  # the crashed master's channel closed: it is gone
        assert leader not in ns[2] and ns[2].startswith("masters ") and "c0" in ns[2]
        assert page.locator(".rl-apps tr[data-kind='consumer']").count() == 3
        sent = [e["t"] for e in v.cluster.events if e["kind"] == "client_send"]
        _scrub(page, sent[-1])
        listed = page.evaluate("() => [...document.querySelectorAll('.rl-event')].map(li => li.dataset.kind)")
        assert "client_send" in listed, listed
        page.screenshot(path=str(tmp_path / "apps.png"))
        if os.environ.get("ROCKETLAB_SHOT"):
            page.screenshot(path=os.environ["ROCKETLAB_SHOT"])


def _texts(page, selector: str) -> list[str]:
    return page.evaluate("s => [...document.querySelectorAll(s)].map(n => n.textContent)", selector)


def test_acting_in_the_past_of_an_applications_view_replays_its_history():
    v = ClusterView.applications(seed=2, messages=30)
    try:
        v.run_for(9_000)
        before = [e for e in v.cluster.events if e["t"] < 6_000]
        replies = v.intent({"type": "act", "action": "crash", "args": {"node": "k1"},
                            "generation": v.session.generation, "at": 6_000})
        assert not [r for r in replies if r["type"] == "message" and r.get("level") == "error"]
        assert v.session.generation == 1 and v.cluster.now_ms == 6_000
        assert [e for e in v.cluster.events if e["t"] < 6_000] == before  # the fork rebuilt the same run
        assert v.cluster.events_of("fault")[-1]["targets"] == ["k1"]
    finally:
        v.close()
        v.session.cluster.close()
