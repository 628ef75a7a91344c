"""environment.yml stays valid although conda cannot run here (no conda-forge access; see
reference/environment-notes.md section 5).

Two checks: the structure (PyYAML: allowed keys, conservative conda specs, exactly one pip section and
``pip`` itself listed), and the pip section resolving the way conda runs it (its entries written to a
requirements file next to the yml, ``pip install --dry-run -r`` with the yml's directory as cwd).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT_YML = ROOT / "environment.yml"

ALLOWED_KEYS = {"name", "channels", "dependencies", "variables", "prefix"}
REQUIRED_KEYS = ("name", "channels", "dependencies")
_VERSION = r"[0-9][0-9A-Za-z.*+_]*"
_CONSTRAINT = rf"(?:==|=|>=|<=|>|<|!=|~=){_VERSION}"
_CHANNEL = r"(?:[A-Za-z0-9_\-]+::)?"
CONDA_SPEC = re.compile(rf"^{_CHANNEL}[A-Za-z0-9_][A-Za-z0-9_.\-]*(?:{_CONSTRAINT}(?:,{_CONSTRAINT})*)?$")
PIP_SPEC = re.compile(rf"^{_CHANNEL}pip(?![A-Za-z0-9_.\-])")


def structure_problems(data: Any) -> list[str]:
    """Every structural problem of a parsed environment.yml, one message each (empty list: fine)."""
    if not isinstance(data, dict):
        return [f"top level must be a mapping, got {type(data).__name__}"]
    problems = [f"unknown top-level key {key!r}" for key in data if key not in ALLOWED_KEYS]
    problems += [f"missing top-level key {key!r}" for key in REQUIRED_KEYS if key not in data]
    if "name" in data and not (isinstance(data["name"], str) and data["name"].strip()):
        problems.append("name must be a non-empty string")
    channels = data.get("channels")
    if "channels" in data and not (isinstance(channels, list) and channels
                                   and all(isinstance(c, str) and c for c in channels)):
        problems.append("channels must be a non-empty list of channel names")
    deps = data.get("dependencies")
    if "dependencies" in data and not isinstance(deps, list):
        return [*problems, "dependencies must be a list"]
    pip_sections = []
    for dep in deps or []:
        if isinstance(dep, str):
            if not CONDA_SPEC.match(dep):
                problems.append(f"suspicious conda spec {dep!r}")
        elif isinstance(dep, dict) and list(dep) == ["pip"]:
            pip_sections.append(dep["pip"])
        else:
            problems.append(f"dependency {dep!r} is neither a conda spec nor a {{pip: [...]}} section")
    if "dependencies" in data:
        if len(pip_sections) != 1:
            problems.append(f"expected exactly one pip section, found {len(pip_sections)}")
        elif not (isinstance(pip_sections[0], list) and pip_sections[0]
                  and all(isinstance(e, str) for e in pip_sections[0])):
            problems.append("the pip section must be a non-empty list of requirement strings")
        specs = [d for d in deps or [] if isinstance(d, str)]
        if pip_sections and not any(PIP_SPEC.match(d) for d in specs):
            problems.append("a pip section needs 'pip' listed as a conda dependency")
    return problems


def pip_entries(data: dict[str, Any]) -> list[str]:
    """The entries of the (single) pip section."""
    (section,) = [d["pip"] for d in data["dependencies"] if isinstance(d, dict) and "pip" in d]
    return list(section)


def pip_dry_run(yml: Path, entries: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    """Emulate conda's pip step: requirements file next to the yml, cwd = the yml's directory."""
    requirements = yml.parent / f".condaenv.{uuid.uuid4().hex[:8]}.requirements.txt"
    requirements.write_text("".join(f"{e}\n" for e in entries))
    try:
        return subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--disable-pip-version-check",
             "-r", requirements.name, *extra],
            cwd=yml.parent, capture_output=True, text=True, timeout=600)
    finally:
        requirements.unlink(missing_ok=True)


def load(yml: Path) -> Any:
    return yaml.safe_load(yml.read_text())


def test_environment_yml_structure():
    data = load(ENVIRONMENT_YML)
    assert structure_problems(data) == []
    assert data["name"] == "rocketlab"
    assert data["channels"] == ["conda-forge"]
    specs = [d for d in data["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in specs and "pip" in specs
    assert any(re.fullmatch(r"openjdk=(17|21)", s) for s in specs), "Spark 4 needs Java 17 or 21"
    assert pip_entries(data) == ["-e .[test]"], "the pip section installs this project (one list of deps)"


def test_environment_yml_pip_section_resolves():
    data = load(ENVIRONMENT_YML)
    start = time.monotonic()
    proc = pip_dry_run(ENVIRONMENT_YML, pip_entries(data))
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"^Would install .*\brocketlab-", proc.stdout, re.M), proc.stdout[-2000:]
    assert not list(ROOT.glob(".condaenv.*.requirements.txt")), "the temporary requirements file is left"
    assert elapsed < 120, f"pip --dry-run took {elapsed:.0f} s"


@pytest.mark.slow
def test_environment_yml_pip_section_resolves_from_scratch():
    """As in a fresh conda env: resolve every dependency from the index (--ignore-installed)."""
    data = load(ENVIRONMENT_YML)
    proc = pip_dry_run(ENVIRONMENT_YML, pip_entries(data), "--ignore-installed")
    assert proc.returncode == 0, proc.stderr[-2000:]
    would = re.search(r"^Would install (.*)$", proc.stdout, re.M)
    assert would, proc.stdout[-2000:]
    for name in ("rocketlab-", "pyspark-", "jupyterlab-", "pytest-"):
        assert name in would.group(1)


BROKEN_YML = """\
name: broken
channel:
  - conda-forge
