"""A course from one source: ``rocketlab assign``, the question cells, ``rocketlab submit`` and bulk grading of
bundles (the Gradescope round trip is in ``test_autograder.py``, with the wheel).

The student version is searched for the graders' own solutions (``tests/grading/solutions/``: their
distinctive lines) and for the labs' model answers, and one student notebook runs headless as the labs do.
A one-source exercise file (the solution between nbgrader's markers) grades full marks as the source and
"not implemented" as the student version. A course source with checks (auto-graded) and written questions
goes through a class: bundles made by ``rocketlab submit``, a malformed one, a folder; the checks join the
score, each learner gets an answer sheet, and an entry that could not be graded has an empty score.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from rocketlab.cli import main
from rocketlab.grading.assign import distinctive_lines
from rocketlab.grading.collect import _model
from rocketlab.grading.questions import (
    ANSWER_STUB,
    answer_values,
    check_question,
    grade_checks,
    kind,
    questions,
    read_notebook,
    source,
    strip_markdown,
    student_notebook,
    written_question,
)

CHECKOUT = Path(__file__).resolve().parents[2]
LABS_DIR = CHECKOUT / "labs"
SOLUTIONS = CHECKOUT / "tests" / "grading" / "solutions"
QUESTIONS = {"00_tour.ipynb": 5, "01_master_slave.ipynb": 11, "02_commitlog.ipynb": 3, "03_dledger_election.ipynb": 6,
             "04_dledger_replication.ipynb": 4, "05_rocketmq_on_dledger.ipynb": 3, "06_controller_mode.ipynb": 3,
             "07_spark.ipynb": 3, "08_client_failover.ipynb": 5}
"""The labs' questions per notebook: the converted "Question" and "Check yourself" prompts (facts as checks)."""


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("course")
    assert main(["assign", "--out", str(out), "--no-autograder"]) == 0
    return out / "student" / "labs"


def test_the_labs_questions_are_nbgrader_cells_with_model_answers():
    for name, count in QUESTIONS.items():
        qs = questions(read_notebook(LABS_DIR / name), name)
        assert len(qs) == count, (name, [q.grade_id for q in qs])
        for q in qs:
            assert q.kind in ("written", "check") and q.points == 1 and q.prompt.strip()
            assert q.grade_id.startswith(f"lab{name[:2]}-"), q
            if q.kind == "written":
                assert q.answer.startswith("<details><summary>Answer</summary>") and len(q.answer) > 80, q
            else:  # a fact: graded by its hidden asserts, whose messages never give the answer
                assert "### BEGIN HIDDEN TESTS" in q.answer and "assert" in q.answer, q
    text = "".join(p.read_text() for p in LABS_DIR.glob("*.ipynb"))
    assert "**Question.**" in text and "<summary>Answers</summary>" not in text  # every old block converted


def test_the_student_version_holds_no_solution_and_no_answer(student):
    texts = {p: p.read_text() for p in student.rglob("*") if p.is_file()}
    assert {p.name for p in texts} >= {*QUESTIONS, "lab03_dledger_election.py", "lab07_spark.py"}
    for solution in sorted(SOLUTIONS.glob("*.py")):
        lines = distinctive_lines(solution)
        assert len(lines) >= 4, (solution.name, lines)
        leaked = [(p.name, line) for line in lines for p, text in texts.items() if line in text]
        assert not leaked, leaked
    for name in QUESTIONS:
        src = read_notebook(LABS_DIR / name)
        nb = nbformat.read(student / name, as_version=4)
        nbformat.validate(nb)
        written = [c for c in nb.cells if kind(c) == "written"]
        assert len(written) == sum(q.kind == "written" for q in questions(src)) and all(c.source == ANSWER_STUB
                                                                                      for c in written)
        for q in questions(src):
            if q.kind == "written":
                model = q.answer.split("</summary>", 1)[1].strip().removesuffix("</details>").strip()
                assert model[:60] not in texts[student / name], (name, q.grade_id)
            else:  # a check's hidden asserts stay in the source
                assert q.answer.split("### BEGIN HIDDEN TESTS", 1)[1].strip()[:60] not in texts[student / name]
            assert q.prompt.splitlines()[0] in nb.cells[[c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                                                          for c in nb.cells].index(f"{q.grade_id}-prompt")].source
        assert "<details><summary>Answer" not in texts[student / name]


def test_a_student_notebook_still_runs(student, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("ROCKETLAB_FAST", "1")
    nb = nbformat.read(student / "02_commitlog.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(student)}}).execute()
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]
    outputs = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for c in nb.cells
                      for o in c.get("outputs", []))
    assert "lab02.encode_record: 0/8 points" in outputs  # check() ran on the template


