"""Where the kit's files are, and where commands write: the learner's workspace.

Three places matter:

* **the kit**: the labs, exercise templates, sample runs and benchmarks as shipped
  (:data:`rocketlab.kitfiles.KIT_PATTERNS`). In a source checkout (a clone set up with ``make``) they are
  the checkout's own ``labs/``, ``data/`` and ``benchmarks/``; in an installed wheel they are
  ``rocketlab/_kit/`` inside the package. No command writes there.
* **a workspace**: a directory laid out by ``rocketlab init DIR`` for one learner (``labs/``,
  ``labs/exercises/``, ``data/``, ``benchmarks/``, a short ``README.md`` and the marker file
  :data:`MARKER`). A workspace of ``--lang zh-CN`` gets the Chinese exercise templates
  (``labs/exercises/zh-CN/``, same code) at the English paths, so the grader and ``check()`` find them.
  Every command run anywhere inside it finds it by walking up from the current
  directory to the marker (``ROCKETLAB_WORKSPACE`` names one explicitly).
* **home**: where commands read a learner's files and write theirs: the workspace, else the checkout
  (a clone is its own workspace), else nowhere (commands that need one say to run ``rocketlab init``).

``rocketlab init`` on an existing workspace adds what is missing, brings files the learner never changed
up to the installed kit, and keeps every file the learner changed: the marker records the SHA-256 of each
file as ``init`` last wrote it, so an edit (a saved notebook, an exercise) is told from an untouched file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab import __version__, i18n
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _, ngettext
from rocketlab.kitfiles import KIT_PACKAGE_DIR, workspace_files

MARKER = "rocketlab-workspace.json"
"""The marker file at a workspace's root (JSON: the kit version and the hash of each file init wrote)."""
ENV = "ROCKETLAB_WORKSPACE"
"""An environment variable naming the workspace explicitly (overrides the walk up from the current directory)."""
PACKAGE_DIR = Path(__file__).resolve().parent
README_NAME = "README.md"

WORKSPACE_README = """# My rocketlab workspace

This directory was laid out by `rocketlab init` (rocketlab {version}). Everything you run here writes here:
run directories under `runs/` and `labs/runs/`, sample runs under `data/`, benchmark figures under
`benchmarks/results/`. Nothing is written into the installed package.

* `rocketlab lab` starts JupyterLab on `labs/` and prints the URL to open. **Open `00_tour.ipynb` first**:
  the whole story in one notebook. Then labs 01 to 07, in order.
* `labs/exercises/labNN_*.py` are the graded exercises; `rocketlab grade labNN` grades yours
  (`rocketlab grade labNN --reference` shows full marks on the kit's own code).
* `rocketlab demo` runs the headless tour and writes an HTML report under `runs/demo/`.
* `rocketlab doctor` checks what this machine has for the kit (Java, Spark, free ports) and says what
  to do about anything missing.

`rocketlab init {dirname}` again (say, after upgrading the kit) adds what is missing and updates files you
never changed; it never overwrites a file you edited (it lists the ones it kept). `{marker}` marks this
directory as a workspace: keep it.
"""


def checkout_root() -> Path | None:
    """The root of the source checkout this package runs from (a clone, an editable install), else None."""
    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "labs").is_dir() and not (PACKAGE_DIR / KIT_PACKAGE_DIR).is_dir():
        return root
    return None


def kit_root() -> Path:
    """Where the kit's shipped files are: the checkout, else ``rocketlab/_kit`` in the installed package."""
    root = checkout_root()
    if root is not None:
        return root
    bundled = PACKAGE_DIR / KIT_PACKAGE_DIR
    if bundled.is_dir():
        return bundled
    raise RocketlabError(_("this installation of rocketlab has no kit files (neither a checkout nor {bundled}); "
                           "reinstall it from the wheel or a clone").format(bundled=bundled))


def find_workspace(start: str | Path | None = None) -> Path | None:
    """The workspace holding ``start`` (default: the current directory), found by its marker; or None.

    ``ROCKETLAB_WORKSPACE`` wins when set (and must name a workspace)."""
    explicit = os.environ.get(ENV, "").strip()
    if explicit and start is None:
        path = Path(explicit).expanduser().resolve()
        if not (path / MARKER).is_file():
            raise RocketlabError(f"{ENV}={explicit}: not a rocketlab workspace (no {MARKER}); "
                                 "create one with rocketlab init DIR")
        return path
    try:
        here = Path(start if start is not None else Path.cwd()).expanduser().resolve()
    except FileNotFoundError:  # the current directory was deleted
        return None
    for directory in (here, *here.parents):
        if (directory / MARKER).is_file():
            return directory
    return None


