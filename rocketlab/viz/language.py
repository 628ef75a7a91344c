"""The language figures and the cluster viewer speak: the kernel's.

rocketlab's own (no RocketMQ counterpart). A notebook's kernel runs the same code cells for both twins of a
lab, so the twin's language is read from the notebook itself: Jupyter Server names the notebook a kernel
was started for in ``JPY_SESSION_NAME``, and :func:`rocketlab.i18n.notebook_language` reads its metadata.
Outside a notebook (a script, the CLI, a test), in a notebook that names no language (the English labs, a
learner's own), or when that file cannot be read, the language is
:func:`rocketlab.i18n.language` (``ROCKETLAB_LANG``, the workspace, the locale); a twin's metadata wins over
those, as :mod:`rocketlab.i18n` says. :func:`kernel_language`
sets it once for the process (``i18n.set_language``), so ``_()`` in figures speaks it too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from markupsafe import Markup

from rocketlab import i18n
from rocketlab.errors import RocketlabError
from rocketlab.viz.style import FONT_FAMILY

SESSION_ENV = "JPY_SESSION_NAME"

_settled = False


def notebook_of_kernel(env: Mapping[str, str] | None = None) -> Path | None:
    """The notebook this kernel was started for, when Jupyter says so and the file is there."""
    env = os.environ if env is None else env
    name = env.get(SESSION_ENV, "")
    if not name.endswith(".ipynb"):
        return None
    path = Path(name)
    return path if path.is_file() else None


def twin_language(env: Mapping[str, str] | None = None) -> str | None:
    """The language the kernel's notebook names (its ``rocketlab.lang`` metadata), None when it names none
    (the English labs and a learner's own notebooks: the workspace or the locale decides) or is unknown."""
    path = notebook_of_kernel(env)
    if path is None:
        return None
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        meta = notebook.get("metadata", {}).get("rocketlab") if isinstance(notebook, dict) else None
        return i18n.notebook_language(notebook) if isinstance(meta, dict) and meta.get("lang") else None
    except (OSError, ValueError, RocketlabError):
        return None  # an unreadable or odd notebook: the usual resolution decides


def kernel_language() -> str:
    """The language to show: the twin's (settled once per process, so ``_()`` follows it), else
    :func:`rocketlab.i18n.language`."""
    global _settled
    if not _settled:
        _settled = True
        twin = twin_language()
        if twin is not None:
            i18n.set_language(twin)
    return i18n.language()


def page_context() -> dict[str, object]:
    """What every HTML page of ``rocketlab/viz/templates`` is filled with besides its own: ``lang`` (the
    ``<html lang>``) and ``font_family`` (:data:`rocketlab.viz.style.FONT_FAMILY`, the one font stack, so
    Chinese shows in a CJK font; Markup, since it sits in a ``<style>`` where entities are not decoded)."""
    return {"lang": kernel_language(), "font_family": Markup(FONT_FAMILY)}
