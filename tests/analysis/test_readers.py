"""read_events: explicit schema from the trace contract, run names, JSON lines + Parquet, bad lines."""

from __future__ import annotations

import json

import pytest

from rocketlab.analysis.readers import (
    describe_bad_line,
    event_schema,
    line_problem,
    read_events,
    trace_fields,
)
from rocketlab.trace import RunDirError, load_events, write_run
from rocketlab.trace.schema import FIELD_TYPES

pytestmark = pytest.mark.spark

GOOD = [
    {"t": 0, "seq": 0, "node": "n0", "kind": "term", "term": 1, "prev": 0},
    {"t": 5, "seq": 1, "node": None, "kind": "fault", "action": "partition", "targets": ["n0", "n1,n2"]},
    {"t": 9, "seq": 2, "node": "n1", "kind": "ping", "to": "n0", "ping_seq": 1, "ok": True, "rtt_ms": 1.5},
]


def test_event_schema_types():
    schema = {f.name: f.dataType.simpleString() for f in event_schema().fields}
    assert list(schema) == list(trace_fields())
    assert set(FIELD_TYPES) <= set(schema)
    assert [schema[k] for k in ("t", "seq", "node", "kind")] == ["bigint", "bigint", "string", "string"]
    assert schema["targets"] == "array<string>"
    assert (schema["latency_ms"], schema["ok"], schema["queue_offset"]) == ("double", "boolean", "bigint")
    assert event_schema(corrupt_column=True).fieldNames()[-1] == "_corrupt_record"


def test_read_events_columns_types_and_values(spark, tmp_path):
    run = write_run(tmp_path / "run +1 [x]", {"seed": 1}, GOOD)  # space, plus and glob characters
    frame = read_events(spark, run)
    types = dict(frame.dtypes)
    assert frame.columns == ["run", *trace_fields()]
    assert (types["run"], types["t"], types["targets"], types["ok"], types["rtt_ms"]) == (
        "string", "bigint", "array<string>", "boolean", "double")
    rows = {r.seq: r for r in frame.collect()}
    assert {r.run for r in rows.values()} == {"run +1 [x]"}
    assert rows[1].targets == ["n0", "n1,n2"] and rows[1].node is None and rows[1].action == "partition"
    assert (rows[2].ok, rows[2].rtt_ms, rows[2].ping_seq, rows[2].term) == (True, 1.5, 1, None)


def test_read_events_merges_node_files_and_parquet(spark, tmp_path, jsonl_run, parquet_run):
    split = tmp_path / "split"
    split.mkdir()
    (split / "meta.json").write_text("{}")
    for node, events in (("n0", GOOD[:2]), ("n1", GOOD[2:])):  # one file per process, as the TCP runtime
        (split / f"events-{node}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    counts = {r.run: r["count"] for r in read_events(spark, [split, jsonl_run, parquet_run])
              .groupBy("run").count().collect()}
    assert counts == {"split": 3, "alpha": len(load_events(jsonl_run)), "beta": len(load_events(parquet_run))}


def test_a_run_with_both_forms_is_read_once_from_parquet(spark, tmp_path):
    run = write_run(tmp_path / "both", {"seed": 1}, GOOD)
    write_run(tmp_path / "both", {"seed": 1}, GOOD, parquet=True)
    (run / "events.jsonl").write_text((run / "events.jsonl").read_text() + "{not json\n")  # would fail if read
    assert sorted(p.suffix for p in run.glob("events*")) == [".jsonl", ".parquet"]
    assert read_events(spark, run).count() == len(GOOD)


def _write_lines(tmp_path, name, lines):
    run = tmp_path / name
    run.mkdir()
    (run / "events.jsonl").write_text("".join(line + "\n" for line in lines))
    return run


@pytest.mark.parametrize(("bad", "why"), [
    ('{"t": 3, "seq": 2, "node": "n0", "kind": "term", "term": 2', r"not valid JSON"),
    ('{"t": "soon", "seq": 2, "node": "n0", "kind": "term"}', r"field 't' should be long, got 'soon'"),
    ('{"t": 3, "seq": 2, "node": "n0"}', r"not a trace event \(lacks 'kind'\)"),
    ('[1, 2]', r"not a JSON object but list"),
])
def test_corrupt_line_is_named(spark, tmp_path, bad, why):
    lines = [json.dumps(e) for e in GOOD[:2]] + ["", bad, json.dumps(GOOD[2])]
    run = _write_lines(tmp_path, "corrupt", lines)
    with pytest.raises(RunDirError, match=rf"^{run / 'events.jsonl'}: corrupt event at line 4: {why}"):
        read_events(spark, run)


def test_unchecked_read_drops_bad_lines(spark, tmp_path):
    lines = [json.dumps(GOOD[0]), "{oops", '{"t": 1, "seq": 9}', json.dumps(GOOD[2])]
    frame = read_events(spark, _write_lines(tmp_path, "lax", lines), check=False)
    assert sorted(r.seq for r in frame.collect()) == [0, 2]


def test_bad_directories_fail_before_spark(spark, tmp_path):
    with pytest.raises(RunDirError, match="no such directory"):
        read_events(spark, tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunDirError, match="no events.jsonl or events.parquet"):
        read_events(spark, tmp_path / "empty")
    with pytest.raises(RunDirError, match="no run directories given"):
        read_events(spark, [])
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "events.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(RunDirError, match=rf"^{broken / 'events.parquet'}: corrupt Parquet file"):
        read_events(spark, broken)


def test_describe_bad_line_without_spark(tmp_path):
    file = tmp_path / "events.jsonl"
    file.write_text('{"t":1,"seq":0,"kind":"term"}\n{"t":1.5,"seq":1,"kind":"term"}\n')
    assert describe_bad_line(file) == f"{file}: corrupt event at line 2: field 't' should be long, got 1.5"
    assert "line not located" in describe_bad_line(file, corrupt_text="{never written")
    assert line_problem('{"t": 1, "seq": 0, "kind": "x", "node": 5, "ok": false}') is None
    assert line_problem('{"t": 1, "seq": 0, "kind": "x", "targets": "n0"}') == (
        "field 'targets' should be strings, got 'n0'")