ONE_SOURCE = '''"""Lab 05 exercises, one source: the solution sits between nbgrader's markers."""

from __future__ import annotations


def phy_offset(entry_pos: int) -> int:
    """The physical offset of the message in the DLedger entry at ``entry_pos``."""
    ### BEGIN SOLUTION
    return entry_pos + 48
    ### END SOLUTION


def which_log(offset: int, divided_commitlog_offset: int, committed_pos: int) -> str | None:
    """Which log serves a read at physical ``offset``."""
    ### BEGIN SOLUTION
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
    ### END SOLUTION
'''


def test_a_one_source_exercise_is_full_marks_as_source_and_a_template_for_students(tmp_path, capsys):
    src = tmp_path / "source"
    (src / "exercises").mkdir(parents=True)
    (src / "exercises" / "lab05_rocketmq_on_dledger.py").write_text(ONE_SOURCE)
    code, out, err = _cli(capsys, "assign", "--source", str(src), "--out", str(tmp_path / "out"), "--no-autograder",
                          "--solutions", str(SOLUTIONS))
    assert code == 0, err
    made = (tmp_path / "out" / "student" / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py").read_text()
    assert "raise NotImplementedError()" in made and "48" not in made and "dledger\"" not in made, made
    code, out, _ = _cli(capsys, "grade", "lab05", "--submission", str(src / "exercises" / "lab05_rocketmq_on_dledger.py"))
    assert code == 0 and "lab05: 15/15 points" in out, out
    code, out, _ = _cli(capsys, "grade", "lab05", "--submission",
                        str(tmp_path / "out" / "student" / "labs" / "exercises" / "lab05_rocketmq_on_dledger.py"),
                        "--only", "lab05.phy_offset")
    assert code == 1 and "phy_offset is not implemented yet" in out, out


def test_assign_refuses_a_student_version_that_would_hold_a_solution(tmp_path, capsys):
    src = tmp_path / "source"
    (src / "exercises").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "lab05_rocketmq_on_dledger.py", src / "exercises")  # no markers: all of it shows
    code, out, err = _cli(capsys, "assign", "--source", str(src), "--out", str(tmp_path / "out"), "--no-autograder",
                          "--solutions", str(SOLUTIONS))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "would hold" in err and "return entry_pos + 48" in err and "BEGIN SOLUTION" in err
    assert not (tmp_path / "out" / "student").exists()


# --- checks and written questions through a class ------------------------------------------------------

def _course_source(tmp_path: Path) -> Path:
    """Lab 05's notebook with two checks (a choice, a number with a tolerance) and a written question."""
    src = tmp_path / "course"
    src.mkdir()
    nb = read_notebook(LABS_DIR / "05_rocketmq_on_dledger.ipynb")
    nb["cells"] = [c for c in nb["cells"] if "nbgrader" not in c.get("metadata", {})]  # only this test's questions
    nb["cells"] += check_question("lab05-which-log", "Which log serves offset 10 when the divide is at 100? "
                                  "(a) the old CommitLog (b) DLedger's", "lab05_which_log", "a",
                                  'assert lab05_which_log == "a", "below the divide: the old CommitLog"', points=2)
    nb["cells"] += check_question("lab05-header", "How many bytes is a DLedger entry's header?", "lab05_header", 48,
                                  "assert abs(lab05_header - 48) <= 0.5", points=1)
    nb["cells"] += written_question("lab05-why", "Why is the physical offset pos + 48?",
                                    "The record sits behind DLedger's own entry header, forty-eight bytes long.", points=3)
    (src / "05_rocketmq_on_dledger.ipynb").write_text(json.dumps(nb, indent=1))
    return src


def _answered(student_nb: Path, which: object, header: object, why: str) -> dict:
    nb = read_notebook(student_nb)
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid == "lab05-which-log":
            cell["source"] = f"lab05_which_log = {which!r}\n"
        elif gid == "lab05-header":
            cell["source"] = f"lab05_header = {header}\n"
        elif gid == "lab05-why":
            cell["source"] = why
    return nb


