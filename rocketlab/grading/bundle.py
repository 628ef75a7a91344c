"""A learner's submission bundle: ``rocketlab submit LAB`` zips the lab's exercise file and notebook.

The bundle, ``labNN-submission.zip``, holds the learner's ``labNN_<topic>.py``, the lab's notebook (its
written answers and checks, :mod:`rocketlab.grading.questions`) and ``bundle.json`` (the lab, the kit's
version, each file's SHA-256). A lab with questions but no exercise (lab 00, the tour: every ``NN_*.ipynb``
of the kit's ``labs/`` is a lab, :func:`lab_files`) is bundled as its notebook alone. Bulk mode (``rocketlab grade LAB --submissions DIR``) takes bundles beside
``.py`` files and folders; Gradescope unpacks an uploaded zip into ``submission/``, where the autograder
finds the exercise file by name (a bundle left zipped is opened too). Opening one reads only the two
expected members, never more than :data:`MAX_BYTES`, and refuses paths that leave the bundle.
rocketlab's own addition: no Java class is modelled.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from rocketlab import __version__
from rocketlab.cli_support import writable_file
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry
from rocketlab.grading.questions import read_notebook
from rocketlab.i18n import _
from rocketlab.workspace import home, kit_root

MANIFEST = "bundle.json"
MAX_BYTES = 20 * 1024 * 1024
"""The most a bundle's members may hold, uncompressed."""
MAX_MEMBERS = 200


class BundleError(RocketlabError):
    """A bundle that cannot be made or opened; the message says what to fix."""


@dataclass(frozen=True)
class LabFiles:
    """What a learner hands in for a lab: its exercise file (None: a lab of questions only) and notebook."""

    exercise: str | None
    notebook: str


def lab_files(lab: str) -> LabFiles:
    """The files of ``lab``: a graded lab's row, else the kit's notebook ``labs/NN_*.ipynb`` (``labNN``)."""
    row = registry.LABS.get(lab)
    if row is not None:
        return LabFiles(row.exercise_file, row.notebook)
    notebook = question_labs().get(lab)
    if notebook is None:
        known = ", ".join(sorted({*question_labs(), *registry.LABS}))
        raise RocketlabError(_("unknown lab {lab!r}; the labs are {labs}").format(lab=lab, labs=known))
    return LabFiles(None, notebook)


def question_labs(where: Path | None = None) -> dict[str, str]:
    """Every lab with a notebook, ``labNN`` -> ``NN_topic.ipynb`` (in ``where``, default the kit's ``labs/``)."""
    folder = where if where is not None else kit_root() / "labs"
    return {f"lab{m[1]}": p.name for p in sorted(folder.glob("*.ipynb")) if (m := re.match(r"(\d\d)_", p.name))}


@dataclass
class Bundle:
    """What a bundle gave: the exercise file and the notebook (None when absent), extracted."""

    exercise: Path | None
    notebook: Path | None


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "submit", help=_("zip a lab's exercise file and notebook into the bundle you hand in"),
        description=_("Make LAB's submission bundle (labNN-submission.zip): your labs/exercises/ file, the lab's "
                      "notebook with your answers, and a manifest. Bulk grading and the Gradescope autograder "
                      "take it."))
    p.add_argument("lab", metavar="LAB", help=_("a lab: lab00 (its notebook only) to lab07"))
    p.add_argument("--out", metavar="ZIP", help=_("the bundle to write (default: LAB-submission.zip here)"))
    p.add_argument("--exercise", metavar="FILE",
                   help=_("the exercise file (default: the workspace's labs/exercises/ one)"))
    p.add_argument("--notebook", metavar="FILE", help=_("the lab's notebook (default: the workspace's labs/ one)"))
    p.set_defaults(func=cmd_submit)


def _default_notebook(lab: str) -> Path:
    name = lab_files(lab).notebook
    where = home()
    candidates = ([where / "labs" / name] if where is not None else []) + [Path.cwd() / name,
                                                                           Path.cwd() / "labs" / name]
    return next((c for c in candidates if c.is_file()), candidates[0])


