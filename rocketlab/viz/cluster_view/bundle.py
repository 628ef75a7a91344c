"""The viewer's ES modules (``js/``) joined into the one module both hosts load.

anywidget hands its ``_esm`` to the browser as a single module (from a blob URL), and the offline page
imports the same text from a blob URL: neither can resolve a relative ``import`` of a sibling file. So the
modules are written as ES modules (each file says what it imports and exports) and joined here in
dependency order: their relative imports dropped, ``export`` kept only on the entry module's (the
hosts' ``mountOffline``, ``startFailed`` and the anywidget ``default``). The modules share one scope
once joined, so a top-level name may be declared in one module only (:func:`viewer_source` checks).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from rocketlab.errors import RocketlabError

JS_DIR = Path(__file__).parent / "js"
MODULES = ("strings_zh_CN.js", "strings.js", "draw.js", "film.js", "ring.js", "panels.js", "viewer.js")
"""In dependency order; the last is the entry module."""

_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w.]+)";\n', re.MULTILINE)
_EXPORT = re.compile(r"^export (?=(?:const|function|class) )", re.MULTILINE)
_TOP_LEVEL = re.compile(r"^(?:export )?(?:const|let|function|class) (\w+)", re.MULTILINE)


@cache
def viewer_source() -> str:
    """The joined module (``ClusterView._esm`` and the offline page's script)."""
    return join_modules(JS_DIR, MODULES)


def join_modules(js_dir: Path, modules: tuple[str, ...]) -> str:
    """``modules`` of ``js_dir`` (in dependency order, the entry last) as one ES module."""
    parts: list[str] = []
    declared: dict[str, str] = {}
    for i, name in enumerate(modules):
        text = (js_dir / name).read_text(encoding="utf-8")
        for imported, source in _IMPORT.findall(text):
            for what in (w.strip() for w in imported.split(",")):
                if declared.get(what) != source:
                    raise RocketlabError(f"js/{name} imports {what} from ./{source}, which is not declared there "
                                         "in a module joined before it")
        for top in _TOP_LEVEL.findall(text):
            if top in declared:
                raise RocketlabError(f"js/{name} declares {top}, already declared in js/{declared[top]}")
            declared[top] = name
        text = _IMPORT.sub("", text)
        if i < len(modules) - 1:
            text = _EXPORT.sub("", text)
        parts.append(f"// ---- js/{name}\n{text}")
    source = "\n".join(parts)
    if "</script" in source.lower():
        raise RocketlabError("the viewer's modules must not contain '</script': they are embedded in a script element")
    return source
