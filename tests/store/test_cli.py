"""``rocketlab commitlog dump`` and ``rocketlab consumequeue dump``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from rocketlab.errors import RocketlabError
from rocketlab.store import Message
from rocketlab.store.cli import register
from tests.store.helpers import GOLDEN, golden_message

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(argv, capsys):
    parser = argparse.ArgumentParser(prog="rocketlab")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture
def filled(open_store, tmp_path):
    store = open_store(mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=20 * 4)
    for i in range(8):
        store.put_message(golden_message(keys=f"{i:013d}", queue_id=i % 2))
    store.put_message(Message("Bin", bytes([0xFF, 0x00, 0x80]), tags="b"))
    store.shutdown()
    return tmp_path / "store"


def test_commitlog_dump_json_has_every_field(filled, capsys):
    code, lines = run(["commitlog", "dump", str(filled), "--json"], capsys)
    assert code == 0
    recs = [json.loads(line) for line in lines]
    assert [r["type"] for r in recs] == ["message"] * 6 + ["blank"] + ["message"] * 3
    first = recs[0]
    assert first["phy_offset"] == 0 and first["total_size"] == GOLDEN and first["magic_code"] == "0xDAA320A7"
    assert first["body"] == "Once, there was a chance for me!" and first["body_crc"] == 151131488
    assert first["body_crc_ok"] and first["properties"] == {"KEYS": "0000000000000", "TAGS": "TAG1"}
    assert first["born_host"] == "127.0.0.1:8123" and first["store_host"] == "127.0.0.1:10911"
    expected_keys = {
        "type", "file", "phy_offset", "total_size", "magic_code", "version", "body_crc", "body_crc_ok", "queue_id",
        "flag", "queue_offset", "physical_offset", "sys_flag", "born_timestamp", "born_host", "store_timestamp",
        "store_host", "reconsume_times", "prepared_transaction_offset", "body_length", "body", "body_base64",
        "topic", "properties", "tags", "keys", "tags_code", "msg_id",
    }  # fmt: skip
    assert set(first) == expected_keys
    assert recs[6] == {"type": "blank", "file": "00000000000000000000", "phy_offset": 6 * GOLDEN,
                       "total_size": 1024 - 6 * GOLDEN,
                       "magic_code": "0xCBD43194"}  # fmt: skip
    assert [r["queue_offset"] for r in recs if r["type"] == "message"][:8] == [0, 0, 1, 1, 2, 2, 3, 3]
    binary = recs[-1]
    assert binary["body"] is None and binary["body_base64"] == "/wCA"


def test_commitlog_dump_text_and_single_file(filled, capsys):
    code, lines = run(["commitlog", "dump", str(filled / "commitlog" / "00000000000000001024")], capsys)
    assert code == 0 and len(lines) == 3
    assert lines[0].startswith("phy=1024 ") and "queue_offset=3" in lines[0] and "topic=FooBar" in lines[0]


def test_commitlog_dump_stops_with_a_clear_error_at_a_damaged_record(filled, capsys):
    path = filled / "commitlog" / "00000000000000000000"
    with open(path, "r+b") as f:
        f.seek(GOLDEN * 2 + 4)
        f.write(b"\x00\x00\x00\x00")  # the third record's magic code
    with pytest.raises(RocketlabError, match=f"invalid record at phy offset {2 * GOLDEN}: bad magic code"):
        run(["commitlog", "dump", str(filled), "--json"], capsys)
    assert len(capsys.readouterr().out.splitlines()) == 2  # the records before the damage were printed


def test_consumequeue_dump(filled, capsys):
    code, lines = run(["consumequeue", "dump", str(filled), "--json"], capsys)
    units = [json.loads(line) for line in lines]
    assert code == 0 and len(units) == 9
    q1 = [u for u in units if u["topic"] == "FooBar" and u["queue_id"] == 1]
    assert [u["queue_offset"] for u in q1] == [0, 1, 2, 3] and q1[0]["phy_offset"] == GOLDEN
    assert all(u["size"] == GOLDEN and not u["filler"] for u in q1)
    code, lines = run(["consumequeue", "dump", str(filled / "consumequeue" / "FooBar" / "0")], capsys)
    assert lines[0] == f"FooBar:0 qoff=0 phy=0 size={GOLDEN} tags_code=2567159" and len(lines) == 4


def test_bad_paths_are_clear_errors(tmp_path, capsys):
    with pytest.raises(RocketlabError, match="no such file or directory"):
        run(["commitlog", "dump", str(tmp_path / "missing")], capsys)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "readme.txt").write_text("x")
    with pytest.raises(RocketlabError, match="not a commit log file"):
        run(["commitlog", "dump", str(odd)], capsys)


def test_module_entry_point_exits_2_on_bad_input(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rocketlab.cli", "commitlog", "dump", str(tmp_path / "nope")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.strip().endswith("no such file or directory")
    assert len(proc.stderr.strip().splitlines()) == 1