def stored_language(start: str | Path | None = None) -> str | None:
    """The language ``rocketlab init --lang`` stored in the workspace's marker (``"lang"``), or None (no
    workspace, no setting, or a marker that cannot be read: the language then comes from elsewhere)."""
    try:
        root = find_workspace(start)
        return _read_marker(root).get("lang") if root is not None else None
    except RocketlabError:
        return None


i18n.register_workspace_setting(stored_language)


def home() -> Path | None:
    """Where commands read and write a learner's files: the workspace, else the checkout, else None."""
    return find_workspace() or checkout_root()


def require_home(what: str) -> Path:
    """:func:`home`, or a one-line error saying how to get a workspace (``what`` names the need)."""
    found = home()
    if found is None:
        raise RocketlabError(_("{what}: not inside a rocketlab workspace; create one with `rocketlab init DIR`, "
                               "then cd DIR (or pass the path explicitly)").format(what=what))
    return found


def resource(relative: str | Path) -> Path:
    """A kit file as the learner has it: the workspace's (or checkout's) copy when there is one, else the
    shipped one (read only)."""
    where = home()
    if where is not None and (where / relative).exists():
        return where / relative
    return kit_root() / relative


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class InitReport:
    """What :func:`init_workspace` did, file by file (relative POSIX paths)."""

    root: Path
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    fresh: bool = False

    def lines(self) -> list[str]:
        what = _("new workspace") if self.fresh else _("workspace")
        out = [f"rocketlab init: {what} {self.root} (rocketlab {__version__})"]
        if self.added:
            out.append("  " + _("added {files}: {which}").format(files=_count(self.added), which=_summary(self.added)))
        if self.updated:
            out.append("  " + _("updated {files} you had not changed: {which}").format(
                files=_count(self.updated), which=_summary(self.updated)))
        if self.unchanged:
            out.append("  " + _("{files} already up to date").format(files=_count(self.unchanged)))
        if self.kept:
            out.append("  " + _("kept {files} you changed (yours untouched; the kit's version differs; rename yours "
                                "and run init again to get it): {which}").format(
                files=_count(self.kept), which=", ".join(self.kept)))
        return out


def _count(paths: list[str]) -> str:
    return ngettext("{n} file", "{n} files", len(paths)).format(n=len(paths))


def _summary(paths: list[str], limit: int = 6) -> str:
    """Top-level groups with counts when there are many paths, else the paths themselves."""
    if len(paths) <= limit:
        return ", ".join(paths)
    groups: dict[str, int] = {}
    for p in paths:
        parts = p.split("/")
        key = "/".join(parts[:2]) + "/" if len(parts) > 2 and parts[0] == "labs" else (parts[0] + "/" if len(parts) > 1 else p)
        groups[key] = groups.get(key, 0) + 1
    return ", ".join(f"{k} ({n})" if k.endswith("/") else k for k, n in groups.items())


def _read_marker(root: Path) -> dict[str, Any]:
    path = root / MARKER
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RocketlabError(f"{path}: unreadable workspace marker ({e}); move it away and run init again") from None
    if not isinstance(data, dict) or not isinstance(data.get("files", {}), dict):
        raise RocketlabError(f"{path}: not a rocketlab workspace marker; move it away and run init again")
    return data


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary file in its directory and a rename: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _kit_contents(root: Path, lang: str) -> Iterable[tuple[str, bytes]]:
    """Each file a workspace of ``lang`` gets: the exercise templates in its language (where the kit has
    their twins) at the English paths, every other kit file as it is."""
    kit = kit_root()
    for rel, source in workspace_files(kit, lang).items():
        yield rel, (kit / source).read_bytes()
    readme = WORKSPACE_README.format(version=__version__, dirname=root.name, marker=MARKER)
    yield README_NAME, readme.encode("utf-8")


