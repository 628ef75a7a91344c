"""Sphinx configuration of the rocketlab docs: Markdown pages (MyST) and API pages from the docstrings.

Build: ``make docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``). CI builds it with
warnings as errors (tests/test_docs.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, also without an editable install
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ["ROCKETLAB_LANG"] = "en"  # the pages generated from the code (the CLI's help) are English, whatever the
# builder's locale; the Chinese pages (zh-CN/) are written, not generated

import rocketlab  # noqa: E402

project = "rocketlab"
author = "the rocketlab authors"
copyright = "the rocketlab authors, Apache License 2.0"
release = version = rocketlab.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "rocketlab_docs",  # docs/_ext: pages generated from the code (trace kinds, the CLI's help)
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "_ext"]
templates_path = ["_templates"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True,
                           "ignore-module-all": True}  # each object once: where it is defined
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures stay short; the docstrings say the types that matter
add_module_names = False

html_theme = "alabaster"
html_title = f"rocketlab {release}"
html_theme_options = {"description": "RocketMQ's store and replication, by running them", "fixed_sidebar": True,
                      "page_width": "1180px", "sidebar_width": "240px"}
html_static_path: list[str] = []
