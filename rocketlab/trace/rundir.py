"""Run directories: ``meta.json`` + ``events.jsonl`` (or ``events.parquet``) + ``nodes/<id>/``.

A run directory is what every simulation and every real-runtime node writes, and what pandas, Spark,
plots and graders read. ``events*.jsonl`` files are merged on load (a real multi-process run writes
one per process, ``events-<node>.jsonl``).
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rocketlab import __version__
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.trace.schema import FIELD_TYPES, all_fields

META_FILE = "meta.json"
EVENTS_FILE = "events.jsonl"
PARQUET_FILE = "events.parquet"


class RunDirError(RocketlabError):
    """A run directory is missing, or one of its files is corrupt (the message names file and line)."""


def fresh_dir(path: str | Path) -> Path:
    """Empty ``path`` (what an earlier run left there goes) and return it: a rerun starts clean."""
    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def versions() -> dict[str, str]:
    return {"rocketlab": __version__, "python": platform.python_version(), "platform": sys.platform}


def write_run(
    run_dir: str | Path, meta: dict[str, Any], events: Sequence[dict[str, Any]], *, parquet: bool = False
) -> Path:
    """Write ``meta.json`` and the events (JSON lines, or Parquet when ``parquet``); returns the dir."""
    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    meta = {**meta, "versions": versions(), "events": len(events),
            "events_file": PARQUET_FILE if parquet else EVENTS_FILE}
    (path / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    if parquet:
        _write_parquet(path / PARQUET_FILE, events)
    else:
        with open(path / EVENTS_FILE, "w", encoding="utf-8") as f:
            for event in events:
                f.write(json.dumps(event, separators=(",", ":")) + "\n")
    return path


def _not_a_run_dir(path: Path) -> RunDirError:
    """The error for a path that is not a directory: a file is called a file, a missing path missing."""
    if path.exists():
        return RunDirError(_("{path}: not a run directory (a file, not a directory)").format(path=path))
    return RunDirError(_("{path}: not a run directory (no such directory)").format(path=path))


def read_meta(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir)
    if not path.is_dir():
        raise _not_a_run_dir(path)
    meta_path = path / META_FILE
    if not meta_path.exists():
        return {}
    try:
        return json.loads(meta_path.read_text())
    except json.JSONDecodeError as e:
        raise RunDirError(_("{path}: corrupt JSON at line {lineno}: {why}").format(
            path=meta_path, lineno=e.lineno, why=e.msg)) from None


def event_files(run_dir: str | Path) -> list[Path]:
    """The event files of a run directory (JSON lines first, then Parquet); error if there are none."""
    path = Path(run_dir)
    if not path.is_dir():
        raise _not_a_run_dir(path)
    files = sorted(path.glob("events*.jsonl")) + sorted(path.glob("events*.parquet"))
    if not files:
        raise RunDirError(_("{path}: no events.jsonl or events.parquet in this run directory").format(path=path))
    return files


def iter_events(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Every event of a run directory, file by file; a corrupt JSON line raises naming file and line."""
    for file in event_files(run_dir):
        if file.suffix == ".parquet":
            yield from _read_parquet_rows(file)
            continue
        with open(file, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RunDirError(_("{path}: corrupt event at line {lineno}: {why}").format(
                        path=file, lineno=lineno, why=e.msg)) from None
                if not isinstance(event, dict) or "kind" not in event or "t" not in event:
                    raise RunDirError(_("{path}: line {lineno} is not a trace event (needs 't' and 'kind')").format(
                        path=file, lineno=lineno))
                yield event


def load_events(run_dirs: str | Path | Iterable[str | Path]):
    """Load one or several run directories into a pandas DataFrame, one row per event.

    Columns: ``run`` (the directory name), the envelope, then every field that occurs. Rows are ordered
    by run, ``t`` and ``seq``.
    """
    import pandas as pd  # lazy: 0.3 s to import

    dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else list(run_dirs)
    rows: list[dict[str, Any]] = []
    for run_dir in dirs:
        name = Path(run_dir).name
        for event in iter_events(run_dir):
            event["run"] = name
            rows.append(event)
    columns = ["run", *all_fields()]
    frame = pd.DataFrame.from_records(rows)
    extra = [c for c in frame.columns if c not in columns]
    frame = frame.reindex(columns=[*columns, *extra])
    frame = frame.dropna(axis=1, how="all").copy()
    for col in ("t", "seq"):
        frame[col] = frame[col].astype("int64")
    if "node" not in frame:
        frame["node"] = None
    return frame.sort_values(["run", "t", "seq"], kind="stable").reset_index(drop=True)


def _arrow_schema():
    import pyarrow as pa  # lazy: only where Arrow batches are built

    types = {"long": pa.int64(), "double": pa.float64(), "string": pa.string(), "bool": pa.bool_(),
             "strings": pa.list_(pa.string())}
    names = {"t": "long", "seq": "long", "node": "string", "kind": "string", **FIELD_TYPES}
    return pa.schema([(name, types[kind]) for name, kind in names.items()])


def _write_parquet(path: Path, events: Sequence[dict[str, Any]]) -> None:
    import pyarrow as pa  # lazy: only where Arrow batches are built
    import pyarrow.parquet as pq  # lazy: only where Arrow batches are built

    schema = _arrow_schema()
    columns = {name: [e.get(name) for e in events] for name in schema.names}
    unknown = {k for e in events for k in e} - set(schema.names)
    if unknown:
        raise RunDirError(f"cannot write Parquet: fields outside the trace schema: {sorted(unknown)}")
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), path)


def _read_parquet_rows(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq  # lazy: only where Arrow batches are built

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise RunDirError(_("{path}: corrupt Parquet file: {why}").format(path=path, why=e)) from None
    for row in table.to_pylist():
        yield {k: v for k, v in row.items() if v is not None or k == "node"}
