"""Pages generated from the code, so they cannot drift from it.

* ``{rocketlab-trace-kinds}``: the trace kinds, their required fields and every field's type, from
  :mod:`rocketlab.trace.schema`;
* ``{rocketlab-cli}``: every subcommand's ``--help``, from the argparse parser of :mod:`rocketlab.cli`;
* ``{rocketlab-films}``: the offline films of :data:`rocketlab.viz.cluster_view.gallery.FILMS`, linked; the
  pages themselves are written into the HTML output's ``films/`` when the build finishes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _list_table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return lines


class TraceKinds(SphinxDirective):
    """The kinds of :data:`rocketlab.trace.schema.KINDS` with their fields and types."""

    def run(self) -> list[nodes.Node]:
        from rocketlab.trace.schema import (
            ENVELOPE,
            FAULT_ACTIONS,
            FIELD_TYPES,
            KINDS,
            VIEW_STOPS,
            view_vocabulary,
        )

        groups = view_vocabulary()["kinds"]
        stops = {kind: name for name, (kind, _) in VIEW_STOPS.items()}
        rows = [[f"``{kind}``", ", ".join(f"``{f}`` ({FIELD_TYPES[f]})" for f in fields),
                 groups[kind] + (f"; stop: {stops[kind]}" if kind in stops else "")]
                for kind, fields in KINDS.items()]
        text = [*_list_table(["kind", "required fields (type)", "viewer: filter group, stop"], rows, "1 4 1"), "",
                "Envelope: " + ", ".join(f"``{k}`` ({v})" for k, v in ENVELOPE.items()) + ".", "",
                "``fault`` actions: " + ", ".join(f"``{a}``" for a in FAULT_ACTIONS) + "."]
        node = nodes.section()
        self.state.nested_parse(StringList(text, source="rocketlab.trace.schema"), self.content_offset, node)
        return node.children


class CliReference(SphinxDirective):
    """Each subcommand's help, as ``rocketlab COMMAND --help`` prints it."""

    def run(self) -> list[nodes.Node]:
        from rocketlab.cli import build_parser

        parser = build_parser()
        out: list[nodes.Node] = [nodes.literal_block(text=parser.format_help())]
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            for name, sub in action.choices.items():
                section = nodes.section(ids=[f"rocketlab-{name}"])
                section += nodes.title(text=f"rocketlab {name}")
                section += nodes.literal_block(text=sub.format_help())
                for inner in sub._actions:
                    if isinstance(inner, argparse._SubParsersAction):
                        for child in inner.choices.values():
                            section += nodes.literal_block(text=child.format_help())
                out.append(section)
        return out


class Films(SphinxDirective):
    """The films of :data:`rocketlab.viz.cluster_view.gallery.FILMS`: a link to each page, what it shows
    and the labs that link it."""

    def run(self) -> list[nodes.Node]:
        from rocketlab.viz.cluster_view.gallery import FILMS

        items = nodes.bullet_list()
        for film in FILMS:
            para = nodes.paragraph()
            para += nodes.reference("", film.title, refuri=f"films/{film.name}.html")
            labs = ", ".join(film.labs)
            para += nodes.Text(f": {film.about} (lab{'s' if len(film.labs) > 1 else ''} {labs})")
            items += nodes.list_item("", para)
        return [items]


def write_films(app, exception) -> None:  # noqa: ANN001 - Sphinx's build-finished hook
    """The films' pages beside the HTML pages (``films/NAME.html``, everything inlined)."""
    if exception is not None or app.builder.format != "html":
        return
    from rocketlab.viz.cluster_view.gallery import write_films as write

    write(Path(app.outdir) / "films")


def setup(app):  # noqa: ANN001, ANN201 - Sphinx's extension hook
    app.add_directive("rocketlab-trace-kinds", TraceKinds)
    app.add_directive("rocketlab-cli", CliReference)
    app.add_directive("rocketlab-films", Films)
    app.connect("build-finished", write_films)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
