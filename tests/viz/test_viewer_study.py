"""The viewer as a study tool, without a browser: its filter groups and stops come from the trace
vocabulary, Figure 8's stops are read from the run, a lab's bookmarks survive what they should, every
word of the viewer is in its one table, its modules join into one, and a displayed viewer carries its
run as an offline film (``text/html``) that nbconvert's HTML export keeps."""

from __future__ import annotations

import re

import nbformat
import pytest

from rocketlab.errors import RocketlabError
from rocketlab.scenarios.dledger_schedules import figure8_cluster, figure8_stops, run_figure8
from rocketlab.trace.schema import FIELD_TYPES, KINDS, VIEW_GROUPS, VIEW_KINDS, VIEW_STOPS, view_vocabulary
from rocketlab.viz.cluster_view import make_film
from rocketlab.viz.cluster_view.bundle import JS_DIR, MODULES, join_modules, viewer_source
from rocketlab.viz.cluster_view.widget import ClusterView


def test_every_kind_has_a_filter_group_and_every_stop_names_real_fields():
    assert set(VIEW_KINDS) <= set(KINDS)  # no row for a kind the contract does not know
    assert set(VIEW_KINDS.values()) <= set(VIEW_GROUPS)
    for name, (kind, when) in VIEW_STOPS.items():
        assert kind in KINDS, name
        assert all(field in FIELD_TYPES and values for field, values in when.items()), name
    vocab = view_vocabulary()
    assert set(vocab["kinds"]) == set(KINDS)  # a kind added later is filed ("other" without a row)
    assert [g["name"] for g in vocab["groups"]] == list(VIEW_GROUPS)
    assert not VIEW_GROUPS["heartbeats"] and VIEW_GROUPS["violations"]  # heartbeats hidden while stepping


def test_a_film_carries_the_vocabulary_and_the_viewer_names_no_kind_of_its_own():
    film = make_film([{"t": 0, "seq": 0, "node": "n0", "kind": "role", "term": 1, "role": "LEADER", "leader": "n0"}],
                     {"system": "dledger", "nodes": ["n0"]})
    assert film["view"] == view_vocabulary() and film["bookmarks"] == []
    source = viewer_source()
    for kind in ("vote_round", "vote_request", "push_state", "clean_space"):  # filters and stops are data, not code
        assert f'"{kind}"' not in source, kind  # (the kinds the viewer folds into node states it does name)
    assert "NOTABLE" not in source


@pytest.mark.parametrize("profile", ["dledger-0.3.1.2", "raft"])
def test_figure8s_stops_are_read_from_the_run(profile):
    c = figure8_cluster(1, profile)
    report = run_figure8(c)
    stops = figure8_stops(c, report.names, report.x_index)
    times = [s["t"] for s in stops]
    assert times == sorted(times)
    violations = [e for e in c.events if e["kind"] == "violation"]
    if profile == "raft":  # nothing committed is lost: no (c) commit of X by counting, no (d), no (e)
        assert [s["name"] for s in stops] == ["(a)", "(b)"] and not violations
        return
    assert [s["name"] for s in stops] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    crash = next(e for e in c.events if e["kind"] == "fault" and e["action"] == "crash")
    assert stops[0]["t"] == crash["t"] and report.names["S1"] in stops[0]["text"]
    assert stops[3]["t"] == violations[0]["t"] and "leader_completeness" in violations[0]["detail"]
    stable = next(v for v in violations if v["detail"].startswith("committed_entries_stable"))
    assert stops[4]["t"] == stable["t"]
    commit_x = [e for e in c.events if e["kind"] == "commit" and e["index"] == report.x_index and e["t"] == stops[2]["t"]]
    assert commit_x and commit_x[0]["node"] == report.names["S1"]


