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
    "labs/exercises/zh-CN/*.py",
    "data/**/*",
    "benchmarks/*.py",
    "benchmarks/results/*.json",
)
"""Glob patterns, relative to a checkout's root, of the files the kit carries (a workspace gets the
exercise templates of its language only, under ``labs/exercises/``: see :func:`exercise_twin`)."""

EXERCISES_DIR = "labs/exercises/"

SKIPPED_PARTS: frozenset[str] = frozenset({"__pycache__", ".ipynb_checkpoints", ".cache", "runs", ".jupyter"})
"""Directory names never copied (caches, checkpoints, run outputs)."""

KIT_PACKAGE_DIR = "_kit"
"""Where the wheel keeps the kit inside the package: ``rocketlab/_kit/``."""


def exercise_twin(rel: str, lang: str) -> str | None:
    """The kit file a workspace of ``lang`` (``en``, ``zh-CN``) gets at ``rel``: an exercise template's
    twin in that language (``labs/exercises/zh-CN/lab03_dledger_election.py`` for
    ``labs/exercises/lab03_dledger_election.py``), ``rel`` itself otherwise; None for a twin, which never
    lands at its own path (the grader and ``check()`` find the exercises by their English paths)."""
    if not rel.startswith(EXERCISES_DIR):
        return rel
    rest = rel[len(EXERCISES_DIR):]
    if "/" in rest:
        return None
    return f"{EXERCISES_DIR}{lang}/{rest}" if lang != "en" else rel


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


def workspace_files(root: str | Path, lang: str = "en") -> dict[str, str]:
    """What a workspace of ``lang`` gets from the kit at ``root``: its path -> the kit file it is a copy
    of (an exercise template's twin in ``lang`` where the kit has one, see :func:`exercise_twin`)."""
    files = kit_files(root)
    present = set(files)
    chosen: dict[str, str] = {}
    for rel in files:
        source = exercise_twin(rel, lang)
        if source is not None:
            chosen[rel] = source if source in present else rel
    return chosen
