"""HTML from Jinja2 templates: the offline report, the viewer page, the grading table in a notebook.

Templates live beside the code that fills them (``<package>/templates/*.html.j2``) and travel in the
wheel as package data. Autoescape is on: a value is escaped unless the code passes already-rendered
HTML (a plotly figure, the viewer's element) as :class:`markupsafe.Markup`. Undefined names are errors.
"""

from __future__ import annotations

import functools
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup


@functools.cache
def environment(package: str) -> Environment:
    """The template environment of ``package`` (its ``templates/`` directory)."""
    return Environment(loader=PackageLoader(package, "templates"), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render(package: str, name: str, **context: Any) -> str:
    """``package``'s template ``name`` filled with ``context``."""
    return environment(package).get_template(name).render(**context)


__all__ = ["Markup", "environment", "render"]
