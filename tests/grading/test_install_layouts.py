"""The sandbox wherever the kit installs: venvs and interpreters in home directories (``/root``, mode 700),
``/opt``, conda's and pyenv's layouts and ``/tmp``, as root and as an unprivileged user (issue 41).

Each layout is emulated in a private mount namespace (``unshare --mount`` as root): the running interpreter's
installation is bind-mounted where pyenv, conda or an ``/opt`` install would put it (a bind mount, not a
symlink, so Python takes that place for its prefix), a venv is made from it there when the layout has one,
and the kit is made importable with ``.pth`` files (the kit's checkout and the running venv's
``site-packages``) rather than a full install per layout. Then a complete lab 05 solution is graded from
there (full marks), and a venv ``nobody`` cannot enter is reported as the grader's failure (exit 3, "the
grader could not start its sandbox"), never as a 0. Needs root (CI runs as root); the unprivileged layouts
switch to a test user with ``setpriv``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketlab.grading import LABS

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = Path(__file__).parent / "solutions" / LABS["lab05"].exercise_file
TEST_UID = 42_041  # an unprivileged user with no passwd entry: setpriv needs none
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"
GRADE = "import sys; from rocketlab.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class Layout:
    """Where the interpreter's installation and the venv go ({root}: a folder in /root; {opt}, {tmp}:
    folders in /opt and /tmp; {home}: a home directory of mode 700 in {opt}, the test user's when
    ``user``); ``closed``: more directories of mode 700 on the way."""

    interpreter: str
    venv: str | None
    closed: tuple[str, ...] = ()
    user: bool = False


LAYOUTS = {
    # the case: pyenv's interpreter and the venv both in a home (root's, mode 700): two paths under one
    # closed ancestor, through two different children of it
    "root-home-pyenv-and-venv": Layout("{home}/.pyenv/versions/3.11", "{home}/venvs/rocketlab"),
    "opt": Layout("{opt}/python3.11", "{opt}/rocketlab/venv"),
    "conda-env-in-root-home": Layout("{root}/miniconda3/envs/rocketlab", None),
    "venv-in-tmp-pyenv-in-root-home": Layout("{root}/.pyenv/versions/3.11", "{tmp}/venv"),
    "nested-closed-directories": Layout("{home}/.pyenv/versions/3.11", "{home}/work/private/venv",
                                        ("{home}/work/private",)),
    "user-venv-in-home-python-in-opt": Layout("{opt}/python3.11", "{home}/rocketlab-venv", user=True),
    "user-pyenv-and-venv-in-home": Layout("{home}/.pyenv/versions/3.11", "{home}/rocketlab-venv", user=True),
}


def needs_root() -> None:
    why = None
    if os.geteuid() != 0:
        why = "emulating install layouts bind-mounts an interpreter in a private mount namespace: needs root"
    elif not shutil.which("unshare") or not shutil.which("setpriv"):
        why = "unshare and setpriv (util-linux) are needed"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(why + ", and CI must test the sandbox in every layout")
        pytest.skip(why)


@pytest.fixture
def places() -> Iterator[dict[str, Path]]:
    made = {"root": Path(tempfile.mkdtemp(prefix="rocketlab-layout-", dir="/root")),
            "opt": Path(tempfile.mkdtemp(prefix="rocketlab-layout-", dir="/opt")),
            "tmp": Path(tempfile.mkdtemp(prefix="rocketlab-layout-", dir="/tmp"))}
    for p in ("opt", "tmp"):
        made[p].chmod(0o755)
    made["home"] = made["opt"] / "home"  # not in /tmp: the sandbox makes /tmp anew, closed folders there open
    try:
        yield made
    finally:
        for p in ("root", "opt", "tmp"):
            shutil.rmtree(made[p], ignore_errors=True)


def _script(layout: Layout, at: dict[str, Path], submission: Path, before: str) -> tuple[str, Path]:
    """The shell script run in a private mount namespace: bind the interpreter in place, make the venv,
    the .pth files, then grade (as the test user when the layout says so)."""
    fill = {k: str(v) for k, v in at.items()}
    interp = Path(layout.interpreter.format(**fill))
    venv = Path(layout.venv.format(**fill)) if layout.venv else None
    interp.mkdir(parents=True)
    site = (venv or interp) / "lib" / PY / "site-packages"
    pth = at["tmp"] / "pth"
    pth.mkdir(mode=0o755)
    (pth / "00_rocketlab_kit.pth").write_text(f"{ROOT}\n")
    (pth / "01_rocketlab_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    owner = f"{TEST_UID}:{TEST_UID}" if layout.user else "0:0"
    lines = ["set -e"]  # permissions first, on the folders made here only (never recursive: a bind mount comes next)
    for d in [at["home"], *(Path(c.format(**fill)) for c in layout.closed)]:
        lines.append(f"mkdir -p {d} && chown {owner} {d} && chmod 700 {d}")
    lines.append(f"mount --bind {Path(sys.base_prefix).resolve()} {interp}")
    python = interp / "bin" / PY
    if venv is not None:
        lines.append(f"{python} -m venv --without-pip {venv}")
        python = venv / "bin" / "python"
        lines.append(f"cp {pth}/*.pth {site}/")
    else:  # a conda env is its own prefix: its site-packages gets the .pth files (over the real one, here only)
        lines.append(f"mount --bind {pth} {site}")
    run_as = f"setpriv --reuid {TEST_UID} --regid {TEST_UID} --clear-groups " if layout.user else ""
    lines += [before, f"cd {at['tmp']}",  # not the checkout: the kit is imported through the .pth file
              f"{run_as}{python} -c 'import sys, rocketlab; print(\"prefix\", sys.prefix, sys.base_prefix, "
              f"rocketlab.__file__)'",
              f"{run_as}{python} -c '{GRADE}' grade lab05 --submission {submission}"]
    return "\n".join(lines), python


def _grade_in(layout: Layout, at: dict[str, Path], before: str = "") -> subprocess.CompletedProcess[str]:
    at["home"].mkdir(mode=0o700)
    folder = at["tmp"] / "submitted"
    folder.mkdir(mode=0o755)
    submission = folder / SOLUTION.name
    shutil.copy(SOLUTION, submission)
    submission.chmod(0o644)
    script, _ = _script(layout, at, submission, before)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(at["home"]), "LANG": "C.UTF-8"}
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_complete_solution_gets_full_marks_in_every_install_layout(name, places):
    needs_root()
    layout = LAYOUTS[name]
    run = _grade_in(layout, places)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    prefix_line = next(line for line in run.stdout.splitlines() if line.startswith("prefix "))
    want = layout.venv or layout.interpreter
    assert want.format(**{k: str(v) for k, v in places.items()}) in prefix_line, prefix_line
    assert str(ROOT / "rocketlab") in prefix_line, prefix_line
    assert "lab05: 15/15 points" in run.stdout, out[-3000:]


def test_a_venv_nobody_may_enter_is_the_graders_failure_not_a_zero(places):
    needs_root()
    venv = places["tmp"] / "closed" / "venv"
    run = _grade_in(Layout("{root}/.pyenv/versions/3.11", "{tmp}/closed/venv"), places, before=f"chmod 700 {venv}")
    assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
    assert "the grader could not start its sandbox: " in run.stderr and str(venv) in run.stderr, run.stderr
    assert "points" not in run.stdout and "did not import" not in run.stdout, run.stdout
