"""``rocketlab autograder LAB --out autograder.zip``: a lab's Gradescope autograder in one file.

The zip is Gradescope's layout: ``setup.sh`` (run once, as root, when the image is built: Java where the
lab needs it, a Python of at least 3.11, a venv with the kit installed from *its wheel*, packed in the zip,
at the versions of ``constraints.txt``), ``run_autograder`` (run per submission: finds the learner's file in
``/autograder/submission``, grades it with ``rocketlab grade LAB --submission FILE --json FILE [--tests
DIR]`` into ``/autograder/results/results.json``, or fails the run when the grader could not grade), the
instructor's hidden tests (``--tests DIR``, under ``tests/``) and ``autograder.json`` (what was packed).
``ROCKETLAB_AUTOGRADER_ROOT`` moves ``/autograder`` (the tests lay out a temporary root like Gradescope's).

The per-submission part is this module run as a script (``python -m rocketlab.grading.autograder``) in the
venv ``setup.sh`` made. rocketlab's own addition: no Java class is modelled here.

**A failure of the grader is never a grade.** Gradescope's specification (gradescope-autograders, "Autograder
Specifications") takes ``results/results.json`` as the submission's grade: its ``score`` is "optional, but
required if not on each test case", so every results file carries a score, and one without any is outside the
specification (what Gradescope records for it is not documented: an empty ``tests`` list may total 0). Its
"Troubleshooting" page documents the other outcome: when ``run_autograder`` leaves no valid results file,
Gradescope shows "The autograder failed to execute correctly" and records no score, and the staff see
``run_autograder``'s output (``results/stdout``) and can re-run the submission once the cause is fixed. So:

* the submission's problem (no exercise file, several candidates, a malformed bundle): a results file with a
  score of 0 and the sentence saying what to upload (the learner fixes it and submits again);
* the grader's (its sandbox could not start: "the grader could not start its sandbox: REASON"; the kit did
  not install; ``rocketlab grade`` stopped without results, e.g. broken hidden tests; a crash here): **no**
  results file (a stale one is removed first), the reason on stdout, which Gradescope shows the staff, and on
  stderr, and a non-zero exit (:data:`GRADER_FAILED`, as ``rocketlab grade``'s), so the run is a failed run,
  not a 0 in the gradebook.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab import __version__
from rocketlab.cli_support import writable_file
from rocketlab.errors import RocketlabError
from rocketlab.grading.bundle import open_bundle
from rocketlab.grading.collect import source_notebook
from rocketlab.grading.questions import NotebookError, grade_checks, questions, read_notebook
from rocketlab.grading.registry import LABS
from rocketlab.grading.sandbox import SandboxSetupError
from rocketlab.i18n import _
from rocketlab.templating import Markup, render

ROOT_ENV = "ROCKETLAB_AUTOGRADER_ROOT"
"""The environment variable that moves Gradescope's ``/autograder`` (default) elsewhere."""
DEFAULT_ROOT = "/autograder"
QUESTIONS_DIR = "questions"
"""Where ``rocketlab assign`` packs the source notebook whose checks the zip grades (``source/questions/``)."""
VENV_DIR = "rocketlab-venv"
"""The venv ``setup.sh`` makes under the root (``/autograder/rocketlab-venv``)."""
GRADER_FAILED = 3
"""The exit code of a run the grader could not complete (``rocketlab grade``'s for a sandbox that cannot start)."""
OUTPUT_CAP = 20_000
"""Characters of ``rocketlab grade``'s output kept in a results file written on failure."""
CHECKOUT = Path(__file__).resolve().parents[2]


# --- building the zip (the instructor's machine) -------------------------------------------------------

