"""The trust boundary under attack: each submission of ``tests/grading/hostile/`` with its expected outcome.

The submissions are lab 05's (fast: two pure functions) unless named otherwise. Where the
kernel refuses namespaces the tests that rely on them skip with the reason (and fail under ``CI=true``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocketlab.grading import LABS, grade, registry
from rocketlab.grading.results import gradescope, validate
from rocketlab.grading.sandbox import namespaces_available
from rocketlab.grading.sandbox_codec import CodecError, Returned, decode, encode
from rocketlab.grading.sandbox_static import delegations, similarity

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = Path(__file__).parent / "solutions"
FAST = ["lab05.phy_offset/offset_table", "lab05.which_log/log_table"]


def needs_namespaces() -> None:
    if not namespaces_available():
        if os.environ.get("CI") == "true":
            pytest.fail("unshare cannot create PID and mount namespaces here, and CI must test the sandbox")
        pytest.skip("unshare cannot create PID and mount namespaces on this machine")


def submission(tmp_path: Path, name: str, lab: str = "lab05", **marks: str) -> Path:
    text = (HOSTILE / f"{name}.py").read_text()
    for key, value in marks.items():
        text = text.replace(f"@{key}@", value)
    folder = tmp_path / "submitted"
    folder.mkdir(exist_ok=True)
    path = folder / LABS[lab].exercise_file
    path.write_text(text)
    return path


def processes_naming(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# ---------------------------------------------------------------------- full marks without working code
def test_forged_events_and_an_exit_at_import_score_nothing(tmp_path):
    report = grade("lab05", submission(tmp_path, "forged_events"))
    assert report.score == 0 and len(report.tests) == len([t for t in registry.tests_of("lab05", None) if not t.hidden]) > 0
    assert all("did not import" in t.message for t in report.tests), [t.message for t in report.tests]


def test_swapping_the_code_of_tests_checkers_and_references_changes_nothing(tmp_path):
    report = grade("lab05", submission(tmp_path, "code_swap"))
    assert report.score == 0, [(t.name, t.message) for t in report.tests]
    assert "cases wrong" in report.tests[0].message


def test_delegating_to_the_kits_reference_fails_that_exercise_saying_so(tmp_path):
    report = grade("lab03", submission(tmp_path, "delegate_lab03", "lab03"))
    assert report.score == 0
    assert all("delegating to the reference earns nothing" in t.message for t in report.tests)
    report = grade("lab05", submission(tmp_path, "delegate_attribute"), only=FAST)
    assert report.score == 0 and all("the kit's own" in t.message for t in report.tests), report.tests


def test_the_static_check_names_each_way_and_spares_honest_files():
    source = (HOSTILE / "delegate_attribute.py").read_text()
    assert set(delegations(source, "lab05")) == {"lab05.phy_offset", "lab05.which_log"}
    for lab in LABS:
        assert delegations((SOLUTIONS / LABS[lab].exercise_file).read_text(), lab) == {}, lab
        assert delegations((ROOT / "labs" / "exercises" / LABS[lab].exercise_file).read_text(), lab) == {}, lab


def test_near_copies_of_the_reference_score_high_in_the_similarity_report():
    import inspect

    from rocketlab.dledger.entry_pusher import quorum_index

    copy = inspect.getsource(quorum_index).replace("marks", "m").replace("index", "i").replace("quorum_i", "quorum_index")
    assert similarity(copy, "lab04.quorum_index") > 0.95
    own = (SOLUTIONS / LABS["lab02"].exercise_file).read_text()  # written its own way: far from the reference
    assert similarity(own, "lab02.encode_record") < 0.5


def test_answers_that_equal_anything_earn_no_table_points(tmp_path):
    report = grade("lab05", submission(tmp_path, "always_equal"), only=FAST)
    assert report.score == 0, [(t.name, t.message) for t in report.tests]
    assert all("cases wrong" in t.message for t in report.tests)


def test_the_codec_rebuilds_plain_data_and_kit_classes_only():
    from rocketlab.dledger.elector_decisions import VoteDecision
    from rocketlab.dledger.protocol import VoteResult

    value = VoteDecision(3, VoteResult.REJECT_EXPIRED_LEDGER_TERM, 4)
    assert decode(json.loads(json.dumps(encode(value)))) == value
    assert decode(encode((1, b"x", {2: None}, frozenset({"a"})))) == (1, b"x", {2: None}, frozenset({"a"}))

    class Mine:
        def __init__(self):
            self.check, self.term = 1, 2

        def __eq__(self, other):
            return True

    got = decode(encode(Mine()))
    assert isinstance(got, Returned) and got.check == 1 and got != value
    for forged in ({"$dc": "rocketlab.grading.runner:TestResult", "f": {}}, {"$dc": "builtins:object", "f": {}},
                   {"$kit": "os:_wrap_close", "f": {}}, {"$const": "rocketlab.plugs:_active"}, {"$x": 1}, {}, "\x00"[:0] or b"x"):
        with pytest.raises(CodecError):
            decode(forged)


def test_a_batch_sends_an_unchanging_object_once_and_a_changing_one_in_full():
    """The judge's batch (``memo``) writes a frozen object it meets again as a ``$ref`` to its first
    encoding; the sandbox (``refs``) decodes it once and shares it, as the judge's cases did. A list or a
    dict met again is sent again in full and decoded as a copy of its own (a learner's function that
    changes its argument changes no other case). The judge, decoding the sandbox, reads no references."""
    from rocketlab.dledger.elector_decisions import VoteView
    from rocketlab.dledger.protocol import DLedgerResponseCode

    view = VoteView("n0", frozenset({"n0", "n1", "n2"}), 3, None, None, 4, 2, False)
    marks = {"n0": 4, "n1": 3}
    calls = [(view, DLedgerResponseCode.SUCCESS, marks, i) for i in range(50)]
    data = json.loads(json.dumps(encode(calls, memo={})))
    text = json.dumps(data)
    assert text.count('"$ref"') == 98 and text.count('"$def"') == 2 and text.count('"n1": 3') == 0
    assert text.count('"$d"') == 50  # the dict, in full each time
    got = decode(data, refs={})
    assert [tuple(c) for c in got] == calls
    assert all(c[0] is got[0][0] for c in got) and len({id(c[2]) for c in got}) == 50
    plain = json.loads(json.dumps(encode(calls)))  # without a batch's memo: no references at all
    assert "$ref" not in json.dumps(plain) and decode(plain) == calls
    with pytest.raises(CodecError):
        decode(data)  # the judge's reading: a reference is an unknown value
    for forged in ({"$ref": 0}, {"$ref": "0"}, [{"$t": [1], "$def": 0}, {"$ref": 1}]):
        with pytest.raises(CodecError):
            decode(forged, refs={})


# ---------------------------------------------------------------------- the grader keeps going
def test_garbage_on_the_channel_fails_that_test_and_the_others_are_graded(tmp_path):
    out = tmp_path / "results.json"
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--submission",
                          str(submission(tmp_path, "garbage_channel")), "--json", str(out), "--only", FAST[0],
                          "--only", FAST[1]], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    data = json.loads(out.read_text())
    assert validate(data) == []
    garbage, other = data["tests"]
    assert garbage["status"] == "failed" and "garbage on the grader's channel" in garbage["output"]
    assert other["status"] == "passed"


def test_a_detached_grandchild_is_killed_and_cannot_reach_the_results(tmp_path):
    needs_namespaces()
    out = tmp_path / "out" / "results.json"
    out.parent.mkdir()
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--submission",
                          str(submission(tmp_path, "grandchild", TARGET=str(out))), "--json", str(out), "--only",
                          FAST[0]], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    before = out.read_text()
    time.sleep(6)
    assert out.read_text() == before and json.loads(before)["score"] == 2
    assert processes_naming(str(out)) == []


def test_memory_bombs_hit_the_address_space_limit(tmp_path):
    report = grade("lab05", submission(tmp_path, "memory_bomb"), only=FAST)
    bomb, other = report.tests
    assert not bomb.passed and "MemoryError" in bomb.message, bomb.message
    assert other.passed


def test_process_bombs_are_bounded_and_killed_whole(tmp_path):
    needs_namespaces()
    marker = str(tmp_path / "bomb-marker")
    report = grade("lab05", submission(tmp_path, "process_bomb", TARGET=marker), only=FAST)
    bomb, other = report.tests
    assert not bomb.passed and ("BlockingIOError" in bomb.message or "Resource temporarily" in bomb.message), bomb
    assert other.passed
    time.sleep(1)
    assert processes_naming(marker) == []


def test_output_written_to_descriptor_2_is_counted_and_cut(tmp_path):
    report = grade("lab05", submission(tmp_path, "output_bomb"), only=FAST)
    loud = report.tests[0]
    assert loud.passed and loud.printed_chars >= 64 * 1024 * 1024 and len(loud.printed) <= 2_000


def test_huge_exception_texts_are_cut(tmp_path):
    out = tmp_path / "results.json"
    report = grade("lab05", submission(tmp_path, "huge_exception"), only=FAST)
    assert report.score == 0 and all("characters, cut" in t.message for t in report.tests)
    from rocketlab.grading.results import write_results

    write_results(report, out)
    assert out.stat().st_size < 50_000


def test_a_sleep_at_import_costs_the_import_limit_only(tmp_path):
    t0 = time.monotonic()
    report = grade("lab05", submission(tmp_path, "sleep_at_import"), only=FAST, import_time_limit_s=5)
    assert time.monotonic() - t0 < 30
    assert report.score == 0 and all("did not finish importing within 5 s" in t.message for t in report.tests)


def test_a_loop_mid_test_is_stopped_and_the_rest_graded(tmp_path):
    report = grade("lab05", submission(tmp_path, "loop_mid_test"), only=FAST, time_limit_s=3)
    looped, other = report.tests
    assert not looped.passed and re.search(r"stopped after 3\.\d s of your code's CPU time", looped.message), looped
    assert other.passed


def test_the_sandbox_cannot_read_hidden_tests_other_submissions_or_results(tmp_path):
    needs_namespaces()
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "extra.py").write_text("SECRET_TEST = 1\n")
    other = tmp_path / "submitted" / "other.py"
    other.parent.mkdir()
    other.write_text("OTHER_SUBMISSION = 1\n")
    results = tmp_path / "results" / "results.json"
    results.parent.mkdir()
    results.write_text("RESULTS = 1\n")
    secret = "|".join(str(p) for p in (hidden / "extra.py", other, results, "/root/.bashrc"))
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:  # the grader's side of the machine's loopback
        port = str(server.getsockname()[1])
        report = grade("lab05", submission(tmp_path, "snoop", SECRET=secret, PORT=port), only=[FAST[0]],
                       tests_dir=hidden, hide=[results.parent])
    message = report.tests[0].message
    assert "NET DENIED" in message, message
    assert "READ" not in message and message.count("DENIED FileNotFoundError") == 4, message
    assert "ROCKETLAB" not in message and "PIDS " in message
    pids = int(message.split("PIDS ")[1].split()[0])
    assert pids <= 3, message  # its own namespace: itself (and at most the first process)
    if os.geteuid() == 0:
        assert "UID 65534" in message


# ---------------------------------------------------------------------- bulk mode
def test_bulk_mode_grades_everyone_in_parallel_and_accounts_for_every_entry(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    good = (SOLUTIONS / LABS["lab05"].exercise_file).read_text()
    (subs / "alice.py").write_text(good)
    (subs / "alice").mkdir()
    (subs / "alice" / LABS["lab05"].exercise_file).write_text((HOSTILE / "always_equal.py").read_text())
    (subs / "bob.py").write_text((HOSTILE / "forged_events.py").read_text())
    (subs / "carol").mkdir()
    (subs / "carol" / "lab5.py").write_text(good)
    (subs / "dave.txt").write_text(good)
    (subs / "erin.py").write_text((HOSTILE / "garbage_channel.py").read_text())
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "extra.py").write_text(HIDDEN_TEST.replace("+ 47", "+ 48"))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab05", "--submissions", str(subs), "--out",
                          str(out), "--jobs", "2", "--only", FAST[0], "--only", FAST[1], "--tests", str(hidden),
                          "--only", "lab05.phy_offset/far_offsets"], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr  # carol and dave: not graded
    import csv

    rows = {r["submission"]: r for r in csv.DictReader((out / "summary.csv").open())}
    assert set(rows) == {"alice.py", "alice/", "bob", "carol", "dave.txt", "erin"}
    assert rows["alice.py"]["score"] == "10" and "name clash" in rows["alice.py"]["note"]
    assert rows["alice.py"]["lab05.phy_offset/far_offsets"] == "5"  # the instructor's summary: hidden included
    alice = json.loads((out / "alice.py" / "results.json").read_text())
    assert "score" not in alice and "far_offsets" not in alice["output"]
    assert [t["visibility"] for t in alice["tests"]] == ["visible", "visible", "after_published"]
    assert rows["alice/"]["score"] == "0" and "name clash" in rows["alice/"]["note"]
    assert rows["bob"]["score"] == "0"
    assert rows["erin"]["score"] == "3"  # which_log right, phy_offset's garbage failed
    assert "no lab05_rocketmq_on_dledger.py in carol/ (it holds: lab5.py)" in rows["carol"]["note"]
    assert "not a Python file" in rows["dave.txt"]["note"]
    for folder in ("alice.py", "alice", "bob", "carol", "dave.txt", "erin"):
        text = (out / folder / "results.json").read_text()
        assert validate(json.loads(text)) == [] and str(tmp_path) not in text, folder


HIDDEN_TEST = '''
from rocketlab.grading import graded


@graded("lab05.phy_offset", points=5)
def far_offsets(ctx):
    """Offsets beyond 4 GiB."""
    assert ctx.impl(2**33) == 2**33 + 47, "wrong beyond 4 GiB"
'''


def test_hidden_tests_stay_invisible_until_published(tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "extra.py").write_text(HIDDEN_TEST)
    report = grade("lab05", SOLUTIONS / LABS["lab05"].exercise_file, only=[FAST[0], "lab05.phy_offset/far_offsets"],
                   tests_dir=hidden)
    hidden_test = [t for t in report.tests if t.hidden]
    assert len(hidden_test) == 1 and not hidden_test[0].passed
    data = gradescope(report)
    assert validate(data) == [] and "score" not in data
    assert data["output"].startswith("lab05: public tests: 2/2 points, 1/1 tests passed")
    assert "far_offsets" not in data["output"] and data["extra_data"]["max_score"] == 2
    assert [t["visibility"] for t in data["tests"]] == ["visible", "after_published"]


def test_without_namespaces_the_sandbox_still_grades_and_kills_its_session(tmp_path, monkeypatch):
    """``ROCKETLAB_SANDBOX=plain``: what runs where the kernel refuses namespaces (a new session, the same
    limits): a complete solution gets full marks, garbage and exits fail their test only."""
    monkeypatch.setenv("ROCKETLAB_SANDBOX", "plain")
    report = grade("lab05", SOLUTIONS / LABS["lab05"].exercise_file, only=FAST)
    assert report.all_passed, report.tests
    report = grade("lab05", submission(tmp_path, "garbage_channel"), only=FAST)
    assert [t.passed for t in report.tests] == [False, True]
    report = grade("lab05", submission(tmp_path, "memory_bomb"), only=FAST)
    assert "MemoryError" in report.tests[0].message and report.tests[1].passed


def test_delegating_through_the_kits_component_reaches_the_submission_again(tmp_path):
    """The component's override point holds the learner's own function inside the sandbox too, so calling the
    kit's class from the submission is a recursion, never the kit's answer."""
    assert delegations((HOSTILE / "delegate_component.py").read_text(), "lab08") == {}  # the static check misses it
    report = grade("lab08", submission(tmp_path, "delegate_component", "lab08"),
                   only=["lab08.allocate/allocation_table", "lab08.allocate/group_covers_every_queue_once"])
    assert report.tests and report.score == 0, [(t.name, t.score, t.message) for t in report.tests]