def test_the_student_version_of_a_check_hides_its_answer_and_test(tmp_path):
    src = read_notebook(_course_source(tmp_path) / "05_rocketmq_on_dledger.ipynb")
    out = student_notebook(src)
    cells = {c["metadata"]["nbgrader"]["grade_id"]: source(c) for c in out["cells"] if "nbgrader" in c["metadata"]}
    assert cells["lab05-which-log"] == "lab05_which_log = ...\n"
    assert "below the divide" not in cells["lab05-which-log-test"] and "HIDDEN" not in cells["lab05-which-log-test"]
    assert cells["lab05-which-log-test"] == ("from rocketlab.labs_support.answers import not_answered\n"
                                             "if lab05_which_log is ...:\n    print(not_answered('lab05-which-log'))\n")
    namespace: dict = {}
    for cell in out["cells"]:  # the student version runs top to bottom: no answer raises nothing
        if cell["cell_type"] == "code" and "nbgrader" in cell["metadata"]:
            exec(source(cell), namespace)  # noqa: S102 - the kit's own generated cells
    assert cells["lab05-why"] == ANSWER_STUB and "forty-eight bytes long" not in json.dumps(out)
    full = grade_checks(src, src)  # the source's own answers get every point
    assert [(c.grade_id, c.score) for c in full] == [("lab05-which-log", 2), ("lab05-header", 1)]
    assert [c.score for c in grade_checks(src, out)] == [0, 0]  # the untouched student version gets none


def test_a_learners_answer_is_read_never_run(tmp_path):
    marker = tmp_path / "ran"
    nb = {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade": False, "solution": True,
                                                                       "grade_id": "q"}},
                     "source": f"x = __import__('pathlib').Path({str(marker)!r}).touch()\ny = 3 * 4096\nz = 'b'"}]}
    values, problems = answer_values(nb)
    assert not marker.exists() and values == {"y": 12288, "z": "b"} and "not a plain value" in problems["q"]


def test_a_class_of_bundles_is_graded_with_its_questions(tmp_path, capsys):
    src = _course_source(tmp_path)
    code, _, err = _cli(capsys, "assign", "--source", str(src), "--out", str(tmp_path / "out"), "--no-autograder")
    assert code == 0, err
    handed_out = tmp_path / "out" / "student" / "labs" / "05_rocketmq_on_dledger.ipynb"
    subs = tmp_path / "submissions"
    subs.mkdir()
    for who, which, header in (("alice", "a", 48.2), ("bob", "b", 40)):
        nb = tmp_path / who / "05_rocketmq_on_dledger.ipynb"
        nb.parent.mkdir()
        nb.write_text(json.dumps(_answered(handed_out, which, header, f"{who} says: the header comes first")))
        code, out, err = _cli(capsys, "submit", "lab05", "--exercise", str(SOLUTIONS / "lab05_rocketmq_on_dledger.py"),
                              "--notebook", str(nb), "--out", str(subs / f"{who}.zip"))
        assert code == 0 and "lab05 bundle" in out, err
    (subs / "mallory.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with zipfile.ZipFile(subs / "dave.zip", "w") as z:  # made by hand: a notebook that is not JSON
        z.write(SOLUTIONS / "lab05_rocketmq_on_dledger.py", "lab05_rocketmq_on_dledger.py")
        z.writestr("05_rocketmq_on_dledger.ipynb", '{"cells": [')
    (subs / "carol").mkdir()
    shutil.copy(SOLUTIONS / "lab05_rocketmq_on_dledger.py", subs / "carol")  # a folder without a notebook
    code, out, err = _cli(capsys, "grade", "lab05", "--submissions", str(subs), "--out", str(tmp_path / "graded"),
                          "--source", str(src))
    assert code == 1, out + err  # mallory's bundle could not be graded
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "graded" / "summary.csv").open())}
    assert rows["alice"]["score"] == "18" and rows["alice"]["max_score"] == "18", rows["alice"]
    assert rows["bob"]["score"] == "15" and rows["carol"]["score"] == "15" and rows["dave"]["score"] == "15", rows
    assert "questions not collected: 05_rocketmq_on_dledger.ipynb: not a Jupyter notebook (broken JSON" \
        in rows["dave"]["note"], rows["dave"]
    assert rows["mallory"]["score"] == "" and rows["mallory"]["max_score"] == "", rows["mallory"]
    assert "malformed bundle" in rows["mallory"]["note"]
    mallory = json.loads((tmp_path / "graded" / "mallory" / "results.json").read_text())
    assert "score" not in mallory and mallory["extra_data"]["graded"] is False  # no 0 that reads as a grade
    results = json.loads((tmp_path / "graded" / "bob" / "results.json").read_text())
    failed = [t for t in results["tests"] if t["name"] == "lab05.questions/lab05-which-log"]
    assert failed and failed[0]["score"] == 0 and "below the divide" in failed[0]["output"]
    sheets = sorted(p.relative_to(tmp_path / "graded").as_posix() for p in (tmp_path / "graded").rglob("answers.html"))
    assert sheets == ["alice/answers.html", "bob/answers.html"]
    alice = (tmp_path / "graded" / "alice" / "answers.html").read_text()
    assert "alice says: the header comes first" in alice and "Why is the physical offset pos + 48?" in alice
    assert "forty-eight bytes long" in alice  # the model answer, for the one who grades
    qrows = list(csv.reader((tmp_path / "graded" / "questions.csv").open()))
    assert qrows[0] == ["submission", "lab05-which-log (2)", "lab05-header (1)", "lab05-why (3)", "note"]
    assert qrows[1] == ["alice", "2", "1", "", ""] and qrows[2] == ["bob", "0", "0", "", ""]
    assert qrows[3] == ["carol", "", "", "", "no notebook in the submission"]
    assert qrows[4][:4] == ["dave", "", "", ""] and "broken JSON" in qrows[4][4]
    assert qrows[5] == ["mallory", "", "", "", "not graded"]


