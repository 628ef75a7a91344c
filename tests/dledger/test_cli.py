"""The DLedger command line: ``rocketlab dledger dump`` over real store files, and the ``dledger-*``
scenarios of ``rocketlab sim`` (exit 1 when an invariant broke - also where the profile is known to
break it, which is the lesson of ``dledger-figure8 --profile rocketmq-4.9.5``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.cli import main
from rocketlab.scenarios.dledger_group import SHORT_TIMERS, wait_settled
from rocketlab.sim import Cluster

SMALL_FILES = {**SHORT_TIMERS, "mapped_file_size_for_entry_data": 512, "mapped_file_size_for_entry_index": 32 * 64}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, list]:
    """A member's store after 20 appends of growing bodies: several 512-byte data files, blanks at their
    ends, entries of two terms (a leader change in the middle), a NOOP (the raft profile writes them)."""
    root = tmp_path_factory.mktemp("dl")
    c = Cluster.dledger(nodes=3, seed=5, profile="raft", data_dir=root, config=SMALL_FILES)
    wait_settled(c)
    for i in range(10):
        assert c.put(b"m%d" % i + b"." * i).code.name == "SUCCESS"
    c.crash(c.leader())
    wait_settled(c)
    for i in range(10, 20):
        assert c.put(b"m%d" % i + b"." * i).code.name == "SUCCESS"
    c.run_for(500)
    node = c.leader()
    entries = c.node(node).entries()
    c.close()
    return root / "nodes" / node, entries


def dump(capsys, *args: str) -> tuple[int, list[str], str]:
    code = main(["dledger", "dump", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_dump_prints_one_line_per_entry_across_data_files(store, capsys):
    member, entries = store
    assert len(list((member / "data").iterdir())) >= 3
    code, lines, err = dump(capsys, str(member))
    assert code == 0 and err == ""
    assert len(lines) == len(entries)
    for line, e in zip(lines, entries, strict=True):
        assert line.startswith(f"index={e.index} term={e.term} pos={e.pos} size={e.size} magic={e.magic}")
        assert f"body_length={len(e.body)}" in line and repr(e.body) in line
    assert any(" NOOP " in line for line in lines) and len({e.term for e in entries}) == 2


def test_dump_json_has_snake_case_fields_that_match_the_store(store, capsys):
    member, entries = store
    code, lines, _ = dump(capsys, str(member / "data"), "--json")
    records = [json.loads(line) for line in lines]
    assert code == 0 and [r["index"] for r in records] == [e.index for e in entries]
    first = records[0]
    assert set(first) == {"index", "term", "pos", "size", "magic", "noop", "channel", "chain_crc", "body_crc",
                          "body_length", "body", "body_base64", "file"}
    for r, e in zip(records, entries, strict=True):
        assert (r["term"], r["pos"], r["size"], r["body"].encode()) == (e.term, e.pos, e.size, e.body)
        assert r["file"] == f"{(e.pos // 512) * 512:020d}"


def test_dump_of_one_data_file_starts_at_its_offset(store, capsys):
    member, entries = store
    second = sorted((member / "data").iterdir())[1]
    code, lines, _ = dump(capsys, str(second), "--json")
    records = [json.loads(line) for line in lines]
    assert code == 0 and records and all(512 <= r["pos"] < 1024 for r in records)
    assert [r["index"] for r in records] == [e.index for e in entries if 512 <= e.pos < 1024]


def test_a_missing_path_is_one_line_and_exit_2(tmp_path, capsys):
    code, lines, err = dump(capsys, str(tmp_path / "nope"))
    assert code == 2 and lines == [] and err == f"rocketlab: {tmp_path / 'nope'}: no such file or directory\n"


def test_a_corrupted_entry_stops_the_dump_with_a_clear_error_after_the_good_ones(store, tmp_path, capsys):
    member, entries = store
    data = tmp_path / "data"
    data.mkdir()
    first = sorted((member / "data").iterdir())[0]
    raw = bytearray(first.read_bytes())
    third = entries[2]
    raw[third.pos:third.pos + 4] = (7).to_bytes(4, "big")  # a magic DLedger never writes
    (data / first.name).write_bytes(bytes(raw))
    code, lines, err = dump(capsys, str(tmp_path))
    assert code == 2 and len(lines) == 2
    assert err == f"rocketlab: {first.name}: invalid entry at pos {third.pos}: magic 7 is not one of (1, 2)\n"
    raw[third.pos:third.pos + 4] = (1).to_bytes(4, "big")
    raw[third.pos + 8:third.pos + 16] = (99).to_bytes(8, "big")  # an index out of sequence
    (data / first.name).write_bytes(bytes(raw))
    code, lines, err = dump(capsys, str(data))
    assert code == 2 and len(lines) == 2 and "index 99 follows index 1" in err


def test_files_that_are_not_dledger_data_are_refused(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("hi")
    code, _, err = dump(capsys, str(tmp_path))
    assert code == 2 and "not a DLedger data file" in err and err.count("\n") == 1
    (tmp_path / "data" / "notes.txt").unlink()
    (tmp_path / "data" / f"{0:020d}").write_bytes(bytes(512))
    (tmp_path / "data" / f"{512:020d}").write_bytes(bytes(100))
    code, _, err = dump(capsys, str(tmp_path))
    assert code == 2 and "data files differ in size (100, 512 bytes)" in err


def test_an_empty_store_dumps_nothing(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / f"{0:020d}").write_bytes(bytes(512))
    assert dump(capsys, str(tmp_path)) == (0, [], "")


def test_module_entry_point_exits_2_on_bad_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "dledger", "dump", str(tmp_path / "x")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip().endswith("no such file or directory")


# ---------------------------------------------------------------------- rocketlab sim dledger-*
def sim(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["sim", *args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def test_sim_lists_the_dledger_scenarios(capsys):
    assert main(["sim", "--list"]) == 0
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert {"dledger-election", "dledger-figure8", "dledger-247", "dledger-churn"} <= set(names)


def test_sim_figure8_under_rocketmq_4_9_5_records_the_lost_entry_and_exits_1(tmp_path, capsys):
    out = tmp_path / "f8"
    code, summary, _ = sim(capsys, "dledger-figure8", "--profile", "rocketmq-4.9.5", "--out", str(out))
    assert code == 1 and summary["committed_entry_lost"] is True and summary["x_committed"] is True
    assert set(summary["violated"]) == {"leader_completeness", "committed_entries_stable"}
    violations = [e for e in events(out) if e["kind"] == "violation"]
    assert len(violations) == summary["violations"] > 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["profile"] == "dledger-0.3.1.2" and meta["violations"] == len(violations)
    assert any(line.endswith("crash " + summary["names"]["S1"]) for line in summary["schedule"])


def test_sim_figure8_under_raft_loses_nothing_and_is_deterministic(tmp_path, capsys):
    code, summary, _ = sim(capsys, "dledger-figure8", "--profile", "raft", "--seed", "4", "--out", str(tmp_path / "a"))
    assert code == 0 and summary["committed_entry_lost"] is False and summary["violations"] == 0
    assert sim(capsys, "dledger-figure8", "--profile", "raft", "--seed", "4", "--out", str(tmp_path / "b"))[0] == 0
    assert (tmp_path / "a" / "events.jsonl").read_bytes() == (tmp_path / "b" / "events.jsonl").read_bytes()


@pytest.mark.parametrize(("profile", "rejoined"), [("rocketmq-4.9.5", False), ("raft", True)])
def test_sim_247_shows_the_stuck_follower_only_under_rocketmq_4_9_5(profile, rejoined, tmp_path, capsys):
    code, summary, _ = sim(capsys, "dledger-247", "--profile", profile, "--out", str(tmp_path / profile))
    assert code == 0 and summary["follower_rejoined"] is rejoined
    stuck = [r for r in summary["nodes"] if r["role"] == "CANDIDATE"]
    assert (len(stuck) == 1) is not rejoined


def test_sim_election_with_defaults_reports_the_failover(tmp_path, capsys):
    code, summary, _ = sim(capsys, "dledger-election", "--nodes", "5", "--seed", "3", "--out", str(tmp_path / "e"))
    assert code == 0 and summary["new_leader"] != summary["first_leader"]
    assert 4000 <= summary["failover_ms"] <= 12_000 and summary["new_term"] > summary["first_term"]
    assert summary["acked_on_new_leader"] == summary["acked_before"] == 3 and summary["write_after"] == "SUCCESS"
    assert [r["alive"] for r in summary["nodes"]].count(False) == 1


@pytest.mark.parametrize("network", ["reliable", "unreliable"])
def test_sim_churn_keeps_acknowledged_writes(network, tmp_path, capsys):
    code, summary, _ = sim(capsys, "dledger-churn", "--network", network, "--duration", "2800", "--seed", "2",
                           "--out", str(tmp_path / network))
    assert code == 0 and summary["acked"] > 0 and summary["acked_missing"] == 0 and summary["converged"]


@pytest.mark.parametrize(("args", "message"), [
    (["dledger-figure8", "--profile", "4.x"], "profile: unknown profile '4.x', expected one of dledger-0.3.1.2, dledger-0.3.2, raft, "
     "rocketmq-4.9.5 (= dledger-0.3.1.2)"),
    (["dledger-figure8", "--nodes", "3"], "this scenario is written for 5 members, not 3"),
    (["dledger-247", "--nodes", "2"], "this scenario needs at least 3 members, got 2"),
    (["dledger-churn", "--network", "reordering"], "this scenario runs on short timers (300 ms RPC timeout); "
     "the reordering network holds replies up to 2.2 s: use reliable, unreliable or long-delays"),
])
def test_sim_dledger_bad_arguments_are_exit_2(args, message, tmp_path, capsys):
    code = main(["sim", *args, "--out", str(tmp_path / "x")])
    assert code == 2 and capsys.readouterr().err == f"rocketlab: {message}\n"