dependencies:
  - python==>3.11
  - openjdk 17 17 17
  - pip:
      - -e ./no-such-project
"""


def test_broken_environment_yml_reports_every_problem(tmp_path):
    yml = tmp_path / "environment.yml"
    yml.write_text(BROKEN_YML)
    data = load(yml)
    assert structure_problems(data) == [
        "unknown top-level key 'channel'",
        "missing top-level key 'channels'",
        "suspicious conda spec 'python==>3.11'",
        "suspicious conda spec 'openjdk 17 17 17'",
        "a pip section needs 'pip' listed as a conda dependency",
    ]
    proc = pip_dry_run(yml, pip_entries(data))
    assert proc.returncode != 0
    assert "no-such-project" in proc.stderr
    assert not list(tmp_path.glob(".condaenv.*")), "the temporary requirements file is left"


@pytest.mark.parametrize(("text", "problem"), [
    ("- just a list\n", "top level must be a mapping, got list"),
    ("name: x\nchannels: [conda-forge]\ndependencies: [pip, {pip: [a]}, {pip: [b]}]\n",
     "expected exactly one pip section, found 2"),
    ("name: x\nchannels: []\ndependencies: [pip, {pip: [a]}]\n",
     "channels must be a non-empty list of channel names"),
    ("name: x\nchannels: [conda-forge]\ndependencies: [pip, {pip: []}]\n",
     "the pip section must be a non-empty list of requirement strings"),
    ("name: x\nchannels: [conda-forge]\ndependencies: [pip, {pip: [a], conda: [b]}]\n",
     "dependency {'pip': ['a'], 'conda': ['b']} is neither a conda spec nor a {pip: [...]} section"),
])
def test_structure_problems_each_case(text, problem):
    assert problem in structure_problems(yaml.safe_load(text))


@pytest.mark.parametrize("spec", ["python=3.11", "openjdk=17", "pip", "python>=3.10,<3.12", "numpy=2.*",
                                  "conda-forge::openjdk=21", "python==3.11.7"])
def test_conda_spec_accepts_plain_specs(spec):
    assert CONDA_SPEC.match(spec)
