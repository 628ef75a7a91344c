"""Which files of the kit travel with the package and into a learner's workspace.

The labs, the exercise templates, the sample runs and the benchmarks live at the top of a checkout
(``labs/``, ``data/``, ``benchmarks/``). The wheel carries the same files under ``rocketlab/_kit/``
(``setup.py`` copies them there at build time), and ``rocketlab init DIR`` copies them into a workspace.
This module has no imports beyond the standard library: ``setup.py`` loads it by path before the package
is installed.
"""

from __future__ import annotations

from pathlib import Path

KIT_PATTERNS: tuple[str, ...] = (
    "labs/*.ipynb",
    "labs/zh-CN/*.ipynb",
    "labs/exercises/*.py",
    "data/**/*",
    "benchmarks/*.py",
    "benchmarks/results/*.json",
)
"""Glob patterns, relative to a checkout's root, of the files a learner's workspace gets."""

SKIPPED_PARTS: frozenset[str] = frozenset({"__pycache__", ".ipynb_checkpoints", ".cache", "runs", ".jupyter"})
"""Directory names never copied (caches, checkpoints, run outputs)."""

KIT_PACKAGE_DIR = "_kit"
"""Where the wheel keeps the kit inside the package: ``rocketlab/_kit/``."""


def kit_files(root: str | Path) -> list[str]:
    """The kit's files under ``root`` as sorted POSIX paths relative to it."""
    root = Path(root)
    found: set[str] = set()
    for pattern in KIT_PATTERNS:
        for path in root.glob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and not SKIPPED_PARTS.intersection(rel.parts) and path.suffix != ".pyc":
                found.add(rel.as_posix())
    return sorted(found)
