"""The kit's language and its one message catalogue: gettext, with the catalogue read by Babel.

rocketlab's own (no RocketMQ counterpart). Every sentence the kit prints goes through :func:`_` (or
:func:`ngettext`); ``pybabel extract`` (its mapping in ``rocketlab/locale/babel.cfg``; the README's
"Languages" section has the commands) collects them, and ``rocketlab/locale/zh_CN/LC_MESSAGES/rocketlab.po``
holds the Chinese (``tests/test_i18n.py`` fails on a marked sentence missing from it or untranslated). Placeholders are ``str.format`` fields (``_("{path}: not a file").format(path=p)``), so a
translation may put them in any order.

**The .po is read at run time, no .mo is compiled.** A clean checkout and an installed wheel then work the
same, with no build step and no binary file in git that could drift from its source: Babel (imported only
then, for its 50 ms would slow every English start, each grading sandbox's included) parses the .po
(about 20 ms, once, and only when the language is not English) and hands gettext a compiled catalogue in memory.
Entries marked fuzzy are left out, as ``msgfmt`` would.

**Which language.** The first of: :func:`set_language` (a command's own choice); ``ROCKETLAB_LANG`` (one
command, one shell); the workspace's setting (``rocketlab init --lang zh-CN``, read through the lookup
:mod:`rocketlab.workspace` registers with :func:`register_workspace_setting`); the locale (``LC_ALL``, then
``LC_MESSAGES``, then ``LANG``, as POSIX orders them); else English. A notebook twin's language is its own
metadata (:func:`notebook_language`), whatever the workspace says.
"""

from __future__ import annotations

import gettext as _gettext
import io
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError

DOMAIN = "rocketlab"
LANGUAGES = ("en", "zh-CN")
"""The languages the kit speaks (BCP 47 tags); the first is the default and the source language."""
DEFAULT = LANGUAGES[0]
ENV = "ROCKETLAB_LANG"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
GETTEXT_NAMES = {"zh-CN": "zh_CN"}
"""Each language's gettext (and JupyterLab) locale name."""
_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

_chosen: str | None = None
_workspace_setting: Callable[[], str | None] | None = None


def normalize(tag: str | None) -> str | None:
    """A language tag or locale name (``zh-CN``, ``zh_CN.UTF-8``, ``zh_Hans``, ``en_US``, ``C``) as one of
    :data:`LANGUAGES`, or None when the kit does not speak it. Traditional Chinese (``zh_TW``, ``zh_HK``,
    ``zh_Hant``) is not Simplified Chinese: None."""
    if not tag:
        return None
    base = tag.strip().split(".")[0].split("@")[0].replace("_", "-").lower()
    if base in ("c", "posix") or base == "en" or base.startswith("en-"):
        return "en"
    if base in ("zh", "zh-cn", "zh-sg", "zh-hans", "zh-hans-cn", "zh-my"):
        return "zh-CN"
    return None


def checked(tag: str, where: str) -> str:
    """``tag`` normalized, or a one-line error naming ``where`` it came from and the languages there are."""
    lang = normalize(tag)
    if lang is None:
        raise RocketlabError(f"{where} {tag!r}: not a language the kit speaks (one of {', '.join(LANGUAGES)})")
    return lang


def register_workspace_setting(lookup: Callable[[], str | None]) -> None:
    """Called by :mod:`rocketlab.workspace`: ``lookup()`` is the current workspace's language, or None."""
    global _workspace_setting
    _workspace_setting = lookup


def locale_language(env: Mapping[str, str] | None = None) -> str | None:
    """The language of the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: the first one set), if the kit
    speaks it."""
    env = os.environ if env is None else env
    for name in _LOCALE_VARIABLES:
        if env.get(name):
            return normalize(env[name])
    return None


def resolve_language(stored: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """``ROCKETLAB_LANG``, else ``stored`` (the workspace's setting), else the locale, else English."""
    env = os.environ if env is None else env
    if env.get(ENV, "").strip():
        return checked(env[ENV], ENV)
    if stored:
        return checked(stored, "the workspace's language")
    return locale_language(env) or DEFAULT


def language() -> str:
    """The language the kit speaks now (see the module docstring for the order)."""
    if _chosen is not None:
        return _chosen
    return resolve_language(_workspace_setting() if _workspace_setting is not None else None)


def set_language(tag: str | None) -> None:
    """Speak ``tag`` from now on in this process (None: resolve it again from the environment)."""
    global _chosen
    _chosen = None if tag is None else checked(tag, "language")


def notebook_language(notebook: Mapping[str, Any]) -> str:
    """A notebook's language: its metadata ``{"rocketlab": {"lang": ...}}``, else English (the English
    labs carry no tag)."""
    meta = notebook.get("metadata", {}).get("rocketlab", {})
    tag = meta.get("lang") if isinstance(meta, Mapping) else None
    return checked(tag, "the notebook's rocketlab.lang") if tag else DEFAULT


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / GETTEXT_NAMES[lang] / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang`` (English: the source strings themselves)."""
    if lang == DEFAULT:
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo  # lazy: 50 ms; English never reads a catalogue
    from babel.messages.pofile import read_po  # lazy: as above
    with open(catalogue_path(lang), "rb") as f:
        catalog = read_po(f, locale=GETTEXT_NAMES[lang], domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)  # fuzzy entries left out, as msgfmt does
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def _(message: str) -> str:
    """``message`` in the current language (itself when English or not yet translated)."""
    return translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the current language."""
    return translations(language()).ngettext(singular, plural, n)


def N_(message: str) -> str:  # noqa: N802 - gettext's name for "mark for extraction, translate later"
    """Mark ``message`` for the catalogue where it is defined; :func:`_` translates it where it is shown."""
    return message


__all__ = ["DEFAULT", "ENV", "LANGUAGES", "N_", "_", "language", "ngettext", "normalize", "notebook_language",
           "register_workspace_setting", "resolve_language", "set_language", "translations"]