def cmd_submit(args: argparse.Namespace) -> int:
    files = lab_files(args.lab)
    if files.exercise is None and args.exercise:
        raise RocketlabError(_("--exercise: {lab} has no exercise file: its bundle is the notebook alone").format(
            lab=args.lab))
    exercise = None if files.exercise is None else \
        Path(args.exercise) if args.exercise else registry.exercise_file(args.lab)
    notebook = Path(args.notebook) if args.notebook else _default_notebook(args.lab)
    out = Path(args.out) if args.out else Path(f"{args.lab}-submission.zip")
    made = make_bundle(args.lab, exercise, notebook, out)
    what = f"{exercise.name}, {notebook.name}" if exercise is not None else notebook.name
    if exercise is not None:
        print(_("{path}: {lab} bundle ({files}): upload it to Gradescope or hand it in").format(
            path=made, lab=args.lab, files=what))
    else:
        print(_("{path}: {lab} bundle ({files}): hand it in").format(path=made, lab=args.lab, files=what))
    return 0


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_bundle(lab: str, exercise: Path | None, notebook: Path, out: Path) -> Path:
    """Write ``lab``'s bundle of ``exercise`` (None for a lab without one) and ``notebook`` to ``out`` (both
    checked first)."""
    lab_row = lab_files(lab)
    if out.suffix != ".zip":
        raise BundleError(_("--out {path}: not a .zip file name").format(path=out))
    if lab_row.exercise is not None:
        if exercise is None or not exercise.is_file():
            raise BundleError(_("{path}: no such file (your copy of labs/exercises/{name})").format(
                path=exercise, name=lab_row.exercise))
        if exercise.suffix != ".py":
            raise BundleError(_("{path}: not a Python file (.py)").format(path=exercise))
    if not notebook.is_file():
        raise BundleError(_("{path}: no such file (your copy of labs/{name})").format(
            path=notebook, name=lab_row.notebook))
    read_notebook(notebook)  # broken JSON is refused here, not at grading time
    writable_file(out, "--out")
    files = {lab_row.notebook: notebook.read_bytes()}
    if lab_row.exercise is not None and exercise is not None:
        files = {lab_row.exercise: exercise.read_bytes(), **files}
    manifest = {"lab": lab, "rocketlab": __version__, "files": {n: _sha256(b) for n, b in files.items()}}
    tmp = out.with_name(f".{out.name}.partial")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, data in files.items():
                z.writestr(name, data)
            z.writestr(MANIFEST, json.dumps(manifest, indent=2) + "\n")
        tmp.replace(out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise BundleError(_("--out {path}: cannot write: {why}").format(path=out, why=e.strerror or e)) from None
    return out


def _safe(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _pick(names: list[str], wanted: str) -> str | None:
    """The shallowest member called ``wanted`` (macOS's ``__MACOSX`` copies left out)."""
    found = [n for n in names if PurePosixPath(n).name == wanted and not n.startswith("__MACOSX")]
    return min(found, key=lambda n: (len(PurePosixPath(n).parts), n)) if found else None


def open_bundle(path: Path, lab: str, into: Path, *, need_exercise: bool = True) -> Bundle:
    """Extract ``lab``'s exercise file and notebook from the bundle at ``path`` into ``into`` (``need_exercise``:
    a bundle without the exercise file is refused; collecting the questions needs the notebook only)."""
    lab_row = lab_files(lab)
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_BYTES:
                raise BundleError(_("{name}: a malformed bundle (more than {files} files or {mib} MiB unpacked)")
                                  .format(name=path.name, files=MAX_MEMBERS, mib=MAX_BYTES // 2**20))
            names = [i.filename for i in infos if not i.is_dir()]
            bad = [n for n in names if not _safe(n)]
            if bad:
                raise BundleError(_("{name}: a malformed bundle (a path outside it: {bad!r})").format(
                    name=path.name, bad=bad[0]))
            if MANIFEST in names:
                _check_manifest(path, z.read(MANIFEST), lab)
            exercise = _pick(names, lab_row.exercise) if lab_row.exercise is not None else None
            notebook = _pick(names, lab_row.notebook)
            if exercise is None and need_exercise:
                raise BundleError(_("{name}: no {exercise} in the bundle (it holds {held}): make it with "
                                    "`rocketlab submit {lab}`").format(name=path.name, exercise=lab_row.exercise,
                                                                       held=", ".join(names[:5]) or _("nothing"),
                                                                       lab=lab))
            into.mkdir(parents=True, exist_ok=True)
            got = []
            for member, name in ((exercise, lab_row.exercise), (notebook, lab_row.notebook)):
                if member is None or name is None:
                    got.append(None)
                    continue
                target = into / name
                target.write_bytes(z.read(member))
                got.append(target)
    except (zipfile.BadZipFile, EOFError) as e:
        raise BundleError(_("{name}: a malformed bundle (not a readable zip: {why})").format(
            name=path.name, why=e)) from None
    except OSError as e:
        raise BundleError(_("{name}: cannot read the bundle: {why}").format(name=path.name, why=e.strerror or e)) from None
    return Bundle(got[0], got[1])


def _check_manifest(path: Path, raw: bytes, lab: str) -> None:
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise BundleError(_("{name}: a malformed bundle ({manifest} is not JSON)").format(
            name=path.name, manifest=MANIFEST)) from None
    other = manifest.get("lab") if isinstance(manifest, dict) else None
    if other != lab:
        raise BundleError(_("{name}: a bundle of {other!r}, not of {lab}").format(name=path.name, other=other, lab=lab))