def test_lab00s_questions_are_collected_from_notebooks_and_bundles(tmp_path, capsys):
    """Lab 00 has questions but no exercise (no row in the lab table): ``assign --lab lab00`` writes its
    student notebook, ``submit lab00`` bundles the notebook alone, ``collect lab00`` gathers the class's
    answers into self-contained answer sheets (nothing fetched, the learner's HTML escaped) and the CSV."""
    code, out, err = _cli(capsys, "assign", "--out", str(tmp_path / "course"), "--lab", "lab00", "--no-autograder")
    assert code == 0, err
    handed_out = tmp_path / "course" / "student" / "labs"
    assert sorted(p.name for p in handed_out.rglob("*") if p.is_file()) == ["00_tour.ipynb"]
    source_answer = next(source(c) for c in read_notebook(LABS_DIR / "00_tour.ipynb")["cells"]
                         if kind(c) == "answer" and c["metadata"]["nbgrader"]["grade_id"] == "lab00-check-1")
    nb = read_notebook(handed_out / "00_tour.ipynb")
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid == "lab00-check-1":
            cell["source"] = source_answer.split("#")[0]
        elif gid == "lab00-question-1":
            cell["source"] = ("Two of three is a **majority**. <script>alert('x')</script>\n\n"
                              "![vote](http://example.invalid/vote.png)")
    subs = tmp_path / "subs"
    subs.mkdir()
    mine = tmp_path / "alice" / "00_tour.ipynb"
    mine.parent.mkdir()
    mine.write_text(json.dumps(nb))
    code, out, err = _cli(capsys, "submit", "lab00", "--notebook", str(mine), "--out", str(subs / "alice.zip"))
    assert code == 0 and out.strip().endswith("lab00 bundle (00_tour.ipynb): hand it in"), out + err
    with zipfile.ZipFile(subs / "alice.zip") as z:
        assert sorted(z.namelist()) == ["00_tour.ipynb", "bundle.json"]
    shutil.copy(handed_out / "00_tour.ipynb", subs / "bob.ipynb")  # handed in unanswered
    (subs / "carol").mkdir()  # a folder without the notebook
    code, out, err = _cli(capsys, "collect", "lab00", "--submissions", str(subs), "--out", str(tmp_path / "graded"))
    assert code == 1, out + err  # carol handed in no notebook
    assert "alice: 1/1 in checks" in out and "carol: no 00_tour.ipynb in carol/" in out, out
    rows = list(csv.reader((tmp_path / "graded" / "questions.csv").open()))
    assert rows[0][:4] == ["submission", "lab00-question-1 (1)", "lab00-question-2 (1)", "lab00-check-1 (1)"]
    assert rows[1][0] == "alice" and rows[1][3] == "1" and rows[2][0] == "bob" and rows[2][3] == "0", rows
    assert rows[3] == ["carol", *([""] * (len(rows[0]) - 2)), "no 00_tour.ipynb in carol/"]
    sheet = (tmp_path / "graded" / "alice" / "answers.html").read_text()
    assert "Two of three is a <strong>majority</strong>." in sheet  # the learner's Markdown, rendered
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in sheet and "<script" not in sheet  # escaped, no script
    assert "[image: vote (http://example.invalid/vote.png)]" in sheet and "<img" not in sheet
    assert not re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", sheet), "the sheet fetches nothing"
    assert "default-src 'none'" in sheet and "<style>" in sheet  # offline: styles inline, a policy forbids fetching
    assert "majority of the whole group" in sheet  # the model answer, folded, for the one who grades
    assert (tmp_path / "graded" / "bob" / "answers.html").is_file() and not (tmp_path / "graded" / "carol").exists()


# --- bad input -----------------------------------------------------------------------------------------