def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "autograder", help=_("a lab's Gradescope autograder zip (setup.sh, run_autograder, the kit's wheel)"),
        description=_("Pack a lab's Gradescope autograder: upload the zip as a programming assignment's "
                      "autograder (docs: instructors.md)."))
    p.add_argument("lab", metavar="LAB", help=_("one of {labs}").format(labs=", ".join(LABS)))
    p.add_argument("--out", metavar="ZIP", required=True, help=_("the zip to write (e.g. autograder.zip)"))
    p.add_argument("--tests", metavar="DIR", help=_("hidden tests (*.py using @graded) packed into the zip"))
    p.add_argument("--wheel", metavar="FILE", help=_("the kit's wheel to pack (default: build it from this checkout)"))
    p.set_defaults(func=cmd_autograder)


def cmd_autograder(args: argparse.Namespace) -> int:
    if args.lab not in LABS:
        raise RocketlabError(_("unknown lab {lab!r}; the graded labs are {labs}").format(
            lab=args.lab, labs=", ".join(LABS)))
    out = Path(args.out)
    if out.suffix != ".zip":
        raise RocketlabError(_("--out {path}: not a .zip file name (Gradescope takes a zip)").format(path=out))
    writable_file(out, "--out")
    tests = hidden_tests(Path(args.tests)) if args.tests else []
    wheel = Path(args.wheel) if args.wheel else None
    if wheel is not None and not (wheel.is_file() and wheel.name.startswith("rocketlab-") and wheel.suffix == ".whl"):
        raise RocketlabError(_("--wheel {path}: not the kit's wheel file (rocketlab-*.whl)").format(path=wheel))
    with tempfile.TemporaryDirectory(prefix="rocketlab-autograder-") as scratch:
        if wheel is None:
            print(_("building the kit's wheel ..."), flush=True)
            wheel = build_wheel(Path(scratch))
        made = build_zip(args.lab, out, wheel, tests)
    with zipfile.ZipFile(made) as z:
        names = z.namelist()
    extra = (", Java" if LABS[args.lab].java else "") + (
        _(", hidden tests: {n} file(s)").format(n=len(tests)) if tests else "")
    print(_("{path}: {lab} autograder, {n} files ({wheel}{extra})").format(
        path=made, lab=args.lab, n=len(names), wheel=wheel.name, extra=extra))
    return 0


def hidden_tests(directory: Path) -> list[Path]:
    """The ``*.py`` files of a hidden-tests directory (at least one)."""
    if not directory.exists():
        raise RocketlabError(_("--tests {path}: no such directory").format(path=directory))
    if not directory.is_dir():
        raise RocketlabError(_("--tests {path}: not a directory").format(path=directory))
    found = sorted(directory.glob("*.py"))
    if not found:
        raise RocketlabError(_("--tests {path}: no *.py test files").format(path=directory))
    return found


SKIPPED_IN_COPY = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "runs",
                                         ".pytest_cache", ".hypothesis", ".ruff_cache", ".ipynb_checkpoints", "_build")
"""Left out of the copy the wheel is built from (a stale ``build/`` would put removed modules in the wheel)."""


