"""The kit's terminal output: one table printer and one progress bar, both from ``rich``.

* :func:`render_table` lays out rows as plain, aligned text (ASCII, no colour: the same bytes on a
  terminal, in a pipe, in a notebook or in a test), columns never wrapped.
* :func:`progress` is a bar with the count, the elapsed time and an estimate of the time left, on stderr.
  On a terminal it redraws in place; when stderr is not a terminal (a log file, CI) nothing is redrawn
  and no carriage return is written: lines logged through the bar appear as they come and the final
  state once at the end.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

PLAIN_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
"""No borders; one rule of ``-`` under the header (ASCII, so any terminal encoding prints it)."""
_WIDE = 100_000  # tables are never wrapped or cut to a terminal's width


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def render_table(rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]], columns: Sequence[str] | None = None,
                 *, right: Sequence[str] = (), rule: bool = True, indent: int = 0) -> str:
    """``rows`` (dicts, or sequences in the order of ``columns``) as aligned plain text.

    ``columns`` defaults to the dicts' keys in first-seen order; columns named in ``right`` are right-aligned
    (numbers); ``rule`` draws a ``-`` line under the header; ``indent`` spaces start every line."""
    if columns is None:
        columns = list(dict.fromkeys(c for row in rows for c in row))  # type: ignore[union-attr]
    if not columns:
        return ""
    table = Table(box=PLAIN_HEAD if rule else None, show_edge=False, pad_edge=False, padding=(0, 1 if rule else 2, 0, 0),
                  header_style=None, show_header=True)
    for name in columns:
        table.add_column(str(name), justify="right" if name in right else "left", no_wrap=True)
    for row in rows:
        cells = [row.get(c) for c in columns] if isinstance(row, Mapping) else list(row)
        table.add_row(*(_text(c) for c in cells))
    buf = io.StringIO()
    Console(file=buf, width=_WIDE, color_system=None, no_color=True, force_terminal=False, highlight=False,
            emoji=False, markup=False, legacy_windows=False).print(table)
    pad = " " * indent
    return "\n".join(pad + line.rstrip() for line in buf.getvalue().rstrip("\n").split("\n"))


class ProgressBar:
    """One task's bar inside :func:`progress`: :meth:`update` (done, total), :meth:`advance`, :meth:`log`."""

    def __init__(self, bar: Progress | None, task: Any, stream: TextIO) -> None:
        self._bar, self._task, self._stream = bar, task, stream

    def update(self, done: int, total: int | None = None) -> None:
        """Set how many of ``total`` are done (a sweep's ``progress(done, total)`` callback)."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, **({"total": total} if total is not None else {}))

    __call__ = update

    def advance(self, steps: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def log(self, line: str) -> None:
        """A line of output that stays (above the bar on a terminal; as it comes elsewhere)."""
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
        else:
            print(line, file=self._stream, flush=True)


@contextmanager
def progress(description: str, total: int | None = None, *, stream: TextIO | None = None,
             enabled: bool = True) -> Iterator[ProgressBar]:
    """A progress bar on ``stream`` (default stderr) for ``total`` steps; ``enabled=False`` shows none
    (lines logged through it are still printed)."""
    out = stream if stream is not None else sys.stderr
    if not enabled:
        yield ProgressBar(None, None, out)
        return
    console = Console(file=out, highlight=False, emoji=False, markup=False, soft_wrap=True)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("left"), TimeRemainingColumn(), console=console, transient=False,
                   redirect_stdout=False, redirect_stderr=False)
    with bar:
        task = bar.add_task(description, total=total)
        yield ProgressBar(bar, task, out)


__all__ = ["PLAIN_HEAD", "ProgressBar", "progress", "render_table"]