def test_a_broken_notebook_or_bundle_is_one_line_and_exit_2(tmp_path, capsys):
    broken = tmp_path / "05_rocketmq_on_dledger.ipynb"
    broken.write_text('{"cells": [')
    code, _, err = _cli(capsys, "submit", "lab05", "--exercise", str(SOLUTIONS / "lab05_rocketmq_on_dledger.py"),
                        "--notebook", str(broken), "--out", str(tmp_path / "b.zip"))
    assert code == 2 and len(err.splitlines()) == 1 and "broken JSON" in err and not (tmp_path / "b.zip").exists()
    (tmp_path / "src").mkdir()
    shutil.copy(broken, tmp_path / "src")
    code, _, err = _cli(capsys, "assign", "--source", str(tmp_path / "src"), "--out", str(tmp_path / "o"),
                        "--no-autograder")
    assert code == 2 and len(err.splitlines()) == 1 and "broken JSON" in err, err
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"garbage")
    code, _, err = _cli(capsys, "grade", "lab05", "--submission", str(bad))
    assert code == 2 and err.strip() == "rocketlab: bad.zip: a malformed bundle (not a readable zip: File is not a zip file)"
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as z:
        z.writestr("../lab05_rocketmq_on_dledger.py", "x = 1")
    code, _, err = _cli(capsys, "grade", "lab05", "--submission", str(tmp_path / "evil.zip"))
    assert code == 2 and "a path outside it" in err and len(err.splitlines()) == 1
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("bundle.json", json.dumps({"lab": "lab03"}))
        z.writestr("lab05_rocketmq_on_dledger.py", "x = 1")
    code, _, err = _cli(capsys, "grade", "lab05", "--submission", str(tmp_path / "other.zip"))
    assert code == 2 and "a bundle of 'lab03', not of lab05" in err
    marked = tmp_path / "m" / "exercises"
    marked.mkdir(parents=True)
    (marked / "lab05_rocketmq_on_dledger.py").write_text("def f():\n    ### BEGIN SOLUTION\n    return 1\n")
    code, _, err = _cli(capsys, "assign", "--source", str(tmp_path / "m"), "--out", str(tmp_path / "o2"),
                        "--no-autograder")
    assert code == 2 and "### BEGIN SOLUTION without ### END SOLUTION" in err, err


def test_collect_and_submit_refuse_bad_input_in_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    nb = tmp_path / "00_tour.ipynb"
    shutil.copy(LABS_DIR / "00_tour.ipynb", nb)
    for argv, said in (
            (["collect", "lab99", "--submissions", str(tmp_path), "--out", str(tmp_path / "o")], "unknown lab 'lab99'"),
            (["collect", "lab00", "--submissions", str(tmp_path / "missing"), "--out", str(tmp_path / "o")],
             "not a directory"),
            (["collect", "lab00", "--submissions", str(tmp_path / "empty"), "--out", str(tmp_path / "o")], "empty"),
            (["collect", "lab00", "--submissions", str(tmp_path), "--out", str(tmp_path / "o"),
              "--source", str(tmp_path / "empty")], "no 00_tour.ipynb in it"),
            (["submit", "lab00", "--notebook", str(nb), "--exercise", str(nb), "--out", str(tmp_path / "b.zip")],
             "lab00 has no exercise file"),
            (["assign", "--out", str(tmp_path / "o"), "--lab", "lab99"], "--lab lab99: unknown"),
            (["grade", "lab00"], "lab00 has questions but no exercise to grade: collect its answers with "
                                 "`rocketlab collect lab00")):
        code, out, err = _cli(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, (argv, err)
    assert not (tmp_path / "b.zip").exists()



@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_a_zh_cn_twins_student_version_holds_no_answer(name):
    """The Chinese twins fold their answers as ``<summary>答案</summary>``: stripped as the English ones are, in
    a question's cell and in any other markdown (a folded answer beside a "自我检查")."""
    twin = read_notebook(LABS_DIR / "zh-CN" / name)
    assert "<summary>答案</summary>" in json.dumps(twin, ensure_ascii=False)
    student = json.dumps(student_notebook(twin), ensure_ascii=False)
    assert "<summary>答案</summary>" not in student and "### BEGIN SOLUTION" not in student
    folded = "**自我检查。** 为什么？\n\n<details><summary>答案</summary>\n\n因为多数派。\n\n</details>"
    assert strip_markdown(folded) == "**自我检查。** 为什么？"


def test_a_zh_cn_model_answer_reads_without_its_fold_on_the_answer_sheet():
    html = str(_model("<details><summary>答案</summary>\n\n因为多数派。\n\n</details>"))
    assert "因为多数派" in html and "答案" not in html and "details" not in html
