"""The trace contract: schema, recorder, run directories and the pandas loader."""

from __future__ import annotations

import json

import pytest

from rocketlab.trace import (
    KINDS,
    RunDirError,
    TraceRecorder,
    TraceSchemaError,
    describe,
    iter_events,
    load_events,
    read_meta,
    validate_event,
    write_run,
)
from rocketlab.trace.schema import FIELD_TYPES

DESIGN_KINDS = {
    "role": ("term", "role", "leader"), "term": ("term", "prev"),
    "vote_request": ("term", "candidate", "voter", "ledger_end_index", "ledger_end_term"),
    "vote_response": ("term", "candidate", "voter", "result"),
    "vote_round": ("term", "result", "accepted", "not_ready", "bigger_ledger", "valid", "all"),
    "heartbeat": ("term", "leader", "to", "code"), "append": ("index", "term", "pos", "size"),
    "commit": ("index", "pos"), "truncate": ("index",),
    "put": ("topic", "queue_id", "queue_offset", "phy_offset", "size", "status", "latency_ms"),
    "ha_report": ("slave", "offset"), "ha_transfer": ("slave", "offset", "size"),
    "fault": ("action", "targets"), "violation": ("invariant", "detail"),
}


def test_schema_holds_every_kind_of_the_design_contract():
    for kind, fields in DESIGN_KINDS.items():
        assert KINDS[kind] == fields, kind
    for fields in KINDS.values():
        assert all(name in FIELD_TYPES for name in fields)


def _event(kind="role", **fields):
    base = {"t": 5, "seq": 0, "node": "n0", "kind": kind}
    return {**base, **({"term": 2, "role": "LEADER", "leader": "n0"} if kind == "role" else {}), **fields}


def test_valid_events_pass():
    validate_event(_event())
    validate_event({"t": 0, "seq": 1, "node": None, "kind": "fault", "action": "heal", "targets": []})
    validate_event(_event("heartbeat", term=1, leader="n0", to="n1", code=None))


@pytest.mark.parametrize("event,problem", [
    ({"seq": 0, "node": None, "kind": "fault"}, "envelope field 't'"),
    (_event("nonsense"), "unknown event kind"),
    ({"t": 1, "seq": 0, "node": "n0", "kind": "role", "term": 1, "role": "LEADER"}, "lacks field 'leader'"),
    (_event(term="3"), r"role.term should be long"),
    (_event(term=True), r"role.term should be long"),
    (_event(colour="red"), "does not know"),
    ({"t": 0, "seq": 1, "node": None, "kind": "fault", "action": "heal", "targets": [1]}, "strings"),
])
def test_invalid_events_are_named(event, problem):
    with pytest.raises(TraceSchemaError, match=problem):
        validate_event(event)


def test_recorder_stamps_filters_streams_and_notifies(tmp_path):
    seen = []
    with open(tmp_path / "sink.jsonl", "w") as sink:
        rec = TraceRecorder(kinds={"fault"}, sink=sink)
        rec.subscribe(seen.append)
        rec.emit(3, None, "fault", {"action": "heal", "targets": []})
        assert rec.emit(4, "n0", "role", {}) is None
        rec.flush()
    assert rec.events == seen == [{"t": 3, "seq": 0, "node": None, "kind": "fault", "action": "heal",
                                   "targets": []}]
    assert json.loads((tmp_path / "sink.jsonl").read_text()) == rec.events[0]
    off = TraceRecorder(enabled=False)
    assert off.emit(1, "n0", "fault", {}) is None and off.events == [] and not off.wants("fault")


def test_describe_is_one_stable_line():
    assert describe(_event()) == "t=5 n0 role term=2 role=LEADER leader=n0"
    assert describe({"t": 1, "seq": 0, "node": None, "kind": "fault", "action": "partition",
                     "targets": ["n0", "n1,n2"]}) == "t=1 - fault action=partition targets=[n0,n1,n2]"


EVENTS = [
    {"t": 0, "seq": 0, "node": None, "kind": "fault", "action": "crash", "targets": ["n1"]},
    {"t": 2, "seq": 1, "node": "n0", "kind": "role", "term": 1, "role": "LEADER", "leader": "n0"},
    {"t": 3, "seq": 2, "node": "n0", "kind": "ping", "to": "n1", "ping_seq": 1, "ok": False, "rtt_ms": None},
]


@pytest.mark.parametrize("parquet", [False, True])
def test_run_directory_round_trips(tmp_path, parquet):
    write_run(tmp_path / "r", {"seed": 4}, EVENTS, parquet=parquet)
    assert read_meta(tmp_path / "r")["seed"] == 4
    back = list(iter_events(tmp_path / "r"))
    strip = [{k: v for k, v in e.items() if v is not None} for e in back]
    assert strip == [{k: v for k, v in e.items() if v is not None} for e in EVENTS]
    frame = load_events(tmp_path / "r")
    assert list(frame["kind"]) == ["fault", "role", "ping"] and frame["t"].dtype == "int64"
    assert frame.loc[1, "term"] == 1 and list(frame.loc[0, "targets"]) == ["n1"]


def test_several_run_directories_load_into_one_frame(tmp_path):
    write_run(tmp_path / "a", {}, EVENTS)
    write_run(tmp_path / "b", {}, EVENTS[:1])
    frame = load_events([tmp_path / "a", tmp_path / "b"])
    assert frame.groupby("run").size().to_dict() == {"a": 3, "b": 1}


def test_corrupt_events_file_names_the_line(tmp_path):
    write_run(tmp_path, {}, EVENTS)
    with open(tmp_path / "events.jsonl", "a") as f:
        f.write('{"t": 9, "kind": "fault"\n')
    with pytest.raises(RunDirError, match=r"events.jsonl: corrupt event at line 4"):
        load_events(tmp_path)
    (tmp_path / "events.jsonl").write_text('[1, 2]\n')
    with pytest.raises(RunDirError, match="line 1 is not a trace event"):
        list(iter_events(tmp_path))


def test_missing_or_empty_run_directory_is_named(tmp_path):
    with pytest.raises(RunDirError, match="no such directory"):
        load_events(tmp_path / "nope")
    with pytest.raises(RunDirError, match="no events.jsonl"):
        load_events(tmp_path)
    (tmp_path / "meta.json").write_text("{broken")
    with pytest.raises(RunDirError, match="meta.json: corrupt JSON at line 1"):
        read_meta(tmp_path)
    (tmp_path / "events.parquet").write_bytes(b"not parquet")
    with pytest.raises(RunDirError, match="corrupt Parquet"):
        list(iter_events(tmp_path))


def test_parquet_refuses_fields_outside_the_schema(tmp_path):
    with pytest.raises(RunDirError, match="outside the trace schema"):
        write_run(tmp_path, {}, [{**EVENTS[0], "colour": "red"}], parquet=True)
