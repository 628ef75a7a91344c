"""Each Spark aggregation agrees with the same aggregation done in pandas on load_events."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rocketlab.analysis import analyses as A
from rocketlab.trace import load_events

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def pdf(jsonl_run, parquet_run) -> pd.DataFrame:
    return load_events([jsonl_run, parquet_run])


def _rows(frame, columns):
    """Spark rows as a list of tuples over ``columns`` (None for nulls)."""
    return [tuple(r[c] for c in columns) for r in frame.collect()]


def _pandas_rows(frame: pd.DataFrame, columns):
    out = []
    for values in frame[columns].itertuples(index=False, name=None):
        out.append(tuple(None if v is None or (isinstance(v, float) and math.isnan(v)) else v
                         for v in values))
    return out


def _key(row):
    return tuple((v is not None, v) for v in row)


def test_row_count_matches_pandas(events_df, pdf):
    assert events_df.count() == len(pdf)


def test_events_per_kind_and_node(events_df, pdf):
    spark_rows = _rows(A.events_per_kind_and_node(events_df, by_run=True), ["run", "kind", "node", "events"])
    expected = (pdf.groupby(["run", "kind", "node"], dropna=False).size().rename("events").reset_index())
    assert sorted(spark_rows, key=_key) == sorted(_pandas_rows(expected, ["run", "kind", "node", "events"]),
                                                  key=_key)
    assert any(node is None for _, kind, node, _ in spark_rows if kind == "fault")
    no_run = A.events_per_kind_and_node(events_df)
    assert no_run.columns == ["kind", "node", "events", "first_t", "last_t"]
    assert sum(r.events for r in no_run.collect()) == len(pdf)


def test_counts_per_window(events_df, pdf):
    got = _rows(A.counts_per_window(events_df, 1000, by_run=True), ["run", "window_start", "events"])
    pdf = pdf.assign(window_start=pdf.t // 1000 * 1000)
    expected = pdf.groupby(["run", "window_start"]).size().rename("events").reset_index()
    assert got == _pandas_rows(expected, ["run", "window_start", "events"])  # both sorted by run, window
    assert len(got) >= 8  # two runs, several non-empty windows each
    by_kind = _rows(A.counts_per_window(events_df, 500, by=["kind"]), ["window_start", "kind", "events"])
    expected = (pdf.assign(w=pdf.t // 500 * 500).groupby(["w", "kind"]).size().reset_index())
    assert by_kind == [tuple(r) for r in expected.itertuples(index=False, name=None)]
    with pytest.raises(ValueError, match="window_ms must be positive"):
        A.counts_per_window(events_df, 0)


def test_message_counts(events_df, pdf):
    got = {r.msg: r for r in A.message_counts(events_df).collect()}
    msgs = pdf[pdf.kind.isin(["msg_send", "msg_recv", "msg_drop"])]
    table = msgs.groupby(["msg", "kind"]).size().unstack(fill_value=0)
    assert set(got) == set(table.index) == {"HeartBeatRequest"}
    for msg, row in table.iterrows():
        assert (got[msg].sent, got[msg].received, got[msg].dropped) == (
            row["msg_send"], row["msg_recv"], row["msg_drop"])
        assert got[msg].drop_rate == pytest.approx(row["msg_drop"] / row["msg_send"])
        assert got[msg].sent == got[msg].received + got[msg].dropped  # every send is delivered or lost
    reasons = _rows(A.drops_per_reason(events_df), ["reason", "msg", "dropped"])
    expected = pdf[pdf.kind == "msg_drop"].groupby(["reason", "msg"]).size().reset_index()
    assert reasons == [tuple(r) for r in expected.itertuples(index=False, name=None)]


def test_votes_per_term(events_df, pdf):
    got = _rows(A.votes_per_term(events_df, by_run=True), ["run", "term", "candidate", "result", "votes"])
    votes = pdf[pdf.kind == "vote_response"]
    expected = votes.groupby(["run", "term", "candidate", "result"]).size().reset_index()
    assert got == [tuple(r) for r in expected.itertuples(index=False, name=None)]
    assert ("alpha", 2, "n1", "ACCEPT", 3) in got


def test_puts_per_status(events_df, pdf):
    got = {r.status: r for r in A.puts_per_status(events_df).collect()}
    puts = pdf[pdf.kind == "put"].groupby("status").agg(
        puts=("t", "size"), bytes=("size", "sum"), mean=("latency_ms", "mean"), max=("latency_ms", "max"))
    assert set(got) == set(puts.index)
    for status, row in puts.iterrows():
        assert (got[status].puts, got[status].bytes) == (row["puts"], row["bytes"])
        assert got[status].mean_latency_ms == pytest.approx(row["mean"])
        assert got[status].max_latency_ms == pytest.approx(row["max"])


def test_time_span_faults_and_violations(events_df, pdf):
    spans = {r.run: r for r in A.time_span(events_df).collect()}
    for run, group in pdf.groupby("run"):
        assert (spans[run].events, spans[run].first_t, spans[run].last_t) == (
            len(group), group.t.min(), group.t.max())
        assert spans[run].span_ms == group.t.max() - group.t.min()
    (overall,) = A.time_span(events_df, by_run=False).collect()
    assert overall.events == len(pdf)
    got = _rows(A.faults(events_df), ["run", "t", "action", "targets"])
    expected = pdf[pdf.kind == "fault"]
    assert got == [(r.run, r.t, r.action, list(r.targets)) for r in expected.itertuples()]
    assert A.violations(events_df).count() == 0
