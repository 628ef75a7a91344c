"""HTML from Jinja2 templates: the offline report, the viewer page, the grading table in a notebook.

Templates live beside the code that fills them (``<package>/templates/*.html.j2``) and travel in the
wheel as package data. Autoescape is on: a value is escaped unless the code passes already-rendered
HTML (a plotly figure, the viewer's element) as :class:`markupsafe.Markup`. Undefined names are errors.

A template's words go through the message catalogue as the code's do: ``{{ _("events") }}``,
``{{ _("{n} more").format(n=...) }}``, ``{{ ngettext(...) }}`` call :mod:`rocketlab.i18n` at render time, and
``pybabel extract`` reads them with Jinja2's extractor (``rocketlab/locale/babel.cfg``).
"""

from __future__ import annotations

import functools
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from rocketlab.i18n import _, ngettext


@functools.cache
def environment(package: str) -> Environment:
    """The template environment of ``package`` (its ``templates/`` directory)."""
    env = Environment(loader=PackageLoader(package, "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals.update(_=_, ngettext=ngettext)  # the current language at each render
    return env


def render(package: str, name: str, **context: Any) -> str:
    """``package``'s template ``name`` filled with ``context``."""
    return environment(package).get_template(name).render(**context)


__all__ = ["Markup", "environment", "render"]
