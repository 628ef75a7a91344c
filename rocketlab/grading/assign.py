"""``rocketlab assign``: a course from one source, as ``otter assign`` and nbgrader's ``generate_assignment`` make one.

The source is a directory laid out like the kit's ``labs/``: the notebooks (``NN_topic.ipynb``, their
questions as nbgrader cells with the model answers, :mod:`rocketlab.grading.questions`) and
``exercises/labNN_topic.py`` (solutions between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, or on
``x = ...  # SOLUTION`` lines; the kit's own exercise files are templates already). ``rocketlab assign``
writes ``OUT/student/labs/`` (solutions, hidden tests, model answers and ``<details>`` answers stripped,
outputs cleared) and ``OUT/autograder/labNN-autograder.zip`` (the Gradescope zip of
:mod:`rocketlab.grading.autograder`, with the source notebook packed for the checks' answers, readable by
the grader only). Given the reference solutions (``--solutions DIR``; in a clone, the graders' own
``tests/grading/solutions/``), it refuses to write a student version that holds any of their lines.
rocketlab's own addition: no Java class is modelled.
"""

from __future__ import annotations

import argparse
import ast
import tempfile
from pathlib import Path
from typing import Any

from rocketlab.cli_support import writable_dir
from rocketlab.errors import RocketlabError
from rocketlab.grading.autograder import QUESTIONS_DIR, build_wheel, build_zip, hidden_tests
from rocketlab.grading.bundle import lab_files, question_labs
from rocketlab.grading.questions import (
    BEGIN_HIDDEN,
    NotebookError,
    dumps_notebook,
    read_notebook,
    strip_code,
    student_notebook,
)
from rocketlab.grading.registry import LABS
from rocketlab.i18n import N_, _
from rocketlab.workspace import checkout_root, kit_root