def build_wheel(out: Path) -> Path:
    """The kit's wheel, built by pip from a clean copy of the source checkout this module runs from."""
    if not ((CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "setup.py").is_file()
            and (CHECKOUT / "labs").is_dir()):
        raise RocketlabError(_("this rocketlab is installed, not a source checkout: pass --wheel FILE "
                               "(the kit's wheel, rocketlab-*.whl)"))
    source = out / "source"
    shutil.copytree(CHECKOUT, source, ignore=SKIPPED_IN_COPY, symlinks=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
                           "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, env=_env_without_checkout())
    wheels = sorted(out.glob("rocketlab-*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        last = (proc.stderr.strip().splitlines() or [_("no wheel written")])[-1]
        raise RocketlabError(_("building the kit's wheel failed: {why}").format(why=last))
    return wheels[0]


def constraints_text() -> str:
    """The pinned versions: the checkout's ``constraints.txt``, else the versions installed here."""
    pinned = CHECKOUT / "constraints.txt"
    if pinned.is_file() and (CHECKOUT / "pyproject.toml").is_file():
        return pinned.read_text()
    rows = sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
                   if d.metadata["Name"] and d.metadata["Name"].lower() != "rocketlab"}, key=str.lower)
    return "# The versions this rocketlab was installed with.\n" + "\n".join(rows) + "\n"


def build_zip(lab: str, out: Path, wheel: Path, tests: Sequence[Path] = (),
              extra: Mapping[str, bytes] | None = None) -> Path:
    """Write ``lab``'s autograder zip to ``out`` (files as :func:`zip_files` lists them, and ``extra``: name ->
    bytes, e.g. ``rocketlab assign``'s ``questions/NN.ipynb``)."""
    files = zip_files(lab, wheel.name, [t.name for t in tests])
    tmp = out.with_name(f".{out.name}.partial")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, (text, mode) in files.items():
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, text)
            z.write(wheel, wheel.name)
            for t in tests:
                z.write(t, f"tests/{t.name}")
            for name, data in (extra or {}).items():
                z.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
        os.replace(tmp, out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise RocketlabError(_("--out {path}: cannot write: {why}").format(path=out, why=e.strerror or e)) from None
    return out


def zip_files(lab: str, wheel_name: str, test_names: Sequence[str] = ()) -> dict[str, tuple[str, int]]:
    """The zip's generated files: name -> (text, mode)."""
    context: dict[str, Any] = {"lab": lab, "title": LABS[lab].title, "java": LABS[lab].java, "wheel": wheel_name,
               "hidden": bool(test_names), "version": __version__, "root_env": ROOT_ENV,
               "default_root": DEFAULT_ROOT, "venv_dir": VENV_DIR}
    context = {k: Markup(v) if isinstance(v, str) else v for k, v in context.items()}  # shell text, not HTML
    config = {"lab": lab, "exercise_file": LABS[lab].exercise_file, "rocketlab": __version__, "wheel": wheel_name,
              "java": LABS[lab].java, "hidden_tests": [f"tests/{n}" for n in test_names]}
    return {
        "setup.sh": (render("rocketlab.grading", "setup.sh.j2", **context), 0o755),
        "run_autograder": (render("rocketlab.grading", "run_autograder.j2", **context), 0o755),
        "constraints.txt": (constraints_text(), 0o644),
        "autograder.json": (json.dumps(config, indent=2) + "\n", 0o644),
    }


def _env_without_checkout() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


# --- grading one submission (inside Gradescope's container) --------------------------------------------

class SubmissionError(RocketlabError):
    """The submission directory holds no gradable file (or several candidates)."""


def find_submission(directory: Path, lab: str) -> Path:
    """The learner's file in Gradescope's ``submission/``: the lab's exercise file by name (the shallowest),
    else the only ``.py`` or ``.ipynb`` there."""
    name = LABS[lab].exercise_file
    files = [p for p in sorted(directory.rglob("*")) if p.is_file()
             and not any(part.startswith((".", "__MACOSX", "__pycache__")) for part in p.relative_to(directory).parts)]
    named = [p for p in files if p.name == name]
    if named:
        depth = min(len(p.parts) for p in named)
        shallowest = [p for p in named if len(p.parts) == depth]
        if len(shallowest) > 1:
            raise SubmissionError(_("several {name} in the submission ({files}): submit one").format(
                name=name, files=_listing(directory, shallowest)))
        return shallowest[0]
    code = [p for p in files if p.suffix in (".py", ".ipynb")]
    if len(code) == 1:
        return code[0]
    if not code:
        seen = _(" (it holds {files})").format(files=_listing(directory, files)) if files else _(" (it is empty)")
        raise SubmissionError(_("no {name} in the submission{seen}: submit your labs/exercises/{name}").format(
            name=name, seen=seen))
    raise SubmissionError(_("no {name} in the submission and several Python files ({files}): submit your "
                            "labs/exercises/{name}, named so").format(name=name, files=_listing(directory, code)))


def _listing(directory: Path, paths: Sequence[Path], limit: int = 5) -> str:
    names = [str(p.relative_to(directory)) for p in paths]
    more = _(" and {n} more").format(n=len(names) - limit) if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def notebook_to_module(notebook: Path, out: Path) -> Path:
    """A notebook's code cells as one Python file (IPython magics and shell lines left out)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise SubmissionError(_("{name}: not a readable Jupyter notebook ({error})").format(
            name=notebook.name, error=type(e).__name__)) from None
    chunks = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            chunks.append("\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("%", "!"))))
    out.write_text("\n\n".join(chunks) + "\n", encoding="utf-8")
    return out


class GraderFailure(RocketlabError):
    """The grader could not grade the submission (its own failure, never the submission's): no results file."""


def failure_results(message: str, output: str = "") -> dict[str, Any]:
    """Gradescope's results.json for a submission that holds nothing gradable: score 0 and what to upload."""
    text = message if not output else f"{message}\n\n{output[-OUTPUT_CAP:]}"
    return {"score": 0, "execution_time": 0, "output": text, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": []}


def _grade_command() -> list[str]:
    script = Path(sys.executable).with_name("rocketlab")
    if script.is_file():
        return [str(script), "grade"]
    return [sys.executable, "-c", "import sys; from rocketlab.cli import main; sys.exit(main())", "grade"]


def run_autograder(root: Path, lab: str, tests_dir: Path | None = None) -> dict[str, Any]:
    """Grade ``root/submission`` and write ``root/results/results.json``; returns what was written."""
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rocketlab-submission-") as scratch:
        try:
            where = _unbundled(root / "submission", lab, Path(scratch) / "bundle")
            found = find_submission(where, lab)
        except SubmissionError as e:
            return _write(results, failure_results(_("Not graded: {why}").format(why=e)))
        except RocketlabError as e:  # a malformed bundle
            return _write(results, failure_results(_("Not graded: {why}").format(why=e)))
        # Graded as the exercise file, by its bare name, in a scratch directory: the replay lines in the
        # learner's results then read ``--submission lab05_rocketmq_on_dledger.py``, no path of the machine.
        submission = Path(scratch) / LABS[lab].exercise_file
        if found.suffix == ".ipynb":
            notebook_to_module(found, submission)
        else:
            shutil.copyfile(found, submission)
        print(_("grading {file} ({lab})").format(file=found.relative_to(where), lab=lab), flush=True)
        learner = _learner_notebook(where, lab)
        cmd = [*_grade_command(), lab, "--submission", submission.name, "--json", str(results)]
        if tests_dir is not None:
            cmd += ["--tests", str(tests_dir)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                              cwd=scratch)
    print(proc.stdout[-OUTPUT_CAP:], flush=True)
    try:
        written = json.loads(results.read_text())
        if isinstance(written, dict) and ("score" in written or "tests" in written):  # no "score": hidden tests
            return _with_checks(results, written, lab, learner, root)
    except (OSError, ValueError):
        pass
    results.unlink(missing_ok=True)
    prefix = "rocketlab: " + _(SandboxSetupError.PREFIX)  # `rocketlab grade` speaks the language of this process
    sandbox = next((line.removeprefix("rocketlab: ") for line in proc.stdout.splitlines()
                    if line.startswith(prefix)), None)
    raise GraderFailure(sandbox or _("the grader stopped (exit {code}) after {seconds} s without results (its "
                                     "output is above)").format(code=proc.returncode,
                                                                seconds=f"{time.monotonic() - started:.0f}"))


def _unbundled(submission: Path, lab: str, scratch: Path) -> Path:
    """Where the learner's files are: ``submission/``, or a bundle zip in it (``rocketlab submit``'s, left
    zipped) opened into ``scratch`` when no exercise file lies unzipped."""
    if any(p.name == LABS[lab].exercise_file for p in submission.rglob("*")):
        return submission
    zips = sorted(p for p in submission.glob("*.zip") if not p.name.startswith("."))
    if len(zips) != 1:
        return submission
    open_bundle(zips[0], lab, scratch)
    return scratch


def _learner_notebook(where: Path, lab: str) -> dict[str, Any] | str | None:
    """The learner's copy of the lab's notebook (the shallowest), why it cannot be read, or None."""
    found = sorted(where.rglob(LABS[lab].notebook), key=lambda p: (len(p.parts), p))
    if not found:
        return None
    try:
        return read_notebook(found[0])
    except NotebookError as e:
        return str(e).replace(str(found[0].parent) + "/", "")


def _with_checks(path: Path, results: dict[str, Any], lab: str, learner: dict[str, Any] | str | None,
                 root: Path) -> dict[str, Any]:
    """``results`` with the checks of the learner's notebook (its auto-graded questions) as visible tests,
    against the source notebook ``rocketlab assign`` packed (else the kit's own)."""
    if learner is None:
        return results
    packed = root / "source" / QUESTIONS_DIR / LABS[lab].notebook
    source = read_notebook(packed) if packed.is_file() else source_notebook(lab)
    if source is None or not any(q.kind == "check" for q in questions(source)):
        return results
    if isinstance(learner, str):
        results["output"] += "\n" + _("questions not graded: {why}").format(why=learner)
        checks = []
    else:
        checks = grade_checks(source, learner)
    for c in checks:
        results["tests"].append({"name": f"{lab}.questions/{c.grade_id}", "score": c.score, "max_score": c.points,
                                 "status": "passed" if c.score == c.points else "failed", "output": c.message,
                                 "output_format": "text", "visibility": "visible", "tags": [f"{lab}.questions"]})
        if "score" in results:
            results["score"] = round(results["score"] + c.score, 6)
        results.setdefault("extra_data", {})["max_score"] = round(
            results.get("extra_data", {}).get("max_score", 0) + c.points, 6)
    if checks:  # the summary line counted the exercises' tests only
        results["output"] += "\n" + _("{lab}.questions: {score}/{points} points in the notebook's checks").format(
            lab=lab, score=f"{sum(c.score for c in checks):g}", points=f"{sum(c.points for c in checks):g}")
    path.write_text(json.dumps(results, indent=2) + "\n")
    return results


def _write(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(data["output"], flush=True)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    """``run_autograder``'s Python part: grade the submission under the root. 0 with a results file (a grade,
    0 included for a submission with nothing gradable); :data:`GRADER_FAILED` with none when the grader
    failed, the reason on stdout and stderr (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m rocketlab.grading.autograder",
                                     description=_("Grade Gradescope's submission/ into results/results.json."))
    parser.add_argument("--lab", required=True, choices=sorted(LABS))
    parser.add_argument("--root", default=os.environ.get(ROOT_ENV, DEFAULT_ROOT))
    parser.add_argument("--tests", help=_("the hidden tests' directory"))
    args = parser.parse_args(argv)
    root = Path(args.root)
    try:
        run_autograder(root, args.lab, Path(args.tests) if args.tests else None)
    except GraderFailure as e:
        return _grader_failed(root, str(e))
    except Exception as e:  # noqa: BLE001 - a crash of ours: the run failed, the submission is not graded
        return _grader_failed(root, _("the autograder failed ({error})").format(error=f"{type(e).__name__}: {str(e)[:500]}"))
    return 0


def _grader_failed(root: Path, why: str) -> int:
    """No results file (Gradescope: "The autograder failed to execute correctly", no score); why, for the staff."""
    (root / "results" / "results.json").unlink(missing_ok=True)
    line = _("Not graded, the grader's failure (not the submission's): {why}. Re-run the submission once it is "
             "fixed.").format(why=why)
    print(line, flush=True)
    print(f"run_autograder: {why}", file=sys.stderr, flush=True)
    return GRADER_FAILED


if __name__ == "__main__":
    sys.exit(main())
