"""What every ``rocketlab`` subcommand shares: argparse types, output paths checked before any work, tables.

Below :mod:`rocketlab.cli` and the subsystems' own ``cli`` modules, so each of them can use these without
importing the command that registers them. rocketlab's own (no RocketMQ counterpart).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from rocketlab.console import render_table
from rocketlab.errors import RocketlabError
from rocketlab.i18n import N_, _
from rocketlab.workspace import home


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (``--nodes 0`` must not fall back to a default)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("invalid int value: {text!r}").format(text=text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("must be a positive integer, got {value}").format(value=value))
    return value


ARGPARSE_MESSAGES = (
    (re.compile(r"the following arguments are required: (?P<names>.+)"),
     N_("the following arguments are required: {names}")),
    (re.compile(r"unrecognized arguments: (?P<args>.+)"), N_("unrecognized arguments: {args}")),
    (re.compile(r"invalid choice: (?P<value>.+) \(choose from (?P<choices>.+)\)"),
     N_("invalid choice: {value} (choose from {choices})")),
    (re.compile(r"invalid (?P<type>\w+) value: (?P<value>.+)"), N_("invalid {type} value: {value}")),
    (re.compile(r"expected one argument"), N_("expected one argument")),
    (re.compile(r"expected at most one argument"), N_("expected at most one argument")),
    (re.compile(r"expected at least one argument"), N_("expected at least one argument")),
    (re.compile(r"expected (?P<n>\d+) arguments?"), N_("expected {n} argument(s)")),
    (re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)"),
     N_("ambiguous option: {option} could match {matches}")),
    (re.compile(r"one of the arguments (?P<names>.+) is required"), N_("one of the arguments {names} is required")),
    (re.compile(r"not allowed with argument (?P<name>.+)"), N_("not allowed with argument {name}")),
    (re.compile(r"ignored explicit argument (?P<value>.+)"), N_("ignored explicit argument {value}")),
    (re.compile(r"can't open '(?P<file>.+)': (?P<why>.+)"), N_("can't open '{file}': {why}")),
)
"""argparse's own usage errors (Python's, in no catalogue the kit ships) and the kit's sentence for each."""
_ARGUMENT = re.compile(r"argument (?P<name>\S+?): (?P<message>.+)", re.DOTALL)


def argparse_message(message: str) -> str:
    """An argparse usage error in the kit's language (unchanged when it is none of argparse's sentences)."""
    argument = _ARGUMENT.fullmatch(message)
    if argument:
        return _("argument {name}: {message}").format(name=argument["name"],
                                                        message=argparse_message(argument["message"]))
    for pattern, sentence in ARGPARSE_MESSAGES:
        found = pattern.fullmatch(message)
        if found:
            return _(sentence).format(**found.groupdict())
    return message


def default_out(*parts: str) -> Path:
    """``runs/...`` in the workspace or checkout (so a run never lands in the installed package), else in
    the current directory."""
    where = home()
    return (where / "runs" if where is not None else Path("runs")).joinpath(*parts)


def writable_dir(path: Path, option: str) -> Path:
    """Create ``path`` (a directory an option names) or fail in one line before any work is done."""
    if path.exists() and not path.is_dir():
        raise RocketlabError(_("{option} {path}: exists and is not a directory").format(option=option, path=path))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RocketlabError(_("{option} {path}: cannot create the directory: {why}").format(
            option=option, path=path, why=e.strerror)) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise RocketlabError(_("{option} {path}: not writable").format(option=option, path=path))
    return path


def writable_file(path: Path, option: str) -> Path:
    """Check that a file an option names can be written (its directory created) before any work is done."""
    if path.is_dir():
        raise RocketlabError(_("{option} {path}: is a directory, not a file").format(option=option, path=path))
    writable_dir(path.parent if str(path.parent) else Path("."), option)
    if path.exists() and not os.access(path, os.W_OK):
        raise RocketlabError(_("{option} {path}: not writable").format(option=option, path=path))
    return path


def format_table(rows: list[dict[str, Any]]) -> str:
    """Dict rows (the same keys in every row) as an aligned table, numbers to the right."""
    if not rows:
        return ""
    columns = list(dict.fromkeys(c for row in rows for c in row))
    numeric = [c for c in columns if all(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)
                                         for r in rows if r.get(c) is not None)]
    return render_table(rows, columns, right=numeric)
