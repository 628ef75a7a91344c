"""What labs/08_client_failover.ipynb's prose says, pinned on the values its cells compute (with the notebook's own
SEED): the route, the round robin, the failover's order of events, the consumers' side, the duplicates and why,
long polling. The notebook itself runs headless in tests/test_labs.py; section 7's table (nothing acknowledged
lost in any of the three faults) is pinned with the same seed by tests/scenarios/test_client_failover.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from rocketlab.labs_support import lab08 as lab
from rocketlab.scenarios import client_failover as cf
from tests.scenarios.test_client_failover import SEED as SCENARIO_SEED

NOTEBOOK = Path(__file__).resolve().parents[1] / "labs" / "08_client_failover.ipynb"


def notebook_seed() -> int:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code")
    return int(re.search(r"^SEED = (\d+)$", setup, re.M).group(1))


SEED = notebook_seed()


@pytest.fixture(scope="module")
def crashed():
    c = lab.start(SEED)
    before = lab.first_sends(c)
    master, crash_ms = lab.crash(c)
    c.run_for(70_000)  # as the notebook's cell
    yield c, before, master, crash_ms
    c.close()


@pytest.fixture(scope="module")
def left():
    c = lab.start(SEED)
    at = lab.leave(c, "k1")
    c.run_for(40_000)
    yield c, at
    c.close()


def test_section_1_the_route_names_a_master_per_broker_and_dledger_slaves_by_their_ids():
    c = lab.start(SEED)
    try:
        assert lab.layout(c)["consumers (group CG)"] == ["k0", "k1", "k2"]
        rows = {r["brokerName"]: r for r in lab.route_table(c)}
        assert set(rows) == {"broker-a", "broker-b", "broker-c"}
        for name, row in rows.items():
            assert row["master (id 0)"] != "-" and row["read queues"] == row["write queues"] == 4
            if name != "broker-c":  # a DLedger slave registers with the digits of its selfId plus one
                for part in row["slaves"].split(", "):
                    broker_id, addr = part.split(": ")
                    assert int(broker_id) == int(addr.split(":")[0][1:]) + 1
        assert lab.client_timers()["pollNameServerInterval"] == lab.client_timers()["heartbeatBrokerInterval"]
    finally:
        c.close()


def test_section_2_sends_go_round_every_queue_of_every_broker(crashed):
    _, before, _, _ = crashed
    queues = [(s["broker"], s["queue"]) for s in before]
    assert len(set(queues)) == len(queues) == 12 and all(s["status"] == "SEND_OK" for s in before)


def test_section_3_the_failover_in_the_order_the_prose_reads_it(crashed):
    c, _, master, crash_ms = crashed
    rows = lab.failover_timeline(c, crash_ms)
    what = [r["what"] for r in rows]
    assert what[0].startswith("the name server drops the master")
    order = ["a send to the dead master fails", "... and its retry is stored", "a survivor stands",
             "the new master is MASTER", "it registers with the name server", "the producer reads the new route",
             "the producer's first send stored by broker-a again"]
    positions = [next(i for i, w in enumerate(what) if w.startswith(o)) for o in order]
    assert positions == sorted(positions)
    t = {o: rows[p]["t"] for o, p in zip(order, positions, strict=True)}
    assert t["it registers with the name server"] - t["the new master is MASTER"] < 50  # "at once"
    assert t["the producer reads the new route"] > t["it registers with the name server"]
    out = lab.send_outcomes(c, since_ms=crash_ms)
    assert out["failed attempts"] > 0 and out["failed attempts by broker"] == {"broker-a": out["failed attempts"]}
    assert out["failed attempts by reason"] == {"connect": out["failed attempts"]}
    assert out["stored on a retry"] == out["failed attempts"] and out["sends the application saw fail"] == 0
    assert master in ("a0", "a1", "a2") and cf.master_of(c, "a") != master


def test_section_4_pulls_wait_their_timeout_and_a_partial_group_owns_a_queue_twice(crashed):
    c, _, _, crash_ms = crashed
    after = lab.consumer_after_failover(c, crash_ms)
    assert after["pulls that waited their 30 s timeout"] > 0
    learned = int(after["the new master learns the group (a heartbeat)"].strip("+ ms"))
    refreshed = min(e["t"] for e in c.events if e["kind"] == "client_route" and e["node"][0] == "k"
                    and e["t"] > crash_ms and f"broker-a@{cf.master_of(c, 'a')}:10911" in e["targets"])
    assert 0 < crash_ms + learned - refreshed <= 1_100  # "a second later, on the same period"
    dups = lab.duplicates_table(c)
    assert dups and {d["why"] for d in dups} == {"owned twice"}
    spans = lab.owners(c, dups[0]["queue"])
    brief = [s for s in spans if s["until"] is not None]
    assert brief and all(s["until"] - s["from"] < 100 for s in brief)  # "for a few milliseconds"
    committed = cf.committed_at(c.events, brief[0]["from"])
    broker, _, qid = dups[0]["queue"].rpartition(":")
    assert committed[(broker, int(qid))] <= dups[0]["queue offset"]  # it started from the committed offset


def test_section_4_not_every_seed_shows_a_queue_owned_twice():
    c = lab.start(1)
    try:
        lab.crash(c)
        c.run_for(70_000)
        assert lab.duplicates_table(c) == []
    finally:
        c.close()


def test_section_5_what_a_leaving_consumer_had_not_committed_is_consumed_again(left):
    c, at = left
    rows = lab.commits_at_crash(c, "k1", at)
    assert rows and all(r["consumed again"] == r["consumed up to"] - r["committed"] > 0 for r in rows)
    dups = lab.duplicates_table(c)
    assert {d["why"] for d in dups} == {"redelivered"} and len(dups) == sum(r["consumed again"] for r in rows)
    assert sorted(d["uniq key"] for d in dups) == cf.uncommitted_at_fault(c.events, at)


def test_section_6_a_held_pull_waits_about_the_time_between_two_messages_of_its_queue(crashed):
    c, _, _, _ = crashed
    polling = lab.long_polling(c)
    assert polling["pulls held"] >= polling["woken by a message"] > 0 and polling["woken empty (time up)"] == 0
    between = 100 * 12  # one send every 100 ms, round the 12 queues
    assert abs(polling["median wait for a message (ms)"] - between) <= between * 0.1


def test_section_7_is_pinned_with_the_same_seed():
    assert SCENARIO_SEED == SEED


def test_section_7_a_refused_message_is_retried_at_growing_delays_then_dead_lettered():
    c = lab.retry_run(SEED)
    try:
        journey = lab.retry_journey(c)
        consumed = [r for r in journey if r["event"] == "client_consume"]
        assert [r["status"] for r in consumed] == ["RECONSUME_LATER"] * 3
        assert [r["reconsume times"] for r in consumed] == [0, 1, 2]  # maxReconsumeTimes 2: two retries
        levels = [r["delay level"] for r in journey if r["event"] == "schedule"]
        assert levels == [3, 4]  # 3 + reconsume times
        delays = lab.delay_levels()
        waits = [b["t"] - a["t"] for a, b in zip(consumed, consumed[1:], strict=False)]
        assert all(0 <= w - delays[level] < 100 for w, level in zip(waits, levels, strict=True))
        assert [r["event"] for r in journey].count("dlq") == 1
        dlq = next(r for r in journey if r["event"] == "dlq")
        assert dlq["t"] > consumed[-1]["t"] and dlq["topic"] == "%DLQ%CG"
        assert all(r["status"] is True for r in journey if r["event"] == "client_send_back")
    finally:
        c.close()


def _solution(grade_id: str) -> object:
    """The value a check's answer cell gives (``lab08_failed = 28  # SOLUTION``)."""
    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return ast.literal_eval(cell.source.split("=", 1)[1].split("#", 1)[0].strip())


def test_section_10_the_checks_answers_are_the_runs_facts(crashed, left):
    """Questions 1 and 3 of "Check yourself" are facts of sections 3 and 5's runs: their answers are what the cells
    compute (question 2's letter, a retry on another broker, is section 3's ``failed attempts by broker``)."""
    c, _, _, crash_ms = crashed
    out = lab.send_outcomes(c, since_ms=crash_ms)
    assert _solution("lab08-check-1") == out["failed attempts"]
    assert _solution("lab08-check-2") == "b" and out["stored on a retry"] == out["failed attempts"]
    assert set(out["failed attempts by broker"]) == {"broker-a"}
    c2, _ = left
    assert _solution("lab08-check-3") == len(lab.duplicates_table(c2))
