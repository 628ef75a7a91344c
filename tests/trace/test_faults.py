"""The fault vocabulary is one table (rocketlab.trace.faults): every other place derives from it.

The first test adds a fake row to the table in a fresh interpreter, before anything reads it, and
follows it to the schedule parser, Cluster.apply's dispatch, the trace schema, the viewer session's
intents, the data every film carries to viewer.js, and the chaos campaign's kinds. The others check
that the table is whole (every shape, method, effect and campaign action it names exists) and that
viewer.js names no fault kind of its own.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.chaos.schedule import FAULTS, LOCAL_FAULTS, NETWORK_FAULTS
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.faults import _CALLS, _PARSERS, ACTIONS, FaultSchedule
from rocketlab.trace.faults import (
    ARG_SHAPES,
    CAMPAIGN_FAULTS,
    FAULT_KINDS,
    NOT_IN_REAL_RUNTIME,
    VIEWER_EFFECTS,
    VIEWER_MENUS,
    fault_actions,
    fault_kind,
    real_runtime,
    viewer_faults,
)
from rocketlab.trace.schema import FAULT_ACTIONS
from rocketlab.viz.cluster_view import session
from rocketlab.viz.cluster_view.bundle import viewer_source

VIEWER_JS = viewer_source()  # the viewer's modules (viz/cluster_view/js/), joined

FAKE_ROW = r'''
import importlib.util, json, sys
from pathlib import Path

import rocketlab

path = Path(rocketlab.__file__).parent / "trace" / "faults.py"
spec = importlib.util.spec_from_file_location("rocketlab.trace.faults", path)
table = importlib.util.module_from_spec(spec)
sys.modules["rocketlab.trace.faults"] = table
spec.loader.exec_module(table)
table.FAULT_KINDS += (table.FaultKind(
    "blink", "blink", "a fake fault kind: the node pauses", "nodes", "the nodes", "blink", scheduled=True,
    viewer=table.ViewerDrawing("paused", "node", "blink now", "running")),)
table.CAMPAIGN_FAULTS += (table.CampaignFault("flicker", "a fake campaign fault", "blink", "resume"),)

from rocketlab.chaos.schedule import FAULTS
from rocketlab.sim import Cluster, FaultSchedule
from rocketlab.sim.faults import ACTIONS
from rocketlab.trace.schema import FAULT_ACTIONS
from rocketlab.viz.cluster_view.session import ACTIONS as INTENTS, ViewSession

Cluster.blink = Cluster.pause  # the code that does the new thing
out = {"schedule_words": list(ACTIONS), "schedule_text": str(FaultSchedule.parse("10 blink n1 n2")),
       "fault_actions": list(FAULT_ACTIONS), "campaign": list(FAULTS),
       "real_runtime": table.real_runtime(table.fault_kind("blink"))}
with Cluster.pingpong(nodes=3) as c:
    c.apply_schedule("10 blink n1")
    c.run_for(20)
    out["paused_by_schedule"] = c.runtime.get("n1").paused
    view = ViewSession(c)
    view.act(30, "blink", node="n2")
    out["paused_by_intent"] = c.runtime.get("n2").paused
    out["intent"] = [INTENTS["blink"].needs, INTENTS["blink"].node_must_be]
    out["replay"] = view.replay_code().splitlines()[-1]
    film = view.film()
    out["menu"] = [item for item in film["faults"]["node_menu"] if item["intent"] == "blink"]
    out["effect"] = film["faults"]["effects"].get("blink")
print(json.dumps(out))
'''


def test_a_new_row_reaches_the_parser_the_dispatch_the_schema_the_viewer_and_the_campaign():
    done = subprocess.run([sys.executable, "-c", FAKE_ROW], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert "blink" in out["schedule_words"] and out["schedule_text"] == "10 blink n1 n2"
    assert "blink" in out["fault_actions"]
    assert out["paused_by_schedule"] and out["paused_by_intent"]
    assert out["intent"] == [["node"], "running"]
    assert out["replay"].startswith("cluster.blink('n2')")
    assert out["menu"] == [{"intent": "blink", "label": "blink now", "when": "running", "args": "nodes"}]
    assert out["effect"] == "paused"
    assert out["campaign"][-1] == "flicker" and out["real_runtime"].startswith("flicker (on)")


def test_the_derived_vocabularies_are_the_tables():
    assert ACTIONS == tuple(k.name for k in FAULT_KINDS if k.scheduled)
    assert FAULT_ACTIONS == fault_actions() == tuple(dict.fromkeys(k.action for k in FAULT_KINDS))
    offered = [k.method for k in FAULT_KINDS if k.viewer.menu is not None]
    assert list(session.ACTIONS) == [*offered, "put"]
    assert FAULTS == tuple(c.name for c in CAMPAIGN_FAULTS)
    assert NETWORK_FAULTS == {c.name for c in CAMPAIGN_FAULTS if c.network}
    assert LOCAL_FAULTS == {c.name for c in CAMPAIGN_FAULTS if not c.needs_netns}


def test_the_table_is_whole():
    names = [k.name for k in FAULT_KINDS]
    assert len(names) == len(set(names))
    for kind in FAULT_KINDS:
        assert kind.args in ARG_SHAPES, kind
        assert (kind.method is None) == (kind.args == "recorded"), kind
        if kind.method is not None:
            assert callable(getattr(Cluster, kind.method, None)), kind
        if kind.scheduled:
            assert kind.args in _PARSERS and kind.args in _CALLS, kind
        drawing = kind.viewer
        assert drawing.effect is None or drawing.effect in VIEWER_EFFECTS, kind
        assert drawing.menu is None or (drawing.menu in VIEWER_MENUS and drawing.label and kind.method), kind
        if drawing.menu == "node":
            assert kind.args in ("node", "nodes") and drawing.when in (None, "alive", "down", "running", "paused")
        if drawing.menu == "link":
            assert kind.args in ("link", "message") and drawing.when in (None, "open", "cut")
        if drawing.menu is not None:
            assert kind.args in session._INTENT_ARGS, kind
    effects = viewer_faults()["effects"]
    for kind in FAULT_KINDS:  # rows that record the same action draw it alike
        assert kind.viewer.effect in (None, effects.get(kind.action)), kind
    actions = set(fault_actions())
    for campaign in CAMPAIGN_FAULTS:
        assert {campaign.on, campaign.off} <= actions, campaign
    assert real_runtime(fault_kind("host_down")) == NOT_IN_REAL_RUNTIME
    assert real_runtime(fault_kind("crash")).startswith("kill (on)")


def test_viewer_js_draws_every_effect_and_names_no_fault_kind():
    block = VIEWER_JS[VIEWER_JS.index("const FAULT_EFFECTS = {"):]
    block = block[:block.index("\n};")]
    assert set(re.findall(r"^  (\w+): \(", block, re.M)) == set(VIEWER_EFFECTS)
    assert not re.search(r"action\s*===", VIEWER_JS), "viewer.js compares fault actions itself"
    assert re.findall(r"""\bact\(\s*["'](\w+)["']""", VIEWER_JS) == ["put", "put"]  # a put is no fault
    start = VIEWER_JS.index("STRINGS_ZH_CN = {")  # a translation table names each label, by design
    code = VIEWER_JS[:start] + VIEWER_JS[VIEWER_JS.index("\n};", start):]
    for kind in FAULT_KINDS:
        if " " in kind.viewer.label:
            assert kind.viewer.label not in code, kind


@pytest.mark.parametrize("line", ["10 crash n1", "10 crash! n1 n2", "10 partition n0 | n1 n2", "10 heal",
                                  "10 drop n0 -> *", "10 drop n1 -> n0 PushEntryResponse INCONSISTENT_STATE"])
def test_schedule_lines_keep_their_text(line):
    assert str(FaultSchedule.parse(line)) == line