BORING = ("#", "from ", "import ", '"""', "'''", "def ", "class ", "@", "return None", "pass", "else:", "try:")
"""Solution lines too common to tell a solution apart (a docstring may hold them too)."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "assign", help=_("the student version and the Gradescope autograders of a course, from one source"),
        description=_("From the course's source (default: the kit's labs/), write OUT/student/labs/ (solutions, "
                      "hidden tests and answers stripped) and OUT/autograder/labNN-autograder.zip (docs: "
                      "instructors.md)."))
    p.add_argument("--source", metavar="DIR", help=_("the source: notebooks and exercises/ (default: the kit's labs/)"))
    p.add_argument("--out", metavar="DIR", required=True, help=_("where student/ and autograder/ are written"))
    p.add_argument("--lab", action="append", metavar="LAB",
                   help=_("only this lab, lab00 to lab07 (repeatable; default: every lab)"))
    p.add_argument("--solutions", metavar="DIR", help=_("reference solutions (labNN_*.py) the student version must "
                                                        "not contain (default in a clone: tests/grading/solutions/)"))
    p.add_argument("--tests", metavar="DIR", help=_("hidden tests (*.py using @graded) packed into every zip"))
    p.add_argument("--wheel", metavar="FILE", help=_("the kit's wheel to pack (default: build it from this checkout)"))
    p.add_argument("--no-autograder", action="store_true", help=_("write the student version only"))
    p.set_defaults(func=cmd_assign)


def cmd_assign(args: argparse.Namespace) -> int:
    source = Path(args.source) if args.source else kit_root() / "labs"
    if not source.is_dir():
        raise RocketlabError(_("--source {path}: not a directory").format(path=source))
    labs = _labs(args.lab)
    solutions = _solutions_dir(args.solutions, default=args.source is None)
    tests = hidden_tests(Path(args.tests)) if args.tests else []
    wheel = Path(args.wheel) if args.wheel else None
    out = writable_dir(Path(args.out), "--out")
    made = student_files(source, out / "student" / "labs", labs)
    if solutions is not None:
        found = leaks(made, solutions)
        if found:
            raise RocketlabError(_("the student version would hold {n} line(s) of the solutions in {solutions} "
                                   "(first: {first}): mark them ### BEGIN SOLUTION / ### END SOLUTION").format(
                                       n=len(found), solutions=solutions, first=found[0]))
    written = write_files(made)
    print(_("{path}: {n} files, no solution in them").format(path=out / "student" / "labs", n=len(written))
          + (_(" (checked against {solutions})").format(solutions=solutions) if solutions is not None else ""))
    if args.no_autograder:
        return 0
    graded = [lab for lab in LABS if labs is None or lab in labs]
    for lab in sorted((labs or set()) - set(LABS)):
        print(_("{lab}: questions only, no exercise to grade: no autograder zip (collect its answers with "
                "`rocketlab collect {lab} --submissions DIR --out DIR`)").format(lab=lab))
    if not graded:
        return 0
    with tempfile.TemporaryDirectory(prefix="rocketlab-assign-") as scratch:
        if wheel is None:
            print(_("building the kit's wheel ..."), flush=True)
            wheel = build_wheel(Path(scratch))
        for lab in graded:
            notebook = source / LABS[lab].notebook
            extra = {f"{QUESTIONS_DIR}/{notebook.name}": notebook.read_bytes()} if notebook.is_file() else {}
            zip_path = build_zip(lab, writable_dir(out / "autograder", "--out") / f"{lab}-autograder.zip", wheel,
                                 tests, extra)
            print(_("{path}: {lab} autograder").format(path=zip_path, lab=lab))
    return 0


def _labs(chosen: list[str] | None) -> set[str] | None:
    if not chosen:
        return None
    wanted = {v.strip() for value in chosen for v in value.split(",") if v.strip()}
    known = sorted({*LABS, *question_labs()})
    unknown = sorted(wanted - set(known))
    if unknown:
        raise RocketlabError(_("--lab {lab}: unknown; the labs are {labs}").format(lab=unknown[0], labs=", ".join(known)))
    return wanted


def _solutions_dir(given: str | None, default: bool) -> Path | None:
    if given is not None:
        path = Path(given)
        if not path.is_dir():
            raise RocketlabError(_("--solutions {path}: not a directory").format(path=path))
        return path
    root = checkout_root()
    found = root / "tests" / "grading" / "solutions" if root is not None and default else None
    return found if found is not None and found.is_dir() else None


def student_files(source: Path, target: Path, labs: set[str] | None = None) -> dict[Path, str]:
    """The student version of ``source``'s notebooks and exercise files, as paths under ``target`` and their
    text (nothing written: every source is read and checked first)."""
    wanted_notebooks = None if labs is None else {lab_files(lab).notebook for lab in labs}
    wanted_exercises = None if labs is None else {lab_files(lab).exercise for lab in labs}
    notebooks = [p for p in sorted(source.glob("*.ipynb")) if wanted_notebooks is None or p.name in wanted_notebooks]
    exercises = [p for p in sorted((source / "exercises").glob("*.py"))
                 if wanted_exercises is None or p.name in wanted_exercises]
    if not notebooks and not exercises:
        raise RocketlabError(_("--source {path}: no notebooks (*.ipynb) or exercises/*.py in it").format(path=source))
    made: dict[Path, str] = {}
    for nb_path in notebooks:
        nb = read_notebook(nb_path)
        made[target / nb_path.name] = dumps_notebook(student_notebook(nb, nb_path.name))
    for py in exercises:
        made[target / "exercises" / py.name] = student_exercise(py)
    return made


def write_files(made: dict[Path, str]) -> list[Path]:
    for path, text in made.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(made)


def student_exercise(path: Path) -> str:
    """An exercise file without its solutions; it must still parse, as must the source."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RocketlabError(_("{path}: cannot read: {why}").format(path=path, why=e)) from None
    if BEGIN_HIDDEN in text:
        raise NotebookError(_("{name}: hidden tests belong in the notebook's test cells or --tests DIR").format(
            name=path.name))
    stripped = strip_code(text, path.name)
    for what, code in ((N_("{name}: the source is not valid Python (line {line}: {why})"), text),
                       (N_("{name}: the student version is not valid Python (line {line}: {why})"), stripped)):
        try:
            ast.parse(code)
        except SyntaxError as e:
            raise RocketlabError(_(what).format(name=path.name, line=e.lineno, why=e.msg)) from None
    return stripped


def distinctive_lines(solution: Path) -> list[str]:
    """The lines of a solution that tell it apart: code of at least 16 characters, none of :data:`BORING`,
    not a name in an import list, and not in the kit's own template of that exercise (the public scaffold)."""
    template = kit_root() / "labs" / "exercises" / solution.name
    scaffold = {_code(line) for line in template.read_text(encoding="utf-8").splitlines()} \
        if template.is_file() else set()
    lines = []
    for raw in solution.read_text(encoding="utf-8").splitlines():
        line = _code(raw)
        if len(line) >= 16 and not line.startswith(BORING) and not line.rstrip(",").isidentifier() \
                and line not in scaffold:
            lines.append(line)
    return lines


def _code(line: str) -> str:
    """A line without its indentation and trailing comment."""
    return line.split("  #", 1)[0].strip()


def leaks(texts: dict[Path, str], solutions: Path) -> list[str]:
    """Each distinctive line of a solution found in the student version's ``texts`` (``file: line``)."""
    found = []
    for solution in sorted(solutions.glob("*.py")):
        for line in distinctive_lines(solution):
            for path, text in texts.items():
                if line in text or (path.suffix == ".ipynb" and _json_escaped(line) in text):
                    found.append(f"{path.name}: {line}")
    return found


def _json_escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace('"', '\\"')
