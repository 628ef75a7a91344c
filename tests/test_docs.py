"""The docs in the repository: the Sphinx site builds with warnings as errors (Markdown pages, API pages
from every docstring, the pages generated from the code); no file of the kit points outside the
repository; every page a docstring, the README or a command names exists; every lab has its aims."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OUTSIDE = ("../" + "shared", "DESIGN" + ".md")  # spelt apart so this file does not match itself


def test_the_docs_build_without_warnings(tmp_path):
    missing = [m for m in ("sphinx", "myst_parser") if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the docs extra is not installed: {missing}")
        pytest.skip(f"the docs extra is not installed (pip install -e '.[docs]'): {missing}")
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-j", "2", "-b", "html",
                           str(DOCS), str(out)], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-6000:]
    pages = {p.stem for p in out.glob("*.html")}
    assert {"index", "getting-started", "labs", "architecture", "trace", "cli", "oracle", "instructors",
            "troubleshooting"} <= pages
    api = (out / "api" / "generated" / "rocketlab.sim.cluster.html").read_text()
    assert "Cluster" in api  # the API pages come from the docstrings
    trace = (out / "trace.html").read_text()
    from rocketlab.trace.schema import KINDS

    assert all(f">{kind}<" in trace for kind in KINDS)  # generated from the schema
    assert "rocketlab-doctor" in (out / "cli.html").read_text()
    from rocketlab.viz.cluster_view.gallery import FILMS

    films = (out / "films.html").read_text()  # the films published beside the pages, each linked
    for row in FILMS:
        assert f"films/{row.name}.html" in films and "data-rocketlab-film" in (out / "films" / f"{row.name}.html").read_text()


def _kit_text_files():
    for top in ("rocketlab", "tests", "benchmarks", "labs", "docs", ".ci"):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".ipynb", ".js", ".j2", ".txt", "") \
                    and "__pycache__" not in path.parts and "_build" not in path.parts \
                    and "generated" not in path.parts and "runs" not in path.parts:
                yield path
    yield ROOT / "README.md"


def test_nothing_in_the_kit_points_outside_the_repository():
    offenders = []
    for path in _kit_text_files():
        if path == Path(__file__).resolve() or path.parts[-2:] == (".ci", "run") or path.name == "oracle-classpath":
            continue  # CI's own scripts read the machine's shared jars: that is CI, not the kit
        text = path.read_text(encoding="utf-8", errors="replace")
        offenders += [f"{path.relative_to(ROOT)}: {needle}" for needle in OUTSIDE if needle in text]
    assert not offenders


def test_every_docs_page_named_in_the_kit_exists():
    named = set()
    for path in [*_kit_text_files(), ROOT / "pyproject.toml"]:
        named |= set(re.findall(r"docs/([\w./-]+\.md)", path.read_text(encoding="utf-8", errors="replace")))
    named -= {"<name>.md"}
    assert named, "nothing names a docs page?"
    assert not sorted(n for n in named if not (DOCS / n).is_file())
    readme_links = re.findall(r"\]\((docs/[^)#]+)", (ROOT / "README.md").read_text())
    assert readme_links and not [link for link in readme_links if not (ROOT / link).exists()]


def test_every_lab_has_its_aims_in_the_docs():
    labs_page = (DOCS / "labs.md").read_text()
    notebooks = sorted(p.name for p in (ROOT / "labs").glob("*.ipynb"))
    assert notebooks and not [nb for nb in notebooks if f"`{nb}`" not in labs_page]
