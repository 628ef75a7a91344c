"""The kit as a user installs it: its wheel built from this checkout and installed, with the runtime
dependencies only, into a fresh venv outside the repository. Built once per test session (a session
fixture in tests/conftest.py, ``wheel_env``) and shared by every test that needs it (the wheel smoke test,
the Gradescope autograder test); across sessions the venv is kept while the wheel's contents stay the same.

    env = wheel_venv()
    env.run("rocketlab", "init", str(ws), cwd=tmp)     # a CompletedProcess; the venv's bin first on PATH
    env.python, env.wheel, env.sdist, env.site_package  # the interpreter, the built files, site-packages/rocketlab

The venv lives under the system's temporary directory (``rocketlab-wheel-venv/<contents hash>``), never
inside the checkout, and is installed with ``-c constraints.txt`` (the tested versions). Its build times
are in ``env.timings`` (seconds: build, venv, install).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
ROOT = Path(tempfile.gettempdir()) / "rocketlab-wheel-venv"


@dataclass
class WheelEnv:
    """A venv with the kit installed from its wheel."""

    root: Path
    wheel: Path
    sdist: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    @property
    def site_package(self) -> Path:
        out = subprocess.run([str(self.python), "-c", "import rocketlab, os; print(os.path.dirname(rocketlab.__file__))"],
                             capture_output=True, text=True, check=True, cwd=self.root, env=self.env())
        return Path(out.stdout.strip())

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a user of this venv: its bin first on PATH, nothing of the checkout's."""
        env = {k: v for k, v in _clean_env().items() if k != "ROCKETLAB_WORKSPACE"}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PYSPARK_PYTHON"] = str(self.python)
        env.update(extra)
        return env

    def run(self, *argv: str | os.PathLike[str], cwd: str | Path, timeout: float = 600,
            env: dict[str, str] | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run a command of the venv (``rocketlab``, ``python``, ...) in ``cwd``."""
        cmd = [str(self.bin(str(argv[0]))) if (self.venv / "bin" / str(argv[0])).exists() else str(argv[0]),
               *map(str, argv[1:])]
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or self.env())
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return proc


def build_dist(out: Path) -> tuple[Path, Path, float]:
    """``python -m build``: the sdist, then the wheel from the sdist (so the sdist is proven complete)."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(CHECKOUT)],
                          capture_output=True, text=True, timeout=900, cwd=out, env=_clean_env())
    if proc.returncode != 0:
        raise AssertionError(f"python -m build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    wheels, sdists = sorted(out.glob("rocketlab-*.whl")), sorted(out.glob("rocketlab-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(out)
    return wheels[0], sdists[0], time.perf_counter() - started


def contents_key(wheel: Path) -> str:
    """A hash of what the wheel installs (its RECORD lists every file's hash; zip timestamps do not count)."""
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        data = z.read(record)
    constraints = (CHECKOUT / "constraints.txt").read_bytes() if (CHECKOUT / "constraints.txt").exists() else b""
    return hashlib.sha256(data + sys.version.encode() + constraints).hexdigest()[:16]


_CACHED: WheelEnv | None = None


def wheel_venv() -> WheelEnv:
    """The shared venv (built on first use in this process; reused while the wheel's contents are the same)."""
    global _CACHED
    if _CACHED is not None:
        return _CACHED
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test sessions on one machine build it once
        dist = Path(tempfile.mkdtemp(prefix="dist-", dir=ROOT))
        wheel, sdist, build_s = build_dist(dist)
        target = ROOT / contents_key(wheel)
        timings = {"build": build_s}
        if not (target / "venv" / ".complete").exists():
            shutil.rmtree(target, ignore_errors=True)
            timings.update(_install(target, wheel))
            for other in ROOT.iterdir():  # one venv is kept: the newest
                if other.is_dir() and other != target and not other.name.startswith("dist-"):
                    shutil.rmtree(other, ignore_errors=True)
        kept = target / "dist"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.move(str(dist), kept)
        _CACHED = WheelEnv(target, kept / wheel.name, kept / sdist.name, timings)
    return _CACHED


def _clean_env() -> dict[str, str]:
    """os.environ without what points into the checkout (PYTHONPATH would make pip see the checkout's rocketlab)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _install(target: Path, wheel: Path) -> dict[str, float]:
    target.mkdir(parents=True)
    venv = target / "venv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300,
                   env=_clean_env())
    made = time.perf_counter()
    cmd = [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", str(wheel)]
    if (CHECKOUT / "constraints.txt").exists():
        cmd += ["-c", str(CHECKOUT / "constraints.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=target, env=_clean_env())
    (target / "pip-install.log").write_text(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    if proc.returncode != 0:
        raise AssertionError(f"pip install of the wheel failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    installed = time.perf_counter()
    (venv / ".complete").write_text(f"{made - started:.1f} {installed - made:.1f}\n")
    return {"venv": made - started, "install": installed - made}