def init_workspace(target: str | Path, lang: str | None = None) -> InitReport:
    """Lay out (or complete) the workspace at ``target``; never overwrite a file the learner changed.

    ``lang`` (a tag of :data:`rocketlab.i18n.LANGUAGES`) is stored in the marker as the workspace's
    language; None keeps the one stored before (if any)."""
    if lang is not None:
        lang = i18n.checked(lang, "--lang")
    root = Path(target).expanduser()
    if root.exists() and not root.is_dir():
        raise RocketlabError(_("{path}: exists and is not a directory").format(path=target))
    root = root.resolve()
    checkout = checkout_root()
    if checkout is not None and root == checkout:
        raise RocketlabError(_("{path} is the kit's own checkout (already set up for `make lab`); choose another "
                               "directory for a workspace").format(path=target))
    if root == PACKAGE_DIR or PACKAGE_DIR in root.parents:
        raise RocketlabError(_("{path} is inside the installed package; choose another directory").format(path=target))
    marker = _read_marker(root)
    recorded: dict[str, str] = dict(marker.get("files", {}))
    report = InitReport(root, fresh=not (root / MARKER).exists())
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RocketlabError(_("{path}: cannot create the directory: {why}").format(path=target, why=e.strerror)) from None
    stored = lang or marker.get("lang")
    for rel, data in _kit_contents(root, stored or i18n.DEFAULT):
        dest = root / rel
        new_hash = hashlib.sha256(data).hexdigest()
        if not dest.exists():
            _write_atomic(dest, data)
            recorded[rel] = new_hash
            report.added.append(rel)
            continue
        have = sha256(dest) if dest.is_file() else None
        if have == new_hash:
            recorded[rel] = new_hash
            report.unchanged.append(rel)
        elif have is not None and recorded.get(rel) == have:  # as init wrote it: the learner never changed it
            _write_atomic(dest, data)
            recorded[rel] = new_hash
            report.updated.append(rel)
        else:
            report.kept.append(rel)
    marker_data = {
        "about": "This directory is a rocketlab workspace (rocketlab init). 'files' holds the SHA-256 of each "
                 "file as init last wrote it, so init can tell your edits from untouched files.",
        "rocketlab_workspace": 1,
        "kit_version": __version__,
        "files": dict(sorted(recorded.items())),
    }
    if stored:
        marker_data["lang"] = stored
    _write_atomic(root / MARKER, (json.dumps(marker_data, indent=1) + "\n").encode("utf-8"))
    return report


def register(subparsers: Any) -> None:
    """``rocketlab init DIR``."""
    p = subparsers.add_parser(
        "init", help=_("lay out a learner's workspace: labs, exercises, sample data, benchmarks, a README"),
        description=_("Create DIR as a rocketlab workspace (or complete an existing one): the labs, the exercise "
                      "files, the sample runs and the benchmarks, a short README and the marker file by which "
                      "commands run inside DIR find it. Files you edited are never overwritten."))
    p.add_argument("dir", metavar="DIR", type=Path, help=_("the workspace directory (created if missing)"))
    p.add_argument("--lang", metavar="LANG", choices=i18n.LANGUAGES,
                   help=_("the workspace's language: en or zh-CN (the CLI, the grader and JupyterLab speak it; "
                          "default: keep the stored one, else ROCKETLAB_LANG or the locale)"))
    p.set_defaults(func=_cmd_init)


def tour_notebook(root: Path) -> str:
    """The tour a learner opens first, in the workspace's language when its twin is there."""
    twin = f"labs/{i18n.language()}/00_tour.ipynb"
    return twin if i18n.language() != i18n.DEFAULT and (root / twin).is_file() else "labs/00_tour.ipynb"


def _cmd_init(args: argparse.Namespace) -> int:
    report = init_workspace(args.dir, lang=args.lang)
    if args.lang:
        i18n.set_language(args.lang)
    for line in report.lines():
        print(line)
    where = args.dir if not args.dir.is_absolute() else report.root
    print(_("next: cd {where} && rocketlab lab   (then open {tour} first)").format(where=where, tour=tour_notebook(
        report.root)))
    return 0


__all__ = ["ENV", "MARKER", "InitReport", "checkout_root", "find_workspace", "home", "init_workspace", "kit_root",
           "require_home", "resource", "stored_language"]