def test_a_lab_sets_bookmarks_and_a_fork_keeps_those_before_it():
    view = ClusterView.schedule("figure8")
    assert [b["name"] for b in view.bookmarks] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    assert view.session.film()["bookmarks"] == view.bookmarks
    view.bookmark(100, "start", "the first leader is elected")
    assert view.bookmarks[0]["name"] == "start"  # kept in time order
    for bad in ((-1, "x"), (1.5, "x"), (10, ""), (10, "  ")):
        with pytest.raises(RocketlabError):
            view.bookmark(*bad)
    fork_at = view.bookmarks[3]["t"]  # (c)
    alive = next(n for n in view.cluster.node_ids if view.cluster.is_alive(n)) if hasattr(view.cluster, "is_alive") \
        else view.cluster.node_ids[0]
    view.act("crash", at_ms=fork_at, node=alive)
    assert view.session.generation == 1
    assert [b["name"] for b in view.bookmarks] == ["start", "(a)", "(b)", "(c)"]  # the later stops told the old story


def test_every_word_the_viewer_shows_is_in_its_table():
    strings = (JS_DIR / "strings.js").read_text(encoding="utf-8")
    block = strings[strings.index("export const STRINGS = {"):strings.index("};")]
    keys = {a or b for a, b in re.findall(r'(?:"([^"]+)"|\b(\w+))\s*:\s*"', block)}
    used = set()
    for name in MODULES:
        text = (JS_DIR / name).read_text(encoding="utf-8")
        used |= set(re.findall(r'\bt\("(\w+)"', text))
        used |= {k for pair in re.findall(r'\bt\([\w.]+ \? "(\w+)" : "(\w+)"', text) for k in pair}
        if name != "strings.js":  # no words of their own: text content comes from t(), data or ids
            assert not re.search(r'(?:textContent|title|placeholder)\s*=\s*"[A-Za-z]', text), name
    assert used and used <= keys, sorted(used - keys)


def test_the_modules_join_into_one_and_refuse_clashes(tmp_path):
    source = viewer_source()
    assert source.count("export ") == 3 and "export default { render };" in source  # the entry's exports only
    assert 'from "./' not in source
    (tmp_path / "a.js").write_text("export const A = 1;\n")
    (tmp_path / "b.js").write_text('import { A } from "./a.js";\nconst A = 2;\nexport default A;\n')
    with pytest.raises(RocketlabError, match="declares A"):
        join_modules(tmp_path, ("a.js", "b.js"))
    (tmp_path / "c.js").write_text('import { B } from "./a.js";\nexport default B;\n')
    with pytest.raises(RocketlabError, match="imports B"):
        join_modules(tmp_path, ("a.js", "c.js"))


def test_a_displayed_viewer_carries_its_run_and_nbconvert_keeps_it(monkeypatch):
    from nbconvert import HTMLExporter  # lazy: nbconvert, only this test

    view = ClusterView.schedule("issue251")
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert f"rocketlab-film-{view.model_id}" in html and "rocketlab-viewer-src" in html and '"live":false' in html
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("view", outputs=[nbformat.v4.new_output("display_data", data=data)])]
    body, _ = HTMLExporter().from_notebook_node(nb)  # no widget state: nbconvert falls back to text/html
    assert f"rocketlab-film-{view.model_id}" in body and "mountOffline" in body
    assert "unpkg" not in body and "https://" not in body.split("rocketlab-viewer-src")[1][:200]
    monkeypatch.setattr("rocketlab.viz.cluster_view.widget.MAX_EMBEDDED_FILM", 1000)
    # a run too long to carry says so, and how to write it as a page instead
    assert "view.save_html(PATH)" in view._repr_mimebundle_()[0]["text/html"]


def test_every_lab_links_the_films_of_its_runs():
    from rocketlab.viz.cluster_view.gallery import FILMS

    root = JS_DIR.parents[3]
    labs = {p.name[:2]: p.read_text(encoding="utf-8") for p in (root / "labs").glob("*.ipynb")}
    assert (root / "docs" / "films.md").exists()
    for row in FILMS:
        assert row.labs, row.name
        for lab in row.labs:
            assert f"films/{row.name}.html" in labs[lab] and "../docs/films.md" in labs[lab], (row.name, lab)
    assert all(any(lab in row.labs for row in FILMS) for lab in labs), "a lab without a film"
