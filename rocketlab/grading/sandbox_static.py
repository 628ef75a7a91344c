"""What a submission names, read from its source without running it: delegation to the kit's own answer.

An exercise whose answer is the kit's reference (the lab table's ``reference``:
``rocketlab.dledger.elector_decisions.decide_vote`` for ``lab03.handle_vote``) earns nothing, whatever its tests say. The templates import the
modules that hold the references (for the kit's data classes), so a static check of the names a
submission uses is enough for the plain ways: ``from M import ref [as x]``, ``M.ref`` after ``import M``
or ``from pkg import M``, ``getattr(M, "ref")``, and ``import_module``/``__import__`` of ``M`` together
with the string ``"ref"``. It misses code that builds the names at run time (``"dec" + "ide_vote"``,
``exec``) and a copy of the reference's source text, which is a plagiarism question:
:func:`similarity` scores a submission's function against the reference's (normalised AST) for the
instructor's report. rocketlab's own addition.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import textwrap
from typing import Any

from rocketlab.grading.registry import EXERCISES, LABS
from rocketlab.i18n import _


def references_of(lab: str) -> dict[str, tuple[str, str]]:
    """Exercise id -> (module, attribute) of the kit's own version, for ``lab``'s exercises."""
    return {e.id: (e.reference.__module__, e.reference.__name__) for e in LABS[lab].exercises}


def delegations(source: str, lab: str) -> dict[str, str]:
    """Exercise id -> why the submission delegates it to the kit's reference (empty: none seen)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    refs = references_of(lab)
    aliases: dict[str, str] = {}  # a local name -> the module it is bound to
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if not a.asname:
                    aliases.setdefault(a.name, a.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                for ex, (module, attr) in refs.items():
                    if node.module == module and a.name in (attr, "*"):
                        found[ex] = _("your file imports the kit's own {attr} from {module}: write {exercise} "
                                      "yourself (delegating to the reference earns nothing)").format(
                                          attr=attr, module=module, exercise=ex.split(".", 1)[1])
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node.value, aliases)
            for ex, (module, attr) in refs.items():
                if node.attr == attr and dotted == module:
                    found.setdefault(ex, _("your file uses the kit's own {module}.{attr}: write {exercise} yourself "
                                           "(delegating to the reference earns nothing)").format(
                                               module=module, attr=attr, exercise=ex.split(".", 1)[1]))
    dynamic = any(isinstance(n, ast.Call) and _callee(n) in ("getattr", "import_module", "__import__")
                  for n in ast.walk(tree))
    if dynamic:
        for ex, (module, attr) in refs.items():
            if attr in strings and (module in strings or any(v == module for v in aliases.values())):
                found.setdefault(ex, _("your file looks up the kit's own {module}.{attr} by name: write {exercise} "
                                       "yourself (delegating to the reference earns nothing)").format(
                                           module=module, attr=attr, exercise=ex.split(".", 1)[1]))
    return found


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _callee(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


class _Normalise(ast.NodeTransformer):
    """Names and docstrings out: what is left is the code's shape."""

    def visit_Name(self, node: ast.Name) -> Any:
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> Any:
        return ast.copy_location(ast.arg(arg="_"), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        node.name = "_"
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], "value", None),
                                                                          ast.Constant):
            node.body = node.body[1:] or [ast.Pass()]
        self.generic_visit(node)
        return node


def _shape(fn_source: str) -> list[str]:
    tree = _Normalise().visit(ast.parse(textwrap.dedent(fn_source)))
    return ast.dump(tree, annotate_fields=False).replace("(", " ( ").replace(")", " ) ").replace(",", " ").split()


def similarity(source: str, exercise: str) -> float | None:
    """0..1: how close the submission's ``exercise`` function is to the kit's reference once names and
    docstrings are gone (a near copy scores above 0.9). None when either cannot be read."""
    mine_name = exercise.split(".", 1)[1]
    try:
        ref = inspect.getsource(EXERCISES[exercise].reference)
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    wanted = {mine_name, "".join(p.capitalize() for p in mine_name.split("_"))}
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in wanted), None)
    if node is None:
        return None
    a, b = _shape(ast.unparse(node)), _shape(ref)
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 3)


__all__ = ["delegations", "references_of", "similarity"]
